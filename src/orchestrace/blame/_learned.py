"""The learned scorer applied to one trace: calibrated probabilities per agent and per turn.

:func:`turn_probs` scores the candidate turns of a trace with the shipped scorer
(:func:`~._scorer.load_scorer`); :func:`pick` turns them into a culprit (the most probable
agent, and that agent's most probable turn), with calibrated confidences and the features
that weighed most.

>>> from orchestrace.importers.chat import from_doc
>>> hist = [{"name": "user", "content": "Sum 2 and 2."},
...         {"name": "Coder", "content": "```python\\nprint(2+2)\\n```"},
...         {"name": "Computer_terminal", "content": "exitcode: 1 (execution failed)\\nboom"},
...         {"name": "Coder", "content": "The answer is 5."}]
>>> (tr,), _ = from_doc({"history": hist, "is_correct": False}, "r.json", content="keep")
>>> s = turn_probs(tr)
>>> round(float(s.p.sum()), 6), max(s.agents, key=s.agents.get)
(1.0, 'Coder')
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ._features import FEATURES, Candidates, candidates
from ._scorer import Scorer, agent_probs, load_scorer

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..core.trace import Trace

__all__ = ["Scored", "pick", "turn_probs"]


@lru_cache(maxsize=1)
def _shipped() -> Scorer:
    return load_scorer()


@dataclass(frozen=True)
class Scored:
    """Candidates, their probabilities ``p`` (n,), the per-agent sums and the scorer used."""

    cands: Candidates
    p: np.ndarray
    agents: dict[str, float]
    scorer: Scorer

    def row_of(self, event_index: int) -> int | None:
        """The candidate row of a turn's main event index, if it is a candidate."""
        return next((r for r, t in enumerate(self.cands.turns) if t.index == event_index), None)

    def calibrated(self, p: float, what: str = "agent") -> float:
        """A raw agent (or, ``what="step"``, turn) probability through the scorer's Platt map for this run's family."""
        return self.scorer.calibrated(p, self.cands.family, what)

    def best_row(self, agent: str) -> int:
        """``agent``'s most probable turn."""
        rows = [r for r, t in enumerate(self.cands.turns) if t.agent == agent]
        return max(rows, key=lambda r: self.p[r])

    def why(self, row: int, k: int = 3) -> str:
        """The ``k`` features that raise this turn's score most (weight × value)."""
        w = self.scorer.weights.get(self.cands.family, next(iter(self.scorer.weights.values())))
        contrib = self.cands.x[row] * w
        top = [int(i) for i in np.argsort(-contrib)[:k] if contrib[i] > 0]
        return ", ".join(f"{FEATURES[i]} {contrib[i]:+.2f}" for i in top) or "no feature above zero"


def turn_probs(trace: Trace, graph: TraceGraph | None = None, scorer: Scorer | None = None) -> Scored:
    """The shipped (or given) scorer's probabilities over the candidate turns of ``trace``."""
    s = scorer if scorer is not None else _shipped()
    c = candidates(trace, graph)
    if tuple(s.features) != FEATURES:
        from ..errors import ConfigError

        raise ConfigError(f"the blame scorer was fitted on other features ({len(s.features)} vs {len(FEATURES)}); "
                          "refit it with python benchmarks/whowhen.py --fit")
    p = c.mask(s.probs(c.x, c.family))
    return Scored(c, p, agent_probs(p, [t.agent for t in c.turns]), s)


def pick(sc: Scored, exclude: str | None = None) -> tuple[str, int] | None:
    """``(agent, row)``: the most probable agent (not ``exclude``) and its most probable turn."""
    agents = {a: v for a, v in sc.agents.items() if a != exclude}
    if not agents:
        return None
    a = max(agents, key=agents.__getitem__)
    return a, sc.best_row(a)
