"""Failure attribution: who and which step made a failed run fail.

"""

from __future__ import annotations

from ..importers import Evidence, EvidenceKind, evidence_of
from ._core import FALLBACK_RULE, FALLBACKS, BlameResult, Culprit, blame
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

__all__ = ["FALLBACK_RULE", "FALLBACKS", "PROTOCOLS", "Agreement", "Attribution", "BlameResult", "Culprit", "Evidence",
           "EvidenceKind", "JudgeConfig", "Verdict", "ajudge", "blame", "evidence_of", "judge",
           "second_opinion", "transcript_of", "unit_values"]
