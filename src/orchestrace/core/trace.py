"""The orchestration-trace model: immutable, typed msgspec structs.

A :class:`Trace` is a temporal event graph of one multi-agent run. Its fields are a
*superset* of the survey's reference schema (``trace_id, task_id, system, topology,
events, edges, rewards, costs, metrics``); the native additions are what RL needs:

========================  ==================================================================
``schema_version``        native format version (:data:`SCHEMA_VERSION`)
``Event.t_end``           end time in seconds (duration = ``t_end - t``); critical path,
                          parallelism and wasted time need it
``Event.tokens_in/out``   tokens read / written by the event (model turns, tool I/O)
``Event.cost``            money cost of the event (USD)
``Event.decision``        the O1–O5 payload of an ``orchestrator_decision``: kind, chosen
                          action, available alternatives, behaviour log-probability
``Event.outcome``         outcome / verifier result attached to an event (e.g. the final
                          aggregate, or a verifier's verdict)
``Event.error``           the event is erroneous (error amplification, E4)
``Event.privileged``      a tool call with side effects (safety flows)
``Event.content``         raw text (optional; ``content_ref`` is the privacy-preserving pointer)
``Event.source``          pointer to the record it was imported from (``file:line``, span id)
``Event.attrs``           any extra fields a reference event carried (kept, never dropped)
``Trace.outcome``         outcome of the whole run (E1 task success)
``Trace.signals``         per-unit reward signals (:class:`Signal`)
``Trace.meta``            free-form metadata (environment id, seed, policy, …)
========================  ==================================================================

Traces are frozen: build one with :class:`~orchestrace.TraceBuilder` or decode one with
:func:`orchestrace.load`; derive a changed copy with :func:`msgspec.structs.replace`.

>>> ev = Event(id="e1", t=0.0, type=EventType.SPAWN, agent="orchestrator", to="w1")
>>> tr = Trace(trace_id="t", task_id="k", events=(ev,))
>>> tr.events[0].type.value, tr.schema_version
('spawn', '1.0')
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..vocab import CreditUnit, Decision, EdgeType, EventType, RewardFamily, Topology

__all__ = [
    "CONTINUE",
    "SCHEMA_VERSION",
    "DecisionPayload",
    "Edge",
    "Event",
    "Outcome",
    "Signal",
    "Trace",
]

#: Version of the native format written by this release.
SCHEMA_VERSION = "1.0"

#: The action label of an O5 decision that chose to go on (not a stop).
CONTINUE = "continue"


class DecisionPayload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):
    """What an ``orchestrator_decision`` decided (O1–O5), for off-policy learning.

    ``kind`` is the sub-decision, ``action`` the chosen action's label,
    ``alternatives`` the labels that were legal, ``logprob`` the behaviour policy's
    log-probability of ``action`` (when a learned policy chose it), ``policy`` its name,
    ``step`` the decision index in the episode.
    """

    kind: Decision
    action: str
    alternatives: tuple[str, ...] = ()
    logprob: float | None = None
    policy: str | None = None
    step: int | None = None

    @property
    def is_stop(self) -> bool:
        """True for the stop itself: an O5 decision whose action is not :data:`CONTINUE`.

        An O5 decision point at which the policy chose to go on is recorded with
        ``kind="stop", action="continue"``: it is an O5 *decision*, not the trace's stop.
        """
        return self.kind is Decision.STOP and self.action != CONTINUE


class Outcome(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):
    """A verifiable outcome: ``success`` (None = unknown), a ``score``, who judged it."""

    success: bool | None = None
    score: float | None = None
    verifier: str | None = None
    answer_ref: str | None = None


class Signal(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True, gc=False):
    """A reward signal attached to one unit: ``unit`` kind, the unit's ``id`` and a ``value``.

    Unit ids: an event id for ``token``/``tool_call``/``message``/``turn``/``orchestrator``
    units, an agent id for ``agent``, a role name for ``role``, ``"team"`` for ``team``.
    """

    unit: CreditUnit
    id: str
    value: float
    family: RewardFamily | None = None
    name: str | None = None


class Event(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    omit_defaults=True,
    forbid_unknown_fields=True,
    gc=False,
    rename={"from_": "from"},
):
    """One vertex of the trace. ``from_`` is written ``from`` in JSON."""

    id: str
    t: float
    type: EventType
    agent: str
    role: str | None = None
    from_: str | None = None
    to: str | None = None
    tool: str | None = None
    content_ref: str | None = None
    trusted: bool | None = None
    # native extensions
    t_end: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    decision: DecisionPayload | None = None
    outcome: Outcome | None = None
    error: bool | None = None
    privileged: bool | None = None
    content: str | None = None
    source: str | None = None
    attrs: dict[str, Any] | None = None

    @property
    def duration(self) -> float | None:
        """``t_end - t`` when the end time is known."""
        return None if self.t_end is None else self.t_end - self.t

    @property
    def tokens(self) -> int:
        """``tokens_in + tokens_out`` (missing counts as 0)."""
        return (self.tokens_in or 0) + (self.tokens_out or 0)


class Edge(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """A directed edge ``src → dst`` of a given type (what caused what)."""

    src: str
    dst: str
    type: EdgeType


class Trace(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One multi-agent run as an event graph (see the module docstring for the fields)."""

    trace_id: str
    task_id: str
    events: tuple[Event, ...]
    edges: tuple[Edge, ...] = ()
    rewards: dict[str, float] = {}
    costs: dict[str, float] = {}
    schema_version: str = SCHEMA_VERSION
    system: str | None = None
    topology: Topology | None = None
    metrics: dict[str, float] = {}
    outcome: Outcome | None = None
    signals: tuple[Signal, ...] = ()
    meta: dict[str, Any] = {}

    def __repr__(self) -> str:  # a 1M-event repr would flood a terminal
        return (
            f"Trace(trace_id={self.trace_id!r}, task_id={self.task_id!r}, "
            f"events={len(self.events)}, edges={len(self.edges)})"
        )

    @property
    def agents(self) -> list[str]:
        """Agent ids in order of first appearance (spawn targets included)."""
        seen: dict[str, None] = {}
        for e in self.events:
            seen.setdefault(e.agent, None)
            if e.type is EventType.SPAWN and e.to:
                seen.setdefault(e.to, None)
        return list(seen)

    @property
    def stop_event(self) -> Event | None:
        """The stop: the O5 ``orchestrator_decision`` whose action is not ``continue``."""
        for e in reversed(self.events):
            if e.decision is not None and e.decision.is_stop:
                return e
        return None

    def event(self, event_id: str) -> Event:
        """The event with this id (linear scan; use :mod:`orchestrace.analysis.graph` for many)."""
        for e in self.events:
            if e.id == event_id:
                return e
        raise KeyError(event_id)
