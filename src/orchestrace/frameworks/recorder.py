"""Recorder SDK: instrument a multi-agent program so it writes its trace while it runs.

Every call writes its event to the JSONL stream (:class:`orchestrace.core.io.TraceWriter`) and
flushes before it returns, so a crash loses nothing that was recorded: the file loads up to
its last complete line. Events of one agent are chained by ``causal`` edges (each depends
on the agent's previous event and on anything it received since: returns, messages);
``after=`` adds explicit causes. The *current agent* lives in a :mod:`contextvars`
variable, so helpers deep in the call stack and concurrent asyncio tasks each see their own
agent (``rec.current()``); all writes are serialised by a lock (thread-safe).

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> with Recorder(p, trace_id="demo") as rec:
...     with rec.agent("lead", role="orchestrator") as lead:
...         _ = lead.decide("spawn", action="spawn:coder", alternatives=["spawn:coder", "stop"])
...         with lead.spawn("coder", role="coder") as coder:
...             call = coder.tool_call("python", content="1+1", tokens_in=12)
...             _ = coder.tool_result("python", content="2", after=call)
...         _ = lead.aggregate()
...         _ = lead.stop()
>>> from orchestrace import load
>>> [e.type.value for e in load(p).events]
['orchestrator_decision', 'spawn', 'tool_call', 'tool_result', 'return', 'aggregate', 'orchestrator_decision']
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any, TypeVar

from ..core.io import TraceWriter
from ..core.trace import DecisionPayload, Edge, Event, Outcome, Signal
from ..errors import ConfigError
from ..vocab import Decision, EdgeType, EventType, Topology

__all__ = ["AgentHandle", "Recorder", "record"]

F = TypeVar("F", bound=Callable[..., Any])
_After = str | Iterable[str] | None
_current: contextvars.ContextVar[AgentHandle | None] = contextvars.ContextVar("orchestrace_agent", default=None)


def record(path: str | os.PathLike[str] | IO[bytes], **kw: Any) -> Recorder:
    """Open a :class:`Recorder` on ``path`` (``orchestrace.record(path)``)."""
    return Recorder(path, **kw)


class Recorder:
    """A live trace: agents, their events and edges, streamed to a JSONL file.

    ``clock`` returns seconds (default :func:`time.perf_counter`, made relative to the
    start; ``meta["t0_unix"]`` holds the wall-clock start). ``fsync=True`` also survives
    a power cut, at a cost of a disk sync per event.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | IO[bytes],
        *,
        trace_id: str | None = None,
        task_id: str = "task",
        system: str | None = "orchestrace.recorder",
        topology: Topology | str | None = None,
        meta: Mapping[str, Any] | None = None,
        fsync: bool = False,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.trace_id = trace_id or uuid.uuid4().hex
        self._clock = clock
        self._c0 = clock()
        self._writer = TraceWriter(path, trace_id=self.trace_id, task_id=task_id, system=system, topology=topology,
                                   meta={"t0_unix": time.time(), "recorder": "orchestrace", **dict(meta or {})},
                                   fsync=fsync)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._agents: dict[str, AgentHandle] = {}
        self._stopped = False
        self._tokens = 0
        self._n_tool_calls = 0
        self._n_messages = 0
        self._t_max = 0.0

    # -- clock and writing -------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the recorder started."""
        return self._clock() - self._c0

    def _emit(self, agent: AgentHandle, type: EventType, deps: list[tuple[str, EdgeType]], *,
              t: float | None = None, **fields: Any) -> str:
        role = fields.pop("role", agent.role)
        with self._lock:
            eid = f"e{next(self._ids)}"
            if t is None:
                t = self._clock() - self._c0
            ev = Event(id=eid, t=t, type=type, agent=agent.id, role=role, **fields)
            self._writer.event_with_edges(ev, [Edge(src, eid, kind) for src, kind in deps])
            if ev.tokens_in is not None or ev.tokens_out is not None:
                self._tokens += ev.tokens
            if type is EventType.TOOL_CALL:
                self._n_tool_calls += 1
            elif type is EventType.MESSAGE:
                self._n_messages += 1
            end = t if ev.t_end is None else ev.t_end
            if end > self._t_max:
                self._t_max = end
        return eid

    # -- agents --------------------------------------------------------------------------
    @contextmanager
    def agent(self, agent_id: str, *, role: str | None = None) -> Iterator[AgentHandle]:
        """Enter a root agent (the orchestrator, or any agent nobody spawned)."""
        h = self._agents.get(agent_id) or AgentHandle(self, agent_id, role)
        self._agents[agent_id] = h
        token = _current.set(h)
        try:
            yield h
        finally:
            _current.reset(token)

    def current(self) -> AgentHandle:
        """The agent of the innermost ``with rec.agent(...)`` / ``spawn(...)`` in this context."""
        h = _current.get()
        if h is None or h.rec is not self:
            raise ConfigError("no current agent: call this inside `with rec.agent(...)` or `with a.spawn(...)`")
        return h

    def tool(self, name: str | None = None, *, privileged: bool | None = None, trusted: bool | None = None
             ) -> Callable[[F], F]:
        """Decorator: record a ``tool_call`` / ``tool_result`` pair around each call (sync or async).

        The result's ``error`` is set when the function raises (the exception propagates).
        """
        def wrap(fn: F) -> F:
            tool = name or fn.__name__

            if inspect.iscoroutinefunction(fn):
                @functools.wraps(fn)
                async def aw(*args: Any, **kw: Any) -> Any:
                    a = self.current()
                    t0 = self.now()
                    try:
                        out = await fn(*args, **kw)
                    except BaseException:
                        a._tool_pair(tool, t0, None, True, privileged, trusted)
                        raise
                    a._tool_pair(tool, t0, out, None, privileged, trusted)
                    return out
                return aw  # type: ignore[return-value]

            @functools.wraps(fn)
            def w(*args: Any, **kw: Any) -> Any:
                a = self.current()
                t0 = self.now()
                try:
                    out = fn(*args, **kw)
                except BaseException:
                    a._tool_pair(tool, t0, None, True, privileged, trusted)
                    raise
                a._tool_pair(tool, t0, out, None, privileged, trusted)
                return out
            return w  # type: ignore[return-value]
        return wrap

    # -- finish --------------------------------------------------------------------------
    def close(self, *, rewards: Mapping[str, float] | None = None, outcome: Outcome | None = None,
              metrics: Mapping[str, float] | None = None, signals: tuple[Signal, ...] = ()) -> None:
        """Write the ``end`` record (costs summed from the events) and close the file."""
        costs = {"tokens": float(self._tokens), "wall_clock_s": float(self._t_max),
                 "tool_calls": float(self._n_tool_calls), "messages": float(self._n_messages)}
        self._writer.close(rewards=rewards, costs=costs, metrics=metrics, outcome=outcome, signals=signals)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AgentHandle:
    """One agent's recording handle; every method writes one event and returns its id."""

    def __init__(self, rec: Recorder, agent_id: str, role: str | None, spawner: str | None = None) -> None:
        self.rec = rec
        self.id = agent_id
        self.role = role
        self.spawner = spawner
        self._lock = threading.Lock()
        self._frontier: list[tuple[str, EdgeType]] = []
        self.last: str | None = None
        self._last_type: EventType | None = None
        self._returned = False

    def _deps(self, after: _After, edge: EdgeType = EdgeType.CAUSAL) -> list[tuple[str, EdgeType]]:
        with self._lock:
            front, self._frontier = self._frontier, []
        deps = [(s, edge if k is EdgeType.CAUSAL else k) for s, k in front]
        if after is not None:
            extra = [after] if isinstance(after, str) else list(after)
            seen = {s for s, _ in deps}
            deps += [(s, edge) for s in extra if s not in seen]
        return deps

    def _push(self, eid: str, kind: EdgeType = EdgeType.CAUSAL) -> str:
        with self._lock:
            self._frontier.append((eid, kind))
            self.last = eid
        return eid

    def _event(self, type: EventType, *, after: _After = None, edge: EdgeType = EdgeType.CAUSAL, **fields: Any) -> str:
        eid = self.rec._emit(self, type, self._deps(after, edge), **fields)
        self._last_type = type
        return self._push(eid)

    # -- the verbs -------------------------------------------------------------------------
    def decide(self, kind: Decision | str, *, action: str, alternatives: Iterable[str] = (),
               logprob: float | None = None, policy: str | None = None, after: _After = None, **fields: Any) -> str:
        """An ``orchestrator_decision`` (O1–O5). At most one ``stop`` per trace."""
        kind = Decision(kind)
        if kind is Decision.STOP and action != "continue":
            with self.rec._lock:
                if self.rec._stopped:
                    raise ConfigError("a stop decision was already recorded; a trace has at most one (O5)")
                self.rec._stopped = True
        payload = DecisionPayload(kind=kind, action=action, alternatives=tuple(alternatives), logprob=logprob,
                                  policy=policy)
        return self._event(EventType.ORCHESTRATOR_DECISION, after=after, decision=payload, **fields)

    def stop(self, *, action: str = "stop", **fields: Any) -> str:
        """The O5 stop decision."""
        return self.decide(Decision.STOP, action=action, alternatives=fields.pop("alternatives", ("stop", "continue")),
                           **fields)

    @contextmanager
    def spawn(self, child: str, *, role: str | None = None, after: _After = None, content: str | None = None,
              **fields: Any) -> Iterator[AgentHandle]:
        """Spawn ``child``; inside the block it is the current agent; leaving it records its return."""
        prev_kind = EdgeType.SPAWN if self._last_type is EventType.ORCHESTRATOR_DECISION else EdgeType.CAUSAL
        sp = self._event(EventType.SPAWN, after=after, edge=prev_kind, to=child, content=content, **fields)
        h = AgentHandle(self.rec, child, role, spawner=self.id)
        self.rec._agents[child] = h
        h._push(sp, EdgeType.SPAWN)
        token = _current.set(h)
        try:
            yield h
        finally:
            _current.reset(token)
            if not h._returned:
                h.return_()

    def return_(self, *, content: str | None = None, **fields: Any) -> str:
        """Return to the spawner (called automatically when the ``spawn`` block ends)."""
        if self.spawner is None:
            raise ConfigError(f"agent {self.id!r} was not spawned, so it cannot return; use message()")
        rid = self._event(EventType.RETURN, edge=EdgeType.RETURN, from_=self.id, to=self.spawner, content=content,
                          **fields)
        self._returned = True
        parent = self.rec._agents.get(self.spawner)
        if parent is not None:
            parent._push(rid)
        return rid

    def message(self, to: str, *, content: str | None = None, after: _After = None, **fields: Any) -> str:
        """A message to agent ``to``; the receiver's next event depends on it (``message`` edge)."""
        mid = self._event(EventType.MESSAGE, after=after, from_=self.id, to=to, content=content, **fields)
        target = self.rec._agents.get(to)
        if target is not None and target is not self:
            target._push(mid, EdgeType.MESSAGE)
        return mid

    def tool_call(self, tool: str, *, content: str | None = None, after: _After = None, **fields: Any) -> str:
        """``tool_call`` (``t_end`` may be given when the duration is known)."""
        return self._event(EventType.TOOL_CALL, after=after, tool=tool, content=content, **fields)

    def tool_result(self, tool: str, *, after: _After = None, content: str | None = None, **fields: Any) -> str:
        """``tool_result`` (``trusted=False`` for untrusted content); ``after`` = the call's id."""
        return self._event(EventType.TOOL_RESULT, after=after, edge=EdgeType.TOOL_DEPENDENCY, tool=tool,
                           content=content, **fields)

    def aggregate(self, *, after: _After = None, outcome: Outcome | None = None, **fields: Any) -> str:
        """Combine partial results (the returns received so far are its causes)."""
        return self._event(EventType.AGGREGATE, after=after, edge=EdgeType.AGGREGATE, outcome=outcome, **fields)

    def human(self, *, content: str | None = None, **fields: Any) -> str:
        """A ``human_intervention`` on this agent."""
        return self._event(EventType.HUMAN_INTERVENTION, content=content, **fields)

    def safety(self, *, content: str | None = None, **fields: Any) -> str:
        """A ``safety_event``."""
        return self._event(EventType.SAFETY_EVENT, content=content, **fields)

    def _tool_pair(self, tool: str, t0: float, out: Any, error: bool | None, privileged: bool | None,
                   trusted: bool | None) -> None:
        t1 = self.rec.now()
        call = self._event(EventType.TOOL_CALL, tool=tool, t=t0, t_end=t1, privileged=privileged)
        assert call
        self._event(EventType.TOOL_RESULT, edge=EdgeType.TOOL_DEPENDENCY, tool=tool, t=t1, error=error,
                    trusted=trusted)

