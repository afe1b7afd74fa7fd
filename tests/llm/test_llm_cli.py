"""CLI smoke runs through the real commands against a fake endpoint (fast, no model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from llm_fakes import free_port
from typer.testing import CliRunner

import orchestrace as ot
from orchestrace import validate
from orchestrace.cli import app

runner = CliRunner()


def test_llm_run_writes_valid_traces(faulty, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok", text="Answer: 7")
    out = tmp_path / "t.jsonl"
    res = runner.invoke(app, ["llm", "run", "--base-url", srv.base_url, "--model", "fake", "--suite", "list",
                              "-n", "2", "--plan", "chain", "-o", str(out)])
    assert res.exit_code in (0, 1), res.output  # 1 = no episode succeeded (the fake always says 7)
    traces = list(ot.iter_traces(out))
    assert len(traces) == 2 and all(validate(t).valid for t in traces)
    assert "success" in res.output


def test_llm_run_usage_errors() -> None:
    assert runner.invoke(app, ["llm", "run", "--suite", "arith"]).exit_code == 2
    assert runner.invoke(app, ["llm", "run", "--base-url", "http://x/v1", "--model", "m", "--plan", "nope"]).exit_code == 2
    res = runner.invoke(app, ["llm", "run", "--base-url", "ftp://x", "--model", "m"])
    assert res.exit_code == 2 and "http://" in res.output


@pytest.mark.skipif(importlib.util.find_spec("gymnasium") is None, reason="gymnasium (orchestrace[env]) is not installed")
def test_env_run_with_llm_workers(faulty, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok", text="Answer: 7")
    out = tmp_path / "e.jsonl"
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "-p", "fixed-fanout", "-n", "1",
                              "-o", str(out), "--workers", "llm", "--base-url", srv.base_url, "--model", "fake"])
    assert res.exit_code == 0, res.output
    (tr,) = list(ot.iter_traces(out))
    assert validate(tr).valid and len(srv.requests) >= 3


@pytest.mark.skipif(importlib.util.find_spec("gymnasium") is None, reason="gymnasium (orchestrace[env]) is not installed")
def test_env_run_with_llm_server_down_fails_with_the_causes(tmp_path: Path) -> None:
    res = runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "-n", "1", "-o", str(tmp_path / "x.jsonl"),
                              "--workers", "llm", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m",
                              "--max-tokens", "8"])
    assert res.exit_code == 2 and "every LLM call failed" in res.output and "connect" in res.output
    assert runner.invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "-n", "1", "-o",
                               str(tmp_path / "y.jsonl"), "--workers", "llm"]).exit_code == 2
