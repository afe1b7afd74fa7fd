"""Baseline 6 of the team pre-registration (fitted ridge / logistic rules on the joint policy's features): the
logistic stop rule checked against a plain per-task reference and a brute-force selection, shown to use its
signal; the linear fitted-Q member valued as the trainer values it; the per-cell choice made on validation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from orchestrace.errors import ConfigError
from orchestrace.evaluation.team_baselines import (
    all_paths,
    fit_fitted_rules,
    fit_logistic_stop,
    policy_outcome,
)
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.policies.team import TeamArrays, team_features
from orchestrace.trainers.team_fitted_q import arrays_for, team_scales

MEMBERS = ("cold", "hot", "calc")


def signal_corpus(T: int, seed: int):  # noqa: ANN201
    """A two-round team whose mean log-prob says whether an answer is right (a signal to learn from)."""
    runs = make_synthetic_team(T, 2, seed=seed, members=MEMBERS)
    runs = dataclasses.replace(runs, logprob_mean=np.where(runs.correct, -0.05, -3.0).astype(np.float32))
    arr = TeamArrays.build(runs, np.full(T, 0.05), 300.0)
    ret, names = all_paths(arr, np.arange(T))
    return runs, arr, ret, names


def _plain_return(arr: TeamArrays, t: int, s: tuple[int, ...], again: bool, g: str) -> float:
    """Call ``s`` (twice if ``again``) on task t, answer with ``g``: correct − price × tokens / scale, by hand."""
    st = arr.step(arr.start(np.array([t])), np.isin(np.arange(arr.shape[2]), s)[None])
    toks = arr.tok[t, 0, list(s)].sum()
    if again:
        st = arr.step(st, np.isin(np.arange(arr.shape[2]), s)[None])
        toks += arr.tok[t, 1, list(s)].sum()
    return float(arr.correct(st, g)[0]) - arr.price[t] * toks / arr.token_scale


def _plain_probs(rule, arr: TeamArrays, t: int, s: tuple[int, ...]) -> np.ndarray:  # noqa: ANN001
    mu, sd, _, w = rule.models[s]
    x = team_features(arr, arr.step(arr.start(np.array([t])), np.isin(np.arange(arr.shape[2]), s)[None]), 2)[0]
    z = (x - mu) / sd
    return np.array([1.0 / (1.0 + np.exp(-(sum(z[i] * wg[i] for i in range(len(z))) + wg[-1]))) for wg in w])


def test_the_logistic_stop_rule_is_valued_as_a_plain_per_task_reference() -> None:
    runs, arr, ret, names = signal_corpus(240, 3)
    rule = fit_logistic_stop(arr, np.arange(120), np.arange(120, 180), ret, names)
    rows = np.arange(180, 240)
    got = rule.value(arr, rows, ret, names)
    for j, t in enumerate(rows.tolist()):
        s, g_end, tau = rule.team[int(arr.cell[t])]
        p = _plain_probs(rule, arr, t, s)
        aggs = rule.models[s][2]
        want = (_plain_return(arr, t, s, False, aggs[int(p.argmax())]) if p.max() >= tau
                else _plain_return(arr, t, s, True, g_end))
        assert got[j] == pytest.approx(want)


def test_the_logistic_stop_rule_chooses_the_best_setting_on_the_selection_rows() -> None:
    runs, arr, ret, names = signal_corpus(160, 4)
    sel = np.arange(80, 160)
    rule = fit_logistic_stop(arr, np.arange(80), sel, ret, names)
    for c in rule.team:
        sub = sel[arr.cell[sel] == c]
        chosen = rule.value(arr, sub, ret, names).mean()
        for s2, (_, _, aggs, _) in rule.models.items():  # every team, end aggregation, always / never stop
            for g in aggs:
                for t2 in (0.0, 1.01):
                    other = dataclasses.replace(rule, team={**rule.team, c: (s2, g, t2)})
                    assert chosen >= other.value(arr, sub, ret, names).mean() - 1e-12


def test_the_logistic_stop_rule_uses_its_signal_on_unseen_tasks() -> None:
    """With a log-prob that says whether each answer is right, stopping on P(right) beats both always stopping
    and always continuing with the same team on tasks it was neither fitted nor tuned on."""
    runs, arr, ret, names = signal_corpus(600, 5)
    rule = fit_logistic_stop(arr, np.arange(300), np.arange(300, 450), ret, names)
    rows = np.arange(450, 600)
    got = rule.value(arr, rows, ret, names).mean()
    stop = dataclasses.replace(rule, team={c: (s, g, 0.0) for c, (s, g, _) in rule.team.items()})
    go = dataclasses.replace(rule, team={c: (s, g, 1.01) for c, (s, g, _) in rule.team.items()})
    assert got > max(stop.value(arr, rows, ret, names).mean(), go.value(arr, rows, ret, names).mean()) + 0.01


def test_the_logistic_stop_rule_refuses_a_cell_it_never_saw() -> None:
    runs, arr, ret, names = signal_corpus(80, 0)
    cell0 = np.flatnonzero(arr.cell == 0)
    rule = fit_logistic_stop(arr, cell0, cell0, ret, names)
    with pytest.raises(ConfigError, match="not fitted on cell"):
        rule.value(arr, np.flatnonzero(arr.cell == 1), ret, names)


def test_baseline_6_is_the_linear_fitted_q_policy_or_the_logistic_rule_per_cell_chosen_on_validation() -> None:
    runs = make_synthetic_team(400, 2, seed=1, members=MEMBERS)
    arr = arrays_for(runs, team_scales(runs.subset(runs.split == "train")), 0)
    ret, names = all_paths(arr, np.arange(400))
    b6 = fit_fitted_rules(runs, arr, ret, names, seed=0)
    assert b6.linear.model_class == "linear" and b6.linear.meta["reg"] in (1.0, 100.0)
    val, test = np.flatnonzero(runs.split == "validation"), np.flatnonzero(runs.split == "test")
    v = b6.returns(arr, val, ret, names)
    # the linear member is valued exactly as the trainer valued it when it chose α
    assert v["linear"].mean() == pytest.approx(b6.linear.meta["validation_return"])
    for c, pick in b6.pick.items():
        m = arr.cell[val] == c
        assert v["chosen"][m].mean() == pytest.approx(max(v["linear"][m].mean(), v["logistic"][m].mean()))
        assert pick == ("linear" if v["linear"][m].mean() >= v["logistic"][m].mean() - 1e-12 else "logistic")
    t = b6.returns(arr, test, ret, names)
    use = np.array([b6.pick[int(c)] == "linear" for c in arr.cell[test]])
    assert np.array_equal(t["chosen"], np.where(use, t["linear"], t["logistic"]))


def test_policy_outcome_refuses_arrays_built_with_other_constants() -> None:
    runs = make_synthetic_team(200, 2, seed=2, members=MEMBERS)
    arr = arrays_for(runs, team_scales(runs.subset(runs.split == "train")), 0)
    ret, names = all_paths(arr, np.arange(200))
    b6 = fit_fitted_rules(runs, arr, ret, names)
    other = dataclasses.replace(arr, token_scale=arr.token_scale * 2)
    with pytest.raises(ConfigError, match="fitted on other training data.*token_scale"):
        policy_outcome(other, b6.linear, np.arange(10))


def test_every_baselines_chosen_path_gives_its_own_return_and_the_table_matches_the_rollout() -> None:
    """The path indices the analysis reads accuracy, calls and tokens from are the paths each baseline values."""
    from orchestrace.evaluation.team_baselines import (
        escalations,
        fit_cascade,
        fit_knn_router,
        fit_learnstop,
        path_table,
    )
    from orchestrace.policies.team import aggregations, rollout, subsets

    runs, arr, ret, names = signal_corpus(200, 6)
    table, _ = path_table(arr, np.arange(200))
    rows = np.arange(120, 200)
    cas = fit_cascade(arr, np.arange(120), escalations(arr, {"cold": [0.1, 0.4], "hot": [0.1, 0.4], "calc": [1, 4]}))
    assert np.allclose(ret[rows, cas.choose(arr, rows, names)], cas.value(arr, rows))
    router = fit_knn_router(arr, np.arange(60), np.arange(60, 120), ret, names)
    assert np.allclose(ret[rows, router.choose(arr, rows, ret, names)], router.value(arr, rows, ret, names))
    ls = fit_learnstop(arr, np.arange(60), np.arange(60, 120), ret, names)
    assert np.allclose(ret[rows, ls.choose(arr, rows, names)], ls.value(arr, rows, ret, names))
    subs, aggs = subsets(runs), list(aggregations(runs))
    for p in np.random.default_rng(0).choice(len(names), 10, replace=False):
        s0, s1, g = names[int(p)]

        def policy(d: int, st, s0=s0, s1=s1, g=g) -> np.ndarray:  # noqa: ANN001
            if d == 0 or (d == 1 and s1 is not None):
                return np.full(len(st.idx), subs.index(s0 if d == 0 else s1))
            return np.full(len(st.idx), len(subs) + aggs.index(g))

        o = rollout(arr, policy, subs, tuple(aggs))
        for k in ("return", "correct", "calls", "tokens"):
            assert np.allclose(table[k][:, p], o[k])
