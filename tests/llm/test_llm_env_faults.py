"""The environment with the LLM backend against a faulty endpoint: a failed call's return
event carries ``error=True`` and its cause, and the real-time trace still validates."""

from __future__ import annotations

import importlib.util

import pytest
from llm_fakes import scripted

from orchestrace import validate
from orchestrace.llm.envbackend import LLMEnvBackend
from orchestrace.llm.workers import LLMWorkers
from orchestrace.vocab import EventType


@pytest.mark.parametrize(("script", "cause"), [("500", "http_5xx"), ("empty", "empty_completion")])
def test_env_trace_records_failure_cause(faulty, script: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    if importlib.util.find_spec("gymnasium") is None:
        pytest.skip("gymnasium (orchestrace[env]) is not installed")
    from orchestrace.env import EnvConfig, OrchestrationEnv
    from orchestrace.env.baselines import make_baseline

    # the first two calls fail for good (one retry each), the rest answer
    srv = faulty(scripted(script, script, script, script, then="ok"))
    cfg = EnvConfig.small()
    workers = LLMWorkers(srv.base_url, "fake", timeout=0.5, connect_timeout=0.3, deadline=3.0, max_retries=1,
                         backoff_base=0.01, backoff_max=0.02, max_concurrency=1,
                         api_key_env="ORCHESTRACE_TEST_NO_SUCH_KEY")
    backend = LLMEnvBackend(workers, "arith", cfg)
    env = OrchestrationEnv(cfg, workers=backend, record_trace=True)
    pol = make_baseline("fixed-fanout", cfg).bind(env)
    try:
        obs, info = env.reset(seed=5)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
    finally:
        workers.close()
    tr = info["trace"]
    rep = validate(tr)
    assert rep.valid, [str(p) for p in rep.problems]
    assert tr.meta["clock"] == "real"
    failed = [e for e in tr.events if e.type is EventType.RETURN and e.attrs and "cause" in e.attrs]
    expected = [rec for rec in backend.records if rec.result.error is not None]
    assert len(failed) == len(expected) >= 1
    assert all(e.error is True for e in failed)
    assert cause in {e.attrs["cause"] for e in failed}
    assert sorted(e.attrs["cause"] for e in failed) == sorted(str(rec.result.error) for rec in expected)
    # a cause is a short label, never a message, URL or key
    assert all(len(e.attrs["cause"]) < 40 and "/" not in e.attrs["cause"] for e in failed)
    ok = [e for e in tr.events if e.type is EventType.RETURN and not (e.attrs and "cause" in e.attrs)]
    assert ok, "the episode went on after the failures"
