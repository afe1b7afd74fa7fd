"""Failure evidence: what a transcript itself shows went wrong, flagged on the event at import.

An event with evidence has ``error: true`` and ``attrs.evidence``, a list of records::

    {"kind": "exec_failed", "span": [12, 43], "excerpt": "exitcode: 1 (execution failed)",
     "blames": "e7"}

``kind`` is an :class:`EvidenceKind`; ``span`` the character offsets ``[start, end)`` of the
evidence in the event's text (absent when the evidence is structural, e.g. a tool's
``is_error``); ``excerpt`` the matched line, at most :data:`EXCERPT_CHARS` characters (left
out under the ``drop`` content policy); ``blames`` the id of the event whose author the
evidence points at when that is not the flagged event's own author — the turn that wrote
the code an execution ran, the worker turn a ledger verdict judges. The record is a plain
JSON object inside ``attrs`` so every reader of the format keeps it (the reference export
spreads ``attrs`` onto the event) and nothing about the format version changes.

Benchmark labels (Who&When ``mistake_agent`` / ``mistake_step`` / ``mistake_reason``) are
never evidence: :data:`LABEL_KEYS` are dropped by the importers unless asked for, and then go
to ``Trace.meta["labels"]`` only.

>>> [(e.kind.value, e.excerpt) for e in scan("exitcode: 1 (execution failed)\\nCode output: boom")]
[('exec_failed', 'exitcode: 1 (execution failed)')]
>>> [e.kind.value for e in scan("I'm sorry, but I cannot browse the web.")]
['refusal']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..vocab import _StrEnum

__all__ = ["EXCERPT_CHARS", "LABEL_KEYS", "Evidence", "EvidenceKind", "evidence_of", "ledger_verdicts", "scan",
           "to_attrs"]

#: Longest excerpt kept on an evidence record.
EXCERPT_CHARS = 160
#: Wrapper fields that are benchmark labels (never readable by a method; opt-in ``meta.labels``).
LABEL_KEYS = frozenset({"mistake_agent", "mistake_step", "mistake_reason", "mistake_type", "labels"})


class EvidenceKind(_StrEnum):
    """What a transcript shows went wrong (the kinds of :class:`Evidence`)."""

    EXEC_FAILED = "exec_failed"  # code execution ended with a non-zero exit code
    TRACEBACK = "traceback"  # a Python traceback / an exception in an output
    TOOL_ERROR = "tool_error"  # a tool result marked as an error (is_error, status error)
    LEDGER_NO_PROGRESS = "ledger_no_progress"  # a Magentic-One ledger: is_progress_being_made = false
    LEDGER_LOOP = "ledger_loop"  # a Magentic-One ledger: is_in_loop = true
    REPEATED_ACTION = "repeated_action"  # an agent repeats its previous action verbatim
    REFUSAL = "refusal"  # an agent declines or says it cannot do the task
    CONTRADICTS_FACTS = "contradicts_facts"  # a final answer that differs from checked facts in the trace
    ERROR_STATUS = "error_status"  # the source marked the operation as failed (a span's error status)


#: How strongly each kind points at a mistake (used by the blame method; 1 = certain failure).
STRENGTH: dict[EvidenceKind, float] = {
    EvidenceKind.EXEC_FAILED: 0.9, EvidenceKind.TRACEBACK: 0.8, EvidenceKind.TOOL_ERROR: 0.7,
    EvidenceKind.LEDGER_NO_PROGRESS: 0.6, EvidenceKind.LEDGER_LOOP: 0.6, EvidenceKind.REPEATED_ACTION: 0.5,
    EvidenceKind.REFUSAL: 0.5, EvidenceKind.CONTRADICTS_FACTS: 0.7, EvidenceKind.ERROR_STATUS: 0.7,
}


@dataclass(frozen=True)
class Evidence:
    """One piece of failure evidence on an event (see the module docstring for the JSON form)."""

    kind: EvidenceKind
    span: tuple[int, int] | None = None
    excerpt: str | None = None
    blames: str | None = None

    def to_json(self, keep_excerpt: bool = True) -> dict[str, Any]:
        """The record stored in ``attrs.evidence``."""
        d: dict[str, Any] = {"kind": self.kind.value}
        if self.span is not None:
            d["span"] = [self.span[0], self.span[1]]
        if keep_excerpt and self.excerpt:
            from .._limits import (
                scrub,  # an error excerpt may quote a key ("Incorrect API key: sk-…")
            )

            d["excerpt"] = scrub(self.excerpt)
        if self.blames is not None:
            d["blames"] = self.blames
        return d


_EXIT = re.compile(r"(?im)^.*\b(?:exit[ _]?code|exit status|returncode|return code)\"?\s*[:=]?\s*(-?\d+)\b.*$")
_NONZERO = re.compile(r"(?i)(?:returned )?non-zero exit status \d+|execution failed")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):")
_EXC_LINE = re.compile(r"(?m)^\s*(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt)\b[^\n]*$")
_REFUSAL = re.compile(
    r"(?i)\b(?:I'?m sorry,? but I (?:can(?:no|')t|am unable|won't)|I (?:cannot|can't|am unable to|am not able to) "
    r"(?:access|browse|help|assist|complete|fulfil|fulfill|perform|open|view|retrieve|provide)|as an AI(?: language)? "
    r"model,? I (?:cannot|can't|don't))")


def _line_at(text: str, a: int, b: int) -> tuple[int, int, str]:
    s = text.rfind("\n", 0, a) + 1
    e = text.find("\n", b)
    e = len(text) if e < 0 else e
    return s, e, text[s:e].strip()[:EXCERPT_CHARS]


def scan(text: str | None) -> list[Evidence]:
    """Failure evidence found in an event's text: non-zero exit codes, tracebacks, refusals.

    >>> [(e.kind.value, e.span) for e in scan("exitcode: 0 (execution succeeded)")]
    []
    >>> [(e.kind.value, e.excerpt) for e in scan('Traceback (most recent call last):\\n  x\\nKeyError: 3')]
    [('traceback', 'KeyError: 3')]
    """
    if not text:
        return []
    out: list[Evidence] = []
    head = text[:20000]  # outputs can be huge; the verdicts sit at the start
    for m in _EXIT.finditer(head):
        if int(m.group(1)) != 0:
            s, e, line = _line_at(text, m.start(), m.end())
            out.append(Evidence(EvidenceKind.EXEC_FAILED, (s, e), line))
            break
    else:
        m2 = _NONZERO.search(head)
        if m2:
            s, e, line = _line_at(text, m2.start(), m2.end())
            out.append(Evidence(EvidenceKind.EXEC_FAILED, (s, e), line))
    tb = _TRACEBACK.search(text)
    if tb:
        last = None
        for m3 in _EXC_LINE.finditer(text, tb.end(), tb.end() + 20000):  # the exception line ends the traceback
            last = m3
        if last is not None:
            s, e, line = _line_at(text, last.start(), last.end())
            out.append(Evidence(EvidenceKind.TRACEBACK, (tb.start(), e), line))
        else:
            s, e, line = _line_at(text, tb.start(), tb.end())
            out.append(Evidence(EvidenceKind.TRACEBACK, (s, e), line))
    rf = _REFUSAL.search(head)
    if rf:
        s, e, line = _line_at(text, rf.start(), rf.end())
        out.append(Evidence(EvidenceKind.REFUSAL, (s, e), line))
    return out


_LEDGER_KEY = re.compile(r'"(is_progress_being_made|is_in_loop)"\s*:\s*\{.*?"answer"\s*:\s*(true|false)', re.S)


def ledger_verdicts(text: str) -> list[Evidence]:
    """A Magentic-One ledger's negative verdicts: no progress, in a loop (with their spans).

    >>> t = '{"is_in_loop": {"reason": "same page", "answer": true}, "is_progress_being_made": {"answer": true}}'
    >>> [(e.kind.value, e.excerpt) for e in ledger_verdicts(t)]
    [('ledger_loop', 'same page')]
    """
    out = []
    for m in _LEDGER_KEY.finditer(text):
        key, ans = m.group(1), m.group(2)
        if key == "is_in_loop" and ans == "true":
            kind = EvidenceKind.LEDGER_LOOP
        elif key == "is_progress_being_made" and ans == "false":
            kind = EvidenceKind.LEDGER_NO_PROGRESS
        else:
            continue
        r = re.search(r'"reason"\s*:\s*"((?:[^"\\]|\\.)*)"', text[m.start():m.end()])
        excerpt = r.group(1)[:EXCERPT_CHARS] if r else text[m.start():m.end()][:EXCERPT_CHARS]
        out.append(Evidence(kind, (m.start(), m.end()), excerpt))
    return out


def to_attrs(evidence: Iterable[Evidence], keep_excerpt: bool = True) -> list[dict[str, Any]]:
    """The ``attrs.evidence`` list of records."""
    return [e.to_json(keep_excerpt) for e in evidence]


def evidence_of(attrs: Mapping[str, Any] | None) -> list[Evidence]:
    """The evidence records of an event's ``attrs`` (unknown kinds and malformed records skipped).

    >>> evidence_of({"evidence": [{"kind": "refusal", "span": [0, 5]}, {"kind": "nope"}, 3]})
    [Evidence(kind=<EvidenceKind.REFUSAL: 'refusal'>, span=(0, 5), excerpt=None, blames=None)]
    """
    from .._limits import scrub

    raw = (attrs or {}).get("evidence")
    if not isinstance(raw, list):
        return []
    out = []
    for r in raw:
        if not isinstance(r, dict):
            continue
        try:
            kind = EvidenceKind(r.get("kind"))
        except ValueError:
            continue
        sp = r.get("span")
        span = (int(sp[0]), int(sp[1])) if (isinstance(sp, list) and len(sp) == 2
                                             and all(isinstance(x, int) for x in sp)) else None
        ex = scrub(r["excerpt"]) if isinstance(r.get("excerpt"), str) else None  # shown: never a key
        bl = r.get("blames") if isinstance(r.get("blames"), str) else None
        out.append(Evidence(kind, span, ex, bl))
    return out
