"""Failure evidence: what a transcript itself shows went wrong, flagged on the event at import.

The record type (:class:`~orchestrace.evidence.Evidence`: kind, span, excerpt, the event it
blames, provenance) lives in the core module :mod:`orchestrace.evidence`; this module finds it
in text (:func:`scan`, :func:`ledger_verdicts`) and gives records from a tool's output their
provenance (:func:`of_tool_output`). The record is a plain JSON object inside ``attrs`` so every
reader of the format keeps it (the reference export spreads ``attrs`` onto the event) and
nothing about the format version changes.

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
from collections.abc import Iterable

from ..evidence import (
    EXCERPT_CHARS,
    STRENGTH,
    Evidence,
    EvidenceKind,
    Provenance,
    evidence_of,
    to_attrs,
)

__all__ = ["EXCERPT_CHARS", "LABEL_KEYS", "STRENGTH", "Evidence", "EvidenceKind", "Provenance", "evidence_of",
           "ledger_verdicts", "of_tool_output", "scan", "to_attrs"]

#: Wrapper fields that are benchmark labels (never readable by a method; opt-in ``meta.labels``).
LABEL_KEYS = frozenset({"mistake_agent", "mistake_step", "mistake_reason", "mistake_type", "labels"})


def of_tool_output(found: Iterable[Evidence], call: str | None) -> list[Evidence]:
    """Records found in a tool's (or an executor's) output, with their provenance, blaming ``call``.

    An exit code or a traceback there is the executor's report; an error flag is the tool's; a
    refusal printed by a tool is someone else's words (quoted, not evidence).

    >>> [(e.kind.value, e.provenance.value, e.blames) for e in of_tool_output(scan("exit code: 2"), "e4")]
    [('exec_failed', 'executor', 'e4')]
    """
    prov = {EvidenceKind.EXEC_FAILED: Provenance.EXECUTOR, EvidenceKind.TRACEBACK: Provenance.EXECUTOR,
            EvidenceKind.TOOL_ERROR: Provenance.TOOL, EvidenceKind.ERROR_STATUS: Provenance.SOURCE}
    return [e.by(prov.get(e.kind, Provenance.QUOTED), call) for e in found]


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
