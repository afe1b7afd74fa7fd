"""``TeamArrays.step`` (column by column, issue 43) equals the one-hot step it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.logged.runs import make_synthetic_logged
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.policies.team import TeamArrays, TeamState


def _one_hot_step(arr: TeamArrays, s: TeamState, mask: np.ndarray) -> TeamState:
    """The plain reference: every column's vote as an (N, W, K) one-hot block, summed over the columns."""
    r, (W, K) = s.rounds, (arr.codes.shape[2], arr.K)
    mask = np.broadcast_to(np.asarray(mask, bool), (len(s.idx), W))
    a = arr.codes[s.idx, r]
    ok = (a >= 0) & mask
    oh = (a[:, :, None] == np.arange(K)) & ok[:, :, None]
    pos = np.where(oh, (r * W + np.arange(W))[None, :, None], np.iinfo(np.int64).max).min(1)
    return TeamState(
        idx=s.idx, votes=s.votes + oh.sum(1), wlp=s.wlp + (oh * arr.wlp[s.idx, r][:, :, None]).sum(1),
        wcf=s.wcf + (oh * arr.wcf[s.idx, r][:, :, None]).sum(1), first=np.minimum(s.first, pos),
        latest=np.where(mask, a, s.latest), latest_lp=np.where(mask, arr.lp[s.idx, r], s.latest_lp),
        latest_cf=np.where(mask, arr.cf[s.idx, r], s.latest_cf), ncalled=s.ncalled + mask,
        allcalled=s.allcalled & mask, drawn=s.drawn + mask.sum(1),
        tokens=s.tokens + (arr.tok[s.idx, r] * mask).sum(1), rounds=r + 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 4), st.booleans(), st.integers(0, 2**31 - 1))
def test_step_equals_the_one_hot_reference(T: int, R: int, team: bool, seed: int) -> None:
    runs = make_synthetic_team(T, R, seed=seed % 1000) if team else make_synthetic_logged(T, R, 3, seed=seed % 1000)
    rng = np.random.default_rng(seed)
    arr = TeamArrays.build(runs, price=rng.uniform(0, 0.3, T), token_scale=100.0)
    idx = rng.integers(0, T, rng.integers(0, 2 * T))  # repeated tasks and empty batches too
    fast = slow = arr.start(idx)
    for _ in range(R):
        mask = rng.uniform(size=(len(idx), arr.shape[2])) < 0.6
        fast, slow = arr.step(fast, mask), _one_hot_step(arr, slow, mask)
        for k, v in vars(slow).items():
            np.testing.assert_array_equal(getattr(fast, k), v, err_msg=k)
