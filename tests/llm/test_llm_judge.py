"""The LLM judge (orchestrace.blame.judge, ``blame-judge``) against the scripted fake endpoint: the three
protocols' plumbing, reply parsing (with Hypothesis), visible truncation, context overflow, and the
error paths of the command (dead endpoint, hashed text, a transcript not imported, no ground truth).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_fakes import FaultyServer, free_port
from typer.testing import CliRunner

from orchestrace.blame.judge import (
    JudgeConfig,
    judge,
    match_agent,
    parse_half,
    parse_verdict,
    parse_yes_no,
    plan_caps,
    second_opinion,
    transcript_of,
    truncate,
)
from orchestrace.cli import app
from orchestrace.errors import ConfigError, LLMError, TraceError
from orchestrace.importers.chat import from_doc
from orchestrace.llm.client import ChatClient

CHAT = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "chat"
runner = CliRunner()
TEAM = ["Planner", "Coder", "Computer_terminal", "Checker"]


class Replies(FaultyServer):
    """The fake endpoint, answering each request with ``reply(request)``; action ``overflow`` answers
    llama.cpp's HTTP 400 for a prompt longer than the context."""

    def __init__(self, reply: Any, script: Any = lambda i: "ok") -> None:
        super().__init__(script)
        self.reply = reply

    def _respond(self, action: str, req: dict) -> tuple[str, bytes, str]:
        if action == "overflow":
            msg = {"error": {"code": 400, "message": "request (3000 tokens) exceeds the available context size "
                                                      "(1024 tokens), try increasing it"}}
            return "400 Bad Request", json.dumps(msg).encode(), ""
        self.text = self.reply(req)
        return super()._respond(action, req)


@pytest.fixture
def replies():  # type: ignore[no-untyped-def]
    servers: list[Replies] = []

    def make(reply: Any, script: Any = lambda i: "ok") -> Replies:
        srv = Replies(reply, script).start()
        servers.append(srv)
        return srv

    yield make
    for s in servers:
        s.stop()


def _doc(n: int = 4, long: dict[int, int] | None = None) -> dict[str, Any]:
    turns = [{"name": TEAM[k % len(TEAM)], "role": "assistant", "content": f"turn {k} says {'x' * 20}"}
             for k in range(n)]
    for k, size in (long or {}).items():
        turns[k]["content"] = "H" * (size // 2) + "T" * (size - size // 2)
    return {"question": "What is 2 + 2?", "ground_truth": "4", "is_correct": False, "history": turns}


def _trace(doc: dict[str, Any], content: str = "keep") -> Any:
    return from_doc(doc, "run.json", content=content)[0][0]  # type: ignore[arg-type]


def _question(req: dict) -> str:
    return str(req["messages"][-1]["content"]).rsplit("\n\n", 1)[-1]


def _ask(srv: Replies, trace: Any, cfg: JudgeConfig) -> Any:
    async def go() -> Any:
        from orchestrace.blame.judge import ajudge

        async with ChatClient(srv.base_url, "fake", max_retries=0, timeout=10) as c:
            return await ajudge(trace, c, cfg)

    import asyncio

    return asyncio.run(go())


# ----------------------------------------------------------------------------- the transcript
@pytest.mark.parametrize("name", ["whowhen_magentic.json", "whowhen_algorithm.json"])
def test_steps_are_the_history_turns(name: str) -> None:
    raw = json.loads((CHAT / name).read_text())
    tx = transcript_of(_trace(raw))
    history = raw["history"]
    assert [s.index for s in tx.steps] == list(range(len(history)))
    for s in tx.steps:
        turn = history[s.index]
        assert s.agent == (turn.get("name") or turn["role"]).split(" (")[0]  # Magentic-One tags stripped
        assert s.text == (turn["content"] or "")
    assert tx.ground_truth == raw["ground_truth"] and tx.task == raw["question"]
    # the labels are never part of what the judge reads
    assert raw["mistake_reason"] not in repr(tx)


def test_steps_of_a_timestamped_jsonl_transcript() -> None:
    from orchestrace.importers.chat import read

    tr = read([CHAT / "manager_timestamps.jsonl"], content="keep")[0]
    lines = [json.loads(x) for x in (CHAT / "manager_timestamps.jsonl").read_text().splitlines() if x.strip()]
    tx = transcript_of(tr)
    assert [(s.agent, s.text) for s in tx.steps] == [(t["name"], t["content"]) for t in lines]
    assert [s.index for s in tx.steps] == sorted({s.index for s in tx.steps})  # in order, one per turn


def test_a_trace_without_text_is_a_located_error() -> None:
    with pytest.raises(TraceError, match=r"\$\.events\[\*\]\.content.*--content keep"):
        transcript_of(_trace(_doc(), content="hash"))


# ----------------------------------------------------------------------------- parsing (properties)
names = st.sampled_from(TEAM)
replies_text = st.text(st.characters(codec="utf-8"), max_size=200)


@settings(max_examples=200, deadline=None)
@given(reply=replies_text, n=st.integers(1, 40))
def test_parse_verdict_never_raises_and_stays_in_range(reply: str, n: int) -> None:
    agent, step, notes = parse_verdict(reply, TEAM, range(n))
    assert agent is None or agent in TEAM
    assert step is None or 0 <= step < n
    assert all(isinstance(x, str) for x in notes)


@settings(max_examples=200, deadline=None)
@given(agent=names, step=st.integers(0, 30), style=st.sampled_from(["plain", "json", "lower", "spaces"]),
       noise=st.sampled_from(["", "Sure! ", "Answer:\n"]))
def test_parse_verdict_reads_the_asked_format(agent: str, step: int, style: str, noise: str) -> None:
    shown = {"plain": agent, "json": agent, "lower": agent.lower(), "spaces": agent.replace("_", " ")}[style]
    reply = (f'{{"agent": "{shown}", "step": {step}}}' if style == "json"
             else f"{noise}Agent: {shown}\nStep: {step}\nReason: it was wrong.")
    got_agent, got_step, _ = parse_verdict(reply, TEAM, range(31))
    assert (got_agent, got_step) == (agent, step)


@settings(deadline=None)
@given(step=st.integers(-50, 200))
def test_parse_verdict_clamps_a_step_outside_the_transcript(step: int) -> None:
    _, got, notes = parse_verdict(f"Agent: Coder\nStep: {step}", TEAM, [3, 4, 5, 9])
    expected = step if step in (3, 4, 5, 9) else min([3, 4, 5, 9], key=lambda v: (abs(v - step), v))
    assert got == expected
    assert bool(notes) == (step not in (3, 4, 5, 9))


def test_match_agent_fuzzy_and_unknown() -> None:
    assert match_agent("computer terminal", TEAM)[0] == "Computer_terminal"
    assert match_agent("the Checker agent", TEAM)[0] == "Checker"
    assert match_agent("Chekcer", TEAM)[0] == "Checker"  # difflib
    assert match_agent("Planner", TEAM) == ("Planner", "")
    agent, note = match_agent("Zebra", TEAM)
    assert agent is None and "not in the team" in note


@settings(deadline=None)
@given(reply=replies_text)
def test_yes_no_and_half_never_raise(reply: str) -> None:
    assert parse_yes_no(reply) in (True, False, None)
    assert parse_half(reply, ((0, 4), (5, 9))) in ("A", "B", None)


@pytest.mark.parametrize(("reply", "want"), [("Yes.", True), ("no", False), ("YES, step 2", True),
                                             ("I think not", None), ("", None)])
def test_yes_no(reply: str, want: bool | None) -> None:
    assert parse_yes_no(reply) is want


@pytest.mark.parametrize(("reply", "want"), [("A", "A"), (" B\n", "B"), ("(B) the second", "B"),
                                             ("the first half", "A"), ("steps 5–9", "B"), ("steps 0-4", "A"),
                                             ("A decisive error is in step 7", "B"), ("answer: A", "A"),
                                             ("steps 0–4 or steps 5–9", None), ("Apple", None), ("", None)])
def test_half(reply: str, want: str | None) -> None:
    assert parse_half(reply, ((0, 4), (5, 9))) == want


# ----------------------------------------------------------------------------- fitting the prompt
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=3000), cap=st.integers(40, 2000))
def test_truncate_keeps_head_and_tail_and_says_how_much(text: str, cap: int) -> None:
    out = truncate(text, cap)
    assert len(out) <= cap
    if len(text) <= cap:
        assert out == text
        return
    m = re.search(r"\[… ([\d,]+) chars cut …\]", out)
    assert m is not None
    head, tail = out[: m.start()], out[m.end():]
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + len(tail) + int(m.group(1).replace(",", "")) == len(text)


@settings(max_examples=120, deadline=None)
@given(lengths=st.lists(st.integers(0, 5000), min_size=1, max_size=60), budget=st.integers(0, 20000),
       label=st.integers(0, 30))
def test_plan_caps_fits_the_budget(lengths: list[int], budget: int, label: int) -> None:
    caps = plan_caps(lengths, budget, label=label, min_cap=48)
    shown = [c for c in caps if c > 0]
    assert all(0 <= c <= n for c, n in zip(caps, lengths, strict=True))
    assert sum(caps) + label * len(shown) <= max(budget, label * len(shown))
    if sum(lengths) + label * len(lengths) <= budget:
        assert caps == lengths  # everything fits: nothing is cut


# ----------------------------------------------------------------------------- the protocols
def test_all_at_once_names_agent_and_step(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: coder\nStep: 1\nReason: prints 2 + 3")
    v = _ask(srv, _trace(_doc()), JudgeConfig(protocol="all-at-once", with_ground_truth=True))
    assert (v.agent, v.step, v.calls, v.ok) == ("Coder", 1, 1, True)
    prompt = srv.requests[0]["messages"][-1]["content"]
    assert "Correct answer: 4" in prompt and "[1] Coder: turn 1 says" in prompt
    assert v.prompt_tokens == 11 and v.completion_tokens == 5  # the server's usage, not estimated


def test_ground_truth_is_shown_only_when_asked(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: Coder\nStep: 1")
    _ask(srv, _trace(_doc()), JudgeConfig())
    assert "Correct answer" not in srv.requests[0]["messages"][-1]["content"]


def test_step_by_step_stops_at_the_first_yes(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Yes" if "Is step 2 " in _question(req) else "No")
    v = _ask(srv, _trace(_doc(6)), JudgeConfig(protocol="step-by-step"))
    assert (v.agent, v.step, v.calls) == (TEAM[2], 2, 3)
    # call i shows steps 0..i, each at the same cut: every prompt extends the previous one
    bodies = [r["messages"][-1]["content"].rsplit("\n\n", 1)[0] for r in srv.requests]
    assert all(b2.startswith(b1) for b1, b2 in zip(bodies, bodies[1:], strict=False))
    assert "[3]" not in bodies[-1]


def test_step_by_step_all_no_is_no_verdict(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "No.")
    v = _ask(srv, _trace(_doc(4)), JudgeConfig(protocol="step-by-step"))
    assert not v.ok and v.calls == 4 and "no at every one of the 4 steps" in v.reason


@pytest.mark.parametrize("target", [0, 6, 12])
def test_binary_search_narrows_to_the_step(replies, target: int) -> None:  # type: ignore[no-untyped-def]
    def reply(req: dict) -> str:
        a, m = map(int, re.search(r"in steps (\d+)–(\d+) or", _question(req)).groups())  # type: ignore[union-attr]
        return "A" if a <= target <= m else "B"

    srv = replies(reply)
    v = _ask(srv, _trace(_doc(13)), JudgeConfig(protocol="binary-search"))
    assert (v.step, v.agent) == (target, TEAM[target % len(TEAM)])
    assert v.calls in (math.floor(math.log2(13)), math.ceil(math.log2(13)))


def test_unparseable_reply_is_a_stated_no_verdict_with_the_raw_reply(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "I am a language model.")
    for protocol in ("all-at-once", "binary-search"):
        v = _ask(srv, _trace(_doc()), JudgeConfig(protocol=protocol))
        assert not v.ok and v.reason.startswith("no verdict") and v.raw[-1] == "I am a language model."


def test_long_turns_are_cut_visibly_and_reported(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: Coder\nStep: 1")
    cfg = JudgeConfig(context_tokens=1024, chars_per_token=3.0)
    v = _ask(srv, _trace(_doc(4, long={1: 20_000})), cfg)
    prompt = srv.requests[0]["messages"][-1]["content"]
    budget = (1024 - cfg.max_tokens - 160) * 3
    assert len(prompt) <= budget + 400  # + the question
    assert re.search(r"\[1\] Coder: H+\[… [\d,]+ chars cut …\]T+\n", prompt)
    assert [(t.step, t.chars) for t in v.truncated] == [(1, 20_000)] and 0 < v.truncated[0].shown < 20_000
    assert "steps 1" in v.truncation_summary()


def test_many_turns_are_omitted_from_the_middle_and_reported(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: Coder\nStep: 1")
    v = _ask(srv, _trace(_doc(200)), JudgeConfig(context_tokens=1024))
    prompt = srv.requests[0]["messages"][-1]["content"]
    assert re.search(r"\[steps \d+–\d+ omitted to fit\]", prompt) and "[0] Planner" in prompt and "[199] " in prompt
    assert any(t.shown == 0 for t in v.truncated) and "omitted" in v.truncation_summary()


def test_context_overflow_is_asked_again_smaller(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: Coder\nStep: 1", script=lambda i: "overflow" if i == 0 else "ok")
    v = _ask(srv, _trace(_doc(4, long={1: 20_000})), JudgeConfig())
    assert v.ok and len(srv.requests) == 2 and any("too long" in n for n in v.notes)
    sizes = [len(r["messages"][-1]["content"]) for r in srv.requests]
    assert sizes[1] < sizes[0] * (1024 - 48) / 3000


def test_config_and_ground_truth_errors() -> None:
    with pytest.raises(ConfigError, match="did you mean 'step-by-step'"):
        JudgeConfig(protocol="step_by_step")
    with pytest.raises(ConfigError, match="context_tokens"):
        JudgeConfig(context_tokens=100)
    doc = _doc()
    del doc["ground_truth"]
    with pytest.raises(ConfigError, match="--ground-truth"):
        judge(_trace(doc), object(), JudgeConfig(with_ground_truth=True))  # type: ignore[arg-type]


def test_dead_endpoint_raises_llm_error() -> None:
    async def go() -> None:
        from orchestrace.blame.judge import ajudge

        async with ChatClient(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0) as c:
            await ajudge(_trace(_doc()), c)

    import asyncio

    with pytest.raises(LLMError) as err:
        asyncio.run(go())
    assert err.value.cause == "connect"


# ----------------------------------------------------------------------------- a second opinion
def test_second_opinion() -> None:
    from types import SimpleNamespace as NS

    same = second_opinion(NS(agent="Coder", step=3, confidence=0.9), NS(agent="Coder", step=3, confidence=None))
    assert (same.agent, same.step, same.step_gap) == (True, True, 0)
    none = second_opinion(NS(agent=None, step=None, confidence=None), NS(agent="Coder", step=2, confidence=None))
    assert (none.agent, none.step) == (None, None) and "one side has none" in none.summary
    differ = second_opinion(NS(agent="Planner", step=0, confidence=None), NS(agent="Coder", step=5, confidence=None))
    assert (differ.agent, differ.step, differ.step_gap) == (False, False, 5)


# ----------------------------------------------------------------------------- the command
def _write(tmp_path: Path, doc: dict[str, Any], content: str = "keep") -> Path:
    src = tmp_path / "run.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "run.trace.json"
    res = runner.invoke(app, ["import", "chat", str(src), "--content", content, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_cli_prints_verdict_truncation_and_json(replies, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: coder\nStep: 1")
    run = _write(tmp_path, _doc(4, long={1: 20_000}))
    res = runner.invoke(app, ["blame-judge", str(run), "--base-url", srv.base_url, "--model", "m",
                              "--context-tokens", "1024"])
    assert res.exit_code == 0, res.output
    assert "agent Coder, step 1 (all-at-once" in res.output and "truncated to fit" in res.output
    assert "'coder' read as 'Coder'" in res.output
    res = runner.invoke(app, ["blame-judge", str(run), "--base-url", srv.base_url, "--model", "m", "--json",
                              "-p", "binary-search"])
    got = json.loads(res.output)
    # "… Step: 1" names step 1: in 0–1 (A), then in 1–1 (B)
    assert res.exit_code == 0 and got["protocol"] == "binary-search" and (got["agent"], got["step"]) == ("Coder", 1)
    assert got["raw"] == ["Agent: coder\nStep: 1"] * 2 and got["calls"] == 2


@pytest.mark.skipif(importlib.util.find_spec("httpx") is None, reason="needs httpx: pip install 'orchestrace[llm]'")
def test_cli_no_verdict_is_stated_with_the_raw_reply(replies, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Hmm.")
    res = runner.invoke(app, ["blame-judge", str(_write(tmp_path, _doc())), "--base-url", srv.base_url,
                              "--model", "m"])
    assert res.exit_code == 0 and "no verdict" in res.output and 'raw reply: "Hmm."' in res.output


def test_cli_dead_endpoint_is_one_error_line(tmp_path: Path) -> None:
    run = _write(tmp_path, _doc())
    res = runner.invoke(app, ["blame-judge", str(run), "--base-url", f"http://127.0.0.1:{free_port()}/v1",
                              "--model", "m", "--max-retries", "0"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "connect" in lines[0]
    assert "serve-local" in lines[0] and "Traceback" not in res.output


def test_cli_bad_input(tmp_path: Path) -> None:
    url = ["--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m"]
    hashed = _write(tmp_path, _doc(), content="hash")
    res = runner.invoke(app, ["blame-judge", str(hashed), *url])
    assert res.exit_code == 1 and "--content keep" in res.output
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(_doc()))
    res = runner.invoke(app, ["blame-judge", str(raw), *url])
    assert res.exit_code == 2 and "orchestrace import chat" in res.output
    doc = _doc()
    del doc["ground_truth"]
    res = runner.invoke(app, ["blame-judge", str(_write(tmp_path, doc)), *url, "--with-ground-truth"])
    assert res.exit_code == 2 and "--ground-truth" in res.output
    res = runner.invoke(app, ["blame-judge", str(hashed), "-p", "nope", *url])
    assert res.exit_code == 2 and "choose one of" in res.output
    res = runner.invoke(app, ["blame-judge", str(hashed)])
    assert res.exit_code == 2 and "--base-url" in res.output


def test_prompts_with_and_without_ground_truth_share_the_transcript(replies) -> None:  # type: ignore[no-untyped-def]
    srv = replies(lambda req: "Agent: Coder\nStep: 1")
    trace = _trace(_doc(6, long={2: 9_000}))
    for gt in (True, False):
        _ask(srv, trace, JudgeConfig(context_tokens=1024, with_ground_truth=gt))
    with_gt, without = (r["messages"][-1]["content"].rsplit("\n\n", 1)[0] for r in srv.requests)
    assert with_gt == without + "\nCorrect answer: 4"  # same cuts, the answer after the steps


def test_binary_search_shows_every_turn_of_a_range_the_whole_transcript_omits(replies) -> None:  # type: ignore[no-untyped-def]
    def reply(req: dict) -> str:
        a, m = map(int, re.search(r"in steps (\d+)–(\d+) or", _question(req)).groups())  # type: ignore[union-attr]
        return "A" if a <= 100 <= m else "B"

    srv = replies(reply)
    v = _ask(srv, _trace(_doc(200)), JudgeConfig(protocol="binary-search", context_tokens=1024))
    assert v.step == 100
    first, last = (r["messages"][-1]["content"] for r in (srv.requests[0], srv.requests[-1]))
    assert "omitted to fit" in first and "[100] " not in first  # the middle of 200 turns does not fit at first
    assert "omitted" not in last and "[100] " in last


def test_blame_package_exports_the_judge_api() -> None:
    import orchestrace.blame as blame

    judge_api = {"PROTOCOLS", "Agreement", "Attribution", "JudgeConfig", "Verdict", "ajudge", "judge",
                 "second_opinion", "transcript_of"}
    assert judge_api <= set(blame.__all__)  # beside the evidence blame (blame, credit, BlameResult, …)
    assert all(getattr(blame, n) is not None for n in blame.__all__)
