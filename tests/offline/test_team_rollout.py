"""``rollout`` (the team valuation) from the start and from a later state, against a plain per-task walk.

The fitted team policy's targets are the return-to-go of ``rollout(..., start=state)`` (issue 39: one
valuation, where the fitter had a second copy of the walk); both forms are checked here on random policies
against the plainest reference: one task at a time, one round at a time.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.policies.team import (
    TeamArrays,
    TeamState,
    aggregations,
    available_actions,
    rollout,
    subset_masks,
    subsets,
)


def _policy(seed: int, n_subs: int, n_agg: int, arr: TeamArrays, subs: list[tuple[int, ...]]):  # noqa: ANN202
    """A random but deterministic policy: an available action picked by a hash of (task, decision, seed)."""

    def pol(d: int, s: TeamState) -> np.ndarray:
        ok = available_actions(arr, s, subs, n_agg)
        score = np.random.default_rng([seed, d]).uniform(size=(arr.shape[0], n_subs + n_agg))[s.idx]
        return np.where(ok, score, -1.0).argmax(1)

    return pol


def _plain(arr: TeamArrays, pol, subs: list[tuple[int, ...]], aggs: tuple[str, ...], start: TeamState,  # noqa: ANN001
           ) -> np.ndarray:
    """One task at a time: follow ``pol`` from ``start``; correct − price × tokens called from there / scale."""
    masks = subset_masks(subs, arr.shape[2])
    out = np.zeros(len(start.idx))
    for i in range(len(start.idx)):
        s = start.take(np.array([i]))
        spent = float(s.tokens[0])
        while True:
            a = int(pol(s.rounds, s)[0])
            if s.rounds == arr.shape[1] and a < len(subs):
                a = len(subs)
            if a >= len(subs):
                ok = bool(arr.correct(s, aggs[a - len(subs)])[0])
                out[i] = ok - arr.price[s.idx[0]] * (s.tokens[0] - spent) / arr.token_scale
                break
            s = arr.step(s, masks[a][None])
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(5, 40), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_rollout_from_any_state_equals_the_plain_walk(T: int, R: int, seed: int) -> None:  # noqa: N803
    runs = make_synthetic_team(T, R, seed=seed % 1000)
    arr = TeamArrays.build(runs, price=np.random.default_rng(seed).uniform(0.01, 0.3, T), token_scale=250.0)
    subs, aggs = subsets(runs), aggregations(runs)
    pol = _policy(seed, len(subs), len(aggs), arr, subs)
    full = rollout(arr, pol, subs, aggs)
    assert np.allclose(full["return"], _plain(arr, pol, subs, aggs, arr.start(np.arange(T))), atol=1e-12)
    # from the state after one round of the policy's own first call: the return-to-go of the same walk
    s0 = arr.start(np.arange(T))
    s1 = arr.step(s0, subset_masks(subs, arr.shape[2])[pol(0, s0)])
    rest = rollout(arr, pol, subs, aggs, start=s1)
    assert np.allclose(rest["return"], _plain(arr, pol, subs, aggs, s1), atol=1e-12)
    assert np.allclose(full["return"], rest["return"] - arr.price * s1.tokens / arr.token_scale, atol=1e-9)
    assert (rest["rounds"] >= 1).all() and np.array_equal(rest["correct"], full["correct"])
