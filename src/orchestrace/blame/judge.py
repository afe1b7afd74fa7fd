"""An LLM judge of failed runs: which agent made the decisive error, and at which step.

The three protocols of the Who&When benchmark (Zhang et al., ICML 2025, "Which Agent Causes
Task Failures and When?"), asked of any OpenAI-compatible chat endpoint:

=================  =================================================================  ==========
protocol           what the model is asked                                            calls
=================  =================================================================  ==========
``all-at-once``    the whole transcript → ``Agent: <name>`` / ``Step: <number>``       1
``step-by-step``   steps 0..i → "is step i the decisive error?"; stops at the first    ≤ N
                   yes (the agent is that step's speaker)
``binary-search``  steps lo..hi → "is it in lo..mid (A) or mid+1..hi (B)?"; halves     ⌈log₂ N⌉
                   the range down to one step (the agent is its speaker)
=================  =================================================================  ==========

Input: a :class:`~orchestrace.Trace` imported from a chat transcript with its text
(``orchestrace import chat FILE --content keep``). A *step* is a turn of the transcript (its
index in the source list, as the Who&When ``mistake_step`` counts); the *team* is the set of
speakers. Nothing the importer keeps as a label (``Event.error``, ``meta.source_fields``
other than the task's ``ground_truth``) is ever shown to the model.

Fitting the context: the transcript is rendered in ``context_tokens`` (minus the answer's
``max_tokens`` and the instructions) at ``chars_per_token`` characters per token. Long turns
are cut visibly, head + tail around ``[… N chars cut …]``, with the room shared fairly (short
turns whole, long ones at a common cap); when even that does not fit, middle turns are
omitted (``[steps a–b omitted to fit]``). The :class:`Verdict` lists every cut
(:attr:`Verdict.truncated`). Every prompt shows each turn at the same cut, computed once for
the whole transcript, and the ground truth comes after the steps, so a server that caches
prompt prefixes (llama.cpp) reads the transcript about once per run, whatever the protocol
(``JudgeConfig(reuse_cuts=False)``: binary search re-fits each narrower range into the
whole budget instead — more text per turn, more tokens read). A server that still says the prompt is too
long is asked again with a 40 % smaller budget (twice at most; noted).

Replies are parsed leniently: the agent's name is matched to the team (exact, then
case/punctuation-insensitive, then by containment, then :mod:`difflib`), a step number
outside the transcript is clamped (noted). A reply that names neither is a stated "no
verdict" that carries the raw reply — never an exception.

The endpoint is anything with ``async chat(messages, *, max_tokens, temperature)`` returning
an object with ``text``, ``prompt_tokens`` and ``completion_tokens`` —
:class:`orchestrace.llm.client.ChatClient` (retries, timeouts, secret handling) in practice.

>>> import asyncio
>>> from orchestrace.importers.chat import from_doc
>>> turns = [{"name": "Planner", "content": "Plan: add 2 and 2."},
...          {"name": "Coder", "content": "print(2 + 3)"},
...          {"name": "Checker", "content": "5. TERMINATE"}]
>>> trace = from_doc({"history": turns, "question": "2 + 2?"}, "run.json", content="keep")[0][0]
>>> class Canned:  # a stand-in endpoint that always gives the same reply
...     async def chat(self, messages, *, max_tokens, temperature):
...         return type("R", (), {"text": "Agent: coder\\nStep: 1", "prompt_tokens": 0, "completion_tokens": 0})()
>>> v = judge(trace, Canned(), JudgeConfig(protocol="all-at-once"))
>>> (v.agent, v.step, v.calls)
('Coder', 1, 1)
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.trace import Trace
from ..errors import ConfigError, LLMError
from ._replies import match_agent, parse_half, parse_verdict, parse_yes_no
from ._transcript import (
    _MIN_CAP,
    Step,
    Transcript,
    Truncation,
    _header,
    _label,
    _render,
    plan_caps,
    transcript_of,
    truncate,
)

__all__ = [
    "PROTOCOLS",
    "Agreement",
    "Attribution",
    "ChatEndpoint",
    "JudgeConfig",
    "Step",
    "Transcript",
    "Truncation",
    "Verdict",
    "ajudge",
    "judge",
    "match_agent",
    "parse_half",
    "parse_verdict",
    "parse_yes_no",
    "plan_caps",
    "second_opinion",
    "transcript_of",
    "truncate",
]

#: The judge protocols, in the paper's order.
PROTOCOLS: tuple[str, ...] = ("all-at-once", "step-by-step", "binary-search")

_SYSTEM = ("You judge a failed multi-agent run. The team did not solve the task. Find the decisive "
           "error: the earliest step whose mistake made the task fail.")
#: Tokens reserved for the instructions, the question and the chat template around the steps.
_OVERHEAD_TOKENS = 160
_SHRINK = 0.6  # the budget factor when the server says the prompt does not fit (and not by how much)
_FIT_TRIES = 4  # one ask, and up to three asks with a smaller budget
_SIZES = re.compile(r"(\d+) tokens\).*?\((\d+) tokens\)")


def _shrink(message: str, max_tokens: int) -> float:
    """The budget factor for a context overflow; from the sizes when the server gives them (llama.cpp does).

    >>> round(_shrink("request (1208 tokens) exceeds the available context size (1024 tokens)", 48), 3)
    0.727
    >>> _shrink("maximum context length exceeded", 48)
    0.6
    """
    m = _SIZES.search(message)
    if m and int(m.group(1)) > 0:
        asked, room = int(m.group(1)), int(m.group(2)) - max_tokens
        return min(max(0.9 * room / asked, 0.1), 0.95)
    return _SHRINK


# -- the endpoint and the results -----------------------------------------------------------------
class ChatEndpoint(Protocol):
    """What the judge needs of an endpoint (:class:`orchestrace.llm.client.ChatClient` has it)."""

    async def chat(self, messages: Sequence[Mapping[str, str]], *, max_tokens: int,
                   temperature: float) -> Any: ...


class Attribution(Protocol):
    """A blame: an agent, a step and a confidence (each may be None). :class:`Verdict` is one."""

    @property
    def agent(self) -> str | None: ...

    @property
    def step(self) -> int | None: ...

    @property
    def confidence(self) -> float | None: ...


@dataclass(frozen=True)
class JudgeConfig:
    """How to judge. Cross-field rules are checked here (a :class:`~orchestrace.errors.ConfigError` says how to fix).

    >>> JudgeConfig(protocol="binary-search").context_tokens
    4096
    >>> JudgeConfig(protocol="vote")
    Traceback (most recent call last):
    ...
    orchestrace.errors.ConfigError: unknown judge protocol 'vote'; choose one of all-at-once, step-by-step, binary-search
    """

    protocol: str = "all-at-once"  #: one of :data:`PROTOCOLS`
    context_tokens: int = 4096  #: the model's context per request (a llama.cpp slot: ctx / parallel)
    max_tokens: int = 48  #: the answer's length limit (yes/no questions use at most 3, A/B ones 16)
    chars_per_token: float = 3.0  #: characters per token used to budget the prompt (lower = safer)
    with_ground_truth: bool = False  #: show the task's correct answer to the model
    max_calls: int = 400  #: step-by-step: stop (no verdict) after this many calls
    #: binary search: show each narrower range at the whole transcript's cuts (cheap with a prompt
    #: cache); False re-fits each range into the whole budget (more text per turn, more tokens read)
    reuse_cuts: bool = True
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            from ..errors import did_you_mean

            raise ConfigError(f"unknown judge protocol {self.protocol!r}; choose one of {', '.join(PROTOCOLS)}"
                              + did_you_mean(self.protocol, PROTOCOLS, prefix="; "))
        if self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.context_tokens < _OVERHEAD_TOKENS + self.max_tokens + 64:
            raise ConfigError(f"context_tokens {self.context_tokens} leaves no room for the transcript: it must be "
                              f">= {_OVERHEAD_TOKENS + self.max_tokens + 64} with max_tokens {self.max_tokens}")
        if not 0.5 <= self.chars_per_token <= 10:
            raise ConfigError(f"chars_per_token must be in [0.5, 10], got {self.chars_per_token}")
        if self.max_calls < 1:
            raise ConfigError(f"max_calls must be >= 1, got {self.max_calls}")


@dataclass(frozen=True)
class Verdict:
    """The judge's answer for one run.

    ``agent`` / ``step`` are None when the model gave none (``ok`` is False: "no verdict",
    ``reason`` says why and ``raw`` holds the replies). ``confidence`` is always None: the
    protocols yield no calibrated confidence. ``notes`` lists every liberty taken in parsing
    (a fuzzy agent match, a clamped step) and every retry with a smaller budget.
    """

    trace_id: str
    protocol: str
    agent: str | None
    step: int | None
    reason: str
    raw: tuple[str, ...] = ()
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    truncated: tuple[Truncation, ...] = ()
    notes: tuple[str, ...] = ()
    confidence: float | None = None
    with_ground_truth: bool = False

    @property
    def ok(self) -> bool:
        """Whether the judge named an agent or a step."""
        return self.agent is not None or self.step is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``truncated`` as ``[{step, chars, shown}]``)."""
        return {"trace_id": self.trace_id, "protocol": self.protocol, "verdict": self.ok, "agent": self.agent,
                "step": self.step, "confidence": self.confidence, "reason": self.reason, "raw": list(self.raw),
                "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": round(self.seconds, 3),
                "with_ground_truth": self.with_ground_truth,
                "truncated": [{"step": t.step, "chars": t.chars, "shown": t.shown} for t in self.truncated],
                "notes": list(self.notes)}

    def truncation_summary(self) -> str:
        """One line on what the widest prompt did not show ("" when it showed everything)."""
        if not self.truncated:
            return ""
        cut = [t for t in self.truncated if t.shown > 0]
        gone = [t for t in self.truncated if t.shown == 0]
        hidden = sum(t.chars - t.shown for t in self.truncated)
        total = ", ".join(
            part for part in (f"{len(cut)} turn(s) cut head+tail (steps {_ranges([t.step for t in cut])})" if cut else "",
                              f"{len(gone)} omitted (steps {_ranges([t.step for t in gone])})" if gone else "") if part)
        return f"{total}; {hidden:,} characters not shown"


# -- the protocols ----------------------------------------------------------------------------------
@dataclass
class _Run:
    """One judging run: the transcript, the budget, the endpoint and what was spent."""

    tx: Transcript
    chat: ChatEndpoint
    cfg: JudgeConfig
    budget: int
    raw: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: int = 0
    p_tok: int = 0
    c_tok: int = 0
    shown: dict[int, Truncation] = field(default_factory=dict)
    _full: list[int] | None = None

    def full_caps(self) -> list[int]:
        """The cut of every turn when the whole transcript is shown (computed once per budget)."""
        if self._full is None:
            top = _header(self.tx, self.budget)
            self._full = plan_caps([len(s.text) for s in self.tx.steps], max(self.budget - len(top), 0),
                                   label=_label(self.tx))
        return self._full

    def render(self, idx: Sequence[int], *, stable: bool = False) -> str:
        """Steps ``idx``; ``stable``: at the caps of the whole transcript (the prompt prefix stays the same)."""
        caps = None
        if stable:
            caps = [self.full_caps()[i] for i in idx]
            if caps and caps[-1] == 0:  # the step asked about is always shown
                caps[-1] = _MIN_CAP
        body, cuts = _render(self.tx, idx, self.budget, self.cfg.with_ground_truth, caps)
        for c in cuts:
            if c.step not in self.shown or c.shown < self.shown[c.step].shown:
                self.shown[c.step] = c
        return body

    async def ask(self, idx: Sequence[int], question: str, max_tokens: int, *, stable: bool = False) -> str:
        """One question about steps ``idx``; a context overflow is retried with a smaller budget."""
        for attempt in range(_FIT_TRIES):
            msgs = [{"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": self.render(idx, stable=stable) + "\n\n" + question}]
            try:
                r = await self.chat.chat(msgs, max_tokens=max_tokens, temperature=self.cfg.temperature)
            except LLMError as exc:
                if attempt < _FIT_TRIES - 1 and exc.cause == "http_4xx" and "context" in str(exc).lower():
                    self.budget = int(self.budget * _shrink(str(exc), max_tokens))
                    self._full = None
                    self.shown.clear()
                    self.notes.append(f"the endpoint said the prompt is too long: transcript budget cut to "
                                      f"{self.budget:,} characters and asked again")
                    continue
                raise
            self.calls += 1
            self.p_tok += int(getattr(r, "prompt_tokens", 0) or 0)
            self.c_tok += int(getattr(r, "completion_tokens", 0) or 0)
            text = str(getattr(r, "text", "") or "")
            self.raw.append(text)
            return text
        raise AssertionError("unreachable")  # pragma: no cover (the last try re-raises)


async def _all_at_once(run: _Run) -> tuple[str | None, int | None, str]:
    tx = run.tx
    q = ("Which agent made the decisive error, and at which step? Reply in exactly this format:\n"
         "Agent: <agent name>\nStep: <step number>")
    reply = await run.ask(range(len(tx.steps)), q, run.cfg.max_tokens, stable=True)
    agent, step, notes = parse_verdict(reply, tx.team, [s.index for s in tx.steps])
    run.notes.extend(notes)
    if agent is None and step is None:
        return None, None, "no verdict: the reply names no agent of the team and no step"
    return agent, step, "named by the model (all at once)"


async def _step_by_step(run: _Run) -> tuple[str | None, int | None, str]:
    tx = run.tx
    unclear = 0
    for i, s in enumerate(tx.steps):
        if run.calls >= run.cfg.max_calls:
            return None, None, f"no verdict: stopped after max_calls={run.cfg.max_calls} without a yes"
        q = (f"Consider step {s.index} ({s.agent}) only. Is step {s.index} the decisive error that made "
             "the task fail? Reply Yes or No.\nAnswer:")
        said = parse_yes_no(await run.ask(range(i + 1), q, min(run.cfg.max_tokens, 3), stable=True))
        unclear += said is None
        if said:
            if unclear:
                run.notes.append(f"{unclear} reply(ies) were neither yes nor no: read as no")
            return s.agent, s.index, f"the first step the model called the decisive error ({i + 1} call(s))"
    if unclear == len(tx.steps):
        return None, None, "no verdict: no reply was a yes or a no"
    if unclear:
        run.notes.append(f"{unclear} reply(ies) were neither yes nor no: read as no")
    return None, None, f"no verdict: the model said no at every one of the {len(tx.steps)} steps"


async def _binary_search(run: _Run) -> tuple[str | None, int | None, str]:
    tx = run.tx
    lo, hi = 0, len(tx.steps) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        a, m, m1, b = tx.steps[lo].index, tx.steps[mid].index, tx.steps[mid + 1].index, tx.steps[hi].index
        q = (f"Question: is the decisive error in steps {a}–{m} or in steps {m1}–{b}?\n"
             f"Reply with 'A' for steps {a}–{m} or 'B' for steps {m1}–{b}.\nAnswer:")
        # the whole transcript's cuts, unless they omit turns of this range (then it is fitted on its own)
        stable = run.cfg.reuse_cuts and all(run.full_caps()[i] > 0 or not tx.steps[i].text for i in range(lo, hi + 1))
        reply = await run.ask(range(lo, hi + 1), q, min(run.cfg.max_tokens, 16), stable=stable)
        half = parse_half(reply, ((a, m), (m1, b)))
        if half is None:
            return None, None, (f"no verdict: the reply to the question on steps {a}–{b} is neither A nor B "
                                f"(after {run.calls} call(s))")
        lo, hi = (lo, mid) if half == "A" else (mid + 1, hi)
    s = tx.steps[lo]
    return s.agent, s.index, f"the step binary search narrowed down to ({run.calls} call(s))"


_PROTOCOL_FN = {"all-at-once": _all_at_once, "step-by-step": _step_by_step, "binary-search": _binary_search}


async def ajudge(run: Trace | Transcript, chat: ChatEndpoint, config: JudgeConfig | None = None) -> Verdict:
    """The judge's :class:`Verdict` on one failed run (``run`` a trace or a :func:`transcript_of`).

    Raises :class:`~orchestrace.errors.LLMError` when the endpoint fails for good,
    :class:`~orchestrace.errors.ConfigError` when ``with_ground_truth`` is asked and the run
    has none, :class:`~orchestrace.errors.TraceError` when the trace has no text.
    """
    cfg = config or JudgeConfig()
    tx = run if isinstance(run, Transcript) else transcript_of(run)
    if cfg.with_ground_truth and tx.ground_truth is None:
        raise ConfigError(f"run {tx.trace_id!r} records no ground truth (meta.source_fields.ground_truth); "
                          "give it with --ground-truth TEXT, or judge without --with-ground-truth")
    budget = int((cfg.context_tokens - cfg.max_tokens - _OVERHEAD_TOKENS) * cfg.chars_per_token)
    state = _Run(tx, chat, cfg, budget)
    t0 = time.perf_counter()
    agent, step, reason = await _PROTOCOL_FN[cfg.protocol](state)
    return Verdict(tx.trace_id, cfg.protocol, agent, step, reason, tuple(state.raw), state.calls, state.p_tok,
                   state.c_tok, time.perf_counter() - t0, tuple(sorted(state.shown.values(), key=lambda t: t.step)),
                   tuple(state.notes),
                   with_ground_truth=cfg.with_ground_truth)


def judge(run: Trace | Transcript, chat: ChatEndpoint, config: JudgeConfig | None = None) -> Verdict:
    """:func:`ajudge`, run to completion in a new event loop (see the module docstring's example)."""
    return asyncio.run(ajudge(run, chat, config))


# -- a second opinion -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Agreement:
    """How two blames compare: ``agent`` / ``step`` are None when either side gives none."""

    agent: bool | None
    step: bool | None
    step_gap: int | None
    summary: str


def second_opinion(blame: Attribution, verdict: Attribution) -> Agreement:
    """Compare a blame method's result with the judge's (any two :class:`Attribution` objects).

    >>> from types import SimpleNamespace as NS
    >>> a = second_opinion(NS(agent="Coder", step=4, confidence=0.8), NS(agent="Coder", step=6, confidence=None))
    >>> a.agent, a.step, a.step_gap
    (True, False, 2)
    >>> a.summary
    'agent agrees (Coder); step differs (blame 4, judge 6, 2 apart); blame confidence 0.80'
    """
    ag = None if blame.agent is None or verdict.agent is None else blame.agent == verdict.agent
    st = None if blame.step is None or verdict.step is None else blame.step == verdict.step
    gap = None if st is None else abs(int(blame.step) - int(verdict.step))  # type: ignore[arg-type]
    parts = [
        "agent: one side has none" if ag is None else
        (f"agent agrees ({blame.agent})" if ag else f"agent differs (blame {blame.agent}, judge {verdict.agent})"),
        "step: one side has none" if st is None else
        (f"step agrees ({blame.step})" if st else f"step differs (blame {blame.step}, judge {verdict.step}, {gap} apart)"),
    ]
    if blame.confidence is not None:
        parts.append(f"blame confidence {blame.confidence:.2f}")
    return Agreement(ag, st, gap, "; ".join(parts))


def _ranges(xs: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1–3, 7"``."""
    out: list[str] = []
    xs = sorted(xs)
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}–{xs[j]}")
        i = j + 1
    return ", ".join(out)
