"""The forced-tool-call shim: request rewriting and answer conversion (no server needed)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.frameworks._toolcalls import rewrite_request, to_tool_calls

ADD = {"type": "function", "function": {"name": "add", "description": "Add.",
                                        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}
MUL = {"type": "function", "function": {"name": "mul", "parameters": {"type": "object"}}}


def test_history_is_flattened_for_a_toolless_template() -> None:
    body = {"messages": [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "2+"}, {"type": "text", "text": "3?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "5"},
    ]}
    out, forced = rewrite_request(body)
    assert not forced and "response_format" not in out
    assert out["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "content": 'called add({"a": 2})'},
        {"role": "user", "content": "result of add: 5"},
    ]


def test_trailing_assistant_turn_is_answered_not_continued() -> None:
    out, _ = rewrite_request({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})
    assert out["messages"][-1] == {"role": "user", "content": "Go on."}


def test_required_constrains_to_any_tool_and_named_to_one() -> None:
    out, forced = rewrite_request({"messages": [], "tools": [ADD, MUL], "tool_choice": "required"})
    schema = out["response_format"]["json_schema"]["schema"]
    assert forced and [o["properties"]["name"]["const"] for o in schema["anyOf"]] == ["add", "mul"]
    assert "tools" not in out and "tool_choice" not in out
    out, forced = rewrite_request({"messages": [], "tools": [ADD, MUL],
                                   "tool_choice": {"type": "function", "function": {"name": "mul"}}})
    assert forced and out["response_format"]["json_schema"]["schema"]["properties"]["name"] == {"const": "mul"}


def test_auto_none_and_streaming_are_not_forced() -> None:
    for extra in ({"tool_choice": "auto"}, {"tool_choice": "none"}, {}, {"tool_choice": "required", "stream": True}):
        out, forced = rewrite_request({"messages": [], "tools": [ADD], **extra})
        assert not forced and "tools" not in out and "response_format" not in out


def test_answer_becomes_tool_calls_and_a_cut_answer_stays_text() -> None:
    ok = {"choices": [{"message": {"role": "assistant", "content": '{"name": "add", "arguments": {"a": 1}}'},
                       "finish_reason": "stop"}], "usage": {"prompt_tokens": 3}}
    got = to_tool_calls(ok, 7)
    msg = got["choices"][0]["message"]
    assert msg["content"] is None and got["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["tool_calls"] == [{"id": "call_7", "type": "function",
                                  "function": {"name": "add", "arguments": '{"a": 1}'}}]
    assert got["usage"] == {"prompt_tokens": 3}
    cut = {"choices": [{"message": {"role": "assistant", "content": '{"name": "ad'}, "finish_reason": "length"}]}
    assert to_tool_calls(json.loads(json.dumps(cut)), 1) == cut


_content = st.one_of(st.none(), st.text(max_size=20), st.lists(st.fixed_dictionaries({"text": st.text(max_size=5)}),
                                                                 max_size=3))
_call = st.fixed_dictionaries({"id": st.text(max_size=4), "function": st.fixed_dictionaries(
    {"name": st.text(max_size=6), "arguments": st.text(max_size=10)})})
_msg = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user", "assistant"]), "content": _content}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": _content, "tool_calls": st.lists(_call, max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"), "content": _content, "tool_call_id": st.text(max_size=4)}),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_msg, max_size=12), st.sampled_from([None, "auto", "required", "none"]))
def test_any_history_becomes_plain_text_turns(messages: list[dict[str, Any]], choice: str | None) -> None:
    body: dict[str, Any] = {"messages": messages, "tools": [ADD]}
    if choice is not None:
        body["tool_choice"] = choice
    out, forced = rewrite_request(body)
    assert forced == (choice == "required")
    roles = [m["role"] for m in out["messages"]]
    assert set(roles) <= {"system", "user", "assistant"}
    assert all(isinstance(m["content"], str) and set(m) == {"role", "content"} for m in out["messages"])
    assert not roles or roles[-1] != "assistant"
    n_in = len(messages) + (1 if messages and messages[-1]["role"] == "assistant" else 0) + (1 if forced else 0)
    assert len(out["messages"]) == n_in
