"""The joint team policy: exact valuation vs a plain reference, fitting, deployment, bad input, the CLI."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.errors import ConfigError
from orchestrace.offline import (
    TeamArrays,
    TeamPolicy,
    check_team_runs,
    evaluate_team,
    fit_team_policy,
    make_synthetic_logged,
    make_synthetic_team,
    rollout,
    save_runs,
)
from orchestrace.policies.team import aggregations, subsets
from orchestrace.trainers.team_fitted_q import arrays_for, greedy, team_scales

runner = CliRunner()


@pytest.fixture(scope="module")
def team():
    return make_synthetic_team(900, 3, seed=3)


@pytest.fixture(scope="module")
def fitted(team):
    return fit_team_policy(team, classes=("linear", "quadratic"), seed=0, histories=3)


# ----------------------------------------------------------------------------- valuation vs a plain reference
def _reference(runs, t, plan, agg, price, scale):
    """One task, plain Python: plan = list of column tuples called per round; returns (return, correct, calls)."""
    called = [(r, c) for r, cols in enumerate(plan) for c in cols]
    votes: Counter = Counter()
    w: Counter = Counter()
    first: dict[int, int] = {}
    latest: dict[int, int] = {}
    W = runs.answers.shape[2]
    lp_fill = float(np.nanmean(runs.logprob_mean))
    for r, c in called:
        a = int(runs.answers[t, r, c])
        latest[c] = a
        if a < 0:
            continue
        votes[a] += 1
        lp = float(runs.logprob_mean[t, r, c])
        cf = float(runs.confidence[t, r, c])
        w[a] += np.exp(lp if np.isfinite(lp) else lp_fill) if agg == "logprob" else max(cf, 0.0)
        first.setdefault(a, r * W + c)
    if agg.startswith("latest:"):
        pick = latest.get(runs.members.index(agg.split(":")[1]), -1)
    else:
        score = votes if agg == "majority" else w
        pick = min(score, key=lambda a: (-round(score[a], 9), first[a])) if score else -1
    ok = pick >= 0 and pick == runs.correct_code[t]
    tok = sum(int(runs.prompt_tokens[t, r, c]) + int(runs.completion_tokens[t, r, c]) for r, c in called)
    return ok - price[t] * tok / scale, ok, len(called)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rollout_matches_a_plain_reference_on_random_policies(seed: int) -> None:
    runs = make_synthetic_team(60, 3, seed=seed)
    price = np.random.default_rng(seed).uniform(0.01, 0.3, 60)
    arr = TeamArrays.build(runs, price, 250.0)
    subs, aggs = subsets(runs), aggregations(runs)
    rng = np.random.default_rng(seed + 10)
    stop_at = rng.integers(1, 4, 60)  # rounds called before stopping
    plan_idx = rng.integers(0, len(subs) - 1, (60, 3))  # any subset without the reviser-with-everyone one
    plan_idx[:, :] = np.where(rng.uniform(size=(60, 1)) < 0.3, len(subs) - 1, plan_idx)  # some call everyone
    g = rng.integers(0, len(aggs), 60)

    def pol(d, st):
        t = st.idx
        return np.where(d < stop_at[t], plan_idx[t, np.minimum(d, 2)], len(subs) + g[t])

    out = rollout(arr, pol, subs, aggs)
    for t in range(60):
        plan = [subs[plan_idx[t, r]] for r in range(stop_at[t])]
        ret, ok, calls = _reference(runs, t, plan, aggs[g[t]], price, 250.0)
        assert out["correct"][t] == ok, (t, plan, aggs[g[t]])
        assert out["calls"][t] == calls
        assert out["return"][t] == pytest.approx(ret, abs=1e-9)


def test_all_members_majority_is_the_logged_grade(team) -> None:
    arr = TeamArrays.build(team, np.zeros(len(team.task_ids)), 1.0)
    st = arr.start(np.arange(len(team.task_ids)))
    for r in range(3):
        st = arr.step(st, np.ones((1, 4), bool))
        assert (arr.correct(st, "majority") == team.round_correct[:, r]).all()


def test_a_reviser_called_without_what_it_saw_is_refused(team) -> None:
    arr = TeamArrays.build(team, np.zeros(len(team.task_ids)), 1.0)
    subs = [(0,), (3,), (0, 1, 2, 3)]
    with pytest.raises(ConfigError, match="sees"):
        rollout(arr, lambda d, st: np.full(len(st.idx), 1 if d < 1 else 3), subs, ("majority",))
    assert (3,) not in subsets(team) and (0, 1, 2, 3) in subsets(team)


# ----------------------------------------------------------------------------- fitting
def test_joint_policy_beats_every_fixed_team_on_a_heterogeneous_team(team, fitted) -> None:
    pol, rep = fitted
    assert rep["chosen"]["class"] in ("linear", "quadratic")
    assert set(rep["by_class"]) == {"linear", "quadratic"}
    res = evaluate_team(team, [pol], names=["s0"], stop_only=False)
    c = res["sets"]["test"]["policies"]["s0"]["claims"]
    # no single member kind is best on every cell, so choosing whom to call per task must pay
    assert c["beats_best_rule"]["return_diff"]["mean"] > 0
    assert c["beats_cold_call"]["return_diff"]["lo"] > 0
    assert set(res["sets"]["test"]["baselines"]) >= {"best_rule", "cold_call", "default_vote_hot", "default_debate"}
    assert res["sets"]["test"]["baselines"]["default_debate"]["name"] == "budget@3/cold+hot+calc+reviser/latest:reviser"


def test_the_vote_corpus_is_the_one_kind_special_case() -> None:
    runs = make_synthetic_logged(500, 3, 3, seed=0)
    pol, _ = fit_team_policy(runs, classes=("linear",), seed=0)
    assert pol.subsets == [[0], [0, 1], [0, 1, 2]] and pol.aggregations == ["majority", "logprob"]


def test_fitting_seeds_differ_only_through_the_roll_in(team) -> None:
    a, _ = fit_team_policy(team, classes=("linear",), seed=0, histories=3)
    b, _ = fit_team_policy(team, classes=("linear",), seed=0, histories=3)
    c, _ = fit_team_policy(team, classes=("linear",), seed=5, histories=3)
    assert a.models == b.models and a.models != c.models


# ----------------------------------------------------------------------------- deployment
def test_decide_replays_the_evaluated_policy_exactly(team, fitted, tmp_path: Path) -> None:
    pol = TeamPolicy.load(fitted[0].save(tmp_path))
    train = team.subset(team.split == "train")
    sc = team_scales(train)
    test = team.subset(team.split == "test")
    arr = arrays_for(test, sc, 0)
    subs = [tuple(s) for s in pol.subsets]
    out = rollout(arr, greedy(arr, pol.model_class, pol.models, subs, len(pol.aggregations)), subs,
                  tuple(pol.aggregations))
    for t in range(25):
        rounds: list[dict] = []
        lps: list[dict] = []
        confs: list[dict] = []
        toks: list[dict] = []
        cell = f"{test.suite[t]}:{test.difficulty[t]}"
        while True:
            d = pol.decide(rounds, price=float(arr.price[t]), cell=cell, logprobs=lps, confidences=confs, tokens=toks)
            if d.action == "stop":
                break
            r = len(rounds)
            cols = [pol.members.index(m) for m in d.members]
            rounds.append({pol.members[c]: (None if test.answers[t, r, c] < 0 else f"a{test.answers[t, r, c]}")
                           for c in cols})
            lps.append({pol.members[c]: float(test.logprob_mean[t, r, c]) for c in cols})
            confs.append({pol.members[c]: float(test.confidence[t, r, c]) for c in cols})
            toks.append({pol.members[c]: float(test.prompt_tokens[t, r, c] + test.completion_tokens[t, r, c])
                         for c in cols})
        assert sum(len(x) for x in rounds) == out["calls"][t]
        assert (d.answer == f"a{test.correct_code[t]}") == bool(out["correct"][t])


def _doc(pol: TeamPolicy) -> dict:
    return pol.document()


def test_load_refuses_bad_files(fitted, tmp_path: Path) -> None:
    pol = fitted[0]
    p = tmp_path / "p.json"
    doc = _doc(pol)
    doc["models"][1]["w"][0][0] = float("nan")
    p.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"NaN and Infinity are not JSON numbers"):
        TeamPolicy.load(p)
    doc["models"][1]["w"][0][0] = 1e300
    p.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"p\.json: not a valid team policy file: .* at `\$\.models\[1\]\.w\[0\]\[0\]`"):
        TeamPolicy.load(p)
    for key, bad, msg in [("max_rounds", "3", r"got `str` - at `\$\.max_rounds`"), ("members", ["cold", "cold", "x", "y"],
                          "distinct"), ("aggregations", ["median"], r"aggregations\[0\]"), ("model_class", "tree",
                          "model_class")]:
        doc = _doc(pol)
        doc[key] = bad
        with pytest.raises(ConfigError, match=msg):
            TeamPolicy.from_dict(doc)
    doc = _doc(pol)
    doc["extra"] = 1
    with pytest.raises(ConfigError, match="unknown field"):
        TeamPolicy.from_dict(doc)
    with pytest.raises(ConfigError, match="not a team policy"):
        TeamPolicy.from_dict({"format": "orchestrace-stop-gate/1"})


def test_a_policy_on_another_team_is_refused_with_the_difference(fitted) -> None:
    pol = fitted[0]
    other = make_synthetic_team(60, 3, seed=0, members=("cold", "hot", "reviser"))
    with pytest.raises(ConfigError, match=r"not in the policy|missing: \['calc'\]"):
        pol.check_team(other.members, other.sees, 3)
    with pytest.raises(ConfigError, match="2 rounds vs the policy's 3"):
        pol.check_team(pol.members, pol.sees, 2)
    with pytest.raises(ConfigError, match="unknown member 'judge'"):
        pol.decide([{"judge": "1"}], price=0.1, cell="add:1")
    with pytest.raises(ConfigError, match="cell 'add:9'"):
        pol.decide([], price=0.1, cell="add:9")


# ----------------------------------------------------------------------------- bad corpora
def test_check_team_runs_excludes_or_locates(team) -> None:
    pt = team.prompt_tokens.copy()
    pt[5, 1, 2] = 0
    ct = team.completion_tokens.copy()
    ct[5, 1, 2] = 0
    runs, notes = check_team_runs(dataclasses.replace(team, prompt_tokens=pt, completion_tokens=ct))
    assert len(runs.task_ids) == len(team.task_ids) - 1
    assert any("not called" in n and "round 1, member 'calc'" in n for n in notes)
    lp = team.logprob_mean.copy()
    lp[7, 0, 1] = np.nan
    lp[:, :, 2] = np.nan
    runs, notes = check_team_runs(dataclasses.replace(team, logprob_mean=lp))
    assert len(runs.task_ids) == len(team.task_ids) - 1
    assert any("log-prob absent for some calls of member 'hot'" in n for n in notes)
    assert any("member 'calc' logs no log-probs" in n for n in notes)
    with pytest.raises(ConfigError, match=r"without the answers it saw \(\$\.sees\[3\]"):
        check_team_runs(dataclasses.replace(team, sees=((), (), (), ())))
    with pytest.raises(ConfigError, match="shard s2 has members"):
        check_team_runs(dataclasses.replace(team, meta={"shard_members": {"s1": list(team.members),
                                                                           "s2": ["cold", "hot"]}}))
    with pytest.raises(ConfigError, match="not a team corpus"):
        check_team_runs(make_synthetic_logged(10, 2, 2))


# ----------------------------------------------------------------------------- the CLI
def test_cli_train_and_eval_with_fresh_sets(tmp_path: Path) -> None:
    corpus = save_runs(make_synthetic_team(400, 3, seed=3), tmp_path / "team.npz")
    fresh = make_synthetic_team(200, 3, seed=99)
    fresh_p = save_runs(fresh, tmp_path / "fresh.npz")
    out = tmp_path / "run"
    r = runner.invoke(app, ["train", "--from-traces", str(corpus), "-o", str(out), "--seed", "1", "-q"])
    assert r.exit_code == 0, r.output
    assert "joint team policy" in r.output and (out / "team_policy.json").is_file()
    assert TeamPolicy.load(out).meta["fit_seed"] == 1
    res_dir = tmp_path / "res"
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(out), "--test", str(fresh_p), "-o", str(res_dir),
                            "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((res_dir / "results.json").read_text())
    assert set(res["sets"]) == {"test", str(fresh_p)} and res["sets"][str(fresh_p)]["tasks"] == 200
    other = save_runs(make_synthetic_team(100, 3, seed=5, members=("cold", "hot", "calc")), tmp_path / "o.npz")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(out), "--test", str(other), "-q"])
    assert r.exit_code == 1 and "settings differ" in r.output and "members: corpus" in r.output
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "team_policy.json").write_text('{"format": "orchestrace-team-policy/1"}')
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(bad), "-q"])
    assert r.exit_code == 1 and "missing required field `model_class`" in r.output


def test_count_rules_on_distinct_counts_decide_as_on_every_row() -> None:
    from orchestrace.evaluation.logged import rule_grid
    from orchestrace.evaluation.logged_team import _COUNT_RULES, _decide, _distinct_counts
    from orchestrace.policies.rules import VoteState

    rng = np.random.default_rng(0)
    votes = rng.integers(0, 5, (400, 5)).astype(np.float64)
    st = VoteState(votes=votes, recent=None, price=rng.uniform(0, 0.3, 400), round_=np.full(400, 1), max_rounds=4)
    uniq = _distinct_counts(votes)
    assert len(uniq[0]) < 400
    n = 0
    for rules in rule_grid(4, 3).values():
        for rule in rules:
            if isinstance(rule, _COUNT_RULES):
                n += 1
                assert (_decide(rule, st, uniq) == rule.stop_now(st)).all(), rule.name
    assert n >= 18


def test_a_vote_corpus_is_evaluated_as_the_one_kind_team() -> None:
    runs = make_synthetic_logged(600, 3, 2, seed=1)
    pol, _ = fit_team_policy(runs, classes=("linear",), seed=0)
    res = evaluate_team(runs, [pol], names=["s0"], stop_only=False)
    b = res["sets"]["test"]["baselines"]
    assert b["default_vote_hot"]["name"] == "budget@3/w0+w1/majority" and "default_debate" not in b
    assert "single_call" in b and "cold_call" not in b
    assert res["corpus"]["members"] == ["w0", "w1"]


def test_mutated_policy_files_load_or_are_refused_with_a_config_error(fitted) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    base = _doc(fitted[0])
    keys = sorted(base)
    junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=True), st.text(max_size=5),
                     st.lists(st.integers(-1, 5), max_size=4), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                                max_size=2))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(key=st.sampled_from(keys), value=junk, drop=st.booleans())
    def check(key: str, value: object, drop: bool) -> None:
        doc = json.loads(json.dumps(base))
        if drop:
            doc.pop(key)
        else:
            doc[key] = value
        with contextlib.suppress(ConfigError):  # anything else (TypeError, KeyError …) fails the test
            TeamPolicy.from_dict(doc)

    check()


def test_mutations_inside_models_and_lists_are_refused_with_a_config_error(fitted) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    base = _doc(fitted[0])
    paths = [("models", d, k) for d in range(len(base["models"])) for k in base["models"][d]]
    paths += [("subsets", i) for i in range(len(base["subsets"]))] + [("sees", i) for i in range(len(base["sees"]))]
    paths += [("member_tokens", i) for i in range(len(base["member_tokens"]))]
    junk = st.one_of(st.none(), st.integers(-3, 9), st.floats(allow_nan=True), st.text(max_size=4),
                     st.lists(st.one_of(st.integers(-1, 9), st.floats(allow_nan=True)), max_size=3))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(path=st.sampled_from(paths), value=junk)
    def check(path: tuple, value: object) -> None:
        doc = json.loads(json.dumps(base))
        node = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
        with contextlib.suppress(ConfigError):  # anything else (TypeError, KeyError …) fails the test
            TeamPolicy.from_dict(doc)

    check()


def test_a_policy_file_is_read_as_the_gate_file_is(tmp_path: Path) -> None:
    """Like the gate file: a regular file under the small-file cap, else a located error, never a block."""
    import os

    from orchestrace.policies.team_policy import TeamPolicy

    os.mkfifo(tmp_path / "team_policy.json")  # before: read_text() on a FIFO waited for a writer forever
    with pytest.raises(ConfigError, match="not a regular file \\(a FIFO\\); a team policy file"):
        TeamPolicy.load(tmp_path)
    with pytest.raises(ConfigError, match="no team policy file"):
        TeamPolicy.load(tmp_path / "absent.json")
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(17 * 1024**2)  # sparse: over the 16 MiB cap without writing it
    with pytest.raises(ConfigError, match="over the .*-byte limit"):
        TeamPolicy.load(big)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff{")
    with pytest.raises(ConfigError, match="not a readable team policy file"):
        TeamPolicy.load(bad)
