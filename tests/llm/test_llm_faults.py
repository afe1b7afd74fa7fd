"""Whole episodes against faulty endpoints: every fault becomes an error event with its cause,
transient ones are retried, and the episode always ends (bounded time) with a clear outcome."""

from __future__ import annotations

import threading
import time

import pytest
from llm_fakes import FAKE_USAGE, free_port, scripted

from orchestrace import validate
from orchestrace.core.trace import Trace
from orchestrace.llm.episode import Plan, run_episode
from orchestrace.llm.tasks import task_for_dag
from orchestrace.llm.workers import LLMWorkers
from orchestrace.vocab import EventType

PLAN = Plan(fanout=3)


def workers(url: str, **kw: object) -> LLMWorkers:
    opts: dict[str, object] = dict(timeout=0.4, connect_timeout=0.3, deadline=3.0, max_retries=2, backoff_base=0.01,
                                   backoff_max=0.05, api_key_env="ORCHESTRACE_TEST_NO_SUCH_KEY")
    opts.update(kw)
    return LLMWorkers(url, "fake", **opts)  # type: ignore[arg-type]


def task(answer_text: str = "Answer: 42"):  # type: ignore[no-untyped-def]
    return task_for_dag("arith", [[], [], [0, 1]], seed=0)


def calls(tr: Trace) -> list:  # type: ignore[type-arg]
    return [e for e in tr.events if e.type is EventType.TOOL_CALL]


def error_causes(tr: Trace) -> list[str]:
    return [e.attrs["cause"] for e in tr.events if e.error and e.attrs and "cause" in e.attrs]


def check_trace(tr: Trace) -> None:
    rep = validate(tr)
    assert rep.valid, [str(p) for p in rep.problems]
    assert tr.stop_event is not None and tr.outcome is not None
    assert tr.costs["tokens"] == sum(e.tokens for e in tr.events)


def test_happy_fake_endpoint_tokens_and_concurrency(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok")
    with workers(srv.base_url) as w:
        r = run_episode(task(), w, PLAN)
    check_trace(r.trace)
    assert r.status == "ok" and r.failed_calls == 0 and len(srv.requests) == 9
    assert r.trace.costs["tokens"] == 9 * sum(FAKE_USAGE) == r.tokens
    assert len(calls(r.trace)) == 9 and r.trace.meta["status"] == "ok"


def test_server_down_at_start(faulty) -> None:  # type: ignore[no-untyped-def]
    url = f"http://127.0.0.1:{free_port()}/v1"
    t0 = time.monotonic()
    with workers(url) as w:
        r = run_episode(task(), w, PLAN)
    assert time.monotonic() - t0 < 20
    check_trace(r.trace)
    assert r.status == "failed" and not r.success and r.answer is None
    causes = error_causes(r.trace)
    assert causes and set(causes) == {"connect"}
    assert len(calls(r.trace)) == 9 * 3  # every sub-agent: 1 try + 2 retries
    assert r.trace.costs["tokens"] == 0 and r.trace.outcome.success is False


@pytest.mark.parametrize("fault,cause", [("429", "http_429"), ("500", "http_5xx"), ("malformed", "malformed_json"),
                                         ("hang", "timeout"), ("drop", "disconnect")])
def test_transient_fault_mid_episode_is_retried(faulty, fault: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    # Requests 0-2 succeed (first subtask), 3 and 4 hit the fault, then all is well again.
    srv = faulty(scripted("ok", "ok", "ok", fault, fault))
    t0 = time.monotonic()
    with workers(srv.base_url) as w:
        r = run_episode(task(), w, PLAN)
    assert time.monotonic() - t0 < 20
    check_trace(r.trace)
    assert r.status == "degraded" and r.answer is not None
    assert error_causes(r.trace).count(cause) == 2
    failed = [e for e in calls(r.trace) if e.error]
    assert all(e.tokens == 0 for e in failed)
    ok_calls = [e for e in calls(r.trace) if not e.error]
    assert len(ok_calls) == 9 and r.trace.costs["tokens"] == 9 * sum(FAKE_USAGE)
    # the failed try and its retry belong to the same sub-agent, one after the other
    agent = failed[0].agent
    mine = [e for e in calls(r.trace) if e.agent == agent]
    assert [bool(e.error) for e in mine][-1] is False and mine[0].t_end <= mine[-1].t + 1e-6


@pytest.mark.parametrize("fault,cause", [("500", "http_5xx"), ("hang", "timeout"), ("drop", "disconnect"),
                                         ("malformed", "malformed_json"), ("429", "http_429")])
def test_persistent_fault_ends_with_clear_outcome(faulty, fault: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    srv = faulty(fault)
    t0 = time.monotonic()
    with workers(srv.base_url, max_retries=1) as w:
        r = run_episode(task(), w, PLAN)
    assert time.monotonic() - t0 < 20
    check_trace(r.trace)
    assert r.status == "failed" and r.success is False
    assert set(error_causes(r.trace)) == {cause}
    rets = [e for e in r.trace.events if e.type is EventType.RETURN]
    assert len(rets) == 9 and all(e.error and e.attrs["cause"] == cause for e in rets)
    assert all(cause in e.attrs["detail"] for e in rets)


def test_empty_completions(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("empty")
    with workers(srv.base_url) as w:
        r = run_episode(task(), w, PLAN)
    check_trace(r.trace)
    assert r.status == "failed" and r.causes == {"empty_completion": 9}
    rets = [e for e in r.trace.events if e.type is EventType.RETURN]
    assert all(e.error and e.attrs["cause"] == "empty_completion" for e in rets)
    assert r.trace.costs["tokens"] == 9 * FAKE_USAGE[0]  # prompt tokens still counted


def test_connection_dropped_for_one_sub_agent_only(faulty) -> None:  # type: ignore[no-untyped-def]
    lock = threading.Lock()
    seen: list[int] = []

    def script(i: int) -> str:
        with lock:
            seen.append(i)
        return "drop" if i == 1 else "ok"

    srv = faulty(script)
    with workers(srv.base_url, max_retries=0) as w:
        r = run_episode(task(), w, PLAN)
    check_trace(r.trace)
    assert r.status == "degraded" and r.answer is not None  # majority of the other two still answers
    assert error_causes(r.trace) == ["disconnect", "disconnect"]  # the call and its return


def test_unparseable_reply_is_an_error_return(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok", text="I really cannot say.")
    with workers(srv.base_url) as w:
        r = run_episode(task(), w, PLAN)
    check_trace(r.trace)
    assert r.causes == {"unparseable": 9} and r.status == "failed"
