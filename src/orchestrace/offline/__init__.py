"""Learning to stop from logged real runs (issue 25): exact offline valuation, the anchor rules, the gate.

Temporary init while the branch is built; see the modules.
"""

from ._logged import LoggedRuns, load_logged_runs, make_synthetic_logged
from ._value import AGGREGATIONS, Valuation, first_stop, task_prices, valuation, vote_counts
from .rules import ESC, AdaptiveBeta, AdaptiveDirichlet, FixedBudget, PriceLogistic, StopRule, VoteShare, VoteState

__all__ = ["AGGREGATIONS", "ESC", "AdaptiveBeta", "AdaptiveDirichlet", "FixedBudget", "LoggedRuns",
           "PriceLogistic", "StopRule", "Valuation", "VoteShare", "VoteState", "first_stop", "load_logged_runs",
           "make_synthetic_logged", "task_prices", "valuation", "vote_counts"]
from ._io import check_runs, read_corpus, save_runs  # noqa: E402
from .gate import StopGate, StopDecision  # noqa: E402
