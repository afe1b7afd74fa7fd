"""Located problems: the collector that lists them (capped per code, the rest counted), and
where a byte offset lies in a JSON text (line, column, JSON path), with the short forms of a
value that messages quote.

The structural decoder (:mod:`orchestrace.core._structural`) and the semantic checks
(:mod:`orchestrace.core._validate`) both record their problems here.

>>> col = Collector(cap=1)
>>> col.add("schema.type", "$.t", "expected a number"); col.add("schema.type", "$.u", "again")
>>> [p.message for p in col.finish()]
['expected a number', '1 more `schema.type` problems not listed (2 in all; the first 1 are shown)']
>>> _path_at(b'{"events": [{"id": 1}, {"id": x', 30), _line_col(b"a" + bytes([10]) + b"bc", 3)
('$.events[1].id', (2, 2))
>>> short("x" * 100, 10), _jtype([1])
("'xxxxxxxx…", 'an array')
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._problems import Problem
from ..vocab import Severity

#: At most this many problems per code are listed; the rest are counted in one summary problem.
MAX_PER_CODE = 100

ERROR, WARNING = Severity.ERROR, Severity.WARNING

_HINTS = {
    "json.malformed": "the input is not valid JSON; fix the text at the reported position",
    "json.truncated": "the document ends early (cut by a crash or a partial copy?); re-export it",
    "json.empty": "the file is empty; write a trace into it (see `orchestrace synth`)",
    "json.invalid-utf8": "save the file as UTF-8",
    "json.too-deep": "flatten the structure: nesting deeper than ~1000 levels is refused",
    "schema.missing-field": "add the field (see `orchestrace schema`)",
    "schema.unknown-field": "remove or rename the field (see `orchestrace schema`)",
    "schema.enum": "use one of the values listed by `orchestrace schema`",
    "schema.type": "fix the value's type (see `orchestrace schema`)",
    "number.non-finite": "write a finite number (NaN, Infinity and values beyond ±1.8e308 are not allowed)",
}


# ----------------------------------------------------------------------------- problems
class Collector:
    """Collects problems, listing at most ``cap`` per code (the rest are counted)."""

    def __init__(self, cap: int = MAX_PER_CODE) -> None:
        self.cap = cap
        self.problems: list[Problem] = []
        #: ids of events dropped by the structural layer (edges to them are not "dangling")
        self.dropped_ids: set[str] = set()
        #: required trace fields reported missing (not reported again as empty)
        self.missing_fields: set[str] = set()
        self.counts: Counter[str] = Counter()
        self._sev: dict[str, Severity] = {}

    def add(self, code: str, path: str, message: str, hint: str | None = None,
            severity: Severity = ERROR) -> None:
        """Record one problem (``hint=None`` takes the code's default hint)."""
        self.counts[code] += 1
        self._sev.setdefault(code, severity)
        if self.counts[code] <= self.cap:
            self.problems.append(Problem(code=code, severity=severity, path=path, message=message,
                                         hint=_HINTS.get(code, "") if hint is None else hint))

    def add_many(self, code: str, indices: Sequence[int] | np.ndarray,
                 make: Callable[[int], tuple[str, str, str]], severity: Severity = ERROR) -> None:
        """Record ``len(indices)`` problems; ``make(i) -> (path, message, hint)`` runs ≤ cap times."""
        n = len(indices)
        if not n:
            return
        room = max(0, self.cap - self.counts[code])
        for i in list(indices[:room]):
            path, message, hint = make(int(i))
            self.add(code, path, message, hint, severity)
        self.counts[code] += n - min(n, room)
        self._sev.setdefault(code, severity)

    def extend(self, problems: Sequence[Problem]) -> None:
        for p in problems:
            self.add(p.code, p.path, p.message, p.hint, p.severity)

    def finish(self) -> list[Problem]:
        """All listed problems plus one summary problem per code over the cap."""
        out = list(self.problems)
        for code, n in self.counts.items():
            if n > self.cap:
                out.append(Problem(code=code, severity=self._sev[code], path="$",
                                   message=f"{n - self.cap} more `{code}` problems not listed "
                                           f"({n} in all; the first {self.cap} are shown)",
                                   hint="fix the listed ones first; they often share one cause"))
        return out


def short(value: Any, limit: int = 60) -> str:
    """``repr`` of a value, cut to ``limit`` characters (a 100 MB string stays readable)."""
    s = repr(value) if not isinstance(value, str) or len(value) < 10 * limit else repr(value[: limit + 1])
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _jtype(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object" if isinstance(v, dict) else type(v).__name__


def _line_col(data: bytes, off: int) -> tuple[int, int]:
    off = max(0, min(off, len(data)))
    return data.count(b"\n", 0, off) + 1, off - data.rfind(b"\n", 0, off)


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],:]')


def _path_at(data: bytes, off: int, limit: int = 8 << 20) -> str:
    """The JSON path of the value being read at byte ``off`` (best effort; ``$`` if far)."""
    if off > limit:
        return "$"
    stack: list[list[Any]] = []  # [kind, key_or_index, expecting_key]
    for m in _TOKEN.finditer(data, 0, off):
        tok = m.group()
        if tok == b"{":
            stack.append(["o", None, True])
        elif tok == b"[":
            stack.append(["a", 0, False])
        elif tok in (b"}", b"]"):
            if stack:
                stack.pop()
        elif tok == b",":
            if stack and stack[-1][0] == "a":
                stack[-1][1] += 1
            elif stack:
                stack[-1][2] = True
        elif tok == b":":
            pass
        elif stack and stack[-1][0] == "o" and stack[-1][2]:
            try:
                stack[-1][1] = json.loads(tok)
            except ValueError:
                stack[-1][1] = "?"
            stack[-1][2] = False
    out = "$"
    for kind, key, expecting in stack:
        if kind == "a":
            out += f"[{key}]"
        elif key is not None and not expecting:
            out += f".{key}"
    return out
