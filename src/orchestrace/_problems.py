"""Located problems, validation reports, and the one table of problem codes.

:data:`PROBLEM_CODES` is the single table of the codes that the validator
(:func:`orchestrace.validate`) and the graph core (:class:`orchestrace.TraceGraph`, which
refuses what it cannot analyse) report: the same defect gets the same code, severity and
message from both. The validator's module docstring lists the table for readers; a test
checks that the two agree and that nothing reports a code outside it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .vocab import Severity

__all__ = ["PROBLEM_CODES", "Problem", "ValidationReport", "problem"]

_E, _W = Severity.ERROR, Severity.WARNING

#: code → (default severity, meaning). Shared by the validator and the graph core.
PROBLEM_CODES: dict[str, tuple[Severity, str]] = {
    "io.not-found": (_E, "the path does not exist"),
    "io.unreadable": (_E, "the file cannot be read (permissions, …)"),
    "io.is-directory": (_E, "the path is a directory"),
    "io.too-large": (_E, "the file is over ``ORCHESTRACE_MAX_FILE_BYTES``"),
    "json.empty": (_E, "the input is empty or only whitespace"),
    "json.malformed": (_E, "not JSON (includes ``NaN``/``Infinity`` tokens)"),
    "json.truncated": (_E, "a JSON document ends early"),
    "json.invalid-utf8": (_E, "bytes that are not UTF-8 (the rest is still checked)"),
    "json.bom": (_W, "a UTF-8 byte-order mark before the JSON (ignored)"),
    "json.too-deep": (_E, "nesting beyond ~1000 levels"),
    "json.toml": (_E, "the file is TOML, not JSON (a reward spec or a config?)"),
    "jsonl.truncated": (_W, "the stream's last line was cut; earlier records kept"),
    "jsonl.no-end": (_W, "a stream trace has no ``end`` record"),
    "jsonl.no-header": (_E, "records before the first ``header`` record"),
    "jsonl.bad-record": (_E, "a line is not exactly one of header/event/edge/end"),
    "schema.type": (_E, "a value has the wrong JSON type"),
    "schema.missing-field": (_E, "a required field is absent"),
    "schema.not-a-trace": (_E, "a JSON object with none of a trace's fields (a config file?)"),
    "schema.unknown-field": (_E, "an unknown trace field (warning on a native event: kept in ``attrs``)"),
    "schema.enum": (_E, "an unknown enum value (hint: \"did you mean …?\")"),
    "reference.missing-field": (_E, "a reference trace (no ``schema_version``) lacks a field the reference schema requires"),
    "reference.empty-events": (_E, "a reference trace has no events (``minItems: 1``)"),
    "reference.empty-string": (_E, "an empty id/agent/trace_id/task_id (``minLength: 1``)"),
    "reference.negative-time": (_E, "``t < 0`` in a reference trace (``minimum: 0``)"),
    "reference.extra-moved": (_W, "an extra property of a reference event collides with a native field of another type; kept in ``attrs``"),
    "version.unknown": (_W, "a ``schema_version`` this release does not know"),
    "id.duplicate": (_E, "two events share an id"),
    "id.empty": (_E, "an empty event id or agent"),
    "edge.dangling": (_E, "an edge end is not an event id"),
    "edge.cycle": (_E, "dependency edges (every type but temporal and safety_flow) form a cycle (one cycle's members are listed)"),
    "edge.time-backwards": (_E, "a dependency edge goes back in time (``t[dst] < t[src]``)"),
    "event.end-before-start": (_E, "``t_end < t``"),
    "agent.before-spawn": (_E, "an agent has events before it is first spawned"),
    "return.wrong-target": (_E, "a return does not go to the agent's spawner"),
    "stop.multiple": (_E, "more than one stop decision (O5)"),
    "stop.has-successor": (_E, "a dependency edge leaves the stop decision"),
    "cost.negative": (_E, "a negative cost, token count or ``costs`` entry"),
    "cost.too-large": (_E, "a token count beyond 2**53 (a corrupt value)"),
    "number.non-finite": (_E, "NaN, ±Infinity or a number beyond the float range"),
    "decision.misplaced": (_W, "a decision payload on a non-decision event"),
    "internal.error": (_E, "the validator itself failed (a bug: please report)"),
}


class Problem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=False):
    """One problem: a stable ``code``, a ``severity``, a JSON ``path``, a message and a hint.

    >>> p = Problem(code="edge.dangling", severity=Severity.ERROR, path="$.edges[3].dst",
    ...             message="edge points to unknown event 'e9'", hint="add event 'e9' or fix the id")
    >>> str(p)
    "error edge.dangling at $.edges[3].dst: edge points to unknown event 'e9' (hint: add event 'e9' or fix the id)"
    """

    code: str
    severity: Severity
    path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        tail = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.severity} {self.code} at {self.path}: {self.message}{tail}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict: ``code, severity, path, message, hint``."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }


class ValidationReport(msgspec.Struct, frozen=True, kw_only=True):
    """All problems found in one trace (or file). ``valid`` (and its alias ``ok``) means: no *error*.

    ``ok`` is a property like ``valid``, so ``if report.ok:`` reads as it should; the strict
    verdict (warnings fail too) is :meth:`passes`.

    >>> from orchestrace._problems import problem
    >>> r = ValidationReport(source="x.json", problems=())
    >>> r.valid, r.ok, r.errors, r.warnings
    (True, True, [], [])
    >>> bad = ValidationReport(source="y.json", problems=(problem("edge.dangling", "$.edges[0]", "no such event"),))
    >>> bad.valid, bad.ok, bad.passes(strict=True)
    (False, False, False)
    """

    source: str | None
    problems: tuple[Problem, ...]
    n_events: int = 0
    n_edges: int = 0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    @property
    def valid(self) -> bool:
        return not any(p.severity is Severity.ERROR for p in self.problems)

    @property
    def ok(self) -> bool:
        """The same as :attr:`valid` (no error-level problem); a property, never a method to call."""
        return self.valid

    def passes(self, *, strict: bool = False) -> bool:
        """True when valid; with ``strict``, warnings fail too.

        >>> ValidationReport(source=None, problems=()).passes(strict=True)
        True
        """
        return not self.problems if strict else self.valid

    def to_dict(self) -> dict[str, Any]:
        """``{"path", "valid", "problems": [...]}`` as printed by ``validate --format json``."""
        return {
            "path": self.source,
            "valid": self.valid,
            "problems": [p.to_dict() for p in self.problems],
        }


def force_verdict(report: ValidationReport, trace_id: str, *, force: bool, verb: str = "analyse") -> tuple[bool, str]:
    """The one refuse-unless-``--force`` rule of every analysing command: ``(go on?, what to say)``.

    A valid trace goes on silently; an invalid one is refused with a message that names the
    way out, or — with ``force`` — goes on with a warning that says so.

    >>> from orchestrace._problems import problem
    >>> bad = ValidationReport(source="x", problems=(problem("edge.dangling", "$.edges[0]", "no such event"),))
    >>> force_verdict(bad, "t", force=False, verb="measure")[0], force_verdict(bad, "t", force=True, verb="measure")
    (False, (True, "trace 't' is not valid (1 error(s)); --force: measure it anyway, results may be meaningless"))
    """
    if report.valid:
        return True, ""
    n = len(report.errors)
    if force:
        return True, f"trace {trace_id!r} is not valid ({n} error(s)); --force: {verb} it anyway, results may be meaningless"
    return False, (f"trace {trace_id!r} is not valid ({n} error(s)); `orchestrace validate` lists them; fix the trace, "
                   f"or pass --force to {verb} it anyway")


def problem(code: str, path: str, message: str, hint: str = "") -> Problem:
    """A :class:`Problem` with the severity :data:`PROBLEM_CODES` gives ``code`` (KeyError if unknown).

    >>> problem("edge.dangling", "$.edges[0].src", "edge src 'x' is not the id of any event").severity
    <Severity.ERROR: 'error'>
    """
    return Problem(code=code, severity=PROBLEM_CODES[code][0], path=path, message=message, hint=hint)
