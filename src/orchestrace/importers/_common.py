"""Shared machinery of the importers: reading records, time, content policy, a safe graph.

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
import json
import os
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..builder import TraceBuilder
from ..errors import TraceDecodeError
from ..io import read_bytes
from ..trace import Event, Trace
from ..vocab import EdgeType, EventType, Topology
from ._report import ImportReport

__all__ = [
    "CONTENT_MODES",
    "MAX_LINE_BYTES",
    "ContentMode",
    "Graph",
    "iter_jsonl",
    "load_json",
    "parse_ts",
    "text_of",
]

ContentMode = Literal["keep", "hash", "drop"]
CONTENT_MODES: tuple[str, ...] = ("keep", "hash", "drop")

#: Lines longer than this are refused as unreadable (``ORCHESTRACE_MAX_LINE_BYTES``).
MAX_LINE_BYTES = int(os.environ.get("ORCHESTRACE_MAX_LINE_BYTES", 64 * 1024**2))

_FRACTION = re.compile(r"(\.\d+)")


def parse_ts(value: Any) -> float | None:
    """Seconds since the epoch from an ISO-8601 string (``Z`` allowed) or a number.

    Numbers are taken as seconds, or as ms / µs / ns when they are too large to be seconds.

    >>> parse_ts("2026-02-11T21:24:19.360Z")
    1770845059.36
    >>> parse_ts(1_700_000_000_000), parse_ts("not a time")
    (1700000000.0, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        for scale in (1.0, 1e3, 1e6, 1e9):
            if abs(v / scale) < 1e11:
                return v / scale
        return None
    if not isinstance(value, str) or not value:
        return None
    s = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    m = _FRACTION.search(s)
    if m and len(m.group(1)) > 7:  # Python 3.10 takes at most 6 fractional digits
        s = s[: m.start()] + m.group(1)[:7] + s[m.end():]
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return round(dt.timestamp(), 6)


def text_of(content: Any) -> str:
    """Plain text of a message ``content``: a string, or the ``text`` of a list of blocks.

    >>> text_of([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])
    'a\\nb'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict):
                for key in ("text", "thinking", "content", "output"):
                    v = b.get(key)
                    if isinstance(v, str):
                        parts.append(v)
                        break
                    if isinstance(v, list):
                        parts.append(text_of(v))
                        break
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        return text_of([content])
    return json.dumps(content, ensure_ascii=False, default=str)


def iter_jsonl(path: str | os.PathLike[str], label: str, report: ImportReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every readable JSON-object line of a JSONL file.

    Unreadable lines (not JSON, cut short, over :data:`MAX_LINE_BYTES`, not an object) are
    counted as ``unreadable`` and reported as located errors; reading goes on after them.
    I/O problems (missing file, directory, too large) raise :class:`TraceDecodeError`.
    """
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        where = f"{label}:{i + 1}"
        if len(raw) > MAX_LINE_BYTES:
            report.count("<line>", "unreadable")
            report.error("import.line-too-large", where, f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte cap",
                         "raise ORCHESTRACE_MAX_LINE_BYTES if the line is genuine")
            continue
        try:
            obj = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:
            report.count("<line>", "unreadable")
            cut = i == last and not data.endswith(b"\n")
            if cut:
                report.error("import.truncated", where, "last line is cut short (file still being written, or a crash?)",
                             "the records before it were imported; re-import once the run has finished")
            else:
                report.error("import.not-json", where, f"line is not JSON: {exc}",
                             "the record was skipped; check the file for corruption")
            continue
        if not isinstance(obj, dict):
            report.count("<line>", "unreadable")
            report.error("import.not-object", where, f"line holds a JSON {type(obj).__name__}, not an object",
                         "each line of this format is one JSON object")
            continue
        yield i + 1, obj


def load_json(path: str | os.PathLike[str], label: str) -> Any:
    """Decode one JSON document; a decode error becomes a located :class:`TraceDecodeError`."""
    from .._problems import Problem
    from ..vocab import Severity

    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise TraceDecodeError(
            f"{label}: not JSON: {exc}",
            [Problem(code="import.not-json", severity=Severity.ERROR, path=f"{label}:$", message=f"not JSON: {exc}",
                     hint="pass a JSON export of this format")],
        ) from None


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Graph:
    """Append-only event graph with clamped times, content policy and source pointers."""

    def __init__(self, content: ContentMode = "hash") -> None:
        if content not in CONTENT_MODES:
            raise ValueError(f"content must be one of {CONTENT_MODES}, got {content!r}")
        self.content = content
        self.events: dict[str, Event] = {}
        self.edges: list[tuple[str, str, EdgeType | str]] = []  # kinds checked by TraceBuilder.edge
        self.clamped = 0
        self._n = 0

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
        lower = max((self.end(d) for d, _ in deps), default=None)
        if lower is not None and t < lower:
            t = lower
            self.clamped += 1
        if t_end is not None and t_end < t:
            t_end = t
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


def relative_label(path: Path, root: Path | None) -> str:
    """``path`` relative to ``root`` when inside it, else the file name (for ``Event.source``)."""
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.name
