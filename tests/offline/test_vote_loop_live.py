"""The LangGraph vote loop example, with a learned gate, against the real local model server
(the repository conftest's shared ``local_llm``). Nothing here checks what the model said: only
that the gate drove the loop (width per round, its decision after every round, the round limit)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from synthetic_runs import structured_runs

from orchestrace.llm.local import LocalServer
from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.offline import fit_gate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_vote_loop.py"


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("example_langgraph_vote_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_langgraph_vote_loop_stops_where_the_gate_says(local_llm: LocalServer, tmp_path: Path) -> None:
    for module, extra in (("langgraph", "langgraph"), ("langchain_openai", "langgraph")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: pip install 'orchestrace[{extra}]'")
    gate, _ = fit_gate(structured(T=200, R=3, W=2, seed=0), classes=("linear",), widths=[2])
    path = gate.save(tmp_path / "run")
    s = _example().main(["--gate", str(path), "--base-url", local_llm.base_url or "", "--tasks", "1"])
    (t,) = s["tasks"]
    n = len(t["rounds"])
    assert 1 <= n <= gate.max_rounds and t["llm_calls"] == n * gate.width
    assert all(len(r) == gate.width for r in t["rounds"])
    assert len(t["decisions"]) == n and t["decisions"][-1]["stop"]
    assert not any(d["stop"] for d in t["decisions"][:-1])  # it went on exactly until the gate said stop
    for k in range(n):  # each routing decision is the gate's own on the evidence of that round
        grids = {g: t[g][:k + 1] for g in ("logprobs", "completion_tokens", "prompt_tokens")}
        assert gate.decide(t["rounds"][:k + 1], price=s["price"], **grids).stop == t["decisions"][k]["stop"]
