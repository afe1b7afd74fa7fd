"""Exact offline valuation of stopping on logged always-continue runs (T tasks × R checks, numpy).

A **check** is the end of a round. Stopping at check k uses the logged prefix (rounds 0..k);
a narrower **width** w uses the first w attempts of every round; the **aggregation**
(``majority``, or ``logprob``: each vote weighted by exp(mean token log-prob)) is recomputed
from those attempts (ties → the answer that appeared first among them; unparsed attempts do
not vote). The return of an episode stopped at check k is

    correct(aggregate after round k) − price × tokens(rounds 0..k) / token_scale

with a per-task price (:func:`task_prices`: log-uniform on [``PRICE_LO``, ``PRICE_HI``], drawn
from the task id and a seed, so a task's price is the same in every subset) and
``token_scale`` the mean tokens of one full-width round on the training tasks: a price of
0.1 means one more full round costs a tenth of a correct answer. Rules that use the price
observe it. Every stop rule is valued exactly: its decisions at every check are computed once
and the first stop picks the prefix.

>>> from orchestrace.offline import make_synthetic_logged
>>> runs = make_synthetic_logged(T=30, R=4, W=3, seed=0)
>>> v = valuation(runs, width=3, aggregation="majority", price=np.full(30, 0.1), token_scale=100.0)
>>> bool((v.correct == runs.round_correct).all())   # the logged grade, recomputed from the attempts
True
>>> v.calls[0].tolist()
[3, 6, 9, 12]
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from .._vote import top_answer
from ..errors import ConfigError
from .runs import LoggedRuns

__all__ = ["AGGREGATIONS", "PRICE_HI", "PRICE_LO", "Scales", "Valuation", "aggregation_weights", "confidence_of", "corpus_scales",
           "continuation_values", "first_stop", "task_prices", "valuation", "vote_counts"]

#: Aggregation rules recomputed from the attempts (the learned gate's choices; the rules also get
#: ``confidence`` on a corpus that logged DeepConf confidences, :func:`aggregation_weights`).
AGGREGATIONS: tuple[str, ...] = ("majority", "logprob")
#: The per-task price range (log-uniform), in correct answers per full-width round of tokens.
PRICE_LO, PRICE_HI = 0.01, 0.3


def task_prices(task_ids: np.ndarray, seed: int = 0, lo: float = PRICE_LO, hi: float = PRICE_HI) -> np.ndarray:
    """(T,) per-task price, log-uniform on [lo, hi], a pure function of (task id, seed).

    >>> a = task_prices(np.array(["x", "y", "z"]), seed=0)
    >>> bool(((a >= PRICE_LO) & (a <= PRICE_HI)).all()), bool(task_prices(np.array(["y"]), seed=0)[0] == a[1])
    (True, True)
    """
    u = np.array([zlib.crc32(f"{seed}:{t}".encode()) / 2**32 for t in task_ids.tolist()], np.float64)
    return np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))


class Scales(TypedDict):
    """Constants of the valuation and the features, measured on the training tasks (:func:`corpus_scales`)."""

    token_scale: float  # mean tokens of one full-width round (every member once)
    lp_fill: float  # mean token log-prob (stands in for a missing one)
    len_scale: float  # mean completion tokens of an attempt (≥ 1)
    attempt_tokens: float  # mean tokens of one attempt
    prompt_tokens: float  # mean prompt tokens of one attempt
    cf_fill: float  # mean DeepConf confidence (1.0 when none was logged)
    member_tokens: list[float]  # mean tokens of each member column
    cells: tuple[str, ...]  # the training tasks' ``suite:difficulty`` cells, sorted


def corpus_scales(train: LoggedRuns) -> Scales:
    """Constants of the valuation and the features, from the training tasks only (:class:`Scales`).

    A ConfigError when the training tasks logged no tokens at all (the price of a round is measured in them).
    """
    tok = train.prompt_tokens.astype(np.float64) + train.completion_tokens
    lp = train.logprob_mean.astype(np.float64)
    cf = None if train.confidence is None else train.confidence.astype(np.float64)
    token_scale = float(tok.sum(2).mean())
    if not token_scale > 0:
        raise ConfigError("the training tasks logged 0 tokens (tokens_in / tokens_out); the price of a round is "
                          "measured in tokens")
    return {"token_scale": token_scale,
            "lp_fill": float(np.nanmean(lp)) if np.isfinite(lp).any() else 0.0,
            "len_scale": float(max(train.completion_tokens.mean(), 1.0)),
            "attempt_tokens": float(tok.mean()), "prompt_tokens": float(train.prompt_tokens.mean()),
            "cf_fill": float(np.nanmean(cf)) if cf is not None and np.isfinite(cf).any() else 1.0,
            "member_tokens": tok.mean((0, 1)).tolist(),
            "cells": tuple(sorted({f"{s}:{d}" for s, d in zip(train.suite.tolist(), train.difficulty.tolist(),
                                                               strict=True)}))}


def _check_width(runs: LoggedRuns, width: int) -> None:
    W = runs.answers.shape[2]
    if not 1 <= width <= W:
        raise ConfigError(f"width {width}: must be between 1 and the logged width {W}")


def vote_counts(runs: LoggedRuns, width: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative votes after each round and first appearances, on the first ``width`` attempts.

    Returns ``counts`` (T, R, K) float64 (votes, or summed ``weights`` (T, R, W), for each answer
    code over rounds 0..r) and ``first`` (T, K) int64 (position r·width + j of the answer's first
    vote; R·width if never).

    >>> from orchestrace.offline import make_synthetic_logged
    >>> runs = make_synthetic_logged(T=5, R=3, W=2, seed=0)
    >>> c, f = vote_counts(runs, 2)
    >>> bool((c[:, -1].sum(1) == (runs.answers >= 0).sum((1, 2))).all())
    True
    """
    _check_width(runs, width)
    a = runs.answers[:, :, :width].astype(np.int64)  # (T, R, w)
    T, R, w = a.shape
    K = max(int(a.max()) + 1, 1) if a.size else 1
    ok = a >= 0
    onehot = (a[..., None] == np.arange(K)) & ok[..., None]  # (T, R, w, K)
    wt = np.ones(a.shape) if weights is None else np.asarray(weights, np.float64)[:, :, :width]
    counts = np.cumsum((onehot * wt[..., None]).sum(2), axis=1)  # (T, R, K)
    pos = (np.arange(R)[:, None] * w + np.arange(w)[None, :])  # (R, w)
    big = R * w
    first = np.where(onehot, pos[None, :, :, None], big).min(axis=(1, 2))  # (T, K)
    return counts, first


def _top(counts: np.ndarray, first: np.ndarray) -> np.ndarray:
    """(T, R) aggregate code after each round (−1 when nothing voted yet): most votes, ties → earliest."""
    return top_answer(counts, np.broadcast_to(first[:, None, :], counts.shape))


def logprob_weights(runs: LoggedRuns) -> np.ndarray:
    """(T, R, W) vote weights exp(mean token log-prob); a missing log-prob gets the corpus mean's weight."""
    lp = runs.logprob_mean.astype(np.float64)
    fill = float(np.nanmean(lp)) if np.isfinite(lp).any() else 0.0
    return np.exp(np.where(np.isfinite(lp), lp, fill))


def confidence_of(runs: LoggedRuns) -> tuple[np.ndarray, str]:
    """(T, R, W) each reply's DeepConf confidence (> 0, higher = more confident) and where it comes from.

    The logged lowest group confidence (``runs.confidence``, from top-k token log-probs) where the
    corpus has it — a reply without it gets the mean of those logged — else exp(mean token
    log-prob), the geometric-mean token probability (the vote corpus logged no top-k).

    >>> from orchestrace.offline import make_synthetic_logged
    >>> c, source = confidence_of(make_synthetic_logged(T=3, R=2, W=2, seed=0)); source
    'exp(mean token log-prob)'
    """
    if runs.confidence is not None and np.isfinite(runs.confidence).any():
        c = np.asarray(runs.confidence, np.float64)
        return np.where(np.isfinite(c), c, float(np.nanmean(c))), "lowest group confidence (top-k log-probs)"
    return logprob_weights(runs), "exp(mean token log-prob)"


def aggregation_weights(runs: LoggedRuns, aggregation: str) -> np.ndarray | None:
    """(T, R, W) vote weights of an aggregation: None (``majority``), exp(mean token log-prob)
    (``logprob``), the DeepConf confidence (``confidence``, :func:`confidence_of`)."""
    if aggregation == "majority":
        return None
    if aggregation == "logprob":
        return logprob_weights(runs)
    if aggregation == "confidence":
        return confidence_of(runs)[0]
    raise ConfigError(f"aggregation {aggregation!r}: use one of majority, logprob, confidence")


@dataclass(frozen=True)
class Valuation:
    """What stopping at each check yields, for one width and aggregation (all arrays (T, R)); a team's fixed
    configuration (its member subset called every round, one aggregation) is valued in the same table."""

    width: int
    aggregation: str
    correct: np.ndarray  # (T, R) bool   the aggregate after round k is right
    tokens: np.ndarray  # (T, R) float  prompt + completion tokens of rounds 0..k (first `width` attempts)
    calls: np.ndarray  # (T, R) int     LLM calls of rounds 0..k
    price: np.ndarray  # (T,)
    token_scale: float

    @functools.cached_property
    def payoff(self) -> np.ndarray:
        """(T, R) return of stopping at check k (computed once)."""
        return self.correct - self.price[:, None] * self.tokens / self.token_scale

    def at(self, stop: np.ndarray, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per-task outcome (``return``, ``correct``, ``tokens``, ``calls``, ``rounds``) of stopping at ``stop`` (T,);
        with ``rows``, of the tasks ``rows`` stopping at ``stop`` (one check each)."""
        i = np.arange(len(stop)) if rows is None else np.asarray(rows)
        return {"return": self.payoff[i, stop], "correct": self.correct[i, stop].astype(np.float64),
                "tokens": self.tokens[i, stop], "calls": self.calls[i, stop].astype(np.float64),
                "rounds": stop.astype(np.float64) + 1}


def valuation(runs: LoggedRuns, width: int, aggregation: str, price: np.ndarray, token_scale: float,
              weights: np.ndarray | None = None) -> Valuation:
    """Exact outcome of stopping at every check (see the module docstring).

    ``weights`` (T, R, ≥ width): the vote weights of a rule's own aggregation (CISC, DeepConf;
    ``aggregation`` is then its label); else those of ``aggregation`` (:func:`aggregation_weights`).
    """
    if not token_scale > 0:
        raise ConfigError(f"token_scale {token_scale}: must be > 0")
    if weights is None:
        weights = aggregation_weights(runs, aggregation)
    counts, first = vote_counts(runs, width, weights)
    top = _top(counts, first)
    correct = (top >= 0) & (top == runs.correct_code[:, None])
    tok = (runs.prompt_tokens[:, :, :width].astype(np.float64) + runs.completion_tokens[:, :, :width]).sum(2)
    R = runs.answers.shape[1]
    calls = np.broadcast_to((np.arange(R) + 1) * width, correct.shape).copy()
    return Valuation(width, aggregation, correct, np.cumsum(tok, 1), calls, np.asarray(price, np.float64),
                     float(token_scale))


def first_stop(stop: np.ndarray) -> np.ndarray:
    """(T,) index of the first check where ``stop`` (T, R) is True; the last check if none.

    >>> first_stop(np.array([[False, True, True], [False, False, False]])).tolist()
    [1, 2]
    """
    stop = np.asarray(stop, bool).copy()
    stop[:, -1] = True
    return stop.argmax(1)
def continuation_values(payoff: np.ndarray, legal: np.ndarray, cont: np.ndarray) -> np.ndarray:
    """The one backward pass of regression-based stopping (the simulator's fitted rule, the price-aware
    logistic rule and the fitted same-feature rules use it). U (E, R): the return of continuing at check k and following ``cont`` (continue where True and
    legal) from check k + 1 on; NaN-free (the last check's U is its own payoff, never used).

    >>> pay = np.array([[0.2, 0.5, 0.4]]); legal = np.array([[True, True, False]])
    >>> continuation_values(pay, legal, np.array([[True, False, False]])).tolist()
    [[0.5, 0.4, 0.4]]
    """
    E, R = payoff.shape
    go = np.asarray(cont, bool) & legal
    u = np.empty((E, R))
    follow = payoff[:, R - 1].astype(np.float64).copy()  # V_{R−1}: the last check stops
    u[:, R - 1] = follow
    for k in range(R - 2, -1, -1):
        u[:, k] = follow  # U_k = V_{k+1}
        follow = np.where(go[:, k], follow, payoff[:, k])  # V_k
    return u
