"""Shared machinery of the importers: reading records, time, content policy, a safe graph.

One field's value (a time, a count, a cost, a text) is read by :mod:`._values`, re-exported here.

:class:`Graph` is how every importer builds its trace. Edges are only ever drawn from
events that already exist into the new one (``deps``), so the causal edges form a DAG by
construction, and the new event's time is clamped to be no earlier than the *end* of
each of its causes (``t ≥ max(dep.t_end or dep.t)``): time never runs backwards along an
edge, even when the source records are out of order (each clamp is counted in the
report). Container activity (a Task call, an agent span) is written as an instantaneous
``spawn`` at its start and a ``return`` at its end, never as one long event, so that busy
time is not counted twice.

>>> g = Graph(content="hash")
>>> a = g.add("message", "main", 0.0, t_end=2.0, text="hi", source="s.jsonl:1")
>>> b = g.add("tool_call", "main", 1.0, deps=[(a, "causal")], tool="Bash")
>>> g.events[b].t, g.clamped          # clamped to the end of its cause
(2.0, 1)
>>> g.events[a].content_ref[:7], g.events[a].content is None
('sha256:', True)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from .._problems import Problem
from ..core.builder import TraceBuilder
from ..core.io import env_bytes, max_file_bytes, read_bytes
from ..core.trace import Event, Trace
from ..errors import TraceDecodeError
from ..vocab import EdgeType, EventType, Severity, Topology
from ._report import ImportReport
from ._values import MAX_COUNT, cost_value, count_value, parse_ts, text_of

__all__ = [
    "CONTENT_MODES",
    "MAX_COUNT",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "ContentMode",
    "Graph",
    "bad_field",
    "cost_value",
    "count_value",
    "decode_json",
    "iter_jsonl",
    "iter_lines",
    "load_json",
    "max_line_bytes",
    "nesting_depth",
    "parse_ts",
    "text_of",
]

ContentMode = Literal["keep", "hash", "drop"]
CONTENT_MODES: tuple[str, ...] = ("keep", "hash", "drop")

#: Lines longer than this are refused as unreadable (override with ``ORCHESTRACE_MAX_LINE_BYTES``).
MAX_LINE_BYTES = 64 * 1024**2

#: Bytes read at a time by :func:`iter_lines`.
_CHUNK = 1 << 20

#: Records nested deeper than this (lists / objects) are refused as unreadable.
MAX_DEPTH = 256

def bad_field(obj: Any, keys: frozenset[str], into: frozenset[str], *, depth: int = 6) -> str | None:
    """The JSON path of the first of ``keys`` that holds neither a string nor null.

    The search looks into the values of the ``into`` keys (and the lists below them), at
    most ``depth`` levels down.

    Importers call it on every record before mapping it, so that an id, a type or a name
    of the wrong type makes the record unreadable (a located error) instead of a crash.

    >>> bad_field({"message": {"content": [{"type": "text"}, {"id": ["x"]}]}}, frozenset({"id", "type"}),
    ...           frozenset({"message", "content"}))
    '$.message.content[1].id (an array)'
    """
    stack: list[tuple[Any, str, int]] = [(obj, "$", 0)]
    while stack:
        o, path, d = stack.pop(0)
        if isinstance(o, dict):
            for k, v in o.items():
                if k in keys and v is not None and not isinstance(v, str):
                    return f"{path}.{k} (a{'n' if _json_kind(v)[0] in 'aeiou' else ''} {_json_kind(v)})"
                if d < depth and k in into and isinstance(v, (dict, list)):
                    stack.append((v, f"{path}.{k}", d + 1))
        elif isinstance(o, list) and d < depth:
            stack.extend((v, f"{path}[{i}]", d + 1) for i, v in enumerate(o[:1000]) if isinstance(v, (dict, list)))
    return None


def max_line_bytes() -> int:
    """The line cap: ``ORCHESTRACE_MAX_LINE_BYTES`` or :data:`MAX_LINE_BYTES` (a bad value is a ConfigError)."""
    return env_bytes("ORCHESTRACE_MAX_LINE_BYTES", MAX_LINE_BYTES)


def nesting_depth(obj: Any, limit: int = MAX_DEPTH) -> int:
    """Depth of nested lists/dicts in ``obj``, counted without recursion; stops at ``limit + 1``.

    >>> nesting_depth({"a": [1, [2]]}), nesting_depth([[[[]]]], limit=2)
    (3, 3)
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            o = list(o.values())
        elif not isinstance(o, list):
            continue
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        stack.extend((v, d + 1) for v in o if isinstance(v, (dict, list)))
    return deepest


def _too_deep(raw: bytes, obj: Any) -> bool:
    # cheap bound first: a record with few brackets cannot be deep
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    return nesting_depth(obj) > MAX_DEPTH


def decode_json(raw: bytes, where: str, report: ImportReport | None) -> Any:
    """Decode one JSON text; invalid UTF-8 is replaced (U+FFFD) with a located, counted warning.

    Raises :class:`msgspec.DecodeError` when it is not JSON, ``ValueError`` when it is
    nested more than :data:`MAX_DEPTH` levels deep.
    """
    try:
        obj = msgspec.json.decode(raw)
    except UnicodeDecodeError:
        if report is not None:
            try:
                raw.decode("utf-8")
                at = 0
            except UnicodeDecodeError as exc:
                at = exc.start
            report.sanitise("import.invalid-utf8", where,
                            f"invalid UTF-8 byte {raw[at:at + 1]!r} at byte {at}; replaced by U+FFFD",
                            "save the file as UTF-8")
        obj = msgspec.json.decode(raw.decode("utf-8", "replace").encode("utf-8"))
    except RecursionError:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None
    if _too_deep(raw, obj):
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    return obj


def _open(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open for reading; I/O problems become :class:`TraceDecodeError` (``io.*``)."""
    p = Path(path)
    try:
        if p.is_dir():
            raise TraceDecodeError(f"{p} is a directory", [_io_problem(
                "io.is-directory", str(p), "path is a directory, not a file", "pass the session file")])
        from .._limits import open_input

        return open_input(p)  # closed by the caller; a FIFO without a writer reads as empty, never hangs
    except OSError as exc:
        code = "io.not-found" if isinstance(exc, FileNotFoundError) else "io.unreadable"
        raise TraceDecodeError(f"cannot read {p}: {exc.strerror or exc}", [_io_problem(
            code, str(p), f"cannot read file: {exc.strerror or exc}", "check the path and its permissions")]) from None


def _io_problem(code: str, path: str, message: str, hint: str) -> Problem:
    return Problem(code=code, severity=Severity.ERROR, path=path, message=message, hint=hint)


def _chunks(fh: IO[bytes], label: str, report: ImportReport) -> Iterator[bytes | None]:
    """The non-empty chunks of ``fh`` (a UTF-8 BOM cut by a short first read joined), up to
    :func:`~orchestrace.core.io.max_file_bytes` bytes; ``None`` after a located ``io.unreadable`` or
    ``io.too-large`` error, when reading must stop where it is (no cut last line is given)."""
    file_cap = max_file_bytes()
    total = 0
    first = True
    while True:
        try:
            chunk = fh.read(_CHUNK)
            while first and chunk and len(chunk) < 3 and b"\xef\xbb\xbf".startswith(chunk):  # a BOM cut by a short read
                more = fh.read(_CHUNK)
                if not more:
                    break
                chunk += more
        except OSError as exc:
            report.error("io.unreadable", label, f"read failed: {exc.strerror or exc}", "check the file")
            yield None
            return
        if not chunk:
            return
        total += len(chunk)
        if total > file_cap:
            report.error("io.too-large", label, f"input holds more than {file_cap} bytes; reading stopped there",
                         "split it, or raise ORCHESTRACE_MAX_FILE_BYTES")
            yield None
            return
        first = False
        yield chunk


def iter_lines(path: str | os.PathLike[str], label: str, report: ImportReport) -> Iterator[tuple[int, bytes | None, bool]]:
    """``(line number, raw line, cut)`` of a file, read piecewise with bounded memory.

    The importers' line reader; the trace streams and logs of the package read through
    :func:`orchestrace._limits.capped_lines` instead. This one differs where foreign session files
    need it: a FIFO or stdin is read (not refused), a BOM and a NUL stream are told apart, a cut
    last line is flagged, and every skip is a located entry of the :class:`ImportReport`.

    ``raw`` is None for a line over the cap (:func:`max_line_bytes`): it is skipped while
    it is read, with a located ``import.line-too-large`` error, so a file with no newline
    (or ``/dev/zero``) never holds more than the cap in memory. ``cut`` is True for a last
    line with no newline. A leading UTF-8 BOM is removed with a warning; reading stops with
    an ``io.too-large`` error after :func:`~orchestrace.core.io.max_file_bytes` bytes.
    """
    cap = max_line_bytes()
    fh = _open(path)
    buf = bytearray()
    skipping = 0  # bytes of an over-long line seen so far (0: not skipping)
    lineno = 1
    first = True

    def too_large(n: int) -> None:
        report.count("<line>", "unreadable")
        report.error("import.line-too-large", f"{label}:{lineno}",
                     f"line is {'over ' if n <= cap else ''}{n} bytes, over the {cap}-byte cap; skipped",
                     "raise ORCHESTRACE_MAX_LINE_BYTES if the line is genuine")

    with fh:
        for chunk in _chunks(fh, label, report):
            if chunk is None:
                return
            if chunk.count(0) == len(chunk):
                report.error("io.not-text", f"{label}:{lineno}", "input is a stream of NUL bytes, not JSON lines "
                             "(a device like /dev/zero, or a sparse file?); reading stopped", "pass a JSONL file")
                return
            if first:
                first = False
                if chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
                    report.sanitise("import.bom", f"{label}:1", "file starts with a UTF-8 byte-order mark; ignored",
                                     "save the file as UTF-8 without BOM")
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                piece = chunk[start:] if nl < 0 else chunk[start:nl]
                if skipping:
                    skipping += len(piece)
                elif len(buf) + len(piece) > cap:
                    skipping = len(buf) + len(piece)
                    buf = bytearray()
                elif nl >= 0 and not buf:
                    if piece.strip():
                        yield lineno, piece, False
                else:
                    buf += piece
                if nl < 0:
                    break
                if skipping:
                    too_large(skipping)
                    skipping = 0
                elif buf:
                    if buf.strip():
                        yield lineno, bytes(buf), False
                    buf = bytearray()
                lineno += 1
                start = nl + 1
    if skipping:
        too_large(skipping)
    elif buf.strip():
        yield lineno, bytes(buf), True


def iter_jsonl(path: str | os.PathLike[str], label: str, report: ImportReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every readable JSON-object line of a JSONL file.

    Unreadable lines (not JSON, cut short, over the line cap, nested too deep, not an
    object) are counted as ``unreadable`` and reported as located errors; reading goes on
    after them. Memory stays bounded by the line cap (see :func:`iter_lines`). A missing
    file or a directory raises :class:`TraceDecodeError`.
    """
    for lineno, raw, cut in iter_lines(path, label, report):
        if raw is None:
            continue
        where = f"{label}:{lineno}"
        try:
            obj = decode_json(raw, where, report)
        except msgspec.DecodeError as exc:
            report.count("<line>", "unreadable")
            if cut:
                report.error("import.truncated", where, "last line is cut short (file still being written, or a crash?)",
                             "the records before it were imported; re-import once the run has finished")
            else:
                report.error("import.not-json", where, f"line is not JSON: {exc}",
                             "the record was skipped; check the file for corruption")
            continue
        except ValueError as exc:
            report.count("<line>", "unreadable")
            report.error("import.too-deep", where, f"line is {exc}; skipped", "this is not a record of this format")
            continue
        if not isinstance(obj, dict):
            report.count("<line>", "unreadable")
            report.error("import.not-object", where, f"line holds a JSON {_json_kind(obj)}, not an object",
                         "each line of this format is one JSON object")
            continue
        yield lineno, obj


def _json_kind(obj: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(obj), type(obj).__name__)


def load_json(path: str | os.PathLike[str], label: str, report: ImportReport | None = None) -> Any:
    """Decode one JSON document; a decode error becomes a located :class:`TraceDecodeError`.

    Only a file whose first byte (after a BOM and whitespace) opens an object or an array
    is read whole (up to :func:`~orchestrace.core.io.max_file_bytes`); anything else is refused
    after a peek, so that callers can fall back to :func:`iter_jsonl` with bounded memory.
    """
    with _open(path) as fh:
        try:
            head = fh.read(4096)
        except OSError as exc:
            raise TraceDecodeError(f"cannot read {label}: {exc.strerror or exc}", [_io_problem(
                "io.unreadable", str(path), f"cannot read file: {exc.strerror or exc}", "check the file")]) from None
    stripped = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if stripped.lstrip()[:1] not in (b"{", b"["):
        raise _not_json(label, "does not start with '{' or '['" if stripped.strip() else "is empty")
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        if report is not None:
            report.sanitise("import.bom", f"{label}:1", "file starts with a UTF-8 byte-order mark; ignored",
                             "save the file as UTF-8 without BOM")
    try:
        return decode_json(data, f"{label}:$", report)
    except msgspec.DecodeError as exc:
        raise _not_json(label, str(exc)) from None
    except ValueError as exc:
        raise TraceDecodeError(f"{label}: {exc}", [_io_problem(
            "import.too-deep", f"{label}:$", f"document is {exc}", "this is not an export of this format")]) from None


def _not_json(label: str, why: str) -> TraceDecodeError:
    return TraceDecodeError(f"{label}: not JSON: {why}", [_io_problem(
        "import.not-json", f"{label}:$", f"not JSON: {why}", "pass a JSON export of this format")])


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Graph:
    """Append-only event graph with clamped times, content policy and source pointers."""

    def __init__(self, content: ContentMode = "hash", report: ImportReport | None = None) -> None:
        if content not in CONTENT_MODES:
            from ..errors import ConfigError, did_you_mean

            raise ConfigError(f"content must be one of {CONTENT_MODES}, got {content!r}{did_you_mean(content, CONTENT_MODES, prefix='; ')}")
        self.content = content
        self.report = report
        self.events: dict[str, Event] = {}
        self.edges: list[tuple[str, str, EdgeType | str]] = []  # kinds checked by TraceBuilder.edge
        self.clamped = 0
        self._n = 0
        #: Flag failure evidence on the events as they are added (the chat importer reads its turns itself).
        self.scan_evidence = True

    def end(self, eid: str) -> float:
        """``t_end`` of an event, or ``t`` when it has none."""
        e = self.events[eid]
        return e.t if e.t_end is None else e.t_end

    def add(
        self,
        type: EventType | str,
        agent: str,
        t: float,
        *,
        deps: Iterable[tuple[str, EdgeType | str]] = (),
        t_end: float | None = None,
        text: str | None = None,
        **fields: Any,
    ) -> str:
        """Append an event caused by ``deps`` (``(event id, edge type)`` pairs); returns its id."""
        deps = [(d, EdgeType(k)) for d, k in deps if d is not None]
        if t_end is not None and t_end < t:  # the source says it ended before it started
            if self.report is not None:
                self.report.sanitise("import.end-before-start", str(fields.get("source") or f"event {self._n + 1}"),
                                     f"{EventType(type).value} ends {t - t_end:.6g} s before it starts; "
                                     "its end was moved to its start", "check the clock of the source")
            t_end = t
        lower = max((self.end(d) for d, _ in deps), default=None)
        if lower is not None and t < lower:
            t = lower
            self.clamped += 1
        if t_end is not None and t_end < t:
            t_end = t
        if self.scan_evidence:
            _evidence_fields(EventType(type), text, deps, fields, keep=self.content != "drop")
        if text:
            if self.content != "drop":
                fields.setdefault("content_ref", _digest(text))
            if self.content == "keep":
                fields["content"] = text
        if not fields.get("attrs"):
            fields.pop("attrs", None)
        self._n += 1
        eid = f"e{self._n}"
        self.events[eid] = Event(id=eid, t=float(t), type=EventType(type), agent=agent, t_end=t_end,
                                 **{k: v for k, v in fields.items() if v is not None})
        seen = set()
        for d, kind in deps:
            if (d, kind) not in seen:
                seen.add((d, kind))
                self.edges.append((d, eid, kind))
        return eid

    def build(
        self,
        trace_id: str,
        *,
        task_id: str,
        system: str,
        topology: Topology | str | None = None,
        meta: dict[str, Any] | None = None,
        shift: float = 0.0,
        costs: dict[str, float] | None = None,
    ) -> Trace:
        """Freeze into a :class:`Trace`, events sorted by time, times shifted by ``-shift``."""
        b = TraceBuilder(trace_id, task_id=task_id, system=system, topology=topology, meta=meta)
        order = sorted(self.events.values(), key=lambda e: (e.t, int(e.id[1:])))
        for e in order:
            fields = {f: getattr(e, f) for f in e.__struct_fields__ if f not in ("id", "t", "type", "agent")}
            fields = {k: v for k, v in fields.items() if v is not None}
            if shift and "t_end" in fields:
                fields["t_end"] = round(fields["t_end"] - shift, 6)
            b.add(e.type, e.agent, t=round(e.t - shift, 6), id=e.id, **fields)
        for src, dst, kind in self.edges:
            b.edge(src, dst, kind)
        return b.build(costs=costs)


def _evidence_fields(kind: EventType, text: str | None, deps: list[tuple[str, Any]], fields: dict[str, Any],
                     keep: bool) -> None:
    """Failure evidence of an event being added: a tool result's exit code / traceback / error flag, or an
    operation the source marked as failed; a tool result's evidence blames the call it answers."""
    from ._evidence import Evidence, EvidenceKind, of_tool_output, scan, to_attrs

    found = scan(text) if kind is EventType.TOOL_RESULT and text else []
    if fields.get("error") is True and not any(e.kind is not EvidenceKind.REFUSAL for e in found):
        k = EvidenceKind.TOOL_ERROR if kind in (EventType.TOOL_RESULT, EventType.TOOL_CALL) else \
            EvidenceKind.ERROR_STATUS
        first = (text or "").strip().split("\n", 1)[0][:160] or None
        found = [*found, Evidence(k, (0, len(first)) if first else None, first)]
    if not found:
        return
    call = next((d for d, k in deps if k is EdgeType.TOOL_DEPENDENCY), None)
    found = of_tool_output(found, call)
    if not any(e.is_evidence for e in found):  # only a tool's quote of a refusal: kept, not an error
        fields["attrs"] = {**(fields.get("attrs") or {}), "evidence": to_attrs(found, keep)}
        return
    fields["error"] = True
    fields["attrs"] = {**(fields.get("attrs") or {}), "evidence": to_attrs(found, keep)}


def relative_label(path: Path, root: Path | None) -> str:
    """``path`` relative to ``root`` when inside it, else the file name (for ``Event.source``)."""
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.name
