"""Span JSON shapes → one flat :class:`Span` list (OTLP JSON, Jaeger JSON, OTel SDK JSON).

:func:`_spans_of` reads a file's spans (one document or one request per line), reporting what it
cannot read; :func:`dedupe_spans` removes the repeated span ids of one trace.

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

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import TraceDecodeError
from ._common import iter_jsonl, load_json
from ._report import ImportReport

__all__ = ["Span", "dedupe_spans", "parse_spans", "shape_of"]


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
        return [_any_value(x) for x in _list(_obj(v["arrayValue"]).get("values"))]
    if "kvlistValue" in v:
        return _kv(_obj(v["kvlistValue"]).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _kv(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, dict):
        return dict(items)
    for it in _list(items):
        if isinstance(it, dict) and isinstance(it.get("key"), str):
            out[it["key"]] = _any_value(it.get("value"))
    return out


def _ns(v: Any) -> float | None:
    """Seconds from nanoseconds (int or digit string) or from an ISO-8601 time, the form the
    OpenTelemetry Python SDK's ``ReadableSpan.to_json()`` writes (``2023-11-14T22:13:21.500000Z``).
    None for anything else, or for a time that is not plausible (|t| ≥ 1e11 s, e.g. 400 digits).

    >>> _ns("1700000000500000000"), _ns("2023-11-14T22:13:20.500000Z"), _ns("noon"), _ns("1" * 400)
    (1700000000.5, 1700000000.5, None, None)
    """
    if isinstance(v, bool):
        return None
    try:
        t = int(v) / 1e9
        return t if abs(t) < 1e11 else None
    except (TypeError, ValueError, OverflowError):  # not an integer, or far beyond a float
        pass
    if isinstance(v, str) and "T" in v:
        try:
            dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
        return dt.timestamp() if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc).timestamp()
    return None


def _us(v: Any) -> float | None:
    """Seconds from Unix microseconds (Jaeger); None for a value that is not a plausible time."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    try:
        t = v / 1e6
    except OverflowError:
        return None
    return t if math.isfinite(t) and abs(t) < 1e11 else None


def _kind(v: Any) -> str:
    names = {0: "internal", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
    if isinstance(v, int):
        return names.get(v, "internal")
    s = str(v or "internal").lower().replace("span_kind_", "").replace("spankind.", "")
    return s if s in ("internal", "server", "client", "producer", "consumer") else "internal"


def _hexid(v: Any, width: int) -> str | None:
    if v is None or v == "" or v == 0 or isinstance(v, bool) or not isinstance(v, (str, int)):
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
        res = _kv(_obj(grp.get("resource")).get("attributes"))
        svc = res.get("service.name")
        scopes = grp.get("scopeSpans") or grp.get("instrumentationLibrarySpans") or []
        for si, sc in enumerate(scopes if isinstance(scopes, list) else []):
            for k, s in enumerate(_list(_obj(sc).get("spans"))):
                path = f"{label}:$.resourceSpans[{gi}].scopeSpans[{si}].spans[{k}]"
                try:
                    span = _otlp_span(s, label, res, svc)
                except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a field of the wrong type
                    bad.append(f"{path}: malformed span ({type(exc).__name__}: {str(exc)[:80]})")
                    continue
                if span is None:
                    bad.append(f"{path}: span without spanId or a readable startTimeUnixNano")
                    continue
                out.append(span)
    return out


def _otlp_span(s: Any, label: str, res: dict[str, Any], svc: Any) -> Span | None:
    if not isinstance(s, dict):
        return None
    sid = _hexid(s.get("spanId"), 16)
    start, end = _ns(s.get("startTimeUnixNano")), _ns(s.get("endTimeUnixNano"))
    if sid is None or start is None:
        return None
    code = _obj(s.get("status")).get("code")
    return Span(
        trace_id=_hexid(s.get("traceId"), 32) or "trace", span_id=sid,
        parent_id=_hexid(s.get("parentSpanId"), 16), name=_str(s.get("name")),
        kind=_kind(s.get("kind")), start=start, end=end if end is not None else start,
        attrs=_kv(s.get("attributes")), service=svc if isinstance(svc, str) else None,
        error=code in (2, "STATUS_CODE_ERROR", "ERROR"), where=f"{label}#{sid}",
        links=[_hexid(lk.get("spanId"), 16) or "" for lk in _list(s.get("links")) if isinstance(lk, dict)],
        resource=res,
    )


def _obj(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: Any) -> str:
    return v if isinstance(v, str) else "" if v is None else json.dumps(v, default=str)[:200]


def _jaeger(doc: dict[str, Any], label: str, bad: list[str]) -> list[Span]:
    out = []
    data = doc.get("data")
    traces = data if isinstance(data, list) else [doc]
    for ti, tr in enumerate(traces):
        if not isinstance(tr, dict):
            bad.append(f"{label}:$.data[{ti}]: not an object")
            continue
        procs = _obj(tr.get("processes"))
        for k, s in enumerate(_list(tr.get("spans"))):
            path = f"{label}:$.data[{ti}].spans[{k}]"
            try:
                span = _jaeger_span(s, tr, procs, label)
            except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a field of the wrong type
                bad.append(f"{path}: malformed span ({type(exc).__name__}: {str(exc)[:80]})")
                continue
            if span is None:
                bad.append(f"{path}: span without spanID or a readable startTime")
                continue
            out.append(span)
    return out


def _jaeger_span(s: Any, tr: dict[str, Any], procs: dict[str, Any], label: str) -> Span | None:
    if not isinstance(s, dict) or not isinstance(s.get("spanID"), (str, int)) or not s.get("spanID"):
        return None
    start = _us(s.get("startTime"))
    if start is None:
        return None
    tags = {t["key"]: t.get("value") for t in _list(s.get("tags")) if isinstance(t, dict) and isinstance(t.get("key"), str)}
    parent = None
    for ref in _list(s.get("references")):
        if isinstance(ref, dict) and ref.get("refType", "CHILD_OF") == "CHILD_OF":
            parent = _hexid(ref.get("spanID"), 16)
            break
    pid = s.get("processID")
    proc = _obj(procs.get(pid) if isinstance(pid, str) else None)
    svc = proc.get("serviceName") if isinstance(proc.get("serviceName"), str) else None
    dur = s.get("duration")
    dur_s = _us(dur)  # None: not a plausible number of microseconds
    end = start if dur is None else start + dur_s if dur_s is not None else math.nan  # NaN: warned by the mapper
    return Span(
        trace_id=_str(s.get("traceID") or tr.get("traceID") or "trace"), span_id=str(s["spanID"]),
        parent_id=parent, name=_str(s.get("operationName")), kind=_kind(tags.get("span.kind")),
        start=start, end=end, attrs=tags, service=svc,
        error=tags.get("error") in (True, "true") or tags.get("otel.status_code") == "ERROR",
        where=f"{label}#{s['spanID']}", links=[], resource={"service.name": svc},
    )


def _sdk(doc: Any, label: str, bad: list[str]) -> list[Span]:
    spans = doc.get("spans") if isinstance(doc, dict) else doc
    out = []
    for k, s in enumerate(spans if isinstance(spans, list) else []):
        path = f"{label}:$.spans[{k}]"
        try:
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
                service=res_attrs.get("service.name") if isinstance(res_attrs.get("service.name"), str) else None,
                error=str(status.get("status_code", "")).lower() == "error", where=f"{label}#{sid}", links=[],
                resource=res_attrs,
            ))
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a field of the wrong type
            bad.append(f"{path}: malformed span ({type(exc).__name__}: {str(exc)[:80]})")
    return out


def _spans_of(p: Path, label: str, report: ImportReport, expect: str | None) -> list[Span]:
    try:
        doc = load_json(p, label, report)
        docs = [doc]
    except TraceDecodeError as exc:
        if any(pr.code in ("import.too-deep", "io.too-large") for pr in exc.problems):
            report.problems.extend(exc.problems)  # a JSON document, but not one we can read as lines either
            return []
        before = len(report.problems)
        docs = [obj for _, obj in iter_jsonl(p, label, report)]  # one request per line
        if not docs:
            if len(report.problems) == before or not any(pr.code.startswith("io.") for pr in report.problems[before:]):
                del report.problems[before:]  # not JSON lines either: the document's error says more
                report.problems.extend(exc.problems)
            return []
    spans: list[Span] = []
    if len(docs) > 1 and not any(shape_of(d) for d in docs):
        docs = docs[:1]  # JSON lines, none of them spans: report the file once
    for doc in docs:
        shape = shape_of(doc)
        if shape is None or (expect == "jaeger" and shape != "jaeger") or (expect == "otlp" and shape == "jaeger"):
            want = {"jaeger": "Jaeger JSON ({\"data\": [{\"traceID\", \"spans\"}]})",
                    "otlp": "OTLP JSON ({\"resourceSpans\"|\"batches\"}) or OTel SDK span JSON"}.get(expect or "", "span JSON")
            got = shape or "no span document"
            report.count("<document>", "unknown")
            report.error("import.wrong-format", f"{label}:$", f"expected {want}, found {got}",
                         "use `orchestrace import auto`, or the matching format" if shape else "check the file")
            continue
        parsed, bad = parse_spans(doc, label)
        for b in bad:
            path, _, msg = b.rpartition(": ")
            report.count("<span>", "unreadable")
            report.error("import.bad-span", path, msg, "the span was skipped")
        spans.extend(parsed)
    return spans


# ----------------------------------------------------------------------------- duplicates
_SPAN_FIELDS = ("name", "parent_id", "kind", "start", "end", "error", "attrs", "service", "links", "resource")


def dedupe_spans(tid: str, spans: list[Span], label: str, report: ImportReport) -> list[Span]:
    """The spans of one trace with repeated span ids removed (see :mod:`orchestrace.importers.otel`, "Duplicate spans")."""
    first: dict[str, Span] = {}
    copies: dict[str, int] = {}
    dropped = 0
    for s in spans:
        seen = first.get(s.span_id)
        if seen is None:
            first[s.span_id] = s
            continue
        copies[s.span_id] = copies.get(s.span_id, 1) + 1
        if s == seen:
            dropped += 1
            report.count("span/duplicate", "skipped", "identical copy of a span already read (same trace and span id)")
            continue
        diff = [f for f in _SPAN_FIELDS if getattr(s, f) != getattr(seen, f)]
        what = "; ".join(_diff(f, getattr(seen, f), getattr(s, f)) for f in diff[:3])
        report.count("span/duplicate", "skipped", "conflicting copy of a span id (error reported; first copy kept)")
        report.error("import.conflicting-span", f"{s.where} (copy {copies[s.span_id]})",
                     f"span id {s.span_id} of trace {tid} appears again with different content: {what}",
                     "span ids must be unique within a trace; fix the exporter, or split the file per run")
    if dropped:
        report.problem("import.duplicate-span", f"{label}#{tid}",
                       f"{dropped} identical duplicate span(s) of trace {tid} dropped "
                       f"({len(copies)} span id(s) repeated, e.g. {next(iter(copies))})",
                       "the file carries some spans more than once (an export or copy accident?); each was imported once")
    return list(first.values()) if copies else spans


def _diff(field: str, a: Any, b: Any) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        return f"{field} differ in {', '.join(keys[:4])}{' …' if len(keys) > 4 else ''}"
    return f"{field} {str(a)[:40]!r} vs {str(b)[:40]!r}"
