"""Real-time LLM episodes: a fixed orchestration plan run on real sub-agents, with its trace.

:func:`run_episode` executes one :class:`~orchestrace.llm.tasks.Task` with a :class:`Plan`
on :class:`~orchestrace.llm.workers.LLMWorkers`. Subtasks run as a *dataflow*: each starts as
soon as its dependencies have an aggregate answer, so independent subtasks and the
``fanout`` sub-agents of one subtask run **concurrently** (asyncio; the trace's times are
the real wall-clock times of the HTTP calls, relative to the episode start).

Trace shape, per subtask ``s``::

    parents' aggregates ─causal─► O1 spawn:f ─► O2 delegate:p ─► [O3 communicate:m]
        ─spawn─► spawn w ─message─► message (the prompt) ─causal─► tool_call llm.chat …
        ─return─► return w→orchestrator
    O4 aggregate:method ─causal─► aggregate(s) ◄─aggregate─ the returns it used
    root aggregate ─causal─► O5 stop

Every HTTP attempt is one ``tool_call`` event (tool ``llm.chat_completions``) with
``t``/``t_end``, the server's ``tokens_in``/``tokens_out``; a failed attempt has
``error: true`` and ``attrs.cause`` (``connect``, ``timeout``, ``disconnect``, ``http_429``,
``http_5xx``, ``malformed_json`` …), a bad reply (``empty_completion``, ``unparseable``)
marks the ``return`` as an error with its cause. Orchestrator decisions cost no tokens
(the plan is not an LLM), so ``trace.costs["tokens"]`` equals the sum of the server's usage
reports. The episode always ends with an O5 stop and an outcome; ``status`` says how it
went: ``ok``, ``degraded`` (some calls failed) or ``failed`` (the root has no answer).

>>> Plan(fanout=3).name, PLANS["single"].decompose
('fanout3-majority', False)
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.builder import TraceBuilder
from ..core.trace import Outcome, Trace
from ..errors import ConfigError
from .tasks import Task
from .workers import AttemptRequest, AttemptResult, LLMWorkers

__all__ = ["PLANS", "EpisodeResult", "EpisodeTally", "Plan", "arun_episode", "run_episode", "run_episodes"]

_TOOL = "llm.chat_completions"
_AGG = ("majority", "best_of", "first")


@dataclass(frozen=True)
class Plan:
    """A fixed orchestration policy (a baseline orchestrator).

    ``fanout`` sub-agents per subtask (O1), delegated to ``profile`` (O2), told about
    dependencies by ``comm`` (O3: ``none``/``summary``/``full``), combined by ``aggregate``
    (O4: ``majority`` — the most common parsed answer, ties to the most confident;
    ``best_of`` — the most confident answer; ``first`` — the first answer to arrive);
    ``decompose=False`` asks the whole task of ``fanout`` agents instead of subtask by subtask.
    """

    fanout: int = 1
    profile: str = "strong"
    comm: str = "summary"
    aggregate: str = "majority"
    decompose: bool = True
    label: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.fanout <= 32:
            raise ConfigError(f"Plan.fanout must be in [1, 32], got {self.fanout}")
        if self.comm not in ("none", "summary", "full"):
            raise ConfigError(f"Plan.comm must be none, summary or full, got {self.comm!r}")
        if self.aggregate not in _AGG:
            raise ConfigError(f"Plan.aggregate must be one of {', '.join(_AGG)}, got {self.aggregate!r}")

    @property
    def name(self) -> str:
        """A short name (``label`` if given)."""
        if self.label:
            return self.label
        if not self.decompose:
            return f"whole{self.fanout}-{self.aggregate}"
        return f"fanout{self.fanout}-{self.aggregate}" + ("" if self.comm == "summary" else f"-{self.comm}")


#: Baseline orchestrators for LLM episodes.
PLANS: Mapping[str, Plan] = {
    "single": Plan(fanout=1, decompose=False, label="single"),
    "chain": Plan(fanout=1, label="chain"),
    "fanout3-majority": Plan(fanout=3),
    "fanout3-best": Plan(fanout=3, aggregate="best_of", label="fanout3-best"),
    "fanout3-none": Plan(fanout=3, comm="none", label="fanout3-none"),
}


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one real-time episode: the trace and its headline numbers."""

    trace: Trace
    success: bool
    status: str  # "ok" | "degraded" | "failed"
    answer: str | None
    answers: Mapping[str, str | None]
    tokens: int
    wall_clock_s: float
    calls: int
    failed_calls: int
    causes: Mapping[str, int] = field(default_factory=dict)
    results: tuple[AttemptResult, ...] = ()


class _Run:
    """Mutable state of one episode (single asyncio thread: no locks needed)."""

    def __init__(self, task: Task, plan: Plan, workers: LLMWorkers, trace_id: str) -> None:
        self.task, self.plan, self.workers = task, plan, workers
        self.t0 = time.time()
        self.b = TraceBuilder(trace_id, task_id=task.id, topology="centralized",
                              meta={"suite": task.suite, "plan": plan.name, "model": workers.model,
                                    "workers": "llm", "fanout": plan.fanout, "comm": plan.comm,
                                    "aggregate": plan.aggregate})
        self.last_decision: str | None = None
        self.last_t = 0.0
        self.agents = 0
        self.answers: dict[str, str | None] = {}
        self.agg_event: dict[str, str] = {}
        self.results: list[AttemptResult] = []

    def now(self) -> float:
        return max(self.last_t, time.time() - self.t0)

    def rel(self, t: float) -> float:
        return max(0.0, t - self.t0)

    def decide(self, kind: str, action: str, alternatives: list[str], after: list[str], **attrs: Any) -> str:
        t = self.now()
        deps = list(after) + ([self.last_decision] if self.last_decision else [])
        did = self.b.decide(kind, action=action, t=t, t_end=t, alternatives=alternatives, policy=self.plan.name,
                            after=list(dict.fromkeys(deps)), attrs=attrs or None)
        self.last_decision, self.last_t = did, t
        return did

    async def subtask(self, sid: str | None, deps_done: list[asyncio.Future[None]], parents: list[str]) -> None:
        for f in deps_done:
            await f
        task, plan = self.task, self.plan
        label = sid or "task"
        after = [self.agg_event[p] for p in parents if p in self.agg_event]
        fan_alts = [f"spawn:{k}" for k in range(1, max(plan.fanout, 3) + 1)]
        d = self.decide("spawn", f"spawn:{plan.fanout}", fan_alts, after, subtask=label)
        d = self.decide("delegate", f"delegate:{plan.profile}", [f"delegate:{p}" for p in sorted(self.workers.profiles)], [],
                        subtask=label)
        dep_answers = {p: self.answers.get(p) for p in parents}
        if parents:
            d = self.decide("communicate", f"communicate:{plan.comm}", ["communicate:none", "communicate:summary",
                            "communicate:full"], [], subtask=label)
        spawns: list[tuple[str, str]] = []
        for _ in range(plan.fanout):
            self.agents += 1
            w = f"w{self.agents}"
            t = self.now()
            sp = self.b.spawn(w, t=t, t_end=t, after=d, role=plan.profile, attrs={"subtask": label})
            msg_after = [sp] + (after if plan.comm != "none" else [])
            mid = self.b.message("orchestrator", w, t=t, t_end=t, after=msg_after,
                                 attrs={"subtask": label, "mode": plan.comm if parents else "task"})
            spawns.append((w, mid))
        reqs = [AttemptRequest(task, sid, dep_answers, plan.comm, plan.profile) for _ in spawns]
        results = await asyncio.gather(*(self.workers.attempt(r) for r in reqs))
        returns: list[tuple[str, AttemptResult]] = []
        for (w, mid), r in zip(spawns, results, strict=True):
            self.results.append(r)
            prev, prev_end = mid, self.rel(r.t_start)
            calls = r.calls or ((r.error, r.t_start, r.t_end),)
            for k, (cause, ts, te) in enumerate(calls):
                last = k == len(calls) - 1
                attrs: dict[str, Any] = {"subtask": label, "attempt": k + 1, "model": r.model}
                if cause is not None:
                    attrs["cause"] = cause
                tin = r.tokens_in if last and cause is None else 0
                tout = r.tokens_out if last and cause is None else 0
                t_call = max(self.rel(ts), prev_end if k else 0.0)
                prev_end = max(t_call, self.rel(te))
                cid = self.b.tool_call(w, _TOOL, t=t_call, t_end=prev_end, after=prev,
                                       role=plan.profile, tokens_in=tin, tokens_out=tout,
                                       error=True if cause is not None else None, attrs=attrs,
                                       content=r.text if last and cause is None else None)
                prev = cid
            t_ret = max(self.rel(r.t_end), prev_end)
            rattrs: dict[str, Any] = {"subtask": label, "answer": r.answer, "confidence": round(r.confidence, 6)}
            if r.error is not None:
                rattrs["cause"] = r.error
            if r.detail:
                rattrs["detail"] = r.detail
            rid = self.b.return_(w, t=t_ret, t_end=t_ret, after=prev, role=plan.profile,
                                 error=True if (r.error is not None or not r.success) else None,
                                 outcome=Outcome(success=r.success, verifier="exact"), attrs=rattrs)
            returns.append((rid, r))
            self.last_t = max(self.last_t, t_ret)
        answer, used = _aggregate(plan.aggregate, returns)
        od = self.decide("aggregate", f"aggregate:{plan.aggregate}", [f"aggregate:{m}" for m in _AGG], [],
                         subtask=label)
        t = self.now()
        truth = task.answer if sid is None else task.subtask(sid).answer
        aid = self.b.aggregate(t=t, t_end=t, after=[od, *used], error=True if answer != truth else None,
                               outcome=Outcome(success=answer == truth, verifier="exact"),
                               attrs={"subtask": label, "answer": answer, "method": plan.aggregate})
        self.answers[label] = answer
        self.agg_event[label] = aid


def _aggregate(method: str, returns: list[tuple[str, AttemptResult]]) -> tuple[str | None, list[str]]:
    """The aggregate answer and the return-event ids that support it."""
    ok = [(rid, r) for rid, r in returns if r.answer is not None]
    if not ok:
        return None, []
    if method == "first":
        rid, r = min(ok, key=lambda x: x[1].t_end)
        return r.answer, [rid]
    if method == "best_of":
        rid, r = max(ok, key=lambda x: x[1].confidence)
        return r.answer, [rid]
    # not _vote.majority (ties → the answer seen first): an episode's workers report a confidence, and its
    # majority breaks ties by their summed confidence, as the simulator's O4 does (env/world._recompute)
    counts = Counter(r.answer for _, r in ok)
    conf: dict[str | None, float] = {}
    for _, r in ok:
        conf[r.answer] = conf.get(r.answer, 0.0) + r.confidence
    best = max(counts, key=lambda a: (counts[a], conf[a]))
    return best, [rid for rid, r in ok if r.answer == best]


async def arun_episode(task: Task, workers: LLMWorkers, plan: Plan | None = None, *,
                       trace_id: str | None = None) -> EpisodeResult:
    """Run one episode on the current event loop (see the module docstring)."""
    plan = plan or PLANS["fanout3-majority"]
    run = _Run(task, plan, workers, trace_id or f"llm:{task.id}:{plan.name}")
    loop = asyncio.get_running_loop()
    if plan.decompose:
        done: dict[str, asyncio.Future[None]] = {s.id: loop.create_future() for s in task.subtasks}

        async def one(sid: str) -> None:
            st = task.subtask(sid)
            try:
                await run.subtask(sid, [done[p] for p in st.deps], list(st.deps))
            finally:
                done[sid].set_result(None)

        await asyncio.gather(*(one(s.id) for s in task.subtasks))
        root_label = task.root
    else:
        await run.subtask(None, [], [])
        root_label = "task"
    answer = run.answers.get(root_label)
    success = answer is not None and answer == task.answer
    t = run.now()
    run.decide("stop", "stop", ["stop", "continue"], [run.agg_event[root_label]])
    failed = sum(1 for r in run.results for c in r.calls if c[0] is not None) + sum(
        1 for r in run.results if r.error is not None and not any(c[0] for c in r.calls))
    causes = Counter(c[0] for r in run.results for c in r.calls if c[0] is not None)
    causes.update(r.error for r in run.results if r.error in ("empty_completion", "unparseable"))
    status = "failed" if answer is None else ("degraded" if causes else "ok")
    tokens = sum(r.tokens for r in run.results)
    trace = run.b.build(
        rewards={"team": 1.0 if success else 0.0},
        metrics={"task_success": 1.0 if success else 0.0},
        outcome=Outcome(success=success, score=1.0 if success else 0.0, verifier="exact"),
    )
    import msgspec

    trace = msgspec.structs.replace(trace, meta={**trace.meta, "status": status, "answer": answer,
                                                 "expected": task.answer, "causes": dict(causes)})
    return EpisodeResult(
        trace=trace, success=success, status=status, answer=answer, answers=dict(run.answers), tokens=tokens,
        wall_clock_s=t, calls=sum(max(1, len(r.calls)) for r in run.results), failed_calls=failed,
        causes=dict(causes), results=tuple(run.results),
    )


def run_episode(task: Task, workers: LLMWorkers, plan: Plan | None = None, *, trace_id: str | None = None,
                timeout: float | None = None) -> EpisodeResult:
    """Synchronous :func:`arun_episode` on the workers' background event loop.

    ``timeout`` (default: the client deadline × (subtasks + 1) + 10 s) bounds the episode.
    """
    n = len(task.subtasks) + 1
    limit = timeout if timeout is not None else workers.client.deadline * n + 10.0
    return workers.run(arun_episode(task, workers, plan, trace_id=trace_id), timeout=limit)


@dataclass
class EpisodeTally:
    """What a run of episodes added up to: successes, calls, failed calls by cause, the traces."""

    ok: int = 0
    calls: int = 0
    failed_calls: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    traces: list[Trace] = field(default_factory=list)

    def add(self, r: EpisodeResult) -> None:
        self.ok += r.success
        self.calls += r.calls
        self.failed_calls += r.failed_calls
        self.causes.update(r.causes)
        self.traces.append(r.trace)

    @property
    def nothing_reached_a_model(self) -> bool:
        """Every call failed: the numbers are not results (check the endpoint)."""
        return bool(self.calls) and self.failed_calls >= self.calls


def run_episodes(suite: str, plan: Plan, workers: LLMWorkers, *, episodes: int, size: int, seed: int,
                 tally: EpisodeTally) -> Iterator[tuple[Task, EpisodeResult]]:
    """Run ``episodes`` tasks of ``suite`` (seeds ``seed``, ``seed + 1`` …, ``size`` subtasks) under ``plan``,
    adding each to ``tally`` and yielding it; stops after the first episode when none of its calls reached
    a model (more episodes would not either)."""
    from .tasks import make_task

    for k in range(episodes):
        task = make_task(suite, seed=seed + k, size=size)
        r = run_episode(task, workers, plan)
        tally.add(r)
        yield task, r
        if k == 0 and r.calls and r.failed_calls >= r.calls:
            return
