"""The rule family × fixed team configurations, as one list the evaluations iterate over (issue 30).

A **candidate** is one way to run the loop without learning a policy: a fixed **configuration**
(which attempt columns are called every round: a width 1..W of a homogeneous vote, or a valid
member subset of a team), an **aggregation** (``majority``, ``logprob`` — each vote weighted by
exp(mean token log-prob) — and, where the corpus logged DeepConf confidences, ``confidence``;
CISC and DeepConf bring their own weighted vote) and a **stop rule** of
:mod:`orchestrace.policies.rules` or a rule fitted here. :func:`family_candidates` lists every
candidate of one configuration (fitting the fitted rules on the training tasks); the evaluation
values each exactly (:func:`value_candidates`), tunes on validation tasks and reports the best
per family and the best of the whole product.

The families:

=================  =============================================================================
``budget``          fixed self-consistency budgets 1..R rounds, under every aggregation
``share``           vote share ≥ c
``ac-beta``         Adaptive-Consistency, Beta criterion ≥ c
``ac-dirichlet``    Adaptive-Consistency, Dirichlet criterion ≥ c
``esc``             Early-Stopping Self-Consistency, window w
``cisc``            CISC: softmax(log-prob / t) vote, stop at a weighted share ≥ c
``deepconf``        DeepConf online: warm-up rounds, warm-up percentile threshold, low-confidence
                    samples terminated, confidence-weighted consensus stop
``price-logistic``  a logistic model on the vote summary + price + rounds left (:mod:`._fit`)
``fitted-ridge``    **the same-information rules**: per check a ridge (``fitted-ridge``) or a
``fitted-logistic`` cost-weighted logistic regression (``fitted-logistic``) on the learned gate's
                    own features (:data:`~orchestrace.policies.features.FEATURES`) of the gain of
                    continuing — one more round (``next``) or to the round limit (``end``) — with
                    no backward induction; continue iff the prediction beats a margin
=================  =============================================================================

Validity of a team configuration: a column ``c`` may be used only with every column in
``runs.sees[c]`` (the answers it was shown when logged). The joint-policy evaluation calls
:func:`family_candidates` with a column subset of its runs (:func:`columns_of`) to get every rule.

>>> from orchestrace.offline import make_synthetic_logged
>>> runs = make_synthetic_logged(T=300, R=3, W=2, seed=0)
>>> [c for c in configs(runs)]
[(0,), (0, 1)]
>>> itr, iv = (np.flatnonzero(runs.split == s) for s in ("train", "validation"))
>>> sc = {"token_scale": 150.0, "lp_fill": -0.7, "len_scale": 10.0}
>>> cands = family_candidates(columns_of(runs, (0, 1)), itr, iv, np.full(300, 0.05), sc, (0, 1))
>>> sorted({c.family for c in cands}) == sorted(FAMILIES)
True
>>> out = value_candidates(runs, cands[:3], np.full(300, 0.05), sc)
>>> sorted(out[0])
['calls', 'correct', 'return', 'rounds', 'tokens']
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.runs import LoggedRuns
from ..logged.value import (
    AGGREGATIONS,
    Scales,
    confidence_of,
    first_stop,
    logprob_weights,
    valuation,
)
from ..policies.features import check_features, vote_states
from ..policies.rules import (
    CISC,
    ESC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    DeepConf,
    FixedBudget,
    StopRule,
    ThresholdRule,
    VoteShare,
    cisc_weights,
)
from ..trainers.fitted_q import _logistic, _ridge, fit_price_logistic
from .rule_table import criterion

__all__ = ["FAMILIES", "Candidate", "FeatureRule", "columns_of", "configs", "family_candidates", "rule_grid",
           "rule_aggregations", "value_candidates"]

FAMILIES: tuple[str, ...] = ("budget", "share", "ac-beta", "ac-dirichlet", "esc", "cisc", "deepconf",
                             "price-logistic", "fitted-ridge", "fitted-logistic")
#: Margins of the fitted same-feature rules (predicted gain in correct answers; a logit for the logistic).
RIDGE_MARGINS = (-0.02, 0.0, 0.02, 0.05)
LOGIT_MARGINS = (-1.0, 0.0, 1.0)


def rule_grid(R: int, W: int) -> dict[str, list[StopRule]]:  # noqa: N803
    """The parameter grids of the hand-written families at ``W`` attempts per round (fitted rules are fitted)."""
    return {
        "budget": [FixedBudget(k) for k in range(1, R + 1)],
        "share": [VoteShare(c) for c in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)],
        "ac-beta": [AdaptiveBeta(c) for c in (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)],
        "ac-dirichlet": [AdaptiveDirichlet(c) for c in (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)],
        "esc": [ESC(w) for w in sorted({2, 3, 4, 5, 6, 8, W} - {1}) if w <= R * W],
        "cisc": [CISC(t, c) for t in (0.1, 0.25, 0.5, 1.0, 2.0) for c in (0.6, 0.7, 0.8, 0.9, 1.0)],
        "deepconf": [DeepConf(w, k, c) for w in range(1, min(R, 2) + 1) for k in (0.1, 0.9)
                     for c in (0.6, 0.7, 0.8, 0.9, 0.95, 1.0)],
    }


def rule_aggregations(runs: LoggedRuns) -> tuple[str, ...]:
    """The aggregations a rule may use on ``runs``: majority, log-prob, and confidence where it was logged."""
    has_conf = runs.confidence is not None and bool(np.isfinite(runs.confidence).any())
    return AGGREGATIONS + (("confidence",) if has_conf else ())


# ----------------------------------------------------------------------------- configurations
def configs(runs: LoggedRuns) -> list[tuple[int, ...]]:
    """The fixed configurations of ``runs``: widths 1..W of a homogeneous vote (column prefixes: its
    columns are exchangeable), else every non-empty member subset that is valid under ``runs.sees``."""
    W = runs.answers.shape[2]  # noqa: N806
    if not runs.members:
        return [tuple(range(w)) for w in range(1, W + 1)]
    sees = runs.sees or ((),) * W
    out = []
    for n in range(1, W + 1):
        for cols in itertools.combinations(range(W), n):
            if all(set(sees[c]) <= set(cols) for c in cols):
                out.append(cols)
    return out


def config_name(runs: LoggedRuns, cols: tuple[int, ...]) -> str:
    """``w2`` for a homogeneous vote's first two columns; ``cold+calc`` for team members."""
    return "+".join(runs.members[c] for c in cols) if runs.members else f"w{len(cols)}"


def columns_of(runs: LoggedRuns, cols: Sequence[int]) -> LoggedRuns:
    """``runs`` restricted to the attempt columns ``cols`` (in that order); ``sees`` re-indexed.

    >>> from orchestrace.offline import make_synthetic_logged
    >>> columns_of(make_synthetic_logged(T=4, R=2, W=3, seed=0), (0, 2)).answers.shape
    (4, 2, 2)
    """
    cols = tuple(int(c) for c in cols)
    W = runs.answers.shape[2]  # noqa: N806
    if not cols or any(not 0 <= c < W for c in cols) or len(set(cols)) != len(cols):
        raise ConfigError(f"columns {cols}: must be distinct columns in 0..{W - 1}")
    sees = runs.sees or ((),) * W
    missing = [(c, s) for c in cols for s in sees[c] if s not in cols]
    if missing:
        c, s = missing[0]
        name = runs.members[c] if runs.members else str(c)
        raise ConfigError(f"columns {cols}: column {c} ({name}) was logged seeing column {s}'s answers; a "
                          "configuration that uses it must call that column too")
    pos = {c: i for i, c in enumerate(cols)}
    sl = (slice(None), slice(None), list(cols))
    per = {f: getattr(runs, f)[sl] for f in ("answers", "correct", "prompt_tokens", "completion_tokens",
                                             "logprob_mean")}
    return dataclasses.replace(
        runs, **per, members=tuple(runs.members[c] for c in cols) if runs.members else (),
        sees=tuple(tuple(pos[s] for s in sees[c]) for c in cols) if runs.sees else (),
        confidence=None if runs.confidence is None else runs.confidence[sl])


# ----------------------------------------------------------------------------- the fitted same-feature rules
@dataclass(frozen=True)
class FeatureRule:
    """Per check k a linear score of the gate's standardised features; continue iff score > ``margin``.

    ``kind`` ``ridge`` (the score is the predicted gain in return) or ``logistic`` (a logit);
    ``horizon`` ``next`` (gain of one more round) or ``end`` (gain of running to the round limit).
    """

    kind: str
    horizon: str
    checks: tuple[tuple[tuple[float, ...], float], ...]  # per check 0..R−2: (weights, intercept)
    mean: tuple[float, ...]
    std: tuple[float, ...]
    scales: tuple[float, float, float]  # token_scale, lp_fill, len_scale of the corpus the rule was fitted on
    margin: float = 0.0

    @property
    def name(self) -> str:
        return f"fitted-{self.kind}@{self.horizon}/m{self.margin:+g}"

    def scores(self, runs: LoggedRuns, price: np.ndarray, features: np.ndarray | None = None) -> np.ndarray:
        """(T, R−1) the score at each check but the last (``features``: ``check_features`` of ``runs`` at
        this rule's scales, when the caller has them)."""
        w = runs.answers.shape[2]
        F = check_features(runs, w, price, *self.scales) if features is None else features
        X = (F - np.array(self.mean)) / np.array(self.std)
        return np.stack([X[:, k] @ np.array(wk) + bk for k, (wk, bk) in enumerate(self.checks)], 1)

    def stops(self, runs: LoggedRuns, price: np.ndarray, features: np.ndarray | None = None) -> np.ndarray:
        """(T, R) stop decisions (the last check always stops)."""
        s = self.scores(runs, price, features) <= self.margin
        return np.concatenate([s, np.ones((len(s), 1), bool)], 1)


def fit_feature_rules(train: LoggedRuns, price: np.ndarray, scales: Scales, aggregation: str,
                      weights: np.ndarray | None = None) -> list[FeatureRule]:
    """Ridge and logistic rules, both horizons, every margin, fitted on ``train`` (one configuration)."""
    T, R, w = train.answers.shape  # noqa: N806
    sc = (scales["token_scale"], scales["lp_fill"], scales["len_scale"])
    X = check_features(train, w, price, *sc)
    mu = X.reshape(-1, X.shape[2]).mean(0)
    sd = np.maximum(X.reshape(-1, X.shape[2]).std(0), 1e-6)
    Xs = (X - mu) / sd
    pay = valuation(train, w, aggregation, price, scales["token_scale"], weights).payoff
    out: list[FeatureRule] = []
    for horizon in ("next", "end"):
        ys = [(pay[:, k + 1] if horizon == "next" else pay[:, R - 1]) - pay[:, k] for k in range(R - 1)]
        ridge = []
        logit = []
        for k, y in enumerate(ys):
            m = _ridge(Xs[:, k], y, 10.0)
            ridge.append((tuple(m["w"]), m["b"]))
            beta = _logistic(Xs[:, k], (y > 0).astype(np.float64), np.abs(y) + 1e-6)
            logit.append((tuple(beta[:-1].tolist()), float(beta[-1])))
        mean, std = tuple(mu.tolist()), tuple(sd.tolist())
        out += [FeatureRule("ridge", horizon, tuple(ridge), mean, std, sc, m) for m in RIDGE_MARGINS]
        out += [FeatureRule("logistic", horizon, tuple(logit), mean, std, sc, m) for m in LOGIT_MARGINS]
    return out


# ----------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class Candidate:
    """One (configuration, aggregation, stop rule) of the family; ``aggregation`` ``own`` = the rule's vote."""

    family: str
    rule: Any  # a StopRule, a PriceLogistic or a FeatureRule
    aggregation: str
    columns: tuple[int, ...]
    config: str

    @property
    def name(self) -> str:
        agg = "" if self.aggregation == "own" else f"/{self.aggregation}"
        return f"{self.rule.name}/{self.config}{agg}"


def family_candidates(runs: LoggedRuns, train: np.ndarray, val: np.ndarray, price: np.ndarray,
                      scales: Scales, columns: tuple[int, ...], *, config: str | None = None
                      ) -> list[Candidate]:
    """Every candidate of one configuration: ``runs`` holds only its columns (:func:`columns_of`);
    ``train`` / ``val`` index the tasks to fit the fitted rules on / choose their margin on; ``price``
    (T,) per task; ``scales`` the corpus's (``token_scale``, ``lp_fill``, ``len_scale``)."""
    T, R, w = runs.answers.shape  # noqa: N806
    cfg = config or f"w{w}"
    aggs = rule_aggregations(runs)
    out: list[Candidate] = []
    for fam, rules in rule_grid(R, w).items():
        for rule in rules:
            for a in (("own",) if fam in ("cisc", "deepconf") else aggs):
                out.append(Candidate(fam, rule, a, columns, cfg))
    tr, va = runs.subset(train), runs.subset(val)
    for a in aggs:
        v_tr = valuation(tr, w, a, price[train], scales["token_scale"])
        v_va = valuation(va, w, a, price[val], scales["token_scale"])
        rule, _ = fit_price_logistic(tr, va, v_tr, v_va)
        out.append(Candidate("price-logistic", rule, a, columns, cfg))
        for fr in fit_feature_rules(tr, price[train], scales, a):
            out.append(Candidate(f"fitted-{fr.kind}", fr, a, columns, cfg))
    return out


def _own_weights(rule: Any, runs: LoggedRuns) -> np.ndarray:
    """(T, R, w) the vote weights of CISC / DeepConf on ``runs`` (its configuration's columns)."""
    T, R, w = runs.answers.shape  # noqa: N806
    if isinstance(rule, CISC):
        lp = np.log(logprob_weights(runs))  # the log-probs, a missing one filled with the corpus mean
        lp = np.where(runs.answers >= 0, lp, -np.inf).reshape(T, R * w)
        return cisc_weights(lp, rule.temperature).reshape(T, R, w)
    if isinstance(rule, DeepConf):
        conf, _ = confidence_of(runs)
        return rule.weights(conf.reshape(T, R * w), w).reshape(T, R, w)
    raise ConfigError(f"{rule.name}: no own aggregation")


def value_candidates(runs: LoggedRuns, cands: Sequence[Candidate], price: np.ndarray,
                     scales: Scales, keep: np.ndarray | None = None) -> list[dict[str, np.ndarray]]:
    """Per candidate the exact per-task outcome (``return``, ``correct``, ``tokens``, ``calls``, ``rounds``,
    each (T,)) on every task of ``runs`` (all its columns; each candidate uses its own); ``keep``: only
    the outcomes of these task indices are kept (memory: thousands of candidates × T tasks)."""
    out: list[dict[str, np.ndarray] | None] = [None] * len(cands)
    by_cols: dict[tuple[int, ...], list[int]] = {}
    for i, c in enumerate(cands):
        by_cols.setdefault(c.columns, []).append(i)
    for cols, idx in by_cols.items():
        rc = columns_of(runs, cols)
        T, R, w = rc.answers.shape  # noqa: N806
        lp = np.log(logprob_weights(rc))
        conf, _ = confidence_of(rc)
        states = vote_states(rc, w, price, logprob=lp, confidence=conf)
        vals: dict[Any, Any] = {}
        stops: dict[Any, np.ndarray] = {}
        feats: dict[tuple[float, float, float], np.ndarray] = {}  # the gate's features, once per scales
        crit: dict[tuple, np.ndarray] = {}  # (T, R) criterion values, once per criterion (all its thresholds)
        for i in idx:
            c = cands[i]
            if c.rule not in stops:
                if isinstance(c.rule, ThresholdRule):
                    key = c.rule.criterion_key
                    if key not in crit:
                        crit[key] = np.stack([criterion(c.rule, s) for s in states], 1)  # the same floats, faster
                    stops[c.rule] = first_stop(crit[key] >= c.rule.threshold - 1e-12)
                elif hasattr(c.rule, "stop_now"):
                    stops[c.rule] = first_stop(np.stack([c.rule.stop_now(s) for s in states], 1))
                else:  # a fitted same-feature rule: scores once per fit, then each margin
                    if c.rule.scales not in feats:
                        feats[c.rule.scales] = check_features(rc, w, price, *c.rule.scales)
                    key = ("fitted", dataclasses.replace(c.rule, margin=0.0))
                    if key not in crit:
                        crit[key] = c.rule.scores(rc, price, feats[c.rule.scales])
                    s = crit[key] <= c.rule.margin
                    stops[c.rule] = first_stop(np.concatenate([s, np.ones((len(s), 1), bool)], 1))
            stop = stops[c.rule]
            if c.aggregation == "own":  # the vote depends on the criterion's parameters, not its threshold
                key = ("own", c.rule.criterion_key)
                if key not in vals:
                    vals[key] = valuation(rc, w, c.rule.name, price, scales["token_scale"], _own_weights(c.rule, rc))
                v = vals[key]
            else:
                if c.aggregation not in vals:
                    vals[c.aggregation] = valuation(rc, w, c.aggregation, price, scales["token_scale"])
                v = vals[c.aggregation]
            o = v.at(stop)
            out[i] = o if keep is None else {k: x[keep] for k, x in o.items()}
    return [o for o in out if o is not None]
