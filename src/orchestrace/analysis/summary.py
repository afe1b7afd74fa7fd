"""A JSON-ready summary of one trace: what ``orchestrace inspect`` shows.

Counts and spans only (no graph): events and edges by type, agents with their roles, tokens
and first/last time, tool calls and flagged tool errors, the spawn pairs, the stop decision,
the outcome and the trace's own rewards, costs and metrics.

>>> from orchestrace import synth
>>> s = summarize(synth(events=60, agents=3, seed=0))
>>> s["events"], s["agents"], s["stop"] is not None
(60, 4, True)
>>> sum(s["events_by_type"].values()) == s["events"]
True
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..vocab import EventType

if TYPE_CHECKING:
    from ..core.trace import Trace

__all__ = ["summarize"]


def _per_agent(tr: Trace) -> dict[str, dict[str, Any]]:
    """Per agent: events, tokens, first and last time (an event's end counts), sorted roles."""
    per: dict[str, dict[str, Any]] = {}
    for e in tr.events:
        a = per.setdefault(e.agent, {"events": 0, "tokens": 0, "first_t": e.t, "last_t": e.t, "roles": set()})
        a["events"] += 1
        a["tokens"] += e.tokens
        a["first_t"] = min(a["first_t"], e.t)
        a["last_t"] = max(a["last_t"], e.t if e.t_end is None else e.t_end)
        if e.role:
            a["roles"].add(e.role)
    return {a: {**v, "roles": sorted(v["roles"])} for a, v in per.items()}


def summarize(tr: Trace) -> dict[str, Any]:
    """A JSON-ready summary of one trace (see the module docstring for what it holds)."""
    ev = tr.events
    ts = [e.t for e in ev] + [e.t_end for e in ev if e.t_end is not None]
    tools = Counter(e.tool or "?" for e in ev if e.type is EventType.TOOL_CALL)
    tool_errors = Counter(e.tool or "?" for e in ev if e.type is EventType.TOOL_CALL and e.error)
    stop = tr.stop_event
    return {
        "trace_id": tr.trace_id, "task_id": tr.task_id, "system": tr.system,
        "topology": tr.topology.value if tr.topology else None, "schema_version": tr.schema_version,
        "events": len(ev), "edges": len(tr.edges), "agents": len(tr.agents),
        "t_start": min(ts) if ts else None, "t_end": max(ts) if ts else None,
        "tokens_in": sum(e.tokens_in or 0 for e in ev), "tokens_out": sum(e.tokens_out or 0 for e in ev),
        "cost": sum(e.cost or 0.0 for e in ev),
        "events_by_type": dict(Counter(e.type.value for e in ev).most_common()),
        "edges_by_type": dict(Counter(d.type.value for d in tr.edges).most_common()),
        "tool_calls": dict(tools.most_common()), "tool_errors": dict(tool_errors),
        "per_agent": _per_agent(tr),
        "spawns": [(e.agent, e.to) for e in ev if e.type is EventType.SPAWN and e.to],
        "errors_flagged": sum(1 for e in ev if e.error),
        "untrusted": sum(1 for e in ev if e.trusted is False),
        "stop": stop.id if stop is not None else None,
        "outcome": None if tr.outcome is None else {"success": tr.outcome.success, "score": tr.outcome.score},
        "rewards": dict(tr.rewards), "costs": dict(tr.costs), "metrics": dict(tr.metrics),
        "signals": len(tr.signals),
    }
