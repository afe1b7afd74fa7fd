"""The one majority vote, for every layer: logged runs, the stop rules, the gate and the collectors.

It lives in the base layer so that the reader of logged runs (a world) and the stop rules (policies)
import the same function without pointing up; :mod:`orchestrace.policies.rules` re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["majority", "top_answer"]


def top_answer(votes: np.ndarray, first: np.ndarray | None = None, *, present: np.ndarray | None = None) -> np.ndarray:
    """The one majority vote: the most voted answer of each row of ``votes`` (…, K) (counts or summed
    weights); ties → the smallest ``first`` (…, K) (the answer seen first; default the lowest index,
    which is the first seen when codes are numbered in order of appearance); −1 without a vote.
    ``present`` (…, K) says which answers were given (default ``votes > 0``); with it ``votes`` may be any
    score, e.g. summed log-probabilities (the team's ``logprob`` aggregation).

    >>> top_answer(np.array([[1.0, 2.0, 2.0], [0.0, 0.0, 0.0]])).tolist()
    [1, -1]
    >>> top_answer(np.array([[1.0, 2.0, 2.0]]), first=np.array([[0, 5, 3]])).tolist()
    [2]
    >>> top_answer(np.array([[-3.0, -1.0, 0.0]]), present=np.array([[True, True, False]])).tolist()
    [1]
    """
    v = np.asarray(votes, np.float64)
    if v.shape[-1] == 0:
        return np.full(v.shape[:-1], -1, np.int64)
    order = np.broadcast_to(np.arange(v.shape[-1]), v.shape) if first is None else np.asarray(first)
    present = v > 0 if present is None else np.asarray(present, bool)
    key = np.where(present, v, -np.inf)
    tied = present & np.isclose(key, key.max(-1, keepdims=True), rtol=0, atol=1e-9)
    top = np.where(tied, order, np.iinfo(np.int64).max).argmin(-1)
    return np.where(present.any(-1), top, -1)


def majority(answers: Sequence[str | None]) -> str | None:
    """The most frequent parsed answer (None ignored); ties go to the answer that appeared first —
    :func:`top_answer` over answers coded in order of appearance.

    >>> majority(["7", None, "5", "5", "7"]), majority([None, None])
    ('7', None)
    """
    counts: dict[str, int] = {}
    for a in answers:
        if a is not None:
            counts[a] = counts.get(a, 0) + 1  # dicts keep first-appearance order: codes 0, 1, … as seen
    top = int(top_answer(np.array([list(counts.values())], np.float64))[0]) if counts else -1
    return list(counts)[top] if top >= 0 else None
