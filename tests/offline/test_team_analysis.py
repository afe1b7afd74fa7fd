"""The pre-registered team analysis in one place (orchestrace.evaluation.team_analysis): the paired bootstrap
against a plain per-resample reference, the oracle bounding every policy task by task, the joint policy valued as
evaluate_team values it, duplicate prompts excluded and counted, and the decision rule."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace.errors import ConfigError
from orchestrace.evaluation.team_analysis import BASELINES, analyse_team, bootstrap, decide
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.trainers.team_fitted_q import fit_team_policy

MEMBERS = ("cold", "hot", "calc")


@pytest.fixture(scope="module")
def fitted():  # noqa: ANN201
    runs = make_synthetic_team(320, 2, seed=0, members=MEMBERS)
    pol, _ = fit_team_policy(runs, classes=("linear",), seed=0)
    return runs, pol


@pytest.mark.parametrize("seed", [0, 1])
def test_bootstrap_matches_a_plain_per_resample_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    orc = rng.uniform(0.5, 1.0, n)
    out = {"oracle": {"return": orc}, "b": {"return": orc - rng.uniform(0.1, 0.5, n)},
           "p": {"return": orc - rng.uniform(0.0, 0.4, n)}}
    got = bootstrap(out, ["p"], base="b", reps=300, seed=7)["p"]
    draws = np.random.default_rng(7).integers(0, n, (300, n))
    fr, dif = [], []
    for i in draws:  # one resample at a time
        o, b, p = (sum(out[k]["return"][j] for j in i) / n for k in ("oracle", "b", "p"))
        fr.append((p - b) / (o - b))
        dif.append(p - b)
    assert got["gap_closed"]["fraction"] == pytest.approx((out["p"]["return"].mean() - out["b"]["return"].mean())
                                                          / (orc.mean() - out["b"]["return"].mean()))
    assert got["gap_closed"]["ci95"] == pytest.approx(np.percentile(fr, [2.5, 97.5]).tolist())
    assert [got["vs"]["b"]["lo"], got["vs"]["b"]["hi"]] == pytest.approx(np.percentile(dif, [2.5, 97.5]).tolist())


def test_the_analysis_on_the_test_split_bounds_everything_by_the_oracle_and_agrees_with_evaluate_team(fitted) -> None:  # noqa: ANN001
    runs, pol = fitted
    res = analyse_team(runs, [pol], ["joint_seed0"], prompt_of=lambda t: t, reps=200)
    assert res["where"] == "test" and res["tasks"] == int((runs.split == "test").sum())
    assert set(BASELINES) <= set(res["summary"]) and "joint_seed0" in res["summary"]
    orc = res["summary"]["oracle"]["return"]
    assert all(s["return"] <= orc + 1e-12 for s in res["summary"].values())
    assert res["crosscheck"]["joint_seed0"]["agree"]
    p = res["policies"]["joint_seed0"]
    assert set(p["vs"]) >= set(BASELINES) and set(p["decision"]["ci_above_0_vs"]) == set(BASELINES)
    assert res["summary"]["joint_seed0"]["cost_usd"] is None  # the synthetic corpus has no prices


def test_fresh_tasks_repeating_a_corpus_prompt_are_excluded_and_counted(fitted) -> None:  # noqa: ANN001
    runs, pol = fitted
    fresh = make_synthetic_team(120, 2, seed=9, members=MEMBERS)
    clash = set(fresh.task_ids[:15].tolist())
    corpus_prompt = runs.task_ids[0]

    def prompt_of(t: str) -> str:  # 15 fresh tasks share the prompt of corpus task 0
        return corpus_prompt if t in clash else t

    res = analyse_team(runs, [pol], ["joint_seed0"], fresh=fresh, fresh_name="fresh", prompt_of=prompt_of,
                       reps=200)
    assert res["tasks"] == 105
    assert any(x.startswith("15 of 120 fresh task(s) repeat a prompt of the development corpus") for x in
               res["exclusions"])
    assert res["crosscheck"]["joint_seed0"]["agree"]  # evaluate_team valued the same 105 tasks
    orc = res["summary"]["oracle"]["return"]
    assert all(s["return"] <= orc + 1e-12 for s in res["summary"].values())


def test_a_fresh_set_of_another_team_is_refused(fitted) -> None:  # noqa: ANN001
    runs, pol = fitted
    other = make_synthetic_team(40, 2, seed=9, members=("cold", "calc", "hot"))
    with pytest.raises(ConfigError, match="members|not fresh"):
        analyse_team(runs, [pol], ["s0"], fresh=other, reps=10, crosscheck=False)


def test_the_decision_rule_needs_every_part() -> None:
    vs = {b: {"mean": 0.1, "lo": 0.01, "hi": 0.2} for b in BASELINES}
    summ = {"p": {"cost_usd": 1.0, "tokens": 1.0}, BASELINES[3]: {"cost_usd": 2.0, "tokens": 2.0}}
    ok = {"gap_closed": {"fraction": 0.3}, "vs": vs}
    assert decide(ok, summ, "p")["succeeds"]
    assert not decide({**ok, "gap_closed": {"fraction": 0.2}}, summ, "p")["succeeds"]
    tie = {**vs, BASELINES[5]: {"mean": 0.1, "lo": -0.01, "hi": 0.2}}
    assert not decide({**ok, "vs": tie}, summ, "p")["succeeds"]
    dear = {**summ, "p": {"cost_usd": 3.0, "tokens": 3.0}}
    assert not decide(ok, dear, "p")["succeeds"]
