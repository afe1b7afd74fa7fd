"""The anchor rules: exact criteria against scipy, batch independence, and the vectorised valuation of
each rule against a loop that plays one task at a time."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_runs import structured_runs

from orchestrace.errors import ConfigError
from orchestrace.offline import (
    ESC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    FixedBudget,
    VoteShare,
    VoteState,
    first_stop,
)
from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.policies.features import vote_states
from orchestrace.policies.rules import beta_criterion, dirichlet_criterion


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


def test_beta_criterion_is_the_beta_tail() -> None:
    stats = pytest.importorskip("scipy.stats")
    v1 = np.array([0, 1, 2, 5, 7, 3, 12])
    v2 = np.array([0, 0, 1, 2, 7, 3, 1])
    want = stats.beta.sf(0.5, v1 + 1, v2 + 1)
    assert np.allclose(beta_criterion(v1, v2), want, atol=1e-12)


def test_dirichlet_with_fewer_than_three_answers_is_the_beta_criterion_and_batch_independent() -> None:
    votes = np.array([[3.0, 1.0], [5.0, 2.0], [4.0, 4.0], [2.0, 0.0]])
    d = dirichlet_criterion(votes)
    assert np.array_equal(d, beta_criterion(votes.max(1), votes.min(1)))  # as the authors' code: exactly Beta
    assert dirichlet_criterion(votes[1:2])[0] == d[1]  # whatever else is in the batch
    three = dirichlet_criterion(np.array([[4.0, 1.0, 1.0]]))[0]
    assert three < dirichlet_criterion(np.array([[4.0, 1.0, 0.0]]))[0]  # a third answer lowers the top's chance


def test_esc_reads_the_last_complete_window() -> None:
    s = VoteState(np.ones((3, 2)), np.array([[1, 0, 0, 0, 0], [0, 0, 0, 1, -1], [0, 0, 0, 0, 1]]),
                  np.zeros(3), np.full(3, 1), 3)
    # window 2 over 5 samples: the complete windows are (0,1), (2,3); the last is (2,3)
    assert ESC(2).stop_now(s).tolist() == [True, False, True]
    assert ESC(5).stop_now(s).tolist() == [False, False, False]
    assert ESC(6).stop_now(s).tolist() == [False, False, False]  # no complete window yet


def test_esc_with_rows_of_different_lengths_reads_each_rows_own_last_window() -> None:
    """``drawn`` (the simulator's subtasks: votes so far differ by row) — each row as if cut to its own length."""
    recent = np.array([[2, 2, 1, -1], [0, 1, 1, 1], [3, 3, -1, -1]])
    drawn = np.array([3, 4, 2])
    s = VoteState(np.ones((3, 2)), recent, np.zeros(3), np.zeros(3, int), 3, drawn=drawn)
    for w in (1, 2, 3):
        one_by_one = [bool(ESC(w).stop_now(VoteState(np.ones((1, 2)), recent[i:i + 1, :drawn[i]], np.zeros(1),
                                                     np.zeros(1, int), 3))[0]) for i in range(3)]
        assert ESC(w).stop_now(s).tolist() == one_by_one
    with pytest.raises(ConfigError, match="VoteState.drawn"):
        VoteState(np.ones((3, 2)), recent, np.zeros(3), np.zeros(3, int), 3, drawn=np.array([1, 2]))


def _play_one(rule, runs, t: int, width: int) -> int:
    """Stop check of task t under ``rule``, built from its attempts one round at a time."""
    R = runs.answers.shape[1]
    votes: dict[int, int] = {}
    seq: list[int] = []
    for k in range(R):
        for a in runs.answers[t, k, :width].tolist():
            seq.append(a)
            if a >= 0:
                votes[a] = votes.get(a, 0) + 1
        v = np.array([[float(x) for x in votes.values()] or [0.0]])
        st = VoteState(v, np.array([seq]), np.array([0.1]), np.array([k]), R)
        if k == R - 1 or rule.stop_now(st)[0]:
            return k
    raise AssertionError("unreachable")


@pytest.mark.parametrize("rule", [FixedBudget(2), VoteShare(0.7), AdaptiveBeta(0.9), AdaptiveDirichlet(0.8), ESC(3)])
def test_vectorised_decisions_match_a_per_task_loop(rule) -> None:
    runs = structured(T=60, R=4, W=3, seed=2)
    states = vote_states(runs, 3, np.full(60, 0.1))
    fast = first_stop(np.stack([rule.stop_now(s) for s in states], 1))
    slow = [_play_one(rule, runs, t, 3) for t in range(60)]
    assert fast.tolist() == slow
