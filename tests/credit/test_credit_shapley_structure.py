"""Shapley structure: Harsanyi dividends, null players, interchangeable players, sampled bounds.

References are plain: brute force over all orders, the 2^n enumeration of a black-box
value function (no structure hooks), and values known in closed form.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace import synth
from orchestrace.analysis.graph import TraceGraph
from orchestrace.credit import TraceValue, assign, batched, owen, shapley, t_quantile, unit_index
from orchestrace.credit._flow import anchor_signals, event_weights
from orchestrace.errors import ConfigError
from orchestrace.rewards import default_signals
from orchestrace.vocab import CreditUnit


def _orders_average(v, n, orders):
    """Plain reference: the average marginal contribution over the given orders."""
    phi, count = [0.0] * n, 0
    for order in orders:
        s: set[int] = set()
        for i in order:
            before = v(frozenset(s))
            s.add(i)
            phi[i] += v(frozenset(s)) - before
        count += 1
    return np.array(phi) / count


def brute_shapley(v, n):
    return _orders_average(v, n, itertools.permutations(range(n)))


def brute_owen(v, groups):
    n = sum(len(g) for g in groups)
    orders = ([i for block in inner for i in block]
              for gorder in itertools.permutations(range(len(groups)))
              for inner in itertools.product(*[list(itertools.permutations(groups[k])) for k in gorder]))
    return _orders_average(v, n, orders)


class Unanimity:
    """``v(S) = Σ_k c_k [D_k ⊆ S]`` with the structure hooks a value function may expose."""

    batched = True

    def __init__(self, n: int, sets: list[list[int]], coef: list[float]) -> None:
        self.n, self.sets, self.coef = n, [sorted(set(d)) for d in sets], np.asarray(coef, dtype=float)
        self.dep = np.zeros((len(sets), n), dtype=bool)
        for k, d in enumerate(self.sets):
            self.dep[k, d] = True
        self.null_players = ~self.dep.any(axis=0)

    def __call__(self, m: np.ndarray) -> np.ndarray:
        missing = (~np.asarray(m, bool)).astype(float) @ self.dep.T.astype(float)  # (B, K) counts, exact
        return (missing == 0) @ self.coef

    def scalar(self, s: frozenset) -> float:
        return float(sum(c for d, c in zip(self.sets, self.coef, strict=True) if set(d) <= s))

    def dividends(self):
        size = np.array([len(d) for d in self.sets], dtype=np.int64)
        ptr = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
        idx = np.array([i for d in self.sets for i in d], dtype=np.int64)
        return ptr, idx, self.coef


def black_box(u: Unanimity):
    """The same game without any hook: only coalition values."""
    return batched(lambda m: u(m))


@st.composite
def unanimity_games(draw, max_n: int = 7):
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(0, 6))
    sets = [draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True)) for _ in range(k)]
    if n >= 3 and draw(st.booleans()):  # make two players interchangeable: b joins every set a is in
        a, b = draw(st.sampled_from(list(itertools.permutations(range(n), 2))))
        sets = [sorted(set(d) | {b}) if a in d else [i for i in d if i != b] or [a] for d in sets]
    coef = [draw(st.floats(-2, 2, allow_nan=False, width=32)) for _ in sets]
    return Unanimity(n, sets, coef)


# ----------------------------------------------------------------------------- exact agreement


@settings(max_examples=60, deadline=None)
@given(unanimity_games())
def test_dividend_formula_equals_enumeration_and_brute_force(u):
    closed = shapley(u, u.n)
    enum = shapley(black_box(u), u.n)
    assert closed.exact and enum.exact and "Harsanyi" in closed.notes[0]
    np.testing.assert_allclose(closed.values, enum.values, atol=1e-9)
    np.testing.assert_allclose(closed.values, brute_shapley(u.scalar, u.n), atol=1e-9)
    assert np.all(closed.values[u.null_players] == 0.0)


@settings(max_examples=40, deadline=None)
@given(unanimity_games(max_n=6), st.data())
def test_owen_dividend_formula_equals_exact_owen(u, data):
    labels = data.draw(st.lists(st.integers(0, 2), min_size=u.n, max_size=u.n))
    groups = [[i for i in range(u.n) if labels[i] == g] for g in sorted(set(labels))]
    closed = owen(u, groups)
    np.testing.assert_allclose(closed.values, owen(black_box(u), groups).values, atol=1e-9)
    np.testing.assert_allclose(closed.values, brute_owen(u.scalar, groups), atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**32 - 1))
def test_null_player_removal_never_changes_values(n, seed):
    rng = np.random.default_rng(seed)
    live = rng.random(n) < 0.6  # v only looks at the live players: the others are null
    table = rng.normal(size=1 << n)
    weights = 1 << np.arange(n)

    def v(m):  # any game at all, read through S ∩ live
        return table[(m & live).astype(np.int64) @ weights]

    plain = shapley(batched(v), n)
    removed = shapley(batched(v), n, null_players=~live)
    np.testing.assert_allclose(removed.values, plain.values, atol=1e-9)
    assert np.all(removed.values[~live] == 0.0)
    assert abs(plain.values[~live]).max(initial=0.0) < 1e-9  # the null player axiom, without removal
    if (~live).any() and live.sum() >= 2:
        assert removed.evaluations < plain.evaluations and "null players" in removed.notes[0]
        s = shapley(batched(v), n, null_players=~live, samples=64, seed=seed % 1000)
        assert np.all(s.values[~live] == 0.0)
        assert math.isclose(s.values.sum(), plain.values.sum(), abs_tol=1e-9)  # efficiency


def test_interchangeable_players_pool_to_equal_shares():
    # players 0-3 interchangeable, 4-5 interchangeable, 6 alone: classes declared
    w = np.array([1.0, 1.0, 1.0, 1.0, 3.0, 3.0, 0.5])
    v = batched(lambda m: np.sqrt(m @ w) + 0.3 * (m[:, 4] & m[:, 5]))
    exact = shapley(v, 7).values
    res = shapley(v, 7, samples=400, classes=[0, 0, 0, 0, 1, 1, 2], seed=3)
    assert len(set(res.values[:4].tolist())) == 1 and res.values[4] == res.values[5]
    assert math.isclose(res.values.sum(), exact.sum(), abs_tol=1e-12)
    assert np.max(np.abs(res.values - exact)) <= res.epsilon
    assert any("classes of interchangeable players" in note for note in res.notes)


# ----------------------------------------------------------------------------- the trace game


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_trace_value_structure_hooks_are_right(seed):
    tr = synth(events=120, agents=7, seed=seed)
    g = TraceGraph.from_trace(tr)
    ui = unit_index(g, CreditUnit.AGENT)
    tv = TraceValue(g, ui, anchor_signals(g, ui, list(default_signals(tr))), event_weights(g, "auto")[0])
    n = tv.n
    plain = batched(lambda m: tv(m))
    np.testing.assert_allclose(shapley(tv, n).values, shapley(plain, n, null_players=np.zeros(n, bool)).values,
                               atol=1e-12)
    rng = np.random.default_rng(seed)
    masks = rng.random((64, n)) < 0.5
    for i in np.flatnonzero(tv.null_players):  # null: adding i never changes v
        with_i = masks.copy()
        with_i[:, i] = True
        np.testing.assert_array_equal(tv(with_i), tv(masks & ~np.eye(n, dtype=bool)[i]))
    for c in np.unique(tv.classes):  # interchangeable: swapping two members never changes v
        members = np.flatnonzero(tv.classes == c)
        if members.size >= 2:
            a, b = members[:2]
            swapped = masks.copy()
            swapped[:, [a, b]] = masks[:, [b, a]]
            np.testing.assert_allclose(tv(swapped), tv(masks), atol=1e-12)
    ranks = rng.random((16, n)).argsort(axis=1).argsort(axis=1)  # incremental = differencing v
    order = ranks.argsort(axis=1)
    prefix = np.zeros((16, n + 1, n), dtype=bool)
    for j in range(n):
        prefix[:, j + 1] = prefix[:, j]
        prefix[np.arange(16), j + 1, order[:, j]] = True
    diff = np.diff(tv(prefix.reshape(-1, n)).reshape(16, n + 1), axis=1)
    np.testing.assert_allclose(tv.marginals(ranks), np.take_along_axis(diff, ranks, axis=1), atol=1e-12)


def test_assign_is_exact_beyond_exact_max_and_sampling_agrees_within_its_bound():
    tr = synth(events=600, agents=40, seed=5)
    ex = assign(tr, unit="agent", method="shapley")
    assert ex.epsilon is None and ex.stderr is None and any("Harsanyi" in note for note in ex.notes)
    assert math.isclose(float(ex.values.sum()), ex.total_reward, abs_tol=1e-9)
    sm = assign(tr, unit="agent", method="shapley", rel_tol=0.1, seed=2)
    assert sm.epsilon is not None and sm.stderr is not None
    assert np.max(np.abs(sm.values - ex.values)) <= sm.epsilon
    assert any("× the mean |value|" in note for note in sm.notes)
    assert math.isclose(float(sm.values.sum()), ex.total_reward, abs_tol=1e-9)
    ow = assign(tr, unit="agent", method="owen")
    assert ow.epsilon is None and math.isclose(float(ow.values.sum()), ow.total_reward, abs_tol=1e-9)


# ----------------------------------------------------------------------------- sampled bounds


def _interaction_game(n: int, seed: int) -> tuple[Unanimity, np.ndarray]:
    """Additive + pairwise + a few larger unanimity terms: known values, rare pivots included."""
    rng = np.random.default_rng(seed)
    sets = [[i] for i in range(n)]
    sets += [sorted(rng.choice(n, 2, replace=False).tolist()) for _ in range(n)]
    sets += [sorted(rng.choice(n, int(k), replace=False).tolist()) for k in rng.integers(3, 12, size=n // 4)]
    coef = np.concatenate([rng.uniform(0, 1, n), rng.normal(0, 1, n), rng.uniform(0, 3, n // 4)])
    u = Unanimity(n, sets, coef.tolist())
    return u, shapley(u, n).values  # dividend formula, proven against brute force above


def test_coverage_of_the_reported_bound_at_n_200():
    u, truth = _interaction_game(200, seed=11)
    res = shapley(black_box(u), 200, samples=800, seed=4)
    err = np.abs(res.values - truth)
    assert err.max() <= res.epsilon  # simultaneous bound (union over players) holds
    blocks = res.permutations // 4
    # each player's own 95 % interval (+ rounding: players with constant marginals have se = 0)
    half = t_quantile(0.975, blocks - 1) * res.stderr + 1e-12
    assert np.mean(err <= half) >= 0.9
    assert math.isclose(res.values.sum(), truth.sum(), rel_tol=1e-9)


def test_relative_target_is_reached():
    w = np.random.default_rng(0).uniform(0, 0.04, size=100)
    v = batched(lambda m: 1.0 - np.exp(-(m @ w)))
    res = shapley(v, 100, rel_tol=0.1, seed=1)
    assert res.epsilon <= 0.1 * float(np.abs(res.values).mean())
    assert not any("stopped" in note for note in res.notes)
    assert any("× the mean |value|" in note for note in res.notes)


def test_coverage_over_repeated_runs_small_game():
    u, truth = _interaction_game(24, seed=3)
    runs, inside = 40, 0
    for seed in range(runs):
        res = shapley(black_box(u), 24, samples=128, seed=seed)
        inside += bool(np.max(np.abs(res.values - truth)) <= res.epsilon)
    assert inside / runs >= 0.9


def test_time_limit_stops_and_says_so():
    u, _ = _interaction_game(120, seed=1)
    res = shapley(black_box(u), 120, rel_tol=1e-6, time_limit=0.2, seed=0)
    assert any("stopped at the time limit" in note for note in res.notes)
    assert res.epsilon > 1e-6 * float(np.abs(res.values).mean())


def test_t_quantile_against_tables():
    assert t_quantile(0.975, 15) == pytest.approx(2.131, abs=1e-3)
    assert t_quantile(0.995, 10) == pytest.approx(3.169, abs=2e-3)
    assert t_quantile(0.9995, 30) == pytest.approx(3.646, abs=1e-3)
    assert t_quantile(0.975, math.inf) == pytest.approx(1.95996, abs=1e-4)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"rel_tol": 0.0}, "rel_tol"),
        ({"rel_tol": 0.1, "strata": 0}, "strata"),
        ({"samples": 8, "null_players": np.zeros(3, bool)}, "null_players"),
        ({"samples": 8, "null_players": [9]}, "outside"),
        ({"samples": 8, "classes": [0, 1]}, "classes"),
        ({"rel_tol": 0.1, "time_limit": -1.0}, "time_limit"),
    ],
)
def test_bad_sampling_options_are_refused(kw, match):
    with pytest.raises(ConfigError, match=match):
        shapley(batched(lambda m: m.sum(axis=1).astype(float)), 5, **kw)


def test_sampled_owen_removes_null_players_and_stays_within_its_bound():
    u = Unanimity(8, [[0, 1], [1, 2, 4], [4], [0, 4]], [1.0, 2.0, 0.5, -1.0])  # 3, 5, 6, 7 null
    groups = [[0, 3], [1, 2], [4, 5, 6], [7]]  # group [7] is all null
    exact = owen(black_box(u), groups).values
    res = owen(black_box(u), groups, samples=2000, seed=1, null_players=u.null_players)
    assert np.all(res.values[u.null_players] == 0.0) and "null players" in res.notes[0]
    assert np.max(np.abs(res.values - exact)) <= res.epsilon
    assert math.isclose(res.values.sum(), exact.sum(), abs_tol=1e-12)


def test_too_few_blocks_give_no_bound_or_a_warning():
    v = batched(lambda m: m.sum(axis=1).astype(float) ** 1.5)
    one = shapley(v, 6, samples=2)  # one antithetic pair: no variance estimate
    assert one.epsilon == math.inf and np.all(np.isinf(one.stderr))
    assert any("no error bound" in note for note in one.notes)
    assert math.isclose(one.values.sum(), 6**1.5, rel_tol=1e-12)
    few = shapley(v, 6, samples=40)
    assert math.isfinite(few.epsilon) and any("needs about" in note for note in few.notes)
