"""What an import did with every input record: :class:`ImportReport` and :class:`ImportResult`.

Every record an importer reads lands in exactly one bucket, per record type:

==============  ==========================================================================
``mapped``      became one or more trace events (spawn, message, tool call, …)
``structure``   kept for its timing, containment or metadata, but is not an agent event
                (an HTTP span that parents an LLM call, a ``turn_context`` line, a compaction)
``skipped``     left out by a named rule (UI progress lines, a duplicate record, …);
                ``reasons`` says which rule and how often
``unknown``     a record type the importer does not know (counted and warned, never silent)
``unreadable``  not JSON, cut short, or over the size cap (an *error* problem, located)
==============  ==========================================================================

>>> r = ImportReport(format="claude-code")
>>> r.count("assistant", "mapped"); r.count("progress", "skipped", "UI progress")
>>> r.totals()["mapped"], r.reasons["progress: UI progress"]
(1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._problems import Problem
from ..core.trace import Trace
from ..vocab import Severity

__all__ = ["BUCKETS", "ImportReport", "ImportResult"]

#: The buckets every record is counted in.
BUCKETS = ("mapped", "structure", "skipped", "unknown", "unreadable")

#: At most this many located problems of one code are kept; the rest are counted.
MAX_PROBLEMS_PER_CODE = 50


@dataclass
class ImportReport:
    """Counts of records per type and bucket, skip reasons, and located problems."""

    format: str
    sources: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    suppressed: dict[str, int] = field(default_factory=dict)
    sanitised: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    clamped_times: int = 0
    n_traces: int = 0
    n_events: int = 0
    n_edges: int = 0

    def count(self, rtype: str, bucket: str, reason: str | None = None, n: int = 1) -> None:
        """Count ``n`` records of type ``rtype`` in ``bucket`` (with the rule's ``reason``)."""
        if bucket not in BUCKETS:
            raise ValueError(f"unknown bucket {bucket!r}; use one of {BUCKETS}")
        row = self.counts.setdefault(rtype, dict.fromkeys(BUCKETS, 0))
        row[bucket] += n
        if reason:
            key = f"{rtype}: {reason}"
            self.reasons[key] = self.reasons.get(key, 0) + n

    def problem(self, code: str, path: str, message: str, hint: str = "",
                severity: Severity = Severity.WARNING) -> None:
        """Add a located problem (``path`` is ``file:line`` or ``file:$.json.path``)."""
        same = sum(1 for p in self.problems if p.code == code)
        if same >= MAX_PROBLEMS_PER_CODE:
            self.suppressed[code] = self.suppressed.get(code, 0) + 1
            return
        self.problems.append(Problem(code=code, severity=severity, path=path, message=message, hint=hint))

    def sanitise(self, code: str, path: str, message: str, hint: str = "") -> None:
        """Count one value that was changed or dropped while reading (``code``) and warn, located.

        Every sanitisation an importer makes (a negative token count dropped, a numeric
        string read as a number, an end time before the start moved to the start, invalid
        UTF-8 replaced …) goes through here: nothing is changed silently.

        >>> r = ImportReport(format="otlp"); r.sanitise("import.bad-usage", "f.json#s1", "tokens -5 dropped")
        >>> r.sanitised, r.warnings[0].code
        ({'import.bad-usage': 1}, 'import.bad-usage')
        """
        self.sanitised[code] = self.sanitised.get(code, 0) + 1
        self.problem(code, path, message, hint)

    def note(self, text: str) -> None:
        """Record an assumption the import made (e.g. "time is the turn index"), counted per trace.

        >>> r = ImportReport(format="chat"); r.note("time is the turn index"); r.note("time is the turn index")
        >>> r.notes
        {'time is the turn index': 2}
        """
        self.notes[text] = self.notes.get(text, 0) + 1

    def error(self, code: str, path: str, message: str, hint: str = "") -> None:
        """Add a located *error* (the CLI exits non-zero)."""
        self.problem(code, path, message, hint, Severity.ERROR)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    def totals(self) -> dict[str, int]:
        """Records per bucket over all types."""
        out = dict.fromkeys(BUCKETS, 0)
        for row in self.counts.values():
            for k, v in row.items():
                out[k] += v
        return out

    def merge(self, other: ImportReport) -> None:
        """Add another report's counts and problems into this one."""
        self.sources.extend(s for s in other.sources if s not in self.sources)
        for rtype, row in other.counts.items():
            mine = self.counts.setdefault(rtype, dict.fromkeys(BUCKETS, 0))
            for k, v in row.items():
                mine[k] += v
        for k, v in other.reasons.items():
            self.reasons[k] = self.reasons.get(k, 0) + v
        self.problems.extend(other.problems)
        for k, v in other.suppressed.items():
            self.suppressed[k] = self.suppressed.get(k, 0) + v
        for k, v in other.sanitised.items():
            self.sanitised[k] = self.sanitised.get(k, 0) + v
        for k, v in other.notes.items():
            self.notes[k] = self.notes.get(k, 0) + v
        self.clamped_times += other.clamped_times
        self.n_traces += other.n_traces
        self.n_events += other.n_events
        self.n_edges += other.n_edges

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (printed by ``orchestrace import --report --format json``)."""
        return {
            "format": self.format,
            "sources": list(self.sources),
            "traces": self.n_traces,
            "events": self.n_events,
            "edges": self.n_edges,
            "totals": self.totals(),
            "counts": {k: dict(v) for k, v in sorted(self.counts.items())},
            "reasons": dict(sorted(self.reasons.items())),
            "clamped_times": self.clamped_times,
            "sanitised": dict(sorted(self.sanitised.items())),
            "notes": dict(self.notes),
            "problems": [p.to_dict() for p in self.problems],
            "suppressed_problems": dict(self.suppressed),
        }


@dataclass
class ImportResult:
    """The traces an import produced and its :class:`ImportReport`."""

    traces: list[Trace]
    report: ImportReport

    @property
    def ok(self) -> bool:
        """At least one trace and no error-level problem."""
        return bool(self.traces) and not self.report.errors
