"""Cooperative games with known values, Shapley axioms, Owen values, Monte Carlo bounds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.credit import (
    batched,
    hoeffding_epsilon,
    hoeffding_samples,
    leave_one_out,
    owen,
    shapley,
    t_quantile,
)
from orchestrace.errors import ConfigError

# ----------------------------------------------------------------------------- references


def brute_shapley(v, n):
    """Plain reference: average marginal contribution over all n! orders (scalar v on frozensets)."""
    phi = [0.0] * n
    perms = list(itertools.permutations(range(n)))
    for p in perms:
        s = set()
        for i in p:
            before = v(frozenset(s))
            s.add(i)
            phi[i] += v(frozenset(s)) - before
    return np.array(phi) / len(perms)


def brute_owen(v, groups):
    """Plain reference: average over all orders that keep every group contiguous."""
    n = sum(len(g) for g in groups)
    phi = [0.0] * n
    count = 0
    for gorder in itertools.permutations(range(len(groups))):
        for inner in itertools.product(*[list(itertools.permutations(groups[k])) for k in gorder]):
            order = [i for block in inner for i in block]
            s = set()
            for i in order:
                before = v(frozenset(s))
                s.add(i)
                phi[i] += v(frozenset(s)) - before
            count += 1
    return np.array(phi) / count


def table_game(values):
    """Scalar game from a table indexed by the coalition's bit mask."""
    return lambda s: float(values[sum(1 << i for i in s)])


def mask_index(m):
    return (m.astype(np.int64) << np.arange(m.shape[1])).sum(axis=1)


def table_batched(values):
    arr = np.asarray(values, dtype=float)
    return batched(lambda m: arr[mask_index(m)])


# ----------------------------------------------------------------------------- known games


def test_additive_game_gives_own_contribution():
    w = np.array([0.5, -1.0, 2.0, 3.5, 0.0])
    res = shapley(batched(lambda m: m @ w), 5)
    assert res.exact
    np.testing.assert_allclose(res.values, w, atol=1e-12)


def test_symmetric_game_splits_equally():
    res = shapley(lambda s: float(len(s)) ** 2, 4)  # v depends on |S| only
    np.testing.assert_allclose(res.values, [4.0] * 4, atol=1e-12)


def test_glove_game():
    # player 0 holds a left glove, players 1 and 2 a right glove each: (2/3, 1/6, 1/6)
    def v(s):
        return float(min(len(s & {0}), len(s & {1, 2})))

    np.testing.assert_allclose(shapley(v, 3).values, [2 / 3, 1 / 6, 1 / 6], atol=1e-12)


@pytest.mark.parametrize(
    ("quota", "weights", "expected"),
    [
        (4, [3, 2, 1, 1], [1 / 2, 1 / 6, 1 / 6, 1 / 6]),  # hand count: A pivotal in 12 of 24 orders
        (51, [50, 49, 1], [2 / 3, 1 / 6, 1 / 6]),  # classic: the big party is pivotal 4 of 6 orders
        (3, [1, 1, 1], [1 / 3, 1 / 3, 1 / 3]),  # unanimity
        (6, [4, 3, 2, 1], [5 / 12, 1 / 4, 1 / 4, 1 / 12]),  # the textbook [6; 4,3,2,1] example
    ],
)
def test_weighted_majority_games(quota, weights, expected):
    w = np.array(weights)
    res = shapley(batched(lambda m: (m @ w >= quota).astype(float)), len(weights))
    np.testing.assert_allclose(res.values, expected, atol=1e-12)
    np.testing.assert_allclose(res.values, brute_shapley(lambda s: float(sum(w[list(s)]) >= quota), len(w)), atol=1e-12)


def test_dummy_player_gets_zero():
    def v(s):
        return float(len(s & {0, 1}) == 2) + 0.0 * (2 in s)

    res = shapley(v, 3)
    assert abs(res.values[2]) < 1e-12
    np.testing.assert_allclose(res.values[:2], [0.5, 0.5], atol=1e-12)


def test_exact_matches_brute_force_on_random_games():
    rng = np.random.default_rng(0)
    for n in range(1, 7):
        vals = rng.normal(size=1 << n)
        np.testing.assert_allclose(shapley(table_batched(vals), n).values, brute_shapley(table_game(vals), n), atol=1e-10)


def test_exact_refuses_large_n_with_hint():
    with pytest.raises(ConfigError, match="samples"):
        shapley(batched(lambda m: m.sum(axis=1)), 30)


def test_leave_one_out():
    res = leave_one_out(lambda s: float(len(s) >= 2), 3)
    np.testing.assert_allclose(res.values, [0.0, 0.0, 0.0])
    res = leave_one_out(batched(lambda m: m @ np.array([1.0, 2.0])), 2)
    np.testing.assert_allclose(res.values, [1.0, 2.0])


# ----------------------------------------------------------------------------- axioms (Hypothesis)

games = st.integers(1, 6).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.floats(-5, 5), min_size=1 << n, max_size=1 << n))
)


@settings(max_examples=50, deadline=None)
@given(games)
def test_efficiency(game):
    n, vals = game
    phi = shapley(table_batched(vals), n).values
    assert math.isclose(phi.sum(), vals[(1 << n) - 1] - vals[0], abs_tol=1e-9)


@settings(max_examples=50, deadline=None)
@given(games, st.data())
def test_symmetry(game, data):
    n, vals = game
    if n < 2:
        return
    i, j = 0, 1
    vals = list(vals)
    for m in range(1 << n):  # make i and j interchangeable: v(S∪i) = v(S∪j) for S ∌ i, j
        if (m >> i) & 1 and not (m >> j) & 1:
            vals[m ^ (1 << i) ^ (1 << j)] = vals[m]
    phi = shapley(table_batched(vals), n).values
    assert math.isclose(phi[i], phi[j], abs_tol=1e-9)


@settings(max_examples=50, deadline=None)
@given(games, st.floats(-3, 3))
def test_dummy(game, c):
    n, vals = game
    d = n  # add a player d with v(S ∪ d) = v(S) + c: a dummy gets exactly c (0 for c = 0)
    ext = list(vals) + [x + c for x in vals]
    phi = shapley(table_batched(ext), n + 1).values
    assert math.isclose(phi[d], c, abs_tol=1e-9)


@settings(max_examples=50, deadline=None)
@given(games, st.data())
def test_additivity(game, data):
    n, vals = game
    other = data.draw(st.lists(st.floats(-5, 5), min_size=1 << n, max_size=1 << n))
    both = [a + b for a, b in zip(vals, other, strict=True)]
    np.testing.assert_allclose(
        shapley(table_batched(both), n).values,
        shapley(table_batched(vals), n).values + shapley(table_batched(other), n).values,
        atol=1e-9,
    )


partitions = st.integers(2, 6).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.integers(0, 2), min_size=n, max_size=n),
                        st.lists(st.floats(-5, 5), min_size=1 << n, max_size=1 << n))
)


@settings(max_examples=50, deadline=None)
@given(partitions)
def test_owen_matches_reference_and_quotient_game(part):
    n, labels, vals = part
    groups = [[i for i in range(n) if labels[i] == k] for k in sorted(set(labels))]
    res = owen(table_batched(vals), groups)
    np.testing.assert_allclose(res.values, brute_owen(table_game(vals), groups), atol=1e-9)
    # the quotient game between groups: u(T) = v(∪_{k∈T} B_k)
    arr = np.asarray(vals)

    def u(t):
        return float(arr[sum(1 << i for k in t for i in groups[k])])

    quotient = brute_shapley(u, len(groups))
    for k, g in enumerate(groups):
        assert math.isclose(res.values[g].sum(), quotient[k], abs_tol=1e-9)


def test_owen_with_singletons_or_one_group_is_shapley():
    rng = np.random.default_rng(1)
    vals = rng.normal(size=1 << 5)
    sh = shapley(table_batched(vals), 5).values
    np.testing.assert_allclose(owen(table_batched(vals), [[i] for i in range(5)]).values, sh, atol=1e-10)
    np.testing.assert_allclose(owen(table_batched(vals), [list(range(5))]).values, sh, atol=1e-10)


def test_owen_rejects_bad_partitions():
    v = batched(lambda m: m.sum(axis=1).astype(float))
    with pytest.raises(ConfigError, match="disjoint"):
        owen(v, [[0, 1], [1, 2]])
    with pytest.raises(ConfigError, match="no group"):
        owen(v, [[0], [2]], n=3)


# ----------------------------------------------------------------------------- sampling


def _cheap_game(n, seed=0):
    w = np.random.default_rng(seed).uniform(0.0, 4.0 / n, size=n)
    # v(S) = 1 − exp(−w·S): every marginal lies in [0, max w]
    return batched(lambda m: 1.0 - np.exp(-(m @ w))), float(w.max())


def test_hoeffding_rule():
    m = hoeffding_samples(100, epsilon=0.05, delta=0.1, value_range=1.0)
    assert m == math.ceil(math.log(2000) / (2 * 0.05**2))
    assert hoeffding_epsilon(100, samples=m, delta=0.1, value_range=1.0) <= 0.05


def test_sampled_estimates_are_efficient_and_reported():
    v, r = _cheap_game(40)
    res = shapley(v, 40, samples=64, value_range=r, seed=3)
    assert not res.exact and res.permutations == 64 and res.stderr is not None
    full = float(v(np.ones((1, 40), bool))[0])
    assert math.isclose(res.values.sum(), full, rel_tol=1e-9)
    assert res.epsilon == pytest.approx(hoeffding_epsilon(40, samples=32, delta=0.05, value_range=r))


def test_epsilon_stopping_rule_reaches_target():
    v, r = _cheap_game(30)
    res = shapley(v, 30, epsilon=0.01, delta=0.05, value_range=r)
    assert res.epsilon <= 0.01
    assert res.permutations == 2 * hoeffding_samples(30, epsilon=0.01, delta=0.05, value_range=r)


def test_monte_carlo_estimates_fall_inside_reported_epsilon():
    n, delta = 8, 0.2
    w = np.random.default_rng(5).uniform(0, 1, size=n)
    v = batched(lambda m: np.sqrt(m @ w))  # not additive
    exact = shapley(v, n).values
    r = float(np.sqrt(w.max()))  # √ is concave and subadditive: every marginal lies in [0, √max w]
    runs, inside = 200, 0
    for seed in range(runs):
        res = shapley(v, n, samples=20, value_range=r, delta=delta, seed=seed)
        inside += bool(np.max(np.abs(res.values - exact)) <= res.epsilon)
    assert inside / runs >= 1 - delta


def test_bound_without_value_range_is_the_clt_one_and_says_so():
    v, _ = _cheap_game(10)
    res = shapley(v, 10, samples=40)
    assert any("CLT" in note and "not a guarantee" in note for note in res.notes)
    assert res.permutations == 40  # 10 blocks: an order, its ½-rotation and both reversed
    q = t_quantile(1 - 0.05 / 20, 9)  # 10 blocks, union over 10 estimates
    assert res.epsilon == pytest.approx(q * float(res.stderr.max()))


def test_sampled_owen_close_to_exact():
    rng = np.random.default_rng(2)
    vals = rng.uniform(0, 1, size=1 << 6)
    groups = [[0, 1], [2, 3, 4], [5]]
    exact = owen(table_batched(vals), groups).values
    res = owen(table_batched(vals), groups, samples=4000, seed=1)
    assert np.max(np.abs(res.values - exact)) < 0.05
    assert math.isclose(res.values.sum(), vals[-1] - vals[0], abs_tol=1e-9)
