"""`orchestrace train / eval / demo` through the real CLI with tiny budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

runner = CliRunner()
TINY = ["--env", "small", "--episodes-per-step", "16", "--group-size", "4", "--warm-start-episodes", "32",
        "--warm-start-steps", "10", "--hidden", "32", "--quiet"]


def test_train_resume_eval(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "tiny"
    r = runner.invoke(app, ["train", "--algo", "grpo", "--steps", "2", "--seed", "3", "--out", str(run), *TINY])
    assert r.exit_code == 0, r.output
    assert "trained grpo" in r.output and (run / "policy.pt").is_file()
    r = runner.invoke(app, ["train", "--steps", "3", "--out", str(run), "--resume", "--quiet"])
    assert r.exit_code == 0, r.output
    assert json.loads((run / "config.json").read_text())["steps"] == 3
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 4
    out = tmp_path / "eval"
    r = runner.invoke(app, ["eval", str(run), "--env", "small", "--episodes", "24", "--seeds", "held-out",
                            "--traces", "2", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "results.json").read_text())
    assert {"learned", "oracle", "always-continue", "fixed-budget@1", "threshold@0.7", "learned+stop@2"} <= set(rep["policies"])
    assert rep["policies"]["learned"]["success"]["n"] == 24
    assert {"vs_best_fixed_budget", "vs_oracle", "vs_threshold"} <= set(rep["evidence"])
    assert "waste/tokens" in rep["policies"]["learned"]["trace_sample"]
    assert len((out / "traces" / "learned.jsonl").read_text().splitlines()) > 2
    assert (out / "summary.md").read_text().startswith("# orchestrace demo")
    from orchestrace.io import iter_traces

    traces = list(iter_traces(out / "traces" / "learned.jsonl"))
    assert len(traces) == 2
    decisions = [e.decision for e in traces[0].events if e.decision is not None]
    assert decisions and all(d.logprob is not None and d.logprob <= 0 for d in decisions)
    assert traces[0].stop_event is not None


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["train", "--algo", "sac", "--out", "X"], 2, "algo='sac' is invalid"),
        (["train", "--algo", "grpo", "--episodes-per-step", "30", "--group-size", "8", "--out", "X"], 2, "group_size=6"),
        (["train", "--out", "NOPE", "--resume"], 2, "no config.json"),
        (["eval", "NOPE", "--episodes", "4"], 1, "no such checkpoint"),
        (["eval", "NOPE", "--seeds", "train"], 2, "--seeds held-out"),
    ],
)
def test_bad_input_fails_with_a_message(args: list[str], code: int, needle: str, tmp_path: Path) -> None:
    args = [str(tmp_path / a) if a in ("X", "NOPE") else a for a in args]
    r = runner.invoke(app, args)
    assert r.exit_code == code, r.output
    assert needle in r.output
    assert "Traceback" not in r.output


def test_corrupted_checkpoint_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "policy.pt"
    bad.write_bytes(b"\x00garbage")
    r = runner.invoke(app, ["eval", str(bad), "--env", "small", "--episodes", "4", "--quiet"])
    assert r.exit_code == 1 and "corrupted" in r.output


def test_demo_runs_end_to_end_with_a_tiny_budget(tmp_path: Path, monkeypatch) -> None:
    from orchestrace.learn import demo

    def tiny_demo(out, **kw):
        kw.update(env="small", episodes=16, sample_traces=2,
                  overrides={"episodes_per_step": 16, "group_size": 4, "warm_start_episodes": 32, "warm_start_steps": 10})
        return real(out, **kw)

    real = demo.run_demo
    monkeypatch.setattr(demo, "run_demo", tiny_demo)
    r = runner.invoke(app, ["demo", "--out", str(tmp_path / "d"), "--steps", "2", "--quiet"])
    assert r.exit_code == 0, r.output
    for f in ("summary.md", "results.json", "episodes.npz", "traces/learned.jsonl", "run/checkpoint.pt"):
        assert (tmp_path / "d" / f).exists(), f
    assert "summary" in r.output and ("picture" in r.output)
