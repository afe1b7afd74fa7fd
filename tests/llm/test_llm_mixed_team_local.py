"""End to end on the two real local models (SmolLM2-135M-Instruct chat, Gemma 3 270M base cloze), one thread each.

Plumbing and trace fidelity only, never accuracy; skipped with the install command when a model is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace.collection.mixed_team import MixedTeamConfig, collect_mixed_team
from orchestrace.llm.gemma import gemma3_available
from orchestrace.llm.local import local_server_available
from orchestrace.logged.runs import load_logged_runs


@pytest.mark.slow  # two servers start (~10-20 s on a busy 2-core machine)
def test_two_local_models_collect_a_priced_corpus_and_resume(tmp_path: Path) -> None:
    for ok, reason in (local_server_available(), gemma3_available()):
        if not ok:
            pytest.skip(reason)
    cfg = MixedTeamConfig(cells=(("mentor", 1),), n_tasks=1, rounds=1, seed=990000)
    res = collect_mixed_team(cfg, tmp_path, concurrency=1)
    assert res.written == 1 and res.calls == 4
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    servers = manifest["server"]["servers"]
    assert set(servers) == {"smollm2", "gemma"} and all(len(s["model_sha256"]) == 64 for s in servers.values())
    runs = load_logged_runs(tmp_path)
    assert runs.answers.shape == (1, 1, 4) and runs.meta["billing"]["ref_price"] == 0.15
    for line in (tmp_path / "traces.jsonl").read_text().splitlines():
        ev = json.loads(line).get("event")
        if ev and ev["type"] == "return":
            a = ev["attrs"]
            assert a["mode"] == ("cloze" if a["model"] == "gemma" else "chat")
            assert ev["tokens_in"] > 0 and a["cost_usd"] > 0 and a["prompt"]
    again = collect_mixed_team(MixedTeamConfig(cells=cfg.cells, n_tasks=1, rounds=1, seed=990000), tmp_path,
                               resume=True, concurrency=1)
    assert (again.already, again.written) == (1, 0)
