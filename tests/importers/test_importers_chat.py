"""Chat-transcript importer: the fixtures (AG2 group chat, Who&When, Magentic-One, plain lists), a golden
trace, bad input, a property test, 20k turns, and ``import auto`` not taking other formats' files.

Regenerate the golden trace only after a deliberate change of the mapping:

    PYTHONPATH=src python tests/importers/test_importers_chat.py --regenerate
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"
CHAT = FIXTURES / "chat"
GOLDEN = Path(__file__).with_name("golden_chat_magentic.trace.json")
DATA = Path(__file__).resolve().parents[1] / "data"


def _import(*paths: Path, **kw):  # type: ignore[no-untyped-def]
    from orchestrace.importers import import_traces

    return import_traces("chat", list(paths), **kw)


def _types(tr) -> Counter:  # type: ignore[no-untyped-def]
    return Counter(e.type.value for e in tr.events)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, timeout=120)


# ----------------------------------------------------------------------------- the fixtures
def test_ag2_group_chat_with_tools() -> None:
    from interop_helpers import assert_valid

    doc = json.loads((CHAT / "ag2_groupchat_tools.json").read_text())
    res = _import(CHAT / "ag2_groupchat_tools.json")
    (tr,) = res.traces
    assert_valid(tr)
    turns = doc["messages"]
    calls = [c for t in turns for c in t.get("tool_calls") or []]
    results = [t for t in turns if t["role"] == "tool"]
    ty = _types(tr)
    assert ty["tool_call"] == len(calls) and ty["tool_result"] == len(results)
    # every result is tied to its call by the call id
    by_id = {e.id: e for e in tr.events}
    dep = {(s, d) for s, d, k in ((x.src, x.dst, x.type.value) for x in tr.edges) if k == "tool_dependency"}
    for s, d in dep:
        assert by_id[s].type.value == "tool_call" and by_id[d].type.value == "tool_result"
        assert by_id[s].attrs["call_id"] == by_id[d].attrs["call_id"]
    assert len(dep) == len(results)
    # no speaker is named like a manager: the implicit AG2 chat_manager selects speakers and stops
    assert tr.meta["orchestrator"] == "chat_manager"
    speakers = [t["name"] for t in turns if t.get("name") and t["role"] != "tool"]
    o2 = [e.decision.action for e in tr.events if e.decision and e.decision.kind.value == "delegate"]
    assert o2 == speakers[1:]  # every speaker after the opening turn was selected
    assert tr.stop_event is not None and tr.stop_event.decision.action == "terminate"
    assert tr.stop_event.agent == "chat_manager" and tr.events[-1] is tr.stop_event
    assert tr.meta["source_fields"] == {"max_round": 12, "speaker_selection_method": "auto"}
    assert tr.meta["time_unit"] == "step" and tr.topology is not None and tr.topology.value == "centralized"
    assert any("turn index" in n for n in res.report.notes)


def test_whowhen_algorithm_generated() -> None:
    from interop_helpers import assert_valid

    doc = json.loads((CHAT / "whowhen_algorithm.json").read_text())
    res = _import(CHAT / "whowhen_algorithm.json")
    (tr,) = res.traces
    assert_valid(tr)
    hist = doc["history"]
    assert _types(tr)["message"] == len(hist)
    assert tr.task_id == doc["question_ID"] and tr.outcome is not None and tr.outcome.success is doc["is_correct"]
    # labels never flag a turn: only what the transcript shows (here the last turn does not state the
    # checked answer, ground_truth "10")
    flagged = [e for e in tr.events if e.error]
    assert [(e.source, [r["kind"] for r in e.attrs["evidence"]]) for e in flagged] == [
        ("whowhen_algorithm.json:$.history[5]", ["contradicts_facts"])]
    assert set(tr.agents) == {t["name"] for t in hist} | {"chat_manager"}
    assert tr.stop_event.decision.action == "terminate"
    # unknown top-level fields kept verbatim, benchmark labels dropped; the question is content: hashed
    for k in ("level", "ground_truth", "system_prompt"):
        assert tr.meta["source_fields"][k] == doc[k]
    assert not {"mistake_agent", "mistake_step", "mistake_reason"} & (set(tr.meta["source_fields"]) | set(tr.meta))
    assert tr.meta["task_ref"].startswith("sha256:") and "task" not in tr.meta
    assert [p.code for p in res.report.warnings] == ["chat.empty-content"]  # history[4] is empty


def test_magentic_one_ledger() -> None:
    from interop_helpers import assert_valid

    doc = json.loads((CHAT / "whowhen_magentic.json").read_text())
    res = _import(CHAT / "whowhen_magentic.json")
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.meta["dialect"] == "magentic-one" and tr.meta["orchestrator"] == "Orchestrator"
    assert set(tr.agents) == {"human", "Orchestrator", "WebSurfer", "Assistant"}
    # the ledgers' next_speaker are the O2 decisions (read off the fixture: WebSurfer, then Assistant)
    led = [e.decision.action for e in tr.events if e.decision and (e.attrs or {}).get("selected_by") == "ledger"]
    assert led == ["WebSurfer", "Assistant"]
    assert not [e for e in tr.events if (e.attrs or {}).get("selected_by") == "transcript"]
    # "Orchestrator (-> X)" is a message to X; the person's question is a human intervention
    to = [(e.agent, e.to) for e in tr.events if e.to]
    assert to == [("Orchestrator", "WebSurfer"), ("Orchestrator", "Assistant")]
    assert tr.events[0].type.value == "human_intervention"
    assert tr.stop_event.decision.action == "termination_condition"
    assert len(tr.events) == len(doc["history"]) + len(led) + 1  # turns + ledger decisions + the stop


def test_autogen_agentchat_selector_group_chat() -> None:
    from interop_helpers import assert_valid

    doc = json.loads((CHAT / "agentchat_selector.json").read_text())
    res = _import(CHAT / "agentchat_selector.json")
    (tr,) = res.traces
    assert_valid(tr)
    msgs = doc["messages"]
    # the manager that emits SelectSpeakerEvents is the orchestrator; its selections are the O2 decisions
    sel = [m for m in msgs if m["type"] == "SelectSpeakerEvent"]
    assert tr.meta["orchestrator"] == sel[0]["source"]
    o2 = [e for e in tr.events if e.decision and e.decision.kind.value == "delegate"]
    assert [e.decision.action for e in o2] == [m["content"][0] for m in sel]
    assert {(e.attrs or {}).get("selected_by") for e in o2} == {"selector"}
    # tool calls and results from the content lists; is_error flags the result
    req = [c for m in msgs if m["type"] == "ToolCallRequestEvent" for c in m["content"]]
    exe = [r for m in msgs if m["type"] == "ToolCallExecutionEvent" for r in m["content"]]
    calls = [e for e in tr.events if e.type.value == "tool_call"]
    results = [e for e in tr.events if e.type.value == "tool_result"]
    assert [e.attrs["call_id"] for e in calls] == [c["id"] for c in req]
    assert [(e.attrs["call_id"], bool(e.error)) for e in results] == [(r["call_id"], r["is_error"]) for r in exe]
    # tokens are the messages' own models_usage, on the event the model wrote
    usage = [m["models_usage"] for m in msgs if m["models_usage"]]
    got = [(e.tokens_in, e.tokens_out) for e in tr.events if e.tokens_in is not None]
    assert got == [(u["prompt_tokens"], u["completion_tokens"]) for u in usage]
    assert tr.stop_event.decision.action == "terminate"
    assert res.report.clamped_times == 0


def test_autogen_agentchat_swarm_handoff() -> None:
    from interop_helpers import assert_valid

    res = _import(CHAT / "agentchat_swarm.json")
    (tr,) = res.traces
    assert_valid(tr)
    hand = [e for e in tr.events if (e.attrs or {}).get("selected_by") == "handoff"]
    assert [(e.agent, e.decision.action) for e in hand] == [("triage", "refunds")]  # decided by the handing agent
    assert [(e.agent, e.to) for e in tr.events if e.to] == [("triage", "refunds")]
    assert res.report.counts["StopMessage"]["structure"] == 1 and tr.stop_event.decision.action == "terminate"


def test_orchestrator_given_by_name(tmp_path: Path) -> None:
    r = _run("import", "chat", str(CHAT / "ag2_groupchat_tools.json"), "-o", str(tmp_path / "t.json"),
             "--orchestrator", "Critic", "--json")
    assert r.returncode == 0, r.stderr
    from orchestrace import load

    tr = load(tmp_path / "t.json")
    assert tr.meta["orchestrator"] == "Critic" and tr.stop_event.agent == "Critic"
    o2 = [e for e in tr.events if e.decision and e.decision.kind.value == "delegate"]
    assert o2 and {e.agent for e in o2} == {"Critic"} and "Critic" not in {e.decision.action for e in o2}


def test_plain_messages_and_content_policy() -> None:
    res = _import(CHAT / "plain_messages.json", content="keep", estimate_tokens=True)
    (tr,) = res.traces
    plain = json.loads((CHAT / "plain_messages.json").read_text())
    assert res.report.counts["system"]["structure"] == 1 and len(tr.meta["system_prompts"]) == 1
    said = [e for e in tr.events if e.type.value == "message"]
    assert [e.content for e in said] == ["11 is prime.", "23."]  # content parts joined
    assert [e.tokens_out for e in said] == [math.ceil(len(e.content) / 4) for e in said]
    assert all(e.tokens_out is None for e in tr.events if e.type.value == "human_intervention")
    assert tr.meta["tokens"].startswith("estimated")
    assert _types(tr)["human_intervention"] == sum(1 for t in plain if t["role"] == "user")
    assert tr.meta["orchestrator"] == "assistant" and not [e for e in tr.events if e.decision and
                                                          e.decision.kind.value == "delegate"]
    dropped = _import(CHAT / "plain_messages.json", content="drop").traces[0]
    assert all(e.content is None and e.content_ref is None for e in dropped.events)
    hashed = _import(CHAT / "plain_messages.json").traces[0]
    assert all(e.content is None for e in hashed.events) and all(e.tokens_out is None for e in hashed.events)


def test_jsonl_turns_with_timestamps() -> None:
    res = _import(CHAT / "manager_timestamps.jsonl")
    (tr,) = res.traces
    assert tr.meta["time_unit"] == "s" and tr.meta["orchestrator"] == "manager"
    said = [e for e in tr.events if e.type.value == "message"]
    assert [e.t for e in said] == [0.0, 4.0, 9.0, 15.0]  # seconds from the first timestamp (read off the file)
    assert [e.source for e in said] == [f"manager_timestamps.jsonl:{k}" for k in range(1, 5)]


def test_many_transcripts_in_one_file(tmp_path: Path) -> None:
    one = json.loads((CHAT / "whowhen_algorithm.json").read_text())
    p = tmp_path / "many.json"
    p.write_text(json.dumps([one, dict(one, question_ID="other")]))
    res = _import(p)
    assert [t.task_id for t in res.traces] == [one["question_ID"], "other"]
    assert [t.trace_id for t in res.traces] == ["many#0", "many#1"]
    flagged = [e.source for t in res.traces for e in t.events if e.error]
    assert flagged == [f"many.json:$[{k}].history[5]" for k in (0, 1)]  # evidence located per transcript


def test_legacy_function_calls_and_tool_names(tmp_path: Path) -> None:
    """OpenAI's legacy ``function_call`` / ``role: function`` (whose ``name`` is the function, not a speaker),
    and a ``role: tool`` message naming its tool: results go to the caller, no agent is named after a tool."""
    turns = [{"role": "user", "content": "weather?"},
             {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
             {"role": "function", "name": "get_weather", "content": "sunny"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "t1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "t1", "name": "get_time", "content": "noon"},
             {"role": "assistant", "content": "Sunny at noon."}]
    p = tmp_path / "f.json"
    p.write_text(json.dumps(turns))
    res = _import(p)
    (tr,) = res.traces
    assert set(tr.agents) == {"user", "assistant"}
    results = [e for e in tr.events if e.type.value == "tool_result"]
    assert [(e.agent, e.tool, (e.attrs or {}).get("executor")) for e in results] == [
        ("assistant", "get_weather", None), ("assistant", "get_time", None)]
    dep = [(x.src, x.dst) for x in tr.edges if x.type.value == "tool_dependency"]
    assert len(dep) == 2 and not res.report.warnings


def test_trajectory_of_agent_name_steps(tmp_path: Path) -> None:
    """Who&When re-exports as ``{"question", "trajectory": [{"step", "agent_name", "content"}]}``."""
    steps = [{"step": 0, "agent_name": "WebServing_Expert", "content": "plan"},
             {"step": 1, "agent_name": "WebServing_Expert", "content": "search results"},
             {"step": 2, "agent_name": "Computer_terminal", "content": "no code to run"},
             {"step": 3, "agent_name": "Verification_Expert", "content": "checked. TERMINATE"}]
    p = tmp_path / "w.json"
    p.write_text(json.dumps({"question": "q", "trajectory": steps}))
    (tr,) = _import(p).traces
    said = [e for e in tr.events if e.type.value == "message"]
    assert [e.agent for e in said] == [s["agent_name"] for s in steps]
    # a speaker who goes on speaking is not selected again: selections only where the speaker changes
    o2 = [e.decision.action for e in tr.events if e.decision and e.decision.kind.value == "delegate"]
    assert o2 == ["Computer_terminal", "Verification_Expert"]


@pytest.mark.parametrize("name", sorted(p.name for p in CHAT.iterdir()))
def test_every_fixture_validates_and_measures_through_the_cli(name: str, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    r = _run("import", "auto", str(CHAT / name), "-o", str(out), "--estimate-tokens")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _run("validate", str(out)).returncode == 0
    m = _run("metrics", str(out))
    assert m.returncode == 0 and "Traceback" not in m.stderr, m.stderr


def test_import_report_says_the_assumptions(tmp_path: Path) -> None:
    r = _run("import", "chat", str(CHAT / "ag2_groupchat_tools.json"), "-o", str(tmp_path / "t.json"), "--json",
             "--estimate-tokens")
    rep = json.loads(r.stdout)
    notes = " | ".join(rep["notes"])
    assert "turn index" in notes and "ceil(characters / 4)" in notes and "chat_manager" in notes
    assert rep["totals"]["unknown"] == 0 and rep["totals"]["unreadable"] == 0


# ----------------------------------------------------------------------------- golden trace
def _golden_bytes() -> bytes:
    from orchestrace.core.io import dumps

    (tr,) = _import(CHAT / "whowhen_magentic.json").traces
    return dumps(tr)


def test_golden_trace() -> None:
    assert json.loads(_golden_bytes()) == json.loads(GOLDEN.read_bytes()), (
        "the imported trace changed; if deliberate: python tests/importers/test_importers_chat.py --regenerate")


# ----------------------------------------------------------------------------- detection
def test_auto_detects_chat_and_takes_no_other_format() -> None:
    from orchestrace.importers.detect import detect

    for f in sorted(CHAT.iterdir()):
        assert detect(f) == "chat", f
    for f in sorted(p for p in FIXTURES.rglob("*.json*") if CHAT not in p.parents):
        assert detect(f) != "chat", f
    for f in sorted((DATA / "bad").glob("*.json*")) + sorted((DATA / "bad_cli").glob("*.json*")):
        if f.name.startswith("chat_") or f.name == "EXPECTED.json":
            continue
        try:
            got = detect(f)
        except Exception:  # noqa: BLE001 - unknown formats raise; only "chat" would be wrong here
            continue
        assert got != "chat", f


# ----------------------------------------------------------------------------- bad input and scale
def test_orphan_results_and_bad_turns_are_counted(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "go"}] + [{"role": "tool", "tool_call_id": f"x{k}", "content": "?"}
                                                   for k in range(80)] + [7, {"role": "assistant", "content": ""}]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"messages": turns}))
    res = _import(p)
    rep = res.report
    orphans = [x for x in rep.problems if x.code == "chat.orphan-tool-result"]
    assert len(orphans) + rep.suppressed.get("chat.orphan-tool-result", 0) == 80  # capped list, exact count
    assert rep.counts["tool_result"]["mapped"] == 80 and rep.counts["<turn>"]["unreadable"] == 1
    assert [x.path for x in rep.errors] == ["t.json:$.messages[81]"]
    assert len(res.traces) == 1 and sum(1 for e in res.traces[0].events if (e.attrs or {}).get("orphan")) == 80


def test_twenty_thousand_turns(tmp_path: Path) -> None:
    """20k turns import into one valid trace (100k: benchmarks/chat_import.py)."""
    from interop_helpers import assert_valid

    n = 20_000
    names = ["Planner", "Coder", "Critic"]
    turns = [{"role": "assistant", "name": names[k % 3], "content": f"turn {k}"} for k in range(n)]
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"history": turns}))
    (tr,) = _import(p).traces
    assert_valid(tr)
    said = [e for e in tr.events if e.type.value == "message"]
    assert len(said) == n and said[-1].source == f"big.json:$.history[{n - 1}]"
    # Planner is the orchestrator (by its name): Coder and Critic turns are delegated to
    assert sum(1 for e in tr.events if e.decision and e.decision.kind.value == "delegate") == n - math.ceil(n / 3)


def test_thousands_of_speakers_do_not_blow_up_the_alternatives(tmp_path: Path) -> None:
    """Each selection would list the whole team: above 64 agents none are listed (output stays linear)."""
    from orchestrace.core.io import dumps
    from orchestrace.importers.chat import MAX_ALTERNATIVES

    n = 3000
    p = tmp_path / "crowd.json"
    p.write_text(json.dumps([{"name": f"agent{k}", "content": "x"} for k in range(n)]))
    (tr,) = _import(p).traces
    o2 = [e for e in tr.events if e.decision and e.decision.kind.value == "delegate"]
    assert len(o2) == n - 1 and all(e.decision.alternatives == () for e in o2)
    assert len(tr.meta["agents"]) == n and any(str(MAX_ALTERNATIVES) in a for a in tr.meta["assumptions"])
    assert len(dumps(tr)) < 1000 * n  # ~ 0.5 kB per turn, not n² names
    small = tmp_path / "team.json"
    small.write_text(json.dumps([{"name": f"a{k % 3}", "content": "x"} for k in range(6)]))
    (tr,) = _import(small).traces
    # no speaker is a manager: the implicit chat_manager selects among all three
    assert {e.decision.alternatives for e in tr.events if e.decision and e.decision.kind.value == "delegate"} == {
        ("a0", "a1", "a2")}


def test_any_list_of_turns_imports_or_gives_a_located_error(tmp_path: Path) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from orchestrace import validate

    scalar = st.one_of(st.text(max_size=12), st.none(), st.integers(-5, 5), st.booleans(),
                       st.floats(allow_nan=False, allow_infinity=False))
    value = st.one_of(scalar, st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
                      st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2))
    speaker = st.one_of(st.sampled_from(["Planner", "Coder", "Orchestrator (thought)", "Orchestrator (-> Coder)",
                                         "chat_manager", "human", "user", "assistant", "tool", "system"]), value)
    call = st.fixed_dictionaries({"id": st.one_of(st.sampled_from(["c1", "c2"]), value),
                                  "function": st.one_of(st.fixed_dictionaries(
                                      {"name": st.one_of(st.text(max_size=6), value), "arguments": value}), value)})
    from orchestrace.importers._chat_doc import AGENTCHAT_TYPES

    item = st.one_of(value, st.fixed_dictionaries({}, optional={
        "id": st.sampled_from(["c1", "c2"]), "call_id": st.sampled_from(["c1", "c2"]), "name": speaker,
        "arguments": value, "content": value, "is_error": value}))
    turn = st.fixed_dictionaries({}, optional={
        "role": speaker, "name": speaker, "content": st.one_of(value, st.lists(item, max_size=3)),
        "tool_call_id": st.one_of(st.sampled_from(["c1", "c2"]), value),
        "tool_calls": st.one_of(st.lists(call, max_size=2), value), "agent_name": speaker,
        # AutoGen AgentChat records
        "type": st.one_of(st.sampled_from(sorted(AGENTCHAT_TYPES)), value), "source": speaker, "target": speaker,
        "models_usage": st.one_of(value, st.fixed_dictionaries({}, optional={
            "prompt_tokens": value, "completion_tokens": value}))})
    doc = st.one_of(st.lists(turn, max_size=10), st.fixed_dictionaries({"history": st.lists(turn, max_size=10)},
                                                                      optional={"mistake_step": value,
                                                                                "is_correct": value}))
    p = tmp_path / "h.json"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(doc)
    def check(d):  # type: ignore[no-untyped-def]
        p.write_text(json.dumps(d))
        res = _import(p)
        for tr in res.traces:
            rep = validate(tr)
            assert rep.valid, [str(x) for x in rep.errors]
        for pr in res.report.problems:
            assert pr.path.startswith("h.json:"), pr
        if not res.traces:
            assert res.report.errors, d

    check()


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: PYTHONPATH=src python tests/importers/test_importers_chat.py --regenerate   (after a deliberate change)")
    GOLDEN.write_bytes(_golden_bytes())
    print(f"wrote {GOLDEN}")
