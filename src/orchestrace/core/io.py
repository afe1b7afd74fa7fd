"""Read and write traces: native JSON, reference JSON, and the JSONL stream.

Encodings
---------
* **JSON** — one document per trace. The native format is a superset of the survey's
  reference schema, so one reader takes both: a reference trace whose events carry extra
  properties (allowed there) loads with those properties kept in ``Event.attrs``.
* **JSONL stream** — append-only, one record per line, written while the run happens::

      {"header": {"trace_id": …, "task_id": …, "schema_version": …, "topology": …}}
      {"event": {…}}            # any number, in order
      {"edge": {…}}             # any number, any time after both ends may exist
      {"end": {"rewards": …, "costs": …, "metrics": …, "outcome": …, "signals": …}}

  Several traces may follow each other in one file (a dataset). A file whose last line
  was cut by a crash yields every complete record and one warning, never an exception.
* **Reference JSON** (:func:`to_reference`) — passes the survey's JSON Schema: native
  event fields stay in events (the schema allows extra event properties); trace-level
  fields with no reference slot are folded or dropped, each drop named in a warning.

>>> from orchestrace.core.builder import TraceBuilder
>>> b = TraceBuilder("t1"); _ = b.add("spawn", "orchestrator", t=0, to="w1")
>>> tr = b.build()
>>> loads(dumps(tr)) == tr, loads(dumps(tr, format="jsonl")) == tr
(True, True)
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import threading
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

import msgspec

from .._limits import capped_lines, env_bytes
from .._problems import Problem
from ..errors import (
    ConfigError,
    ReferenceLossWarning,
    TraceDecodeError,
    TraceFormatWarning,
    TruncatedStreamWarning,
)
from ..vocab import Severity, Topology
from ._located import Collector
from ._structural import Decoded, _End, _Header, decode_bytes
from .trace import Edge, Event, Outcome, Signal, Trace

__all__ = [
    "MAX_FILE_BYTES",
    "STREAM_KINDS",
    "StreamRecord",
    "TraceWriter",
    "atomic_write",
    "dump",
    "dumps",
    "iter_stream_records",
    "iter_traces",
    "TraceFile",
    "load",
    "loads",
    "read_traces",
    "to_reference",
]

Format = Literal["native", "reference", "jsonl"]

#: Files larger than this are refused (override with ``ORCHESTRACE_MAX_FILE_BYTES``).
MAX_FILE_BYTES = 4 * 1024**3


def max_file_bytes() -> int:
    """The file-size cap: ``ORCHESTRACE_MAX_FILE_BYTES`` or :data:`MAX_FILE_BYTES`."""
    return env_bytes("ORCHESTRACE_MAX_FILE_BYTES", MAX_FILE_BYTES)

_encoder = msgspec.json.Encoder()


# ----------------------------------------------------------------------------- reading
def read_bytes(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """Read a file with a size cap; I/O problems become :class:`TraceDecodeError` (``io.*``).

    The cap (``limit``, default :func:`max_file_bytes`) is enforced while reading, so an
    endless device or pipe (``/dev/zero``) is refused instead of filling the memory.
    """
    p = Path(path)
    where = str(p)
    cap = max_file_bytes() if limit is None else limit
    try:
        if p.is_dir():
            raise TraceDecodeError(
                f"{where} is a directory",
                [_problem("io.is-directory", where, "path is a directory, not a trace file",
                          "pass .json/.jsonl files (a quoted glob works), or use `validate -r DIR`")],
            )
        size = p.stat().st_size
        if size > cap:
            raise _too_large(where, f"file is {size} bytes")
        from .._limits import open_input

        with open_input(p) as fh:  # a FIFO without a writer: EOF, never a hang
            # a device or a pipe has no size to trust: read it piecewise
            data = fh.read(cap + 1) if p.is_file() and size > 0 else _read_stream(fh, cap, where)
        if len(data) > cap:
            raise _too_large(where, f"file holds more than {cap} bytes")
        return data
    except OSError as exc:
        code = "io.not-found" if isinstance(exc, FileNotFoundError) else "io.unreadable"
        raise TraceDecodeError(
            f"cannot read {where}: {exc.strerror or exc}",
            [_problem(code, where, f"cannot read file: {exc.strerror or exc}",
                      "check the path and its permissions")],
        ) from None


def _read_stream(fh: IO[bytes], cap: int, where: str) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total <= cap:
        chunk = fh.read(min(1 << 20, cap + 1 - total))
        if not chunk:
            break
        if chunk.count(0) == len(chunk):  # /dev/zero and friends: NUL bytes are never JSON text
            raise TraceDecodeError(f"{where} is not text", [_problem(
                "io.not-text", where, "input is a stream of NUL bytes, not JSON text (a device like /dev/zero?)",
                "pass a trace file")])
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _too_large(where: str, what: str) -> TraceDecodeError:
    cap = max_file_bytes()
    return TraceDecodeError(
        f"{where} is too large",
        [_problem("io.too-large", where, f"{what}, over the {cap}-byte limit",
                  "split it, or raise ORCHESTRACE_MAX_FILE_BYTES")],
    )


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file + fsync + rename), keeping an existing file's mode.

    A reader never sees a half-written file, a crash leaves the old file intact, and a
    read-only file stays read-only (its permission bits are copied to the new file). A
    symlink is followed (its target is replaced, the link kept); a file with other hard
    links is rewritten in place after the new bytes are safely on disk beside it, so that
    every name still shows the new content.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json"); atomic_write(p, b"{}")
    >>> os.chmod(p, 0o444); atomic_write(p, b"[]"); oct(os.stat(p).st_mode & 0o777), open(p).read()
    ('0o444', '[]')
    """
    import stat
    import tempfile

    # a symlink is followed: its target is replaced and the link stays a link (a dangling link
    # creates its target); a symlink loop is an OSError (ELOOP) before anything is written
    p = Path(os.path.realpath(path, strict=False)) if os.path.islink(path) else Path(path)
    if os.path.islink(p):
        raise OSError(40, "Too many levels of symbolic links", str(path))
    try:
        st = p.stat()
        mode: int | None = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        mode, st = None, None
    if st is not None and not stat.S_ISREG(st.st_mode):  # a device, a FIFO, a folder: never replaced or opened
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise OSError(errno.EEXIST, f"it is {kind}, not a regular file: refused as an output (name a file)",
                      str(path))
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        _write_linked(p, data)  # a rename would split a hard link from its other names
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:  # a new file: the usual mode (mkstemp makes it 0600)
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_linked(p: Path, data: bytes) -> None:
    """Rewrite a hard-linked file in place (every name keeps seeing it), from a fsynced copy:
    the new bytes are first written and synced beside it, so a failure before the in-place
    copy leaves the file untouched, and the copy itself is one write of ``data`` then fsync."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with open(p, "r+b") as out:
            out.write(data)
            out.truncate(len(data))
            out.flush()
            os.fsync(out.fileno())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def load(path: str | os.PathLike[str]) -> Trace:
    """Load one trace from a native/reference JSON file or a JSONL stream.

    Raises :class:`~orchestrace.errors.TraceDecodeError` listing every located structural
    problem when the file is not a trace (semantic rules are :func:`orchestrace.validate`'s
    job). A JSONL file holding several traces returns the first; use :func:`iter_traces`
    for all of them. Warnings (a truncated stream, extra reference properties moved into
    ``attrs``) are issued as Python warnings.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> _ = open(p, "w").write('{"trace_id": "t", "task_id": "k", "events": []}')
    >>> load(p).trace_id
    't'
    """
    return loads(read_bytes(path), source=str(path))


def loads(data: bytes | str, *, source: str = "<bytes>") -> Trace:
    """Decode one trace from bytes (JSON document or JSONL stream).

    >>> loads('{"trace_id": "t", "task_id": "k", "events": [], "schema_version": "1.0"}').task_id
    'k'
    """
    traces = _decode(data, source)
    if not traces:  # pragma: no cover - _decode raises when nothing decodes
        raise TraceDecodeError(f"{source}: no trace found", [_problem("json.empty", "$", "input holds no trace")])
    return traces[0]


def iter_traces(path: str | os.PathLike[str]) -> Iterator[Trace]:
    """Every trace in a file: one for a JSON document, one per header for JSONL."""
    yield from _decode(read_bytes(path), str(path))


class TraceFile(NamedTuple):
    """Every trace of one file and the encoding they were decoded from.

    ``format`` is what the decoder saw — ``"jsonl"`` for a stream (also one that starts
    with a byte-order mark or a pretty-printed header), ``"native"`` or ``"reference"``
    for one JSON document — so a rewrite in place keeps it without guessing again.
    """

    traces: list[Trace]
    format: Format


def read_traces(path: str | os.PathLike[str]) -> TraceFile:
    """Every trace of a file and the format it was decoded from (for rewriting it in place).

    >>> import tempfile, os
    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("t1"); _ = b.add("spawn", "orchestrator", t=0, to="w1")
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> _ = open(p, "wb").write(dumps(b.build(), format="jsonl") * 2)
    >>> f = read_traces(p); len(f.traces), f.format
    (2, 'jsonl')
    """
    decoded = _decode_all(read_bytes(path), str(path))
    fmt: Format = "jsonl" if decoded[0].stream else "reference" if decoded[0].reference else "native"
    return TraceFile([d.trace for d in decoded], fmt)


#: The record kinds of a JSONL trace stream, one per line.
STREAM_KINDS = ("header", "event", "edge", "end")
_record_decoder = msgspec.json.Decoder()


class StreamRecord(NamedTuple):
    """One line of a JSONL trace stream, decoded but not assembled into a trace.

    ``kind`` is one of :data:`STREAM_KINDS` and ``body`` its object. On a line that is not a
    record, ``kind`` and ``body`` are None and ``error`` says why: ``unreadable`` (the stream
    stops here: a torn gzip member, the size cap), ``too-long`` (over the line cap; its bytes
    skipped), ``not-json``, or ``not-record`` (JSON, but not ``{kind: {…}}``); ``detail`` is
    the reader's message. ``size`` is the line's length in bytes (0 when it was not read).
    """

    line: int
    size: int
    kind: str | None
    body: dict[str, Any] | None
    error: str | None = None
    detail: str = ""


def iter_stream_records(path: str | os.PathLike[str], *, limit: int | None = None) -> Iterator[StreamRecord]:
    """The records of a ``.jsonl`` / ``.jsonl.gz`` trace stream, one line at a time, in bounded memory.

    For readers that take a few fields of very many records (a logged corpus) instead of whole
    traces (:func:`iter_traces`). The limits are those of :func:`orchestrace._limits.capped_lines`:
    a regular file, at most ``limit`` bytes decompressed (default: the corpus cap), each line
    capped; a bad line is a record with an ``error``, never an exception.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    >>> _ = open(p, "wb").write(b'{"header": {"task_id": "a"}}\\n{"event": 3}\\n{"end": {}\\n')
    >>> [(r.line, r.kind, r.error) for r in iter_stream_records(p)]
    [(1, 'header', None), (2, None, 'not-record'), (3, None, 'not-json')]
    """
    decode = _record_decoder.decode
    for ln, line in capped_lines(path, limit=limit):
        if isinstance(line, OSError):
            yield StreamRecord(ln, 0, None, None, "unreadable", str(line))
            return
        if isinstance(line, ValueError):
            yield StreamRecord(ln, 0, None, None, "too-long", str(line))
            continue
        try:
            rec = decode(line)
        except (ValueError, msgspec.DecodeError) as exc:
            yield StreamRecord(ln, len(line), None, None, "not-json", str(exc))
            continue
        kind = next(iter(rec), None) if isinstance(rec, dict) and len(rec) == 1 else None
        body = rec[kind] if kind is not None else None
        if kind not in STREAM_KINDS or not isinstance(body, dict):
            yield StreamRecord(ln, len(line), None, None, "not-record")
            continue
        yield StreamRecord(ln, len(line), kind, body)


def _decode(data: bytes | str, source: str) -> list[Trace]:
    """Structural decode; raises on any structural error, warns for warnings."""
    return [d.trace for d in _decode_all(data, source)]


def _decode_all(data: bytes | str, source: str) -> list[Decoded]:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    col = Collector()
    decoded = decode_bytes(data, source, col)
    problems = col.finish()
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors or not decoded:
        first = errors[0] if errors else None
        where = f" at {first.path}: {first.message}" if first else ""
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise TraceDecodeError(f"{source}: not a valid trace{where}{more}", errors or problems)
    for p in problems:
        cls = TruncatedStreamWarning if p.code.startswith("jsonl.") else TraceFormatWarning
        warnings.warn(f"{source}: {p.path}: {p.message}", cls, stacklevel=4)
    return decoded


def _problem(code: str, path: str, message: str, hint: str = "", severity: Severity = Severity.ERROR) -> Problem:
    return Problem(code=code, severity=severity, path=path, message=message, hint=hint)


# ----------------------------------------------------------------------------- writing
def dumps(trace: Trace, *, format: Format = "native") -> bytes:
    """Encode a trace as native JSON, reference JSON, or a JSONL stream."""
    if format == "native":
        return _encoder.encode(trace)
    if format == "reference":
        return _encoder.encode(to_reference(trace))
    if format == "jsonl":
        return b"".join(_jsonl_lines(trace))
    raise ConfigError(f"unknown format {format!r}; use 'native', 'reference' or 'jsonl'")


def dump(trace: Trace, path: str | os.PathLike[str], *, format: Format | None = None) -> None:
    """Write a trace; the format defaults from the suffix (``.jsonl`` → stream)."""
    fmt: Format = format or ("jsonl" if str(path).endswith(".jsonl") else "native")
    atomic_write(path, dumps(trace, format=fmt))


def _jsonl_lines(trace: Trace) -> Iterator[bytes]:
    enc = _encoder.encode
    yield enc({"header": _header_of(trace)}) + b"\n"
    for e in trace.events:
        yield b'{"event":' + enc(e) + b"}\n"
    for d in trace.edges:
        yield b'{"edge":' + enc(d) + b"}\n"
    yield enc({"end": _End(rewards=trace.rewards, costs=trace.costs, metrics=trace.metrics,
                           outcome=trace.outcome, signals=trace.signals)}) + b"\n"


def _header_of(trace: Trace) -> _Header:
    return _Header(trace_id=trace.trace_id, task_id=trace.task_id, schema_version=trace.schema_version,
                   system=trace.system, topology=trace.topology, meta=trace.meta)


def to_reference(trace: Trace, *, warn: bool = True) -> dict[str, Any]:
    """The trace as a dict that passes the survey's reference JSON Schema.

    Native event fields stay on events (extra event properties are allowed there) and
    ``attrs`` are spread back; ``outcome.success``/``score`` fold into ``metrics``;
    ``signals`` and ``meta`` have no slot and are dropped with a warning naming them.
    Costs gain ``tokens`` and ``wall_clock_s`` if missing; negative times clamp to 0.
    """
    dropped = []
    events = []
    for e in trace.events:
        d = msgspec.to_builtins(e)
        attrs = d.pop("attrs", None) or {}
        for k, v in attrs.items():
            d.setdefault(k, v)
        if d["t"] < 0:
            d["t"] = 0.0
        events.append(d)
    costs = {k: float(v) for k, v in trace.costs.items()}
    if "tokens" not in costs:
        costs["tokens"] = float(sum(e.tokens for e in trace.events))
    if "wall_clock_s" not in costs:
        ts = [e.t for e in trace.events] + [e.t_end for e in trace.events if e.t_end is not None]
        costs["wall_clock_s"] = float(max(ts) - min(ts)) if ts else 0.0
    metrics = dict(trace.metrics)
    if trace.outcome is not None:
        if trace.outcome.success is not None:
            metrics.setdefault("task_success", float(trace.outcome.success))
        if trace.outcome.score is not None:
            metrics.setdefault("outcome_score", float(trace.outcome.score))
    if trace.signals:
        dropped.append(f"signals ({len(trace.signals)})")
    if trace.meta:
        dropped.append("meta")
    if trace.outcome is not None and (trace.outcome.verifier or trace.outcome.answer_ref):
        dropped.append("outcome.verifier/answer_ref")
    if dropped and warn:
        warnings.warn(
            f"reference format has no slot for: {', '.join(dropped)}; dropped "
            "(write the native format to keep them)",
            ReferenceLossWarning,
            stacklevel=2,
        )
    out: dict[str, Any] = {"trace_id": trace.trace_id, "task_id": trace.task_id}
    if trace.system is not None:
        out["system"] = trace.system
    if trace.topology is not None:
        out["topology"] = trace.topology.value
    out["events"] = events
    out["edges"] = [{"src": d.src, "dst": d.dst, "type": d.type.value} for d in trace.edges]
    out["rewards"] = {k: float(v) for k, v in trace.rewards.items() if math.isfinite(v)}
    out["costs"] = costs
    if metrics:
        out["metrics"] = metrics
    return out


# ----------------------------------------------------------------------------- streaming
class TraceWriter:
    """Append-only JSONL trace stream, safe to read after a crash (thread-safe).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with TraceWriter(p, trace_id="r1", task_id="demo") as w:
    ...     w.event(Event(id="e1", t=0.0, type="spawn", agent="orchestrator", to="w1"))
    >>> load(p).events[0].to
    'w1'
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | IO[bytes],
        *,
        trace_id: str,
        task_id: str,
        system: str | None = "orchestrace",
        topology: Topology | str | None = None,
        meta: Mapping[str, Any] | None = None,
        fsync: bool = False,
    ) -> None:
        self._own = not hasattr(path, "write")
        self._fh: IO[bytes] = open(path, "ab") if self._own else path  # type: ignore[arg-type,assignment]  # noqa: SIM115
        self._lock = threading.Lock()
        self._fsync = fsync
        self._closed = False
        header = _Header(trace_id=trace_id, task_id=task_id, system=system,
                         topology=Topology(topology) if topology is not None else None, meta=dict(meta or {}))
        self._write(_encoder.encode({"header": header}))

    def _write(self, line: bytes) -> None:
        with self._lock:
            if self._closed:
                raise ValueError("TraceWriter is closed")
            self._fh.write(line + b"\n")
            self._fh.flush()
            if self._fsync and hasattr(self._fh, "fileno"):
                os.fsync(self._fh.fileno())

    def event(self, event: Event) -> None:
        """Append one event."""
        self._write(b'{"event":' + _encoder.encode(event) + b"}")

    def edge(self, edge: Edge) -> None:
        """Append one edge."""
        self._write(b'{"edge":' + _encoder.encode(edge) + b"}")

    def event_with_edges(self, event: Event, edges: tuple[Edge, ...] | list[Edge] = ()) -> None:
        """Append one event and the edges into it with a single write and flush (the recorder's path)."""
        enc = _encoder.encode
        buf = b'{"event":' + enc(event) + b"}"
        for d in edges:
            buf += b'\n{"edge":' + enc(d) + b"}"
        self._write(buf)

    def close(
        self,
        *,
        rewards: Mapping[str, float] | None = None,
        costs: Mapping[str, float] | None = None,
        metrics: Mapping[str, float] | None = None,
        outcome: Outcome | None = None,
        signals: tuple[Signal, ...] = (),
    ) -> None:
        """Write the ``end`` record and close the file (idempotent)."""
        if self._closed:
            return
        end = _End(rewards=dict(rewards or {}), costs=dict(costs or {}), metrics=dict(metrics or {}),
                   outcome=outcome, signals=signals)
        self._write(_encoder.encode({"end": end}))
        with self._lock:
            self._closed = True
            if self._own:
                self._fh.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
