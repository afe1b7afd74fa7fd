"""The stop rules of a vote loop, as pure functions of the votes so far: their one home (issues 25, 30).

**One definition per rule.** The criteria below are the only implementations, and the rule
classes of this module the only stop-rule interface: the offline evaluation
(:mod:`orchestrace.offline`) calls them, and the simulator's protocol
(:mod:`orchestrace.policies.anchors`) calls the same classes on every subtask through one adapter
(:func:`~orchestrace.policies.anchors.on_every_subtask`), so a rule decides the same on the same
votes wherever it runs (tested).

**The interface**: a rule is a frozen dataclass with ``stop_now(state: VoteState) -> np.ndarray``
(N,) bool, vectorised over N loops. :class:`VoteState` holds what every rule may read at a
check (the end of a round):

- ``votes`` (N, K) float: votes per distinct answer so far (any order; unparsed attempts excluded);
- ``recent`` (N, L) int: every answer drawn so far in sampling order (L = samples so far), as any
  integer answer code (−1 unparsed) — ESC reads its window here, other rules ignore it;
- ``price`` (N,) float: what one more full round costs, in correct answers (price-aware rules);
- ``round_`` (N,) int: the 0-based round just finished; ``max_rounds``: the round limit;
- ``logprob`` / ``confidence`` (N, L) float, optional: per sample (aligned with ``recent``) its
  mean token log-prob and its DeepConf confidence (:func:`orchestrace.evaluation.family.confidence_of`),
  read by CISC and DeepConf;
- ``drawn`` (N,) int, optional: how many samples each loop has drawn when that differs by row (the
  rest of its ``recent`` row is padding); default every column of ``recent``.

The simulator checks the same rules on every subtask of a task (:class:`orchestrace.policies.anchors.CheckState`
builds this state, one row per subtask), so this is the one stop-rule interface of the package.

The family (definitions as published; thresholds are met at ≥, as in the reference code):

``FixedBudget(k)``       self-consistency with k rounds: stop once round k−1 is done.
``VoteShare(c)``         stop when the top answer's share of the votes is ≥ c.
``AdaptiveBeta(c)``      Adaptive-Consistency (Aggarwal et al. 2023), Beta criterion: with
                         v1 ≥ v2 the top-two counts, stop when P(p1 > p2) ≥ c under
                         p1/(p1+p2) ~ Beta(v1+1, v2+1) — exact (a binomial tail).
``AdaptiveDirichlet(c)`` the Dirichlet criterion: with fewer than three distinct answers it *is*
                         the Beta criterion (as the authors' code); else P(p_top > every other p)
                         under Dirichlet(v+1) over the (at most 5, as published) most voted
                         answers ≥ c — exact, in closed form (:func:`dirichlet_criterion`).
``ESC(w)``               Early-Stopping Self-Consistency (Li et al. 2024): sampling proceeds in
                         non-overlapping windows of w samples; stop when the last complete window
                         is unanimous (all w answers parsed and equal) — :func:`esc_stop`.
``CISC(t, c)``           Confidence-Informed Self-Consistency (Taubenfeld et al. 2025): each sample's
                         vote is softmax(mean token log-prob / t) over the samples; stop when the
                         top answer's weighted share is ≥ c; the answer is the weighted vote.
``DeepConf(w, k, c)``    DeepConf online (Fu et al. 2025): the first w rounds are the warm-up; the
                         threshold s is the (1 − k) quantile of the warm-up samples' confidences
                         (k = 0.1: DeepConf-low, 0.9: DeepConf-high); a later sample whose confidence
                         is below s is terminated (it does not vote); stop once the top answer's
                         confidence-weighted share of the kept votes is ≥ c (no stop in the warm-up).
``PriceLogistic``        stop when a logistic model on the vote summary + price + rounds left
                         says continuing is not worth it (fitted in :mod:`._fit` by the same
                         regression-based optimal stopping as the learned gate).

The fitted same-feature rules (ridge / logistic on the gate's own features) live in
:mod:`._family`, which lists the whole family (:func:`~orchestrace.evaluation.family.family_candidates`).

>>> s = VoteState(votes=np.array([[6.0, 1.0], [2.0, 2.0]]), recent=np.array([[0, 0, 0], [0, 1, 1]]),
...               price=np.array([0.1, 0.1]), round_=np.array([1, 1]), max_rounds=5)
>>> AdaptiveBeta(0.95).stop_now(s).tolist(), VoteShare(0.8).stop_now(s).tolist(), ESC(3).stop_now(s).tolist()
([True, False], [True, False], [True, False])
>>> float(beta_criterion(np.array([6.0]), np.array([1.0]))[0]) == 1 - 9 / 256   # P(Beta(7, 2) > ½), exactly
True
>>> float(dirichlet_criterion(np.array([[2.0, 0.0]]))[0])   # one answer seen: the Beta criterion, Beta(3, 1)
0.875
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .._vote import top_answer
from ..errors import ConfigError

__all__ = ["CISC", "DIRICHLET_TOP_K", "ESC", "AdaptiveBeta", "AdaptiveDirichlet", "DeepConf", "FixedBudget",
           "PriceLogistic", "StopRule", "ThresholdRule", "VoteShare", "VoteState", "beta_criterion", "dirichlet_criterion",
           "esc_stop", "top_answer", "top_share", "vote_summary", "VOTE_SUMMARY"]

#: The Dirichlet criterion reads at most this many of the most voted answers (the published default).
DIRICHLET_TOP_K = 5


@dataclass(frozen=True)
class VoteState:
    """What a stop rule reads at a check, for N loops (see the module docstring for the shapes)."""

    votes: np.ndarray  # (N, K) float votes per answer so far
    recent: np.ndarray | None  # (N, L) int every answer so far, in order; −1 unparsed
    price: np.ndarray  # (N,) float price of one more full round, in correct answers
    round_: np.ndarray  # (N,) int 0-based round just finished
    max_rounds: int
    logprob: np.ndarray | None = None  # (N, L) float mean token log-prob of each sample (CISC)
    confidence: np.ndarray | None = None  # (N, L) float > 0 DeepConf confidence of each sample
    drawn: np.ndarray | None = None  # (N,) int samples drawn so far, when rows differ (the rest of recent: padding)

    def __post_init__(self) -> None:
        n = len(self.votes)
        if np.ndim(self.votes) != 2:
            raise ConfigError(f"VoteState.votes: expected (N, K), got shape {np.shape(self.votes)}")
        for name in ("price", "round_"):
            if np.shape(getattr(self, name)) != (n,):
                raise ConfigError(f"VoteState.{name}: expected shape ({n},), got {np.shape(getattr(self, name))}")
        if self.drawn is not None and (self.recent is None or np.shape(self.drawn) != (n,)):
            raise ConfigError(f"VoteState.drawn: expected shape ({n},) beside recent, got {np.shape(self.drawn)}")
        for name in ("logprob", "confidence"):
            x = getattr(self, name)
            if x is not None and (self.recent is None or np.shape(x) != np.asarray(self.recent).shape):
                want = None if self.recent is None else np.asarray(self.recent).shape
                raise ConfigError(f"VoteState.{name}: expected the shape of recent {want}, "
                                  f"got {np.shape(x)}")


class StopRule:
    """Base of the rules: ``stop_now(state)`` → (N,) bool; ``name`` as results show it."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def stop_now(self, state: VoteState) -> np.ndarray:
        raise NotImplementedError


class ThresholdRule(StopRule):
    """A rule that stops when a criterion of the state reaches a threshold: ``stop_now`` is
    ``criterion(state) ≥ threshold``, and rules with the same ``criterion_key`` differ only in the
    threshold (an evaluation computes the criterion once for all of them)."""

    @property
    def threshold(self) -> float:
        raise NotImplementedError

    @property
    def criterion_key(self) -> tuple:
        raise NotImplementedError

    def criterion(self, state: VoteState) -> np.ndarray:
        raise NotImplementedError

    def stop_now(self, state: VoteState) -> np.ndarray:
        return self.criterion(state) >= self.threshold - 1e-12


def _top2(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = np.sort(np.asarray(votes, np.float64), axis=1)
    v1 = v[:, -1] if v.shape[1] else np.zeros(len(v))
    v2 = v[:, -2] if v.shape[1] > 1 else np.zeros(len(v))
    return v1, v2


def top_share(votes: np.ndarray) -> np.ndarray:
    """(N,) the most voted answer's share of the (possibly weighted) votes of each row; 0 without votes.

    >>> top_share(np.array([[2.0, 1.0, 1.0], [0.0, 0.0, 0.0]])).tolist()
    [0.5, 0.0]
    """
    v = np.asarray(votes, np.float64)
    if v.shape[1] == 0:
        return np.zeros(len(v))
    tot = v.sum(1)
    return np.where(tot > 0, v.max(1) / np.where(tot > 0, tot, 1.0), 0.0)


def beta_criterion(v1: np.ndarray, v2: np.ndarray) -> np.ndarray:
    """P(p1 > p2) with p1/(p1+p2) ~ Beta(v1+1, v2+1) (Adaptive-Consistency's Beta criterion).

    For integer counts it is exact: P(Beta(a, b) > ½) = P(Binomial(a+b−1, ½) ≤ a−1). Non-integer
    (weighted) counts are rounded down.

    >>> beta_criterion(np.array([0.0, 3.0]), np.array([0.0, 0.0])).tolist()   # 1/2; 1 − 1/16
    [0.5, 0.9375]
    """
    a = np.floor(np.asarray(v1, np.float64)).astype(np.int64).reshape(-1) + 1
    b = np.floor(np.asarray(v2, np.float64)).astype(np.int64).reshape(-1) + 1
    if len(a) == 0:
        return np.empty(0)
    span = int(b.max()) + 1
    keys, inv = np.unique(a * span + b, return_inverse=True)  # one exact value per distinct (a, b)
    vals = np.array([_beta_tail(int(k // span), int(k % span)) for k in keys.tolist()])
    return vals[inv.reshape(-1)]


@lru_cache(maxsize=65536)
def _beta_tail(a: int, b: int) -> float:
    """P(Beta(a, b) > ½) = P(Binomial(a + b − 1, ½) ≤ a − 1), exactly."""
    return math.fsum(math.comb(a + b - 1, j) for j in range(a)) / 2.0 ** (a + b - 1)


@lru_cache(maxsize=65536)
def _dirichlet_top(counts: tuple[int, ...]) -> float:
    """P(G₀ > Gⱼ ∀ j ≥ 1) for independent Gⱼ ~ Gamma(cⱼ + 1) — the chance that answer 0 has the largest
    probability under Dirichlet(c + 1) — in closed form: ∫ g_a(x) Πⱼ F_bⱼ(x) dx with
    F_b(x) = 1 − e^{−x} Σ_{m<b} x^m/m!, expanded over the subsets of the other answers."""
    a, others = counts[0] + 1, [c + 1 for c in counts[1:]]
    total = 0.0
    for mask in range(1 << len(others)):
        picked = [others[j] for j in range(len(others)) if mask >> j & 1]
        poly = np.array([1.0])  # Π_{j∈S} Σ_{m<b_j} x^m/m!
        for b in picked:
            poly = np.convolve(poly, np.array([1.0 / math.factorial(m) for m in range(b)]))
        s = len(picked)
        # ∫ x^{a−1+m} e^{−(1+s)x} dx / (a−1)! = (a−1+m)! / ((a−1)! (1+s)^{a+m})
        term = math.fsum(coef * math.perm(a - 1 + m, m) / (1 + s) ** (a + m) for m, coef in enumerate(poly))
        total += (-1) ** s * term
    return float(min(max(total, 0.0), 1.0))


def dirichlet_criterion(votes: np.ndarray) -> np.ndarray:
    """Adaptive-Consistency's Dirichlet criterion for each row of ``votes`` (N, K) (counts; weights rounded down).

    Fewer than three distinct answers: the Beta criterion on the top two (a missing second is 0).
    Else P(the most voted answer has the largest probability) under Dirichlet(v + 1) over the
    :data:`DIRICHLET_TOP_K` most voted answers (exact; the published criterion integrates the
    same density numerically).

    >>> dirichlet_criterion(np.array([[2, 0, 0], [3, 1, 0], [2, 1, 1]])).round(4).tolist()
    [0.875, 0.8125, 0.5355]
    """
    c = np.floor(np.asarray(votes, np.float64)).astype(np.int64)
    if len(c) == 0:
        return np.empty(0)
    srt = -np.sort(-c, axis=1)
    rows, inv = np.unique(srt, axis=0, return_inverse=True)
    vals = np.empty(len(rows))
    for i, row in enumerate(rows):
        obs = tuple(int(x) for x in row[row > 0][:DIRICHLET_TOP_K])
        if len(obs) < 3:
            vals[i] = beta_criterion(np.array([obs[0] if obs else 0]), np.array([obs[1] if len(obs) > 1 else 0]))[0]
        else:
            vals[i] = _dirichlet_top(obs)
    return vals[inv.reshape(-1)]


def esc_stop(seq: np.ndarray, window: int, n: np.ndarray | None = None) -> np.ndarray:
    """(N,) ESC's test: is the last complete non-overlapping window of ``window`` samples unanimous?

    ``seq`` (N, L) holds the samples in the order drawn (−1: nothing parsed, which breaks
    unanimity); ``n`` (N,) how many of them are drawn (default L; the rest is padding). Windows
    are samples 0..w−1, w..2w−1, …; fewer than ``window`` samples never stop.

    >>> esc_stop(np.array([[0, 1, 1], [1, 1, 0]]), 2).tolist()   # the complete window is samples 0–1
    [False, True]
    """
    r = np.asarray(seq, np.int64)
    N, L = r.shape
    n = np.full(N, L) if n is None else np.asarray(n, np.int64)
    end = (n // window) * window  # the last complete window ends here (exclusive)
    idx = np.clip(end[:, None] - window + np.arange(window)[None, :], 0, max(L - 1, 0))
    if L == 0:
        return np.zeros(N, bool)
    win = np.take_along_axis(r, idx, 1)
    return (end >= window) & (win >= 0).all(1) & (win == win[:, -1:]).all(1)


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
class VoteShare(ThresholdRule):
    """Stop when the top answer holds at least ``share`` of the votes (and there is a vote)."""

    share: float

    @property
    def name(self) -> str:
        return f"share@{self.share:g}"

    @property
    def threshold(self) -> float:
        return self.share

    @property
    def criterion_key(self) -> tuple:
        return ("share",)

    def criterion(self, state: VoteState) -> np.ndarray:
        v = np.asarray(state.votes, np.float64)
        return np.where(v.sum(1) > 0, top_share(v), -np.inf)


@dataclass(frozen=True)
class AdaptiveBeta(ThresholdRule):
    """Adaptive-Consistency, Beta criterion on the top-two counts (threshold ``c``, met at ≥)."""

    c: float

    @property
    def name(self) -> str:
        return f"ac-beta@{self.c:g}"

    @property
    def threshold(self) -> float:
        return self.c

    @property
    def criterion_key(self) -> tuple:
        return ("ac-beta",)

    def criterion(self, state: VoteState) -> np.ndarray:
        v1, v2 = _top2(state.votes)
        return beta_criterion(v1, v2)


@dataclass(frozen=True)
class AdaptiveDirichlet(ThresholdRule):
    """Adaptive-Consistency, Dirichlet criterion (:func:`dirichlet_criterion`; threshold ``c``, met at ≥)."""

    c: float

    @property
    def name(self) -> str:
        return f"ac-dirichlet@{self.c:g}"

    @property
    def threshold(self) -> float:
        return self.c

    @property
    def criterion_key(self) -> tuple:
        return ("ac-dirichlet",)

    def criterion(self, state: VoteState) -> np.ndarray:
        return dirichlet_criterion(state.votes)


@dataclass(frozen=True)
class ESC(StopRule):
    """Early-Stopping Self-Consistency: stop when the last complete window of ``window`` samples agrees.

    ``recent`` must hold every answer drawn so far, in order (:func:`esc_stop`; a window that ends
    inside a round is read at that round's end). Without ``recent`` (counts only) the rule needs a
    window that is one round: ``votes`` must then be the last round's counts.
    """

    window: int

    @property
    def name(self) -> str:
        return f"esc@{self.window}"

    def stop_now(self, state: VoteState) -> np.ndarray:
        if state.recent is None:
            v = np.asarray(state.votes, np.float64)
            return (v.max(1) >= self.window) & (v.sum(1) == v.max(1))
        return esc_stop(np.asarray(state.recent), self.window, n=state.drawn)


def _weighted_votes(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(N, K) summed ``weights`` (N, L) per answer code of ``codes`` (N, L); unparsed (−1) never vote."""
    codes = np.asarray(codes, np.int64)
    K = max(int(codes.max(initial=-1)) + 1, 1)
    hot = (codes[..., None] == np.arange(K)) & (codes >= 0)[..., None]
    return (hot * np.asarray(weights, np.float64)[..., None]).sum(1)


def _need(state: VoteState, name: str, rule: str) -> np.ndarray:
    x = getattr(state, name)
    if x is None or state.recent is None:
        raise ConfigError(f"{rule}: needs VoteState.recent and VoteState.{name} (per-sample values)")
    return np.asarray(x, np.float64)


def cisc_weights(logprob: np.ndarray, temperature: float) -> np.ndarray:
    """CISC's vote weights exp(lp / t), shifted by each row's maximum (the softmax up to its normaliser,
    which cancels in a vote and in a share). ``logprob`` (N, …) mean token log-probs, NaN-free.

    >>> cisc_weights(np.array([[0.0, -1.0]]), 1.0).round(3).tolist()
    [[1.0, 0.368]]
    """
    z = np.asarray(logprob, np.float64) / temperature
    m = z.reshape(len(z), -1).max(1) if z.size else np.zeros(len(z))
    m = np.where(np.isfinite(m), m, 0.0)  # a row without a parsed sample: every weight is 0
    return np.exp(z - m.reshape((-1,) + (1,) * (z.ndim - 1)))


@dataclass(frozen=True)
class CISC(ThresholdRule):
    """Confidence-Informed Self-Consistency: softmax(log-prob / ``temperature``) votes, stop at a weighted share."""

    temperature: float
    share: float

    @property
    def name(self) -> str:
        return f"cisc@t{self.temperature:g}/s{self.share:g}"

    @property
    def threshold(self) -> float:
        return self.share

    @property
    def criterion_key(self) -> tuple:
        return ("cisc", self.temperature)

    def criterion(self, state: VoteState) -> np.ndarray:
        lp = _need(state, "logprob", self.name)
        codes = np.asarray(state.recent)
        v = _weighted_votes(codes, cisc_weights(np.where(codes >= 0, lp, -np.inf), self.temperature))
        return np.where(v.sum(1) > 0, top_share(v), -np.inf)


@dataclass(frozen=True)
class DeepConf(ThresholdRule):
    """DeepConf online: warm-up rounds, a warm-up percentile threshold, low-confidence samples terminated,
    a confidence-weighted consensus stop (see the module docstring)."""

    warmup: int
    keep: float
    consensus: float

    @property
    def name(self) -> str:
        return f"deepconf@w{self.warmup}/k{self.keep:g}/c{self.consensus:g}"

    def kept(self, confidence: np.ndarray, per_round: int) -> np.ndarray:
        """(N, L) which samples vote: the warm-up's all, later ones with confidence ≥ the warm-up threshold.

        >>> DeepConf(1, 0.5, 0.9).kept(np.array([[1.0, 3.0, 2.0, 1.5]]), per_round=2).tolist()
        [[True, True, True, False]]
        """
        c = np.asarray(confidence, np.float64)
        n0 = self.warmup * per_round
        if c.shape[1] <= n0:
            return np.ones(c.shape, bool)
        s = np.quantile(c[:, :n0], 1.0 - self.keep, axis=1, method="linear")
        out = c >= s[:, None]
        out[:, :n0] = True
        return out

    def weights(self, confidence: np.ndarray, per_round: int) -> np.ndarray:
        """(N, L) vote weights: the confidence of each kept sample, 0 for a terminated one."""
        c = np.asarray(confidence, np.float64)
        return np.where(self.kept(c, per_round), c, 0.0)

    @property
    def threshold(self) -> float:
        return self.consensus

    @property
    def criterion_key(self) -> tuple:
        return ("deepconf", self.warmup, self.keep)

    def criterion(self, state: VoteState) -> np.ndarray:
        """The top answer's confidence-weighted share of the kept votes; −∞ in the warm-up or without a vote."""
        conf = _need(state, "confidence", self.name)
        rnd = np.asarray(state.round_)
        if len(rnd) and (rnd != rnd[0]).any():
            raise ConfigError(f"{self.name}: every loop of a VoteState must be at the same round (one check)")
        per_round = conf.shape[1] // (int(rnd[0]) + 1) if len(rnd) else 1
        v = _weighted_votes(np.asarray(state.recent), self.weights(conf, per_round))
        return np.where((rnd + 1 >= self.warmup) & (v.sum(1) > 0), top_share(v), -np.inf)


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
