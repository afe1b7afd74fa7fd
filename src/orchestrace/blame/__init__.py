"""Failure attribution: who and which step made a failed run fail.

"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..importers._evidence import Evidence, EvidenceKind, evidence_of
from ._core import FALLBACK_RULE, BlameResult, Culprit, blame
from .judge import (
    PROTOCOLS,
    Agreement,
    Attribution,
    JudgeConfig,
    Verdict,
    ajudge,
    judge,
    second_opinion,
    transcript_of,
)

if TYPE_CHECKING:
    from ..credit import CreditResult
    from ..trace import Trace

__all__ = ["FALLBACK_RULE", "PROTOCOLS", "Agreement", "Attribution", "BlameResult", "Culprit", "Evidence",
           "EvidenceKind", "JudgeConfig", "Verdict", "ajudge", "blame", "credit", "evidence_of", "judge",
           "second_opinion", "transcript_of"]


def credit(trace: Trace, *, unit: str = "agent", baseline: float | None = None, **kw: Any) -> CreditResult:
    """Blame credit of ``trace`` per ``unit``: ``orchestrace.credit.assign(trace, unit=unit, method="blame")``.

    >>> from orchestrace.builder import TraceBuilder
    >>> b = TraceBuilder("r"); m = b.add("message", "a", t=0, t_end=1)
    >>> credit(b.build(outcome=None), unit="agent") # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    orchestrace.errors.ConfigError: no reward signals to credit: ...
    """
    from ..credit import assign

    return assign(trace, unit=unit, method="blame", baseline=baseline, **kw)
