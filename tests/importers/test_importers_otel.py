"""OTel importer (Jaeger, Tempo OTLP, any-agent SDK JSON, OpenInference), OpenAI Agents SDK, detection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from interop_helpers import assert_valid

from orchestrace.importers import import_traces
from orchestrace.importers.detect import detect
from orchestrace.importers.openai_agents import from_items

ANY_AGENT_TOOLS = {"AGNO": 2, "GOOGLE": 3, "LANGCHAIN": 2, "LLAMA_INDEX": 3, "OPENAI": 2, "SMOLAGENTS": 3, "TINYAGENT": 3}


def _types(tr) -> Counter:  # type: ignore[no-untyped-def]
    return Counter(e.type.value for e in tr.events)


def test_jaeger_helm_golden(fx: Path) -> None:
    res = import_traces("jaeger", [fx / "otel-jaeger" / "helm.json"])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["helm_agent"]
    assert _types(tr) == {"message": 2, "tool_call": 1, "tool_result": 1}
    # the two ADK call_llm spans: 1820+13 and 1956+117 (the nested openai.chat spans are not counted again)
    assert tr.costs["tokens"] == 3906
    assert next(e for e in tr.events if e.type.value == "tool_call").tool == "helm_list_releases"
    assert res.report.totals()["mapped"] + res.report.totals()["structure"] == 96
    assert res.report.reasons["span/llm-dup: LLM call already counted by an enclosing LLM span"] == 2


def test_tempo_batches_golden(fx: Path) -> None:
    res = import_traces("otlp", [fx / "otel-jaeger" / "tempo_export_with_batches.json"])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["helm_agent"]  # the controller's proxy invoke_agent span is structure
    assert tr.costs["tokens"] == 2256 + 13 + 2392 + 116
    assert [p.code for p in res.report.problems] == ["import.missing-parent"]
    assert sum(res.report.totals().values()) == 86


@pytest.mark.parametrize("name", sorted(ANY_AGENT_TOOLS))
def test_any_agent_frameworks(fx: Path, name: str) -> None:
    f = fx / "any-agent" / f"{name}_trace.json"
    (tr,) = import_traces("otlp", [f]).traces
    assert_valid(tr)
    assert tr.agents == ["any_agent"]
    assert _types(tr)["tool_call"] == ANY_AGENT_TOOLS[name] == _types(tr)["tool_result"]
    spans = json.loads(f.read_text())["spans"]
    usage = sum(int(s["attributes"].get(k, 0)) for s in spans
                for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"))
    assert tr.costs["tokens"] == usage
    n_llm = sum(s["attributes"].get("gen_ai.operation.name") == "call_llm" for s in spans)
    assert _types(tr)["message"] == n_llm
    assert all(e.source.startswith(f"{name}_trace.json#") for e in tr.events)


def _oi_doc() -> dict:
    def span(sid, parent, name, t0, t1, **attrs):  # type: ignore[no-untyped-def]
        return {"traceId": "t" * 32, "spanId": sid, "parentSpanId": parent, "name": name,
                "startTimeUnixNano": str(int(t0 * 1e9)), "endTimeUnixNano": str(int(t1 * 1e9)),
                "attributes": [{"key": k, "value": {"stringValue": v} if isinstance(v, str) else {"intValue": str(v)}}
                               for k, v in attrs.items()]}
    spans = [
        span("a1", None, "Supervisor", 0, 10, **{"openinference.span.kind": "AGENT", "agent.name": "supervisor"}),
        span("c1", "a1", "RunnableSequence", 0.1, 9, **{"openinference.span.kind": "CHAIN"}),
        span("l1", "c1", "ChatOpenAI", 0.2, 1, **{"openinference.span.kind": "LLM", "llm.token_count.prompt": 100,
                                                   "llm.token_count.completion": 10}),
        span("a2", "c1", "Researcher", 1.1, 6, **{"openinference.span.kind": "AGENT", "agent.name": "researcher"}),
        span("a3", "c1", "Writer", 1.2, 7, **{"openinference.span.kind": "AGENT", "agent.name": "writer"}),
        span("t1", "a2", "search", 1.5, 3, **{"openinference.span.kind": "TOOL", "tool.name": "search"}),
        span("l2", "a3", "ChatOpenAI", 1.3, 5, **{"openinference.span.kind": "LLM", "llm.token_count.prompt": 50,
                                                   "llm.token_count.completion": 5}),
        span("h1", "a2", "POST /v1", 3.1, 3.2, **{"http.method": "POST"}),
        span("l3", "c1", "ChatOpenAI", 7.5, 8.5, **{"openinference.span.kind": "LLM", "llm.token_count.prompt": 70,
                                                     "llm.token_count.completion": 7}),
    ]
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}


def test_openinference_parallel_subagents(tmp_path: Path) -> None:
    p = tmp_path / "oi.json"
    p.write_text(json.dumps(_oi_doc()))
    res = import_traces("otlp", [p])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["supervisor", "researcher", "writer"]
    t = _types(tr)
    assert (t["spawn"], t["return"], t["orchestrator_decision"], t["tool_call"], t["message"]) == (2, 2, 2, 1, 3)
    assert tr.costs["tokens"] == 110 + 55 + 77
    life = {}
    for a in ("researcher", "writer"):
        sp = next(e for e in tr.events if e.type.value == "spawn" and e.to == a)
        ret = next(e for e in tr.events if e.type.value == "return" and e.agent == a)
        life[a] = (sp.t, ret.t)
    assert max(life["researcher"][0], life["writer"][0]) < min(life["researcher"][1], life["writer"][1])
    last = next(e for e in tr.events if e.source.endswith("#l3"))  # the final LLM call waits for both returns
    preds = {d.src for d in tr.edges if d.dst == last.id}
    assert {e.id for e in tr.events if e.type.value == "return"} <= preds
    assert res.report.reasons["span/structure: not an agent event (kept for timing)"] == 2  # CHAIN + HTTP


def _sdk_items() -> list[dict]:
    def sp(i, parent, t0, t1, data):  # type: ignore[no-untyped-def]
        return {"object": "trace.span", "id": i, "trace_id": "trace_9", "parent_id": parent,
                "started_at": f"2025-03-01T00:00:{t0:06.3f}+00:00", "ended_at": f"2025-03-01T00:00:{t1:06.3f}+00:00",
                "span_data": data, "error": None}
    return [
        {"object": "trace", "id": "trace_9", "workflow_name": "support", "group_id": "conv-1"},
        sp("s1", None, 0, 3, {"type": "agent", "name": "Triage", "handoffs": ["Billing"]}),
        sp("s2", "s1", 0.1, 1, {"type": "generation", "model": "gpt-4o", "usage": {"input_tokens": 30, "output_tokens": 5}}),
        sp("s3", "s1", 1.1, 1.2, {"type": "guardrail", "name": "pii", "triggered": True}),
        sp("s4", "s1", 2, 2, {"type": "handoff", "from_agent": "Triage", "to_agent": "Billing"}),
        sp("s5", None, 3, 9, {"type": "agent", "name": "Billing"}),
        sp("s6", "s5", 3.1, 4, {"type": "response", "response_id": "r1", "usage": {"input_tokens": 40, "output_tokens": 8}}),
        sp("s7", "s5", 4.1, 5, {"type": "function", "name": "refund", "input": "{}", "output": "ok"}),
        sp("s8", "s5", 5.1, 6, {"type": "handoff", "from_agent": "Billing", "to_agent": "Triage"}),
        sp("s9", None, 6, 8, {"type": "agent", "name": "Triage"}),
        sp("s10", "s9", 6.1, 7, {"type": "generation", "usage": {"input_tokens": 20, "output_tokens": 2}}),
        {"object": "mystery"},
    ]


def test_openai_agents_handoffs_become_delegation(tmp_path: Path) -> None:
    p = tmp_path / "oa.json"
    p.write_text(json.dumps({"data": _sdk_items()}))
    assert detect(p) == "openai-agents"
    res = import_traces("openai-agents", [p])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.task_id == "support" and tr.meta["group_id"] == "conv-1"
    assert tr.agents == ["Triage", "Billing"]
    decs = [e for e in tr.events if e.type.value == "orchestrator_decision"]
    assert [(d.agent, d.decision.kind.value, d.decision.action) for d in decs] == [
        ("Triage", "delegate", "handoff:Billing"), ("Billing", "delegate", "handoff:Triage")]
    assert [(e.agent, e.to) for e in tr.events if e.type.value == "spawn"] == [("Triage", "Billing")]
    back = [e for e in tr.events if e.type.value == "message" and e.to == "Triage"]
    assert len(back) == 1  # handing back to an agent that already ran is a message, not a spawn
    assert _types(tr)["safety_event"] == 1 and _types(tr)["tool_call"] == 1
    assert tr.costs["tokens"] == 35 + 48 + 22
    assert res.report.counts["mystery"]["unknown"] == 1


def test_otlp_jsonl_and_wrong_format(tmp_path: Path, fx: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps(_oi_doc()) + "\n" + json.dumps(_oi_doc()) + "\n")
    res = import_traces("otlp", [p])
    assert len(res.traces) == 1 and not res.report.errors  # the same trace id twice: one trace
    bad = import_traces("jaeger", [fx / "otel-jaeger" / "tempo_export_with_batches.json"])
    assert not bad.traces and bad.report.errors[0].code == "import.wrong-format"


def test_detect_every_fixture(fx: Path) -> None:
    want = {"any-agent": "otlp", "claude-code": "claude-code", "codex": "codex", "chat": "chat"}
    for f in sorted(fx.rglob("*.json*")):
        top = f.relative_to(fx).parts[0]
        exp = want.get(top) or ("jaeger" if f.name == "helm.json" else "otlp")
        assert detect(f) == exp, f


def test_from_items_ignores_bad_items() -> None:
    traces, rep = from_items([{"object": "trace.span", "id": "x"}, 5], "m.json")
    assert traces == [] and {p.code for p in rep.errors} == {"import.bad-span", "import.not-object"}
