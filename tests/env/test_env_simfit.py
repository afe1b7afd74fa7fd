"""Sim-to-real: simulated logged runs follow the simulator's attempt model; the fit recovers moments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from orchestrace.env.config import EnvConfig
from orchestrace.env.workers import SimulatedWorkers, SubtaskSpec, WorkerContext
from orchestrace.errors import ConfigError
from orchestrace.logged.runs import load_logged_runs
from orchestrace.logged.simfit import (
    corpus_moments,
    fit_simulator,
    load_fitted_env,
    simulate_logged_runs,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


def test_simulated_attempts_equal_the_scalar_reference_workers() -> None:
    cfg = EnvConfig.default()
    sim = simulate_logged_runs(cfg, 40, 3, 2, seed=5)
    ref = SimulatedWorkers(cfg)
    prof = next(p for p in cfg.profiles if not p.verifier)
    for t in range(40):
        s = 5 * 1_000_003 + t
        spec = SubtaskSpec(index=0, type="reason", difficulty=sim.meta["d"][t])
        got = [ref.run(spec, prof, WorkerContext("none", False, False, seed=s, slot=j), 0) for j in range(6)]
        assert sim.correct[t].reshape(-1).tolist() == [g.success for g in got]
        labels = [g.answer for g in got]
        codes = sim.answers[t].reshape(-1).tolist()
        assert all((labels[i] == labels[j]) == (codes[i] == codes[j]) for i in range(6) for j in range(6))
        assert np.allclose(np.exp(sim.logprob_mean[t].reshape(-1)), [g.confidence for g in got], rtol=1e-5)
        assert sim.completion_tokens[t].reshape(-1).tolist() == [max(1, round(g.tokens_out)) for g in got]


def test_a_certain_misconception_makes_every_attempt_the_same_wrong_answer() -> None:
    cfg = EnvConfig.default().replace(p_misconception=1.0, misconception_strength=1.0, p_easy=0.0, p_hard=1.0)
    sim = simulate_logged_runs(cfg, 200, 2, 2, seed=0)
    hit = np.array(sim.meta["misconception"])  # drawn w.p. p_misconception·d
    assert 0.5 < hit.mean() < 1.0
    assert not sim.correct[hit].any()
    assert (sim.answers[hit] == 0).all()  # one shared wrong answer, code 0 (first seen)
    assert corpus_moments(sim.subset(hit))["wrong_agree"] == 1.0


def test_fit_recovers_the_moments_of_a_known_simulator() -> None:
    truth = EnvConfig.default().replace(difficulty_offset=0.4, difficulty_scale=5.0, p_easy=0.4, p_hard=0.3,
                                        n_wrong=3, plausible_wrong=0.5)
    target = simulate_logged_runs(truth, 600, 3, 2, seed=11)
    fit = fit_simulator(target, n_sim=400, n_search=40, seed=0)
    real, sim = fit["moments"]["real"], fit["moments"]["simulated"]
    assert abs(real["acc"] - sim["acc"]) < 0.05
    assert abs(real["maj_last"] - sim["maj_last"]) < 0.06
    assert np.abs(np.array(real["solve_hist"]) - np.array(sim["solve_hist"])).sum() < 0.3
    assert abs(real["tokens_out"] - sim["tokens_out"]) / real["tokens_out"] < 0.1


def test_fit_file_round_trips_through_set_items_and_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrace.cli import app

    out = tmp_path / "fit.json"
    r = CliRunner().invoke(app, ["collect", "fit-sim", str(TINY), "-o", str(out), "--split", "all",
                                 "--search", "10", "--sim-tasks", "100"])
    assert r.exit_code == 0, r.output
    fit = json.loads(out.read_text())
    cfg = EnvConfig.default().with_overrides(fit["set"])  # what `--set` accepts
    full = load_fitted_env(out)
    assert {s.split("=")[0] for s in fit["set"]} >= {"difficulty_scale", "n_wrong", "p_misconception"}
    assert full.difficulty_scale == cfg.difficulty_scale
    real = corpus_moments(load_logged_runs(TINY))
    assert math.isclose(fit["moments"]["real"]["acc"], real["acc"])
    assert full.profiles[0].tokens_in == pytest.approx(real["tokens_in"])
    r = CliRunner().invoke(app, ["collect", "fit-sim", str(TINY), "-o", str(out), "--split", "nope"])
    assert r.exit_code == 2


def test_bad_fit_file_is_a_config_error(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    p.write_text("{}")
    with pytest.raises(ConfigError, match="not a fit file"):
        load_fitted_env(p)
