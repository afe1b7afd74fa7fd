"""Failure attribution: who and which step made a failed run fail.

=================  ===============================================================
name               what
=================  ===============================================================
:func:`blame`      the decisive error from the evidence on the events and the graph
                   (no LLM): agent, step, evidence lines, confidence, runner-up
:func:`credit`     signed credit per unit from a :class:`BlameResult` (the ``blame``
                   credit method: ``orchestrace credit RUN --method blame``)
``judge``          LLM-judge protocols (all-at-once, step-by-step, binary search)
                   against an OpenAI-compatible endpoint: :mod:`orchestrace.blame.judge`,
                   imported lazily (``orchestrace.blame.judge``)
=================  ===============================================================

Evidence is written by the importers (:mod:`orchestrace.importers._evidence`): an event
with ``error: true`` and ``attrs.evidence`` records of a kind (:class:`EvidenceKind`).

>>> from orchestrace.builder import TraceBuilder
>>> b = TraceBuilder("r"); m = b.add("message", "a", t=0, t_end=1)
>>> blame(b.build()).rule.startswith("no evidence")
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..importers._evidence import Evidence, EvidenceKind, evidence_of
from ._core import FALLBACK_RULE, BlameResult, Culprit, blame

if TYPE_CHECKING:
    from ..credit import CreditResult
    from ..trace import Trace

__all__ = ["FALLBACK_RULE", "BlameResult", "Culprit", "Evidence", "EvidenceKind", "blame", "credit",
           "evidence_of", "judge"]


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


def __getattr__(name: str) -> Any:
    if name == "judge":  # the LLM-judge module (its own helper owns it); imported only when asked for
        return importlib.import_module(".judge", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
