"""Failure evidence and outcomes of a chat transcript (the chat importer's second look at its turns).

:func:`flag` reads the turns the importer mapped (their event ids, speakers and texts) and
returns the :class:`~._evidence.Evidence` of each event: failed executions (attributed to the
turn that wrote the code), tracebacks, tool errors, Magentic-One ledger verdicts (attributed
to the worker turn they judge), repeated identical actions, refusals, and a final answer that
contradicts the checked facts when the transcript carries them. :func:`outcome_of` reads the
run's outcome from every field the formats use and says when they disagree.

>>> recs = [TurnRecord(0, "e1", "Coder", "```python\\nprint(1/0)\\n```", "worker"),
...         TurnRecord(1, "e2", "Computer_terminal", "exitcode: 1 (execution failed)\\nZeroDivisionError", "worker")]
>>> {eid: [(e.kind.value, e.blames) for e in evs] for eid, evs in flag(recs).items()}
{'e2': [('exec_failed', 'e1')]}
>>> outcome_of({"is_corrected": "False"})
(False, ['is_corrected'], None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._evidence import (
    EXCERPT_CHARS,
    Evidence,
    EvidenceKind,
    Provenance,
    ledger_verdicts,
    of_tool_output,
    scan,
)

__all__ = ["FACT_KEYS", "OUTCOME_KEYS", "TurnRecord", "contradicts", "facts_of", "flag", "outcome_of", "outputs"]

#: Fields that record whether the run succeeded, in the order they are read.
OUTCOME_KEYS: tuple[str, ...] = ("is_correct", "is_corrected", "is_solved", "solved", "success", "correct", "passed")
#: Fields holding checked facts (the task's verified answer).
FACT_KEYS: tuple[str, ...] = ("ground_truth", "expected_answer", "gold_answer", "reference_answer")
_CODE = re.compile(r"```")
#: An executor's report (AG2 ``Computer_terminal``): an output, not an action of its own.
_OUTPUT = re.compile(r"^\s*(?:exitcode:|There is no code from the last)", re.I)
_FIRST_LINE_MIN = 12  # a repeated action must say something (not "OK")


@dataclass(frozen=True)
class TurnRecord:
    """A mapped turn: index ``k`` in the turn list, its main event id, speaker, text and kind.

    ``kind``: ``worker`` / ``orch`` / ``human`` / ``tool_result``; ``caller`` the event id of the
    tool call a tool result answers (its author is the caller).
    """

    k: int
    eid: str
    agent: str
    text: str
    kind: str
    caller: str | None = None
    is_error: bool = False


def _bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return v.strip().lower() in ("true", "yes", "1")
    return None


def outcome_of(wrapper: Mapping[str, Any] | None) -> tuple[bool | None, list[str], str | None]:
    """``(success, fields read, disagreement)`` from every outcome field of the wrapper object.

    Booleans, ``"True"``/``"false"`` strings and 0/1 are read; when two fields disagree the
    success is unknown (None) and the third item says which fields said what.

    >>> outcome_of({"is_correct": True, "is_corrected": "false"})
    (None, ['is_correct', 'is_corrected'], 'is_correct = True but is_corrected = False')
    >>> outcome_of({"level": 1})
    (None, [], None)
    """
    if not wrapper:
        return None, [], None
    got = [(k, _bool(wrapper[k])) for k in OUTCOME_KEYS if k in wrapper]
    read = [(k, b) for k, b in got if b is not None]
    keys = [k for k, _ in read]
    if not read:
        return None, keys, None
    values = {b for _, b in read}
    if len(values) > 1:
        a = next((k, b) for k, b in read if b is True)
        b = next((k, b) for k, b in read if b is False)
        return None, keys, f"{a[0]} = True but {b[0]} = False"
    return read[0][1], keys, None


def facts_of(wrapper: Mapping[str, Any] | None) -> str | None:
    """The checked facts (the verified answer) the transcript carries, if any."""
    for k in FACT_KEYS:
        v = (wrapper or {}).get(k)
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v).strip():
            return str(v).strip()
    return None


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", s.lower()).strip()


def _action_of(text: str) -> str:
    """What an agent did: its code blocks if any, else its first line (``I clicked 'X'.``)."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    if blocks:
        return "\n".join(b.strip() for b in blocks)
    line = text.strip().split("\n", 1)[0].strip()
    return line if len(line) >= _FIRST_LINE_MIN else ""


def outputs(records: Sequence[TurnRecord]) -> dict[str, str | None]:
    """Turns that are an executor's report (``exitcode: …``): event id → the code turn it ran (or None).

    >>> outputs([TurnRecord(0, "e1", "a", "```sh\\nls\\n```", "worker"), TurnRecord(1, "e2", "t", "exitcode: 0", "worker")])
    {'e2': 'e1'}
    """
    out: dict[str, str | None] = {}
    code: list[tuple[str, str]] = []
    for r in records:
        if r.kind == "worker" and _OUTPUT.match(r.text):
            out[r.eid] = next((e for e, a in reversed(code) if a != r.agent), code[-1][0] if code else None)
        elif r.kind in ("worker", "human") and _CODE.search(r.text):
            code.append((r.eid, r.agent))
    return out


def flag(records: Sequence[TurnRecord], facts: str | None = None) -> dict[str, list[Evidence]]:
    """Evidence per event id (see the module docstring); ``facts`` = the checked answer, if any."""
    out: dict[str, list[Evidence]] = {}
    code: list[tuple[str, str]] = []  # (event id, author) of the turns with a code block, in order
    last_worker: str | None = None  # the agent of the latest worker turn
    streak_start: str | None = None  # the first turn of that agent's current streak
    last_action: dict[str, str] = {}
    for r in records:
        found: list[Evidence] = []
        if r.kind in ("worker", "tool_result", "human"):
            report = r.kind == "worker" and bool(_OUTPUT.match(r.text))  # an executor's report (exitcode: …)
            for ev in scan(r.text):
                if r.kind == "tool_result":
                    found.extend(of_tool_output([ev], r.caller))
                elif ev.kind is EvidenceKind.REFUSAL:  # the agent's own words; a person's are a quote
                    found.append(ev.by(Provenance.BEHAVIOUR if r.kind == "worker" else Provenance.QUOTED))
                elif report:  # an execution's output: the author of the code it ran
                    blames = next((e for e, a in reversed(code) if a != r.agent), code[-1][0] if code else None)
                    found.append(ev.by(Provenance.EXECUTOR, blames))
                else:  # error text in a task statement, a person's or an agent's message: quoted, not evidence
                    found.append(ev.by(Provenance.QUOTED))
            if r.is_error and not any(e.kind is EvidenceKind.TOOL_ERROR for e in found):
                found.append(Evidence(EvidenceKind.TOOL_ERROR, None, r.text.strip().split("\n", 1)[0][:EXCERPT_CHARS]
                                      or None, r.caller, Provenance.TOOL))
        if r.kind == "worker" and not _OUTPUT.match(r.text):
            act = _action_of(r.text)
            if act and last_action.get(r.agent) == act:
                a = r.text.find(act.split("\n", 1)[0])
                span = (a, a + len(act.split("\n", 1)[0])) if a >= 0 else None
                found.append(Evidence(EvidenceKind.REPEATED_ACTION, span, act.split("\n", 1)[0][:EXCERPT_CHARS],
                                      provenance=Provenance.BEHAVIOUR))
            if act:
                last_action[r.agent] = act
        if r.kind == "orch" and '"is_' in r.text:  # a verdict on the judged worker's streak of turns
            found.extend(v.by(Provenance.LEDGER, streak_start) for v in ledger_verdicts(r.text))
        if found:
            out.setdefault(r.eid, []).extend(found)
        if r.kind in ("worker", "human") and _CODE.search(r.text):
            code.append((r.eid, r.agent))
        if r.kind == "worker":
            if r.agent != last_worker:  # a new streak: the orchestrator's own turns do not break one
                streak_start = r.eid
            last_worker = r.agent
    if facts is not None:
        final = _final_answer(records)
        if final is not None and contradicts(final.text, facts):
            line = final.text.strip().split("\n", 1)[0][:EXCERPT_CHARS]
            out.setdefault(final.eid, []).append(Evidence(EvidenceKind.CONTRADICTS_FACTS, (0, len(final.text)), line,
                                                                 provenance=Provenance.VERIFIER))
    return out


def contradicts(answer: str, facts: str) -> bool:
    """The answer states less than half of the checked facts' words and numbers (a crude, stated test).

    >>> contradicts("Harbour Street opens earliest.", "Harbour Street branch"), contradicts("It is 12.", "10")
    (False, True)
    """
    want = set(_norm(facts).split())
    if not want:
        return False
    have = set(_norm(answer).split())
    return 2 * len(want & have) < len(want)


def _final_answer(records: Sequence[TurnRecord]) -> TurnRecord | None:
    """The last turn that states something (not a bare ``TERMINATE``) by an agent."""
    for r in reversed(records):
        if r.kind == "worker" and not _OUTPUT.match(r.text) and re.sub(r"\bTERMINATE\b", "", r.text).strip():
            return r
    return None
