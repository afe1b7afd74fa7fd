"""Replay and counterfactual interventions (property tests with few examples)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace import validate
from orchestrace.core.io import dumps
from orchestrace.env import (
    ChangeDelegation,
    DropMessage,
    EnvConfig,
    OrchestrationEnv,
    RemoveAgent,
    StopAt,
    SwapAggregation,
    agent_value_function,
    make_baseline,
    message_value_function,
    replay,
    stop_values,
)

CFG = EnvConfig.default()


def _run(seed, name="threshold"):
    env = OrchestrationEnv(CFG, record_trace=True)
    pol = make_baseline(name, CFG, **({"seed": seed} if name == "random" else {}))
    obs, info = env.reset(seed=seed)
    acts, done = [], False
    while not done:
        a = pol.act(obs, info)
        acts.append(a)
        obs, _, done, _, info = env.step(a)
    return acts, info


def _key(r):
    return (r.success, r.return_, r.tokens, r.decisions, r.agents)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(["threshold", "random", "adaptive"]))
def test_replay_without_intervention_reproduces(seed, name):
    acts, info = _run(seed, name)
    r = replay(CFG, seed, acts)
    assert r.replaced == () and list(r.actions) == acts
    assert r.success == info["success"] and r.return_ == info["return"] and r.tokens == info["tokens"]
    assert dumps(r.trace).count(b'"orchestrator_decision"') == dumps(info["trace"]).count(b'"orchestrator_decision"')
    assert validate(r.trace).ok


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), pick=st.integers(0, 1000))
def test_remove_agent_changes_only_that_agent(seed, pick):
    acts, _ = _run(seed)
    base = replay(CFG, seed, acts, record_trace=False)
    i, s = base.agents[pick % len(base.agents)]
    cf = replay(CFG, seed, acts, [RemoveAgent(i, s)], record_trace=False)
    if not cf.replaced and cf.decisions == base.decisions:
        assert set(cf.agents) == set(base.agents) - {(i, s)}
        assert cf.tokens < base.tokens
    # a no-op intervention (slot never used) changes nothing
    same = replay(CFG, seed, acts, [RemoveAgent(i, CFG.max_attempts - 1 + 10)], record_trace=False)
    assert _key(same) == _key(base)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_noop_interventions_change_nothing(seed):
    acts, _ = _run(seed)
    base = replay(CFG, seed, acts, record_trace=False)
    o4 = [t for t, a in enumerate(acts) if 13 <= a < 17]
    stop_step = len(acts) - 1
    ivs = [SwapAggregation(acts[o4[0]] - 13, step=o4[0]), StopAt(stop_step)]
    assert _key(replay(CFG, seed, acts, ivs, record_trace=False)) == _key(base)
    no_msg = [a for a in base.agents if a not in base.messages]
    if no_msg:
        assert _key(replay(CFG, seed, acts, [DropMessage(*no_msg[0])], record_trace=False)) == _key(base)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), prof=st.integers(0, 4))
def test_change_delegation_only_touches_later_work(seed, prof):
    acts, _ = _run(seed)
    base = replay(CFG, seed, acts, record_trace=False)
    o2 = [t for t, a in enumerate(acts) if 4 <= a < 10]
    t = o2[-1]
    cf = replay(CFG, seed, acts, [ChangeDelegation(t, prof)], record_trace=False)
    assert cf.actions[:t] == base.actions[:t]
    assert cf.actions[t] == 4 + prof
    if prof == acts[t] - 4:
        assert _key(cf) == _key(base)


def test_stop_at_earlier_decision_and_stop_values():
    cfg = CFG
    acts, info = _run(3, "always-continue")
    v = stop_values(cfg, 3, acts)
    o5 = [t for t, a in enumerate(acts) if a >= cfg.n_actions - 2]
    assert np.isnan(v[[t for t in range(len(acts)) if t not in o5]]).all()
    assert np.isclose(v[o5[-1]], info["return"])
    early = replay(cfg, 3, acts, [StopAt(o5[0])], record_trace=False)
    assert early.decisions == o5[0] + 1 and np.isclose(early.return_, v[o5[0]])
    assert early.tokens < info["tokens"]


def test_value_functions():
    acts, info = _run(21)
    v = agent_value_function(CFG, 21, acts)
    assert np.isclose(v(v.players), info["return"])
    vals = v.many([v.players, (), v.players[:1]])
    assert vals[0] == v(v.players) and np.isfinite(vals).all()
    vs = agent_value_function(CFG, 21, acts, outcome="success")
    assert vs(()) == 0.0 and vs(vs.players) == float(info["success"])  # no agent works → no answer
    m = message_value_function(CFG, 21, acts)
    assert np.isclose(m(m.players), info["return"])
