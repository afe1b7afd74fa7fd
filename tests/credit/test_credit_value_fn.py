"""User value functions: batching, caching and clear errors naming the coalition."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace import synth
from orchestrace.credit import assign, batched, leave_one_out, shapley
from orchestrace.credit._value import Evaluator
from orchestrace.errors import ValueFunctionError


def test_scalar_v_that_raises_names_the_coalition():
    def v(s):
        if s == frozenset({0, 2}):
            raise RuntimeError("replay crashed")
        return float(len(s))

    with pytest.raises(ValueFunctionError, match=r"RuntimeError: replay crashed for coalition \{0, 2\}"):
        shapley(v, 3)


def test_nan_and_non_numbers_are_refused():
    with pytest.raises(ValueFunctionError, match=r"NaN for coalition ∅"):
        shapley(lambda s: float("nan"), 2)
    with pytest.raises(ValueFunctionError, match=r"returned str .* coalition \{a\}"):
        leave_one_out(lambda s: "high" if s == frozenset({"a"}) else 1.0, 2, players=["a", "b"])
    with pytest.raises(ValueFunctionError, match="returned NoneType"):
        shapley(lambda s: None, 2)
    with pytest.raises(ValueFunctionError, match="inf"):
        shapley(lambda s: float("inf") if len(s) == 2 else 0.0, 2)


def test_batched_v_errors():
    with pytest.raises(ValueFunctionError, match=r"must return 4 floats .* got shape \(3,\)"):
        shapley(batched(lambda m: np.zeros(3)), 2)
    with pytest.raises(ValueFunctionError, match=r"NaN for coalition \{1\}"):
        shapley(batched(lambda m: np.where(mask_is(m, [False, True]), np.nan, 1.0)), 2)

    def boom(m):
        if (m.sum(axis=1) == 2).any():
            raise ValueError("bad batch")
        return m.sum(axis=1).astype(float)

    with pytest.raises(ValueFunctionError, match=r"ValueError: bad batch for coalition \{0, 1\}"):
        shapley(batched(boom), 2)


def mask_is(m, row):
    return (m == np.array(row)).all(axis=1)


def test_results_are_cached_and_batched():
    calls = []

    def v(m):
        calls.append(m.shape[0])
        return m.sum(axis=1).astype(float)

    ev = Evaluator(batched(v), n=3)
    m = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1]], bool)
    assert ev(m).tolist() == [1.0, 1.0, 2.0]
    assert ev(m).tolist() == [1.0, 1.0, 2.0]
    assert calls == [2]  # one batch of the two distinct coalitions, then all from the cache
    scalar_calls = []
    ev2 = Evaluator(lambda s: scalar_calls.append(s) or 1.0, n=2)
    ev2(np.ones((5, 2), bool))
    assert len(scalar_calls) == 1


def test_assign_with_user_value_function():
    tr = synth(events=60, agents=3, seed=4)
    from orchestrace.credit import unit_index

    ids = unit_index(tr, "agent").ids
    w = np.arange(1.0, len(ids) + 1)
    res = assign(tr, unit="agent", method="shapley", value_fn=batched(lambda m: m @ w))
    np.testing.assert_allclose(res.values, w, atol=1e-12)
    res = assign(tr, unit="agent", method="leave-one-out", value_fn=lambda s: float("w1" in s))
    assert res["w1"] == 1.0 and res["w2"] == 0.0
    assert not any("trace-only" in n for n in res.notes)
    with pytest.raises(ValueFunctionError, match="for coalition"):
        assign(tr, unit="agent", method="shapley", value_fn=lambda s: 1 / 0)
