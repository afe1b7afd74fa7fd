"""Bounded reading of imported logs (``collect import``): sizes, numbers, nesting.

A log is untrusted: it may be a sparse 1 GiB file, a gzip bomb, a FIFO, a line nested a million
deep, or numbers no corpus reader accepts (``NaN``, ``1e999``, a 400-digit integer). Here:

- :func:`log_lines` — ``(where, record | reason)`` per non-blank line of a ``.jsonl`` /
  ``.jsonl.gz``: the file must be regular and under the corpus cap, the decompressed total is
  capped (:func:`orchestrace._limits.capped_lines`), a bad line is a located reason, never an
  exception, and never fails the lines around it;
- :func:`log_document` — one whole JSON document (a debate log) under the same caps;
- :func:`loads` — ``json.loads`` that refuses ``NaN`` / ``Infinity``, non-finite floats and
  integers beyond ±2**63, and turns deep nesting into a ``ValueError``;
- :func:`bad_number` — None when a sample's number is one a corpus reader accepts, else why.

>>> loads('{"a": 1.5}'), bad_number(-0.5, "logprob_mean", lo=-1000.0, hi=0.0)
({'a': 1.5}, None)
>>> try:
...     loads('{"a": NaN}')
... except ValueError as e:
...     print(e)
NaN is not a number a log may hold
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._limits import capped_lines, corpus_bytes, regular_file

__all__ = ["LINE_LIMIT", "bad_number", "first_records", "log_document", "log_lines", "loads"]

#: One log line (a batch output line holds every choice's token log-probs).
LINE_LIMIT = 16 * 1024**2
_INT_LIMIT = 2**63


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a log may hold")


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text[:40]} is not a finite number")
    return x


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(int(text)) >= _INT_LIMIT:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits is out of range (beyond ±2**63)")
    return int(text)


def loads(text: str | bytes) -> Any:
    """``json.loads`` with finite, bounded numbers; every refusal is a ``ValueError`` saying why."""
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def log_lines(path: Path) -> Iterator[tuple[str, Any, str | None]]:
    """``(FILE:LINE, record, None)`` or ``(FILE:LINE, None, reason)`` per non-blank line of a JSONL log."""
    for ln, line in capped_lines(path, limit=corpus_bytes(), line_limit=LINE_LIMIT):
        where = f"{path}:{ln}"
        if isinstance(line, OSError):
            yield where, None, f"unreadable ({line})"
            return
        if isinstance(line, ValueError):
            yield where, None, str(line)
            continue
        try:
            yield where, loads(line), None
        except ValueError as exc:  # UnicodeDecodeError is one too
            yield where, None, str(exc)[:200]


def log_document(path: Path) -> Any:
    """The one JSON document of ``path`` (``.gz`` decompressed), under the corpus caps; ``ValueError`` says why."""
    cap = corpus_bytes()
    regular_file(path, limit=cap, what="log file")
    try:
        with open(path, "rb") as raw:
            fh: Any = gzip.GzipFile(fileobj=raw, mode="rb") if path.name.endswith(".gz") else raw
            data = fh.read(cap + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"unreadable ({exc})") from None
    if len(data) > cap:
        raise ValueError(f"more than {cap} bytes (decompressed) — a compression bomb? (raise "
                         "ORCHESTRACE_MAX_CORPUS_BYTES for a larger log)")
    return loads(data)


def first_records(path: Path, n: int = 5) -> tuple[list[Any], bytes]:
    """Up to ``n`` first non-blank lines of a log decoded (None where a line is not JSON), and the first bytes."""
    recs: list[Any] = []
    head = b""
    for _, line in capped_lines(path, limit=corpus_bytes(), line_limit=LINE_LIMIT):
        if isinstance(line, OSError):
            break
        if isinstance(line, bytes):
            head = head or line[:64]
            try:
                recs.append(loads(line))
            except ValueError:
                recs.append(None)
        if len(recs) >= n:
            break
    return recs, head


def bad_number(x: Any, field: str, *, lo: float, hi: float) -> str | None:
    """None when ``x`` is None or a number in ``[lo, hi]``, else what is wrong with ``field``."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not lo <= x <= hi:
        shown = repr(x) if len(repr(x)) <= 40 else repr(x)[:40] + "…"
        return f"{field} {shown} is out of range [{lo:g}, {hi:g}]"
    return None
