"""Failure attribution: which agent made the decisive error of a failed run, and when.

:mod:`~orchestrace.blame.judge` — an LLM judge (the Who&When protocols: all-at-once,
step-by-step, binary search) against any OpenAI-compatible endpoint, and
:func:`~orchestrace.blame.judge.second_opinion` to compare it with another blame.
"""

from __future__ import annotations

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

__all__ = ["PROTOCOLS", "Agreement", "Attribution", "JudgeConfig", "Verdict", "ajudge", "judge",
           "second_opinion", "transcript_of"]
