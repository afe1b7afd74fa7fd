"""Claude Code importer: golden numbers read off the real fixtures, sub-agents, bad input."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interop_helpers import assert_valid, write_jsonl

from orchestrace.importers import import_traces

SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def _usage_tokens(files: list[Path]) -> int:
    """Reference: Σ over distinct assistant message ids of max(input + cache + output) fields."""
    per: dict[str, dict[str, int]] = {}
    for f in files:
        for line in f.read_text().splitlines():
            d = json.loads(line)
            if d.get("type") != "assistant":
                continue
            m = d["message"]
            u = per.setdefault(f"{f.name}/{m['id']}", {})
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"):
                u[k] = max(u.get(k, 0), m.get("usage", {}).get(k, 0))
    return sum(sum(u.values()) for u in per.values())


def _types(tr) -> Counter:  # type: ignore[no-untyped-def]
    return Counter(e.type.value for e in tr.events)


def test_session_with_task_subagent_golden(fx: Path) -> None:
    cc = fx / "claude-code"
    res = import_traces("claude-code", [cc / f"{SESSION}.jsonl"])
    assert res.ok and not res.report.problems
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["main", "a881341"]
    t = _types(tr)
    assert (t["spawn"], t["return"], t["orchestrator_decision"]) == (1, 1, 1)
    # 2 of the 189 tool results are <task-notification> records (background tasks that finished),
    # which used to be counted as human interventions: the person wrote 2 prompts and 1 interrupt
    assert (t["tool_call"], t["tool_result"], t["message"], t["human_intervention"]) == (187, 189, 155, 3)
    assert len(tr.events) == 537
    # tokens = the transcript's usage fields (main + sidechain; the compaction run apart)
    side = cc / SESSION / "subagents" / "agent-a881341.jsonl"
    assert tr.costs["tokens"] == _usage_tokens([cc / f"{SESSION}.jsonl", side]) == 15236523
    assert tr.costs["compaction_tokens"] == 169254
    # the sub-agent's events lie inside the parent's Task call
    sp = next(e for e in tr.events if e.type.value == "spawn")
    ret = next(e for e in tr.events if e.type.value == "return")
    sub = [e for e in tr.events if e.agent == "a881341"]
    assert Counter(e.type.value for e in sub) == {"message": 3, "tool_call": 2, "tool_result": 2, "return": 1}
    assert sp.to == "a881341" and ret.to == "main"
    assert all(sp.t <= e.t and (e.t_end or e.t) <= ret.t for e in sub)
    assert abs((ret.t - sp.t) - 32.855) < 0.1  # toolUseResult.totalDurationMs = 32855
    assert sum(e.tokens for e in sub) == _usage_tokens([side])
    # every record is accounted for
    n_lines = sum(len(p.read_text().splitlines()) for p in [cc / f"{SESSION}.jsonl", *sorted((cc / SESSION / "subagents").glob("*.jsonl"))])
    assert sum(res.report.totals().values()) == n_lines == 1877
    assert res.report.totals()["unknown"] == 0
    assert res.report.reasons["progress/agent_progress: duplicate of the sub-agent's sidechain file"] == 5


def _raw_user_messages(path: Path) -> Counter:
    """What the person sent, counted on the raw transcript: user records with text that are not
    meta, tool results, compaction summaries, or text the CLI writes (notifications, command
    output, reminders); interrupts apart."""
    cli = ("<task-notification>", "<local-command-", "<bash-stdout>", "<bash-stderr>", "<system-reminder>",
           "<user-prompt-submit-hook>")
    out: Counter = Counter()
    for line in path.read_text().splitlines():
        o = json.loads(line)
        if o.get("type") != "user" or o.get("isMeta") or o.get("isCompactSummary") or o.get("isSidechain"):
            continue
        c = o["message"]["content"]
        if isinstance(c, list):
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
                continue
            c = "\n".join(b.get("text", "") for b in c if isinstance(b, dict))
        c = c.lstrip()
        if c.startswith(cli):
            continue
        out["interrupt" if c.startswith("[Request interrupted by user") else "message"] += 1
    return out


@pytest.mark.parametrize(("name", "messages", "interrupts"), [
    (f"{SESSION}.jsonl", 2, 1), ("subagent.jsonl", 2, 1), ("short.jsonl", 1, 1), ("tool_heavy.jsonl", 3, 2)])
def test_human_interventions_match_the_raw_user_messages(fx: Path, name: str, messages: int, interrupts: int) -> None:
    """Before: 5 / 3 / 2 / 6 human interventions (task notifications and local-command output
    counted as people); now the prompts and slash commands the person sent, plus interrupts."""
    f = fx / "claude-code" / name
    (tr,) = import_traces("claude-code", [f], content="keep").traces
    kinds = Counter((e.attrs or {}).get("kind") for e in tr.events if e.type.value == "human_intervention")
    raw = _raw_user_messages(f)
    assert (raw["message"], raw["interrupt"]) == (messages, interrupts)
    assert kinds["prompt"] + kinds["command"] + kinds["shell"] == raw["message"]
    assert kinds["interrupt"] == raw["interrupt"]
    assert all(not (e.content or "").startswith(("<task-notification>", "<local-command-")) for e in tr.events
               if e.type.value == "human_intervention")


def test_compaction_file_is_not_a_subagent(fx: Path) -> None:
    tr = import_traces("claude-code", [fx / "claude-code" / f"{SESSION}.jsonl"]).traces[0]
    assert not any("acompact" in a for a in tr.agents)
    comp = tr.meta["compactions"]
    assert any("/subagents/agent-acompact-" in c.get("file", "") and c["tokens"] == 169254 for c in comp)


def test_subagent_from_progress_lines_golden(fx: Path) -> None:
    res = import_traces("claude-code", [fx / "claude-code" / "subagent.jsonl"])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["main", "afb92ff"]
    t = _types(tr)
    assert (t["tool_call"], t["spawn"], t["return"], t["human_intervention"]) == (24, 1, 1, 3)
    assert tr.costs["tokens"] == 565949
    sp = next(e for e in tr.events if e.type.value == "spawn")
    ret = next(e for e in tr.events if e.type.value == "return")
    sub = [e for e in tr.events if e.agent == "afb92ff" and e.type.value != "return"]
    assert Counter(e.type.value for e in sub) == {"message": 5, "tool_call": 9, "tool_result": 9}
    assert all(sp.t <= e.t <= ret.t for e in sub)
    assert all(e.source and "subagent.jsonl:" in e.source for e in sub)
    assert ret.attrs["totalToolUseCount"] == 9 == sum(e.type.value == "tool_call" for e in sub)


def test_single_agent_sessions_golden(fx: Path) -> None:
    for name, calls, tokens in [("short.jsonl", 2, 25366), ("tool_heavy.jsonl", 6, 106193)]:
        f = fx / "claude-code" / name
        (tr,) = import_traces("claude-code", [f]).traces
        assert_valid(tr)
        assert tr.agents == ["main"] and tr.topology.value == "harness"
        assert _types(tr)["tool_call"] == calls
        assert tr.costs["tokens"] == tokens == _usage_tokens([f])


def test_sources_point_at_real_lines(fx: Path) -> None:
    cc = fx / "claude-code"
    tr = import_traces("claude-code", [cc / f"{SESSION}.jsonl"]).traces[0]
    lines = {}
    for e in tr.events:
        fname, _, line = e.source.rpartition(":")
        if fname not in lines:
            lines[fname] = (cc / fname).read_text().splitlines()
        rec = json.loads(lines[fname][int(line) - 1])
        assert rec["type"] in ("user", "assistant")
        if e.type.value == "tool_result" and e.attrs.get("kind") == "task-notification":
            assert rec["message"]["content"].startswith("<task-notification>")
        elif e.type.value == "tool_result":
            assert any(b.get("tool_use_id") == e.attrs["tool_use_id"] for b in rec["message"]["content"])


def _line(kind: str, uuid: str, ts: str, content, **kw) -> dict:  # type: ignore[no-untyped-def]
    msg = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(kw.pop("msg", {}))
    return {"type": kind, "uuid": uuid, "sessionId": "s", "version": kw.pop("version", "2.1.0"),
            "timestamp": ts, "message": msg, **kw}


def _parallel_session(tmp: Path, *, with_files: bool = True) -> Path:
    ts = lambda s: f"2026-01-01T00:00:{s:06.3f}Z"  # noqa: E731
    use = lambda i: {"type": "tool_use", "id": f"t{i}", "name": "Task",  # noqa: E731
                     "input": {"description": f"job {i}", "prompt": f"do {i}", "subagent_type": "general-purpose"}}
    main = [
        _line("user", "u0", ts(0), "split the work"),
        _line("assistant", "a1", ts(2), [use(1)], msg={"id": "m1", "usage": {"input_tokens": 10, "output_tokens": 4}}),
        _line("assistant", "a2", ts(2.1), [use(2)], msg={"id": "m1", "usage": {"input_tokens": 10, "output_tokens": 9}}),
        _line("user", "u1", ts(9), [{"type": "tool_result", "tool_use_id": "t1", "content": "r1"}],
              toolUseResult={"agentId": "x1", "status": "completed"}),
        _line("user", "u2", ts(11), [{"type": "tool_result", "tool_use_id": "t2", "content": "r2"}],
              toolUseResult={"agentId": "x2", "status": "completed"}),
        _line("assistant", "a3", ts(12), [{"type": "text", "text": "done"}], msg={"id": "m2", "usage": {"input_tokens": 5, "output_tokens": 1}}),
    ]
    f = write_jsonl(tmp / "s.jsonl", main)
    if with_files:
        for k, (t0, t1) in {1: (2.2, 8.5), 2: (2.3, 10.5)}.items():
            side = [
                _line("user", f"x{k}u", ts(t0), f"do {k}", isSidechain=True, agentId=f"x{k}"),
                _line("assistant", f"x{k}a", ts(t0 + 1), [{"type": "tool_use", "id": f"w{k}", "name": "WebFetch", "input": {}}],
                      msg={"id": f"xm{k}", "usage": {"input_tokens": 100, "output_tokens": 7}}, isSidechain=True),
                _line("user", f"x{k}r", ts(t1 - 1), [{"type": "tool_result", "tool_use_id": f"w{k}", "content": "page"}],
                      isSidechain=True),
                _line("assistant", f"x{k}b", ts(t1), [{"type": "text", "text": f"answer {k}"}],
                      msg={"id": f"xn{k}", "usage": {"input_tokens": 200, "output_tokens": 20}}, isSidechain=True),
            ]
            write_jsonl(tmp / "s" / "subagents" / f"agent-x{k}.jsonl", side)
    return f


def test_parallel_subagents_overlap_in_time(tmp_path: Path) -> None:
    res = import_traces("claude-code", [_parallel_session(tmp_path)])
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["main", "x1", "x2"] and tr.topology.value == "centralized"
    span = {}
    for a in ("x1", "x2"):
        sp = next(e for e in tr.events if e.type.value == "spawn" and e.to == a)
        ret = next(e for e in tr.events if e.type.value == "return" and e.agent == a)
        span[a] = (sp.t, ret.t)
        assert all(sp.t <= e.t <= ret.t for e in tr.events if e.agent == a)
    (s1, e1), (s2, e2) = span["x1"], span["x2"]
    assert max(s1, s2) < min(e1, e2)  # the intervals overlap
    last = tr.events[-1]  # the final turn waits for both returns
    preds = {d.src for d in tr.edges if d.dst == last.id}
    rets = {e.id for e in tr.events if e.type.value == "return"}
    assert rets <= preds
    assert tr.costs["tokens"] == (10 + 9) + (5 + 1) + 2 * (100 + 7) + 2 * (200 + 20)
    assert sum(e.type.value == "orchestrator_decision" and e.decision.kind.value == "spawn" for e in tr.events) == 2


def test_missing_subagent_files_warn_and_import(tmp_path: Path) -> None:
    res = import_traces("claude-code", [_parallel_session(tmp_path, with_files=False)])
    (tr,) = res.traces
    assert_valid(tr)
    codes = Counter(p.code for p in res.report.problems)
    assert codes["import.missing-subagent"] == 2 and not res.report.errors
    assert Counter(e.type.value for e in tr.events)["return"] == 2


def test_unknown_version_duplicates_and_out_of_order(tmp_path: Path, fx: Path) -> None:
    lines = (fx / "claude-code" / "tool_heavy.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    for r in recs:
        if "version" in r:
            r["version"] = "9.0.0"
    recs.insert(10, dict(recs[8]))  # duplicated line
    rng = random.Random(0)
    for r in recs:  # jitter timestamps: records out of order
        if r.get("type") in ("user", "assistant") and rng.random() < 0.3:
            r["timestamp"] = "2020-01-01T00:00:00.000Z"
    recs.append({"type": "brand-new-record", "uuid": "zz"})
    f = write_jsonl(tmp_path / "odd.jsonl", recs)
    res = import_traces("claude-code", [f])
    (tr,) = res.traces
    assert_valid(tr)
    codes = Counter(p.code for p in res.report.problems)
    assert codes["import.unknown-version"] == 1
    assert codes["import.unknown-record"] == 1 and res.report.counts["brand-new-record"]["unknown"] == 1
    if recs[8].get("type") in ("user", "assistant"):
        assert codes["import.duplicate"] == 1
    assert res.report.clamped_times > 0
    assert sum(res.report.totals().values()) == len(recs)


def test_binary_garbage_gives_located_errors_and_keeps_the_rest(tmp_path: Path, fx: Path) -> None:
    raw = (fx / "claude-code" / "short.jsonl").read_bytes().splitlines(keepends=True)
    raw.insert(3, b"\x00\xff\xfe garbage \x89PNG\r\n")
    raw.append(b'{"type": "user", "uuid": "cut')  # truncated last line, no newline
    f = tmp_path / "g.jsonl"
    f.write_bytes(b"".join(raw))
    res = import_traces("claude-code", [f])
    (tr,) = res.traces
    assert_valid(tr)
    errs = {p.path: p.code for p in res.report.errors}
    assert errs == {"g.jsonl:4": "import.not-json", f"g.jsonl:{len(raw)}": "import.truncated"}
    assert Counter(e.type.value for e in tr.events)["tool_call"] == 2


def test_wrong_format_is_an_error_not_a_traceback(fx: Path) -> None:
    res = import_traces("claude-code", [fx / "codex" / "sample_codex_session.jsonl"])
    assert not res.traces and res.report.errors[0].code == "import.wrong-format"


_GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=60).filter(lambda b: b"\n" not in b and b.strip()),
    st.builds(lambda d: json.dumps(d).encode(), st.dictionaries(st.sampled_from(["type", "uuid", "message", "timestamp", "x"]),
              st.one_of(st.none(), st.integers(), st.text(max_size=8), st.sampled_from(["user", "assistant", "progress"])),
              max_size=4)),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.lists(st.tuples(st.integers(0, 15), _GARBAGE), min_size=1, max_size=5))
def test_random_garbage_lines_give_problems_not_exceptions(tmp_path: Path, fx: Path, garbage) -> None:  # type: ignore[no-untyped-def]
    lines = (fx / "claude-code" / "short.jsonl").read_bytes().splitlines()
    for pos, g in garbage:
        lines.insert(min(pos, len(lines)), g)
    f = tmp_path / "h.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    res = import_traces("claude-code", [f])
    assert sum(res.report.totals().values()) == sum(1 for ln in lines if ln.strip())
    for p in res.report.errors:
        assert p.path.startswith("h.jsonl:")
    for tr in res.traces:
        assert_valid(tr)
    assert res.traces, "the sound records still import"
