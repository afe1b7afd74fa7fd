"""The world's optional real-time extension: a backend with ``now()`` and timed/caused results
gets a trace laid out on its clock (valid, overlapping fan-outs, failure causes on returns)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from orchestrace import validate
from orchestrace.env import EnvConfig, OrchestrationEnv, SimulatedWorkers, make_baseline
from orchestrace.env.workers import WorkerResult
from orchestrace.vocab import EventType


class FakeClockWorkers:
    """Simulated workers on a fake wall clock: a launch's attempts all start at the step's
    clock (+1 ms per slot) and run their simulated latency concurrently; ``now()`` moves
    the clock past every running attempt (a synchronous step waits for its fan-out)."""

    def __init__(self, cfg: EnvConfig, fail_every: int = 0) -> None:
        self.sim = SimulatedWorkers(cfg)
        self.clock = 1000.0
        self.busy = 0.0
        self.fail_every = fail_every
        self.results: list[WorkerResult] = []

    def now(self) -> float:
        self.clock = max(self.clock + 0.01, self.busy)
        return self.clock

    def run(self, subtask: Any, profile: Any, context: Any, rng: int) -> WorkerResult:
        r = self.sim.run(subtask, profile, context, rng)
        t0 = self.clock + 0.001 * (1 + context.slot % 4)
        r = replace(r, t_start=t0, t_end=t0 + r.latency)
        if self.fail_every and len(self.results) % self.fail_every == 0:
            r = replace(r, success=False, answer="?", error=True, cause="timeout")
        self.busy = max(self.busy, r.t_end or 0.0)
        self.results.append(r)
        return r


def _run(cfg: EnvConfig, workers: Any, policy: str, seed: int) -> Any:
    env = OrchestrationEnv(cfg, workers=workers, record_trace=True)
    pol = make_baseline(policy, cfg).bind(env)
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, done, _, info = env.step(pol.act(obs, info))
    return info["trace"]


def _max_overlap(spans: list[tuple[float, float]]) -> int:
    return max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)


def test_real_clock_trace_matches_backend_times_and_overlaps() -> None:
    cfg = EnvConfig.small()
    w = FakeClockWorkers(cfg)
    tr = _run(cfg, w, "fixed-fanout", 3)
    rep = validate(tr)
    assert rep.valid, [str(p) for p in rep.problems]
    assert tr.meta["clock"] == "real"
    t0 = tr.meta["t0_wall"]
    spawns = {e.to: e for e in tr.events if e.type is EventType.SPAWN}
    rets = {e.agent: e for e in tr.events if e.type is EventType.RETURN}
    assert len(rets) == len(w.results) >= 3
    # agent k is the k-th attempt the backend answered; its span is exactly the backend's interval
    for k, r in enumerate(w.results, 1):
        assert spawns[f"w{k}"].t_end == pytest.approx(r.t_start - t0, abs=1e-9)
        assert rets[f"w{k}"].t == pytest.approx(r.t_end - t0, abs=1e-9)
    spans = [(spawns[a].t_end, rets[a].t) for a in rets]
    assert _max_overlap(spans) >= 3
    assert tr.costs["wall_clock_s"] == pytest.approx(max(e.t_end or e.t for e in tr.events))


@pytest.mark.parametrize("name", ["small", "default"])
def test_real_clock_traces_validate_with_simulated_verifiers(name: str) -> None:
    """Verifier votes stay simulated: they shift later decisions (the lag rule), never break causality."""
    cfg = getattr(EnvConfig, name)()
    votes = 0
    for seed in range(40):
        tr = _run(cfg, FakeClockWorkers(cfg), "random", seed)
        rep = validate(tr)
        assert rep.valid, (seed, [str(p) for p in rep.problems])
        dec = [e.t for e in tr.events if e.type is EventType.ORCHESTRATOR_DECISION]
        assert dec == sorted(dec)
        votes += sum(1 for e in tr.events if e.type is EventType.TOOL_CALL and e.tool == "verifier.check")
    assert votes > 0  # the simulated-attempt path was exercised


def test_failure_cause_reaches_the_return_event() -> None:
    cfg = EnvConfig.small()
    w = FakeClockWorkers(cfg, fail_every=2)
    tr = _run(cfg, w, "fixed-fanout", 4)
    assert validate(tr).valid
    failed = [e for e in tr.events if e.type is EventType.RETURN and e.attrs and "cause" in e.attrs]
    assert len(failed) == sum(1 for r in w.results if r.cause) >= 1
    assert all(e.error is True and e.attrs["cause"] == "timeout" for e in failed)
