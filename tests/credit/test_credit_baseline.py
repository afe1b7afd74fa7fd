"""Credit relative to a baseline: a failed run gets negative credit, concentrated on its causes.

Before issue 15, ``credit --truth false`` gave 0 to every unit, so a failed run could not be
used to find who was to blame, and RL had no negative advantages.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from orchestrace import Outcome, TraceBuilder, dump, dumps, synth
from orchestrace.credit import assign, group_baselines
from orchestrace.errors import ConfigError

METHODS = ("broadcast", "discounted", "causal", "leave-one-out", "shapley", "owen", "c3", "coma")


def failed_run():
    """lead decides, spawns w1 and w2; w1's tool call errs (e4), its result and return carry
    the error (e5, e6) into the aggregate (e8), which is wrong: the run fails. w2 is clean.

    lead: d e1[0,1] → s1 e2, s2 e3 ............................. agg e8[4,5] → stop e9
    w1:                c e4[1,2]✗ → r e5[2,3]✗ → ret e6[3,3]✗ ──┘
    w2:                c e7[1,3] → ret e10[3,3] ───────────────┘
    """
    b = TraceBuilder("fail", topology="centralized")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1, role="lead")
    s1 = b.spawn("w1", t=1, t_end=1, after=d, role="lead")
    s2 = b.spawn("w2", t=1, t_end=1, after=d, role="lead")
    c1 = b.tool_call("w1", "x", t=1, t_end=2, after=s1, role="worker", error=True)
    r1 = b.tool_result("w1", "x", t=2, t_end=3, after=c1, role="worker", error=True)
    ret1 = b.return_("w1", t=3, t_end=3, after=r1, role="worker", error=True)
    c2 = b.tool_call("w2", "x", t=1, t_end=3, after=s2, role="worker")
    agg = b.aggregate(t=4, t_end=5, after=[ret1], role="lead", error=True)
    ret2 = b.return_("w2", t=3, t_end=3, after=c2, role="worker")
    b.edge(ret2, agg, "aggregate")
    b.decide("stop", action="stop", t=5, t_end=5, after=agg, role="lead")
    return b.build(outcome=Outcome(success=False))


def test_without_baseline_a_failure_earns_nothing_and_says_how_to_blame():
    r = assign(failed_run(), unit="agent", method="shapley")
    assert r.as_dict() == {"orchestrator": 0.0, "w1": 0.0, "w2": 0.0}
    assert any("baseline" in n and "blame" in n for n in r.notes)


@pytest.mark.parametrize("method", ["causal", "shapley", "owen", "leave-one-out", "c3"])
def test_blame_lands_on_the_cause(method):
    r = assign(failed_run(), unit="agent", method=method, baseline=0.6)
    assert r.as_dict() == pytest.approx({"orchestrator": 0.0, "w1": -0.6, "w2": 0.0})
    assert r.total_reward == pytest.approx(-0.6) and r.baseline == 0.6


def test_blame_at_turn_level_goes_to_the_erring_call():
    r = assign(failed_run(), unit="turn", method="causal", baseline=1.0)
    assert {k: v for k, v in r.as_dict().items() if v} == {"e4": pytest.approx(-1.0)}


def test_broadcast_discounted_and_coma_semantics():
    tr = failed_run()
    assert set(assign(tr, unit="agent", method="broadcast", baseline=0.5).as_dict().values()) == {-0.5}
    r = assign(tr, unit="agent", method="discounted", baseline=1.0, gamma=0.5)
    assert r["orchestrator"] == -1.0  # its aggregate is the output: nearest, the full blame
    assert r["w1"] == pytest.approx(-0.5) and r["w2"] == pytest.approx(-0.5)  # one hop from the output
    r = assign(tr, unit="agent", method="coma", baseline=1.0)
    assert r["w1"] == pytest.approx(-0.5) and r["w2"] == 0.0  # (1 − π(taken)) · LOO, π = ½


def test_success_above_the_baseline_is_shared_by_work():
    b = failed_run()
    won = b.__class__(**{**{f: getattr(b, f) for f in b.__struct_fields__}, "outcome": Outcome(success=True)})
    r = assign(won, unit="agent", method="causal", baseline=0.75)
    assert r.values.sum() == pytest.approx(0.25) and (r.values >= 0).all()


def test_no_flagged_cause_falls_back_to_work_with_a_note():
    b = TraceBuilder("plain")
    d = b.decide("spawn", action="spawn:1", t=0, t_end=1)
    s = b.spawn("w", t=1, t_end=1, after=d)
    c = b.tool_call("w", "x", t=1, t_end=3, after=s)
    b.aggregate(t=3, t_end=4, after=c)
    r = assign(b.build(outcome=Outcome(success=False)), unit="agent", method="causal", baseline=1.0)
    assert r.values.sum() == pytest.approx(-1.0) and (r.values < 0).all()
    assert any("no flagged cause" in n for n in r.notes)


def test_every_method_accepts_a_baseline_and_efficient_ones_sum_to_the_advantage():
    tr = synth(events=300, agents=4, seed=2)
    for m in METHODS:
        r = assign(tr, unit="agent", method=m, baseline=0.25)
        if m in ("causal", "shapley", "owen"):
            assert r.values.sum() == pytest.approx(-0.25)
    with pytest.raises(ConfigError, match="baseline"):
        assign(tr, unit="agent", method="causal", baseline=float("nan"))


def test_group_baselines():
    assert group_baselines([1, 0, 1, 1], ["a", "a", "b", "b"]).tolist() == [0.5, 0.5, 1.0, 1.0]
    with pytest.raises(ConfigError):
        group_baselines([1.0], ["a", "b"])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", "credit", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_baseline_value_and_group(tmp_path):
    f = tmp_path / "f.json"
    dump(failed_run(), f)
    r = _cli(str(f), "--unit", "agent", "--method", "shapley", "--truth", "false", "--baseline", "0.7", "--json")
    assert r.returncode == 0, r.stderr
    got = {x["unit"]: x["credit"] for x in map(json.loads, r.stdout.splitlines())}
    assert got == pytest.approx({"orchestrator": 0.0, "w1": -0.7, "w2": 0.0})
    r = _cli(str(f), "--unit", "agent", "--method", "causal", "--baseline", "0.7")
    assert "advantage = reward 0 − baseline 0.7 = -0.7" in r.stdout
    g = tmp_path / "g.jsonl"
    g.write_bytes(b"".join(dumps(synth(events=200, agents=3, seed=s, task_id="t"), format="jsonl") for s in range(5)))
    r = _cli(str(g), "--unit", "team", "--method", "causal", "--baseline", "group", "--json")
    assert r.returncode == 0, r.stderr
    team = [json.loads(x)["credit"] for x in r.stdout.splitlines()]
    wins = [synth(events=200, agents=3, seed=s).outcome.success for s in range(5)]
    mean = float(np.mean(wins))
    assert team == pytest.approx([float(w) - mean for w in wins])
    assert _cli(str(f), "--unit", "agent", "--baseline", "lots").returncode == 2
