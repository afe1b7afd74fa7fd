"""Turn a trace into the report's compact, columnar JSON payload.

The page never receives one object per event: every per-event field is a column (a JSON
array of numbers or of indices into one shared string table ``S``), so a 20,000-event
trace costs a few hundred kilobytes and decodes with one ``JSON.parse``::

    payload = {
      "kind": "trace", "meta": {...},
      "types": [10 event-type names],  "S": [shared strings],
      "lanes": [{"name", "parent", "depth", "n"}],          # spawn-tree order (DFS)
      "ev": {"id": [...], "type": [...], "lane": [...], "t": [...], "te": [...],
             "role": [...], "to": [...], "tool": [...],      # indices into S, -1 = none
             "tin": [...], "tout": [...], "cost": [...], "flags": [...]},
      "extra": {"<event index>": {"decision": ..., "outcome": ..., ...}},   # sparse
      "edges": {"src": [...], "dst": [...], "type": [...]} | None,        # small traces
      "crit": [event indices along the critical path],
      "final": event index of the final output | -1,
      "measures": [[name, value], ...], "flows": [[event indices], ...],
      "credit": {"unit", "method", "ids": [...], "values": [...]} | None,
    }

Flag bits (``ev.flags``): see :data:`FLAGS`.

>>> from orchestrace import synth
>>> p = trace_payload(synth(events=60, agents=3, seed=0))
>>> len(p["ev"]["t"]), len(p["lanes"]), p["kind"]
(60, 4, 'trace')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import numpy as np

from ..core.trace import Trace
from ..vocab import EdgeType, EventType
from ._analysis import Analysis, analyse

__all__ = ["FLAGS", "TYPES", "EDGE_TYPES", "trace_payload"]

#: Event types in the order the page colours them (index = ``ev.type`` value).
TYPES: tuple[str, ...] = tuple(t.value for t in EventType)
#: Edge types (index = ``edges.type`` value).
EDGE_TYPES: tuple[str, ...] = tuple(t.value for t in EdgeType)

#: Bit flags of ``ev.flags``.
FLAGS: dict[str, int] = {
    "critical": 1,  # on the critical path
    "wasted": 2,  # not an ancestor of the final output
    "error": 4,  # Event.error
    "untrusted": 8,  # Event.trusted is False
    "privileged": 16,  # Event.privileged
    "stop": 32,  # the O5 stop decision
    "final": 64,  # the final output event
    "timed": 128,  # has t_end (a bar, not a mark)
    "flow": 256,  # on a safety flow path
}

_TYPE_INDEX = {t: i for i, t in enumerate(EventType)}
_EDGE_INDEX = {t: i for i, t in enumerate(EdgeType)}
_MAX_TEXT = 400


class _Strings:
    """Shared string table: each distinct string once, referenced by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._ix: dict[str, int] = {}

    def __call__(self, s: str | None) -> int:
        if s is None:
            return -1
        i = self._ix.get(s)
        if i is None:
            i = self._ix[s] = len(self.items)
            self.items.append(s)
        return i


def _clip(s: str) -> str:
    return s if len(s) <= _MAX_TEXT else s[: _MAX_TEXT - 1] + "…"


def _round(a: np.ndarray, digits: int = 6) -> list[float]:
    return np.round(a, digits).tolist()


def _extra(ev: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ev.decision is not None:
        d = ev.decision
        out["decision"] = {
            "kind": f"{d.kind.code} {d.kind.value}",
            "action": d.action,
            **({"alternatives": list(d.alternatives)} if d.alternatives else {}),
            **({"logprob": d.logprob} if d.logprob is not None else {}),
            **({"policy": d.policy} if d.policy else {}),
        }
    if ev.outcome is not None:
        out["outcome"] = msgspec.to_builtins(ev.outcome)
    if ev.from_ is not None and ev.from_ != ev.agent:
        out["from"] = ev.from_
    for name in ("content_ref", "source"):
        v = getattr(ev, name)
        if v:
            out[name] = _clip(str(v))
    if ev.content:
        out["content"] = _clip(ev.content)
    if ev.attrs:
        out["attrs"] = _clip(msgspec.json.encode(ev.attrs).decode())
    return out


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def trace_payload(
    trace: Trace,
    *,
    measures: Mapping[str, Any] | None = None,
    credit: Mapping[str, Any] | None = None,
    max_graph_events: int = 300,
    analysis: Analysis | None = None,
) -> dict[str, Any]:
    """The columnar payload of one trace (see the module docstring for its shape).

    ``measures`` (name → number or None) default to the analysis' measures;
    ``credit`` is ``{"unit", "method", "ids", "values"}``; the edge list is only embedded
    (for the event-graph view) when the trace has at most ``max_graph_events`` events.

    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("t"); a = b.add("spawn", "orchestrator", t=0, to="w1")
    >>> _ = b.add("return", "w1", t=1, to="orchestrator", after=a)
    >>> p = trace_payload(b.build())
    >>> [lane["name"] for lane in p["lanes"]], p["lanes"][1]["parent"]
    (['orchestrator', 'w1'], 0)
    """
    an = analysis if analysis is not None else analyse(trace)
    meas = measures if measures is not None else an.measures
    events = trace.events
    n = len(events)
    S = _Strings()
    lanes = an.lanes
    lane_of = {name: i for i, name in enumerate(lanes)}

    t = np.fromiter((e.t for e in events), dtype=np.float64, count=n)
    te = np.fromiter((e.t if e.t_end is None else e.t_end for e in events), dtype=np.float64, count=n)
    t0 = float(t.min()) if n else 0.0
    flags = _analysis_flags(an, n)
    cols, extra = _event_columns(trace, lane_of, S, flags)
    lane_counts = np.bincount(cols["lane"], minlength=len(lanes)) if n else np.zeros(len(lanes), dtype=np.int64)
    edges = _graph_edges(trace) if n <= max_graph_events else None
    return {
        "kind": "trace",
        "meta": _meta(trace, n, len(lanes), t0, meas),
        "types": list(TYPES),
        "edge_types": list(EDGE_TYPES),
        "S": S.items,
        "lanes": [
            {"name": name, "parent": an.lane_parent[i], "depth": an.lane_depth[i], "n": int(lane_counts[i])}
            for i, name in enumerate(lanes)
        ],
        "ev": _ev(cols, t - t0, te - t0, flags),
        "extra": extra,
        "edges": edges,
        "crit": [int(i) for i in an.critical],
        "final": int(an.final),
        "measures": [[k, _finite(v) if not isinstance(v, str) else v] for k, v in meas.items()],
        "flows": [[int(i) for i in p] for p in an.flows],
        # every flow counted (the list above is capped): "safety/flows" when the measures have it
        "flows_total": int(an.measures.get("safety/flows", len(an.flows)) or len(an.flows)),
        "flow_kinds": list(an.flow_kinds),
        "assumptions": list(an.assumptions),
        "credit": dict(credit) if credit is not None else None,
    }


def _analysis_flags(an: Analysis, n: int) -> np.ndarray:
    """(n,) flag bits from the analysis: critical path, wasted work, flows, the final event."""
    flags = np.zeros(n, dtype=np.int64)
    flags[an.critical] |= FLAGS["critical"]
    flags[an.wasted] |= FLAGS["wasted"]
    for path in an.flows:
        flags[np.asarray(path, dtype=np.int64)] |= FLAGS["flow"]
    if an.final >= 0:
        flags[an.final] |= FLAGS["final"]
    return flags


def _meta(trace: Trace, n: int, n_agents: int, t0: float, meas: Mapping[str, Any]) -> dict[str, Any]:
    """The payload's ``meta``: ids, sizes, the time origin, success and the orchestration policy."""
    return {
        "trace_id": trace.trace_id,
        "task_id": trace.task_id,
        "system": trace.system,
        "topology": trace.topology.value if trace.topology is not None else None,
        "schema_version": trace.schema_version,
        "n_events": n,
        "n_edges": len(trace.edges),
        "n_agents": n_agents,
        "t0": t0,
        "success": _success(trace.outcome, meas),
        "policy": _policy_of(trace),
    }


def _ev(cols: dict[str, Any], t: np.ndarray, te: np.ndarray, flags: np.ndarray) -> dict[str, Any]:
    """The payload's ``ev`` columns (times ``t`` / ``te`` relative to the trace's first event)."""
    return {
        "id": cols["id"],
        "type": cols["type"].tolist(),
        "lane": cols["lane"].tolist(),
        "t": _round(t),
        "te": _round(te),
        "role": cols["role"].tolist(),
        "to": cols["to"].tolist(),
        "tool": cols["tool"].tolist(),
        "tin": cols["tin"].tolist(),
        "tout": cols["tout"].tolist(),
        "cost": _round(cols["cost"], 8),
        "flags": flags.tolist(),
    }


def _event_columns(trace: Trace, lane_of: dict[str, int], S: _Strings, flags: np.ndarray) -> tuple[dict[str, Any], dict[str, Any]]:
    """The per-event columns (``id``, ``type``, ``lane``, ``role``, ``to``, ``tool`` as string-table codes,
    ``tin``, ``tout``, ``cost``), the event's own flags or-ed into ``flags`` (n,), and the ``extra`` fields of
    the events that carry more (decision, outcome, content, attrs, …), by event index."""
    events = trace.events
    n = len(events)
    stop = trace.stop_event
    extra: dict[str, Any] = {}
    ids: list[str] = []
    typ = np.empty(n, dtype=np.int64)
    lane = np.empty(n, dtype=np.int64)
    role = np.empty(n, dtype=np.int64)
    to = np.empty(n, dtype=np.int64)
    tool = np.empty(n, dtype=np.int64)
    tin = np.zeros(n, dtype=np.int64)
    tout = np.zeros(n, dtype=np.int64)
    cost = np.zeros(n, dtype=np.float64)
    for i, e in enumerate(events):
        ids.append(e.id)
        typ[i] = _TYPE_INDEX[e.type]
        lane[i] = lane_of[e.agent]
        role[i] = S(e.role)
        to[i] = S(e.to)
        tool[i] = S(e.tool)
        tin[i] = e.tokens_in or 0
        tout[i] = e.tokens_out or 0
        cost[i] = e.cost or 0.0
        f = 0
        if e.error:
            f |= FLAGS["error"]
        if e.trusted is False:
            f |= FLAGS["untrusted"]
        if e.privileged:
            f |= FLAGS["privileged"]
        if e.t_end is not None:
            f |= FLAGS["timed"]
        if stop is not None and e is stop:
            f |= FLAGS["stop"]
        flags[i] |= f
        if e.decision is not None or e.outcome is not None or e.content_ref or e.content or e.attrs or e.source or (
            e.from_ is not None and e.from_ != e.agent
        ):
            extra[str(i)] = _extra(e)

    cols = {"id": ids, "type": typ, "lane": lane, "role": role, "to": to, "tool": tool, "tin": tin, "tout": tout,
            "cost": cost}
    return cols, extra


def _graph_edges(trace: Trace) -> dict[str, list[int]]:
    """The edge list of the event-graph view: source, destination and type index (edges to unknown events left out)."""
    index = {e.id: i for i, e in enumerate(trace.events)}
    src, dst, et = [], [], []
    for ed in trace.edges:
        a, b = index.get(ed.src), index.get(ed.dst)
        if a is None or b is None:
            continue
        src.append(a)
        dst.append(b)
        et.append(_EDGE_INDEX[ed.type])
    return {"src": src, "dst": dst, "type": et}


def _success(outcome: Any, measures: Mapping[str, Any]) -> bool | None:
    if outcome is not None and outcome.success is not None:
        return bool(outcome.success)
    v = _finite(measures.get("e1/task_success"))
    return None if v is None else v >= 0.5


def _policy_of(trace: Trace) -> str | None:
    p = trace.meta.get("policy") if trace.meta else None
    return None if p is None else str(p)


def summary_row(trace: Trace, measures: Mapping[str, Any]) -> dict[str, Any]:
    """One row of the many-trace summary: ids, policy, success and every numeric measure.

    >>> from orchestrace import synth
    >>> r = summary_row(synth(events=50, agents=2, seed=0), {"a/b": 1.5, "s": "x"})
    >>> r["measures"], r["events"]
    ({'a/b': 1.5}, 50)
    """
    succ = trace.outcome.success if trace.outcome is not None else None
    nums = {k: v for k, v in ((k, _finite(v)) for k, v in measures.items() if not isinstance(v, str)) if v is not None}
    return {
        "trace_id": trace.trace_id,
        "policy": _policy_of(trace),
        "success": succ,
        "events": len(trace.events),
        "measures": nums,
    }


def many_payload(rows: Sequence[Mapping[str, Any]], *, source: str, traces: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The summary payload of many traces (``rows`` from :func:`summary_row`).

    ``traces`` optionally embeds full per-trace payloads so the page can open each one.

    >>> many_payload([], source="x")["kind"]
    'many'
    """
    return {"kind": "many", "meta": {"source": source, "n_traces": len(rows)}, "rows": list(rows), "traces": list(traces)}
