"""Every emitted trace validates; measures on them are sane."""

from __future__ import annotations

import numpy as np

from orchestrace import validate
from orchestrace.analysis.measures import compute
from orchestrace.env import BASELINES, EnvConfig, OrchestrationEnv, make_baseline


def _play(cfg, name, seed, **kw):
    env = OrchestrationEnv(cfg, policy_name=name, record_trace=True)
    pol = make_baseline(name, cfg, **kw).bind(env)
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, done, _, info = env.step(pol.act(obs, info))
    return info


def test_every_baseline_trace_validates_and_costs_match():
    for cfg in (EnvConfig.small(), EnvConfig.default()):
        for name in BASELINES + ("adaptive",):
            for seed in range(4):
                info = _play(cfg, name, seed)
                tr = info["trace"]
                rep = validate(tr)
                assert rep.ok and not rep.problems, [str(p) for p in rep.problems]
                assert abs(sum(e.tokens for e in tr.events) - info["tokens"]) < 1e-6
                assert tr.outcome.success == info["success"]
                assert tr.stop_event is not None and tr.stop_event.decision.action == "stop"


def test_measures_sane():
    cfg = EnvConfig.default()
    wasted_late, speedups = [], []
    for seed in range(12):
        late = compute(_play(cfg, "always-continue", seed)["trace"]).metrics
        wasted_late.append(late["waste/events"])
        m = compute(_play(cfg, "fixed-fanout", seed)["trace"]).metrics
        speedups.append(m["e2/speedup"])
        assert m["e2/peak_concurrency"] >= 2  # fan-out runs agents in parallel
        assert late["e1/task_success"] in (0.0, 1.0)
    assert min(speedups) >= 1.0
    assert all(w > 0 for w in wasted_late)  # a late stop always wastes work here


def test_safety_events_reach_trace():
    cfg = EnvConfig.default().replace(p_untrusted=1.0, p_inject=1.0, summary_leak=1.0)
    found = 0
    for seed in range(30):
        info = _play(cfg, "random", seed)
        n = sum(1 for e in info["trace"].events if e.type.value == "safety_event")
        assert n == info["safety_events"]
        found += n
        if n:
            assert compute(info["trace"]).metrics["safety/events"] == n
    assert found > 0
    assert np.isfinite(found)
