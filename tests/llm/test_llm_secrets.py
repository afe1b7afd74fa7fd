"""No secret leaks: the API key is sent, but never appears in a trace, a log, an error or a repr."""

from __future__ import annotations

import logging
import pickle

import pytest
from llm_fakes import scripted

import orchestrace as ot
from orchestrace.llm.client import ChatClient, LLMError, Secret
from orchestrace.llm.envbackend import LLMEnvBackend
from orchestrace.llm.episode import Plan, run_episode
from orchestrace.llm.tasks import task_for_dag
from orchestrace.llm.workers import LLMWorkers

KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ORCHESTRACE_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return KEY


def test_key_is_sent_and_never_shown(faulty, api_key: str, caplog: pytest.LogCaptureFixture,  # type: ignore[no-untyped-def]
                                     capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    # 500 (retried, logged), then a 401 that echoes the key back (like some hosted APIs do).
    srv = faulty(scripted("500", "ok", "ok", "ok", "ok", "ok", "401", "401", "401"))
    outputs: list[str] = []
    with LLMWorkers(srv.base_url + "?api-version=2024-01", "fake", max_retries=2, backoff_base=0.01, backoff_max=0.02,
                    timeout=1.0) as w:
        outputs += [repr(w), str(w), repr(w.client), repr(w.client.__dict__)]
        r = run_episode(task_for_dag("arith", [[], [], [0, 1]], seed=0), w, Plan(fanout=3))
        outputs += [repr(r), str(r.results), repr(LLMEnvBackend(w, "arith").__dict__)]
    assert srv.headers[0]["authorization"] == f"Bearer {KEY}"  # it was really used
    assert srv.paths[0] == "/v1/chat/completions?api-version=2024-01"
    assert r.causes.get("http_4xx") == 3  # the 401s were recorded …
    details = [res.detail or "" for res in r.results]
    assert any("Incorrect API key provided" in d for d in details)  # … with the server's message, scrubbed
    outputs += details
    outputs += [ot.dumps(r.trace).decode(), ot.dumps(r.trace, format="jsonl").decode()]
    outputs += [rec.getMessage() for rec in caplog.records] + [caplog.text]
    cap = capsys.readouterr()
    outputs += [cap.out, cap.err]
    assert any("http_5xx" in o for o in outputs)  # logs were captured at all
    for o in outputs:
        assert KEY not in o
        assert "SECRET" not in o


async def _fail(c: ChatClient) -> None:
    async with c:
        await c.chat([{"role": "user", "content": "hi"}])


def test_error_messages_and_exceptions_are_scrubbed(faulty, api_key: str) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    srv = faulty("401")
    c = ChatClient(srv.base_url, "fake", max_retries=0)
    with pytest.raises(LLMError) as ei:
        asyncio.run(_fail(c))
    texts = [str(ei.value), repr(ei.value), repr(ei.value.args), repr(c)]
    assert "Incorrect API key provided: Bearer ***" in str(ei.value)
    for t in texts:
        assert KEY not in t


def test_secret_type() -> None:
    s = Secret(KEY)
    assert KEY not in repr(s) + str(s) + f"{s}" + f"{s!r}" + repr([s]) + repr({"k": s})
    assert s.reveal() == KEY and s.scrub(f"x{KEY}y") == "x***y"
    with pytest.raises(TypeError):
        pickle.dumps(s)


def test_key_env_var_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORCHESTRACE_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert ChatClient("http://127.0.0.1:1/v1", "m").has_api_key
    c = ChatClient("http://127.0.0.1:1/v1", "m", api_key_env="MY_KEY")
    assert c._key is not None and c._key.reveal() == "sk-mine"
    assert not ChatClient("http://127.0.0.1:1/v1", "m", api_key_env="NOT_SET_ANYWHERE_XYZ").has_api_key


@pytest.mark.parametrize("url", [f"http://user:{KEY}@127.0.0.1:1/v1", f"http://127.0.0.1:1/v1?api_key={KEY}",
                                 f"http://127.0.0.1:1/v1?x=1&access_token={KEY}"])
def test_credentials_in_the_url_are_refused_without_echoing_them(url: str) -> None:
    from orchestrace.errors import ConfigError

    with pytest.raises(ConfigError) as ei:
        ChatClient(url, "m")
    assert KEY not in str(ei.value) and "environment variable" in str(ei.value)
