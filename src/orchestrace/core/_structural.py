"""The structural layer: bytes → typed traces, or located problems (never an exception).

Fast path: one typed msgspec decode of the whole document (or of the JSONL stream as one
array). Only when it fails does the *tolerant* path run: an untyped decode, then a typed
conversion of each part (every event, edge, trace field) on its own, so that **all**
structural problems are found, each with its JSON path; the parts that do convert are
kept so that the semantic layer can still check them.

Paths are JSON paths into the document (``$.events[12].to``). In a JSONL stream they are
prefixed by the 1-based line: ``line 13: $.event.to``.

Used by :mod:`orchestrace.core.io` (which raises on errors) and :mod:`orchestrace.core._validate`
(which reports them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any, NamedTuple

import msgspec
import numpy as np

from ..errors import did_you_mean
from ..vocab import CreditUnit, Decision, EdgeType, EventType, RewardFamily, Topology
from ._located import (
    _HINTS,
    WARNING,
    Collector,
    _jtype,
    _line_col,
    _path_at,
    short,
)
from .trace import SCHEMA_VERSION, Edge, Event, Outcome, Signal, Trace


# ----------------------------------------------------------------------------- locations
class Locator:
    """Maps the index of a kept event/edge (and trace fields) to the path it came from."""

    def __init__(self, root: str = "$", event_pos: np.ndarray | None = None,
                 edge_pos: np.ndarray | None = None, event_lines: list[int] | None = None,
                 edge_lines: list[int] | None = None, header_line: int | None = None,
                 end_line: int | None = None) -> None:
        self.root = root
        self.event_pos, self.edge_pos = event_pos, edge_pos
        self.event_lines, self.edge_lines = event_lines, edge_lines
        self.header_line, self.end_line = header_line, end_line

    @staticmethod
    def _tail(field: str | None) -> str:
        return f".{field}" if field else ""

    def event(self, i: int, field: str | None = None) -> str:
        if self.event_lines is not None:
            return f"line {self.event_lines[i]}: $.event{self._tail(field)}"
        pos = i if self.event_pos is None else int(self.event_pos[i])
        return f"{self.root}.events[{pos}]{self._tail(field)}"

    def edge(self, j: int, field: str | None = None) -> str:
        if self.edge_lines is not None:
            return f"line {self.edge_lines[j]}: $.edge{self._tail(field)}"
        pos = j if self.edge_pos is None else int(self.edge_pos[j])
        return f"{self.root}.edges[{pos}]{self._tail(field)}"

    def field(self, name: str) -> str:
        if self.event_lines is None:
            return f"{self.root}.{name}"
        top = name.split(".")[0].split("[")[0]
        if top in _HEADER_KEYS and self.header_line is not None:
            return f"line {self.header_line}: $.header.{name}"
        if self.end_line is not None:
            return f"line {self.end_line}: $.end.{name}"
        return f"$.{name}"


class Decoded(NamedTuple):
    """One decoded trace, where its parts came from, and whether it is in reference form."""

    trace: Trace
    loc: Locator
    reference: bool
    #: lazily lists the reference schema's required trace fields that the document lacks
    ref_missing: Callable[[], list[str]] = lambda: []
    #: every float is known finite (the strict typed JSON decode rejects NaN/Infinity/1e400)
    finite: bool = False
    #: decoded from a JSONL stream (one record per line), not from one JSON document
    stream: bool = False


# ----------------------------------------------------------------------------- decoding
class _Header(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    trace_id: str
    task_id: str
    schema_version: str = SCHEMA_VERSION
    system: str | None = None
    topology: Topology | None = None
    meta: dict[str, Any] = {}


class _End(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    rewards: dict[str, float] = {}
    costs: dict[str, float] = {}
    metrics: dict[str, float] = {}
    outcome: Outcome | None = None
    signals: tuple[Signal, ...] = ()


class _Line(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    header: _Header | None = None
    event: Event | None = None
    edge: Edge | None = None
    end: _End | None = None


class _RefProbe(msgspec.Struct):
    edges: msgspec.Raw = msgspec.Raw()
    rewards: msgspec.Raw = msgspec.Raw()
    costs: dict[str, msgspec.Raw] | None = None


_HEADER_KEYS = frozenset(_Header.__struct_fields__)
_trace_decoder = msgspec.json.Decoder(Trace)
_lines_decoder = msgspec.json.Decoder(list[_Line])
_line_decoder = msgspec.json.Decoder(_Line)
_raw_decoder = msgspec.json.Decoder(float_hook=float)  # 1e400 → inf, reported later with its path
_probe_decoder = msgspec.json.Decoder(_RefProbe)
_TRACE_FIELDS = {f.encode_name: f for f in msgspec.structs.fields(Trace)}
_EVENT_FIELDS = frozenset(f.encode_name for f in msgspec.structs.fields(Event))
#: event fields of the reference schema; the other Event fields are native extensions
REFERENCE_EVENT_FIELDS = frozenset({"id", "t", "type", "agent", "role", "from", "to", "tool", "content_ref", "trusted"})
_ENUM_OF_KEY: dict[str, type[Enum]] = {"topology": Topology, "kind": Decision, "unit": CreditUnit, "family": RewardFamily}
_NON_SPACE = re.compile(rb"\S")
_EVENT_ID = re.compile(rb'"id"\s*:\s*"([^"\\]*)"')
_JSONL_HEAD = re.compile(rb'\A\s*\{\s*"(?:header|event|edge|end)"\s*:')
#: the first line of a TOML file: a table header ``[name]`` / ``[[name]]`` or ``key = …`` (never JSON)
_TOML_LINE = re.compile(rb'(?:\[\[?\s*([A-Za-z_][\w.-]*)\s*\]\]?[ \t]*(?:#[^\n]*)?\r?(?:\n|\Z)'
                        rb'|([A-Za-z_][\w.-]*)[ \t]*=)')
_BAD_NUMBER = re.compile(rb"-?(?:NaN|Infinity|inf|nan)")


def decode_bytes(data: bytes, source: str, col: Collector) -> list[Decoded]:
    """Decode a JSON document or JSONL stream; structural problems go to ``col``."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        col.add("json.bom", "line 1, column 1", "the file starts with a UTF-8 byte-order mark; it was ignored",
                "save the file as UTF-8 without BOM (JSON forbids one, RFC 8259 §8.1)", WARNING)
    if _NON_SPACE.search(data) is None:
        col.add("json.empty", "$", "input is empty" if not data else "input holds only whitespace")
        return []
    if _JSONL_HEAD.match(data):
        return list(_decode_jsonl(data, source, col))
    return _decode_document(data, col)


def check_utf8(data: bytes, col: Collector) -> bytes:
    """Report the first invalid UTF-8 byte; return the data with bad bytes replaced."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError as exc:
        line, column = _line_col(data, exc.start)
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
        col.add("json.invalid-utf8", f"line {line}, column {column}",
                f"invalid UTF-8 byte {data[exc.start:exc.start + 1]!r} at byte {exc.start} "
                f"(line {line}, column {column})" + ("; the file looks like UTF-16" if utf16 else ""),
                "save the file as UTF-8" + (" (not UTF-16)" if utf16 else ""))
        return data.decode("utf-8", "replace").encode("utf-8")  # keep checking the rest


def _decode_document(data: bytes, col: Collector, utf8_checked: bool = False) -> list[Decoded]:
    try:
        tr = _trace_decoder.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):  # ValidationError is a DecodeError
        if not utf8_checked:  # slow path only: is it UTF-8 at all?
            fixed = check_utf8(data, col)
            if fixed is not data:
                return _decode_document(fixed, col, True)
    else:
        # native writers put schema_version last: look at the tail before the whole text
        reference = data.rfind(b'"schema_version"', max(0, len(data) - 65536)) < 0 and b'"schema_version"' not in data
        # a non-empty value proves presence; only empty (default-looking) ones need a probe
        ambiguous = not tr.edges or not tr.rewards or not {"tokens", "wall_clock_s"} <= tr.costs.keys()
        missing = (lambda: reference_missing(_probe_raw(data))) if ambiguous else (lambda: [])
        return [Decoded(tr, Locator(), reference, missing, True)]
    first = _NON_SPACE.search(data).start()  # type: ignore[union-attr]  # (not empty: checked)
    head = data[first:first + 1]
    toml = _TOML_LINE.match(data, first)
    if toml is not None and toml.group(1) not in (b"true", b"false", b"null"):  # never the start of JSON
        line = data[first:].split(b"\n", 1)[0].strip().decode("utf-8", "replace")[:60]
        col.add("json.toml", "line 1", f"the file looks like TOML, not JSON (it starts with `{line}`)",
                "a trace is JSON; a reward spec (TOML) is passed with --spec SPEC")
        return []
    if head == b"[":  # no need to parse (maybe 10,000-deep) arrays to know the type is wrong
        col.add("schema.type", "$", "expected a JSON object (one trace), got an array",
                "a trace is an object with trace_id, task_id, events, …; for many traces use a JSONL stream")
        return []
    if head != b"{":
        raw = _raw_or_none(data, col, scalar_ok=True)
        if raw is not _FAIL:
            col.add("schema.type", "$", f"expected a JSON object (one trace), got {_jtype(raw)}",
                    "a trace is an object with trace_id, task_id, events, …; "
                    "for many traces use a JSONL stream")
        return []
    raw = _raw_or_none(data, col)
    if raw is _FAIL:
        return []
    reference = not (isinstance(raw, dict) and "schema_version" in raw)
    got = convert_trace(raw, col, reference=reference)
    if got is None:
        return []
    lacking = reference_missing(raw)
    return [got._replace(ref_missing=lambda: lacking)]


_FAIL: Any = object()


def _raw_or_none(data: bytes, col: Collector, *, scalar_ok: bool = False, prefix: str = "") -> Any:
    """Untyped decode; JSON syntax problems are located (line, column, JSON path)."""
    try:
        return _raw_decoder.decode(data)
    except RecursionError:
        col.add("json.too-deep", prefix + "$", "nesting is deeper than the parser's limit (~1000 levels)")
        return _FAIL
    except msgspec.DecodeError as exc:
        msg = str(exc)
    m = re.search(r"\(byte (\d+)\)", msg)
    if "truncated" in msg:
        if prefix:
            col.add("json.malformed", prefix + "$", "the line ends before its JSON record is complete")
        else:
            col.add("json.truncated", "$", "the JSON text ends before the document is complete")
        return _FAIL
    off = int(m.group(1)) if m else 0
    line, column = _line_col(data, off)
    where = f"line {line}, column {column}" if not prefix else f"column {column}"
    path = prefix + _path_at(data, off)
    bad = _BAD_NUMBER.match(data, off)
    if bad:
        col.add("json.malformed", path, f"{bad.group().decode()} is not a JSON number ({where})",
                "NaN and Infinity are not valid JSON; write null or a finite number")
        try:  # the stdlib reader accepts NaN/Infinity: keep checking everything else
            return json.loads(data)
        except (ValueError, RecursionError):
            return _FAIL
    col.add("json.malformed", path, f"{msg.removeprefix('JSON is malformed: ')} ({where})")
    return _FAIL


def _probe_raw(data: bytes) -> dict[str, Any]:
    p = _probe_decoder.decode(data)
    out: dict[str, Any] = {}
    if len(p.edges):
        out["edges"] = True
    if len(p.rewards):
        out["rewards"] = True
    if p.costs is not None:
        out["costs"] = p.costs
    out["events"] = True
    return out


def reference_missing(raw: dict[str, Any]) -> list[str]:
    """Required fields of the reference schema that ``raw`` lacks (native traces may omit them)."""
    out = [key for key in ("edges", "rewards", "costs") if key not in raw]
    costs = raw.get("costs")
    if isinstance(costs, dict):
        out += [f"costs.{key}" for key in ("tokens", "wall_clock_s") if key not in costs]
    return out


def convert_trace(raw: Any, col: Collector, *, reference: bool, root: str = "$") -> Decoded | None:
    """Tolerant typed conversion of an untyped trace: every bad part is a located problem.

    Parts that fail are dropped (their problems recorded); the rest are kept so that the
    semantic layer can still check them. Returns None when ``raw`` is not an object.
    """
    if not isinstance(raw, dict):
        col.add("schema.type", root, f"expected a JSON object (one trace), got {_jtype(raw)}")
        return None
    if raw and not any(k in _TRACE_FIELDS for k in raw):  # a config or some other JSON: one problem, not 11
        keys = ", ".join(short(k, 30) for k in list(raw)[:5]) + (", …" if len(raw) > 5 else "")
        col.add("schema.not-a-trace", root, f"a JSON object with none of a trace's fields (its keys: {keys}); "
                "this is not a trace", "a trace has trace_id, task_id and events (see `orchestrace schema`); "
                "other formats are read by `orchestrace import`")
        return None
    fields: dict[str, Any] = {}
    event_pos = edge_pos = None
    for key, val in raw.items():
        path = f"{root}.{key}"
        info = _TRACE_FIELDS.get(key)
        if info is None:
            col.add("schema.unknown-field", path, f"unknown trace field {short(key)}",
                    did_you_mean(key, list(_TRACE_FIELDS)) or _HINTS["schema.unknown-field"])
        elif key == "events":
            fields["events"], event_pos = _convert_list(val, path, col, lambda v, p: _convert_event(v, p, col, reference))
        elif key == "edges":
            fields["edges"], edge_pos = _convert_list(val, path, col, lambda v, p: _convert_as(v, Edge, p, col))
        elif key == "signals":
            fields["signals"], _ = _convert_list(val, path, col, lambda v, p: _convert_as(v, Signal, p, col))
        elif key in ("rewards", "costs", "metrics"):
            fields[key] = _convert_number_map(val, path, col)
        else:
            got = _convert_as(val, info.type, path, col)
            if got is not _FAIL:
                fields[key] = got
    for key in ("trace_id", "task_id", "events"):
        if key not in raw:
            col.add("schema.missing-field", root, f"trace has no `{key}`")
            col.missing_fields.add(key)
        fields.setdefault(key, () if key == "events" else "")
    return Decoded(Trace(**fields), Locator(root, event_pos, edge_pos), reference)


def _convert_list(val: Any, path: str, col: Collector,
                  one: Callable[[Any, str], Any]) -> tuple[tuple[Any, ...], np.ndarray | None]:
    if not isinstance(val, list):
        col.add("schema.type", path, f"expected an array, got {_jtype(val)}")
        return (), None
    out, pos = [], []
    for i, item in enumerate(val):
        got = one(item, f"{path}[{i}]")
        if got is not _FAIL:
            out.append(got)
            pos.append(i)
    return tuple(out), (None if len(pos) == len(val) else np.asarray(pos, dtype=np.int64))


def _convert_number_map(val: Any, path: str, col: Collector) -> dict[str, float]:
    if not isinstance(val, dict):
        col.add("schema.type", path, f"expected an object of numbers, got {_jtype(val)}")
        return {}
    out = {}
    for k, v in val.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(v)
        else:
            col.add("schema.type", f"{path}.{k}", f"expected a number, got {_jtype(v)} {short(v)}")
    return out


def _convert_event(val: Any, path: str, col: Collector, reference: bool) -> Any:
    if not isinstance(val, dict):
        col.add("schema.type", path, f"expected an event object, got {_jtype(val)}")
        if isinstance(val, list) and val and isinstance(val[0], str):
            col.dropped_ids.add(val[0])
        return _FAIL
    extra = [k for k in val if k not in _EVENT_FIELDS]
    if extra:
        if not reference:
            for k in extra:
                col.add("schema.unknown-field", f"{path}.{k}",
                        f"unknown event field {short(k)} (kept in `attrs`)",
                        did_you_mean(k, sorted(_EVENT_FIELDS)) or "native traces keep extra fields in `attrs`",
                        WARNING)
        orig, val = val, {k: v for k, v in val.items() if k in _EVENT_FIELDS}
        if val.get("attrs") is None or isinstance(val["attrs"], dict):
            val["attrs"] = {**(val.get("attrs") or {}), **{k: orig[k] for k in extra}}
    for _ in range(len(val) + 1):
        try:
            return msgspec.convert(val, Event)
        except msgspec.ValidationError as exc:
            msg, sub = _split(exc)
            field = sub[2:].split(".")[0].split("[")[0] if sub.startswith("$.") else ""
            if reference and field in val and field not in REFERENCE_EVENT_FIELDS and field != "attrs":
                # a schema-valid reference event whose extra property collides with a native field
                val = dict(val)
                moved = val.pop(field)
                attrs = val.get("attrs") if isinstance(val.get("attrs"), dict) else {}
                val["attrs"] = {**attrs, field: moved}
                col.add("reference.extra-moved", f"{path}.{field}",
                        f"extra property {field!r} = {short(moved)} does not fit the native field "
                        f"of that name ({msg}); kept in `attrs`",
                        "rename the property, or give it the native type (see `orchestrace schema`)",
                        WARNING)
                continue
            _report(col, msg, path + sub[1:], val)
            if isinstance(val.get("id"), str):
                col.dropped_ids.add(val["id"])
            return _FAIL
    return _FAIL  # pragma: no cover - every retry removes one field


def _convert_as(val: Any, typ: Any, path: str, col: Collector) -> Any:
    try:
        return msgspec.convert(val, typ)
    except msgspec.ValidationError as exc:
        msg, sub = _split(exc)
        _report(col, msg, path + sub[1:], val)
        return _FAIL


def _report(col: Collector, msg: str, path: str, _val: Any) -> None:
    code = "schema.type"
    hint = None
    if msg.startswith("Object missing required field"):
        code = "schema.missing-field"
    elif msg.startswith("Object contains unknown field"):
        code = "schema.unknown-field"
        m = re.search(r"`(.*)`", msg)
        hint = did_you_mean(m.group(1), _known_keys(path)) if m else None
    elif msg.startswith("Invalid enum value"):
        code = "schema.enum"
        m = re.match(r"Invalid enum value '(.*)'\Z", msg, re.S)
        value = m.group(1) if m else None
        msg = f"invalid value {short(value)}" if value is not None else msg
        enum = _enum_for(path)
        if enum is not None:
            choices = [str(e.value) for e in enum]
            hint = did_you_mean(value, choices) or f"use one of: {', '.join(dict.fromkeys(choices))}"
    elif msg.startswith("Number out of range"):
        code, msg = "number.non-finite", "number is beyond the float range"
    col.add(code, path, msg, hint)


def _known_keys(path: str) -> list[str]:
    tail = re.sub(r"\[\d+\]", "", path).rsplit(".", 1)[0]
    for suffix, struct in ((".decision", "DecisionPayload"), (".outcome", "Outcome"),
                           (".signals", "Signal"), (".edges", "Edge"), (".events", "Event")):
        if tail.endswith(suffix):
            import orchestrace.core.trace as tm
            return [f.encode_name for f in msgspec.structs.fields(getattr(tm, struct))]
    return list(_TRACE_FIELDS)


def _enum_for(path: str) -> type[Enum] | None:
    key = path.rsplit(".", 1)[-1]
    if key == "type":
        return EdgeType if ".edge" in path else EventType
    return _ENUM_OF_KEY.get(key)


def _split(exc: Exception) -> tuple[str, str]:
    """``("Expected `str`, got `int`", "$.events[0].to")`` from a msgspec error."""
    msg = str(exc)
    if " - at `" in msg:
        msg, _, rest = msg.partition(" - at `")
        return msg, rest.rstrip("`")
    return msg, "$"


# ----------------------------------------------------------------------------- JSONL
def _decode_jsonl(data: bytes, source: str, col: Collector) -> Iterator[Decoded]:
    lines = data.split(b"\n")
    nonblank = [i for i, ln in enumerate(lines) if ln.strip()]
    try:
        records = _lines_decoder.decode(b"[" + b",".join(lines[i] for i in nonblank) + b"]")
        numbered: list[tuple[int, Any]] = list(zip(nonblank, records, strict=True))
        finite = True
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        checked = check_utf8(data, col)
        if checked is not data:
            lines = checked.split(b"\n")
        numbered = _decode_lines_tolerant(lines, nonblank, col)
        finite = False
    for d in _assemble(numbered, col):
        yield d._replace(finite=finite, stream=True)


def _decode_lines_tolerant(lines: list[bytes], nonblank: list[int], col: Collector) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    last = nonblank[-1] if nonblank else -1
    ends_with_newline = lines[-1] == b""
    for i in nonblank:
        ln = lines[i]
        prefix = f"line {i + 1}: "
        try:
            out.append((i, _line_decoder.decode(ln)))
            continue
        except msgspec.ValidationError:
            pass
        except (msgspec.DecodeError, RecursionError):
            if i == last and not ends_with_newline and not _complete_json(ln):
                col.add("jsonl.truncated", f"line {i + 1}",
                        f"the last line is incomplete (cut by a crash?); the {len(out)} complete "
                        "records before it were read", "nothing to do unless the run is still writing",
                        WARNING)
                return out
        sub = Collector(col.cap)
        raw = _raw_or_none(ln, sub, prefix=prefix)
        if raw is not _FAIL:
            rec = _convert_record(raw, prefix, sub)
            if rec is not None:
                out.append((i, rec))
        else:  # remember the id of a broken event line, so edges to it are not "dangling"
            m = _EVENT_ID.search(ln)
            if m and ln.lstrip().startswith(b'{"event"'):
                sub.dropped_ids.add(m.group(1).decode("utf-8", "replace"))
        col.extend(sub.finish())
        col.dropped_ids |= sub.dropped_ids
    return out


def _complete_json(line: bytes) -> bool:
    try:
        _raw_decoder.decode(line)
        return True
    except (msgspec.DecodeError, RecursionError):
        return False


def _convert_record(raw: Any, prefix: str, col: Collector) -> Any:
    if not isinstance(raw, dict) or len(raw) != 1 or next(iter(raw)) not in ("header", "event", "edge", "end"):
        keys = list(raw) if isinstance(raw, dict) else _jtype(raw)
        col.add("jsonl.bad-record", prefix + "$", f"a record must hold exactly one of header/event/edge/end, got {short(keys)}",
                'write one of {"header":…}, {"event":…}, {"edge":…}, {"end":…} per line')
        return None
    kind, val = next(iter(raw.items()))
    path = f"{prefix}$.{kind}"
    if kind == "event":
        got = _convert_event(val, path, col, reference=False)
    elif kind == "edge":
        got = _convert_as(val, Edge, path, col)
    elif kind == "header":
        got = _convert_as(val, _Header, path, col)
    else:
        if isinstance(val, dict):
            val = dict(val)
            for key in ("rewards", "costs", "metrics"):
                if key in val:
                    val[key] = _convert_number_map(val[key], f"{path}.{key}", col)
        got = _convert_as(val, _End, path, col)
    return None if got is _FAIL else _Line(**{kind: got})


def _assemble(records: list[tuple[int, Any]], col: Collector) -> Iterator[Decoded]:
    header: _Header | None = None
    header_line = end_line = None
    events: list[Event] = []
    edges: list[Edge] = []
    ev_lines: list[int] = []
    ed_lines: list[int] = []
    end: _End | None = None

    def finish() -> Decoded:
        assert header is not None
        e = end or _End()
        tr = Trace(trace_id=header.trace_id, task_id=header.task_id, schema_version=header.schema_version,
                   system=header.system, topology=header.topology, meta=header.meta,
                   events=tuple(events), edges=tuple(edges), rewards=e.rewards, costs=e.costs,
                   metrics=e.metrics, outcome=e.outcome, signals=e.signals)
        return Decoded(tr, Locator(event_lines=ev_lines, edge_lines=ed_lines, header_line=header_line,
                                   end_line=end_line), False)

    for i, rec in records:
        kinds = [k for k in ("header", "event", "edge", "end") if getattr(rec, k) is not None]
        if len(kinds) != 1:
            col.add("jsonl.bad-record", f"line {i + 1}: $", f"record holds {kinds or 'none'} of header/event/edge/end",
                    'write one of {"header":…}, {"event":…}, {"edge":…}, {"end":…} per line')
            continue
        if rec.header is not None:
            if header is not None:
                if end is None:
                    _no_end(col, header_line)
                yield finish()
            header, header_line, end, end_line = rec.header, i + 1, None, None
            events, edges, ev_lines, ed_lines = [], [], [], []
        elif header is None:
            col.add("jsonl.no-header", f"line {i + 1}: $", "record before any header record",
                    'the stream must start with {"header": {"trace_id": …, "task_id": …}}')
            header = _Header(trace_id="", task_id="")
            header_line = None
            _append(rec, i, events, edges, ev_lines, ed_lines)
        elif rec.end is not None:
            end, end_line = rec.end, i + 1
        else:
            _append(rec, i, events, edges, ev_lines, ed_lines)
    if header is None:
        col.add("jsonl.no-header", "$", "the stream holds no header record", "start the stream with a header")
        return
    if end is None and not col.counts.get("jsonl.truncated"):  # a cut stream has no end: one warning
        _no_end(col, header_line)
    yield finish()


def _append(rec: Any, i: int, events: list[Event], edges: list[Edge], ev_lines: list[int], ed_lines: list[int]) -> None:
    if rec.event is not None:
        events.append(rec.event)
        ev_lines.append(i + 1)
    elif rec.edge is not None:
        edges.append(rec.edge)
        ed_lines.append(i + 1)


def _no_end(col: Collector, header_line: int | None) -> None:
    col.add("jsonl.no-end", f"line {header_line}: $" if header_line else "$",
            "the trace's stream has no end record (run still going, or crashed?)",
            "close the TraceWriter to write rewards/costs in an end record", WARNING)
