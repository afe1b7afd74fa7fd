"""First stops of a whole rule family on one configuration's vote states, rules sharing their criterion (issue 43).

A (rule × configuration) evaluation asks every rule of :func:`~orchestrace.evaluation.family.rule_grid`
for its first stop on every task. Played rule by rule (:meth:`~orchestrace.policies.rules.StopRule.stop_now`
at each check) that recomputes one criterion once per threshold — the 25 CISC rules share 5 weighted
votes, the 24 DeepConf rules 4 — and builds each weighted vote through an (N, L, K) one-hot block.
:func:`first_stops` instead computes each criterion once per
:attr:`~orchestrace.policies.rules.ThresholdRule.criterion_key` and check (the weighted votes by one
``bincount``; the count-only criteria on the distinct count vectors only), then compares every
threshold on it: the same decisions, bit for bit, as the rules played one by one (tested against that
plain loop). The rules' classes stay the one definition; this module only shares their work.

>>> from orchestrace.policies.rules import FixedBudget, VoteShare, VoteState
>>> votes = [np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 0.0], [1.0, 2.0]])]
>>> states = [VoteState(v, None, np.zeros(2), np.full(2, k), 2) for k, v in enumerate(votes)]
>>> first_stops([VoteShare(0.9), FixedBudget(2)], states).tolist()   # rules × tasks
[[0, 1], [1, 1]]
>>> weighted_votes(np.array([[0, 1, 0, -1]]), np.array([[0.5, 1.0, 0.25, 9.0]])).tolist()
[[0.75, 1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..policies.rules import (
    CISC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    DeepConf,
    StopRule,
    ThresholdRule,
    VoteShare,
    VoteState,
    cisc_weights,
    top_share,
)

__all__ = ["COUNT_RULES", "criterion", "distinct_counts", "first_stops", "weighted_votes"]

#: Rules whose criterion depends only on the multiset of vote counts (computed once per distinct one).
COUNT_RULES = (VoteShare, AdaptiveBeta, AdaptiveDirichlet)


def weighted_votes(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(N, K) summed ``weights`` (N, L) per answer code of ``codes`` (N, L), K = max code + 1; −1 never votes.

    The rules' own one-hot sum, by one ``bincount``: the same additions in the same order (sample order
    within a row), so the same floats, without the (N, L, K) block.
    """
    codes = np.asarray(codes, np.int64)
    N = len(codes)
    K = max(int(codes.max(initial=-1)) + 1, 1)
    ok = codes >= 0
    bins = (np.arange(N, dtype=np.int64)[:, None] * K + codes)[ok]
    w = np.broadcast_to(np.asarray(weights, np.float64), codes.shape)[ok]
    return np.bincount(bins, weights=w, minlength=N * K).reshape(N, K)


def distinct_counts(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct count vectors of ``votes`` (N, K) (sorted descending) and each row's index among them.

    >>> rows, inv = distinct_counts(np.array([[1.0, 2.0], [2.0, 1.0], [0.0, 0.0]]))
    >>> rows.tolist(), inv.tolist()
    ([[0.0, 0.0], [2.0, 1.0]], [1, 1, 0])
    """
    v = -np.sort(-np.rint(votes).astype(np.int64), axis=1)
    base = int(v.max(initial=0)) + 1
    key = np.zeros(len(v), np.int64)
    for j in range(v.shape[1]):
        key = key * base + v[:, j]
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return v[first].astype(np.float64), inv.reshape(-1)


def criterion(rule: ThresholdRule, state: VoteState, uniq: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """(N,) ``rule.criterion(state)``, the same floats computed faster: a count rule's on the distinct count
    vectors ``uniq`` (:func:`distinct_counts` of the votes, when given), CISC's and DeepConf's weighted votes by
    :func:`weighted_votes`.

    >>> from orchestrace.policies.rules import CISC
    >>> s = VoteState(np.array([[1.0, 1.0]]), np.array([[0, 1]]), np.zeros(1), np.zeros(1, int), 2,
    ...               logprob=np.array([[0.0, -1.0]]))
    >>> bool(criterion(CISC(1.0, 0.7), s)[0] == CISC(1.0, 0.7).criterion(s)[0])
    True
    """
    if isinstance(rule, COUNT_RULES) and uniq is not None:
        rows, inv = uniq
        small = VoteState(votes=rows, recent=None, price=np.zeros(len(rows)), round_=np.full(len(rows), -1),
                          max_rounds=state.max_rounds)
        return np.asarray(rule.criterion(small), np.float64)[inv]
    if isinstance(rule, CISC) and state.logprob is not None and state.recent is not None:
        codes = np.asarray(state.recent, np.int64)
        lp = np.asarray(state.logprob, np.float64)
        v = weighted_votes(codes, cisc_weights(np.where(codes >= 0, lp, -np.inf), rule.temperature))
        return np.where(v.sum(1) > 0, top_share(v), -np.inf)
    if isinstance(rule, DeepConf) and state.confidence is not None and state.recent is not None:
        conf = np.asarray(state.confidence, np.float64)
        rnd = np.asarray(state.round_)
        if len(rnd) and (rnd != rnd[0]).any():
            return rule.criterion(state)  # the rule's own refusal
        per_round = conf.shape[1] // (int(rnd[0]) + 1) if len(rnd) else 1
        v = weighted_votes(np.asarray(state.recent), rule.weights(conf, per_round))
        return np.where((rnd + 1 >= rule.warmup) & (v.sum(1) > 0), top_share(v), -np.inf)
    return np.asarray(rule.criterion(state), np.float64)


def first_stops(rules: Sequence[StopRule], states: Sequence[VoteState],
                uniq: Sequence[tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """(len(rules), N) int8 (int64 past 127 checks): each rule's first check that stops on the checks ``states`` (the last if none).

    ``first_stop(np.stack([rule.stop_now(s) for s in states], 1))`` for every rule, each criterion
    computed once per check for all the thresholds that read it; ``uniq`` (one :func:`distinct_counts` per
    state) when the caller has it.
    """
    R = len(states)
    N = len(states[0].votes) if R else 0
    out = np.empty((len(rules), N), np.int8 if R <= 127 else np.int64)  # a check index (≤ MAX_ROUNDS in practice)
    if uniq is None:
        uniq = [distinct_counts(np.asarray(s.votes)) for s in states]
    best: dict[tuple, np.ndarray] = {}  # criterion key → (N, R) running maximum of the criterion over the checks
    for i, rule in enumerate(rules):
        if isinstance(rule, ThresholdRule):
            key = rule.criterion_key
            if key not in best:
                crit = np.stack([criterion(rule, s, u) for s, u in zip(states, uniq, strict=True)], 1)
                best[key] = np.fmax.accumulate(np.where(np.isnan(crit), -np.inf, crit), axis=1)
            # stop at the first check whose criterion is ≥ the threshold: the running maximum is below it before
            out[i] = np.minimum((best[key] < rule.threshold - 1e-12).sum(1), R - 1)
        else:
            stop = np.stack([np.asarray(rule.stop_now(s), bool) for s in states], 1)
            stop[:, -1] = True
            out[i] = stop.argmax(1)
    return out
