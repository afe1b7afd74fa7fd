"""The chat client against scripted faulty endpoints: retries, timeouts, causes, bounded time."""

from __future__ import annotations

import asyncio
import time

import pytest
from llm_fakes import FAKE_USAGE, free_port, scripted

from orchestrace.errors import ConfigError, OrchestraceError
from orchestrace.llm.client import ChatClient, LLMError, backoff_delay

MSG = [{"role": "user", "content": "What is 6 * 7?"}]


def fast_client(url: str, **kw: object) -> ChatClient:
    opts: dict[str, object] = dict(timeout=1.0, connect_timeout=0.5, deadline=10.0, max_retries=2,
                                   backoff_base=0.01, backoff_max=0.05)
    opts.update(kw)
    return ChatClient(url, "fake-model", api_key_env="ORCHESTRACE_TEST_NO_SUCH_KEY", **opts)  # type: ignore[arg-type]


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


async def _chat(c: ChatClient, **kw: object):  # type: ignore[no-untyped-def]
    async with c:
        return await c.chat(MSG, **kw)  # type: ignore[arg-type]


def test_ok_usage_and_request_body(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok")
    r = run(_chat(fast_client(srv.base_url), max_tokens=17, temperature=0.0, seed=3))
    assert r.text == "The answer is 42." and r.finish_reason == "stop"
    assert (r.prompt_tokens, r.completion_tokens) == FAKE_USAGE and r.usage_reported
    assert r.attempts == 1 and r.errors == () and r.t_end >= r.t_start and r.latency_s >= 0
    req = srv.requests[0]
    assert req["model"] == "fake-model" and req["max_tokens"] == 17 and req["seed"] == 3
    assert req["messages"] == MSG and req["stream"] is False
    assert "authorization" not in srv.headers[0]  # no key in the environment → no header


@pytest.mark.parametrize("fault,cause", [("429", "http_429"), ("500", "http_5xx"), ("malformed", "malformed_json"),
                                         ("drop", "disconnect"), ("hang", "timeout")])
def test_transient_faults_are_retried_then_succeed(faulty, fault: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    srv = faulty(scripted(fault, fault))
    t0 = time.monotonic()
    r = run(_chat(fast_client(srv.base_url, timeout=0.3)))
    assert time.monotonic() - t0 < 5
    assert r.text == "The answer is 42." and r.attempts == 3 and r.errors == (cause, cause)
    assert srv.actions == [fault, fault, "ok"]


@pytest.mark.parametrize("fault,cause", [("429", "http_429"), ("500", "http_5xx"), ("malformed", "malformed_json"),
                                         ("drop", "disconnect"), ("hang", "timeout")])
def test_persistent_faults_fail_with_cause_after_retries(faulty, fault: str, cause: str) -> None:  # type: ignore[no-untyped-def]
    srv = faulty(fault)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as ei:
        run(_chat(fast_client(srv.base_url, timeout=0.3, max_retries=2)))
    assert time.monotonic() - t0 < 5
    assert ei.value.cause == cause and ei.value.attempts == 3 and ei.value.causes == (cause,) * 3
    assert isinstance(ei.value, OrchestraceError) and cause in str(ei.value)
    assert len(srv.requests) == 3


def test_server_down_is_connect_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    t0 = time.monotonic()
    with pytest.raises(LLMError) as ei:
        run(_chat(fast_client(url, max_retries=1)))
    assert ei.value.cause == "connect" and ei.value.attempts == 2
    assert "is the server running" in str(ei.value)
    assert time.monotonic() - t0 < 5


def test_client_error_is_not_retried(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("401")
    with pytest.raises(LLMError) as ei:
        run(_chat(fast_client(srv.base_url)))
    assert ei.value.cause == "http_4xx" and ei.value.attempts == 1 and len(srv.requests) == 1
    assert "API key" in str(ei.value)


def test_empty_completion_is_returned_not_raised(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("empty")
    r = run(_chat(fast_client(srv.base_url)))
    assert r.text == "" and r.completion_tokens == 0 and r.prompt_tokens == FAKE_USAGE[0]


def test_deadline_bounds_the_whole_call(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("hang")
    t0 = time.monotonic()
    with pytest.raises(LLMError) as ei:
        run(_chat(fast_client(srv.base_url, timeout=5.0, deadline=0.5, max_retries=5)))
    assert ei.value.cause == "deadline" and time.monotonic() - t0 < 3


def test_concurrency_limit(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok")
    in_flight = {"now": 0, "peak": 0}

    async def main() -> None:
        async with fast_client(srv.base_url, max_concurrency=2) as c:
            orig = c._attempt

            async def counting(http, body):  # type: ignore[no-untyped-def]
                in_flight["now"] += 1
                in_flight["peak"] = max(in_flight["peak"], in_flight["now"])
                await asyncio.sleep(0.05)
                try:
                    return await orig(http, body)
                finally:
                    in_flight["now"] -= 1

            c._attempt = counting  # type: ignore[method-assign]
            await asyncio.gather(*[c.chat(MSG) for _ in range(6)])

    run(main())
    assert in_flight["peak"] == 2 and len(srv.requests) == 6


def test_retry_after_is_honoured_and_capped(faulty) -> None:  # type: ignore[no-untyped-def]
    srv = faulty(scripted("429"))
    r = run(_chat(fast_client(srv.base_url, retry_after_max=0.0)))
    assert r.errors == ("http_429",) and r.attempts == 2


def test_backoff_is_bounded_and_grows() -> None:
    ds = [backoff_delay(k, base=0.1, cap=1.0, u=1.0) for k in range(1, 8)]
    assert ds == sorted(ds) and ds[0] == pytest.approx(0.1) and max(ds) == 1.0
    for k in range(1, 20):
        assert 0.0 <= backoff_delay(k, base=0.1, cap=1.0) <= 1.0


@pytest.mark.parametrize("kw", [{"timeout": 0}, {"max_retries": -1}, {"max_concurrency": 0}, {"deadline": -1.0}])
def test_bad_config_is_config_error(kw: dict) -> None:
    with pytest.raises(ConfigError):
        ChatClient("http://127.0.0.1:1/v1", "m", **kw)


def test_bad_base_url_is_config_error() -> None:
    with pytest.raises(ConfigError, match="http://"):
        ChatClient("127.0.0.1:8080/v1", "m")
