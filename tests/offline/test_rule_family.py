"""Every rule against a plain reference on random inputs; the simulator and the logs decide alike; the
rule × configuration × aggregation family; fresh-collection evaluation (issue 30)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.errors import ConfigError
from orchestrace.evaluation.family import (
    FAMILIES,
    Candidate,
    FeatureRule,
    columns_of,
    configs,
    family_candidates,
    fit_feature_rules,
    value_candidates,
)
from orchestrace.evaluation.logged import evaluate_traces, fresh_mismatch
from orchestrace.offline import make_synthetic_logged, read_corpus
from orchestrace.policies.rules import (
    CISC,
    ESC,
    AdaptiveBeta,
    AdaptiveDirichlet,
    DeepConf,
    FixedBudget,
    VoteShare,
    VoteState,
)
from orchestrace.trainers.fitted_q import _logistic, _ridge, fit_gate

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"
K = 4
seqs = st.lists(st.integers(-1, K - 1), min_size=1, max_size=16)


def _state(seq: list[int], lp: list[float] | None = None, conf: list[float] | None = None, rnd: int = 0,
           R: int = 8) -> VoteState:  # noqa: N803
    counts = np.bincount(np.array([a for a in seq if a >= 0] or [0], np.int64), minlength=K)[:K].astype(float)
    if not any(a >= 0 for a in seq):
        counts[:] = 0
    return VoteState(counts[None], np.array([seq]), np.array([0.1]), np.array([rnd]), R,
                     logprob=None if lp is None else np.array([lp]), confidence=None if conf is None else np.array([conf]))


# ----------------------------------------------------------------------------- references on random inputs
@settings(max_examples=80, deadline=None)
@given(seqs, st.sampled_from([0.6, 0.8, 0.9, 0.95]))
def test_beta_and_dirichlet_match_scipy(seq: list[int], c: float) -> None:
    from scipy import integrate
    from scipy.stats import beta, gamma

    cnt = sorted(Counter(a for a in seq if a >= 0).values(), reverse=True)
    v1, v2 = (cnt + [0, 0])[:2]
    assert AdaptiveBeta(c).stop_now(_state(seq))[0] == (beta.sf(0.5, v1 + 1, v2 + 1) >= c - 1e-12)
    if len(cnt) < 3:
        want = beta.sf(0.5, v1 + 1, v2 + 1)
    else:
        top = cnt[:5]
        want = integrate.quad(lambda x: gamma.pdf(x, top[0] + 1) * np.prod([gamma.cdf(x, b + 1) for b in top[1:]]),
                              0, np.inf, epsabs=1e-12)[0]
    got = AdaptiveDirichlet(c).stop_now(_state(seq))[0]
    if abs(want - c) > 1e-6:  # away from the threshold the decisions must agree
        assert got == (want >= c)


@settings(max_examples=100, deadline=None)
@given(seqs, st.integers(1, 6), st.sampled_from([0.5, 0.7, 1.0]))
def test_esc_vote_share_budget_match_plain_code(seq: list[int], w: int, s: float) -> None:
    windows = [seq[i:i + w] for i in range(0, len(seq) - w + 1, w)]
    want_esc = bool(windows) and all(a >= 0 for a in windows[-1]) and len(set(windows[-1])) == 1
    assert ESC(w).stop_now(_state(seq))[0] == want_esc
    parsed = [a for a in seq if a >= 0]
    want_share = bool(parsed) and max(Counter(parsed).values()) / len(parsed) >= s
    assert VoteShare(s).stop_now(_state(seq))[0] == want_share
    assert FixedBudget(3).stop_now(_state(seq, rnd=2))[0] and not FixedBudget(3).stop_now(_state(seq, rnd=1))[0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, K - 1), st.floats(-4, 0)), min_size=1, max_size=12),
       st.sampled_from([0.1, 0.5, 2.0]), st.sampled_from([0.5, 0.7, 0.9]))
def test_cisc_is_a_softmax_weighted_share(pairs: list[tuple[int, float]], t: float, c: float) -> None:
    from scipy.special import softmax

    seq, lp = [a for a, _ in pairs], [x for _, x in pairs]
    parsed = [i for i, a in enumerate(seq) if a >= 0]
    want = False
    if parsed:
        w = softmax(np.array([lp[i] for i in parsed]) / t)
        by: dict[int, float] = {}
        for i, wi in zip(parsed, w, strict=True):
            by[seq[i]] = by.get(seq[i], 0.0) + wi
        want = max(by.values()) >= c - 1e-12
    assert CISC(t, c).stop_now(_state(seq, lp=lp))[0] == want


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.data(), st.sampled_from([0.1, 0.5, 0.9]),
       st.sampled_from([0.6, 0.9, 1.0]))
def test_deepconf_matches_a_plain_implementation(width: int, warm: int, data, keep: float, cons: float) -> None:
    rounds = data.draw(st.integers(1, 4))
    n = width * rounds
    seq = data.draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    conf = data.draw(st.lists(st.floats(0.5, 5.0), min_size=n, max_size=n))
    # plain: threshold = the (1 − keep) percentile of the warm-up confidences (linear interpolation)
    n0 = warm * width
    if n > n0:
        ws = sorted(conf[:n0])
        pos = (1 - keep) * (len(ws) - 1)
        lo = int(np.floor(pos))
        thr = ws[lo] + (ws[min(lo + 1, len(ws) - 1)] - ws[lo]) * (pos - lo)
    else:
        thr = -np.inf
    by: dict[int, float] = {}
    for i, (a, cf) in enumerate(zip(seq, conf, strict=True)):
        if a >= 0 and (i < n0 or cf >= thr):
            by[a] = by.get(a, 0.0) + cf
    want = rounds >= warm and bool(by) and max(by.values()) / sum(by.values()) >= cons - 1e-12
    assert DeepConf(warm, keep, cons).stop_now(_state(seq, conf=conf, rnd=rounds - 1))[0] == want


def test_fitted_rules_solve_their_objectives() -> None:
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = X @ np.array([0.5, -0.2, 0.0, 0.1]) + 0.3 + rng.normal(0, 0.1, 200)
    m = _ridge(X, y, 10.0)

    def ridge_obj(b: np.ndarray) -> float:
        return float(((X @ b[:-1] + b[-1] - y) ** 2).sum() + 10.0 * (b[:-1] ** 2).sum())

    ref = minimize(ridge_obj, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    assert np.allclose(m["w"] + [m["b"]], ref, atol=1e-5)
    lab, wt = (y > 0.3).astype(float), np.abs(y - 0.3) + 1e-6
    beta = _logistic(X, lab, wt)

    def logit_obj(b: np.ndarray) -> float:
        z = X @ b[:-1] + b[-1]
        w = wt / wt.mean()
        return float((w * (np.logaddexp(0, z) - lab * z)).sum() + 0.5 * 1e-2 * len(X) * (b[:-1] ** 2).sum())

    ref = minimize(logit_obj, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    assert np.allclose(beta, ref, atol=1e-4)


# ----------------------------------------------------------------------------- the simulator and the logs agree
@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, K - 1), min_size=1, max_size=12), st.sampled_from([0.6, 0.8, 0.875, 0.9, 0.95]),
       st.integers(1, 5), st.sampled_from([0.5, 0.75, 1.0]))
def test_simulator_and_log_evaluation_decide_alike(seq: list[int], c: float, w: int, s: float) -> None:
    from orchestrace.policies.anchors import (
        BetaRule,
        CheckState,
        DirichletRule,
        EscRule,
        VoteShareRule,
    )

    counts = np.bincount(np.array(seq), minlength=K)[None, None, :]
    order = np.full((1, 1, 12), -1, np.int64)
    order[0, 0, :len(seq)] = seq
    sim = CheckState(summary=np.zeros((1, 3), np.float32), counts=counts, order=order, valid=np.ones((1, 1), bool),
                     price=np.ones(1), round=np.zeros(1, np.int64), rounds_left=np.ones(1, np.int64))
    log = _state(seq)
    assert BetaRule(c).stop(sim)[0] == AdaptiveBeta(c).stop_now(log)[0]
    assert DirichletRule(c).stop(sim)[0] == AdaptiveDirichlet(c).stop_now(log)[0]
    assert EscRule(w).stop(sim)[0] == ESC(w).stop_now(log)[0]
    assert VoteShareRule(s).stop(sim)[0] == VoteShare(s).stop_now(log)[0]


def test_the_issues_two_disagreements_are_settled_as_published() -> None:
    from orchestrace.policies.anchors import dirichlet_confidence, esc_agrees

    assert AdaptiveDirichlet(0.9).stop_now(_state([0, 0]))[0] == bool(dirichlet_confidence(np.array([[2, 0]]))[0] >= 0.9)
    assert float(dirichlet_confidence(np.array([[2, 0]]))[0]) == 0.875  # Beta(3, 1): one answer never certifies itself
    assert not ESC(2).stop_now(_state([0, 1, 1]))[0]  # windows (0, 1) | (1, …): the complete one disagrees
    assert not esc_agrees(np.array([[0, 1, 1]]), 2)[0]


# ----------------------------------------------------------------------------- the family
def test_team_configurations_respect_what_the_reviser_saw() -> None:
    team = make_synthetic_logged(60, 3, 3, seed=0, members=("cold", "hot", "reviser"), sees=((), (), (0, 1)))
    assert configs(team) == [(0,), (1,), (0, 1), (0, 1, 2)]
    with pytest.raises(ConfigError, match=r"column 2 \(reviser\) was logged seeing column 0"):
        columns_of(team, (1, 2))


def test_family_covers_every_family_and_budgets_get_every_aggregation() -> None:
    team = make_synthetic_logged(300, 3, 2, seed=1, members=("cold", "hot"))
    itr, iv = (np.flatnonzero(team.split == s) for s in ("train", "validation"))
    sc = {"token_scale": 150.0, "lp_fill": -0.7, "len_scale": 10.0}
    cands = family_candidates(columns_of(team, (0, 1)), itr, iv, np.full(300, 0.05), sc, (0, 1), config="cold+hot")
    assert {c.family for c in cands} == set(FAMILIES)
    assert {c.aggregation for c in cands if c.family == "budget"} == {"majority", "logprob", "confidence"}
    assert all(c.aggregation == "own" for c in cands if c.family in ("cisc", "deepconf"))
    assert any(isinstance(c.rule, FeatureRule) and c.rule.horizon == "end" for c in cands)


def test_deepconf_valuation_matches_a_per_task_loop() -> None:
    runs = make_synthetic_logged(80, 4, 2, seed=3, members=("cold", "hot"))
    rule = DeepConf(1, 0.5, 0.8)
    cand = Candidate("deepconf", rule, "own", (0, 1), "cold+hot")
    out = value_candidates(runs, [cand], np.full(80, 0.05), {"token_scale": 100.0})[0]
    for t in range(80):
        seq, conf = runs.answers[t].reshape(-1).tolist(), runs.confidence[t].reshape(-1).tolist()
        for k in range(4):
            n = 2 * (k + 1)
            if k == 3 or rule.stop_now(_state(seq[:n], conf=conf[:n], rnd=k, R=4))[0]:
                break
        kept = rule.kept(np.array([conf]), 2)[0]
        by: dict[int, float] = {}
        for i in range(n):
            if seq[i] >= 0 and kept[i]:
                by[seq[i]] = by.get(seq[i], 0.0) + conf[i]
        top = max(by, key=lambda a: (by[a], -seq.index(a))) if by else -1
        assert out["rounds"][t] == k + 1
        assert out["correct"][t] == float(top >= 0 and top == runs.correct_code[t])


def test_feature_rules_stop_at_the_last_check() -> None:
    runs = make_synthetic_logged(120, 3, 2, seed=5)
    rules = fit_feature_rules(runs, np.full(120, 0.05), {"token_scale": 100.0, "lp_fill": -0.7, "len_scale": 10.0},
                              "majority")
    assert len({r.name for r in rules}) == len(rules) and all(r.stops(runs, np.full(120, 0.05))[:, -1].all()
                                                               for r in rules)


# ----------------------------------------------------------------------------- fresh collections
def test_fresh_collections_are_valued_per_gate_and_mismatches_refused() -> None:
    corpus = make_synthetic_logged(400, 3, 2, seed=0)
    fresh = make_synthetic_logged(200, 3, 2, seed=9, prefix="fresh")
    gate, _ = fit_gate(corpus, classes=("linear",))
    res = evaluate_traces(corpus, [gate, gate], names=["a", "b"], tests=[("F", fresh)])
    f = res["fresh"]["F"]
    assert f["tasks"] == 200 and set(f["gates"]) == {"a", "b"}
    assert set(f["gates"]["a"]["vs_family_best"]) == set(FAMILIES)
    assert f["gates"]["a"]["claims"]["beats_best_rule"]["return_diff"]["n"] == 200
    with pytest.raises(ConfigError, match="rounds: corpus 3, fresh 4"):
        evaluate_traces(corpus, [], tests=[("G", make_synthetic_logged(50, 4, 2, seed=1, prefix="g"))])
    with pytest.raises(ConfigError, match="task id"):
        evaluate_traces(corpus, [], tests=[("H", make_synthetic_logged(50, 3, 2, seed=1))])
    team = make_synthetic_logged(50, 3, 2, seed=1, members=("cold", "hot"), prefix="t")
    assert any(d.startswith("members:") for d in fresh_mismatch(corpus, team))


def test_tiny_vote_corpus_family_and_fresh_refusal() -> None:
    tiny = read_corpus(TINY)
    assert configs(tiny) == [(0,), (0, 1)]  # a homogeneous vote: widths 1 and 2
    assert fresh_mismatch(tiny, tiny)[-1].startswith("30 task id(s) are in the corpus too")
    renamed = dataclasses.replace(tiny, task_ids=np.array([f"new-{t}" for t in tiny.task_ids]))
    assert fresh_mismatch(tiny, renamed) == []
    hot = dataclasses.replace(renamed, meta={**renamed.meta, "config": {**renamed.meta["config"], "temperature": 0.2}})
    assert fresh_mismatch(tiny, hot) == ["temperature: corpus 0.7, fresh 0.2"]
    other = dataclasses.replace(renamed, meta={**renamed.meta, "server": {**renamed.meta["server"], "model_sha256": "0" * 64}})
    assert fresh_mismatch(tiny, other) == [f"model file sha256: corpus {tiny.meta['server']['model_sha256'][:12]}…, "
                                           "fresh 000000000000…"]
    itr = np.flatnonzero(tiny.split == "train")
    cands = family_candidates(tiny, itr, itr, np.full(len(tiny.task_ids), 0.05),
                              {"token_scale": 100.0, "lp_fill": -0.7, "len_scale": 5.0}, (0, 1))
    out = value_candidates(renamed, cands, np.full(len(tiny.task_ids), 0.05), {"token_scale": 100.0})
    assert len(out) == len(cands) and all(np.isfinite(o["return"]).all() for o in out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=60))
def test_the_one_t_interval_uses_the_exact_student_quantile(x: list[float]) -> None:
    from scipy.stats import t as student_t

    from orchestrace._stats import t975, t_interval

    a = np.array(x)
    r = t_interval(a)
    h = student_t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a))
    assert r["hi"] - r["mean"] == pytest.approx(h, rel=2e-6, abs=1e-12)
    assert abs(t975(len(a) - 1) - student_t.ppf(0.975, len(a) - 1)) < 2e-6


def test_a_team_corpus_is_evaluated_and_missing_confidences_are_stated() -> None:
    team = make_synthetic_logged(300, 3, 3, seed=2, members=("cold", "hot", "calc"), prefix="team")
    conf = team.confidence.copy()
    conf[:, :, 2] = np.nan  # the tool member: no top-k log-probs
    team = dataclasses.replace(team, confidence=conf)
    res = evaluate_traces(team, [])
    assert any("900 of 2700 replies without a DeepConf confidence" in n for n in res["exclusions"])
    assert res["confidence_source"].startswith("lowest group confidence")
    assert res["candidates"] > 7 * 100  # 7 member subsets × the family × 3 aggregations
    names = {"+".join(team.members[c] for c in cols) for cols in configs(team)}
    assert len(names) == 7 and all(any(f"/{n}" in v["name"] for n in names) for v in res["chosen"].values())
