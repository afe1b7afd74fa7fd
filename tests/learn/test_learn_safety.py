"""Issue 27's silent traps of `train` and `eval`, met through the CLI as a user meets them.

* `train` into a folder that is not empty refuses unless `--resume` or `--overwrite`;
* `--resume` on a folder left by Ctrl-C (no checkpoint yet) says what is there and what to do;
* `eval RUN1 RUN2` refuses runs that share a training seed or mix recipes, naming them;
  its summary.md names the runs (seed, recipe) and the `--set` overrides.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from orchestrace.cli import app

runner = CliRunner()
TINY = ["--env", "small", "--episodes-per-step", "16", "--group-size", "4", "--warm-start-episodes", "32",
        "--warm-start-steps", "10", "--hidden", "16", "--quiet"]


def _train(out: Path, seed: int, *extra: str):  # noqa: ANN202
    return runner.invoke(app, ["train", "--algo", "grpo", "--steps", "1", "--seed", str(seed), "--out", str(out),
                               *TINY, *extra])


def test_train_into_a_folder_that_is_not_empty_refuses(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    r = _train(out, 0)
    assert r.exit_code == 2
    assert "is not empty (it holds notes.txt)" in r.output and "--overwrite" in r.output and "--resume" in r.output
    assert not (out / "config.json").exists()  # nothing was written
    r = _train(out, 0, "--overwrite")
    assert r.exit_code == 0, r.output
    assert (out / "checkpoint.pt").is_file() and (out / "notes.txt").read_text() == "mine"  # only run files replaced
    r = _train(out, 1)  # a finished run is not overwritten silently either
    assert r.exit_code == 2 and "checkpoint.pt" in r.output
    assert json.loads((out / "config.json").read_text())["seed"] == 0
    r = runner.invoke(app, ["train", "--out", str(out), "--resume", "--overwrite"])
    assert r.exit_code == 2 and "pass one of them" in r.output


def test_resume_after_ctrl_c_says_what_is_there(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()  # what a run stopped before its first checkpoint leaves behind
    (out / "config.json").write_text(json.dumps({"env": "small", "seed": 0}))
    (out / "metrics.jsonl").write_text('{"update": 0}\n')
    r = runner.invoke(app, ["train", "--out", str(out), "--resume"])
    assert r.exit_code == 2
    assert "no such checkpoint file" not in r.output
    assert "config.json, metrics.jsonl (1 rows)" in r.output and "no checkpoint.pt" in r.output
    assert "--overwrite" in r.output


def test_eval_refuses_runs_of_one_seed_or_mixed_recipes(tmp_path: Path) -> None:
    a = tmp_path / "a"
    assert _train(a, 3).exit_code == 0
    b = tmp_path / "b"
    shutil.copytree(a, b)  # the same run twice: not two training seeds
    r = runner.invoke(app, ["eval", str(a), str(b), "--episodes", "4", "--validation", "4", "--quiet"])
    assert r.exit_code == 2
    assert "share a training seed" in r.output and f"seed 3: {a}, {b}" in r.output
    cfg = json.loads((b / "config.json").read_text())
    (b / "config.json").write_text(json.dumps({**cfg, "seed": 4, "stop_update": "fitted"}))
    r = runner.invoke(app, ["eval", str(a), str(b), "--episodes", "4", "--validation", "4", "--quiet"])
    assert r.exit_code == 2
    assert "mix training recipes" in r.output and f"{b}: fitted" in r.output and f"{a}: grpo" in r.output


def test_eval_summary_names_the_runs_and_overrides(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert _train(a, 1).exit_code == 0
    assert _train(b, 2).exit_code == 0
    out = tmp_path / "ev"
    r = runner.invoke(app, ["eval", str(a), str(b), "--episodes", "6", "--validation", "4", "--no-oracle-all",
                            "--set", "token_cost=4.8e-5", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    text = (out / "summary.md").read_text()
    assert f"- {a} (seed 1, grpo" in text and f"- {b} (seed 2, grpo" in text
    assert "World overrides (--set): token_cost=4.8e-5" in text
