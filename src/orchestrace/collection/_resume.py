"""Resuming a collection: which tasks a corpus stream already holds, and the torn tail to cut.

A collection appends one whole trace per task (its ``header`` line, its events, its ``end`` line)
with a single write; a killed run can leave a torn last trace. :func:`scan_and_cut` keeps every
complete trace (one whose ``end`` record is whole, even without its final newline), cuts only the
torn tail after the last one, and returns the task ids done. Damage *before* a complete trace (a
header that is not JSON) is a located :class:`~orchestrace.errors.ConfigError`: cutting there
would lose runs. So is a line longer than the JSONL record cap (:data:`orchestrace._limits.MAX_LINE_BYTES`,
1 MiB): the collector never writes one (a reply is cut at ``MAX_TEXT_CHARS``), and it is read at most
one cap's worth at a time, never whole.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "traces.jsonl"
>>> _ = p.write_bytes(b'{"header": {"task_id": "a"}}\\n{"end": {}}\\n{"header": {"task_id": "b"}}\\n{"ev')
>>> scan_and_cut(p)
({'a'}, 33)
>>> p.read_bytes()
b'{"header": {"task_id": "a"}}\\n{"end": {}}\\n'
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._limits import MAX_LINE_BYTES, regular_file
from ..errors import ConfigError


def scan_and_cut(path: Path, *, line_limit: int = MAX_LINE_BYTES) -> tuple[set[str], int]:
    """``(task ids of the complete traces, bytes cut)`` of the stream at ``path``, its torn tail cut."""
    regular_file(path, limit=2**40, what="traces stream")  # never open a FIFO
    done: set[str] = set()
    good_end = 0
    pos = 0
    current: str | None = None
    damaged: str | None = None
    add_newline = False
    # Not _limits.capped_lines (the JSONL streams' reader): the cut needs every line's exact byte offset,
    # blank lines included, and only the header and end records are decoded.
    with open(path, "rb") as fh:
        ln = 0
        while line := fh.readline(line_limit + 1):
            ln += 1
            if len(line) > line_limit:
                raise ConfigError(f"{path}:{ln}: a line longer than {line_limit} bytes, the cap of one JSONL "
                                  "record; a collection never writes one, so this is not (only) a collection's "
                                  "trace stream: resume into an empty folder, or remove that line by hand")
            pos += len(line)
            whole = line.endswith(b"\n")
            if line.startswith(b'{"header":'):
                current = _header_task_id(line)
                if current is None and whole:
                    damaged = damaged or f"{path}:{ln}: a trace header that is not valid JSON"
            elif line.startswith(b'{"end":') and current is not None and (whole or _is_json(line)):
                if damaged is not None:
                    raise ConfigError(f"{damaged}, followed by complete traces; --resume would lose them: "
                                      "remove that run's lines by hand, then resume")
                done.add(current)
                good_end, current, add_newline = pos, None, not whole
            if not whole:
                break
    size = path.stat().st_size
    cut = 0
    if good_end < size:
        cut = size - good_end
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    if add_newline:  # the last trace was whole but for its newline: keep it, end its line
        with open(path, "ab") as fh:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
    return done, cut


def _header_task_id(line: bytes) -> str | None:
    try:
        tid = json.loads(line)["header"]["task_id"]
    except (ValueError, KeyError, TypeError):  # torn, not UTF-8 (UnicodeDecodeError is a ValueError), no id
        return None
    return tid if isinstance(tid, str) else None


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True
