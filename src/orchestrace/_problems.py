"""Located problems and validation reports."""

from __future__ import annotations

from typing import Any

import msgspec

from .vocab import Severity

__all__ = ["Problem", "ValidationReport"]


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
    """All problems found in one trace (or file). ``valid`` means: no *error*.

    >>> r = ValidationReport(source="x.json", problems=())
    >>> r.valid, r.errors, r.warnings
    (True, [], [])
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

    def ok(self, *, strict: bool = False) -> bool:
        """True when valid; with ``strict``, warnings fail too."""
        return not self.problems if strict else self.valid

    def to_dict(self) -> dict[str, Any]:
        """``{"path", "valid", "problems": [...]}`` as printed by ``validate --format json``."""
        return {
            "path": self.source,
            "valid": self.valid,
            "problems": [p.to_dict() for p in self.problems],
        }
