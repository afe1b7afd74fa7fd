"""An async client for OpenAI-compatible chat-completions endpoints (vLLM, llama.cpp, Ollama, …).

One request is ``POST {base_url}/chat/completions`` with ``{"model", "messages",
"max_tokens", "temperature"}``; the answer's ``choices[0].message.content`` is the text and
its ``usage.prompt_tokens`` / ``usage.completion_tokens`` are the token counts (never
estimated when the server reports them).

Reliability, per call:

* **timeouts**: ``connect_timeout`` for the TCP connect, ``timeout`` for each read/write,
  and a hard ``deadline`` for the whole call including retries (nothing can hang);
* **retries** with exponential backoff and full jitter, for *transient* causes only:
  ``connect`` (server down), ``timeout``, ``disconnect`` (connection dropped mid-answer),
  ``http_429`` (honouring ``Retry-After``, capped), ``http_5xx`` and ``malformed_json``.
  The wait before attempt ``k`` (k = 1, 2, …) is ``U(0, min(backoff_max, backoff_base·2^(k-1)))``;
* **concurrency limit**: at most ``max_concurrency`` requests in flight (an
  :class:`asyncio.Semaphore`, created per event loop);
* **no secret leaks**: the API key is read from an environment variable (default
  ``ORCHESTRACE_API_KEY``, else ``OPENAI_API_KEY``), kept in a :class:`Secret` whose ``repr``
  and ``str`` are ``'***'``, sent only in the ``Authorization`` header, and scrubbed from any
  server-provided text that ends up in an error message; a base URL with credentials in it
  (``user:pw@`` or a ``?key=`` style parameter — URLs end up in logs, httpx's included) is
  refused with a :class:`~orchestrace.errors.ConfigError`; other query parameters (e.g.
  ``api-version``) are sent with every request.

Causes of failure (``LLMError.cause`` and ``ChatResult.errors``) are the strings of
:data:`CAUSES`.

>>> c = ChatClient("http://127.0.0.1:9/v1", "m", api_key_env="ORCHESTRACE_DOCTEST_NO_KEY")
>>> c
ChatClient(base_url='http://127.0.0.1:9/v1', model='m', api_key=None, max_concurrency=4)
>>> backoff_delay(3, base=0.5, cap=1.0, u=1.0)  # min(1.0, 0.5·2²)·u
1.0
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LLMError, require
from ._reply import _Failure, _parse_completion, _Reply

__all__ = [
    "CAUSES",
    "RETRYABLE",
    "ChatClient",
    "ChatResult",
    "LLMError",
    "Secret",
    "backoff_delay",
    "redact_url",
]

_logger = logging.getLogger("orchestrace.llm")

#: Every failure cause a call can report.
CAUSES: tuple[str, ...] = (
    "connect",  # TCP connect refused / unreachable (server down)
    "timeout",  # connect, read or write timed out, or the deadline ran out
    "disconnect",  # the server closed the connection mid-request
    "http_429",  # rate limited
    "http_5xx",  # server error
    "http_4xx",  # other client error (bad model name, bad key …): not retried
    "redirect",  # an HTTP 3xx (redirects are not followed: the base URL must be the API root itself)
    "malformed_json",  # the body is not the JSON shape of a chat completion
    "empty_completion",  # the model produced no text
    "deadline",  # the whole-call budget (retries included) is exhausted
)

#: Causes that are retried.
RETRYABLE: frozenset[str] = frozenset(
    {"connect", "timeout", "disconnect", "http_429", "http_5xx", "malformed_json"}
)

_DEFAULT_KEY_ENVS = ("ORCHESTRACE_API_KEY", "OPENAI_API_KEY")
_SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|cred", re.I)


class Secret:
    """A string that never shows itself: ``repr``/``str``/``format`` give ``'***'``.

    >>> s = Secret("sk-123")
    >>> (repr(s), str(s), f"{s}", s.reveal())
    ('***', '***', '***', 'sk-123')
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself (only for the ``Authorization`` header)."""
        return self._value

    def _field(self, value: str | None, n: int = 200) -> str | None:
        """A short string of a reply stored as is (finish reason, model): scrubbed and cut to ``n`` characters."""
        return None if value is None else self.scrub(value)[:n]

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the secret replaced by ``***``."""
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return "***"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "***"

    def __reduce__(self) -> Any:  # never pickled into a checkpoint or a worker process
        raise TypeError("Secret cannot be pickled")


def redact_url(url: str) -> str:
    """``url`` without user-info, query string and secret-looking path segments (they may carry credentials).

    >>> redact_url("https://user:pw@api.example.com/v1?key=abc")
    'https://api.example.com/v1'
    """
    from .._limits import redact_url as _redact  # also a secret-looking path segment → ***

    return _redact(url)


def backoff_delay(attempt: int, *, base: float, cap: float, u: float | None = None) -> float:
    """Full-jitter exponential backoff before retry ``attempt`` (1-based): ``U(0, min(cap, base·2^(attempt-1)))``.

    ``u`` in [0, 1] replaces the uniform draw (for tests).

    >>> backoff_delay(1, base=0.25, cap=4.0, u=1.0), backoff_delay(10, base=0.25, cap=4.0, u=0.5)
    (0.25, 2.0)
    """
    if u is None:
        u = random.random()
    return min(cap, base * 2.0 ** (attempt - 1)) * u


@dataclass(frozen=True)
class ChatResult:
    """One completed chat call.

    ``t_start``/``t_end`` are ``time.time()`` wall-clock seconds of the *whole* call
    (retries and backoff included); ``latency_s = t_end - t_start``. ``prompt_tokens`` and
    ``completion_tokens`` are the server's usage report, summed over attempts that returned
    one (``usage_reported`` is False when no attempt did: then they are 0). ``errors`` lists
    the causes of the failed attempts that preceded success. ``text`` may be empty: then
    ``finish_reason`` tells why and callers decide (see ``empty_completion``).
    ``mean_logprob`` is the mean token log-probability of the completion when the call asked
    for ``logprobs`` and the server returned them (else None). ``log`` has
    ``(cause, t_start, t_end)`` for every HTTP attempt (cause None for the successful one).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    t_start: float
    t_end: float
    attempts: int = 1
    errors: tuple[str, ...] = ()
    usage_reported: bool = True
    model: str | None = None
    raw_usage: Mapping[str, Any] = field(default_factory=dict)
    mean_logprob: float | None = None
    log: tuple[tuple[str | None, float, float], ...] = ()
    #: per completion token: its log-prob, and the top-k alternatives' log-probs (when asked
    #: for with ``extra={"top_logprobs": k}``); empty when the server gave none
    token_logprobs: tuple[float, ...] = ()
    top_logprobs: tuple[tuple[float, ...], ...] = ()

    @property
    def latency_s(self) -> float:
        """``t_end - t_start`` (seconds)."""
        return self.t_end - self.t_start

    @property
    def tokens(self) -> int:
        """``prompt_tokens + completion_tokens``."""
        return self.prompt_tokens + self.completion_tokens


def _httpx() -> Any:
    return require("httpx", extra="llm")


class ChatClient:
    """Async client for one OpenAI-compatible endpoint and model.

    ``base_url`` is the API root that ends in ``/v1`` (e.g. ``http://127.0.0.1:8080/v1``).
    The API key is looked up once, at construction, in ``api_key_env`` (default: the first
    set of ``ORCHESTRACE_API_KEY``, ``OPENAI_API_KEY``); no key means no ``Authorization``
    header (fine for local servers). Use ``async with ChatClient(...) as c`` or call
    :meth:`aclose`; one client belongs to one event loop.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        deadline: float = 180.0,
        max_retries: int = 3,
        backoff_base: float = 0.25,
        backoff_max: float = 4.0,
        retry_after_max: float = 10.0,
        max_concurrency: int = 4,
        transport: Any = None,
    ) -> None:
        from ..errors import ConfigError

        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url must start with http:// or https://, got {redact_url(base_url)!r}; "
                "example: --base-url http://127.0.0.1:8080/v1"
            )
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout), ("deadline", deadline)):
            if not value > 0:
                raise ConfigError(f"{name} must be > 0 seconds, got {value}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {max_retries}")
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be >= 1, got {max_concurrency}")
        parts = urllib.parse.urlsplit(base_url)
        if parts.username or parts.password:
            raise ConfigError(
                f"base_url {redact_url(base_url)!r} carries credentials (user:password@); remove them and put "
                "the API key in the environment variable (ORCHESTRACE_API_KEY or --api-key-env)"
            )
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        secretish = [k for k, _ in query if _SECRET_PARAM.search(k)]
        if secretish:
            raise ConfigError(
                f"base_url query parameter {secretish[0]!r} looks like a credential; URLs end up in logs, so put "
                "the API key in the environment variable (ORCHESTRACE_API_KEY or --api-key-env) instead"
            )
        self.base_url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
        self.params = dict(query)  # e.g. api-version=…, sent with every request
        self.model = model
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.deadline = float(deadline)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.retry_after_max = float(retry_after_max)
        self.max_concurrency = int(max_concurrency)
        self._transport = transport
        envs = (api_key_env,) if api_key_env else _DEFAULT_KEY_ENVS
        key = next((os.environ[e] for e in envs if os.environ.get(e)), None)
        self._key: Secret | None = Secret(key) if key else None
        self._http: Any = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None

    # -- presentation (no secrets) ------------------------------------------------------
    def __repr__(self) -> str:
        key = None if self._key is None else "***"
        return (
            f"ChatClient(base_url={redact_url(self.base_url)!r}, model={self.model!r}, "
            f"api_key={key}, max_concurrency={self.max_concurrency})"
        )

    @property
    def has_api_key(self) -> bool:
        """Whether an API key was found in the environment."""
        return self._key is not None

    def _field(self, value: str | None, n: int = 200) -> str | None:
        """A short string of a reply stored as is (finish reason, model): scrubbed and cut to ``n`` characters."""
        return None if value is None else self.scrub(value)[:n]

    def scrub(self, text: str) -> str:
        """``text`` with the API key (if any), and anything that looks like a key or a bearer
        token (:func:`orchestrace._limits.scrub`), replaced by ``***``."""
        from .._limits import scrub

        return scrub(self._key.scrub(text) if self._key is not None else text)

    # -- lifecycle ----------------------------------------------------------------------
    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._http is None or self._http_loop is not loop:
            httpx = _httpx()
            headers = {"Content-Type": "application/json"}
            if self._key is not None:
                headers["Authorization"] = f"Bearer {self._key.reveal()}"
            limits = httpx.Limits(max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency)
            self._http = httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(self.timeout, connect=self.connect_timeout),
                limits=limits,
                transport=self._transport,
                trust_env=False,
            )
            self._http_loop = loop
            self._sem = asyncio.Semaphore(self.max_concurrency)
        return self._http

    # -- the call -----------------------------------------------------------------------
    async def chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 48,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        logprobs: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion, with retries; raises :class:`LLMError` when it fails for good.

        ``logprobs=True`` asks for token log-probabilities (OpenAI ``logprobs``) and fills
        :attr:`ChatResult.mean_logprob`; ``extra`` adds raw request fields.
        """
        http = self._client()
        assert self._sem is not None
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "stream": False,
        }
        if stop:
            body["stop"] = list(stop)
        if seed is not None:
            body["seed"] = int(seed)
        if logprobs:
            body["logprobs"] = True
        if extra:
            body.update(extra)
        return await self._call(http, body, "/chat/completions")

    async def complete(
        self,
        prompt: str,
        *,
        max_tokens: int = 48,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        logprobs: int = 0,
    ) -> ChatResult:
        """One plain text completion (``/completions``: a base model continues ``prompt``), with retries.

        ``logprobs`` > 0 asks for token log-probabilities with that many alternatives per token (fills
        :attr:`ChatResult.mean_logprob` and ``top_logprobs``); the reply is read like a chat reply.
        """
        http = self._client()
        body: dict[str, Any] = {"model": self.model, "prompt": str(prompt), "max_tokens": int(max_tokens),
                                "temperature": float(temperature), "stream": False}
        if stop:
            body["stop"] = list(stop)
        if seed is not None:
            body["seed"] = int(seed)
        if logprobs:
            body["logprobs"] = int(logprobs)
        return await self._call(http, body, "/completions")

    async def _call(self, http: Any, body: dict[str, Any], path: str) -> ChatResult:
        t_start = time.time()
        log: list[tuple[str | None, float, float]] = []
        try:
            return await asyncio.wait_for(self._with_retries(http, body, t_start, log, path), timeout=self.deadline)
        except asyncio.TimeoutError:
            causes = [c for c, _, _ in log if c is not None] + ["deadline"]
            raise LLMError(
                f"{'chat ' if path == '/chat/completions' else ''}completion at {redact_url(self.base_url)} did not "
                f"finish within the {self.deadline:g} s deadline (retries included)",
                cause="deadline", attempts=len(log) + 1, causes=causes,
                log=[*log, ("deadline", log[-1][2] if log else t_start, time.time())],
            ) from None

    async def _with_retries(
        self, http: Any, body: dict[str, Any], t_start: float, log: list[tuple[str | None, float, float]],
        path: str = "/chat/completions",
    ) -> ChatResult:
        causes: list[str] = []
        p_tok = c_tok = 0
        any_usage = False
        attempt = 0
        while True:
            attempt += 1
            assert self._sem is not None
            async with self._sem:
                t_a = time.time()
                # (the chat path keeps _attempt's two-argument form: tests wrap it to count calls)
                outcome = await (self._attempt(http, body) if path == "/chat/completions" else
                                 self._attempt(http, body, path))
                log.append((None if isinstance(outcome, _Reply) else outcome.cause, t_a, time.time()))
            if isinstance(outcome, _Reply):
                if outcome.usage is not None:
                    any_usage = True
                    p_tok += outcome.usage[0]
                    c_tok += outcome.usage[1]
                return ChatResult(
                    text=self.scrub(outcome.text),  # an endpoint may echo the Authorization header
                    prompt_tokens=p_tok,
                    completion_tokens=c_tok,
                    finish_reason=self._field(outcome.finish_reason),  # stored in traces: scrubbed, short
                    t_start=t_start,
                    t_end=time.time(),
                    attempts=attempt,
                    errors=tuple(causes),
                    usage_reported=any_usage,
                    model=self._field(outcome.model),
                    raw_usage=outcome.raw_usage,
                    mean_logprob=outcome.mean_logprob,
                    log=tuple(log),
                    token_logprobs=outcome.token_logprobs,
                    top_logprobs=outcome.top_logprobs,
                )
            causes.append(outcome.cause)
            if outcome.usage is not None:  # e.g. a malformed-but-usage-bearing body
                any_usage = True
                p_tok += outcome.usage[0]
                c_tok += outcome.usage[1]
            if outcome.cause not in RETRYABLE or attempt > self.max_retries:
                tail = "" if outcome.cause not in RETRYABLE else f" after {attempt} attempt(s)"
                raise LLMError(
                    f"chat completion at {redact_url(self.base_url)} failed{tail}: "
                    f"{outcome.cause}: {self.scrub(outcome.detail)}",
                    cause=outcome.cause,
                    attempts=attempt,
                    causes=causes,
                    log=log,
                )
            delay = backoff_delay(attempt, base=self.backoff_base, cap=self.backoff_max)
            if outcome.retry_after is not None:
                delay = max(delay, min(outcome.retry_after, self.retry_after_max))
            _logger.debug(  # one line per retry is noise (78 lines for a wrong URL); the caller sums them up
                "chat completion at %s: %s (attempt %d/%d), retrying in %.2f s",
                redact_url(self.base_url), outcome.cause, attempt, self.max_retries + 1, delay,
            )
            await asyncio.sleep(delay)

    async def _attempt(self, http: Any, body: dict[str, Any], path: str = "/chat/completions") -> _Reply | _Failure:
        httpx = _httpx()
        url = f"{self.base_url}{path}"
        try:
            resp = await http.post(url, json=body, params=self.params or None)
        except httpx.TimeoutException as exc:
            return _Failure("timeout", type(exc).__name__)
        except httpx.ConnectError as exc:
            return _Failure("connect", f"{type(exc).__name__}: cannot connect (is the server running?)")
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            return _Failure("disconnect", f"{type(exc).__name__}: connection closed by the server")
        except httpx.TransportError as exc:
            return _Failure("connect", type(exc).__name__)
        status = resp.status_code
        if 300 <= status < 400:
            where = resp.headers.get("location") or ""
            target = str(resp.url.join(where)) if where else ""
            same = target.rstrip("/") == str(resp.url).rstrip("/")
            what = "a redirect loop (it redirects to itself)" if same else (
                f"a redirect to {redact_url(target)}" if target else "a redirect without a Location")
            return _Failure("redirect", f"HTTP {status}: {what}; redirects are not followed: give the final API "
                                        "root as --base-url (ending in /v1)")
        if status == 429:
            return _Failure("http_429", f"HTTP 429 {_snippet(resp.text)}", retry_after=_retry_after(resp))
        if status >= 500:
            return _Failure("http_5xx", f"HTTP {status} {_snippet(resp.text)}", retry_after=_retry_after(resp))
        if status >= 400:
            hint = " (check the API key's environment variable)" if status in (401, 403) else ""
            hint = " (check --model and --base-url, which should end in /v1)" if status == 404 else hint
            return _Failure("http_4xx", f"HTTP {status}{hint} {_snippet(resp.text)}")
        try:
            data = json.loads(resp.content)
        except (ValueError, UnicodeDecodeError):
            return _Failure("malformed_json", f"body is not JSON: {_snippet(resp.text)}")
        except RecursionError:  # a deeply nested body: refused, not a crash
            return _Failure("malformed_json", "body is nested too deeply to be a chat completion")
        return _parse_completion(data)


def _retry_after(resp: Any) -> float | None:
    value = resp.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _snippet(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "…"
