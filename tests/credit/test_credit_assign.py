"""assign() on a golden trace with hand-computed credit, for every unit and method."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchestrace import Outcome, Signal, TraceBuilder, synth
from orchestrace.analysis.graph import TraceGraph
from orchestrace.credit import (
    TURN_TYPES,
    assign,
    c3_advantages,
    coma_advantage,
    graph_returns,
    unit_index,
)
from orchestrace.errors import ConfigError
from orchestrace.vocab import CreditUnit, EventType


def golden():
    """e1 decide → spawn w1 (e2), w2 (e3); w1: call e4 → return e5 → aggregate e7 → stop e8;
    w2: call e6 never reaches the aggregate (wasted). Outcome: success (R = 1)."""
    b = TraceBuilder("golden", topology="centralized")
    d = b.decide("spawn", action="spawn:2", alternatives=["spawn:1", "spawn:2", "none"], t=0, t_end=1,
                 role="lead", tokens_out=10)
    s1 = b.spawn("w1", t=1, t_end=1, after=d, role="lead")
    s2 = b.spawn("w2", t=1, t_end=1, after=d, role="lead")
    c1 = b.tool_call("w1", "x", t=1, t_end=3, after=s1, role="worker", tokens_out=4)
    r1 = b.return_("w1", t=3, t_end=3, after=c1, role="worker")
    b.tool_call("w2", "x", t=1, t_end=2, after=s2, role="worker", tokens_out=2)
    a = b.aggregate(t=3, t_end=4, after=[r1], role="lead")
    b.decide("stop", action="stop", t=4, t_end=4, after=a, role="lead", logprob=-0.1)
    return b.build(outcome=Outcome(success=True))


def test_turns_are_model_generated_events():
    assert set(TURN_TYPES) == {EventType.ORCHESTRATOR_DECISION, EventType.MESSAGE, EventType.TOOL_CALL,
                               EventType.RETURN, EventType.AGGREGATE}
    assert unit_index(golden(), "turn").ids == ("e1", "e4", "e5", "e6", "e7", "e8")


def test_broadcast():
    r = assign(golden(), unit="agent", method="broadcast")
    assert r.as_dict() == {"orchestrator": 1.0, "w1": 1.0, "w2": 1.0}
    r = assign(golden(), [Signal(unit=CreditUnit.AGENT, id="w2", value=2.0)], unit="turn", method="broadcast")
    assert r.as_dict() == {"e1": 0.0, "e4": 0.0, "e5": 0.0, "e6": 2.0, "e7": 0.0, "e8": 0.0}


def test_causal_shares_by_events_and_duration():
    tr = golden()
    r = assign(tr, unit="agent", method="causal", weight="events")  # ancestors of e7: e1 e2 e4 e5 e7
    np.testing.assert_allclose([r["orchestrator"], r["w1"], r["w2"]], [0.6, 0.4, 0.0])
    r = assign(tr, unit="agent", method="causal", weight="duration")  # durations 1, 0, 2, 0, 1
    np.testing.assert_allclose([r["orchestrator"], r["w1"], r["w2"]], [0.5, 0.5, 0.0])
    r = assign(tr, unit="role", method="causal", weight="events")
    assert r.as_dict() == pytest.approx({"lead": 0.6, "worker": 0.4})
    # an agent signal for w2 lands on w2's last event e6, whose ancestors are e1, e3, e6
    r = assign(tr, [Signal(unit=CreditUnit.AGENT, id="w2", value=1.0)], unit="agent", method="causal", weight="events")
    np.testing.assert_allclose([r["orchestrator"], r["w1"], r["w2"]], [2 / 3, 0.0, 1 / 3])


def test_discounted_per_hop_and_per_second():
    tr = golden()
    r = assign(tr, unit="turn", method="discounted", gamma=0.5)
    assert r.as_dict() == pytest.approx({"e1": 0.0625, "e4": 0.25, "e5": 0.5, "e6": 0.0, "e7": 1.0, "e8": 0.0})
    r = assign(tr, unit="agent", method="discounted", gamma=0.5)  # a unit takes its best-reached event
    assert r.as_dict() == pytest.approx({"orchestrator": 1.0, "w1": 0.5, "w2": 0.0})
    r = assign(tr, unit="turn", method="discounted", gamma=1.0, gamma_s=0.5)  # Δt to the output (t=3)
    assert r.as_dict() == pytest.approx({"e1": 0.125, "e4": 0.25, "e5": 1.0, "e6": 0.0, "e7": 1.0, "e8": 0.0})


def reference_gae(g, r, V, gamma, lam):
    """Plain reference: recursion over successors, best successor = argmax γ·G (first on ties)."""
    succ = {i: [] for i in range(g.n)}
    for s, d in zip(g.dep_src.tolist(), g.dep_dst.tolist(), strict=True):
        succ[s].append(d)
    G, nxt = {}, {}

    def ret(e):
        if e not in G:
            kids = succ[e]
            if kids:
                best = max(kids, key=lambda c: (gamma * ret(c), -kids.index(c)))
                nxt[e] = best
                G[e] = r[e] + gamma * ret(best)
            else:
                G[e] = r[e]
        return G[e]

    A = {}

    def adv(e):
        if e not in A:
            ret(e)
            if e in nxt:
                c = nxt[e]
                A[e] = r[e] + gamma * V[c] - V[e] + gamma * lam * adv(c)
            else:
                A[e] = r[e] - V[e]
        return A[e]

    return np.array([ret(e) for e in range(g.n)]), np.array([adv(e) for e in range(g.n)])


def test_graph_gae_matches_reference():
    tr = golden()
    g = TraceGraph.from_trace(tr)
    rng = np.random.default_rng(0)
    r = np.zeros(g.n)
    r[g.output] = 1.0
    r[g.index["e6"]] = 0.3
    for lam in (0.0, 0.5, 1.0):
        V = rng.normal(size=g.n)
        G, A = graph_returns(g, r, gamma=0.9, lam=lam, values=V)
        G_ref, A_ref = reference_gae(g, r, V, 0.9, lam)
        np.testing.assert_allclose(G, G_ref)
        np.testing.assert_allclose(A, A_ref)
    G, A = graph_returns(g, r, gamma=0.9, lam=1.0)
    np.testing.assert_allclose(A, G)  # V ≡ 0, λ = 1: the advantage is the return


def test_trace_only_shapley_loo_owen_by_hand():
    tr = golden()
    # v(S) = 0.4·[o ∈ S] + 0.6·[o, w1 ∈ S]   (events e1, e2 need o; e4, e5, e7 need o and w1)
    r = assign(tr, unit="agent", method="shapley", weight="events")
    assert r.as_dict() == pytest.approx({"orchestrator": 0.7, "w1": 0.3, "w2": 0.0})
    assert r.notes[0].startswith("trace-only value function used")
    r = assign(tr, unit="agent", method="leave-one-out", weight="events")
    assert r.as_dict() == pytest.approx({"orchestrator": 1.0, "w1": 0.6, "w2": 0.0})
    r = assign(tr, unit="agent", method="owen", weight="events")  # lead {o} | worker {w1, w2}
    assert r.as_dict() == pytest.approx({"orchestrator": 0.7, "w1": 0.3, "w2": 0.0})
    r = assign(tr, unit="agent", method="c3", weight="events")  # no alternatives: LOO
    assert r.as_dict() == pytest.approx({"orchestrator": 1.0, "w1": 0.6, "w2": 0.0})


def test_coma_and_c3_on_decisions():
    tr = golden()
    # players e1, e8; only e1 is an ancestor of the output: LOO = (1, 0)
    r = assign(tr, unit="orchestrator", method="coma")
    assert r.as_dict() == pytest.approx({"e1": 2 / 3, "e8": 0.0})  # (1 − π) · LOO, π = 1/3 (3 alternatives)
    r = assign(tr, unit="orchestrator", method="coma", q={"e1": [0.2, 1.0, 0.0]}, pi={"e1": [0.5, 0.25, 0.25]},
               taken={"e1": 1})
    assert r["e1"] == pytest.approx(1.0 - (0.1 + 0.25))
    r = assign(tr, unit="orchestrator", method="c3", alternatives={"e1": [(1.0, 2.0), (0.5, 1.0), (0.0, 1.0)]})
    assert r["e1"] == pytest.approx(1.0 - 0.25)


def test_c3_and_coma_formulas_vs_reference():
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = int(rng.integers(2, 8))
        R, w = rng.normal(size=k), rng.uniform(0.1, 2.0, size=k)
        ref = [R[j] - (sum(w[i] * R[i] for i in range(k)) - w[j] * R[j]) / (sum(w) - w[j]) for j in range(k)]
        np.testing.assert_allclose(c3_advantages(R, w), ref)
        q, p = rng.normal(size=k), rng.dirichlet(np.ones(k))
        j = int(rng.integers(0, k))
        assert coma_advantage(q, p, j) == pytest.approx(q[j] - sum(p[i] * q[i] for i in range(k)))
    with pytest.raises(ConfigError, match="probability"):
        coma_advantage([1.0, 0.0], [0.9, 0.9])


def test_token_unit_places_turn_credit():
    tr = golden()
    r = assign(tr, unit="token", method="discounted", gamma=0.5)
    assert r.ids == ("e1[0:10]", "e4[0:4]", "e6[0:2]")
    np.testing.assert_allclose(r.values, [0.0625 / 10, 0.25 / 4, 0.0])
    r = assign(tr, unit="token", method="discounted", gamma=0.5, placement="last")
    assert r.ids == ("e1[9:10]", "e4[3:4]", "e6[1:2]")
    np.testing.assert_allclose(r.values, [0.0625, 0.25, 0.0])


def test_team_gets_the_total_for_every_method():
    tr = golden()
    for m in ("broadcast", "discounted", "causal", "leave-one-out", "shapley", "owen", "c3", "coma"):
        assert assign(tr, unit="team", method=m).as_dict() == {"team": 1.0}


@pytest.mark.parametrize("unit", ["agent", "role", "turn", "tool_call", "orchestrator"])
def test_efficiency_on_synth(unit):
    tr = synth(events=120, agents=4, seed=7)
    total = tr.rewards["team"]
    for m in ("causal", "shapley", "owen"):
        r = assign(tr, unit=unit, method=m, samples=200 if unit in ("turn", "tool_call") else None)
        assert math.isclose(r.values.sum(), total, abs_tol=1e-9), (unit, m)


def test_missing_units_and_bad_arguments_have_hints():
    b = TraceBuilder("noroles")
    s = b.spawn("w1", t=0)
    b.tool_call("w1", "x", t=1, after=s)
    tr = b.build(outcome=Outcome(success=True))
    with pytest.raises(ConfigError, match="no roles.*--unit agent"):
        assign(tr, unit="role")
    with pytest.raises(ConfigError, match="no message events"):
        assign(tr, unit="message")
    with pytest.raises(ConfigError, match="no orchestrator_decision"):
        assign(tr, unit="orchestrator")
    with pytest.raises(ConfigError, match="tokens_out"):
        assign(tr, unit="token")
    with pytest.raises(ConfigError, match="did you mean 'shapley'"):
        assign(tr, unit="agent", method="shaply")
    with pytest.raises(ConfigError, match="did you mean 'agent'"):
        assign(tr, unit="agnt")
    with pytest.raises(ConfigError, match="does not take gamma"):
        assign(tr, unit="agent", method="causal", gamma=0.5)
    with pytest.raises(ConfigError, match="did you mean 'w1'"):
        assign(tr, [Signal(unit=CreditUnit.AGENT, id="w11", value=1.0)], unit="agent")
    with pytest.raises(ConfigError, match="no reward signals"):
        assign(_no_outcome(), unit="agent")


def _no_outcome():
    b = TraceBuilder("bare")
    b.spawn("w1", t=0)
    return b.build()


def test_counterfactual_guard_on_many_units():
    tr = synth(events=400, agents=4, seed=1)
    with pytest.raises(ConfigError, match="coarser unit"):
        assign(tr, unit="turn", method="leave-one-out", max_players=10)


def test_sampled_result_reports_stderr_and_epsilon():
    tr = synth(events=200, agents=4, seed=4)
    r = assign(tr, unit="tool_call", method="shapley", samples=100, seed=1)
    assert r.stderr is not None and r.epsilon is not None and r.samples == 100
    rec = r.records()[0]
    assert set(rec) == {"unit", "credit", "stderr"}
