"""Reading an answer out of a model's reply: a tagged answer if there is one, else the last number or choice.

Replies ramble; the task suites (:mod:`orchestrace.llm.tasks`) compare answers exactly, so the one
reader lives here: :func:`parse_int` (tagged answers ``<answer>…</answer>``, ``\\boxed{…}``,
``#### …``, ``answer: …`` first; unicode minus signs and thousands commas read; a number glued to
a word is not signed), :func:`parse_choice` (the last named choice, whole words) and
:func:`parse_answer` (either, by the task's kind). Re-exported by :mod:`orchestrace.llm.tasks`.

>>> parse_int("So 4 + 4 = 8, hence the result: -12"), parse_int("<answer>7</answer> not 9")
(-12, 7)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ConfigError

_MINUS = "\u2212\u2013\u2014\ufe63\uff0d"  # unicode minus, en/em dash, small/full-width hyphen

_TAGS = (
    re.compile(r"<answer>(.*?)</answer>", re.I | re.S),
    re.compile(r"\\boxed\{([^{}]*)\}"),
    re.compile(r"####\s*([^\n]*)"),
    re.compile(r"\b(?:final\s+answer|answer|result)\s*(?:is|:|=)\s*:?\s*([^\n]*)", re.I),
)

# A number: optional sign (only when not glued to a preceding word/number/closing bracket,
# so "3-4" reads as 3 and 4), digits with optional thousands commas, optional decimals.
_NUM = re.compile(r"(?<![\w.)\]])([-+]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d])")


def _numbers(text: str) -> list[int | None]:
    """Every number in ``text``, in order; non-integers (``2.5``) give None."""
    text = text.translate({ord(c): "-" for c in _MINUS})
    out: list[int | None] = []
    for m in _NUM.finditer(text):
        sign, digits, frac = m.group(1), m.group(2).replace(",", ""), m.group(3)
        if frac is not None and frac.strip("0"):
            out.append(None)
            continue
        try:
            value = int(digits)
        except ValueError:  # pragma: no cover - \d only matches decimal digits int() reads
            out.append(None)
            continue
        out.append(-value if sign == "-" else value)
    return out


_CLAUSE_END = re.compile(r"\.(?:\s|$)|[(;\n]")


def _tagged(text: str) -> list[str]:
    """Contents of answer tags, strongest tag kind first (the last occurrence of each kind),
    each cut at the end of its first clause (``. ``, ``(``, ``;`` or a newline)."""
    found: list[str] = []
    for rx in _TAGS:
        hits = rx.findall(text)
        if hits:
            found.append(_CLAUSE_END.split(hits[-1], maxsplit=1)[0])
    return found


def parse_int(text: str) -> int | None:
    """The integer a (possibly rambling) reply gives as its answer, or None.

    A tagged answer wins (``<answer>…</answer>``, ``\\boxed{…}``, ``#### …``, ``Answer: …``,
    ``the answer is …``: the last number in the tag's first clause, so ``Answer: 3 + 4 = 7``
    gives 7); otherwise the *last* number in the text.
    Thousands separators and unicode minus signs are understood; a non-integer such as
    ``2.5`` is not an integer answer (None), ``3.0`` is 3.

    >>> parse_int("Let me think: 3 * 4 = 12, minus 2 gives 10.")
    10
    >>> parse_int("Answer: 1,234 (I think 5 is wrong)"), parse_int("It is −7."), parse_int("no idea")
    (1234, -7, None)
    """
    for content in _tagged(text):
        nums = _numbers(content)
        if nums:
            return nums[-1]
    nums = _numbers(text)
    return nums[-1] if nums else None


def parse_choice(text: str, choices: Sequence[str]) -> str | None:
    """The choice (e.g. a name from the fact table) a reply names as its answer, or None.

    A tagged answer that names a choice wins (the last one in the tag's first clause);
    otherwise the choice mentioned *last* (whole words, case-insensitive; at equal end
    positions the longer name).

    >>> parse_choice("Bob's mentor? Looking it up, it is Carol.", ["Alice", "Bob", "Carol"])
    'Carol'
    >>> parse_choice("Answer: alice. (Not Bob.)", ["Alice", "Bob"])
    'Alice'
    """
    if not choices:
        return None

    def last_in(s: str) -> str | None:
        best: tuple[int, int, str] | None = None
        for c in choices:
            for m in re.finditer(rf"(?<!\w){re.escape(c)}(?!\w)", s, re.I):
                key = (m.end(), len(c), c)
                if best is None or key > best:
                    best = key
        return None if best is None else best[2]

    for content in _tagged(text):
        hit = last_in(content)
        if hit is not None:
            return hit
    return last_in(text)


def parse_answer(text: str, kind: str, choices: Sequence[str] = ()) -> str | None:
    """Parse ``text`` as an answer of ``kind`` (``"int"`` or ``"choice"``), as a canonical string.

    >>> parse_answer("= 0042", "int"), parse_answer("it's dave", "choice", ["Dave"])
    ('42', 'Dave')
    """
    if kind == "int":
        v = parse_int(text)
        return None if v is None else str(v)
    if kind == "choice":
        return parse_choice(text, choices)
    raise ConfigError(f"unknown answer kind {kind!r}; expected 'int' or 'choice'")
