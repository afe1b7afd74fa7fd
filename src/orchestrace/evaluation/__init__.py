"""Evaluation: the simulator's fair protocol, the exact evaluation on logged runs, the rule family,
the claims and the summaries.

:func:`evaluate_logged` is the one call that evaluates logged runs (``orchestrace eval --traces``).
"""

from .logged_eval import LoggedEvaluation, evaluate_logged

__all__ = ["LoggedEvaluation", "evaluate_logged"]
