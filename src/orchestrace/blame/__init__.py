"""Failure attribution: who and which step made a failed run fail.

"""

from __future__ import annotations

from ..evidence import Provenance, turn_of
from ..importers import Evidence, EvidenceKind, evidence_of
from ._core import FALLBACK_RULE, FALLBACKS, METHODS, STATUSES, BlameResult, Culprit, blame
from ._credit import unit_values
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

__all__ = ["FALLBACKS", "FALLBACK_RULE", "METHODS", "PROTOCOLS", "STATUSES", "Agreement", "Attribution", "BlameResult",
           "Culprit", "Evidence", "EvidenceKind", "JudgeConfig", "Provenance", "Verdict", "ajudge", "blame",
           "evidence_of", "judge", "second_opinion", "transcript_of", "turn_of", "unit_values"]
