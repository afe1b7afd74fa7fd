"""The anchors: published and fitted stop rules on vote counts, as the simulator's stop rules.

A stop rule sees, at an O5 check, a :class:`CheckState` — per subtask the **solver votes per
answer so far** (and their order), the episode's token **price**, the **round** and the rounds
left, plus the summary statistics (:class:`orchestrace.env.layout.S`) — and says stop or
continue. The per-question criteria are pure functions of one question's vote counts
``(M, K)``; a task of several subtasks stops when *every* subtask meets the criterion (the
task succeeds only if every subtask's aggregate is right).

=====================  =======================================================================
``ac-beta@C``           Adaptive-Consistency, Beta criterion (Aggarwal et al., EMNLP 2023): with
                        v₁ ≥ v₂ the two largest counts, stop when P(p > ½ | Beta(v₁+1, v₂+1)) ≥ C
                        (:func:`beta_confidence`, exact: a binomial tail)
``ac-dirichlet@C``      Adaptive-Consistency, Dirichlet criterion: stop when the most voted answer
                        is the most likely one with probability ≥ C under Dirichlet(counts + 1)
                        over the (≤ 5) most voted answers; the Beta criterion with fewer than three
                        answers seen (:func:`dirichlet_confidence`, exact closed form)
``esc@w``               Early-Stopping Self-Consistency (Li et al., ICLR 2024): stop when the last
                        complete non-overlapping window of ``w`` votes is unanimous (:func:`esc_agrees`)
``vote-share@s``        stop when the most voted answer holds ≥ s of the votes (:func:`vote_share`)
``fitted-logistic``     the price-aware fitted rule: a cost-weighted logistic regression of "is
``fitted-quadratic``    continuing worth it" on the 16 summary statistics + price, remaining budget
                        and rounds left (linear, or with every pairwise product), fitted on
                        validation paths by the regression-based stopping recipe
                        (:func:`fit_rule`: targets under the current rule, 3 rounds of policy
                        iteration — the recipe of :mod:`orchestrace.trainers.fitted_stop`)
=====================  =======================================================================

**One definition per rule, one interface**: ``ac-beta``, ``ac-dirichlet``, ``esc`` and ``vote-share``
are the rules of :mod:`orchestrace.policies.rules` (``AdaptiveBeta``, ``AdaptiveDirichlet``, ``ESC``,
``VoteShare``: criterion and threshold), which the evaluation on logged runs calls too. The
simulator reaches them through one adapter, :func:`on_every_subtask`: :meth:`CheckState.per_subtask`
builds the rules' :class:`~orchestrace.policies.rules.VoteState` (a row per subtask) and the task stops
when every valid subtask would; the classes here only name the rule the simulator shows. With fewer
than three answers seen the Dirichlet criterion is the Beta criterion (as the authors' code), so
that one vote never certifies itself. Budgets (``budget@r``), confidence thresholds (``threshold@c``) and the adaptive
heuristic's stop (``adaptive-stop``) are the environment's own rules
(:class:`SummaryRule`). :func:`family` lists the whole family with its parameter grids.

>>> counts = np.array([[3, 0, 0], [2, 1, 0], [1, 1, 1]])
>>> np.round(beta_confidence(counts), 4).tolist()
[0.9375, 0.6875, 0.5]
>>> np.round(dirichlet_confidence(counts), 4).tolist()
[0.9375, 0.6875, 0.3333]
>>> vote_share(counts).round(3).tolist()
[1.0, 0.667, 0.333]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..logged.value import continuation_values
from .rules import (
    ESC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    VoteShare,
    VoteState,
    beta_criterion,
    dirichlet_criterion,
    esc_stop,
    top_share,
)
from .rules import StopRule as VoteRule

__all__ = [
    "FITTED_FEATURES",
    "BetaRule",
    "CheckState",
    "DirichletRule",
    "EscRule",
    "FittedRule",
    "StopRule",
    "SummaryRule",
    "VoteShareRule",
    "beta_confidence",
    "continuation_values",
    "dirichlet_confidence",
    "esc_agrees",
    "family",
    "fit_rule",
    "on_every_subtask",
    "vote_share",
]


# ----------------------------------------------------------------------------- the check
@dataclass(frozen=True)
class CheckState:
    """What a stop rule sees at an O5 check, for B episodes."""

    summary: np.ndarray  # (B, Ds) float32 summary observation (named by orchestrace.env.layout.S)
    counts: np.ndarray  # (B, N, K) int64 solver votes per answer per subtask
    order: np.ndarray  # (B, N, A) int64 solver answers in the order cast, −1 after the last
    valid: np.ndarray  # (B, N) bool: the subtask exists
    price: np.ndarray  # (B,) float64 the episode's token price multiplier
    round: np.ndarray  # (B,) int64 the round just aggregated (0-based)
    rounds_left: np.ndarray  # (B,) int64 rounds still possible after this one

    @classmethod
    def from_world(cls, world: Any) -> CheckState:
        """The state of every row of a :class:`~orchestrace.env.world.World` (its vote counts,
        answer order, price and round; the summary observation by its public writer)."""
        cnt = np.asarray(world.cnt, np.int64)
        solver = (np.asarray(world.att_ans) >= 0) & ~np.asarray(world.att_ver)
        # solver answers left-aligned in slot order (a stable sort keeps the order they were cast)
        pos = np.argsort(~solver, axis=2, kind="stable")
        order = np.where(np.take_along_axis(solver, pos, 2), np.take_along_axis(world.att_ans, pos, 2), -1)
        valid = np.arange(cnt.shape[1])[None, :] < np.asarray(world.n)[:, None]
        rnd = np.asarray(world.rnd, np.int64).copy()
        return cls(summary=world.summary_obs(), counts=cnt.copy(), order=order.astype(np.int64), valid=valid,
                   price=np.asarray(world.price, np.float64).copy(), round=rnd,
                   rounds_left=int(world.cfg.max_rounds) - 1 - rnd)

    def rows(self, idx: np.ndarray) -> CheckState:
        """The state of rows ``idx``."""
        return CheckState(**{k: getattr(self, k)[idx] for k in self.__dataclass_fields__})

    @staticmethod
    def concat(parts: list[CheckState]) -> CheckState:
        """Rows of several states, in order."""
        return CheckState(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in CheckState.__dataclass_fields__})

    def per_subtask(self) -> VoteState:
        """The vote-loop state of every subtask (B·N rows, episode-major): its votes, its solver answers in
        the order cast (``drawn``: how many), the episode's price and round — what the rules of
        :mod:`orchestrace.policies.rules` read."""
        B, N = self.valid.shape
        order = _flat(self.order)
        rounds = int((self.round + self.rounds_left).max()) + 1 if B else 1
        return VoteState(votes=_flat(self.counts).astype(np.float64), recent=order, drawn=(order >= 0).sum(1),
                         price=np.repeat(self.price, N), round_=np.repeat(self.round, N), max_rounds=rounds)


class StopRule(Protocol):
    """A rule at the simulator's check: ``name`` and ``stop(state) -> (B,) bool``. The vote-loop rules
    (:class:`orchestrace.policies.rules.StopRule`, ``stop_now(VoteState)``) enter through
    :func:`on_every_subtask`; the environment's own rules (:class:`SummaryRule`) and the fitted rule read the
    summary statistics."""

    name: str

    def stop(self, state: CheckState) -> np.ndarray: ...


# ----------------------------------------------------------------------------- per-question criteria
def _top2(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = -np.sort(-np.asarray(counts, np.int64), axis=-1)  # (…, K) vote counts, largest first
    first, *others = np.moveaxis(s, -1, 0)  # the largest count, then the others in order
    return first, (others[0] if others else np.zeros_like(first))  # a missing second is 0


def beta_confidence(counts: np.ndarray) -> np.ndarray:
    """(M,) P(p > ½) for p ~ Beta(v₁ + 1, v₂ + 1), v₁ ≥ v₂ the two largest of each row of ``counts`` (M, K).

    The one implementation is :func:`orchestrace.policies.rules.beta_criterion` (exact: a binomial tail).

    >>> beta_confidence(np.array([[1, 0], [4, 0], [2, 2]])).tolist()
    [0.75, 0.96875, 0.5]
    """
    v1, v2 = _top2(counts)
    return beta_criterion(v1, v2)


def dirichlet_confidence(counts: np.ndarray) -> np.ndarray:
    """(M,) Adaptive-Consistency's Dirichlet criterion of each row of ``counts`` (M, K):
    :func:`orchestrace.policies.rules.dirichlet_criterion` (the Beta criterion with < 3 answers seen).

    >>> dirichlet_confidence(np.array([[2, 0, 0], [3, 1, 0], [2, 1, 1]])).round(4).tolist()
    [0.875, 0.8125, 0.5355]
    """
    return dirichlet_criterion(np.asarray(counts, np.int64))


def esc_agrees(order: np.ndarray, w: int) -> np.ndarray:
    """(M,) ESC on each row of ``order`` (M, A: answers in the order cast, −1 after the last): is the last
    complete non-overlapping window of ``w`` votes unanimous (:func:`orchestrace.policies.rules.esc_stop`)?
    ``order`` holds the solver answers that voted (:meth:`CheckState.from_world`), so a window here
    spans votes; on logs an unparsed sample is a sample that breaks its window.

    >>> esc_agrees(np.array([[1, 0, 0, -1], [0, 0, 1, -1], [2, 2, -1, -1]]), 2).tolist()
    [False, True, True]
    """
    o = np.asarray(order, np.int64)
    return esc_stop(o, w, n=(o >= 0).sum(1))


def vote_share(counts: np.ndarray) -> np.ndarray:
    """(M,) the most voted answer's share of the votes (0 without votes): :func:`orchestrace.policies.rules.top_share`.

    >>> vote_share(np.array([[2, 1, 1], [0, 0, 0]])).tolist()
    [0.5, 0.0]
    """
    return top_share(np.asarray(counts, np.float64))


def on_every_subtask(state: CheckState, rule: VoteRule) -> np.ndarray:
    """(B,) the one adapter from a vote-loop rule to the simulator's check: ``rule.stop_now`` on every
    subtask's votes (:meth:`CheckState.per_subtask`), and the task stops when every valid subtask would."""
    ok = np.asarray(rule.stop_now(state.per_subtask()), bool).reshape(state.valid.shape)
    return (ok | ~state.valid).all(1)


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])


# ----------------------------------------------------------------------------- the rules
@dataclass(frozen=True)
class BetaRule:
    """Adaptive-Consistency, Beta criterion at confidence ``c`` (``ac-beta@c``)."""

    c: float
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or f"ac-beta@{self.c:g}")

    def stop(self, state: CheckState) -> np.ndarray:
        return on_every_subtask(state, AdaptiveBeta(self.c))


@dataclass(frozen=True)
class DirichletRule:
    """Adaptive-Consistency, Dirichlet criterion at confidence ``c`` (``ac-dirichlet@c``)."""

    c: float
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or f"ac-dirichlet@{self.c:g}")

    def stop(self, state: CheckState) -> np.ndarray:
        return on_every_subtask(state, AdaptiveDirichlet(self.c))


@dataclass(frozen=True)
class EscRule:
    """Early-Stopping Self-Consistency: every subtask's last complete window of ``w`` votes is unanimous (``esc@w``)."""

    w: int
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or f"esc@{self.w}")

    def stop(self, state: CheckState) -> np.ndarray:
        return on_every_subtask(state, ESC(self.w))


@dataclass(frozen=True)
class VoteShareRule:
    """Stop when every subtask's most voted answer holds ≥ ``s`` of its votes (``vote-share@s``)."""

    s: float
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or f"vote-share@{self.s:g}")

    def stop(self, state: CheckState) -> np.ndarray:
        return on_every_subtask(state, VoteShare(self.s))


@dataclass(frozen=True)
class SummaryRule:
    """An environment rule with ``stop_now(summary_obs)`` (budgets, thresholds, the adaptive stop)."""

    policy: Any
    name: str

    def stop(self, state: CheckState) -> np.ndarray:
        return np.asarray(self.policy.stop_now(state.summary), bool)


# ----------------------------------------------------------------------------- the fitted rule
#: The 16 summary statistics of the fitted rule, then the price, the remaining budget and rounds.
FITTED_FEATURES: tuple[str, ...] = (
    "ROUND", "TOKENS", "CLOCK", "N_SUBTASKS", "SETTLED", "MIN_MARGIN", "MEAN_CONF", "MIN_CONF", "REJECTS",
    "ACCEPT_SHARE", "SAFETY", "DECISIONS", "UNTRUSTED", "FOCUS_TOP", "FOCUS_SECOND", "FOCUS_CONF",
    "LOG_PRICE", "BUDGET_LEFT", "ROUNDS_LEFT")


def _columns(cfg: Any) -> np.ndarray:
    """Summary-observation columns of :data:`FITTED_FEATURES` (without the last three in a world
    that shows no price)."""
    from ..env.layout import S

    lay = cfg.layout.summary  # the hand-summarised features, whatever the observation mode
    names = FITTED_FEATURES if lay.price else FITTED_FEATURES[:-3]
    return np.array([lay.index(S[n]) for n in names])


def _design(x: np.ndarray, quadratic: bool) -> np.ndarray:
    """(M, F') bias + features (+ every pairwise product and square when ``quadratic``)."""
    cols = [np.ones((x.shape[0], 1)), x]
    if quadratic:
        i, j = np.triu_indices(x.shape[1])
        cols.append(x[:, i] * x[:, j])
    return np.concatenate(cols, 1)


@dataclass(frozen=True)
class FittedRule:
    """The price-aware fitted rule: continue iff ``design(z(x)) · w > 0`` (a cost-weighted logistic
    regression of "continuing beats stopping"; :func:`fit_rule`)."""

    columns: np.ndarray  # (F,) summary-observation columns (FITTED_FEATURES)
    mean: np.ndarray  # (F,) standardisation
    scale: np.ndarray  # (F,)
    weights: np.ndarray  # (F',) logistic weights on the design
    quadratic: bool
    name: str = "fitted-logistic"
    stats: dict[str, float] = field(default_factory=dict, compare=False)

    def score(self, summary: np.ndarray) -> np.ndarray:
        """(B,) the logit of "continue"."""
        z = (np.asarray(summary, np.float64)[:, self.columns] - self.mean) / self.scale
        return _design(z, self.quadratic) @ self.weights

    def stop(self, state: CheckState) -> np.ndarray:
        return self.score(state.summary) <= 0.0


def _weighted_logistic(X: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float, beta: np.ndarray | None = None,
                       iters: int = 20) -> np.ndarray:
    """Minimise Σ wᵢ·logloss(yᵢ, σ(Xᵢ·β)) / Σ wᵢ + l2·|β[1:]|² by Newton's method (IRLS), from ``beta``."""
    beta = np.zeros(X.shape[1]) if beta is None else beta.copy()
    w = w / max(float(w.sum()), 1e-12)
    reg = np.full(X.shape[1], 2.0 * l2)
    reg[0] = 1e-9
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -30, 30)))
        g = X.T @ (w * (p - y)) + reg * beta
        H = (X * (w * p * (1 - p))[:, None]).T @ X + np.diag(reg)
        step = np.linalg.solve(H, g)
        beta -= step
        if float(np.abs(step).max()) < 1e-6:
            break
    return beta


def fit_rule(cfg: Any, summary: np.ndarray, payoff: np.ndarray, legal: np.ndarray, *, quadratic: bool = False,
             iterations: int = 3, l2: float = 1e-4, name: str | None = None) -> FittedRule:
    """Fit the price-aware rule on always-continue paths of E episodes × R checks by regression-based
    stopping: ``summary`` (E, R, Ds) at each check, ``payoff`` (E, R) the return of stopping there,
    ``legal`` (E, R) CONTINUE allowed (False at an episode's last check and after it).

    Round 0's targets are those of stopping at the next check; each round refits the classifier
    of sign(U − P) weighted by |U − P| (U: the return of continuing and then following the current
    rule) and the rule becomes "continue iff the logit > 0".

    >>> rng = np.random.default_rng(0); E, R = 400, 3
    >>> from orchestrace.env import EnvConfig; cfg = EnvConfig.small_v1()
    >>> summ = rng.random((E, R, 60)).astype(np.float32)
    >>> pay = np.cumsum(rng.normal(0, 0.1, (E, R)), 1); legal = np.ones((E, R), bool); legal[:, -1] = False
    >>> r = fit_rule(cfg, summ, pay, legal); r.name, r.weights.shape   # bias + 16 statistics + 3 price features
    ('fitted-logistic', (20,))
    """
    E, R = payoff.shape
    cols = _columns(cfg)
    x = np.asarray(summary, np.float64)[..., cols].reshape(E * R, len(cols))
    keep = legal.reshape(-1)
    mean = x[keep].mean(0) if keep.any() else np.zeros(len(cols))
    scale = x[keep].std(0) if keep.any() else np.ones(len(cols))
    scale = np.where(scale > 1e-9, scale, 1.0)
    X = _design((x - mean) / scale, quadratic)
    cont = np.zeros((E, R), bool)
    beta = np.zeros(X.shape[1])
    for _ in range(iterations):
        y = continuation_values(payoff, legal, cont) - payoff  # (E, R) advantage of continuing
        yy, ww = (y.reshape(-1) > 0).astype(np.float64)[keep], np.abs(y.reshape(-1))[keep]
        beta = _weighted_logistic(X[keep], yy, ww, l2, beta)  # warm: the previous round's weights
        cont = ((X @ beta) > 0).reshape(E, R) & legal
    rule_name = name or ("fitted-quadratic" if quadratic else "fitted-logistic")
    return FittedRule(columns=cols, mean=mean, scale=scale, weights=beta, quadratic=quadratic, name=rule_name)


# ----------------------------------------------------------------------------- the family
#: Parameter grids of the anchors (each value one rule, tuned on validation).
BETA_C = (0.8, 0.9, 0.95, 0.99)
DIRICHLET_C = (0.8, 0.9, 0.95, 0.99)
ESC_W = (2, 3, 4)
VOTE_SHARE = (0.6, 0.75, 0.9, 1.0)
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def family(cfg: Any) -> dict[str, Any]:
    """Every hand-written rule of the family by name (the fitted rules are fitted per heads:
    :func:`fit_rule`): ``budget@r``, ``threshold@c``, ``adaptive-stop``, ``ac-beta@C``,
    ``ac-dirichlet@C``, ``esc@w``, ``vote-share@s``.

    >>> from orchestrace.env import EnvConfig
    >>> sorted(family(EnvConfig.small()))[:3]
    ['ac-beta@0.8', 'ac-beta@0.9', 'ac-beta@0.95']
    """
    from ..env.baselines import make_baseline

    rules: dict[str, Any] = {f"budget@{r}": SummaryRule(make_baseline("fixed-budget", cfg, rounds=r), f"budget@{r}")
                             for r in range(1, cfg.max_rounds + 1)}
    rules.update({f"threshold@{c:g}": SummaryRule(make_baseline("threshold", cfg, threshold=c), f"threshold@{c:g}")
                  for c in THRESHOLDS})
    rules["adaptive-stop"] = SummaryRule(make_baseline("adaptive", cfg), "adaptive-stop")
    for r in [BetaRule(c) for c in BETA_C] + [DirichletRule(c) for c in DIRICHLET_C] + [EscRule(w) for w in ESC_W] \
            + [VoteShareRule(s) for s in VOTE_SHARE]:
        rules[r.name] = r
    return rules


#: Rule-name prefixes of the published anchors (Adaptive-Consistency, ESC).
PUBLISHED = ("ac-beta@", "ac-dirichlet@", "esc@")
