"""Imports and exports whose numbers can be trusted: duplicate spans, human interventions in
Codex rollouts, and training exports that say when their rewards or texts are empty."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from interop_helpers import assert_valid

from orchestrace import dump, synth
from orchestrace.importers import import_traces
from orchestrace.importers.openai_agents import from_items

ROOT = Path(__file__).resolve().parents[2]
CODEX_INJECTED = ROOT / "tests" / "data" / "codex" / "injected_context.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, timeout=120)


def _double(doc):  # type: ignore[no-untyped-def]
    """The same export twice in one file (a common copy / export accident)."""
    d = copy.deepcopy(doc)
    if "data" in d:
        for t in d["data"]:
            t["spans"] = t["spans"] * 2
    elif "batches" in d:
        d["batches"] = d["batches"] * 2
    elif "resourceSpans" in d:
        d["resourceSpans"] = d["resourceSpans"] * 2
    else:
        d["spans"] = d["spans"] * 2
    return d


# ------------------------------------------------------------------------------ duplicate spans
@pytest.mark.parametrize("name", ["otel-jaeger/helm.json", "otel-jaeger/tempo_export_with_batches.json",
                                  "any-agent/OPENAI_trace.json", "any-agent/LANGCHAIN_trace.json"])
def test_identical_duplicate_spans_are_dropped_and_counted(fx: Path, tmp_path: Path, name: str) -> None:
    """Before: helm.json doubled imported 384 events (96×) and 249,984 tokens (64×), silently."""
    src = fx / name
    once = import_traces("auto", [src])
    doc = json.loads(src.read_text())
    p = tmp_path / src.name
    p.write_text(json.dumps(_double(doc)))
    twice = import_traces("auto", [p])
    assert [len(t.events) for t in twice.traces] == [len(t.events) for t in once.traces]
    assert [t.costs["tokens"] for t in twice.traces] == [t.costs["tokens"] for t in once.traces]
    n_spans = sum(sum(once.report.counts.get(k, {}).values()) for k in once.report.counts if k.startswith("span/"))
    assert twice.report.counts["span/duplicate"]["skipped"] == n_spans
    (w,) = [q for q in twice.report.problems if q.code == "import.duplicate-span"]
    assert w.severity.value == "warning" and f"{n_spans} identical duplicate span(s)" in w.message
    assert twice.ok


def test_duplicate_report_in_the_cli(fx: Path, tmp_path: Path) -> None:
    p = tmp_path / "helm2.json"
    p.write_text(json.dumps(_double(json.loads((fx / "otel-jaeger" / "helm.json").read_text()))))
    r = _run("import", "jaeger", str(p), "-o", str(tmp_path / "h.json"), "--report")
    assert r.returncode == 0, r.stderr
    assert "span/duplicate" in r.stdout and "identical copy of a span already read" in r.stdout
    assert "import.duplicate-span" in r.stderr and "96 identical duplicate span(s)" in r.stderr
    assert "4 events" in r.stdout


def test_conflicting_span_ids_are_a_located_error(fx: Path, tmp_path: Path) -> None:
    """Two different spans under one id: before, the tool call became a message."""
    doc = json.loads((fx / "otel-jaeger" / "helm.json").read_text())
    spans = doc["data"][0]["spans"]
    tool = next(s for s in spans if s["operationName"].startswith("execute_tool"))
    other = copy.deepcopy(next(s for s in spans if s["operationName"].startswith("call_llm")))
    other["spanID"] = tool["spanID"]
    spans.append(other)
    p = tmp_path / "conflict.json"
    p.write_text(json.dumps(doc))
    res = import_traces("jaeger", [p])
    (err,) = res.report.errors
    assert err.code == "import.conflicting-span" and err.path == f"conflict.json#{tool['spanID']} (copy 2)"
    assert "name 'execute_tool" in err.message and "vs 'call_llm" in err.message
    (tr,) = res.traces  # the first copy is kept: the tool call is still a tool call
    assert Counter(e.type.value for e in tr.events)["tool_call"] == 1
    r = _run("import", "jaeger", str(p), "-o", str(tmp_path / "c.json"))
    assert r.returncode == 1 and "import.conflicting-span" in r.stderr


def test_openai_agents_duplicates() -> None:
    items = [
        {"object": "trace", "id": "trace_1", "workflow_name": "w"},
        {"object": "trace.span", "id": "s1", "trace_id": "trace_1", "parent_id": None,
         "started_at": "2025-01-01T00:00:00Z", "ended_at": "2025-01-01T00:00:02Z",
         "span_data": {"type": "agent", "name": "A"}},
        {"object": "trace.span", "id": "s2", "trace_id": "trace_1", "parent_id": "s1",
         "started_at": "2025-01-01T00:00:01Z", "ended_at": "2025-01-01T00:00:02Z",
         "span_data": {"type": "generation", "usage": {"input_tokens": 9, "output_tokens": 3}}},
    ]
    (tr,), rep = from_items(items + items[1:], "x.json")
    assert tr.costs["tokens"] == 12 and len(tr.events) == 1
    assert rep.counts["span/duplicate"]["skipped"] == 2 and not rep.errors


# ------------------------------------------------------------------------------ Codex humans
def test_codex_human_interventions_match_the_user_message_events() -> None:
    """The rollout records 2 ``user_message`` events and 1 ``turn_aborted``; it also carries 8
    user-role items Codex injected itself. Before: 6 human interventions; now 2 prompts + 1
    interrupt, the rest structure with the rule named."""
    res = import_traces("codex", [CODEX_INJECTED], content="keep")
    (tr,) = res.traces
    assert_valid(tr)
    raw = Counter()
    for line in CODEX_INJECTED.read_text().splitlines():
        o = json.loads(line)
        if o["type"] == "event_msg":
            raw[o["payload"]["type"]] += 1
    humans = [e for e in tr.events if e.type.value == "human_intervention"]
    kinds = Counter(e.attrs["kind"] for e in humans)
    assert (kinds["prompt"], kinds["interrupt"]) == (raw["user_message"], raw["turn_aborted"]) == (2, 1)
    assert [e.content for e in humans if e.attrs["kind"] == "prompt"] == [
        "fix the failing test in parser.py", "try again, but only run parser tests"]
    reasons = res.report.reasons
    assert reasons["response_item/message: instructions / context injected by the CLI"] == 7
    assert reasons["response_item/message: user item no user_message event records (injected)"] == 1


def test_codex_without_user_message_events_uses_the_prefix_rules(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in CODEX_INJECTED.read_text().splitlines()]
    old = [x for x in lines if not (x["type"] == "event_msg" and x["payload"]["type"] == "user_message")]
    p = tmp_path / "old.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in old))
    (tr,) = import_traces("codex", [p]).traces
    kinds = Counter(e.attrs["kind"] for e in tr.events if e.type.value == "human_intervention")
    assert kinds == {"prompt": 3, "interrupt": 1}  # nothing says the third was not typed


# ------------------------------------------------------------------------------ export
def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_export_of_an_imported_session_warns_and_takes_truth_and_baseline(fx: Path, tmp_path: Path) -> None:
    """Before: 344 rows, 0 non-zero rewards, 280 hashed completions, no warning, no --truth."""
    sess = tmp_path / "s.json"
    assert _run("import", "claude-code", str(fx / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
                "-o", str(sess)).returncode == 0
    out = tmp_path / "t.jsonl"
    r = _run("export", "trl", str(sess), "-o", str(out))
    assert r.returncode == 0
    assert "every exported reward is 0 (344 rows" in r.stderr and "--truth" in r.stderr
    assert "343 of 344 completions carry a content reference, not text" in r.stderr and "--content keep" in r.stderr
    assert all(x["reward"] == 0 for x in _rows(out))
    r = _run("export", "trl", str(sess), "-o", str(out), "--truth", "true")
    assert r.returncode == 0 and "every exported reward is 0" not in r.stderr
    assert "344 of 344 turn rewards are non-zero" in r.stdout
    assert all(x["reward"] > 0 for x in _rows(out))
    r = _run("export", "rllm", str(sess), "-o", str(out), "--truth", "false", "--baseline", "0.5", "--method", "causal")
    assert r.returncode == 0, r.stderr
    (ep,) = _rows(out)
    steps = [s for tj in ep["trajectories"] for s in tj["steps"]]
    assert sum(s["reward"] for s in steps) == pytest.approx(-0.5)  # causal credit sums to R − b
    assert min(s["reward"] for s in steps) < 0


def test_export_keep_content_has_no_text_warning(fx: Path, tmp_path: Path) -> None:
    sess = tmp_path / "s.json"
    assert _run("import", "claude-code", str(fx / "claude-code" / "short.jsonl"), "-o", str(sess),
                "--content", "keep").returncode == 0
    r = _run("export", "trl", str(sess), "-o", str(tmp_path / "t.jsonl"), "--truth", "1")
    assert r.returncode == 0 and "carry no text" not in r.stderr.replace("0 of", "")


def test_export_spec_and_group_baseline(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    r = _run("synth", "--events", "300", "--agents", "4", "--runs", "6", "-o", str(runs))
    assert r.returncode == 0 and "6 runs of task synth-task-0" in r.stdout, r.stderr
    out = tmp_path / "t.jsonl"
    r = _run("export", "trl", str(runs), "-o", str(out), "--baseline", "group", "--method", "causal")
    assert r.returncode == 0, r.stderr
    by_trace: dict[str, float] = {}
    for x in _rows(out):
        by_trace[x["trace_id"]] = by_trace.get(x["trace_id"], 0.0) + x["reward"]
    assert sum(by_trace.values()) == pytest.approx(0.0, abs=1e-9)  # advantages around the group mean
    assert any(v < 0 for v in by_trace.values()) and any(v > 0 for v in by_trace.values())
    spec = tmp_path / "spec.toml"
    spec.write_text('[[reward]]\nfn = "shared_outcome"\nweight = 2.0\n')
    r = _run("export", "trl", str(runs), "-o", str(out), "--spec", str(spec), "--method", "causal")
    assert r.returncode == 0, r.stderr
    assert max(sum(x["reward"] for x in _rows(out) if x["trace_id"] == t) for t in by_trace) == pytest.approx(2.0)
    r = _run("export", "otlp", str(runs), "-o", str(tmp_path / "o.json"), "--truth", "1")
    assert r.returncode == 2 and "training data" in r.stderr


def test_export_failed_synth_run(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    dump(synth(events=300, agents=4, seed=2), p)  # seed 2 fails at the default success rate
    out = tmp_path / "t.jsonl"
    r = _run("export", "trl", str(p), "-o", str(out))
    assert "every exported reward is 0" in r.stderr
    r = _run("export", "trl", str(p), "-o", str(out), "--baseline", "0.7", "--method", "causal")
    assert "every exported reward is 0" not in r.stderr
    neg = {x["agent_id"] for x in _rows(out) if x["reward"] < 0}
    assert len(neg) == 1 and sum(x["reward"] for x in _rows(out)) == pytest.approx(-0.7)
