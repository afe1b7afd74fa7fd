"""``export trl|verl --decisions SCHEME``: every credit scheme's advantages reach the exported rows.

The rows are re-derived from what they carry (episode, turn index, reward) with plain per-decision
arithmetic, independent of :mod:`orchestrace.credit.schemes`; an unknown scheme is a located error
before the corpus is read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from trainer_helpers import SRC, cli

from orchestrace.errors import ConfigError
from orchestrace.exporters.decisions import decision_turns
from orchestrace.offline import make_synthetic_logged

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


def _by_task(turns):
    tasks: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for t in turns:
        tasks[t.task_id][t.trace_id].append(t)
    return tasks


@pytest.fixture(scope="module")
def runs():
    return make_synthetic_logged(40, 4, 2, seed=3)


def test_broadcast_and_per_agent_credit_the_return(runs) -> None:
    b = decision_turns(runs, credit="broadcast", continuation="stop-next", split=None, episodes=4)
    a = decision_turns(runs, credit="per-agent", continuation="stop-next", split=None, episodes=4)
    assert [(t.trace_id, t.index, t.reward) for t in a] == [(t.trace_id, t.index, t.reward) for t in b]
    for eps in _by_task(b).values():
        G = {e: rows[0].reward for e, rows in eps.items()}
        assert all(r.reward == G[e] for e, rows in eps.items() for r in rows)  # one return per episode
        mean = sum(G.values()) / len(G)  # each episode once
        assert all(r.advantage == pytest.approx(G[e] - mean) for e, rows in eps.items() for r in rows)
    for eps in _by_task(a).values():
        vals = [r.reward for rows in eps.values() for r in rows]  # each decision once (one agent)
        mean = 0.0 if len(vals) == 1 else sum(vals) / len(vals)
        assert all(r.advantage == pytest.approx(r.reward - mean) for rows in eps.values() for r in rows)


def test_per_turn_credit_is_the_turn_index_baseline_summed_to_go(runs) -> None:
    turns = decision_turns(runs, credit="per-turn", continuation="stop-next", split=None, episodes=5)
    checked = 0
    for eps in _by_task(turns).values():
        # the per-turn reward r_k = to_go_k − to_go_{k+1}
        r = {e: [rows[k].reward - (rows[k + 1].reward if k + 1 < len(rows) else 0.0) for k in range(len(rows))]
             for e, rows in eps.items()}
        T = max(len(v) for v in r.values())
        mu = [np.mean([v[j] for v in r.values() if len(v) > j]) for j in range(T)]
        for e, rows in eps.items():
            for k, row in enumerate(rows):
                assert row.index == k
                assert row.advantage == pytest.approx(sum(r[e][j] - mu[j] for j in range(k, len(rows))), abs=1e-9)
                checked += 1
    assert checked == len(turns) > 0


def test_the_schemes_differ_and_exact_is_unchanged(runs) -> None:
    out = {c: decision_turns(runs, credit=c, continuation="stop-next", split=None, episodes=3)
           for c in ("exact", "broadcast", "per-turn", "per-agent")}
    keys = {c: [(t.trace_id, t.index, t.completion) for t in v] for c, v in out.items()}
    assert len({tuple(k) for k in keys.values()}) == 1  # the same sampled episodes (same seed)
    adv = {c: np.array([t.advantage for t in v]) for c, v in out.items()}
    for x in adv:
        for y in adv:
            if x < y:
                assert not np.allclose(adv[x], adv[y]), (x, y)
    # exact: Q(state, action) under stop-next, advantage vs the mean Q over the valid actions (as before)
    from orchestrace.logged.logged_env import LoggedDecisions, StopNext

    dec = LoggedDecisions(runs, aggregations=("majority", "logprob"))
    ids = {str(t): i for i, t in enumerate(runs.task_ids.tolist())}
    s = None
    for t in out["exact"][:40]:
        s = dec.start(ids[t.task_id]) if t.index == 0 else s
        qs = dec.q_values(s, StopNext())
        a = dec.actions.index(t.completion)
        assert t.reward == pytest.approx(qs[a]) and t.advantage == pytest.approx(qs[a] - np.nanmean(qs))
        s, _ = dec.step(s, a)


def test_an_unknown_scheme_is_a_located_error(runs, tmp_path) -> None:
    with pytest.raises(ConfigError, match="unknown credit scheme 'per-trun'; did you mean 'per-turn'"):
        decision_turns(runs, credit="per-trun", continuation="stop-next", split=None)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run([sys.executable, "-m", "orchestrace", "export", "trl", str(TINY), "-o", str(tmp_path / "x.jsonl"),
                        "--decisions", "per-trun"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--decisions" in r.stderr and "did you mean 'per-turn'" in r.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_cli_exports_per_turn_rows(tmp_path) -> None:
    out = tmp_path / "d.jsonl"
    said = cli("export", "trl", str(TINY), "-o", str(out), "--decisions", "per-turn", "--episodes", "2")
    assert "credit per-turn" in said
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(np.isfinite(r["advantage"]) for r in rows)
    by_trace = defaultdict(list)
    for r in rows:
        by_trace[r["trace_id"]].append(r["reward"])
    # reward to go: within an episode it changes from decision to decision unless every step pays 0
    assert any(len(set(v)) > 1 for v in by_trace.values())
