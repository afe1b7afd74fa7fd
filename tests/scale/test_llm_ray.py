"""LLM-worker episodes go through the same sharding path as simulated ones (``env run --workers
llm --ray N``): every shard builds its own LLM backend in its worker process. Real LLM calls
take wall-clock time, which the traces record, so the files are compared without the timings:
the same episodes, decisions, agents and outcomes."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import orchestrace as ot
from orchestrace.cli import app

pytestmark = pytest.mark.skipif(importlib.util.find_spec("httpx") is None,
                                reason="httpx (orchestrace[llm]) is not installed")

runner = CliRunner()


def _shape(path: Path) -> list[Any]:
    return [(tr.trace_id, tr.outcome, [(e.type, e.agent, e.to, e.decision.action if e.decision else None)
                                       for e in tr.events]) for tr in ot.iter_traces(path)]


def test_llm_worker_episodes_shard_over_ray(ray_cluster: Any, tmp_path: Path) -> None:
    from llm_fakes import FaultyServer

    srv = FaultyServer(lambda i: "ok", text="Answer: 7").start()
    try:
        args = ["env", "run", "orchestrace/Orchestrate-small-v0", "-p", "fixed-fanout", "-n", "4", "--workers", "llm",
                "--base-url", srv.base_url, "--model", "fake"]
        one = runner.invoke(app, [*args, "-o", str(tmp_path / "one.jsonl")])
        assert one.exit_code == 0, one.output
        n_calls = len(srv.requests)
        two = runner.invoke(app, [*args, "--ray", "2", "--ray-min-work", "0", "-o", str(tmp_path / "two.jsonl")])
        assert two.exit_code == 0, two.output
    finally:
        srv.stop()
    assert len(srv.requests) == 2 * n_calls  # the shards' workers made the calls, each once
    a, b = _shape(tmp_path / "one.jsonl"), _shape(tmp_path / "two.jsonl")
    assert len(a) == 4 and a == b
