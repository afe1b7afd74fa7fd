"""Build a trace in code: a small, append-only builder.

>>> b = TraceBuilder("run-1", task_id="demo", topology="centralized")
>>> d = b.decide(Decision.SPAWN, action="spawn:researcher", alternatives=["spawn:researcher", "none"], t=0)
>>> s = b.spawn("w1", t=1, after=d, role="researcher")
>>> c = b.tool_call("w1", "web.search", t=2, t_end=3, after=s, tokens_in=40)
>>> r = b.tool_result("w1", "web.search", t=3, after=c, trusted=False)
>>> ret = b.return_("w1", t=4, after=r)
>>> agg = b.aggregate(t=5, after=[ret], outcome=Outcome(success=True))
>>> stop = b.decide(Decision.STOP, action="stop", t=6, after=agg)
>>> tr = b.build(rewards={"team": 1.0})
>>> len(tr.events), len(tr.edges), tr.costs["tokens"], tr.stop_event.id
(7, 6, 40.0, 'e7')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..vocab import Decision, EdgeType, EventType, Topology
from .trace import DecisionPayload, Edge, Event, Outcome, Signal, Trace

__all__ = ["TraceBuilder"]

_After = str | Iterable[str] | None


class TraceBuilder:
    """Append events and edges, then :meth:`build` a frozen :class:`~orchestrace.Trace`.

    Every ``add``-style method returns the new event's id; ``after`` names the events it
    depends on and draws an edge of the method's natural type from each (``spawn`` edges
    into a spawn, ``return`` edges into a return, ``aggregate`` edges into an aggregate,
    ``tool_dependency`` into a tool result, ``causal`` otherwise). Ids are ``e1, e2, …``
    unless given.
    """

    def __init__(
        self,
        trace_id: str,
        *,
        task_id: str = "task",
        system: str | None = "orchestrace",
        topology: Topology | str | None = None,
        orchestrator: str = "orchestrator",
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.task_id = task_id
        self.system = system
        self.topology = Topology(topology) if topology is not None else None
        self.orchestrator = orchestrator
        self.meta = dict(meta or {})
        self._events: list[Event] = []
        self._edges: list[Edge] = []
        self._signals: list[Signal] = []
        self._n = 0

    # -- generic -----------------------------------------------------------------------
    def add(
        self,
        type: EventType | str,
        agent: str,
        *,
        t: float,
        after: _After = None,
        edge: EdgeType | str = EdgeType.CAUSAL,
        id: str | None = None,
        **fields: Any,
    ) -> str:
        """Append one event of any type; returns its id."""
        self._n += 1
        eid = id if id is not None else f"e{self._n}"
        self._events.append(Event(id=eid, t=float(t), type=EventType(type), agent=agent, **fields))
        for src in _ids(after):
            self._edges.append(Edge(src, eid, EdgeType(edge)))
        return eid

    def edge(self, src: str, dst: str, type: EdgeType | str = EdgeType.CAUSAL) -> None:
        """Append an edge between two existing (or future) event ids."""
        self._edges.append(Edge(src, dst, EdgeType(type)))

    def signal(self, signal: Signal) -> None:
        """Attach a per-unit reward signal."""
        self._signals.append(signal)

    # -- typed shortcuts ---------------------------------------------------------------
    def decide(
        self,
        kind: Decision | str,
        *,
        action: str,
        t: float,
        alternatives: Iterable[str] = (),
        logprob: float | None = None,
        policy: str | None = None,
        after: _After = None,
        agent: str | None = None,
        **fields: Any,
    ) -> str:
        """An ``orchestrator_decision`` carrying its O1–O5 payload."""
        payload = DecisionPayload(
            kind=Decision(kind),
            action=action,
            alternatives=tuple(alternatives),
            logprob=logprob,
            policy=policy,
            step=sum(1 for e in self._events if e.decision is not None),
        )
        return self.add(
            EventType.ORCHESTRATOR_DECISION, agent or self.orchestrator, t=t, after=after,
            decision=payload, **fields,
        )

    def spawn(self, child: str, *, t: float, after: _After = None, by: str | None = None, **fields: Any) -> str:
        """``by`` (default: the orchestrator) spawns agent ``child``."""
        return self.add(EventType.SPAWN, by or self.orchestrator, t=t, after=after, edge=EdgeType.SPAWN, to=child, **fields)

    def message(self, sender: str, receiver: str, *, t: float, after: _After = None, **fields: Any) -> str:
        """A message ``sender → receiver``."""
        return self.add(EventType.MESSAGE, sender, t=t, after=after, edge=EdgeType.MESSAGE, to=receiver, from_=sender, **fields)

    def tool_call(self, agent: str, tool: str, *, t: float, after: _After = None, **fields: Any) -> str:
        """``agent`` calls ``tool``."""
        return self.add(EventType.TOOL_CALL, agent, t=t, after=after, tool=tool, **fields)

    def tool_result(self, agent: str, tool: str, *, t: float, after: _After = None, **fields: Any) -> str:
        """The result of ``tool`` for ``agent`` (``trusted=False`` for untrusted content)."""
        return self.add(EventType.TOOL_RESULT, agent, t=t, after=after, edge=EdgeType.TOOL_DEPENDENCY, tool=tool, **fields)

    def return_(self, agent: str, *, t: float, to: str | None = None, after: _After = None, **fields: Any) -> str:
        """``agent`` returns its result to ``to`` (default: the orchestrator)."""
        to = to or self.orchestrator
        return self.add(EventType.RETURN, agent, t=t, after=after, edge=EdgeType.RETURN, from_=agent, to=to, **fields)

    def aggregate(self, *, t: float, after: _After = None, agent: str | None = None, **fields: Any) -> str:
        """The orchestrator (or ``agent``) combines partial results."""
        return self.add(EventType.AGGREGATE, agent or self.orchestrator, t=t, after=after, edge=EdgeType.AGGREGATE, **fields)

    # -- finish ------------------------------------------------------------------------
    def build(
        self,
        *,
        rewards: Mapping[str, float] | None = None,
        costs: Mapping[str, float] | None = None,
        metrics: Mapping[str, float] | None = None,
        outcome: Outcome | None = None,
    ) -> Trace:
        """Freeze into a :class:`Trace`. Missing ``costs`` are summed from the events."""
        derived = _derived_costs(self._events)
        derived.update(costs or {})
        return Trace(
            trace_id=self.trace_id,
            task_id=self.task_id,
            system=self.system,
            topology=self.topology,
            events=tuple(self._events),
            edges=tuple(self._edges),
            rewards={k: float(v) for k, v in (rewards or {}).items()},
            costs=derived,
            metrics={k: float(v) for k, v in (metrics or {}).items()},
            outcome=outcome,
            signals=tuple(self._signals),
            meta=dict(self.meta),
        )


def _ids(after: _After) -> list[str]:
    if after is None:
        return []
    if isinstance(after, str):
        return [after]
    return list(after)


def _derived_costs(events: list[Event]) -> dict[str, float]:
    """``tokens, wall_clock_s, tool_calls, messages`` summed from the events."""
    if not events:
        return {"tokens": 0.0, "wall_clock_s": 0.0, "tool_calls": 0.0, "messages": 0.0}
    start = min(e.t for e in events)
    end = max(e.t if e.t_end is None else max(e.t, e.t_end) for e in events)
    return {
        "tokens": float(sum(e.tokens for e in events)),
        "wall_clock_s": float(end - start),
        "tool_calls": float(sum(1 for e in events if e.type is EventType.TOOL_CALL)),
        "messages": float(sum(1 for e in events if e.type is EventType.MESSAGE)),
    }
