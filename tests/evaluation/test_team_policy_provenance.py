"""A team policy records the corpus it was fitted on, as a gate does (issue 39), and the member prices of a
priced corpus (issue 42): evaluation warns about a policy fitted on another corpus (the gate's wording) and
refuses one fitted at other member prices, naming the member and both prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace.errors import ConfigError
from orchestrace.evaluation import evaluate_logged
from orchestrace.evaluation.logged_team import evaluate_team
from orchestrace.evaluation.runfiles import fit_run, foreign_gates, load_corpus
from orchestrace.logged._prices import charge_prices
from orchestrace.logged.corpus import billed_prices, check_runs, save_runs
from orchestrace.logged.team_synth import make_synthetic_team
from orchestrace.policies.team_policy import TeamPolicy

PRICES = (0.15, 0.15, 2.5, 0.15)


def _priced(runs, prices=PRICES):  # type: ignore[no-untyped-def]
    cfg = {"members": [{"name": m, "price_in": p, "price_out": 4 * p} for m, p in zip(runs.members, prices,
                                                                                      strict=True)]}
    return charge_prices(runs, cfg)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, Path, TeamPolicy]:
    d = tmp_path_factory.mktemp("team")
    corpus = save_runs(make_synthetic_team(150, 2, seed=4), d / "corpus.npz")
    runs, notes = load_corpus(corpus)
    done = fit_run(runs, notes, corpus, d / "run", seed=0, classes=("linear",), histories=1)
    return corpus, done.path, TeamPolicy.load(done.path)


def test_a_team_policy_records_its_corpus_and_round_trips(fitted) -> None:  # type: ignore[no-untyped-def]
    corpus, path, pol = fitted
    runs, _ = load_corpus(corpus)
    assert pol.meta["corpus_fingerprint"] == runs.meta["fingerprint"] and len(runs.meta["fingerprint"]) == 16
    assert pol.prices is None and "prices" not in json.loads(path.read_text())  # unpriced: the field is absent
    assert TeamPolicy.load(path) == pol


def test_eval_warns_about_a_team_policy_fitted_on_another_corpus(fitted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus, path, pol = fitted
    assert foreign_gates([path], [pol], pol.meta["corpus_fingerprint"], corpus) == []
    other = save_runs(make_synthetic_team(150, 2, seed=5), tmp_path / "other.npz")
    notes: list[tuple[str, str]] = []
    evaluate_logged(other, [path], note=lambda m, k: notes.append((k, m)))
    warnings = [m for k, m in notes if k == "warning"]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}: this team policy was fitted on another corpus ({corpus})")
    assert "is not a held-out test on the tasks it was fitted for" in warnings[0]


def test_a_policy_fitted_at_other_member_prices_is_refused(tmp_path: Path) -> None:
    from orchestrace.trainers.team_fitted_q import fit_team_policy

    priced, _ = check_runs(_priced(make_synthetic_team(150, 2, seed=6)))
    pol, _ = fit_team_policy(priced, classes=("linear",), seed=0, histories=1)
    assert pol.prices == billed_prices(priced.meta) and pol.prices["calc"] == (2.5, 10.0)
    back = TeamPolicy.load(pol.save(tmp_path / "run"))
    assert back.prices == pol.prices
    back.check_team(priced.members, priced.sees, 2, prices=billed_prices(priced.meta))  # same prices: accepted
    cheaper, _ = check_runs(_priced(make_synthetic_team(150, 2, seed=6), (0.15, 0.15, 0.5, 0.15)))
    with pytest.raises(ConfigError, match=r"x on the corpus: member 'calc' is priced \[0\.5, 2\.0\] on the corpus "
                                          r"but \[2\.5, 10\.0\] in the policy"):
        back.check_team(cheaper.members, cheaper.sees, 2, where="x on the corpus", prices=billed_prices(cheaper.meta))
    with pytest.raises(ConfigError, match=r"member 'cold' is priced \(unpriced\) on the corpus but \[0\.15, 0\.6\]"):
        evaluate_team(check_runs(make_synthetic_team(150, 2, seed=6))[0], [back], names=["p"])
    with pytest.raises(ConfigError, match=r"p on the corpus: member 'calc' is priced \[0\.5, 2\.0\]"):
        evaluate_team(cheaper, [back], names=["p"])


def test_a_fresh_set_at_other_member_prices_is_not_a_fresh_set_of_the_loop() -> None:
    from orchestrace.evaluation.logged import fresh_mismatch

    corpus = _priced(make_synthetic_team(20, 2, seed=7))
    same = _priced(make_synthetic_team(20, 2, seed=8))
    other = _priced(make_synthetic_team(20, 2, seed=8), (0.15, 0.15, 0.5, 0.15))
    unpriced = make_synthetic_team(20, 2, seed=8)
    for r in (same, other, unpriced):  # distinct task ids: only the prices may differ
        r.task_ids[:] = [f"f{t}" for t in range(len(r.task_ids))]
    assert not any(d.startswith("member prices") for d in fresh_mismatch(corpus, same))
    assert any(d.startswith("member prices: corpus {'cold': (0.15, 0.6)") and "'calc': (0.5, 2.0)" in d
               for d in fresh_mismatch(corpus, other))
    assert any(d.endswith("fresh none") for d in fresh_mismatch(corpus, unpriced))
