"""Codex importer: the real sample, and a rollout with tools, token counts and a spawned child."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from interop_helpers import assert_valid, write_jsonl

from orchestrace.importers import import_traces


def test_sample_rollout_golden(fx: Path) -> None:
    res = import_traces("codex", [fx / "codex" / "sample_codex_session.jsonl"])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.trace_id == "test-session" and tr.agents == ["main"]
    assert [e.type.value for e in tr.events] == ["human_intervention", "message"]
    assert res.report.totals() == {"mapped": 2, "structure": 1, "skipped": 0, "unknown": 0, "unreadable": 0}
    assert [e.source for e in tr.events] == ["sample_codex_session.jsonl:2", "sample_codex_session.jsonl:3"]


def _ts(s: float) -> str:
    return f"2025-05-01T10:00:{s:06.3f}Z"


def _item(t: float, payload: dict, kind: str = "response_item") -> dict:
    return {"timestamp": _ts(t), "type": kind, "payload": payload}


def _tokens(t: float, i: int, o: int) -> dict:
    return _item(t, {"type": "token_count", "info": {"last_token_usage": {"input_tokens": i, "output_tokens": o}}}, "event_msg")


def _rollouts(tmp: Path) -> Path:
    parent = [
        _item(0, {"id": "P", "source": "cli", "cli_version": "0.50.0"}, "session_meta"),
        _item(0.1, {"model": "gpt-5"}, "turn_context"),
        _item(0.2, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x"}]}),
        _item(1, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}),
        _item(1.1, {"type": "user_message", "message": "fix the bug"}, "event_msg"),
        _item(3, {"type": "reasoning", "summary": [{"type": "summary_text", "text": "look first"}]}),
        _item(3.5, {"type": "function_call", "name": "shell", "arguments": "{\"cmd\": \"ls\"}", "call_id": "c1"}),
        _item(3.6, {"type": "function_call", "name": "spawn_agent", "arguments": "{\"message\": \"write tests\", \"agent_type\": \"worker\"}", "call_id": "c2"}),
        _tokens(3.7, 1000, 50),
        _item(4, {"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
        _item(4.1, {"type": "function_call_output", "call_id": "c2", "output": "{\"agent_id\": \"C\"}"}),
        _item(5, {"type": "function_call", "name": "wait", "arguments": "{\"ids\": [\"C\"]}", "call_id": "c3"}),
        _tokens(5.1, 1200, 20),
        _item(20, {"type": "function_call_output", "call_id": "c3", "output": "done"}),
        _item(22, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "fixed"}]}),
        _tokens(22.1, 1500, 30),
        _item(23, {"type": "task_complete"}, "event_msg"),
    ]
    child = [
        _item(4.05, {"id": "C", "source": {"subagent": {"thread_spawn": {"parent_thread_id": "P", "depth": 1}}}}, "session_meta"),
        _item(4.06, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "write tests"}]}),
        _item(6, {"type": "function_call", "name": "apply_patch", "arguments": "{}", "call_id": "k1"}),
        _tokens(6.1, 800, 40),
        _item(7, {"type": "function_call_output", "call_id": "k1", "output": "ok"}),
        _item(15, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "tests written"}]}),
        _tokens(15.1, 900, 60),
    ]
    write_jsonl(tmp / "rollout-child.jsonl", child)
    return write_jsonl(tmp / "rollout-parent.jsonl", parent)


def test_rollout_with_tools_tokens_and_spawned_child(tmp_path: Path) -> None:
    res = import_traces("codex", [_rollouts(tmp_path)])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.trace_id == "P" and tr.agents == ["main", "C"]
    t = Counter(e.type.value for e in tr.events)
    assert t == {"human_intervention": 1, "message": 3, "tool_call": 3, "tool_result": 3, "orchestrator_decision": 1,
                 "spawn": 1, "return": 1}
    assert tr.costs["tokens"] == 1050 + 1220 + 1530 + 840 + 960
    sp = next(e for e in tr.events if e.type.value == "spawn")
    ret = next(e for e in tr.events if e.type.value == "return")
    assert sp.to == "C" and ret.agent == "C" and ret.to == "main"
    assert all(sp.t <= e.t <= ret.t for e in tr.events if e.agent == "C")
    wait = next(e for e in tr.events if e.type.value == "tool_result" and e.tool == "wait")
    assert any(d.src == ret.id and d.dst == wait.id for d in tr.edges)  # the wait consumes the return
    rep = res.report
    assert rep.counts["event_msg/user_message"]["skipped"] == 1
    assert rep.counts["event_msg/token_count"]["structure"] == 5
    assert sum(rep.totals().values()) == 17 + 7


def test_missing_child_rollout_warns(tmp_path: Path) -> None:
    p = _rollouts(tmp_path)
    (tmp_path / "rollout-child.jsonl").unlink()
    res = import_traces("codex", [p])
    assert_valid(res.traces[0])
    assert [x.code for x in res.report.problems] == ["import.missing-subagent"]


def test_garbage_lines_are_located(tmp_path: Path, fx: Path) -> None:
    raw = (fx / "codex" / "sample_codex_session.jsonl").read_text().splitlines()
    raw.insert(1, "{not json")
    raw.insert(2, json.dumps([1, 2]))
    raw.append(json.dumps({"timestamp": _ts(9), "type": "mystery", "payload": {}}))
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(raw) + "\n")
    res = import_traces("codex", [f])
    assert_valid(res.traces[0])
    assert {(p.path, p.code) for p in res.report.problems} == {
        ("c.jsonl:2", "import.not-json"), ("c.jsonl:3", "import.not-object"), ("c.jsonl:6", "import.unknown-record")}
