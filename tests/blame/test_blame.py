"""Blame from evidence: importer evidence (golden, on real Who&When runs), labels never reachable, the
decisive-error rule against a plain reference implementation on random DAGs, and blame credit."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace.blame import blame
from orchestrace.core.builder import TraceBuilder
from orchestrace.core.trace import Outcome, Trace
from orchestrace.credit import CreditResult, assign
from orchestrace.importers import import_traces
from orchestrace.importers.chat import from_doc
from orchestrace.vocab import DEPENDENCY_EDGE_TYPES


def credit(trace: Trace, **kw: Any) -> CreditResult:
    """The blame credit method, as a user calls it."""
    return assign(trace, method="blame", **kw)

DATA = Path(__file__).resolve().parents[1] / "data" / "whowhen"
LABELS = ("mistake_agent", "mistake_step", "mistake_reason")


def _doc(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _flags(tr) -> dict[str, list[tuple[str, str | None]]]:  # type: ignore[no-untyped-def]
    """source turn → [(kind, source turn of the blamed event)] of every flagged event."""
    by_id = {e.id: e for e in tr.events}
    out = {}
    for e in tr.events:
        for r in (e.attrs or {}).get("evidence", []):
            blamed = by_id[r["blames"]].source.rsplit(":", 1)[-1] if r.get("blames") else None
            out.setdefault(e.source.rsplit(":", 1)[-1], []).append((r["kind"], blamed))
    return out


# ----------------------------------------------------------------------------- evidence at import
def test_ag2_failed_execution_blames_the_code_author() -> None:
    doc = _doc("ag_27.json")
    # read off the file: turn 2 is Computer_terminal's "exitcode: 1 (execution failed)" with a TypeError
    # traceback, running the code block DataVerification_Expert wrote in turn 1
    assert doc["history"][2]["content"].startswith("exitcode: 1 (execution failed)")
    assert "```" in doc["history"][1]["content"] and doc["history"][1]["name"] == "DataVerification_Expert"
    (tr,) = import_traces("chat", [DATA / "ag_27.json"]).traces
    flags = _flags(tr)
    assert flags["$.history[2]"] == [("exec_failed", "$.history[1]"), ("traceback", "$.history[1]")]
    ev = next(e for e in tr.events if e.source.endswith("$.history[2]") and e.type.value == "message")
    assert ev.error is True and ev.attrs["evidence"][0]["excerpt"] == "exitcode: 1 (execution failed)"
    a, b = ev.attrs["evidence"][1]["span"]
    assert doc["history"][2]["content"][a:b].startswith("Traceback (most recent call last):")
    assert ev.attrs["output"] is True  # the executor's report is an output, not an action
    assert tr.outcome is not None and tr.outcome.success is False


def test_magentic_outcome_from_is_corrected_and_no_false_evidence() -> None:
    (tr,) = import_traces("chat", [DATA / "hc_48.json"]).traces
    assert tr.outcome is not None and tr.outcome.success is False  # is_corrected, never read before
    assert tr.outcome.verifier == "source:is_corrected"
    # the ledger in turn 2 says progress is being made and no loop: nothing flagged there
    assert "$.history[2]" not in _flags(tr)


def test_contradictory_outcome_fields_give_a_located_warning() -> None:
    doc = dict(_doc("hc_48.json"), is_correct=True)
    (tr,), rep = from_doc(doc, "h.json")
    assert tr.outcome is not None and tr.outcome.success is None
    (p,) = [p for p in rep.problems if p.code == "chat.contradictory-outcome"]
    assert p.path == "h.json:$" and "is_correct = True but is_corrected = False" in p.message
    r = blame(tr)  # contradictory outcomes: nobody is blamed, never "decisive error"
    assert r.status == "outcome unknown" and r.decisive is None and r.runner_up is None and r.shares == {}
    r = blame(tr, assume_failed=True)
    assert r.decisive is not None and any("outcome is unknown" in n for n in r.notes)


def test_ledger_verdict_blames_the_judged_workers_streak() -> None:
    ledger = ('Updated Ledger:\n{"is_request_satisfied": {"reason": "no", "answer": false}, "is_in_loop": '
              '{"reason": "the same page again", "answer": true}, "is_progress_being_made": {"reason": "stuck", '
              '"answer": false}, "next_speaker": {"reason": "retry", "answer": "WebSurfer"}}')
    hist = [{"role": "human", "content": "find it"},
            {"role": "Orchestrator (-> WebSurfer)", "content": "search"},
            {"role": "WebSurfer", "content": "I typed 'x' into the search box."},
            {"role": "Orchestrator (-> WebSurfer)", "content": "open the first result"},
            {"role": "WebSurfer", "content": "I clicked 'first result'."},
            {"role": "Orchestrator (thought)", "content": ledger},
            {"role": "Orchestrator (-> Assistant)", "content": "answer"},
            {"role": "Assistant", "content": "It is 3."}]
    (tr,), _ = from_doc({"history": hist, "is_corrected": "False"}, "m.json")
    assert _flags(tr)["$.history[5]"] == [("ledger_loop", "$.history[2]"), ("ledger_no_progress", "$.history[2]")]
    r = blame(tr)
    assert (r.decisive.agent, r.decisive.step) == ("WebSurfer", 2)


def test_repeats_refusals_and_tool_errors() -> None:
    hist = [{"name": "user", "role": "user", "content": "go"},
            {"name": "Surfer", "role": "assistant", "content": "I clicked 'Next page' on the site."},
            {"name": "Critic", "role": "assistant", "content": "keep going"},
            {"name": "Surfer", "role": "assistant", "content": "I clicked 'Next page' on the site."},
            {"name": "Critic", "role": "assistant", "content": "I'm sorry, but I cannot access that website."},
            {"name": "Coder", "role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "function": {"name": "run", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "boom", "is_error": True}]
    (tr,), _ = from_doc({"history": hist, "is_correct": False}, "p.json")
    f = _flags(tr)
    assert f["$.history[3]"] == [("repeated_action", None)]
    assert f["$.history[4]"] == [("refusal", None)]
    assert f["$.history[6]"] == [("tool_error", "$.history[5].tool_calls[0]")]
    r = blame(tr)  # weak evidence (the repeat, the refusal) does not decide: the tool error does
    assert r.decisive.agent == "Coder" and r.decisive.kinds == ("tool_error",)


# ----------------------------------------------------------------------------- labels
@pytest.mark.parametrize("name", ["ag_27.json", "ag_45.json", "hc_48.json"])
def test_labels_never_reachable_by_default_and_blame_ignores_them(name: str) -> None:
    doc = _doc(name)
    (plain,), rep = from_doc(doc, name)
    blob = msgspec.json.encode(plain).decode()
    for k in LABELS:
        assert k not in blob  # not in meta, source_fields, attrs — anywhere in the trace
    assert str(doc["mistake_reason"])[:40] not in blob
    assert any("label fields dropped" in n for n in rep.notes)
    (kept,), _ = from_doc(doc, name, labels=True)
    assert kept.meta["labels"] == {k: doc[k] for k in LABELS}
    assert not any(k in kept.meta.get("source_fields", {}) for k in LABELS)
    (stripped,), _ = from_doc({k: v for k, v in doc.items() if k not in LABELS}, name)
    results = [blame(t).to_dict() for t in (plain, kept, stripped)]
    assert results[0] == results[1] == results[2]
    c = [credit(t, unit="turn").as_dict() for t in (plain, kept, stripped)]
    assert c[0] == c[1] == c[2]


# ----------------------------------------------------------------------------- the rule vs a reference
STRONG = ("exec_failed", "tool_error", "traceback")
WEAK = ("repeated_action", "refusal")


def _reference(tr) -> str | None:  # type: ignore[no-untyped-def]
    """Plain: ancestors of the stop by BFS; origins of flags among them; strong before weak; earliest."""
    dep = {t.value for t in DEPENDENCY_EDGE_TYPES}
    preds: dict[str, list[str]] = {}
    for e in tr.edges:
        if e.type.value in dep:
            preds.setdefault(e.dst, []).append(e.src)
    stop = tr.stop_event.id
    seen, todo = {stop}, [stop]
    while todo:
        for p in preds.get(todo.pop(), []):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    pos = {e.id: k for k, e in enumerate(tr.events)}
    t = {e.id: e.t for e in tr.events}
    cands = []
    for e in tr.events:
        if e.id not in seen:
            continue
        for r in (e.attrs or {}).get("evidence", []):
            cands.append((r["kind"] in WEAK, r.get("blames") or e.id))
    if not cands:
        return None
    if any(not w for w, _ in cands):
        cands = [(w, o) for w, o in cands if not w]
    return min((t[o], pos[o], o) for _, o in cands)[2]


@st.composite
def _dags(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(2, 14))
    b = TraceBuilder("rand")
    ids: list[str] = []
    for k in range(n):
        after = draw(st.lists(st.sampled_from(ids), max_size=3, unique=True)) if ids else []
        agent = draw(st.sampled_from(["a", "b", "c"]))
        ev = []
        if ids and draw(st.integers(0, 3)) == 0:
            kind = draw(st.sampled_from(STRONG + WEAK))
            blames = draw(st.sampled_from([None, *ids]))
            ev = [{"kind": kind, **({"blames": blames} if blames else {})}]
        t = float(k) if draw(st.booleans()) else float(k // 2)  # ties in time: order by position
        ids.append(b.add("message", agent, t=max([t] + [0.0]), t_end=t + 1, after=after or None,
                         **({"error": True, "attrs": {"evidence": ev}} if ev else {})))
    ends = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True))
    b.decide("stop", action="stop", t=float(n + 1), after=ends, agent="a")
    return b.build(outcome=Outcome(success=False))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dags())
def test_decisive_error_matches_reference_on_random_dags(tr) -> None:  # type: ignore[no-untyped-def]
    r = blame(tr)
    want = _reference(tr)
    if want is None:
        assert not r.evidence_found and r.rule.startswith("no evidence")
        assert r.decisive is None or (r.decisive.kinds == ("fallback",) and 0.0 <= r.decisive.confidence <= 1.0)
    else:
        assert r.evidence_found and r.decisive is not None and r.decisive.event == want
    for unit in ("agent", "turn", "message", "team", "token", "role", "orchestrator", "tool_call"):
        try:
            c = credit(tr, unit=unit)
        except Exception as exc:  # a unit the trace has none of must say so, not crash
            assert type(exc).__name__ == "ConfigError", exc
            continue
        assert math.isclose(float(c.values.sum()), c.total_reward, abs_tol=1e-9)
    if r.decisive is not None:
        c = credit(tr, unit="agent")
        assert c[r.decisive.agent] == min(c.values)
        assert c[r.decisive.agent] < 0 or len(c) == 1  # a lone agent has nobody to compare with


def test_credit_signed_and_relative_to_a_baseline() -> None:
    b = TraceBuilder("r")
    m1 = b.add("message", "coder", t=0, t_end=1)
    m2 = b.add("message", "runner", t=1, t_end=2, after=m1, error=True,
               attrs={"evidence": [{"kind": "exec_failed", "blames": m1}]})
    b.add("message", "critic", t=2, t_end=3, after=m2)
    tr = b.build(outcome=Outcome(success=False))
    c = credit(tr, unit="agent").as_dict()
    assert c["coder"] < 0 <= min(c["runner"], c["critic"]) and math.isclose(sum(c.values()), 0.0, abs_tol=1e-12)
    c2 = credit(tr, unit="agent", baseline=0.5).as_dict()  # A = −0.5: all blame, the culprit most
    assert math.isclose(sum(c2.values()), -0.5) and min(c2, key=c2.__getitem__) == "coder"
    assert all(v <= 0 for v in c2.values())


def test_no_evidence_falls_back_visibly() -> None:
    (tr,), _ = from_doc(_doc("ag_45.json"), "ag_45.json")
    r = blame(tr)
    assert not r.evidence_found and r.rule.startswith("no evidence: fallback")
    assert r.decisive is not None and r.decisive.kinds == ("fallback",)
    assert 0.0 < r.decisive.confidence < 1.0 and 0.0 < (r.decisive.step_confidence or 0.0) < 1.0  # calibrated probabilities
    # the opener (turn 0) only states the task: the first reply is turn 1
    assert r.decisive.step == 1


def test_only_human_turns_and_agents_outside_the_team() -> None:
    (tr,), _ = from_doc({"history": [{"role": "user", "content": "hello"}, {"role": "user", "content": "?"}],
                         "is_correct": False}, "h.json")
    r = blame(tr)
    assert r.decisive is None and any("no agent turn" in n for n in r.notes)
    b = TraceBuilder("x", meta={"agents": ["a"], "orchestrator": "o"})
    e1 = b.add("message", "ghost", t=0, t_end=1, error=True, attrs={"evidence": [{"kind": "refusal"}]})
    b.add("message", "a", t=1, t_end=2, after=e1)
    r2 = blame(b.build(outcome=Outcome(success=False)))
    assert any("not in the team" in n and "e1" in n for n in r2.notes) and r2.decisive.agent == "a"


# ----------------------------------------------------------------------------- the other importers
FIX = Path(__file__).resolve().parents[1] / "data" / "fixtures"


def test_claude_code_tool_errors_blame_their_call() -> None:
    (tr, *_) = import_traces("claude-code", [FIX / "claude-code" / "subagent.jsonl"]).traces
    by_id = {e.id: e for e in tr.events}
    flagged = [e for e in tr.events if (e.attrs or {}).get("evidence")]
    # the fixture's Read of a directory fails with EISDIR (is_error: true in the transcript)
    first = flagged[0].attrs["evidence"][0]
    assert first["kind"] == "tool_error" and first["excerpt"].startswith("EISDIR")
    assert by_id[first["blames"]].type.value == "tool_call" and flagged[0].error is True
    r = blame(tr)  # the session records no outcome: nobody is blamed unless asked to assume it failed
    assert r.status == "outcome unknown" and r.decisive is None and r.evidence_found
    r = blame(tr, assume_failed=True)
    assert r.evidence_found and r.decisive.event == first["blames"]


def test_live_capture_flags_failed_tool_runs(tmp_path: Path) -> None:
    from orchestrace.core.io import load
    from orchestrace.frameworks._team import Team
    from orchestrace.frameworks.recorder import Recorder

    path = tmp_path / "t.jsonl"
    with Recorder(path) as rec:
        team = Team(rec)
        ok = team.tool_call("coder", "python", "print(1)")
        team.tool_result("coder", "python", ok, "exit code: 0\n1")
        bad = team.tool_call("coder", "python", "1/0")
        team.tool_result("coder", "python", bad, "Traceback (most recent call last):\nZeroDivisionError: division by zero")
        call = team.tool_call("critic", "search", "{}")
        team.tool_result("critic", "search", call, "timeout", error=True)
    tr = load(path)
    got = [(e.attrs["evidence"][0]["kind"], e.attrs["evidence"][0]["blames"]) for e in tr.events
           if (e.attrs or {}).get("evidence")]
    assert got == [("traceback", bad), ("tool_error", call)]
