"""The plain-asyncio team loop example, with a learned joint policy, against the real local model
server (the repository conftest's shared ``local_llm``). Nothing here checks what the model said:
only that the policy drove the loop (whom it called each round, its decision after every round,
the round limit), and that every routing decision is the policy's own on that round's evidence."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from orchestrace.llm.local import LocalServer
from orchestrace.offline import fit_team_policy, make_synthetic_team

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "team_policy_loop.py"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("example_team_policy_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_team_loop_calls_whom_the_policy_says(local_llm: LocalServer, tmp_path: Path) -> None:
    pol, _ = fit_team_policy(make_synthetic_team(400, 3, seed=0), classes=("linear",), seed=0)
    path = pol.save(tmp_path / "run")
    s = _example().main(["--policy", str(path), "--base-url", local_llm.base_url or "", "--tasks", "2",
                         "--price", "0.02"])
    for t in s["tasks"]:
        n = len(t["rounds"])
        assert 1 <= n <= pol.max_rounds and len(t["decisions"]) == n + 1
        assert t["decisions"][-1]["action"] == "stop" and all(d["action"] == "call" for d in t["decisions"][:-1])
        assert [sorted(r) for r in t["rounds"]] == [sorted(d["members"]) for d in t["decisions"][:-1]]
        assert t["llm_calls"] == sum(len(d["members"]) for d in t["decisions"])
        cell = f"{t['task'].split('-')[0]}:{t['task'].split('-')[1][1:]}"
        for k in range(n + 1):  # each decision is the policy's own on the evidence of the rounds before it
            d = pol.decide(t["rounds"][:k], price=s["price"], cell=cell, logprobs=t["logprobs"][:k],
                           tokens=t["tokens"][:k])
            assert (d.action, list(d.members), d.aggregation) == (t["decisions"][k]["action"],
                                                                  t["decisions"][k]["members"],
                                                                  t["decisions"][k]["aggregation"])
        assert t["answer"] == d.answer
