"""Regenerate the importer / CLI bad-input corpus and its manifest EXPECTED.json (run from the repo root).

    python tests/data/bad_cli/_make_cli_corpus.py

Every case is a small, hand-made hostile or messy input and the command to run on it.
EXPECTED.json maps the case name to ``argv`` (``{f}`` is the case's file, ``{out}`` an
output path in a fresh temporary folder, ``{bad}`` the validator corpus tests/data/bad),
optional ``env``, the problem ``code`` that must appear in the output (or null) and the
exit status (README: 0 ok, 1 invalid input, 2 usage or I/O). The test that replays it is
tests/cli/test_cli_bad_input.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TS = "2026-01-01T00:00:{:02d}Z"


# ----------------------------------------------------------------------------- seeds
def claude(*, usage: Any = None, text: str = "ok", result_t: int = 4) -> list[dict[str, Any]]:
    u = usage if usage is not None else {"input_tokens": 10, "output_tokens": 5}
    return [
        {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": TS.format(0),
         "message": {"role": "user", "content": "do it"}},
        {"type": "assistant", "sessionId": "s", "uuid": "u2", "parentUuid": "u1", "timestamp": TS.format(2),
         "message": {"id": "m1", "role": "assistant", "model": "x", "usage": u,
                     "content": [{"type": "text", "text": text},
                                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "sessionId": "s", "uuid": "u3", "parentUuid": "u2", "timestamp": TS.format(result_t),
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a b"}]}},
        {"type": "assistant", "sessionId": "s", "uuid": "u4", "parentUuid": "u3", "timestamp": TS.format(6),
         "message": {"id": "m2", "role": "assistant", "model": "x", "usage": {"input_tokens": 3, "output_tokens": 1},
                     "content": [{"type": "text", "text": "done"}]}},
    ]


def codex(*, usage: Any = None) -> list[dict[str, Any]]:
    u = usage if usage is not None else {"input_tokens": 4, "output_tokens": 2}
    return [
        {"timestamp": TS.format(0), "type": "session_meta", "payload": {"id": "r1", "cwd": "/x"}},
        {"timestamp": TS.format(1), "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
        {"timestamp": TS.format(2), "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"}},
        {"timestamp": TS.format(3), "type": "event_msg",
         "payload": {"type": "token_count", "info": {"last_token_usage": u, "total_token_usage": u}}},
        {"timestamp": TS.format(4), "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}},
        {"timestamp": TS.format(5), "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
    ]


def attr(k: str, v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        val: dict[str, Any] = {"boolValue": v}
    elif isinstance(v, int):
        val = {"intValue": str(v)}
    elif isinstance(v, float):
        val = {"doubleValue": v}
    elif isinstance(v, dict):
        val = v
    else:
        val = {"stringValue": v}
    return {"key": k, "value": val}


def spans(**over: Any) -> list[dict[str, Any]]:
    """An agent span with an LLM call and a tool call below it; ``over`` patches span 1 (the LLM call)."""
    ns = 1_700_000_000_000_000_000
    out = [
        {"traceId": "ab" * 16, "spanId": "01" * 8, "name": "invoke_agent planner", "startTimeUnixNano": str(ns),
         "endTimeUnixNano": str(ns + 5 * 10**9), "attributes": [attr("gen_ai.operation.name", "invoke_agent")]},
        {"traceId": "ab" * 16, "spanId": "02" * 8, "parentSpanId": "01" * 8, "name": "chat",
         "startTimeUnixNano": str(ns + 10**9), "endTimeUnixNano": str(ns + 2 * 10**9),
         "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.usage.input_tokens", 12),
                        attr("gen_ai.usage.output_tokens", 3)]},
        {"traceId": "ab" * 16, "spanId": "03" * 8, "parentSpanId": "01" * 8, "name": "execute_tool search",
         "startTimeUnixNano": str(ns + 2 * 10**9), "endTimeUnixNano": str(ns + 3 * 10**9),
         "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "search")]},
    ]
    out[1].update(over)
    return out


def otlp(sp: list[dict[str, Any]]) -> bytes:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "svc")]},
                                          "scopeSpans": [{"spans": sp}]}]}).encode()


def jaeger(**over: Any) -> bytes:
    s2 = {"traceID": "t1", "spanID": "s2", "operationName": "chat", "startTime": 1700000001000000, "duration": 1000,
          "references": [{"refType": "CHILD_OF", "spanID": "s1"}], "processID": "p1",
          "tags": [{"key": "gen_ai.usage.input_tokens", "value": 5}]}
    s2.update(over)
    return json.dumps({"data": [{"traceID": "t1", "processes": {"p1": {"serviceName": "svc"}}, "spans": [
        {"traceID": "t1", "spanID": "s1", "operationName": "invoke_agent a", "startTime": 1700000000000000,
         "duration": 5000000, "processID": "p1", "tags": [{"key": "gen_ai.operation.name", "value": "invoke_agent"}]},
        s2]}]}).encode()


def agents(usage: Any = None, started: Any = "2026-01-01T00:00:01Z", extra: list[Any] | None = None) -> bytes:
    u = usage if usage is not None else {"input_tokens": 9, "output_tokens": 3}
    items: list[Any] = [
        {"object": "trace", "id": "trace_1", "workflow_name": "w"},
        {"object": "trace.span", "id": "span_1", "trace_id": "trace_1", "parent_id": None,
         "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:05Z",
         "span_data": {"type": "agent", "name": "triage"}},
        {"object": "trace.span", "id": "span_2", "trace_id": "trace_1", "parent_id": "span_1",
         "started_at": started, "ended_at": "2026-01-01T00:00:02Z",
         "span_data": {"type": "generation", "usage": u}},
    ]
    return json.dumps({"data": items + (extra or [])}).encode()


def lines(recs: list[Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in recs)


def deep(n: int) -> bytes:
    """``n`` nested arrays (raw bytes: the json module cannot write them)."""
    return b"[" * n + b"1" + b"]" * n


# ----------------------------------------------------------------------------- cases
def build() -> dict[str, tuple[bytes | None, list[str], str | None, int, dict[str, str]]]:
    """name → (file bytes or None, argv, expected code or None, exit status, env)."""
    c: dict[str, tuple[bytes | None, list[str], str | None, int, dict[str, str]]] = {}

    def imp(name: str, data: bytes | None, fmt: str, code: str | None, exit: int, env: dict[str, str] | None = None,
            *extra: str) -> None:
        c[name] = (data, ["import", fmt, "{f}", "-o", "{out}.jsonl", *extra], code, exit, env or {})

    # --- Claude Code: reading layer
    cc = lines(claude())
    imp("cc_ok.jsonl", cc, "claude-code", None, 0)
    imp("cc_bom.jsonl", b"\xef\xbb\xbf" + cc, "claude-code", "import.bom", 0)
    imp("cc_crlf.jsonl", cc.replace(b"\n", b"\r\n"), "claude-code", None, 0)
    imp("cc_invalid_utf8.jsonl", lines(claude(text="AAAXAAA")).replace(b"AAAXAAA", b"AAA\xff\xfeAAA"),
        "claude-code", "import.invalid-utf8", 0)
    imp("cc_deep_line.jsonl", cc + b'{"type": "user", "x": ' + deep(3000) + b"}\n",
        "claude-code", "import.too-deep", 1)
    imp("cc_not_json_line.jsonl", cc.replace(b"\n", b"\n{not json}\n", 1), "claude-code", "import.not-json", 1)
    imp("cc_truncated_last_line.jsonl", cc + b'{"type": "assistant", "sessionId"', "claude-code", "import.truncated", 1)
    imp("cc_array_line.jsonl", cc + b"[1, 2, 3]\n", "claude-code", "import.not-object", 1)
    imp("cc_type_is_list.jsonl", cc + lines([{"type": ["user"], "sessionId": "s", "timestamp": TS.format(9)}]),
        "claude-code", "import.bad-field", 1)
    imp("cc_block_id_is_object.jsonl", lines(claude()[:1] + [dict(claude()[1], message=dict(
        claude()[1]["message"], content=[{"type": "tool_use", "id": {"x": 1}, "name": "Bash", "input": {}}]))]),
        "claude-code", "import.bad-field", 1)
    imp("cc_line_over_cap.jsonl", cc + lines([{"type": "user", "pad": "x" * 5000}]), "claude-code",
        "import.line-too-large", 1, {"ORCHESTRACE_MAX_LINE_BYTES": "4096"})
    imp("cc_newline_free.jsonl", b'{"type": "user", "pad": "' + b"x" * 300_000, "claude-code",
        "import.line-too-large", 1, {"ORCHESTRACE_MAX_LINE_BYTES": "65536"})
    imp("cc_bad_line_cap_env.jsonl", cc, "claude-code", "ORCHESTRACE_MAX_LINE_BYTES", 2,
        {"ORCHESTRACE_MAX_LINE_BYTES": "abc"})
    imp("cc_negative_line_cap_env.jsonl", cc, "claude-code", "ORCHESTRACE_MAX_LINE_BYTES", 2,
        {"ORCHESTRACE_MAX_LINE_BYTES": "-5"})
    imp("cc_bad_file_cap_env.jsonl", cc, "claude-code", "ORCHESTRACE_MAX_FILE_BYTES", 2,
        {"ORCHESTRACE_MAX_FILE_BYTES": "1e9"})
    imp("cc_file_over_cap.jsonl", cc, "claude-code", "io.too-large", 2, {"ORCHESTRACE_MAX_FILE_BYTES": "100"})
    imp("cc_nul_bytes.jsonl", b"\x00" * 5000, "claude-code", "io.not-text", 2)
    imp("cc_empty.jsonl", b"", "claude-code", "import.empty", 1)
    imp("cc_no_timestamps.jsonl", lines([{k: v for k, v in r.items() if k != "timestamp"} for r in claude()]),
        "claude-code", "import.no-timestamp", 1)
    # --- Claude Code: values (warned and counted, never silent)
    imp("cc_usage_negative.jsonl", lines(claude(usage={"input_tokens": -5, "output_tokens": 5})), "claude-code",
        "import.bad-usage", 0)
    imp("cc_usage_string.jsonl", lines(claude(usage={"input_tokens": "12", "output_tokens": 5})), "claude-code",
        "import.coerced", 0)
    imp("cc_usage_1e300.jsonl", lines(claude(usage={"input_tokens": 1e300, "output_tokens": 5})), "claude-code",
        "import.bad-usage", 0)
    imp("cc_usage_fraction.jsonl", lines(claude(usage={"input_tokens": 12.5, "output_tokens": 5})), "claude-code",
        "import.coerced", 0)
    imp("cc_usage_bool.jsonl", lines(claude(usage={"input_tokens": True, "output_tokens": 5})), "claude-code",
        "import.bad-usage", 0)
    imp("cc_usage_400_digits.jsonl", lines(claude(usage={"input_tokens": 1, "output_tokens": 5})).replace(
        b'"input_tokens": 1,', b'"input_tokens": ' + b"9" * 400 + b","), "claude-code", "import.bad-usage", 0)
    imp("cc_result_before_call.jsonl", lines(claude(result_t=1)), "claude-code", "import.end-before-start", 0)
    imp("cc_timestamp_400_digits.jsonl", lines(claude()).replace(b'"2026-01-01T00:00:06Z"', b"9" * 400),
        "claude-code", "import.no-timestamp", 0)

    # --- Codex
    cx = lines(codex())
    imp("codex_ok.jsonl", cx, "codex", None, 0)
    imp("codex_bom.jsonl", b"\xef\xbb\xbf" + cx, "codex", "import.bom", 0)
    imp("codex_invalid_utf8.jsonl", cx.replace(b'"text": "hi"', b'"text": "h\xc3i"'), "codex", "import.invalid-utf8", 0)
    imp("codex_deep_line.jsonl", cx + b'{"type": "event_msg", "payload": ' + deep(5000) + b"}\n",
        "codex", "import.too-deep", 1)
    imp("codex_truncated.jsonl", cx + b'{"timestamp": "2026', "codex", "import.truncated", 1)
    imp("codex_type_is_object.jsonl", cx + lines([{"timestamp": TS.format(9), "type": "response_item",
                                                   "payload": {"type": {"a": 1}}}]), "codex", "import.bad-field", 1)
    imp("codex_usage_negative.jsonl", lines(codex(usage={"input_tokens": -5, "output_tokens": 2})), "codex",
        "import.bad-usage", 0)
    imp("codex_usage_string.jsonl", lines(codex(usage={"input_tokens": "12", "output_tokens": 2})), "codex",
        "import.coerced", 0)
    imp("codex_usage_1e300.jsonl", lines(codex(usage={"input_tokens": 1e300, "output_tokens": 2})), "codex",
        "import.bad-usage", 0)
    imp("codex_is_claude.jsonl", cc, "codex", "import.wrong-format", 1)
    imp("codex_empty.jsonl", b"\n\n", "codex", "import.empty", 1)

    # --- OTLP
    imp("otlp_ok.json", otlp(spans()), "otlp", None, 0)
    imp("otlp_bom.json", b"\xef\xbb\xbf" + otlp(spans()), "otlp", "import.bom", 0)
    imp("otlp_invalid_utf8.json", otlp(spans(name="chat XYZ")).replace(b"XYZ", b"\xff\xfe"), "otlp",
        "import.invalid-utf8", 0)
    imp("otlp_deep.json", b'{"resourceSpans": ' + deep(3000) + b"}", "otlp", "import.too-deep", 1)
    imp("otlp_deep_attribute.json", otlp(spans(attributes=[attr("x", {"arrayValue": {"values": ["DEEP"]}})])).replace(
        b'"DEEP"', deep(400)), "otlp", "import.too-deep", 1)
    imp("otlp_timestamp_400_digits.json", otlp(spans(startTimeUnixNano="1" * 400)), "otlp", "import.bad-span", 1)
    imp("otlp_timestamp_not_a_number.json", otlp(spans(startTimeUnixNano="soon")), "otlp", "import.bad-span", 1)
    imp("otlp_self_parent.json", otlp(spans(parentSpanId="02" * 8)), "otlp", "import.parent-cycle", 0)
    cyc = spans()
    cyc[0]["parentSpanId"] = "03" * 8
    cyc[2]["parentSpanId"] = "01" * 8
    imp("otlp_parent_cycle.json", otlp(cyc), "otlp", "import.parent-cycle", 0)
    imp("otlp_end_before_start.json", otlp(spans(endTimeUnixNano="1700000000500000000")), "otlp",
        "import.end-before-start", 0)
    imp("otlp_usage_negative.json", otlp(spans(attributes=[attr("gen_ai.usage.input_tokens", -5)])), "otlp",
        "import.bad-usage", 0)
    imp("otlp_usage_string.json", otlp(spans(attributes=[attr("gen_ai.usage.input_tokens", "12")])), "otlp",
        "import.coerced", 0)
    imp("otlp_usage_1e300.json", otlp(spans(attributes=[attr("gen_ai.usage.input_tokens", 1e300)])), "otlp",
        "import.bad-usage", 0)
    imp("otlp_usage_nan_string.json", otlp(spans(attributes=[attr("gen_ai.usage.input_tokens", "NaN")])), "otlp",
        "import.bad-usage", 0)
    imp("otlp_cost_infinite.json", otlp(spans(attributes=[attr("gen_ai.operation.name", "chat"),
                                                          attr("gen_ai.usage.cost", "inf")])), "otlp",
        "import.bad-usage", 0)
    imp("otlp_operation_is_object.json", otlp(spans(attributes=[attr("gen_ai.operation.name",
                                                                     {"kvlistValue": {"values": []}})])), "otlp", None, 0)
    imp("otlp_span_is_number.json", otlp([*spans(), 7]), "otlp", "import.bad-span", 1)
    imp("otlp_resource_is_list.json", json.dumps({"resourceSpans": [{"resource": [1], "scopeSpans": [
        {"spans": spans()}]}]}).encode(), "otlp", None, 0)
    imp("otlp_not_json.json", b"{resourceSpans: nope", "otlp", "import.not-json", 1)
    imp("otlp_wrong_shape.json", b'{"foo": 1}', "otlp", "import.wrong-format", 1)
    imp("otlp_is_jaeger.json", jaeger(), "otlp", "import.wrong-format", 1)
    imp("otlp_empty.json", b"", "otlp", "import.not-json", 1)
    imp("otlp_nul_bytes.json", b"\x00" * 3000, "otlp", "io.not-text", 2)

    # --- Jaeger
    imp("jaeger_ok.json", jaeger(), "jaeger", None, 0)
    imp("jaeger_start_1e300.json", jaeger(startTime=1e300), "jaeger", "import.bad-span", 1)
    imp("jaeger_start_is_string.json", jaeger(startTime="now"), "jaeger", "import.bad-span", 1)
    imp("jaeger_negative_duration.json", jaeger(duration=-5_000_000), "jaeger", "import.end-before-start", 0)
    imp("jaeger_tags_not_a_list.json", jaeger(tags={"a": 1}), "jaeger", None, 0)
    imp("jaeger_invalid_utf8.json", jaeger(operationName="chat XYZ").replace(b"XYZ", b"\xed\xa0\x80"), "jaeger",
        "import.invalid-utf8", 0)

    # --- OpenAI Agents SDK
    imp("agents_ok.json", agents(), "openai-agents", None, 0)
    imp("agents_usage_negative.json", agents(usage={"input_tokens": -5, "output_tokens": 3}), "openai-agents",
        "import.bad-usage", 0)
    imp("agents_usage_string.json", agents(usage={"input_tokens": "12", "output_tokens": 3}), "openai-agents",
        "import.coerced", 0)
    imp("agents_started_at_garbage.json", agents(started="yesterday"), "openai-agents", "import.bad-span", 1)
    imp("agents_started_at_huge_number.json", agents(started=10**400), "openai-agents", "import.bad-span", 1)
    imp("agents_item_not_object.json", agents(extra=[3]), "openai-agents", "import.not-object", 1)

    # --- chat transcripts (AG2 group chats, Who&When, Magentic-One, plain message lists)
    def chat(*extra: Any, wrap: bool = True) -> bytes:
        turns: list[Any] = [{"role": "user", "name": "user_proxy", "content": "count the primes below 20"},
                            {"role": "assistant", "name": "Coder", "content": None, "tool_calls": [
                                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}]},
                            {"role": "tool", "tool_call_id": "c1", "content": "8"},
                            {"role": "assistant", "name": "Critic", "content": "8 is right. TERMINATE"}]
        turns = turns[:3] + list(extra) + turns[3:]
        return json.dumps({"history": turns, "question": "q", "level": 1} if wrap else turns).encode()

    imp("chat_ok.json", chat(), "chat", None, 0)
    imp("chat_auto.json", chat(), "auto", None, 0)
    imp("chat_plain_list.json", chat(wrap=False), "chat", None, 0)
    imp("chat_missing_name.json", chat({"content": "who said this?"}), "chat", "chat.no-speaker", 0)
    imp("chat_empty_content.json", chat({"role": "assistant", "name": "Coder", "content": ""}), "chat",
        "chat.empty-content", 0)
    imp("chat_content_is_list_of_numbers.json", chat({"role": "assistant", "name": "Coder", "content": [1, 2]}),
        "chat", "chat.non-string-content", 0)
    imp("chat_content_is_object.json", chat({"role": "assistant", "name": "Coder", "content": {"a": 1}}), "chat",
        "chat.non-string-content", 0)
    imp("chat_content_is_number.json", chat({"role": "assistant", "name": "Coder", "content": 3.5}), "chat",
        "chat.non-string-content", 0)
    imp("chat_orphan_tool_result.json", chat({"role": "tool", "tool_call_id": "nope", "content": "?"}), "chat",
        "chat.orphan-tool-result", 0)
    imp("chat_call_id_is_list.json", chat({"role": "tool", "tool_call_id": ["c1"], "content": "?"}), "chat",
        "chat.bad-call-id", 0)
    imp("chat_name_is_number.json", chat({"role": "assistant", "name": 7, "content": "hi"}), "chat",
        "import.coerced", 0)
    imp("chat_name_is_list.json", chat({"role": "assistant", "name": ["x"], "content": "hi"}), "chat",
        "$.history[3].name", 1)
    imp("chat_role_is_object.json", chat({"role": {"a": 1}, "content": "hi"}), "chat", "$.history[3].role", 1)
    imp("chat_turn_is_number.json", chat(5), "chat", "$.history[3]", 1)
    imp("chat_tool_call_is_string.json", chat({"role": "assistant", "name": "Coder", "tool_calls": ["run"]}), "chat",
        "chat.bad-tool-call", 1)
    imp("chat_bad_mistake_step.json", json.dumps(dict(json.loads(chat()), mistake_step="late")).encode(), "chat",
        "chat.bad-mistake-step", 0, None, "--labels")  # labels are read only when asked for
    imp("chat_history_is_string.json", b'{"history": "user: hi"}', "chat", "$.history", 1)
    imp("chat_no_turn_list.json", b'{"question": "q", "answer": 1}', "chat", "import.wrong-format", 1)
    imp("chat_top_level_string.json", b'"hello"', "chat", "import.wrong-format", 1)
    imp("chat_top_level_number.json", b"42", "chat", "import.wrong-format", 1)
    imp("chat_empty_list.json", b"[]", "chat", "chat.no-turns", 1)
    imp("chat_all_turns_unreadable.json", b"[1, 2, 3]", "chat", "chat.bad-turn", 1)
    imp("chat_deep_content.json", chat({"role": "assistant", "name": "Coder", "content": "DEEP"}).replace(
        b'"DEEP"', deep(3000)), "chat", "import.too-deep", 1)
    imp("chat_invalid_utf8.json", chat({"role": "assistant", "name": "Coder", "content": "XYZ"}).replace(
        b"XYZ", b"\xff\xfe"), "chat", "import.invalid-utf8", 0)
    imp("chat_lines_bad_line.jsonl", lines(json.loads(chat(wrap=False))) + b"{oops\n", "chat", "import.not-json", 1)
    imp("chat_lines_ok.jsonl", lines(json.loads(chat(wrap=False))), "auto", None, 0)
    imp("chat_estimate_tokens.json", chat(), "chat", "ceil(characters / 4)", 0, None, "--report", "--estimate-tokens")
    imp("chat_estimate_tokens_wrong_format.json", otlp(spans()), "otlp", "--estimate-tokens", 2, None,
        "--estimate-tokens")
    imp("chat_file_over_cap.json", chat(), "chat", "io.too-large", 2, {"ORCHESTRACE_MAX_FILE_BYTES": "100"})
    imp("chat_lines_line_over_cap.jsonl", lines(json.loads(chat(wrap=False)) + [{"role": "user", "content": "x" * 5000}]),
        "chat", "import.line-too-large", 1, {"ORCHESTRACE_MAX_LINE_BYTES": "4096"})
    imp("chat_nul_bytes.json", b"\x00" * 3000, "chat", "io.not-text", 2)
    imp("chat_mad_text_trajectory.json", json.dumps([{"mas_name": "AG2", "llm_name": "m", "benchmark_name": "b",
                                                       "trace_id": 1, "trace": {"key": "k", "index": 1,
                                                                                "trajectory": "a: hi\nb: ok"},
                                                       "mast_annotation": {"1.1": 0}}]).encode(), "chat",
        "trace.trajectory", 1)
    imp("chat_orchestrator_not_a_speaker.json", chat(), "chat", "chat.orchestrator-not-a-speaker", 0, None,
        "--orchestrator", "Nobody")
    imp("chat_orchestrator_wrong_format.json", otlp(spans()), "otlp", "--orchestrator", 2, None,
        "--orchestrator", "x")
    imp("chat_agentchat_usage_negative.json", json.dumps([
        {"source": "user", "content": "go", "type": "TextMessage"},
        {"source": "a", "content": "ok", "type": "TextMessage", "models_usage": {"prompt_tokens": -3,
                                                                              "completion_tokens": 2}}]).encode(),
        "auto", "import.bad-usage", 0)
    imp("chat_agentchat_select_nobody.json", json.dumps([
        {"source": "user", "content": "go", "type": "TextMessage"},
        {"source": "mgr", "content": [], "type": "SelectSpeakerEvent"},
        {"source": "a", "content": "ok", "type": "TextMessage"}]).encode(), "chat", "$[1].content", 1)

    # --- auto and reference
    imp("auto_unknown.json", b'{"hello": "world"}', "auto", "import.unknown-format", 1)
    imp("auto_deep.json", deep(5000), "auto", "import.unknown-format", 1)
    imp("auto_binary.bin", bytes(range(256)) * 8, "auto", "import.unknown-format", 1)
    imp("auto_claude_bom.jsonl", b"\xef\xbb\xbf" + cc, "auto", "import.bom", 0)
    c["reference_cycle.json"] = (None, ["import", "reference", "{bad}/cycle.json", "-o", "{out}.jsonl"],
                                 "edge.cycle", 1, {})
    c["import_missing_file"] = (None, ["import", "otlp", "{out}-missing.json", "-o", "{out}.jsonl"],
                                "no such file", 2, {})
    c["import_bad_output_suffix"] = (otlp(spans()), ["import", "otlp", "{f}", "-o", "{out}.txt"], ".json or .jsonl", 2, {})
    c["import_dev_zero"] = (None, ["import", "claude-code", "/dev/zero", "-o", "{out}.jsonl"], "io.not-text", 2, {})

    # --- analysis commands: invalid traces refused unless --force (README exit codes)
    for cmd, extra in [("inspect", []), ("metrics", []), ("credit", ["--unit", "agent"]), ("reward", []),
                       ("convert", ["-o", "{out}.jsonl"]), ("export", []), ("report", ["-o", "{out}.html"])]:
        argv = [cmd, "{bad}/cycle.json", *extra] if cmd != "export" else ["export", "trl", "{bad}/cycle.json",
                                                                          "-o", "{out}.jsonl"]
        c[f"{cmd}_invalid_trace"] = (None, argv, "edge.cycle", 1, {})
    c["convert_parquet_invalid_trace"] = (None, ["convert", "{bad}/cycle.json", "--to", "parquet", "-o", "{out}"],
                                          "--force", 1, {})
    c["inspect_invalid_trace_forced"] = (None, ["inspect", "{bad}/time_backwards.json", "--force"], "--force", 0, {})
    c["credit_invalid_trace_forced"] = (None, ["credit", "{bad}/time_backwards.json", "--unit", "agent", "--force"],
                                        "--force", 0, {})
    c["credit_dangling_edge_forced_still_refused"] = (None, ["credit", "{bad}/dangling_edge.json", "--unit", "agent",
                                                             "--force"], "edge.dangling", 1, {})
    c["metrics_not_json"] = (None, ["metrics", "{bad}/not_json.json"], "json.malformed", 1, {})
    c["metrics_empty_names_file_once"] = (None, ["metrics", "{bad}/empty.json"], "json.empty", 1, {})
    t_huge = json.loads((HERE.parent / "reference" / "example_trace.json").read_text())
    for k, e in enumerate(t_huge["events"]):
        e["t"] = 2e307 * (k + 1)
    c["metrics_time_near_float_max.json"] = (json.dumps(t_huge).encode(), ["metrics", "{f}"], None, 0, {})
    c["metrics_write_time_near_float_max.json"] = (json.dumps(t_huge).encode(), ["metrics", "--write", "{f}"],
                                                   None, 0, {})
    huge = json.loads((HERE.parent / "reference" / "example_trace.json").read_text())
    huge["events"][1]["tokens_out"] = 7
    c["metrics_tokens_400_digits.json"] = (json.dumps(huge).encode().replace(b'"tokens_out": 7', b'"tokens_out": '
                                                                            + b"9" * 400), ["metrics", "{f}"],
                                           "cost.too-large", 1, {})
    c["inspect_missing_file"] = (None, ["inspect", "{out}-missing.json"], "no such file", 2, {})
    c["inspect_dev_zero"] = (None, ["inspect", "/dev/zero"], "io.not-text", 2, {})
    c["inspect_invalid_utf8"] = (None, ["inspect", "{bad}/invalid_utf8.json"], "json.invalid-utf8", 1, {})
    c["metrics_empty_folder"] = (None, ["metrics", "{out}"], "no such file", 2, {})
    c["credit_unknown_unit"] = (None, ["credit", "{bad}/bom_valid.json", "--unit", "planet"], "planet", 2, {})
    c["reward_missing_spec"] = (None, ["reward", "{bad}/bom_valid.json", "--spec", "{out}-missing.toml"], "spec", 2, {})
    c["convert_unwritable_output"] = (None, ["convert", "{bad}/bom_valid.json", "-o", "/proc/orchestrace-no.json"],
                                      "cannot write", 2, {})
    c["validate_bad_file_cap_env"] = (None, ["validate", "{bad}/bom_valid.json"], "ORCHESTRACE_MAX_FILE_BYTES", 2,
                                      {"ORCHESTRACE_MAX_FILE_BYTES": "abc"})
    c["validate_bom_is_a_warning"] = (None, ["validate", "{bad}/bom_valid.json"], "json.bom", 0, {})
    c["report_missing_extra_message_keeps_brackets"] = (None, ["report", "{bad}/bom_valid.json", "-o", "{out}.html",
                                                               "--credit", "planet"], "planet", 2, {})
    c["export_not_json"] = (None, ["export", "rllm", "{bad}/not_json.json", "-o", "{out}.jsonl"], "json.malformed",
                            1, {})
    # --- corpus, serve-local, llm run
    c["corpus_check_dev_zero"] = (None, ["corpus", "check", "/dev/zero"], "corpus.too-large", 2, {})
    c["corpus_check_missing"] = (None, ["corpus", "check", "{out}-missing.csv"], "corpus.not-found", 2, {})
    c["corpus_stats_not_a_csv"] = (None, ["corpus", "stats", "{bad}/invalid_utf8.json"], "corpus.", 1, {})
    c["serve_local_negative_threads"] = (None, ["serve-local", "--threads", "-1"], "threads", 2, {})
    c["serve_local_tiny_context"] = (None, ["serve-local", "--ctx", "1"], "ctx", 2, {})
    c["llm_run_no_endpoint"] = (None, ["llm", "run"], "--base-url", 2, {})
    c["llm_run_not_a_url"] = (None, ["llm", "run", "--base-url", "notaurl", "--model", "m"], "http://", 2, {})
    c["llm_run_zero_episodes"] = (None, ["llm", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "-n", "0"],
                                  "--episodes", 2, {})
    c["llm_run_dead_endpoint"] = (None, ["llm", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "-n", "1",
                                         "--size", "1"], "LLM calls failed (connect", 2, {})
    return c


def main() -> None:
    manifest = {}
    cases = build()
    for old in HERE.iterdir():
        if old.name not in ("EXPECTED.json",) and not old.name.startswith("_") and old.is_file():
            old.unlink()
    for name, (data, argv, code, exit, env) in sorted(cases.items()):
        if data is not None:
            (HERE / name).write_bytes(data)
        manifest[name] = {"argv": argv, "code": code, "exit": exit, **({"env": env} if env else {})}
    (HERE / "EXPECTED.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(cases)} cases ({sum(1 for v in cases.values() if v[0] is not None)} files)")


if __name__ == "__main__":
    main()
