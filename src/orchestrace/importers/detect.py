"""``auto``: tell the import format from a file's content (never from its name alone).

Rules, first match wins (JSONL files are judged on their first readable lines):

* a line ``{"header": …}`` / ``{"event": …}``, or a JSON document with ``events`` → ``reference``
  (orchestrace's own JSONL / native / reference JSON);
* lines with ``sessionId`` and ``type`` user / assistant / progress / file-history-snapshot… → ``claude-code``;
* lines ``{"type": "session_meta" | "response_item" | "event_msg" | "turn_context", "payload"}`` → ``codex``;
* items with ``object: trace`` / ``trace.span`` → ``openai-agents``;
* ``{"data": [{"traceID", "spans"}]}`` → ``jaeger``; ``resourceSpans`` / ``batches`` / OTel SDK span
  lists → ``otlp``;
* last, so that it never takes another format's file: a list of chat turns (objects with a
  ``content`` and a ``name`` / ``role``), an object wrapping one under ``history`` /
  ``messages`` / ``chat_history`` …, or JSON lines of either → ``chat``.

>>> import json, tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "x.json")
>>> _ = open(p, "w").write(json.dumps({"data": [{"traceID": "a", "spans": []}]}))
>>> detect(p)
'jaeger'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from .._problems import Problem
from ..core.io import read_bytes
from ..errors import TraceDecodeError
from ..vocab import Severity
from ._spans import shape_of

__all__ = ["detect", "detect_bytes"]

_CLAUDE_TYPES = {"user", "assistant", "progress", "file-history-snapshot", "summary", "system", "queue-operation"}
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def detect(path: str | os.PathLike[str]) -> str:
    """The import format of a file, or :class:`TraceDecodeError` naming what was found."""
    p = Path(path)
    if p.is_dir():
        if any(p.glob("*.jsonl")):
            return detect(sorted(p.glob("*.jsonl"))[0])
        raise TraceDecodeError(f"{p}: a folder with no .jsonl files", [_problem(str(p), "folder holds no .jsonl session files")])
    head = _head(p)
    body = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if body.lstrip()[:1] in (b"{", b"[") and len(head) >= _HEAD_BYTES:
        return detect_bytes(read_bytes(p), p.name)  # one JSON document needs all of it
    return detect_bytes(head, p.name)


#: How much of a file is read to tell JSON lines apart (a whole JSON document is read whole).
_HEAD_BYTES = 1 << 20


def _head(p: Path) -> bytes:
    try:
        from .._limits import open_input

        with open_input(p) as fh:  # a FIFO never blocks
            return fh.read(_HEAD_BYTES)
    except OSError:
        return read_bytes(p)  # raises the located io.* problem


def detect_bytes(data: bytes, label: str = "<bytes>") -> str:
    """The import format of some bytes (see the module docstring for the rules)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        doc: Any = _decode(data)
        docs = [doc]
    except (msgspec.DecodeError, ValueError):
        docs = []
        for ln in data.split(b"\n")[:200]:
            if ln.strip():
                try:
                    docs.append(_decode(ln))
                except (msgspec.DecodeError, ValueError):
                    continue
            if len(docs) >= 20:
                break
        if not docs:
            raise TraceDecodeError(f"{label}: not JSON or JSON lines", [_problem(label, "not JSON or JSON lines")]) from None
    first = docs[0]
    if len(docs) == 1 and isinstance(first, dict) and ("events" in first and "trace_id" in first):
        return "reference"
    from .openai_agents import looks_like

    if looks_like(first if len(docs) == 1 else docs):
        return "openai-agents"
    if len(docs) == 1 and shape_of(first) is not None:
        return "jaeger" if shape_of(first) == "jaeger" else "otlp"
    for d in docs:
        if not isinstance(d, dict) or not isinstance(d.get("type", ""), str):
            continue
        if set(d) & {"header", "event", "edge", "end"} and len(d) == 1:
            return "reference"
        if d.get("type") in _CODEX_TYPES and "payload" in d:
            return "codex"
        if d.get("type") in _CLAUDE_TYPES and ("sessionId" in d or "uuid" in d or d.get("type") == "summary"):
            return "claude-code"
        if shape_of(d) is not None:
            return "jaeger" if shape_of(d) == "jaeger" else "otlp"
    from ._chat_doc import looks_like as chat_like

    if chat_like(first if len(docs) == 1 else docs):
        return "chat"
    raise TraceDecodeError(
        f"{label}: cannot tell the format",
        [_problem(label, "content matches none of claude-code, codex, otlp, jaeger, openai-agents, chat, reference")],
    )


def _decode(raw: bytes) -> Any:
    from ._common import decode_json

    return decode_json(raw, "", None)  # invalid UTF-8 replaced; too deep: ValueError


def _problem(where: str, msg: str) -> Problem:
    return Problem(code="import.unknown-format", severity=Severity.ERROR, path=f"{where}:1", message=msg,
                   hint="name the format explicitly: orchestrace import FORMAT PATH")
