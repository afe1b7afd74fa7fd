"""The eight credit units of a trace: which events make up each unit, and its role.

========================  ================================================================
unit                      ids / members
========================  ================================================================
``token``                 token spans of model turns: ``"<event>[0:<tokens_out>]"``; credit
                          of the turn is placed on its generated tokens (``tokens_out``)
``tool_call``             ``tool_call`` events (their ``tool_result`` is not a player)
``message``               ``message`` events
``turn``                  **model turns** — events a model generated: ``orchestrator_decision,
                          message, tool_call, return, aggregate`` (:data:`TURN_TYPES`);
                          ``tool_result`` (tool output), ``spawn``/``despawn`` (harness
                          bookkeeping), ``human_intervention`` and ``safety_event`` are not
``agent``                 agent ids (spawned agents that never act included)
``role``                  role names: ``Event.role``, else the agent's role (its first own
                          non-spawn event with a role, else the role on the spawn that made it)
``orchestrator``          ``orchestrator_decision`` events (O1–O5)
``team``                  the single unit ``"team"``
========================  ================================================================

``UnitIndex.event_unit[i]`` is the unit of event ``i`` (−1 when event ``i`` belongs to no
unit of this kind, e.g. a ``tool_result`` for ``unit="turn"``).

>>> from orchestrace import synth
>>> ui = unit_index(synth(events=60, agents=3, seed=0), "agent")
>>> ui.ids, ui.roles
(('orchestrator', 'w1', 'w2', 'w3'), ('lead', 'worker', 'worker', 'worker'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError, did_you_mean
from ..vocab import CreditUnit, EventType
from .graph import EVENT_TYPES

if TYPE_CHECKING:
    from .graph import TraceGraph

__all__ = ["TURN_TYPES", "UnitIndex", "parse_unit", "unit_index"]

#: Event types that are model turns (the ``turn`` unit).
TURN_TYPES: tuple[EventType, ...] = (
    EventType.ORCHESTRATOR_DECISION,
    EventType.MESSAGE,
    EventType.TOOL_CALL,
    EventType.RETURN,
    EventType.AGGREGATE,
)
_CODE = {et: i for i, et in enumerate(EVENT_TYPES)}
_EVENT_UNITS = {
    CreditUnit.TOOL_CALL: (EventType.TOOL_CALL,),
    CreditUnit.MESSAGE: (EventType.MESSAGE,),
    CreditUnit.TURN: TURN_TYPES,
    CreditUnit.TOKEN: TURN_TYPES,
    CreditUnit.ORCHESTRATOR: (EventType.ORCHESTRATOR_DECISION,),
}
_HINT_FOR = {
    CreditUnit.TOOL_CALL: "the trace has no tool_call events; use --unit turn or --unit agent",
    CreditUnit.MESSAGE: "the trace has no message events; use --unit turn or --unit agent",
    CreditUnit.TURN: "the trace has no model turns (decision, message, tool_call, return, aggregate); use --unit agent",
    CreditUnit.ORCHESTRATOR: "the trace has no orchestrator_decision events; record the O1–O5 decisions "
    "(TraceBuilder.decide) or use --unit agent",
}


def parse_unit(unit: CreditUnit | str) -> CreditUnit:
    """The :class:`~orchestrace.CreditUnit` named ``unit`` (``"tool-call"`` also accepted).

    >>> parse_unit("tool-call")
    <CreditUnit.TOOL_CALL: 'tool_call'>
    """
    if isinstance(unit, CreditUnit):
        return unit
    try:
        return CreditUnit(str(unit).strip().lower().replace("-", "_"))
    except ValueError:
        names = [u.value for u in CreditUnit]
        tip = did_you_mean(str(unit), names, prefix="; ")
        raise ConfigError(f"unknown credit unit {unit!r}{tip} (choose from {', '.join(names)})") from None


@dataclass(frozen=True)
class UnitIndex:
    """Units of one kind in a trace.

    ``ids`` and ``roles`` (one per unit); ``event_unit`` ``(n_events,)`` int64 unit of each
    event or −1; ``event_role`` ``(n_events,)`` int64 code into ``role_names`` or −1.
    For ``token``: ``span_event`` ``(k,)`` the event of each span and ``span_len`` ``(k,)``
    its generated-token count (``event_unit`` then maps a turn to its span).
    """

    unit: CreditUnit
    ids: tuple[str, ...]
    roles: tuple[str | None, ...]
    event_unit: np.ndarray
    event_role: np.ndarray
    role_names: tuple[str, ...]
    agent_role: np.ndarray
    span_event: np.ndarray | None = None
    span_len: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def position(self, unit_id: str) -> int:
        """Index of ``unit_id`` (``ConfigError`` with a hint when the trace lacks it)."""
        try:
            return self.ids.index(unit_id)
        except ValueError:
            shown = ", ".join(self.ids[:8]) + (" …" if len(self.ids) > 8 else "")
            raise ConfigError(f"no {self.unit.value} unit {unit_id!r} in this trace (units: {shown})") from None


def role_codes(g: TraceGraph) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """Per-event role codes (−1 = none), role names, per-agent role codes."""
    return g.derived(("units", "roles"), lambda: _compute_roles(g))


def _compute_roles(g: TraceGraph) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    ev = g.trace.events
    raw = list(map(attrgetter("role"), ev))
    names = tuple(r for r in dict.fromkeys(raw) if r is not None)
    code = {None: -1, **{r: i for i, r in enumerate(names)}}
    own = np.fromiter(map(code.__getitem__, raw), dtype=np.int64, count=g.n)
    na = len(g.agents)
    agent_role = np.full(na, -1, dtype=np.int64)
    spawn = g.type == _CODE[EventType.SPAWN]
    has = np.flatnonzero((own >= 0) & ~spawn)
    if has.size:
        a, first = np.unique(g.agent[has], return_index=True)
        agent_role[a] = own[has[first]]
    for i in np.flatnonzero(spawn & (own >= 0)).tolist():  # role given on the spawn that made it
        child = g.agent_index.get(ev[i].to) if ev[i].to is not None else None
        if child is not None and agent_role[child] < 0:
            agent_role[child] = own[i]
    event_role = np.where(own >= 0, own, agent_role[g.agent])
    return event_role, names, agent_role


def _names(names: Sequence[str], codes: np.ndarray) -> tuple[str | None, ...]:
    """Role names for codes (−1 → None)."""
    table: list[str | None] = [*names, None]
    return tuple(map(table.__getitem__, codes.tolist()))


def unit_index(trace_or_graph: object, unit: CreditUnit | str) -> UnitIndex:
    """The units of kind ``unit`` in a trace (or a prebuilt :class:`~orchestrace.analysis.graph.TraceGraph`).

    Raises :class:`~orchestrace.errors.ConfigError` with a hint when the trace has no unit
    of this kind (e.g. ``role`` in a trace without roles).

    >>> from orchestrace import synth
    >>> ui = unit_index(synth(events=60, agents=3, seed=0), "turn")
    >>> len(ui) == int((ui.event_unit >= 0).sum()), ui.ids[0]
    (True, 'e1')
    """
    from .graph import TraceGraph

    g = trace_or_graph if isinstance(trace_or_graph, TraceGraph) else TraceGraph.from_trace(trace_or_graph)  # type: ignore[arg-type]
    u = parse_unit(unit)
    return g.derived(("units", u), lambda: _unit_index(g, u))


def _unit_index(g: TraceGraph, u: CreditUnit) -> UnitIndex:
    event_role, role_names, agent_role = role_codes(g)
    n = g.n
    if u is CreditUnit.TEAM:
        return UnitIndex(u, ("team",), (None,), np.zeros(n, np.int64), event_role, role_names, agent_role)
    if u is CreditUnit.AGENT:
        roles = _names(role_names, agent_role)
        return UnitIndex(u, tuple(g.agents), roles, g.agent.astype(np.int64), event_role, role_names, agent_role)
    if u is CreditUnit.ROLE:
        if not role_names:
            raise ConfigError(
                "the trace has no roles, so there is no role unit: set Event.role (or the role of "
                "the spawn that creates each agent), or use --unit agent"
            )
        return UnitIndex(u, role_names, role_names, event_role.copy(), event_role, role_names, agent_role)
    kinds = _EVENT_UNITS[u]
    members = np.flatnonzero(np.isin(g.type, [_CODE[k] for k in kinds]))
    if u is CreditUnit.TOKEN:
        tok = g.tokens_out[members]
        members = members[tok > 0]
        if not members.size:
            raise ConfigError(
                "the token unit needs generated-token counts: no model turn has tokens_out > 0; "
                "record Event.tokens_out on model turns, or use --unit turn"
            )
    if not members.size:
        raise ConfigError(f"no {u.value} unit in this trace: {_HINT_FOR[u]}")
    event_unit = np.full(n, -1, dtype=np.int64)
    event_unit[members] = np.arange(members.size)
    roles = _names(role_names, event_role[members])
    if u is CreditUnit.TOKEN:
        lens = g.tokens_out[members].astype(np.int64)
        ids = tuple(map("{}[0:{}]".format, map(g.ids.__getitem__, members.tolist()), lens.tolist()))
        return UnitIndex(u, ids, roles, event_unit, event_role, role_names, agent_role,
                         span_event=members, span_len=lens)
    ids = tuple(map(g.ids.__getitem__, members.tolist()))
    return UnitIndex(u, ids, roles, event_unit, event_role, role_names, agent_role)
