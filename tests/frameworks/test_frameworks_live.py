"""Live capture from real frameworks against the real local model (no mocks of the frameworks).

Each test runs one example's command line once (``main([...])``: a small team, recorded,
validated, measured, reported) and holds the recorded trace against the framework's own
record: the Agents SDK's spans, LangGraph's stream of node updates, AG2's
``groupchat.messages`` and usage summary. The model is weak, so the teams are deterministic
in structure (forced tool calls, a hand-off as the only tool, routing on state,
round-robin speakers) and nothing here checks what the model said.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from orchestrace import load
from orchestrace.llm.local import LocalServer
from orchestrace.vocab import Decision, EventType


def _need(module: str, extra: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: pip install 'orchestrace[{extra}]'")


def _run(example: Callable[[str], ModuleType], name: str, srv: LocalServer, out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = example(name).main(["--base-url", srv.base_url or "", "--out", str(out)])
    return summary


def _delegations(path: str) -> list[str]:
    return [e.decision.action.split(":", 1)[1] for e in load(path).events
            if e.type is EventType.ORCHESTRATOR_DECISION and e.decision is not None
            and e.decision.kind is Decision.DELEGATE]


def _check_common(s: dict[str, Any]) -> None:
    assert s["valid"], s["problems"]
    assert s["recorded"]["stops"] == 1
    assert "capture/dropped_callbacks" not in load(s["trace"]).metrics  # every callback was recorded
    page = Path(s["report"]).read_text()
    assert page.startswith("<!doctype html>") and 'id="payload"' in page
    for key, theirs in s["framework"].items():
        assert s["recorded"][key] == theirs, (key, s["recorded"], s["framework"])


def test_openai_agents_handoff_and_tool(local_llm: LocalServer, example: Any, tmp_path: Path) -> None:
    _need("agents", "openai-agents")
    s = _run(example, "openai_agents_team", local_llm, tmp_path)
    _check_common(s)
    assert s["framework"]["delegations"] == 1 and s["framework"]["tool_calls"] == 1  # forced: one hand-off, one add
    assert _delegations(s["trace"]) == ["Calculator"]
    tr = load(s["trace"])
    assert {e.agent for e in tr.events} == {"Triage", "Calculator"}
    assert [e.to for e in tr.events if e.type is EventType.SPAWN] == ["Calculator"]
    assert [e.tool for e in tr.events if e.type is EventType.TOOL_CALL] == ["add"]
    assert all(e.tokens_in and e.tokens_out for e in tr.events if e.type is EventType.MESSAGE and e.to is None)


def test_langgraph_nodes_routing_and_tool_node(local_llm: LocalServer, example: Any, tmp_path: Path) -> None:
    _need("langgraph", "langgraph")
    _need("langchain_openai", "langgraph")
    s = _run(example, "langgraph_team", local_llm, tmp_path)
    _check_common(s)
    assert s["nodes"] == ["planner", "calculator", "tools", "writer"]  # the route on state sends digits to the calculator
    assert _delegations(s["trace"]) == [n for n in s["nodes"] if n != "tools"]
    tr = load(s["trace"])
    assert {e.agent for e in tr.events} == {"LangGraph", "planner", "calculator", "writer"}
    calls = [e for e in tr.events if e.type is EventType.TOOL_CALL]
    assert [(e.agent, e.tool) for e in calls] == [("calculator", "add")]


def test_ag2_groupchat_speakers_and_termination(local_llm: LocalServer, example: Any, tmp_path: Path) -> None:
    _need("autogen", "ag2")
    s = _run(example, "ag2_groupchat", local_llm, tmp_path)
    _check_common(s)
    assert s["speakers"] == ["user", "planner", "calculator", "executor", "writer"]  # round robin, max_round=5
    assert _delegations(s["trace"]) == s["speakers"][1:]
    assert s["termination"] == "Maximum rounds (5) reached"
    tr = load(s["trace"])
    assert {e.agent for e in tr.events} == {"chat_manager", *s["speakers"]}
    stop = [e for e in tr.events if e.decision is not None and e.decision.kind is Decision.STOP]
    assert [(e.agent, e.content) for e in stop] == [("chat_manager", s["termination"])]
    assert [(e.agent, e.tool) for e in tr.events if e.type is EventType.TOOL_CALL] == [("executor", "add")]
