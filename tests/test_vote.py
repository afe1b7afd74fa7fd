"""The one majority vote (:func:`orchestrace._vote.top_answer`) against a plain reference on random votes."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace._vote import majority, top_answer


def _reference(score: list[float], present: list[bool], first: list[int]) -> int:
    """Plain Python: the highest score among the answers given; ties → the one seen first; −1 if none."""
    given = [k for k in range(len(score)) if present[k]]
    if not given:
        return -1
    best = max(score[k] for k in given)
    return min((k for k in given if score[k] >= best - 1e-9), key=lambda k: first[k])


@pytest.mark.parametrize("kind", ["counts", "signed scores"])
def test_top_answer_matches_the_plain_reference(kind: str) -> None:
    rng = np.random.default_rng(39)
    for _ in range(400):
        n, k = int(rng.integers(1, 6)), int(rng.integers(0, 5))
        votes = rng.integers(0, 3, (n, k)).astype(float)
        score = votes if kind == "counts" else -np.round(rng.random((n, k)), 1) * 4
        first = np.stack([rng.permutation(k) for _ in range(n)]) if k else np.zeros((n, 0), np.int64)
        present = votes > 0
        got = top_answer(score, first, present=None if kind == "counts" else present)
        want = [_reference(score[i].tolist(), present[i].tolist(), first[i].tolist()) for i in range(n)]
        assert got.tolist() == want


def test_majority_ties_go_to_the_answer_seen_first() -> None:
    assert majority(["b", "a", "a", "b", None]) == "b"
    assert majority([None]) is None
