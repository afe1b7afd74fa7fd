"""Each reward family R1–R8 on one golden trace, against values computed by hand."""

from __future__ import annotations

import math

import pytest

from orchestrace import Outcome, Signal, TraceBuilder
from orchestrace.analysis.measures import MEASURES
from orchestrace.rewards import (
    agent_success,
    aggregation_quality,
    critical_steps_cost,
    hybrid,
    judge,
    marti,
    parallel_speedup,
    parl,
    process,
    puppeteer,
    role_reward,
    shared_outcome,
    split_correctness,
    tool_use,
)
from orchestrace.vocab import CreditUnit, RewardFamily


def golden():
    """Orchestrator e1 spawns planner p1 (e2) and executor x1 (e3). p1 messages x1 (e4, judged
    0.8; e10 proposes answer 42). x1 calls search (e5, 2000 tokens, 2 s → result e6 scored 0.5),
    calc (e7, error → e8), returns e9 (success). Aggregate e11 (score 0.9), stop e12."""
    b = TraceBuilder("golden-rewards", topology="centralized")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1, role="lead", tokens_in=600, tokens_out=400)
    s1 = b.spawn("p1", t=1, t_end=1, after=d, role="lead")
    s2 = b.spawn("x1", t=1, t_end=1, after=d, role="lead")
    m = b.message("p1", "x1", t=2, t_end=3, after=s1, role="planner", outcome=Outcome(score=0.8))
    c = b.tool_call("x1", "search", t=3, t_end=5, after=[s2, m], role="executor", tokens_in=1500, tokens_out=500)
    r = b.tool_result("x1", "search", t=5, t_end=5, after=c, role="executor", outcome=Outcome(score=0.5))
    c2 = b.tool_call("x1", "calc", t=5, t_end=6, after=r, role="executor", error=True)
    r2 = b.tool_result("x1", "calc", t=6, t_end=6, after=c2, role="executor")
    ret = b.return_("x1", t=6, t_end=7, after=r2, role="executor", outcome=Outcome(success=True))
    b.message("p1", "x1", t=3, t_end=4, after=m, role="planner", outcome=Outcome(answer_ref="42"))
    a = b.aggregate(t=7, t_end=8, after=[ret], role="lead", outcome=Outcome(score=0.9))
    b.decide("stop", action="stop", t=8, t_end=8, after=a, role="lead", tokens_in=100)
    b.signal(Signal(unit=CreditUnit.TURN, id="e5", value=0.25, family=RewardFamily.PROCESS))
    return b.build(outcome=Outcome(success=True, answer_ref="42"))


def values(signals):
    return {(s.unit.value, s.id): pytest.approx(s.value) for s in signals}


def test_r1_shared_outcome():
    tr = golden()
    (s,) = shared_outcome(tr)
    assert (s.unit, s.id, s.value, s.family) == (CreditUnit.TEAM, "team", 1.0, RewardFamily.SHARED)
    assert shared_outcome(tr, truth="42")[0].value == 1.0
    assert shared_outcome(tr, truth="41")[0].value == 0.0
    assert shared_outcome(tr, truth=0.3)[0].value == 0.3


def test_r2_agent_success():
    # p1: not finished, latest score 0.8 → ½·0 + ½·0.8; x1: finished, latest outcome success → ½ + ½
    assert values(agent_success(golden())) == {("agent", "p1"): 0.4, ("agent", "x1"): 1.0}
    assert values(agent_success(golden(), truth={"p1": 1.0}, finish_weight=0.0, success_weight=1.0)) == {
        ("agent", "p1"): 1.0, ("agent", "x1"): 1.0}


def test_r3_role_reward():
    # success = mean event score (clean 1): lead (1,1,1,0.9,1) → 0.98; planner (0.8, 1) → 0.9;
    # executor (1, 0.5, 0 [error], 1, 1) → 0.7
    assert values(role_reward(golden())) == {("role", "lead"): 0.98, ("role", "planner"): 0.9, ("role", "executor"): 0.7}
    got = values(role_reward(golden(), scorers={"lead": "outcome", "planner": "finish"}, weights={"executor": 2.0}))
    assert got == {("role", "lead"): 1.0, ("role", "planner"): 0.0, ("role", "executor"): 1.4}


def test_r4_process():
    # the trace's own turn signal on e5, then turns with outcomes: e4 0.8, e9 1.0, e11 0.9
    assert [(s.id, s.value) for s in process(golden())] == [("e5", 0.25), ("e4", 0.8), ("e9", 1.0), ("e11", 0.9)]
    with_default = {s.id: s.value for s in process(golden(), default=0.0)}
    assert with_default == {"e5": 0.25, "e1": 0.0, "e4": 0.8, "e7": 0.0, "e9": 1.0, "e10": 0.0, "e11": 0.9, "e12": 0.0}


def test_r5_tool_use():
    # e5: result score 0.5 − 0.1 − 0.05·2 − 0.01·2 = 0.28;  e7: error → 0 − 0.1 − 0 − 0.01·1 = −0.11
    got = tool_use(golden(), call_cost=0.1, token_cost=0.05, latency_cost=0.01)
    assert values(got) == {("tool_call", "e5"): 0.28, ("tool_call", "e7"): -0.11}
    assert values(tool_use(golden())) == {("tool_call", "e5"): 0.5, ("tool_call", "e7"): 0.0}


def test_r6_judge():
    assert values(judge(golden())) == {("message", "e4"): 0.8}
    assert values(judge(golden(), truth="42")) == {("message", "e4"): 0.8, ("message", "e10"): 1.0}
    assert values(judge(golden(), truth="7")) == {("message", "e4"): 0.8, ("message", "e10"): 0.0}


def test_r7_parl_and_annealing():
    # r_parallel = 2/4, r_finish = 1/2 (x1 returned, p1 did not), r_perf = 1: 0.1·0.5 + 0.2·0.5 + 1
    assert values(parl(golden(), lambda1=0.1, lambda2=0.2, max_agents=4)) == {("orchestrator", "e12"): 1.15}
    halfway = parl(golden(), lambda1=0.1, lambda2=0.2, max_agents=4, step=5, total_steps=10)
    assert halfway[0].value == pytest.approx(0.025 + 0.05 + 1.0)


def test_r7_puppeteer():
    # F = (1.0, 0.1) thousand tokens, φ = 2: C1 = ln 1.5, C2 = 0.1·ln 2
    r2 = 1.0 - 0.1 * 0.1 * math.log(2.0)
    r1 = 0.9 * r2 - 0.1 * math.log(1.5)
    assert values(puppeteer(golden(), lam=0.1, gamma=0.9)) == {("orchestrator", "e1"): r1, ("orchestrator", "e12"): r2}


def test_r7_speedup_split_aggregation_critical_steps():
    tr = golden()
    # busy time 8 s, critical path e1 e2 e4 e5 e6 e7 e8 e9 e11 e12 = 7 s → speedup 8/7
    assert parallel_speedup(tr)[0].value == pytest.approx(1 - 7 / 8)
    assert parallel_speedup(tr, normalize=False)[0].value == pytest.approx(8 / 7)
    assert split_correctness(tr)[0].value == 0.5  # x1's clean return reaches the output; p1 never returns
    assert aggregation_quality(tr)[0].value == 0.9
    steps = MEASURES["e2/critical_steps"](tr)
    assert critical_steps_cost(tr, per_step=0.1)[0].value == pytest.approx(-0.1 * steps)
    assert {s.unit for s in parl(tr)} == {CreditUnit.ORCHESTRATOR}


def test_r8_hybrid_and_marti():
    # α·local + (1−α)·global: p1 ½·0.4 + ½·1, x1 ½·1 + ½·1
    assert values(hybrid(golden(), alpha=0.5)) == {("agent", "p1"): 0.7, ("agent", "x1"): 1.0}
    # per agent in time order: x1's e5 (0.25) is first, its e9 (R = 1) has Q = 0.25
    q = {s.id: s.value for s in marti(golden(), mode="quality")}
    assert q == pytest.approx({"e4": 0.8, "e5": 0.25, "e9": 1.0 + 0.5 * (0.25 * 1.0 - 0.75 * 0.0), "e11": 0.9})
    mg = {s.id: s.value for s in marti(golden(), mode="margin")}
    assert mg == pytest.approx({"e4": 0.8, "e5": 0.25, "e9": 1.0 + 0.5 * (1.0 - 0.25), "e11": 0.9})
