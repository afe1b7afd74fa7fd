"""`orchestrace env list` and `orchestrace env run` through the real CLI."""

from __future__ import annotations

from typer.testing import CliRunner

from orchestrace import validate
from orchestrace.cli import app
from orchestrace.core.io import iter_traces

runner = CliRunner()


def test_env_list():
    res = runner.invoke(app, ["env", "list"])
    assert res.exit_code == 0, res.output
    for env_id in ("orchestrace/Orchestrate-v0", "orchestrace/Orchestrate-small-v0", "orchestrace/Orchestrate-industrial-v0"):
        assert env_id in res.output


def test_env_run_writes_readable_traces(tmp_path):
    out = tmp_path / "traces.jsonl"
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "--policy", "oracle",
                              "--episodes", "4", "--seed", "7", "-o", str(out)])
    assert res.exit_code == 0, res.output
    trs = list(iter_traces(out))
    assert len(trs) == 4 and all(validate(t).ok for t in trs)
    assert [t.meta["seed"] for t in trs] == [7, 8, 9, 10]
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "--policy", "fixed-budget",
                              "--param", "rounds=1", "-n", "2", "-o", str(tmp_path / "b.jsonl")])
    assert res.exit_code == 0, res.output


def test_env_run_bad_input_exit_2(tmp_path):
    res = runner.invoke(app, ["env", "run", "orchestrace/Nope-v0", "-o", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "--policy", "nope", "-o", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "--param", "oops", "-o", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2
