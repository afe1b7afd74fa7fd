"""The anchor stop rules of a vote loop, as pure functions of the votes so far (issue 25).

**The interface** (shared by the offline evaluation and the simulator's protocol): a rule is a
frozen dataclass with ``stop_now(state: VoteState) -> np.ndarray`` (N,) bool, vectorised over
N loops. :class:`VoteState` holds what every rule may read at a check (the end of a round):

- ``votes`` (N, K) float: votes per distinct answer so far (any order; unparsed attempts excluded);
- ``recent`` (N, L) int: every answer drawn so far in sampling order (L = samples so far), as any
  integer answer code (−1 unparsed) — ESC reads its window here, other rules ignore it;
- ``price`` (N,) float: what one more full round costs, in correct answers (price-aware rules);
- ``round_`` (N,) int: the 0-based round just finished; ``max_rounds``: the round limit.

A simulator that only has vote counts builds ``VoteState(votes, recent=None, ...)``: ESC then
reads the window from the last round's votes only when a window fits in one round (see
:class:`ESC`). The family:

``FixedBudget(k)``       self-consistency with k rounds: stop once round k−1 is done.
``VoteShare(c)``         stop when the top answer's share of the votes is ≥ c.
``AdaptiveBeta(c)``      Adaptive-Consistency (Aggarwal et al. 2023), Beta criterion: with
                         v1 ≥ v2 the top-two counts, stop when P(p1 > p2) > c under
                         p1/(p1+p2) ~ Beta(v1+1, v2+1) — computed exactly (a binomial tail).
``AdaptiveDirichlet(c)`` the Dirichlet criterion for > 2 answers: P(p_top > every other p) > c
                         under Dirichlet(v+1) over the observed answers, Monte Carlo with
                         ``samples`` draws from a generator seeded by the count vector (exactly
                         reproducible; ± 0.011 at worst with the default 2,000 draws).
``ESC(w)``               Early-Stopping Self-Consistency (Li et al. 2024): sampling proceeds in
                         windows of w samples; stop when the last complete window is unanimous
                         (all w answers parsed and equal). Windows are checked at round ends.
``PriceLogistic``        stop when a logistic model on the vote summary + price + rounds left
                         says continuing is not worth it (fitted in :mod:`._fit` by the same
                         regression-based optimal stopping as the learned gate).

>>> s = VoteState(votes=np.array([[6.0, 1.0], [2.0, 2.0]]), recent=np.array([[0, 0, 0], [0, 1, 1]]),
...               price=np.array([0.1, 0.1]), round_=np.array([1, 1]), max_rounds=5)
>>> AdaptiveBeta(0.95).stop_now(s).tolist(), VoteShare(0.8).stop_now(s).tolist(), ESC(3).stop_now(s).tolist()
([True, False], [True, False], [True, False])
>>> float(beta_criterion(np.array([6.0]), np.array([1.0]))[0]) == 1 - 9 / 256   # P(Beta(7, 2) > ½), exactly
True
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError

__all__ = ["ESC", "AdaptiveBeta", "AdaptiveDirichlet", "FixedBudget", "PriceLogistic", "StopRule", "VoteShare",
           "VoteState", "beta_criterion", "dirichlet_criterion", "vote_summary", "VOTE_SUMMARY"]


@dataclass(frozen=True)
class VoteState:
    """What a stop rule reads at a check, for N loops (see the module docstring for the shapes)."""

    votes: np.ndarray  # (N, K) float votes per answer so far
    recent: np.ndarray | None  # (N, L) int every answer so far, in order; −1 unparsed
    price: np.ndarray  # (N,) float price of one more full round, in correct answers
    round_: np.ndarray  # (N,) int 0-based round just finished
    max_rounds: int

    def __post_init__(self) -> None:
        n = len(self.votes)
        if np.ndim(self.votes) != 2:
            raise ConfigError(f"VoteState.votes: expected (N, K), got shape {np.shape(self.votes)}")
        for name in ("price", "round_"):
            if np.shape(getattr(self, name)) != (n,):
                raise ConfigError(f"VoteState.{name}: expected shape ({n},), got {np.shape(getattr(self, name))}")


class StopRule:
    """Base of the rules: ``stop_now(state)`` → (N,) bool; ``name`` as results show it."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def stop_now(self, state: VoteState) -> np.ndarray:
        raise NotImplementedError


def _top2(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.sort(np.asarray(votes, np.float64), axis=1)
    v1 = v[:, -1] if v.shape[1] else np.zeros(len(v))
    v2 = v[:, -2] if v.shape[1] > 1 else np.zeros(len(v))
    return v1, v2


def beta_criterion(v1: np.ndarray, v2: np.ndarray) -> np.ndarray:
    """P(p1 > p2) with p1/(p1+p2) ~ Beta(v1+1, v2+1) (Adaptive-Consistency's Beta criterion).

    For integer counts it is exact: P(Beta(a, b) > ½) = P(Binomial(a+b−1, ½) ≤ a−1). Non-integer
    (weighted) counts are rounded down.

    >>> beta_criterion(np.array([0.0, 3.0]), np.array([0.0, 0.0])).tolist()   # 1/2; 1 − 1/16
    [0.5, 0.9375]
    """
    a = np.floor(np.asarray(v1, np.float64)).astype(np.int64) + 1
    b = np.floor(np.asarray(v2, np.float64)).astype(np.int64) + 1
    pairs, inv = np.unique(np.stack([a, b], 1).reshape(-1, 2), axis=0, return_inverse=True)
    vals = np.array([math.fsum(math.comb(ai + bi - 1, j) for j in range(ai)) / 2.0 ** (ai + bi - 1)
                     for ai, bi in pairs.tolist()])
    return vals[inv.reshape(-1)] if len(a) else np.empty(0)


def dirichlet_criterion(votes: np.ndarray, samples: int = 2000) -> np.ndarray:
    """P(p_top > max of the others) under Dirichlet(v + 1) over the observed answers (Monte Carlo).

    Each distinct count vector gets its own generator, seeded by the vector, so a result never
    depends on which other loops were in the batch. Fewer than two observed answers: 1.0 when
    there are votes (the paper's criterion over observed answers), else 0.5.

    >>> float(dirichlet_criterion(np.array([[3.0, 0.0]]))[0]), float(dirichlet_criterion(np.array([[0.0, 0.0]]))[0])
    (1.0, 0.5)
    """
    votes = np.asarray(votes, np.float64)
    if len(votes) == 0:
        return np.empty(0)
    rows, inv = np.unique(-np.sort(-votes, axis=1), axis=0, return_inverse=True)  # sorted count vectors
    vals = np.array([_dirichlet_top(tuple(x for x in row.tolist() if x > 0), samples) for row in rows])
    return vals[inv.reshape(-1)]


#: How many distinct (count vector, samples) results :func:`dirichlet_criterion` keeps (least
#: recently used dropped first): a vote loop of R rounds × W attempts has few distinct sorted
#: count vectors (R = 5, W = 4: at most 2,714, the partitions of 0…20 votes), so 4,096 entries
#: (≈ 1 MB) hold a whole corpus's. ``_dirichlet_top.cache_clear()`` empties it.
DIRICHLET_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=DIRICHLET_CACHE_SIZE)
def _dirichlet_top(obs: tuple[float, ...], samples: int) -> float:
    """P(the first of ``obs`` is the largest) under Dirichlet(obs + 1); a pure function, memoised."""
    if len(obs) < 2:
        return 1.0 if obs else 0.5
    rng = np.random.default_rng(zlib.crc32(repr(obs).encode()))
    g = rng.gamma(np.array(obs) + 1.0, size=(samples, len(obs)))
    return float((g[:, 0] > g[:, 1:].max(1)).mean())


@dataclass(frozen=True)
class FixedBudget(StopRule):
    """Self-consistency with a fixed budget of ``rounds`` rounds."""

    rounds: int

    @property
    def name(self) -> str:
        return f"budget@{self.rounds}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        return np.asarray(state.round_) + 1 >= self.rounds


@dataclass(frozen=True)
class VoteShare(StopRule):
    """Stop when the top answer holds at least ``share`` of the votes (and there is a vote)."""

    share: float

    @property
    def name(self) -> str:
        return f"share@{self.share:g}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        v1, _ = _top2(state.votes)
        total = np.asarray(state.votes, np.float64).sum(1)
        return (total > 0) & (v1 >= self.share * np.maximum(total, 1e-12))


@dataclass(frozen=True)
class AdaptiveBeta(StopRule):
    """Adaptive-Consistency, Beta criterion on the top-two counts (threshold ``c``)."""

    c: float

    @property
    def name(self) -> str:
        return f"ac-beta@{self.c:g}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        v1, v2 = _top2(state.votes)
        return beta_criterion(v1, v2) > self.c


@dataclass(frozen=True)
class AdaptiveDirichlet(StopRule):
    """Adaptive-Consistency, Dirichlet criterion over all observed answers (threshold ``c``)."""

    c: float
    samples: int = 2000

    @property
    def name(self) -> str:
        return f"ac-dirichlet@{self.c:g}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        return dirichlet_criterion(state.votes, self.samples) > self.c


@dataclass(frozen=True)
class ESC(StopRule):
    """Early-Stopping Self-Consistency: stop when the last complete window of ``window`` samples agrees.

    ``recent`` must then hold every answer drawn so far, in order: windows do not overlap
    (samples 0..w−1, w..2w−1, …) and the rule reads the last complete one (a window that ends
    inside a round is read at that round's end; with a window of one round, each round). Without
    ``recent`` (a simulator with counts only) the rule needs ``window`` ≤ the votes of the last
    round and reads unanimity from ``votes`` of the last round, passed as ``recent`` = None and
    ``votes`` = the last round's counts.
    """

    window: int

    @property
    def name(self) -> str:
        return f"esc@{self.window}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        if state.recent is None:
            v = np.asarray(state.votes, np.float64)
            return (v.max(1) >= self.window) & (v.sum(1) == v.max(1))
        r = np.asarray(state.recent)
        end = (r.shape[1] // self.window) * self.window  # the last complete window ends here
        if end == 0:
            return np.zeros(len(r), bool)
        win = r[:, end - self.window:end]
        return (win >= 0).all(1) & (win == win[:, -1:]).all(1)


#: Names of :func:`vote_summary`'s columns (the price-aware logistic rule's features, in order).
VOTE_SUMMARY: tuple[str, ...] = ("top_share", "second_share", "margin", "distinct_share", "entropy",
                                 "beta_criterion", "log_votes", "price", "rounds_left", "price_x_left")


def vote_summary(state: VoteState) -> np.ndarray:
    """(N, len(VOTE_SUMMARY)) the summary statistics of the votes + price + rounds left.

    >>> s = VoteState(np.array([[3.0, 1.0]]), None, np.array([0.2]), np.array([0]), 4)
    >>> dict(zip(VOTE_SUMMARY, vote_summary(s)[0].round(3).tolist()))["rounds_left"]
    3.0
    """
    v = np.asarray(state.votes, np.float64)
    total = v.sum(1)
    n = np.maximum(total, 1e-12)
    v1, v2 = _top2(v)
    p = v / n[:, None]
    ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(1)
    left = state.max_rounds - 1 - np.asarray(state.round_, np.float64)
    price = np.asarray(state.price, np.float64)
    return np.stack([v1 / n, v2 / n, (v1 - v2) / n, (v > 0).sum(1) / n, ent, beta_criterion(v1, v2),
                     np.log1p(total), price, left, price * left], axis=1)


@dataclass(frozen=True)
class PriceLogistic(StopRule):
    """Continue iff sigmoid(coef · standardised(vote_summary) + intercept) > 0.5 + ``margin``.

    ``coef``/``mean``/``std`` have one entry per :data:`VOTE_SUMMARY` column; fitted by
    :func:`orchestrace.offline.fit_price_logistic`.
    """

    coef: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    margin: float = 0.0
    label: str = field(default="price-logistic", compare=False)

    @property
    def name(self) -> str:
        return self.label

    def continue_prob(self, state: VoteState) -> np.ndarray:
        """(N,) the model's probability that continuing is worth more than stopping."""
        x = (vote_summary(state) - np.array(self.mean)) / np.array(self.std)
        z = x @ np.array(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

    def stop_now(self, state: VoteState) -> np.ndarray:
        return self.continue_prob(state) <= 0.5 + self.margin
