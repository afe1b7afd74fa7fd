"""Evaluation: the simulator's fair protocol, the exact evaluation on logged runs, the rule family,
the claims and the summaries.
"""

__all__: list[str] = []
