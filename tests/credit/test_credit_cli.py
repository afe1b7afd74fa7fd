"""``orchestrace reward`` and ``orchestrace credit`` through typer's CliRunner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace import TraceBuilder, dump, synth
from orchestrace.cli import app

runner = CliRunner()
LOCAL = Path(__file__).resolve().parents[1] / "data" / "reference"
SPEC = Path(__file__).resolve().parents[2] / "examples" / "reward_spec.toml"
UNITS = ["token", "tool_call", "message", "turn", "agent", "role", "orchestrator", "team"]
METHODS = ["broadcast", "discounted", "causal", "leave-one-out", "shapley", "owen", "c3", "coma"]


@pytest.fixture
def example(tmp_path) -> Path:
    src = LOCAL / "example_trace.json"
    dst = tmp_path / "example_trace.json"
    shutil.copy(src, dst)
    return dst


@pytest.fixture(scope="module")
def synth_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("credit") / "synth.jsonl"
    dump(synth(events=300, agents=5, seed=4), p)
    return p


def run(*args):
    r = runner.invoke(app, list(map(str, args)))
    assert "Traceback" not in r.output and "Traceback" not in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_reward_on_reference_example(example):
    r = run("reward", example, "--spec", SPEC)
    assert r.exit_code == 0, r.stderr
    assert "shared_outcome" in r.stdout and "total reward" in r.stdout
    recs = jsonl(run("reward", example, "--spec", SPEC, "--json").stdout)
    assert {"unit": "team", "id": "team", "value": 1.0, "family": "R1", "name": "shared_outcome"} in recs
    default = jsonl(run("reward", example, "--json").stdout)
    assert default == [{"unit": "team", "id": "team", "value": 1.0, "family": "R1", "name": "shared_outcome"}]


@pytest.mark.parametrize("unit", [u for u in UNITS if u != "token"])  # the reference has no token counts
def test_credit_every_unit_on_reference_example(example, unit):
    for method in METHODS:
        r = run("credit", example, "--unit", unit, "--method", method, "--json")
        assert r.exit_code == 0, (unit, method, r.stderr)
        recs = jsonl(r.stdout)
        assert recs and all(set(x) <= {"unit", "credit", "stderr"} for x in recs)


def test_credit_table_and_notes(example):
    r = run("credit", example, "--unit", "agent", "--method", "shapley")
    assert r.exit_code == 0
    assert "orchestrator" in r.stdout and "executor" in r.stdout and "trace-only value function" in r.stdout
    r = run("credit", example, "--spec", SPEC)  # unit and method from the spec's [credit] table
    assert r.exit_code == 0 and "agent credit by shapley" in r.stdout


def test_credit_all_units_on_synth(synth_file):
    for unit in UNITS:
        for method in ("broadcast", "discounted", "causal"):
            r = run("credit", synth_file, "--unit", unit, "--method", method, "--json")
            assert r.exit_code == 0, (unit, method, r.stderr)
    r = run("credit", synth_file, "--unit", "tool_call", "--method", "shapley", "--samples", "50", "--json")
    recs = jsonl(r.stdout)
    assert r.exit_code == 0 and all("stderr" in x for x in recs)
    table = run("credit", synth_file, "--unit", "tool_call", "--method", "shapley", "--samples", "50", "--limit", "5")
    assert "± stderr" in table.stdout and "more unit(s)" in table.stdout and "probability" in table.stdout


def test_bad_input_exit_codes(tmp_path, example):
    r = run("credit", tmp_path / "missing.json", "--unit", "agent")
    assert r.exit_code == 2 and "no such file" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert run("credit", bad, "--unit", "agent").exit_code == 1
    assert run("reward", bad).exit_code == 1
    r = run("credit", example, "--unit", "agnt")
    assert r.exit_code == 2 and "did you mean 'agent'" in r.stderr
    r = run("credit", example, "--unit", "agent", "--method", "shap")
    assert r.exit_code == 2 and "shapley" in r.stderr
    r = run("credit", example)
    assert r.exit_code == 2 and "--unit is required" in r.stderr
    r = run("credit", example, "--unit", "token")
    assert r.exit_code == 2 and "tokens_out" in r.stderr
    b = TraceBuilder("noroles")
    s = b.spawn("w1", t=0)
    b.tool_call("w1", "x", t=1, after=s)
    p = tmp_path / "noroles.json"
    dump(b.build(rewards={"team": 1.0}), p)
    r = run("credit", p, "--unit", "role")
    assert r.exit_code == 2 and "no roles" in r.stderr and "--unit agent" in r.stderr
    spec = tmp_path / "spec.toml"
    spec.write_text('[[reward]]\nfn = "parl"\nparams = { lamda1 = 0.1 }\n')
    r = run("reward", example, "--spec", spec)
    assert r.exit_code == 2 and "did you mean 'lambda1'" in r.stderr


def test_truth_gives_an_outcome_to_a_run_that_has_none(tmp_path):
    # an imported run records no outcome: credit refuses until the user states one
    b = TraceBuilder("no-outcome")
    d = b.decide("spawn", action="spawn:1", t=0, t_end=1)
    s = b.spawn("w1", t=1, t_end=1, after=d, role="coder")
    c = b.tool_call("w1", "x", t=1, t_end=3, after=s, tokens_in=30)
    r = b.return_("w1", t=3, t_end=3, after=c)
    b.aggregate(t=3, t_end=4, after=[r], tokens_out=10)
    p = tmp_path / "no_outcome.json"
    dump(b.build(), p)
    refused = runner.invoke(app, ["credit", str(p), "--unit", "agent", "--method", "causal"])
    assert refused.exit_code == 2 and "no reward signals" in refused.output
    ok = runner.invoke(app, ["credit", str(p), "--unit", "agent", "--method", "causal", "--truth", "true", "--json"])
    assert ok.exit_code == 0, ok.output
    rows = [json.loads(line) for line in ok.stdout.splitlines() if line.startswith("{")]
    assert sum(r["credit"] for r in rows) == pytest.approx(1.0)
    failed = runner.invoke(app, ["credit", str(p), "--unit", "agent", "--method", "causal", "--truth", "false", "--json"])
    rows = [json.loads(line) for line in failed.stdout.splitlines() if line.startswith("{")]
    assert sum(r["credit"] for r in rows) == pytest.approx(0.0)
