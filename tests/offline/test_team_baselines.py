"""The team baselines of the pre-registration (cascade, nearest-neighbour router) and the path valuation under them:
checked against the library's rollout and against plain per-task references, and shown to use their signal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from orchestrace.errors import ConfigError
from orchestrace.evaluation.team_baselines import (
    all_paths,
    escalations,
    fit_cascade,
    fit_knn_router,
    fit_learnstop,
    logistic_fit,
    price_order,
)
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.policies.team import TeamArrays, aggregations, rollout, subsets

MEMBERS = ("cold", "hot", "calc")


def corpus(T: int = 80, seed: int = 0):  # noqa: ANN201
    runs = make_synthetic_team(T, 2, seed=seed, members=MEMBERS)
    return runs, TeamArrays.build(runs, np.random.default_rng(seed).uniform(0.01, 0.3, T), 300.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_path_is_valued_as_the_library_rollout_values_it(seed: int) -> None:
    runs, arr = corpus(30, seed)
    ret, names = all_paths(arr, np.arange(30))
    subs, aggs = subsets(runs), list(aggregations(runs))
    rng = np.random.default_rng(seed)
    for p in rng.choice(len(names), 25, replace=False):
        s0, s1, g = names[int(p)]

        def policy(d: int, st, s0=s0, s1=s1, g=g) -> np.ndarray:  # noqa: ANN001
            n = len(st.idx)
            if d == 0:
                return np.full(n, subs.index(s0))
            if d == 1 and s1 is not None:
                return np.full(n, subs.index(s1))
            return np.full(n, len(subs) + aggs.index(g))

        ref = rollout(arr, policy, subs, tuple(aggs))["return"]
        assert np.allclose(ret[:, p], ref)


def test_the_cascade_is_valued_as_a_plain_per_task_reference() -> None:
    runs, arr = corpus(120, 3)
    up = escalations(arr, {"cold": [0.1, 0.4], "hot": [0.1, 0.4], "calc": [1.0, 4.0]})
    cas = fit_cascade(arr, np.arange(60), up)
    got = cas.value(arr, np.arange(60, 120))
    for j, t in enumerate(range(60, 120)):
        c = int(arr.cell[t])
        f = cas.first[c]
        lp = arr.lp[t, 0, f] if arr.codes[t, 0, f] >= 0 else -np.inf
        nxt = {0: 2, 1: 2, 2: None}[f]  # cold and hot escalate to the dearer calc; calc is the dearest
        if lp < cas.tau[c] and nxt is not None:
            ans, toks = arr.codes[t, 1, nxt], arr.tok[t, 0, f] + arr.tok[t, 1, nxt]
        else:
            ans, toks = arr.codes[t, 0, f], arr.tok[t, 0, f]
        want = float(ans >= 0 and ans == arr.correct_code[t]) - arr.price[t] * toks / arr.token_scale
        assert got[j] == pytest.approx(want)


def test_the_cascade_escalates_exactly_when_its_signal_says_so() -> None:
    """Make the first member's log-prob a perfect signal of its correctness: the fitted cascade must beat both
    never and always escalating on fresh tasks (it learned to use the signal)."""
    runs = make_synthetic_team(400, 2, seed=5, members=MEMBERS)
    lp = np.where(runs.correct, -0.05, -3.0).astype(np.float32)
    runs = dataclasses.replace(runs, logprob_mean=lp)
    arr = TeamArrays.build(runs, np.full(400, 0.05), 300.0)
    cas = fit_cascade(arr, np.arange(200), {0: 2, 1: None, 2: 1})  # cold -> calc -> hot
    rows = np.arange(200, 400)
    got = cas.value(arr, rows).mean()
    by_cell = [cas.paths(arr, rows[arr.cell[rows] == c], f) for c, f in cas.first.items()]
    never = sum(stop.sum() for _, stop, _ in by_cell) / len(rows)
    always = sum(esc.sum() for _, _, esc in by_cell) / len(rows)
    assert got > max(never, always) + 0.02
    assert any(-3.0 < t <= -0.05 for t in cas.tau.values())  # a threshold between "wrong" and "right"


def test_the_router_with_one_neighbour_on_its_own_tasks_is_the_oracle_after_its_first_call() -> None:
    runs, arr = corpus(60, 4)
    ret, names = all_paths(arr, np.arange(60))
    rows = np.arange(60)
    router = fit_knn_router(arr, rows, rows, ret, names, ks=(1,))
    got = router.value(arr, rows, ret, names)
    for j, t in enumerate(rows):
        s0 = router.first[int(arr.cell[t])]
        cont = [i for i, (a, _, _) in enumerate(names) if a == s0]
        assert got[j] == pytest.approx(ret[t, cont].max())  # its own features are its nearest (distance 0)


def test_the_router_refuses_a_cell_it_never_saw() -> None:
    runs, arr = corpus(40, 0)
    ret, names = all_paths(arr, np.arange(40))
    cell0 = np.flatnonzero(arr.cell == 0)
    router = fit_knn_router(arr, cell0, cell0, ret, names, ks=(1,))
    with pytest.raises(ConfigError, match="not fitted on cell"):
        router.value(arr, np.flatnonzero(arr.cell == 1), ret, names)


def test_paths_need_two_rounds_without_a_reviser() -> None:
    runs = make_synthetic_team(10, 3, seed=0)
    arr = TeamArrays.build(runs, np.full(10, 0.1), 300.0)
    with pytest.raises(ConfigError, match="two-round teams"):
        all_paths(arr, np.arange(10))


def test_price_order_puts_the_dear_members_last() -> None:
    _, arr = corpus(8, 0)
    assert price_order(arr, {"cold": [2.5, 10], "hot": [0.15, 0.6], "calc": [0.15, 0.6]}) == (1, 2, 0)
    assert price_order(arr, None) == (0, 1, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_logistic_fit_matches_a_plain_gradient_descent_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 3))  # noqa: N806
    y = (rng.random(200) < 1 / (1 + np.exp(-(X @ [1.5, -1.0, 0.0] + 0.3)))).astype(float)
    w = logistic_fit(X, y, l2=2.0)
    A = np.hstack([X, np.ones((200, 1))])  # noqa: N806
    v = np.zeros(4)
    for _ in range(4000):  # the same penalised objective, by plain gradient descent
        p = 1 / (1 + np.exp(-(A @ v)))
        v -= 0.01 * (A.T @ (p - y) + 2.0 * np.r_[v[:3], 0.0])
    assert np.allclose(w, v, atol=1e-3)


def test_learnstop_is_valued_as_a_plain_per_task_reference_and_uses_its_signal() -> None:
    runs = make_synthetic_team(400, 2, seed=7, members=MEMBERS)
    runs = dataclasses.replace(runs, logprob_mean=np.where(runs.correct, -0.05, -3.0).astype(np.float32))
    arr = TeamArrays.build(runs, np.full(400, 0.05), 300.0)
    ret, names = all_paths(arr, np.arange(400))
    rule = fit_learnstop(arr, np.arange(200), np.arange(200, 300), ret, names)
    rows = np.arange(300, 400)
    got = rule.value(arr, rows, ret, names)
    index = {n: i for i, n in enumerate(names)}
    stops, gos = [], []
    for j, t in enumerate(rows):
        s0, g, tau = rule.first[int(arr.cell[t])]
        p = rule.prob(arr, np.array([t]), s0, g)[0]
        stop, go = ret[t, index[(s0, None, g)]], ret[t, index[(s0, (0, 1, 2), g)]]
        assert got[j] == pytest.approx(stop if p >= tau else go)
        stops.append(stop)
        gos.append(go)
    assert got.mean() > max(np.mean(stops), np.mean(gos)) + 0.01  # it stops when the evidence says right
