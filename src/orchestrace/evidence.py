"""Failure evidence, typed: the record importers put on events and blame reads, with its provenance.

An event with evidence has ``error: true`` and ``attrs.evidence``, a list of records::

    {"kind": "exec_failed", "span": [12, 43], "excerpt": "exitcode: 1 (execution failed)",
     "blames": "e7", "provenance": "executor"}

=================  ===============================================================================
``kind``           an :class:`EvidenceKind` (what went wrong)
``span``           character offsets ``[start, end)`` in the event's text (absent when structural)
``excerpt``        the matched line, at most :data:`EXCERPT_CHARS` characters (dropped under the
                   ``drop`` content policy)
``blames``         the id of the event whose author the evidence points at, when that is not the
                   flagged event's own author (the turn that wrote the code an execution ran)
``provenance``     who produced the text (:class:`Provenance`): an executor's or a tool's output, a
                   ledger the orchestrator wrote, the agent's own behaviour, the source's status
                   flag, a verifier — or ``quoted``: text that merely *looks* like an error
                   (a task statement, a person, an agent repeating an error message)
=================  ===============================================================================

Only :data:`TRUSTED` provenances are evidence (:meth:`Evidence.is_evidence`); a record written
before provenance existed has none and counts unless it sits on a person's turn (blame says so).

:func:`turn_of` is the one parser of a turn index from ``Event.source``: the index of the turn in
the source transcript, never the index of a tool call inside that turn.

>>> turn_of("run.json:$.history[3].tool_calls[1]"), turn_of("runs.json:$[1].messages[4]"), turn_of("t.jsonl:7")
(3, 4, None)
>>> r = evidence_of({"evidence": [{"kind": "exec_failed", "provenance": "quoted"}]})[0]
>>> r.kind.value, r.provenance.value, r.is_evidence
('exec_failed', 'quoted', False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ._limits import scrub
from .vocab import _StrEnum

__all__ = ["EXCERPT_CHARS", "LIST_KEYS", "STRENGTH", "TRUSTED", "Evidence", "EvidenceKind", "Provenance",
           "evidence_of", "to_attrs", "turn_key", "turn_of"]

#: Longest excerpt kept on an evidence record.
EXCERPT_CHARS = 160
#: Wrapper keys that may hold a transcript's list of turns, tried in this order.
LIST_KEYS: tuple[str, ...] = ("history", "messages", "chat_history", "chat", "conversation", "dialogue", "turns",
                              "transcript", "trajectory", "log")


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
    WRONG_VOTE = "wrong_vote"  # a member's answer that a graded, failed aggregate adopted


class Provenance(_StrEnum):
    """Who produced the text a record was found in (only :data:`TRUSTED` ones are evidence)."""

    EXECUTOR = "executor"  # a code executor's report (exit code, traceback): output, not an action
    TOOL = "tool"  # a tool's result (its error flag, its output)
    LEDGER = "ledger"  # a progress ledger the orchestrator wrote (Magentic-One)
    BEHAVIOUR = "behaviour"  # what the agent itself did in its own turn (a repeat, a refusal)
    SOURCE = "source"  # the source format marked the operation failed (a span's error status)
    VERIFIER = "verifier"  # a grader / checked facts (a failed aggregate, a contradicted answer)
    QUOTED = "quoted"  # text someone wrote that quotes an error (a task statement, a person): not evidence


#: Provenances that make a record evidence.
TRUSTED = frozenset(set(Provenance) - {Provenance.QUOTED})

#: How strongly each kind points at a mistake (used by the blame method; 1 = certain failure).
STRENGTH: dict[EvidenceKind, float] = {
    EvidenceKind.EXEC_FAILED: 0.9, EvidenceKind.TRACEBACK: 0.8, EvidenceKind.TOOL_ERROR: 0.7,
    EvidenceKind.LEDGER_NO_PROGRESS: 0.6, EvidenceKind.LEDGER_LOOP: 0.6, EvidenceKind.REPEATED_ACTION: 0.5,
    EvidenceKind.REFUSAL: 0.5, EvidenceKind.CONTRADICTS_FACTS: 0.7, EvidenceKind.ERROR_STATUS: 0.7,
    EvidenceKind.WRONG_VOTE: 0.8,
}


@dataclass(frozen=True)
class Evidence:
    """One piece of failure evidence on an event (see the module docstring for the JSON form)."""

    kind: EvidenceKind
    span: tuple[int, int] | None = None
    excerpt: str | None = None
    blames: str | None = None
    provenance: Provenance | None = None

    @property
    def is_evidence(self) -> bool:
        """True unless the provenance says the text was merely quoted (None: written before provenance)."""
        return self.provenance is None or self.provenance in TRUSTED

    def by(self, provenance: Provenance, blames: str | None = None) -> Evidence:
        """This record with its provenance (and, if given, the event it blames) set."""
        return replace(self, provenance=provenance, blames=blames if blames is not None else self.blames)

    def to_json(self, keep_excerpt: bool = True) -> dict[str, Any]:
        """The record stored in ``attrs.evidence``."""
        d: dict[str, Any] = {"kind": self.kind.value}
        if self.span is not None:
            d["span"] = [self.span[0], self.span[1]]
        if keep_excerpt and self.excerpt:
            d["excerpt"] = scrub(self.excerpt)  # an error excerpt may quote a key ("Incorrect API key: sk-…")
        if self.blames is not None:
            d["blames"] = self.blames
        if self.provenance is not None:
            d["provenance"] = self.provenance.value
        return d


def to_attrs(evidence: Iterable[Evidence], keep_excerpt: bool = True) -> list[dict[str, Any]]:
    """The ``attrs.evidence`` list of records."""
    return [e.to_json(keep_excerpt) for e in evidence]


def evidence_of(attrs: Mapping[str, Any] | None) -> list[Evidence]:
    """The evidence records of an event's ``attrs`` (unknown kinds and malformed records skipped).

    >>> evidence_of({"evidence": [{"kind": "refusal", "span": [0, 5]}, {"kind": "nope"}, 3]})
    [Evidence(kind=<EvidenceKind.REFUSAL: 'refusal'>, span=(0, 5), excerpt=None, blames=None, provenance=None)]
    >>> evidence_of({"evidence": [{"kind": "refusal", "provenance": "forged"}]})[0].provenance is Provenance.QUOTED
    True
    """
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
                                             and all(type(x) is int for x in sp)) else None
        ex = scrub(r["excerpt"]) if isinstance(r.get("excerpt"), str) else None  # shown: never a key
        bl = r.get("blames") if isinstance(r.get("blames"), str) else None
        pv: Provenance | None = None
        if "provenance" in r:
            try:
                pv = Provenance(r.get("provenance"))
            except ValueError:  # an unknown provenance is not trusted
                pv = Provenance.QUOTED
        out.append(Evidence(kind, span, ex, bl, pv))
    return out


_TURN = re.compile(r"\$(?:\[\d+\])?\.(?:" + "|".join(LIST_KEYS) + r")\[(\d+)\]")  # $.history[3], $[1].messages[3]
_BARE = re.compile(r"\$\[(\d+)\]")  # a bare list of turns: $[3]


def turn_key(source: str) -> tuple[str, int | None]:
    """The part of ``Event.source`` that names the turn, and the turn's index in its list (None: not a turn).

    The index is the *turn's* (the first list index under a transcript key), never that of a tool
    call inside the turn.

    >>> turn_key("run.json:$.history[3].tool_calls[0]"), turn_key("run.json:$[3].tool_calls[1]")
    (('run.json:$.history[3]', 3), ('run.json:$[3]', 3))
    >>> turn_key("runs.json:$[1].messages[4]"), turn_key("t.jsonl:7:$.tool_calls[0]")
    (('runs.json:$[1].messages[4]', 4), ('t.jsonl:7', None))
    """
    m = _TURN.search(source) or _BARE.search(source)
    if m:
        return source[: m.end()], int(m.group(1))
    return source.split(":$", 1)[0], None


def turn_of(source: str | None) -> int | None:
    """The turn index ``k`` of an event's ``source`` (``…$.history[k]…``), else None (see :func:`turn_key`)."""
    if not source:
        return None
    return turn_key(source)[1]
