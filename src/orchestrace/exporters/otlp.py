"""Trace → OTLP JSON following the GenAI semantic conventions (opens in Jaeger, Phoenix, Langfuse).

Span layout (one OTLP trace per orchestrace trace)::

    invoke_agent orchestrator                   gen_ai.operation.name = invoke_agent
    ├── orchestrator_decision                   orchestrace.* attributes only
    ├── chat                                    gen_ai.usage.input_tokens / output_tokens
    ├── invoke_agent w1      ← spawn edge       the child agent's span is a child of its spawner's
    │   ├── execute_tool search                 gen_ai.tool.name; [t, t_end or its result's t]
    │   ├── tool_result search
    │   └── return
    └── …

Each event span carries the native event as JSON in ``orchestrace.event`` and its incoming
edges in ``orchestrace.edges_in`` (also drawn as span links), and the resource carries the
trace header in ``orchestrace.core.trace``, so :func:`orchestrace.importers.import_traces` rebuilds
the trace exactly. A reader that only knows GenAI sees agents, their parent links (from the
spawn edges), model calls with token usage and tool calls. Ids are derived from hashes of
the trace and event ids (deterministic); times are ``meta["t0_unix"]`` (or 1.7e9 s) + ``t``.

>>> from orchestrace import synth
>>> doc = to_otlp(synth(events=40, agents=2, seed=1))
>>> spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
>>> sorted({s["name"].split(" ")[0] for s in spans})[:4]
['aggregate', 'chat', 'execute_tool', 'invoke_agent']
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from ..core.trace import Event, Trace
from ..vocab import EventType

__all__ = ["DEFAULT_T0", "span_records", "to_otlp"]

#: Epoch seconds used as time zero when a trace has no ``meta["t0_unix"]``.
DEFAULT_T0 = 1_700_000_000.0


def _hid(*parts: str, n: int) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:n]


def _ns(t0: float, t: float) -> int:
    return int(round(t0 * 1e9)) + int(round(t * 1e9))


def span_records(trace: Trace) -> list[dict[str, Any]]:
    """The spans as plain dicts: ``name, span_id, parent_id, start_ns, end_ns, attrs, links``.

    Shared by :func:`to_otlp` and the OpenTelemetry SDK hook (:mod:`.otel_sdk`).
    """
    t0 = float(trace.meta.get("t0_unix", DEFAULT_T0)) if isinstance(trace.meta.get("t0_unix"), (int, float)) else DEFAULT_T0
    tid = trace.trace_id
    by_id = {e.id: e for e in trace.events}
    # result time of each tool call (the end of its execute_tool span when t_end is missing)
    result_t: dict[str, float] = {}
    edges_in: dict[str, list[list[Any]]] = {}
    for k, d in enumerate(trace.edges):
        edges_in.setdefault(d.dst, []).append([d.src, d.type.value, k])
        src = by_id.get(d.src)
        dst = by_id.get(d.dst)
        if src is not None and dst is not None and src.type is EventType.TOOL_CALL and dst.type is EventType.TOOL_RESULT:
            result_t.setdefault(src.id, dst.t)
    spawner: dict[str, str] = {}
    for e in trace.events:
        if e.type is EventType.SPAWN and e.to and e.to not in spawner and e.to != e.agent:
            spawner[e.to] = e.agent
    span: dict[str, tuple[float, float]] = {}
    for e in trace.events:
        end = e.t_end if e.t_end is not None else result_t.get(e.id, e.t)
        lo, hi = span.get(e.agent, (e.t, end))
        span[e.agent] = (min(lo, e.t), max(hi, end))
    for child in spawner:  # an agent's span starts at its spawn
        sp_t = min(e.t for e in trace.events if e.type is EventType.SPAWN and e.to == child)
        lo, hi = span.get(child, (sp_t, sp_t))
        span[child] = (min(lo, sp_t), max(hi, sp_t))
    agent_sid = {a: _hid(tid, "agent", a, n=16) for a in span}
    out: list[dict[str, Any]] = []
    for a, (lo, hi) in span.items():
        parent = spawner.get(a)
        out.append({
            "name": f"invoke_agent {a}", "span_id": agent_sid[a],
            "parent_id": agent_sid.get(parent) if parent else None,
            "start_ns": _ns(t0, lo), "end_ns": _ns(t0, hi), "links": [], "error": False,
            "attrs": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": a, "gen_ai.agent.id": a,
                      "orchestrace.agent": a},
        })
    enc = msgspec.json.Encoder()
    for i, e in enumerate(trace.events):
        out.append(_event_span(e, i, tid, t0, agent_sid, result_t, edges_in.get(e.id, []), enc))
    return out


def _event_span(e: Event, i: int, tid: str, t0: float, agent_sid: dict[str, str], result_t: dict[str, float],
                edges_in: list[list[Any]], enc: msgspec.json.Encoder) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "orchestrace.event": enc.encode(e).decode(),
        "orchestrace.event.index": i,
        "orchestrace.event.type": e.type.value,
        "orchestrace.edges_in": json.dumps(edges_in),
        "gen_ai.agent.name": e.agent,
    }
    end = e.t_end if e.t_end is not None else e.t
    if e.type is EventType.TOOL_CALL:
        name = f"execute_tool {e.tool or 'tool'}"
        attrs["gen_ai.operation.name"] = "execute_tool"
        attrs["gen_ai.tool.name"] = e.tool or "tool"
        if e.t_end is None:
            end = result_t.get(e.id, e.t)
    elif e.type is EventType.MESSAGE and (e.tokens_in is not None or e.tokens_out is not None or not e.to):
        model = (e.attrs or {}).get("model") if isinstance((e.attrs or {}).get("model"), str) else None
        name = f"chat {model}" if model else "chat"
        attrs["gen_ai.operation.name"] = "chat"
        if model:
            attrs["gen_ai.request.model"] = model
    else:
        name = f"{e.type.value} {e.tool or e.to or ''}".strip()
    if attrs.get("gen_ai.operation.name") in ("chat", "execute_tool"):  # usage only where GenAI readers expect it
        if e.tokens_in is not None:
            attrs["gen_ai.usage.input_tokens"] = e.tokens_in
        if e.tokens_out is not None:
            attrs["gen_ai.usage.output_tokens"] = e.tokens_out
    if e.decision is not None:
        attrs["orchestrace.decision.kind"] = e.decision.kind.value
        attrs["orchestrace.decision.action"] = e.decision.action
    return {
        "name": name, "span_id": _hid(tid, "event", e.id, n=16), "parent_id": agent_sid.get(e.agent),
        "start_ns": _ns(t0, e.t), "end_ns": _ns(t0, max(end, e.t)), "attrs": attrs, "error": bool(e.error),
        "links": [_hid(tid, "event", x[0], n=16) for x in edges_in],
    }


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _kvs(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in d.items() if v is not None]


def to_otlp(trace: Trace) -> dict[str, Any]:
    """One OTLP JSON ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) for a trace."""
    tid = _hid(trace.trace_id, "trace", n=32)
    header = msgspec.to_builtins(trace)
    header.pop("events", None)
    header.pop("edges", None)
    spans = []
    for r in span_records(trace):
        s: dict[str, Any] = {
            "traceId": tid, "spanId": r["span_id"], "name": r["name"], "kind": "SPAN_KIND_INTERNAL",
            "startTimeUnixNano": str(r["start_ns"]), "endTimeUnixNano": str(r["end_ns"]),
            "attributes": _kvs(r["attrs"]),
            "status": {"code": "STATUS_CODE_ERROR"} if r["error"] else {},
        }
        if r["parent_id"]:
            s["parentSpanId"] = r["parent_id"]
        if r["links"]:
            s["links"] = [{"traceId": tid, "spanId": x} for x in r["links"]]
        spans.append(s)
    resource = {"service.name": trace.system or "orchestrace", "orchestrace.trace": json.dumps(header)}
    return {"resourceSpans": [{
        "resource": {"attributes": _kvs(resource)},
        "scopeSpans": [{"scope": {"name": "orchestrace"}, "spans": spans}],
    }]}
