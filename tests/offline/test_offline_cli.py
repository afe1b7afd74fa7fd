"""``train --from-traces`` and ``eval --traces`` through the real CLI, and their bad-input exits."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import structured_runs
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.logged.runs import LoggedRuns
from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.offline import save_runs

runner = CliRunner()


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return save_runs(structured(T=240, R=3, W=2, seed=4), tmp_path_factory.mktemp("c") / "logged.npz")


@pytest.fixture(scope="module")
def run(corpus: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("r") / "run"
    r = runner.invoke(app, ["train", "--from-traces", str(corpus), "-o", str(out), "--seed", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert "won on validation:" in r.output
    return out


def test_train_writes_a_portable_gate(run: Path) -> None:
    gate = json.loads((run / "gate.json").read_text())
    fit = json.loads((run / "fit.json").read_text())
    assert gate["format"] == "orchestrace-stop-gate/1" and gate["meta"]["fit_seed"] == 2
    # the MLP is fitted only where torch (the learn extra) is installed; the fit says it skipped it otherwise
    classes = {"linear", "quadratic"} | ({"mlp"} if importlib.util.find_spec("torch") else set())
    assert fit["chosen"]["class"] == gate["model_class"] and set(fit["by_class"]) == classes


def test_eval_values_rules_and_gates_on_test_tasks(corpus: Path, run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ev"
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(run), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    assert res["corpus"]["tasks"]["test"] == int((np.load(corpus)["split"] == "test").sum())
    claims = res["gates"]["run"]["claims"]
    assert set(claims) == {"beats_best_rule", "fewer_calls_at_equal_accuracy", "gap_to_clairvoyant"}
    assert claims["beats_best_rule"]["baseline"] == res["best_rule"]
    assert (out / "summary.md").read_text().startswith("# Stop rules on logged runs")
    if importlib.util.find_spec("matplotlib"):  # the plot extra draws the Pareto picture; without it there is none
        assert (out / "pareto.png").stat().st_size > 1000 and "pareto.png" in r.output
    else:
        assert not (out / "pareto.png").exists() and "pareto.png" not in r.output
    # the rules alone, without a gate
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "-q"])
    assert r.exit_code == 0 and "Best rule of the whole family" in r.output


def test_bad_input_exits_are_located(corpus: Path, run: Path, tmp_path: Path) -> None:
    r = runner.invoke(app, ["train", "--from-traces", str(tmp_path / "none.npz"), "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "no such corpus" in r.output
    r = runner.invoke(app, ["train", "--from-traces", str(corpus), "-o", str(tmp_path / "x"), "--steps", "3"])
    assert r.exit_code == 2 and "--steps" in r.output
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "--episodes", "50"])
    assert r.exit_code == 2 and "--episodes only apply to the simulator" in r.output
    # a corpus with another round limit: the gate says so
    other = save_runs(structured(T=120, R=4, W=2, seed=1), tmp_path / "r4.npz")
    r = runner.invoke(app, ["eval", "--traces", str(other), str(run)])
    assert r.exit_code == 1 and "round limit of 3" in r.output  # every ConfigError of eval --traces: 1
    # grades that disagree with the attempts: a few are excluded and said, many are an error
    runs = structured(T=200, R=3, W=2, seed=9)
    flip = runs.round_correct.copy()
    flip[:5] = ~flip[:5]
    few = save_runs(LoggedRuns(**{**runs.__dict__, "round_correct": flip}), tmp_path / "few.npz")
    r = runner.invoke(app, ["train", "--from-traces", str(few), "-o", str(tmp_path / "few"), "-q"])
    assert r.exit_code == 0 and "5 of 200 task(s) excluded" in r.output
    flip[:50] = ~runs.round_correct[:50]
    many = save_runs(LoggedRuns(**{**runs.__dict__, "round_correct": flip}), tmp_path / "many.npz")
    r = runner.invoke(app, ["train", "--from-traces", str(many), "-o", str(tmp_path / "many")])
    assert r.exit_code == 1 and "50 of 200" in r.output
    # a corrupted gate file
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "gate.json").write_text("{not json")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(tmp_path / "bad")])
    assert r.exit_code == 1 and "not a readable gate file" in r.output
    # not a corpus at all
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not a zip")
    r = runner.invoke(app, ["eval", "--traces", str(tmp_path / "junk.npz")])
    assert r.exit_code == 1 and "not a readable logged-runs file" in r.output
    np.savez(tmp_path / "part.npz", answers=np.zeros((2, 2, 2)))
    r = runner.invoke(app, ["eval", "--traces", str(tmp_path / "part.npz")])
    assert r.exit_code == 1 and "missing array(s)" in r.output
    # no split
    lone = save_runs(runs.subset(runs.split == "train"), tmp_path / "lone.npz")
    r = runner.invoke(app, ["eval", "--traces", str(lone)])
    assert r.exit_code == 1 and "no 'validation' tasks" in r.output


def _fresh(seed: int, R: int = 3, T: int = 120) -> LoggedRuns:  # noqa: N803
    """A separately collected set: new task ids, the corpus's settings."""
    runs = structured(T=T, R=R, W=2, seed=seed)
    return LoggedRuns(**{**runs.__dict__, "task_ids": np.array([f"fresh{seed}-{t}" for t in runs.task_ids])})


def test_eval_test_values_everything_on_fresh_collections(corpus: Path, run: Path, tmp_path: Path) -> None:
    f1, f2 = save_runs(_fresh(11), tmp_path / "f1.npz"), save_runs(_fresh(12, T=90), tmp_path / "f2.npz")
    out = tmp_path / "ev"
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(run), "--test", str(f1), "--test", str(f2),
                            "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    assert [res["fresh"][str(f)]["tasks"] for f in (f1, f2)] == [120, 90]
    g = res["fresh"][str(f1)]["gates"]["run"]
    assert g["claims"]["beats_best_rule"]["baseline"] == res["best_rule"]  # chosen on the corpus, valued fresh
    assert g["claims"]["beats_best_rule"]["return_diff"]["n"] == 120
    assert f"Fresh collection {f1} (120 tasks" in r.output and "gate run − rule" in r.output


def test_eval_test_refuses_what_is_not_fresh(corpus: Path, run: Path, tmp_path: Path) -> None:
    r4 = save_runs(_fresh(13, R=4), tmp_path / "r4.npz")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "--test", str(r4)])
    assert r.exit_code == 1 and f"--test {r4}" in r.output and "rounds: corpus 3, fresh 4" in r.output
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "--test", str(corpus)])
    assert r.exit_code == 1 and "task id(s) are in the corpus too" in r.output
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "--test", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "no such --test collection" in r.output
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not a zip")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), "--test", str(tmp_path / "junk.npz")])
    assert r.exit_code == 1 and "junk.npz: not a readable logged-runs file" in r.output
    r = runner.invoke(app, ["eval", str(run), "--test", str(corpus)])
    assert r.exit_code == 2 and "needs --traces CORPUS" in r.output
