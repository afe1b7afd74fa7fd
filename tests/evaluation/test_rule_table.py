"""The shared-work first stops of the rule family equal the rules played one by one (issue 43).

The plain reference is the rule-by-rule loop the team evaluation ran before: ``first_stop`` of every
rule's ``stop_now`` at each check. The fast table must give the same stop for every rule and task — on
the vote states of real (synthetic) team configurations, single-round corpora included, and on random
states with ties, unparsed samples and missing rows — and the team evaluation's tuning must come out
the same, setting by setting.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace.evaluation.logged_team import _decide, _paths, _tune, team_family
from orchestrace.evaluation.rule_table import (
    criterion,
    distinct_counts,
    first_stops,
    weighted_votes,
)
from orchestrace.logged.runs import make_synthetic_logged
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.logged.value import first_stop
from orchestrace.policies.rules import ThresholdRule, VoteState
from orchestrace.policies.team import subsets
from orchestrace.trainers.team_fitted_q import arrays_for, team_scales


def _reference(rules, states) -> np.ndarray:
    """The plain loop: each rule asked at each check, its first stop."""
    return np.stack([first_stop(np.stack([np.asarray(r.stop_now(s), bool) for s in states], 1)) for r in rules])


def _weighted_reference(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    K = max(int(codes.max(initial=-1)) + 1, 1)
    hot = (codes[..., None] == np.arange(K)) & (codes >= 0)[..., None]
    return (hot * weights[..., None]).sum(1)


@pytest.mark.parametrize(("T", "R", "seed"), [(160, 4, 0), (120, 1, 1), (140, 3, 2)])
def test_first_stops_equal_the_rules_played_one_by_one_on_team_configurations(T: int, R: int, seed: int) -> None:
    runs = make_synthetic_team(T, R, seed=seed)
    sc = team_scales(runs.subset(runs.split == "train"))
    arr = arrays_for(runs, sc, seed)
    for S in subsets(runs):
        states = _paths(arr, S, list(arr.aggs))["states"]
        rules = [r for rs in team_family(R, len(S)).values() for r in rs]
        fast = first_stops(rules, states)
        assert fast.dtype == np.int8 and fast.shape == (len(rules), T)
        np.testing.assert_array_equal(fast, _reference(rules, states), err_msg=str(S))
        # the count rules through the distinct count vectors, as the evaluation's own reference decides
        uniq = [distinct_counts(s.votes) for s in states]
        ref = np.stack([first_stop(np.stack([_decide(r, s, u) for s, u in zip(states, uniq, strict=True)], 1))
                        for r in rules])
        np.testing.assert_array_equal(fast, ref)


@st.composite
def _states(draw):
    """Random checks of N loops: votes counted from random codes (−1 unparsed), log-probs and confidences."""
    n = draw(st.integers(0, 12))
    R = draw(st.integers(1, 4))
    w = draw(st.integers(1, 3))
    k = draw(st.integers(1, 4))  # few answer codes: many ties
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, k, (n, R * w))
    lp = np.round(rng.uniform(-2, 0, (n, R * w)), 1)  # coarse: equal weights happen
    cf = np.round(rng.uniform(0.1, 3, (n, R * w)), 1)
    price = rng.uniform(0, 0.3, n)
    out = []
    for r in range(R):
        rec = codes[:, : (r + 1) * w]
        votes = np.stack([((rec == c).sum(1)) for c in range(k)], 1).astype(np.float64) if n else np.zeros((0, k))
        out.append(VoteState(votes=votes, recent=rec, price=price, round_=np.full(n, r), max_rounds=R,
                             logprob=lp[:, : (r + 1) * w], confidence=cf[:, : (r + 1) * w]))
    return out, R, w


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_states())
def test_first_stops_equal_the_plain_loop_on_random_states(case) -> None:
    states, R, w = case
    rules = [r for rs in team_family(R, w).values() for r in rs]
    np.testing.assert_array_equal(first_stops(rules, states), _reference(rules, states))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 9), st.integers(0, 7), st.integers(0, 2**31 - 1))
def test_weighted_votes_are_the_one_hot_sums_bit_for_bit(n: int, L: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, 5, (n, L))
    weights = rng.exponential(1.0, (n, L))
    np.testing.assert_array_equal(weighted_votes(codes, weights), _weighted_reference(codes, weights))


def _tune_reference(a_all, iv, subs, members, cell_masks, R):
    """The tuning loop before issue 43: every rule decided at every check on its own."""
    from orchestrace.evaluation.logged_team import _config_aggs

    cands = []
    for S in subs:
        aggs = _config_aggs(a_all.aggs, members, S)
        gidx = [a_all.aggs.index(a) for a in aggs]
        path = _paths(a_all, S, list(a_all.aggs))
        payoff = np.stack([v.payoff for v in path["values"]], 2)  # (T, R, G): the tables of every aggregation
        correct = np.stack([v.correct for v in path["values"]], 2)
        calls = path["values"][0].calls[0]  # (R,): calling S every round
        uniq = [distinct_counts(s.votes) for s in path["states"]]
        for fname, rules in team_family(R, len(S)).items():
            for rule in rules:
                stop = first_stop(np.stack([_decide(rule, s, u) for s, u in zip(path["states"], uniq, strict=True)], 1))
                pv, cv = payoff[iv, stop[iv]], correct[iv, stop[iv]]
                for g, a in zip(gidx, aggs, strict=True):
                    cands.append({"family": fname, "rule": rule.name, "S": S, "agg": a, "g": g, "stop": stop,
                                  "val_return": float(pv[:, g].mean()), "val_accuracy": float(cv[:, g].mean()),
                                  "val_calls": float(calls[stop[iv]].mean()),
                                  "val_cells": {c: float(pv[m, g].mean()) for c, m in cell_masks.items()},
                                  "name": f"{rule.name}/{'+'.join(members[c] for c in S)}/{a}"})
    return cands


@pytest.mark.parametrize("vote", [False, True])
def test_the_team_tuning_is_the_same_setting_by_setting(vote: bool) -> None:
    runs = make_synthetic_logged(240, 3, 2, seed=4) if vote else make_synthetic_team(160, 3, seed=5)
    sc = team_scales(runs.subset(runs.split == "train"))
    arr = arrays_for(runs, sc, 0)
    iv = np.flatnonzero(runs.split == "validation")
    cell = np.array([f"{s}:{d}" for s, d in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)])[iv]
    masks = {c: cell == c for c in sorted(set(cell.tolist()))}
    subs, members = subsets(runs), list(arr.members)
    got, _ = _tune(arr, [("test", arr, np.flatnonzero(runs.split == "test"))], [], iv, subs, members, masks, 3)
    ref = _tune_reference(arr, iv, subs, members, masks, 3)
    assert len(got) == len(ref) > 100
    for a, b in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a["stops"]["corpus"], b["stop"])
        for k in ("name", "family", "rule", "S", "agg", "g", "val_return", "val_accuracy", "val_calls", "val_cells"):
            assert a[k] == b[k], (k, a["name"])
    assert max(got, key=lambda c: c["val_return"])["name"] == max(ref, key=lambda c: c["val_return"])["name"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_states())
def test_each_criterion_is_the_rules_own_bit_for_bit(case) -> None:
    states, R, w = case
    for rule in (r for rs in team_family(R, w).values() for r in rs):
        if isinstance(rule, ThresholdRule):
            for s in states:
                np.testing.assert_array_equal(criterion(rule, s), rule.criterion(s), err_msg=rule.name)
                np.testing.assert_array_equal(criterion(rule, s, distinct_counts(s.votes)), rule.criterion(s))


def test_value_candidates_equal_each_rule_played_on_its_own() -> None:
    from orchestrace.evaluation.family import columns_of, family_candidates, value_candidates
    from orchestrace.logged.value import confidence_of, logprob_weights, valuation
    from orchestrace.policies.features import vote_states

    runs = make_synthetic_logged(300, 3, 3, seed=6, members=("cold", "hot", "calc"), sees=((), (), ()))
    price = np.random.default_rng(0).uniform(0, 0.2, 300)
    sc = {"token_scale": 150.0, "lp_fill": -0.7, "len_scale": 10.0}
    itr, iv = (np.flatnonzero(runs.split == s) for s in ("train", "validation"))
    cols = (0, 2)
    cands = [c for c in family_candidates(columns_of(runs, cols), itr, iv, price, sc, cols)
             if isinstance(c.rule, ThresholdRule) and c.aggregation != "own"]
    got = value_candidates(runs, cands, price, sc)
    rc = columns_of(runs, cols)

    states = vote_states(rc, 2, price, logprob=np.log(logprob_weights(rc)), confidence=confidence_of(rc)[0])
    assert len(cands) > 50
    for c, o in zip(cands, got, strict=True):
        stop = first_stop(np.stack([c.rule.stop_now(s) for s in states], 1))
        ref = valuation(rc, 2, c.aggregation, price, sc["token_scale"]).at(stop)
        for k in ref:
            np.testing.assert_array_equal(o[k], ref[k], err_msg=f"{c.name} {k}")
