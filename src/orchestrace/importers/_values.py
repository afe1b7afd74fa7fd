"""One field's value from a foreign record: a time, a count, a cost, a message's text.

Foreign session files hold what their writers chose: ISO strings or epoch numbers in any unit,
token counts as strings or floats, costs that overflow. Each reader here returns the value the
trace needs or ``None``, and says in the import report (a located, counted warning) whatever it
had to change or drop — never a crash, never a silent fix. Re-exported by
:mod:`orchestrace.importers._common`.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import Any

from ._report import ImportReport

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
        try:
            v = float(value)
        except OverflowError:  # an integer far beyond a float: not a time
            return None
        if not math.isfinite(v):
            return None
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


#: Token counts above this in one record are not plausible (a ``1e300`` is a corrupt value).
MAX_COUNT = 10**12


def count_value(value: Any, name: str, where: str, report: ImportReport | None) -> int | None:
    """A non-negative whole count (tokens) from a source record; every change is warned and counted.

    ========================  =====================================  ====================
    value                     result                                 ``report.sanitised``
    ========================  =====================================  ====================
    ``12``                    12
    ``"12"``, ``12.0``        12 (a number written as text / float)  ``import.coerced``
    ``12.7``                  12 (fraction dropped)                  ``import.coerced``
    ``-5``, ``1e300``, NaN,   None (dropped: not a plausible count)  ``import.bad-usage``
    ``true``, ``"abc"``, …
    ========================  =====================================  ====================

    >>> r = ImportReport(format="codex")
    >>> [count_value(v, "input_tokens", "f:1", r) for v in (12, "12", -5, 1e300, None)]
    [12, 12, None, None, None]
    >>> r.sanitised
    {'import.coerced': 1, 'import.bad-usage': 2}
    """
    if value is None:
        return None
    n: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, float) and math.isfinite(value) and abs(value) <= MAX_COUNT:
        n = int(value)
    elif isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError:
            f = math.nan
        if math.isfinite(f) and abs(f) <= MAX_COUNT:
            n = int(f)
    if n is None or n < 0 or n > MAX_COUNT:
        if report is not None:
            report.sanitise("import.bad-usage", where, f"{name} = {_short(value)} is not a plausible count; dropped",
                            f"a count is a whole number from 0 to {MAX_COUNT:.0e}")
        return None
    if report is not None and not (isinstance(value, int) and not isinstance(value, bool)):
        report.sanitise("import.coerced", where, f"{name} = {_short(value)} read as {n}",
                        "the source wrote a count as text or with a fraction")
    return n


def cost_value(value: Any, name: str, where: str, report: ImportReport | None) -> float | None:
    """A finite, non-negative cost from a source record; anything else dropped with a counted warning.

    >>> cost_value("0.5", "cost", "f:1", None), cost_value(-1, "cost", "f:1", None), cost_value("inf", "c", "f", None)
    (0.5, None, None)
    """
    if value is None:
        return None
    f = math.nan
    if not isinstance(value, bool):
        try:
            f = float(value)
        except (TypeError, ValueError, OverflowError):
            f = math.nan
    if not math.isfinite(f) or f < 0:
        if report is not None:
            report.sanitise("import.bad-usage", where, f"{name} = {_short(value)} is not a finite, non-negative cost; "
                            "dropped", "a cost is a number ≥ 0")
        return None
    if report is not None and not isinstance(value, (int, float)):
        report.sanitise("import.coerced", where, f"{name} = {_short(value)} read as {f}",
                        "the source wrote a number as text")
    return f


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
