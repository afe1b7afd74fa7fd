"""The exact valuation against a plain per-task reference, on random logged runs."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_runs import structured_runs

from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.offline import first_stop, task_prices, valuation


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


def _reference(runs, t: int, k: int, width: int, aggregation: str) -> tuple[bool, float]:
    """Aggregate of task t after round k from first principles: a dict of votes, ties → earliest."""
    score: dict[int, float] = defaultdict(float)
    first: dict[int, int] = {}
    lp = runs.logprob_mean.astype(np.float64)
    fill = float(np.nanmean(lp))
    tokens = 0.0
    pos = 0
    for r in range(k + 1):
        for j in range(width):
            a = int(runs.answers[t, r, j])
            tokens += float(runs.prompt_tokens[t, r, j]) + float(runs.completion_tokens[t, r, j])
            if a >= 0:
                x = lp[t, r, j] if np.isfinite(lp[t, r, j]) else fill
                score[a] += float(np.exp(x)) if aggregation == "logprob" else 1.0
                first.setdefault(a, pos)
            pos += 1
    if not score:
        return False, tokens
    top = max(score.values())
    win = min((a for a, s in score.items() if abs(s - top) <= 1e-9), key=lambda a: first[a])
    return win == int(runs.correct_code[t]), tokens


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), R=st.integers(1, 4), W=st.integers(1, 4), data=st.data())
def test_valuation_matches_a_per_task_reference(seed: int, R: int, W: int, data: st.DataObject) -> None:
    runs = structured(T=12, R=R, W=W, seed=seed)
    width = data.draw(st.integers(1, W))
    agg = data.draw(st.sampled_from(["majority", "logprob"]))
    price = task_prices(runs.task_ids, seed=3)
    v = valuation(runs, width, agg, price, token_scale=123.0)
    for t in range(12):
        for k in range(R):
            ok, tok = _reference(runs, t, k, width, agg)
            assert v.correct[t, k] == ok
            assert np.isclose(v.tokens[t, k], tok)
            assert v.calls[t, k] == (k + 1) * width
            assert np.isclose(v.payoff[t, k], float(ok) - price[t] * tok / 123.0)


def test_full_width_majority_is_the_logged_grade() -> None:
    runs = structured(T=300, R=5, W=4, seed=7)
    v = valuation(runs, 4, "majority", np.zeros(300), 1.0)
    assert (v.correct == runs.round_correct).all()


def test_stopping_picks_the_prefix() -> None:
    runs = structured(T=40, R=4, W=2, seed=1)
    v = valuation(runs, 2, "majority", np.full(40, 0.1), 50.0)
    stop = np.zeros((40, 4), bool)
    stop[::2, 1] = True  # even tasks stop after round 1, odd ones never (→ the last check)
    out = v.at(first_stop(stop))
    assert out["calls"].tolist() == [4.0, 8.0] * 20
    assert np.allclose(out["return"][::2], v.payoff[::2, 1]) and np.allclose(out["return"][1::2], v.payoff[1::2, 3])


def test_prices_are_a_function_of_the_task_id() -> None:
    ids = np.array([f"t{i}" for i in range(50)])
    a, b = task_prices(ids, seed=0), task_prices(ids[::-1], seed=0)[::-1]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, task_prices(ids, seed=1))
    assert a.min() >= 0.01 and a.max() <= 0.3
