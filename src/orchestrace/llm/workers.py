"""LLM-backed sub-agents: concurrent attempts on verifiable subtasks through a chat endpoint.

:class:`LLMWorkers` turns an *attempt request* (a :class:`~orchestrace.llm.tasks.Task`, a
subtask id, its dependencies' answers, the O3 communication mode and a worker profile) into
an :class:`AttemptResult` — ``success / answer / tokens / latency / confidence / error`` —
by one chat completion. Many requests run **concurrently** on one asyncio event loop (a
background thread owned by the pool, so synchronous callers such as a Gymnasium ``step``
get real parallelism), bounded by the client's concurrency limit. A failed call never
raises out of :meth:`LLMWorkers.attempt_many`: it comes back as a result with ``error``
set to its cause (see :data:`~orchestrace.llm.client.CAUSES`) and ``success=False``.

Profiles map the environment's worker profiles onto call settings (:class:`LLMProfile`):
with one model, ``cheap`` samples at a higher temperature with a short budget, ``strong``
is greedy with a longer budget; give ``model=`` per profile to route profiles to different
models of the same endpoint.

Confidence is ``exp(mean token log-probability)`` of the reply when the server returns
log-probabilities (``logprobs=True``), else ``default_confidence``.

Times are wall-clock ``time.time()`` seconds of each call (retries included).
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ConfigError
from .client import ChatClient, LLMError, redact_url
from .tasks import Task

__all__ = [
    "DEFAULT_PROFILES",
    "AttemptRequest",
    "AttemptResult",
    "LLMProfile",
    "LLMWorkers",
    "VerifyRequest",
]

T = TypeVar("T")


@dataclass(frozen=True)
class LLMProfile:
    """How one worker profile calls the model: ``temperature``, ``max_tokens``, optional ``model``."""

    name: str
    temperature: float = 0.0
    max_tokens: int = 32
    model: str | None = None


#: Default mapping of the environment's profile names (unknown names use ``"strong"``).
DEFAULT_PROFILES: Mapping[str, LLMProfile] = {
    "cheap": LLMProfile("cheap", temperature=0.8, max_tokens=16),
    "strong": LLMProfile("strong", temperature=0.0, max_tokens=48),
    "spec_retrieve": LLMProfile("spec_retrieve", temperature=0.3, max_tokens=32),
    "spec_reason": LLMProfile("spec_reason", temperature=0.3, max_tokens=32),
    "spec_code": LLMProfile("spec_code", temperature=0.3, max_tokens=32),
    "verifier": LLMProfile("verifier", temperature=0.0, max_tokens=8),
}


@dataclass(frozen=True)
class AttemptRequest:
    """One sub-agent attempt: solve ``task.subtask(sid)`` given ``dep_answers`` and O3 mode ``comm``.

    ``sid=None`` asks the whole task at once (no decomposition).
    """

    task: Task
    sid: str | None
    dep_answers: Mapping[str, str | None] = field(default_factory=dict)
    comm: str = "summary"
    profile: str = "strong"
    seed: int | None = None


@dataclass(frozen=True)
class VerifyRequest:
    """A verifier's vote: is ``answer`` right for subtask ``sid`` (given ``dep_answers``)?"""

    task: Task
    sid: str
    answer: str | None
    dep_answers: Mapping[str, str | None] = field(default_factory=dict)
    profile: str = "verifier"


@dataclass(frozen=True)
class AttemptResult:
    """What one sub-agent attempt produced.

    ``success``: the parsed answer equals the subtask's globally correct answer;
    ``locally_correct``: it equals the answer that is right for the inputs it was given
    (None when an input was missing); ``answer``: the parsed canonical answer (None when
    unparseable or on error); ``text``: the raw reply; ``tokens_in``/``tokens_out``: the
    server's usage report; ``t_start``/``t_end``: wall-clock seconds; ``confidence`` in
    (0, 1]; ``error``: None or the failure cause (``empty_completion``, ``unparseable``, or
    a client cause such as ``timeout``); ``retries``: causes of attempts that were retried;
    ``detail``: a human-readable error message (no secrets); ``calls``: ``(cause, t_start,
    t_end)`` of each HTTP attempt (cause None for the one that answered). For a verifier,
    ``answer`` is ``"yes"``/``"no"`` and ``success`` says whether the vote was right.
    """

    success: bool
    answer: str | None
    text: str
    tokens_in: int
    tokens_out: int
    t_start: float
    t_end: float
    confidence: float
    error: str | None = None
    retries: tuple[str, ...] = ()
    detail: str | None = None
    locally_correct: bool | None = None
    usage_reported: bool = True
    model: str | None = None
    profile: str = ""
    calls: tuple[tuple[str | None, float, float], ...] = ()

    @property
    def latency_s(self) -> float:
        """``t_end - t_start``."""
        return self.t_end - self.t_start

    @property
    def tokens(self) -> int:
        """``tokens_in + tokens_out``."""
        return self.tokens_in + self.tokens_out


class _LoopThread:
    """A private asyncio event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="orchestrace-llm", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result(timeout)
        except FutureTimeout:
            fut.cancel()
            raise

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


class LLMWorkers:
    """A pool of LLM sub-agents on one OpenAI-compatible endpoint.

    ``base_url`` ends in ``/v1``; the API key comes from ``api_key_env`` (default
    ``ORCHESTRACE_API_KEY``, else ``OPENAI_API_KEY``) and is never shown. ``max_concurrency``
    bounds requests in flight; ``timeout``/``deadline``/``max_retries`` are per call (see
    :class:`~orchestrace.llm.client.ChatClient`). Use as a context manager or call
    :meth:`close`.

    >>> w = LLMWorkers("http://127.0.0.1:9/v1", "m", api_key_env="ORCHESTRACE_DOCTEST_NO_KEY")
    >>> w.profile("cheap").temperature, w.profile("unknown-profile").name
    (0.8, 'strong')
    >>> w.close()
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        profiles: Mapping[str, LLMProfile] | None = None,
        max_concurrency: int = 4,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        deadline: float = 180.0,
        max_retries: int = 3,
        backoff_base: float = 0.25,
        backoff_max: float = 4.0,
        logprobs: bool = True,
        default_confidence: float = 0.5,
        max_tokens: int | None = None,
    ) -> None:
        if not 0.0 < default_confidence <= 1.0:
            raise ConfigError(f"default_confidence must be in (0, 1], got {default_confidence}")
        if max_tokens is not None and max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
        self.client = ChatClient(
            base_url, model, api_key_env=api_key_env, timeout=timeout, connect_timeout=connect_timeout,
            deadline=deadline, max_retries=max_retries, backoff_base=backoff_base, backoff_max=backoff_max,
            max_concurrency=max_concurrency,
        )
        self.model = model
        self.profiles = dict(profiles if profiles is not None else DEFAULT_PROFILES)
        self.logprobs = logprobs
        self.default_confidence = float(default_confidence)
        self.max_tokens = max_tokens
        self._loop: _LoopThread | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMWorkers(base_url={redact_url(self.client.base_url)!r}, model={self.model!r}, profiles={sorted(self.profiles)})"

    def profile(self, name: str) -> LLMProfile:
        """The call settings of profile ``name`` (``"strong"``'s for unknown names)."""
        return self.profiles.get(name) or self.profiles.get("strong") or LLMProfile(name)

    # -- async API -------------------------------------------------------------------------
    async def attempt(self, req: AttemptRequest) -> AttemptResult:
        """Run one attempt (never raises for endpoint failures: see :class:`AttemptResult`)."""
        prof = self.profile(req.profile)
        task, sid = req.task, req.sid
        expected: str | None
        if sid is None:
            messages, truth, expected = task.whole_prompt(), task.answer, task.answer
        else:
            messages = task.prompt(sid, req.dep_answers, req.comm)
            truth = task.subtask(sid).answer
            expected = truth if req.comm == "none" else task.expected(sid, req.dep_answers)
        return await self._call(messages, prof, req.seed, lambda text: task.parse(sid, text), truth, expected)

    async def verify(self, req: VerifyRequest) -> AttemptResult:
        """One verifier vote: ``answer`` is ``"yes"``/``"no"``; ``success`` = the vote is right."""
        prof = self.profile(req.profile)
        ask = req.task.prompt(req.sid, req.dep_answers, "summary")
        ask[-1] = {
            "role": "user",
            "content": f"{ask[-1]['content']}\n\nProposed answer: {req.answer if req.answer is not None else 'none'}."
                       " Is the proposed answer correct? Reply yes or no.",
        }
        right = req.answer is not None and req.answer == req.task.subtask(req.sid).answer
        truth = "yes" if right else "no"
        return await self._call(ask, prof, None, _parse_yes_no, truth, truth)

    async def attempt_all(self, reqs: Sequence[AttemptRequest | VerifyRequest]) -> list[AttemptResult]:
        """Run all requests concurrently; results in request order."""
        return list(await asyncio.gather(*(
            self.verify(r) if isinstance(r, VerifyRequest) else self.attempt(r) for r in reqs
        )))

    async def _call(self, messages: list[dict[str, str]], prof: LLMProfile, seed: int | None,
                    parse: Any, truth: str, expected: str | None) -> AttemptResult:
        import time

        max_tokens = self.max_tokens if self.max_tokens is not None else prof.max_tokens
        extra = {"model": prof.model} if prof.model else None
        t0 = time.time()
        try:
            r = await self.client.chat(messages, max_tokens=max_tokens, temperature=prof.temperature,
                                       seed=seed, logprobs=self.logprobs, extra=extra)
        except LLMError as exc:
            return AttemptResult(
                success=False, answer=None, text="", tokens_in=0, tokens_out=0, t_start=t0, t_end=time.time(),
                confidence=0.0, error=exc.cause, retries=exc.causes[:-1], detail=self.client.scrub(str(exc)),
                usage_reported=False, profile=prof.name, model=prof.model or self.model, calls=exc.log,
            )
        answer = parse(r.text) if r.text.strip() else None
        error = None
        if not r.text.strip():
            error = "empty_completion"
        elif answer is None:
            error = "unparseable"
        conf = self.default_confidence if r.mean_logprob is None else math.exp(min(0.0, r.mean_logprob))
        return AttemptResult(
            success=answer is not None and answer == truth,
            answer=answer, text=r.text, tokens_in=r.prompt_tokens, tokens_out=r.completion_tokens,
            t_start=r.t_start, t_end=r.t_end, confidence=conf if error is None else 0.0, error=error,
            retries=r.errors,
            detail=None if error is None else f"{error}: finish_reason={r.finish_reason}",
            locally_correct=None if expected is None else answer == expected,
            usage_reported=r.usage_reported, model=r.model or prof.model or self.model, profile=prof.name,
            calls=r.log,
        )

    # -- sync API (for Gymnasium steps and scripts) ----------------------------------------
    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float) -> T:
        """Run ``coro`` on the pool's background event loop and wait (at most ``timeout`` s)."""
        with self._lock:
            if self._loop is None:
                self._loop = _LoopThread()
            loop = self._loop
        return loop.run(coro, timeout)

    def attempt_many(self, reqs: Sequence[AttemptRequest | VerifyRequest]) -> list[AttemptResult]:
        """Synchronous :meth:`attempt_all` on the pool's background event loop."""
        if not reqs:
            return []
        # Each call is bounded by the client's deadline; the batch waits for at most that
        # (times the waves the concurrency limit forces) plus a margin.
        waves = math.ceil(len(reqs) / self.client.max_concurrency)
        return self.run(self.attempt_all(reqs), timeout=self.client.deadline * waves + 10.0)

    def close(self) -> None:
        """Close connections and stop the background loop."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None:
            try:
                loop.run(self.client.aclose(), timeout=5.0)
            finally:
                loop.close()

    def __enter__(self) -> LLMWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parse_yes_no(text: str) -> str | None:
    """``"yes"``/``"no"`` from a verifier's reply (the first of the two words), or None.

    >>> _parse_yes_no("Yes, it is."), _parse_yes_no("No."), _parse_yes_no("maybe")
    ('yes', 'no', None)
    """
    import re

    m = re.search(r"\b(yes|no|correct|incorrect|wrong)\b", text, re.I)
    if m is None:
        return None
    w = m.group(1).lower()
    return "yes" if w in ("yes", "correct") else "no"
