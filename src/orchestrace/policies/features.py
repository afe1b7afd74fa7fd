"""What a logged run holds at each check, as rule inputs (:class:`VoteState`) and gate features.

:data:`FEATURES` is the one layout of the learned gate's inputs; :func:`check_features` computes
it for every (task, check) of a corpus and :func:`features_from_attempts` for one live loop
(the deploy path, :class:`~orchestrace.offline.StopGate`) — both through :func:`_features`, so
training and deployment read the same numbers.

>>> from orchestrace.offline import make_synthetic_logged
>>> runs = make_synthetic_logged(T=8, R=3, W=2, seed=0)
>>> X = check_features(runs, width=2, price=np.full(8, 0.1), token_scale=200.0, lp_fill=-1.0, len_scale=80.0)
>>> X.shape == (8, 3, len(FEATURES))
True
"""

from __future__ import annotations

import numpy as np

from ..logged.runs import LoggedRuns
from ..logged.value import vote_counts
from .rules import VoteState, beta_criterion, top_answer

__all__ = ["FEATURES", "check_features", "features_from_attempts", "vote_states"]

#: The learned gate's inputs at a check, in column order.
FEATURES: tuple[str, ...] = (
    "top_share", "second_share", "margin", "distinct_share", "entropy", "unparsed_share", "log_votes",
    "beta_criterion", "last_round_top_share", "top_changed",
    "weighted_top_share", "lp_top", "lp_rest", "lp_gap",
    "len_top", "len_all",
    "tokens_spent", "price", "round", "rounds_left", "price_x_left",
)


def vote_states(runs: LoggedRuns, width: int, price: np.ndarray, *, logprob: np.ndarray | None = None,
                confidence: np.ndarray | None = None) -> list[VoteState]:
    """One :class:`VoteState` per check k (N = T tasks each), on the first ``width`` attempts.

    ``logprob`` / ``confidence`` (T, R, ≥ width), NaN-free: the per-sample values CISC and DeepConf read.
    """
    counts, _ = vote_counts(runs, width)
    T, R, _ = counts.shape
    seq = runs.answers[:, :, :width].reshape(T, R * width)

    def flat(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else np.asarray(x, np.float64)[:, :, :width].reshape(T, R * width)

    lp, cf = flat(logprob), flat(confidence)
    n = (np.arange(R) + 1) * width
    return [VoteState(votes=counts[:, k], recent=seq[:, :n[k]], price=np.asarray(price, np.float64),
                      round_=np.full(T, k), max_rounds=R, logprob=None if lp is None else lp[:, :n[k]],
                      confidence=None if cf is None else cf[:, :n[k]]) for k in range(R)]


def _features(answers: np.ndarray, lp: np.ndarray, comp: np.ndarray, tok: np.ndarray, price: np.ndarray,
              max_rounds: int, token_scale: float, lp_fill: float, len_scale: float) -> np.ndarray:
    """(T, R', F) features after each of the R' rounds given: ``answers`` (T, R', w) codes (−1 unparsed),
    ``lp`` mean log-probs (NaN absent), ``comp`` completion tokens, ``tok`` all tokens (T, R', w)."""
    T, R, w = answers.shape
    K = max(int(answers.max()) + 1, 1) if answers.size else 1
    ok = answers >= 0
    onehot = (answers[..., None] == np.arange(K)) & ok[..., None]  # (T, R, w, K)
    per_round = onehot.sum(2).astype(np.float64)  # (T, R, K)
    counts = np.cumsum(per_round, 1)
    pos = np.arange(R)[:, None] * w + np.arange(w)[None, :]
    first = np.where(onehot, pos[None, :, :, None], R * w)  # (T, R, w, K)
    first = np.minimum.accumulate(first.min(2), axis=1)  # (T, R, K) first appearance so far
    top = np.maximum(top_answer(counts, first), 0)  # (T, R); 0 before any vote (its features are then guarded)
    tot = counts.sum(2)
    n = np.maximum(tot, 1e-12)
    srt = np.sort(counts, 2)
    v1, v2 = srt[..., -1], (srt[..., -2] if K > 1 else np.zeros_like(tot))
    p = counts / n[..., None]
    ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(2)
    drawn = (np.arange(R) + 1)[None, :] * w
    unparsed = 1.0 - tot / drawn
    last = per_round[np.arange(T)[:, None], np.arange(R)[None, :], top]  # (T, R) last round's votes for the top
    last_n = np.maximum(per_round.sum(2), 1e-12)
    prev_top = np.concatenate([np.full((T, 1), -1), top[:, :-1]], 1)
    changed = (top != prev_top).astype(np.float64)
    changed[:, 0] = 0.0
    lpf = np.where(np.isfinite(lp), lp, lp_fill)
    wt = np.exp(lpf) * ok
    wcounts = np.cumsum((onehot * wt[..., None]).sum(2), 1)  # (T, R, K)
    wtop = wcounts[np.arange(T)[:, None], np.arange(R)[None, :], top] / np.maximum(wcounts.sum(2), 1e-12)
    is_top = onehot[np.arange(T)[:, None, None], np.arange(R)[None, :, None], np.arange(w)[None, None, :], :]  # (T,R,w,K)
    # cumulative sums per answer of log-prob and length, then pick the top answer's
    lp_sum = np.cumsum((is_top * lpf[..., None]).sum(2), 1)
    len_sum = np.cumsum((is_top * comp[..., None]).sum(2), 1)
    pick = (np.arange(T)[:, None], np.arange(R)[None, :], top)
    n_top = np.maximum(v1, 1e-12)
    lp_top = np.where(v1 > 0, lp_sum[pick] / n_top, lp_fill)
    n_rest = tot - v1
    lp_rest = np.where(n_rest > 0, (lp_sum.sum(2) - lp_sum[pick]) / np.maximum(n_rest, 1e-12), lp_fill)
    len_top = np.where(v1 > 0, len_sum[pick] / n_top, len_scale) / len_scale
    len_all = np.cumsum((comp * ok).sum(2), 1) / np.maximum(tot, 1e-12) / len_scale
    len_all = np.where(tot > 0, len_all, 1.0)
    spent = np.cumsum(tok.sum(2), 1) / token_scale
    rnd = np.broadcast_to(np.arange(R)[None, :], (T, R)).astype(np.float64)
    left = (max_rounds - 1) - rnd
    price = np.broadcast_to(np.asarray(price, np.float64)[:, None], (T, R))
    bc = beta_criterion(v1.reshape(-1), v2.reshape(-1)).reshape(T, R)
    cols = [v1 / n, v2 / n, (v1 - v2) / n, (counts > 0).sum(2) / n, ent, unparsed, np.log1p(tot), bc,
            last / last_n, changed, wtop, lp_top, lp_rest, lp_top - lp_rest, len_top, len_all,
            spent, price, rnd / max(max_rounds - 1, 1), left / max(max_rounds - 1, 1), price * left]
    return np.stack(cols, axis=2)


def check_features(runs: LoggedRuns, width: int, price: np.ndarray, token_scale: float, lp_fill: float,
                   len_scale: float) -> np.ndarray:
    """(T, R, len(FEATURES)) the gate's inputs at every check of every logged run, at ``width``."""
    sl = (slice(None), slice(None), slice(0, width))
    return _features(runs.answers[sl].astype(np.int64), runs.logprob_mean[sl].astype(np.float64),
                     runs.completion_tokens[sl].astype(np.float64),
                     (runs.prompt_tokens[sl].astype(np.float64) + runs.completion_tokens[sl]),
                     price, runs.answers.shape[1], token_scale, lp_fill, len_scale)


def features_from_attempts(codes: np.ndarray, lp: np.ndarray, comp: np.ndarray, tok: np.ndarray, price: float,
                           max_rounds: int, token_scale: float, lp_fill: float, len_scale: float) -> np.ndarray:
    """(len(FEATURES),) the inputs after the last of the rounds given as (R', w) arrays of one loop."""
    X = _features(codes[None].astype(np.int64), lp[None].astype(np.float64), comp[None].astype(np.float64),
                  tok[None].astype(np.float64), np.array([price]), max_rounds, token_scale, lp_fill, len_scale)
    return X[0, -1]
