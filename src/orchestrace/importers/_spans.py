"""Span JSON shapes → one flat :class:`Span` list (OTLP JSON, Jaeger JSON, OTel SDK JSON).

* **OTLP JSON** — ``{"resourceSpans" | "batches": [{"resource", "scopeSpans" |
  "instrumentationLibrarySpans": [{"spans": [...]}]}]}``, ids in hex, times in ns,
  attributes as ``[{"key", "value": {"stringValue" | "intValue" | …}}]``; also one such
  request per line (the collector's file exporter).
* **Jaeger JSON** — ``{"data": [{"traceID", "spans": [{"spanID", "operationName",
  "references", "startTime" µs, "duration" µs, "tags", "processID"}], "processes"}]}``.
* **OTel SDK JSON** — ``{"spans": [...]}`` or a list of ``ReadableSpan.to_json()``
  objects (``context.span_id``, ``parent.span_id``, ``start_time`` ns, ``attributes``
  dict), as written by any-agent.

>>> doc = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
...   "value": {"stringValue": "svc"}}]}, "scopeSpans": [{"spans": [{"traceId": "ab",
...   "spanId": "01", "name": "chat gpt", "startTimeUnixNano": "1000000000",
...   "endTimeUnixNano": "3000000000", "attributes": [{"key": "gen_ai.usage.input_tokens",
...   "value": {"intValue": "7"}}]}]}]}]}
>>> [(s.name, s.start, s.end, s.attrs["gen_ai.usage.input_tokens"], s.service) for s in parse_spans(doc, "f")[0]]
[('chat gpt', 1.0, 3.0, 7, 'svc')]
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

__all__ = ["Span", "parse_spans", "shape_of"]


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str  # internal, client, server, producer, consumer
    start: float  # seconds since the epoch
    end: float
    attrs: dict[str, Any]
    service: str | None
    error: bool
    where: str  # file + span id, for Event.source
    links: list[str]
    resource: dict[str, Any]


def shape_of(doc: Any) -> str | None:
    """``"otlp"``, ``"jaeger"``, ``"sdk"`` or None for a decoded JSON document."""
    if isinstance(doc, dict):
        if "resourceSpans" in doc or "batches" in doc:
            return "otlp"
        data = doc.get("data")
        if isinstance(data, list) and (not data or isinstance(data[0], dict) and "spans" in data[0] and "traceID" in data[0]):
            return "jaeger"
        if "traceID" in doc and "spans" in doc:
            return "jaeger"
        spans = doc.get("spans")
        if isinstance(spans, list) and (not spans or isinstance(spans[0], dict) and "context" in spans[0]):
            return "sdk"
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "context" in doc[0] and "name" in doc[0]:
        return "sdk"
    return None


def parse_spans(doc: Any, label: str) -> tuple[list[Span], list[str]]:
    """All spans of a document, and a list of problems (``path: message``) for bad spans."""
    shape = shape_of(doc)
    bad: list[str] = []
    if shape == "otlp":
        return _otlp(doc, label, bad), bad
    if shape == "jaeger":
        return _jaeger(doc, label, bad), bad
    if shape == "sdk":
        return _sdk(doc, label, bad), bad
    return [], [f"{label}:$: not an OTLP, Jaeger or OTel SDK span document"]


# ----------------------------------------------------------------------------- values
def _any_value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "arrayValue" in v:
        return [_any_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return _kv((v["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _kv(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, dict):
        return dict(items)
    for it in items or []:
        if isinstance(it, dict) and isinstance(it.get("key"), str):
            out[it["key"]] = _any_value(it.get("value"))
    return out


def _ns(v: Any) -> float | None:
    """Seconds from nanoseconds (int or digit string) or from an ISO-8601 time, the form the
    OpenTelemetry Python SDK's ``ReadableSpan.to_json()`` writes (``2023-11-14T22:13:21.500000Z``).

    >>> _ns("1700000000500000000"), _ns("2023-11-14T22:13:20.500000Z"), _ns("noon")
    (1700000000.5, 1700000000.5, None)
    """
    try:
        return int(v) / 1e9
    except (TypeError, ValueError):
        pass
    if isinstance(v, str) and "T" in v:
        try:
            t = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
        return t.timestamp() if t.tzinfo is not None else t.replace(tzinfo=timezone.utc).timestamp()
    return None


def _kind(v: Any) -> str:
    names = {0: "internal", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
    if isinstance(v, int):
        return names.get(v, "internal")
    s = str(v or "internal").lower().replace("span_kind_", "").replace("spankind.", "")
    return s if s in ("internal", "server", "client", "producer", "consumer") else "internal"


def _hexid(v: Any, width: int) -> str | None:
    if v is None or v == "" or v == 0:
        return None
    if isinstance(v, int):
        return format(v, f"0{width}x")
    s = str(v)
    return s[2:] if s.startswith("0x") else s


# ----------------------------------------------------------------------------- shapes
def _otlp(doc: dict[str, Any], label: str, bad: list[str]) -> list[Span]:
    out = []
    groups = doc.get("resourceSpans") or doc.get("batches") or []
    for gi, grp in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(grp, dict):
            bad.append(f"{label}:$.resourceSpans[{gi}]: not an object")
            continue
        res = _kv((grp.get("resource") or {}).get("attributes"))
        svc = res.get("service.name")
        scopes = grp.get("scopeSpans") or grp.get("instrumentationLibrarySpans") or []
        for si, sc in enumerate(scopes if isinstance(scopes, list) else []):
            for k, s in enumerate((sc or {}).get("spans") or []):
                path = f"{label}:$.resourceSpans[{gi}].scopeSpans[{si}].spans[{k}]"
                sid = _hexid(s.get("spanId"), 16) if isinstance(s, dict) else None
                start, end = (_ns(s.get("startTimeUnixNano")), _ns(s.get("endTimeUnixNano"))) if isinstance(s, dict) else (None, None)
                if sid is None or start is None:
                    bad.append(f"{path}: span without spanId or startTimeUnixNano")
                    continue
                status = s.get("status") or {}
                code = status.get("code")
                out.append(Span(
                    trace_id=_hexid(s.get("traceId"), 32) or "trace", span_id=sid,
                    parent_id=_hexid(s.get("parentSpanId"), 16), name=str(s.get("name") or ""),
                    kind=_kind(s.get("kind")), start=start, end=end if end is not None else start,
                    attrs=_kv(s.get("attributes")), service=svc if isinstance(svc, str) else None,
                    error=code in (2, "STATUS_CODE_ERROR", "ERROR"), where=f"{label}#{sid}",
                    links=[_hexid(lk.get("spanId"), 16) or "" for lk in s.get("links") or [] if isinstance(lk, dict)],
                    resource=res,
                ))
    return out


def _jaeger(doc: dict[str, Any], label: str, bad: list[str]) -> list[Span]:
    out = []
    data = doc.get("data")
    traces = data if isinstance(data, list) else [doc]
    for ti, tr in enumerate(traces):
        if not isinstance(tr, dict):
            bad.append(f"{label}:$.data[{ti}]: not an object")
            continue
        procs = tr.get("processes") or {}
        for k, s in enumerate(tr.get("spans") or []):
            path = f"{label}:$.data[{ti}].spans[{k}]"
            if not isinstance(s, dict) or not s.get("spanID") or not isinstance(s.get("startTime"), (int, float)):
                bad.append(f"{path}: span without spanID or startTime")
                continue
            tags = {t["key"]: t.get("value") for t in s.get("tags") or [] if isinstance(t, dict) and "key" in t}
            parent = None
            for ref in s.get("references") or []:
                if isinstance(ref, dict) and ref.get("refType", "CHILD_OF") == "CHILD_OF":
                    parent = ref.get("spanID")
                    break
            proc = procs.get(s.get("processID")) or {}
            start = s["startTime"] / 1e6
            dur = s.get("duration")
            if not isinstance(dur, (int, float)):
                dur = 0
            out.append(Span(
                trace_id=str(s.get("traceID") or tr.get("traceID") or "trace"), span_id=str(s["spanID"]),
                parent_id=parent, name=str(s.get("operationName") or ""), kind=_kind(tags.get("span.kind")),
                start=start, end=start + dur / 1e6, attrs=tags, service=proc.get("serviceName"),
                error=tags.get("error") in (True, "true") or tags.get("otel.status_code") == "ERROR",
                where=f"{label}#{s['spanID']}", links=[], resource={"service.name": proc.get("serviceName")},
            ))
    return out


def _sdk(doc: Any, label: str, bad: list[str]) -> list[Span]:
    spans = doc.get("spans") if isinstance(doc, dict) else doc
    out = []
    for k, s in enumerate(spans or []):
        path = f"{label}:$.spans[{k}]"
        ctx = s.get("context") if isinstance(s, dict) else None
        start = _ns(s.get("start_time")) if isinstance(s, dict) else None
        if not isinstance(ctx, dict) or start is None:
            bad.append(f"{path}: span without context or start_time")
            continue
        parent = s.get("parent_id") or (s.get("parent") or {}).get("span_id") if isinstance(s.get("parent"), dict) or s.get("parent_id") else None
        res = s.get("resource") or {}
        res_attrs = res.get("attributes") if isinstance(res, dict) else {}
        res_attrs = res_attrs if isinstance(res_attrs, dict) else {}
        status = s.get("status") or {}
        sid = _hexid(ctx.get("span_id"), 16) or f"span{k}"
        end = _ns(s.get("end_time"))
        out.append(Span(
            trace_id=_hexid(ctx.get("trace_id"), 32) or "trace", span_id=sid, parent_id=_hexid(parent, 16),
            name=str(s.get("name") or ""), kind=_kind(s.get("kind")), start=start,
            end=end if end is not None else start, attrs=dict(s.get("attributes") or {}),
            service=res_attrs.get("service.name"),
            error=str(status.get("status_code", "")).lower() == "error", where=f"{label}#{sid}", links=[],
            resource=res_attrs,
        ))
    return out
