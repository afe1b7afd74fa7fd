"""``evaluate_logged``: the one library call behind ``eval --traces CORPUS [RUN …] [--test FRESH …]``.

Checked against the composition of library calls the command line made before (read, check, load the
runs, warn, evaluate, render), on synthetic corpora; the command line prints exactly its summary; every
ConfigError exits 1 (a vote corpus's evaluation errors used to exit 2, a team corpus's 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.errors import ConfigError
from orchestrace.evaluation import LoggedEvaluation, evaluate_logged
from orchestrace.evaluation.runfiles import load_corpus
from orchestrace.offline import (
    evaluate_traces,
    fit_gate,
    make_synthetic_logged,
    render_summary,
    save_runs,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return save_runs(make_synthetic_logged(T=240, R=3, W=2, seed=3), tmp_path_factory.mktemp("c") / "runs.npz")


@pytest.fixture(scope="module")
def gate_file(corpus: Path, tmp_path_factory) -> Path:
    runs, _ = load_corpus(corpus)
    gate, _ = fit_gate(runs, classes=("linear",), seed=1)
    return gate.save(tmp_path_factory.mktemp("g") / "run")


def test_one_call_equals_the_calls_it_replaces(corpus: Path, gate_file: Path, tmp_path: Path) -> None:
    fresh = save_runs(make_synthetic_logged(T=80, R=3, W=2, seed=9, prefix="fresh"), tmp_path / "fresh.npz")
    notes: list[tuple[str, str]] = []
    ev = evaluate_logged(corpus, [gate_file], tests=[fresh], note=lambda m, k: notes.append((k, m)))
    assert isinstance(ev, LoggedEvaluation) and ev.kind == "vote"
    # the reference: what cli/_offline.eval_traces computed itself before
    from orchestrace.policies.gate import StopGate

    logged, _ = load_corpus(corpus)
    fresh_runs, _ = load_corpus(fresh, fresh=True)
    ref = evaluate_traces(logged, [StopGate.load(gate_file)], names=[gate_file.parent.name],
                          tests=[(str(fresh), fresh_runs)])
    assert ev.summary == render_summary(ref)
    assert set(ev.results) == set(ref) and ev.results["gates"].keys() == ref["gates"].keys()
    assert all(k == "note" for k, _ in notes)  # the synthetic corpus and its gate: nothing to warn about
    written = ev.write(tmp_path / "out")
    assert {"results.json", "summary.md"} <= set(written)
    assert (tmp_path / "out" / "summary.md").read_text() == ev.summary


def test_the_cli_prints_the_calls_summary(corpus: Path, gate_file: Path) -> None:
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(gate_file), "-q"])
    assert r.exit_code == 0, r.output
    assert evaluate_logged(corpus, [gate_file]).summary in r.output


def test_a_missing_path_is_named(tmp_path: Path, corpus: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such --test collection"):
        evaluate_logged(corpus, tests=[tmp_path / "gone"])
    r = runner.invoke(app, ["eval", "--traces", str(tmp_path / "gone")])
    assert r.exit_code == 2 and "no such corpus" in r.output


def test_every_config_error_exits_1(corpus: Path, gate_file: Path, tmp_path: Path) -> None:
    wider = save_runs(make_synthetic_logged(T=60, R=4, W=2, seed=5, prefix="other"), tmp_path / "other.npz")
    with pytest.raises(ConfigError, match="rounds: corpus 3, fresh 4"):
        evaluate_logged(corpus, [gate_file], tests=[wider])
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(gate_file), "--test", str(wider)])
    assert r.exit_code == 1 and "rounds: corpus 3, fresh 4" in r.output  # exit 2 before: one code now
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = runner.invoke(app, ["eval", "--traces", str(corpus), str(bad)])
    assert r.exit_code == 1, r.output


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the corpus checks (the vote's and the team's rules of ``check_runs``) by the ``where`` they name."""
    from orchestrace.logged import corpus as corpus_mod

    seen: list[str] = []
    for name in ("_vote_rules", "team_rules"):
        real = getattr(corpus_mod, name)

        def counted(runs, where, splits, _real=real):  # noqa: ANN001, ANN202
            seen.append(where)
            return _real(runs, where, splits)

        monkeypatch.setattr(corpus_mod, name, counted)
    return seen


def test_each_corpus_is_checked_once_per_call(corpus: Path, gate_file: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrace.logged.team_synth import make_synthetic_team

    fresh = save_runs(make_synthetic_logged(T=80, R=3, W=2, seed=9, prefix="fresh"), tmp_path / "fresh.npz")
    team = save_runs(make_synthetic_team(300, 3, seed=3), tmp_path / "team.npz")
    team_fresh = save_runs(make_synthetic_team(100, 3, seed=99), tmp_path / "team_fresh.npz")
    seen = _count_checks(monkeypatch)
    assert evaluate_logged(corpus, [gate_file], tests=[fresh]).kind == "vote"
    assert sorted(seen) == sorted([str(corpus), str(fresh)])  # each once (twice each before)
    seen.clear()
    assert evaluate_logged(team, tests=[team_fresh]).kind == "team"
    assert sorted(seen) == sorted([str(team), str(team_fresh)])
    seen.clear()  # a Python caller's unchecked runs are still checked, once
    evaluate_traces(make_synthetic_logged(T=240, R=3, W=2, seed=3), [])
    assert seen == ["corpus"]


def test_a_team_corpus_config_error_exits_1_too(tmp_path: Path) -> None:
    from orchestrace.logged.team_synth import make_synthetic_team

    team = save_runs(make_synthetic_team(300, 3, seed=3), tmp_path / "team.npz")
    other = save_runs(make_synthetic_team(100, 3, seed=5, members=("cold", "hot", "calc")), tmp_path / "o.npz")
    r = runner.invoke(app, ["eval", "--traces", str(team), "--test", str(other), "-q"])
    assert r.exit_code == 1 and "settings differ" in r.output  # the vote branch's code (the test above)


def test_both_fitters_refuse_a_corpus_too_small_to_fit(tmp_path: Path) -> None:
    """One fitter interface, one check of the splits (the team policy was fitted from 5 training runs before)."""
    from orchestrace.logged.team_synth import make_synthetic_team

    for tiny in (make_synthetic_team(12, 3, seed=3), make_synthetic_logged(T=12, R=3, W=2, seed=3)):
        path = save_runs(tiny, tmp_path / "tiny.npz")
        r = runner.invoke(app, ["train", "--from-traces", str(path), "-o", str(tmp_path / "run"), "-q"])
        assert r.exit_code == 1 and "too few tasks to fit a stop" in r.output, r.output
