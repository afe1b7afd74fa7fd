"""OpenAI Agents SDK trace exports → traces (handoffs become delegation).

Input: the items the SDK's tracing exporter sends — ``{"data": [...]}``, a list, or one
item per line — each ``{"object": "trace", "id", "workflow_name", "group_id"}`` or
``{"object": "trace.span", "id", "trace_id", "parent_id", "started_at", "ended_at",
"span_data": {"type", …}, "error"}``. ``span_data`` types map as:

==============  =====================================================================
``agent``       the agent's activity (``name``); nested in another agent → O1 spawn
``function``    ``tool_call`` + ``tool_result`` (``name``, ``input``, ``output``)
``generation``  ``message`` turn with ``usage.input_tokens`` / ``output_tokens``
``response``    ``message`` turn (``usage`` when present)
``handoff``     O2 ``orchestrator_decision`` (``handoff:<to_agent>``) by ``from_agent``,
                then ``spawn`` of ``to_agent`` (first time) or a ``message`` to it
``guardrail``   ``safety_event`` when ``triggered``, else structure
others          structure (``custom``, ``mcp_tools``, ``speech``, ``transcription`` …)
==============  =====================================================================

The spans are turned into generic spans with GenAI attributes and mapped by
:mod:`.otel`, so timing and parallelism are handled the same way.

>>> items = [
...  {"object": "trace", "id": "trace_1", "workflow_name": "triage"},
...  {"object": "trace.span", "id": "s1", "trace_id": "trace_1", "parent_id": None,
...   "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:02Z",
...   "span_data": {"type": "agent", "name": "Triage"}},
...  {"object": "trace.span", "id": "s2", "trace_id": "trace_1", "parent_id": "s1",
...   "started_at": "2025-01-01T00:00:01Z", "ended_at": "2025-01-01T00:00:01Z",
...   "span_data": {"type": "handoff", "from_agent": "Triage", "to_agent": "Billing"}},
...  {"object": "trace.span", "id": "s3", "trace_id": "trace_1", "parent_id": None,
...   "started_at": "2025-01-01T00:00:02Z", "ended_at": "2025-01-01T00:00:04Z",
...   "span_data": {"type": "agent", "name": "Billing"}},
...  {"object": "trace.span", "id": "s4", "trace_id": "trace_1", "parent_id": "s3",
...   "started_at": "2025-01-01T00:00:02Z", "ended_at": "2025-01-01T00:00:03Z",
...   "span_data": {"type": "generation", "usage": {"input_tokens": 9, "output_tokens": 3}}}]
>>> tr = from_items(items, "x.json")[0][0]
>>> [(e.type.value, e.agent, e.to) for e in tr.events], tr.task_id
([('orchestrator_decision', 'Triage', None), ('spawn', 'Triage', 'Billing'), ('message', 'Billing', None)], 'triage')
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..core.trace import Trace
from ..errors import TraceDecodeError
from ._common import ContentMode, iter_jsonl, load_json, parse_ts
from ._report import ImportReport
from ._spans import Span
from .otel import _Mapper, dedupe_spans

__all__ = ["from_items", "looks_like", "read"]


def looks_like(doc: Any) -> bool:
    """True for a decoded document of OpenAI Agents SDK trace items."""
    items = doc.get("data") if isinstance(doc, dict) else doc
    if isinstance(doc, dict) and doc.get("object") in ("trace", "trace.span"):
        return True
    return isinstance(items, list) and any(isinstance(i, dict) and i.get("object") in ("trace", "trace.span")
                                           for i in items[:50])


def read(paths: Sequence[str | os.PathLike[str]], *, content: ContentMode = "hash",
         report: ImportReport | None = None) -> list[Trace]:
    """Import OpenAI Agents SDK export files (JSON document or JSON lines)."""
    report = report if report is not None else ImportReport(format="openai-agents")
    traces: list[Trace] = []
    for p in map(Path, paths):
        report.sources.append(str(p))
        try:
            doc = load_json(p, p.name, report)
            items = doc.get("data") if isinstance(doc, dict) and "data" in doc else doc
            items = items if isinstance(items, list) else [items]
        except TraceDecodeError:
            items = [obj for _, obj in iter_jsonl(p, p.name, report)]
        if not looks_like(items):
            report.count("<document>", "unknown")
            report.error("import.wrong-format", f"{p.name}:$", "no OpenAI Agents SDK items (object: trace / trace.span)",
                         "use `orchestrace import auto`, or the matching format")
            continue
        got, _ = from_items(items, p.name, content=content, report=report)
        traces.extend(got)
    return traces


def from_items(items: list[Any], label: str, *, content: ContentMode = "hash",
               report: ImportReport | None = None) -> tuple[list[Trace], ImportReport]:
    """Traces from already-decoded SDK items (one per ``trace_id``)."""
    report = report if report is not None else ImportReport(format="openai-agents")
    heads: dict[str, dict[str, Any]] = {}
    spans: dict[str, list[Span]] = {}
    for k, it in enumerate(items):
        where = f"{label}:$[{k}]"
        if not isinstance(it, dict):
            report.count("<item>", "unreadable")
            report.error("import.not-object", where, "item is not an object", "skipped")
            continue
        obj = it.get("object")
        if obj == "trace":
            heads[str(it.get("id"))] = it
            report.count("trace", "structure", "trace header (task id, group id)")
        elif obj == "trace.span":
            try:
                s = _span(it, label)
            except (TypeError, ValueError, AttributeError, KeyError):  # a field of the wrong type
                s = None
            if s is None:
                report.count("trace.span", "unreadable")
                report.error("import.bad-span", where, "span without id, trace_id or started_at", "skipped")
                continue
            spans.setdefault(s.trace_id, []).append(s)
        else:
            report.count(str(obj), "unknown")
            report.problem("import.unknown-record", where, f"unknown item object {obj!r}", "counted as unknown")
    out = []
    for tid, group in spans.items():
        group = dedupe_spans(tid, group, label, report)
        tr = _Mapper(tid, group, label, content, report).run()
        if tr is None:
            continue
        head = heads.get(tid, {})
        meta = dict(tr.meta, source_format="openai-agents")
        for key in ("group_id", "metadata"):
            if head.get(key):
                meta[key] = head[key]
        tr = msgspec.structs.replace(tr, task_id=str(head.get("workflow_name") or tr.task_id), system="openai-agents",
                                     meta=meta)
        out.append(tr)
    return out, report


def _span(it: dict[str, Any], label: str) -> Span | None:
    sid, tid = it.get("id"), it.get("trace_id")
    start = parse_ts(it.get("started_at"))
    if not sid or not tid or start is None:
        return None
    end = parse_ts(it.get("ended_at"))
    d = it.get("span_data")
    if not isinstance(d, dict):
        d = {}
    typ = d.get("type")
    a: dict[str, Any] = {"openai_agents.span_type": typ}
    name = str(typ or "span")
    if typ == "agent":
        a.update({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": d.get("name") or "agent"})
        name = f"invoke_agent {d.get('name')}"
    elif typ == "function":
        a.update({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": d.get("name") or "function",
                  "gen_ai.tool.call.arguments": d.get("input"), "gen_ai.tool.call.result": d.get("output")})
        name = f"execute_tool {d.get('name')}"
    elif typ in ("generation", "response"):
        u = d.get("usage")
        if not isinstance(u, dict):
            u = {}
        a.update({"gen_ai.operation.name": "chat", "gen_ai.request.model": d.get("model"),
                  "gen_ai.usage.input_tokens": u.get("input_tokens", u.get("prompt_tokens")),
                  "gen_ai.usage.output_tokens": u.get("output_tokens", u.get("completion_tokens"))})
        if d.get("output") is not None:
            a["gen_ai.output.messages"] = json.dumps(d.get("output"), default=str)
        name = "chat"
    elif typ == "handoff":
        a.update({"orchestrace.handoff.to": d.get("to_agent") or "?", "orchestrace.handoff.from": d.get("from_agent")})
        name = f"handoff {d.get('to_agent')}"
    elif typ == "guardrail":
        a["orchestrace.guardrail.triggered"] = bool(d.get("triggered"))
        name = f"guardrail {d.get('name')}"
    elif typ == "custom":
        name = f"custom {d.get('name')}"
    a = {k: v for k, v in a.items() if v is not None}
    return Span(trace_id=str(tid), span_id=str(sid), parent_id=str(it["parent_id"]) if it.get("parent_id") else None,
                name=name, kind="internal", start=start, end=end if end is not None else start, attrs=a,
                service=None, error=bool(it.get("error")), where=f"{label}#{sid}", links=[], resource={})
