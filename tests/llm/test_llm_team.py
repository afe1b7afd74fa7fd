"""The team collector (``collect team``): every member every round, read back exactly; bad team logs refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.collection.collect import collect
from orchestrace.collection.team import (
    DEFAULT_TEAM,
    Member,
    TeamConfig,
    calc_eval,
    deepconf_confidence,
    parse_team,
)
from orchestrace.errors import ConfigError, TraceInvalidError
from orchestrace.logged.runs import load_logged_runs

pytest.importorskip("httpx")


def reply(body: dict) -> str:
    """The fake model: the calculator member copies the expression, the others answer by seed."""
    user = body["messages"][-1]["content"]
    seed = int(body["seed"])
    if "calculator should evaluate" in user:
        expr = user.split("Compute ", 1)[1].split(".", 1)[0] if "Compute " in user else "who knows"
        return f"{expr} = 0" if seed % 5 else "I cannot"
    if "Your team answered" in user:
        return "The answer is 3."
    return f"The answer is {seed % 4}."


def transport() -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        top = [{"logprob": -0.2}, {"logprob": -2.0}] if body.get("top_logprobs") else []
        return httpx.Response(200, json={
            "choices": [{"message": {"content": reply(body)}, "finish_reason": "stop",
                         "logprobs": {"content": [{"logprob": -0.2, "top_logprobs": top},
                                                  {"logprob": -0.4, "top_logprobs": top}]}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 4}, "model": "fake"})

    return httpx.MockTransport(handler)


CFG = TeamConfig(cells=(("add", 1), ("mentor", 1)), n_tasks=6, rounds=2)


def run(cfg: TeamConfig, folder: Path) -> None:
    collect(cfg, folder, base_url="http://fake/v1", model="fake",
            client_kw={"transport": transport(), "max_retries": 0})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("team")
    run(CFG, d)
    return d


def test_every_member_every_round_is_logged_and_read_back(corpus: Path) -> None:
    runs = load_logged_runs(corpus)
    assert runs.shape == (6, 2, 4)
    assert runs.members == tuple(m.name for m in DEFAULT_TEAM)
    assert runs.sees == ((), (), (), (0, 1, 2))
    assert runs.confidence is not None and np.allclose(runs.confidence, 1.1)
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert manifest["format"] == "orchestrace-team-corpus-v1"
    assert [m["name"] for m in manifest["config"]["members"]] == list(runs.members)
    # each column's answers are what that member's reply parses to, checked against a plain re-parse
    tasks = CFG.tasks()
    for i, task in enumerate(tasks):
        row = runs.task_ids.tolist().index(task.id)
        for r in range(CFG.rounds):
            seed = CFG.attempt_seed(i, r, 1)
            expect_hot = task.parse(None, f"The answer is {seed % 4}.")
            assert runs.correct[row, r, 1] == (expect_hot == task.answer)
            calc_right = task.kind == "int" and CFG.attempt_seed(i, r, 2) % 5 != 0
            assert runs.correct[row, r, 2] == calc_right  # the calculator is exact on a right transcription
    lines = [json.loads(x) for x in (corpus / "traces.jsonl").read_text().splitlines()]
    saw = [e["event"]["attrs"]["saw"] for e in lines if "event" in e and e["event"].get("attrs", {}).get("member") == "reviser"]
    assert len(saw) == 6 * 2 and all(len(s) == 3 * (k % 2 + 1) for k, s in enumerate(saw))


def edit(corpus: Path, tmp: Path, fn) -> Path:
    out = tmp / "edited"
    out.mkdir()
    (out / "manifest.json").write_text((corpus / "manifest.json").read_text())
    lines = (corpus / "traces.jsonl").read_text().splitlines()
    (out / "traces.jsonl").write_text("\n".join(fn(lines)) + "\n")
    return out


def test_a_reviser_logged_without_what_it_saw_is_located(corpus: Path, tmp_path: Path) -> None:
    def drop_saw(lines: list[str]) -> list[str]:
        out, done = [], False
        for ln in lines:
            rec = json.loads(ln)
            if not done and "event" in rec and rec["event"].get("attrs", {}).get("member") == "reviser":
                del rec["event"]["attrs"]["saw"]
                done = True
            out.append(json.dumps(rec))
        return out

    bad = edit(corpus, tmp_path, drop_saw)
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(bad)
    assert ei.value.problems[0].code == "corpus.team" and "without the answers it saw" in str(ei.value)
    with pytest.warns(UserWarning, match="excluded 1"):
        runs = load_logged_runs(bad, exclude=True)
    assert runs.shape[0] == 5 and runs.meta["excluded"] == {"team": [runs.meta["excluded"]["team"][0]]}


def test_a_reviser_that_saw_other_answers_than_logged_is_located(corpus: Path, tmp_path: Path) -> None:
    def forge(lines: list[str]) -> list[str]:
        out = []
        for ln in lines:
            rec = json.loads(ln)
            if "event" in rec and rec["event"].get("attrs", {}).get("member") == "reviser":
                rec["event"]["attrs"]["saw"] = ["999"] * len(rec["event"]["attrs"]["saw"])
            out.append(json.dumps(rec))
        return out

    with pytest.raises(TraceInvalidError, match="the logged answers of the columns it sees"):
        load_logged_runs(edit(corpus, tmp_path, forge))


def test_members_that_differ_between_shards_are_refused(corpus: Path, tmp_path: Path) -> None:
    def rename(lines: list[str]) -> list[str]:
        out = []
        for ln in lines[: len(lines) // 2]:
            rec = json.loads(ln)
            if "header" in rec:
                rec["header"]["meta"]["members"] = ["cold", "warm", "calc", "reviser"]
            out.append(json.dumps(rec))
        return out + lines[len(lines) // 2:]

    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(edit(corpus, tmp_path, rename))
    assert "differ from the corpus's" in str(ei.value) and ei.value.problems[0].path.endswith(":1")


def test_a_missing_member_in_one_round_is_located(corpus: Path, tmp_path: Path) -> None:
    def drop(lines: list[str]) -> list[str]:
        out, done = [], False
        for ln in lines:
            rec = json.loads(ln)
            if not done and "event" in rec and rec["event"].get("type") == "return":
                done = True
                continue
            out.append(ln)
        return out

    with pytest.raises(TraceInvalidError, match="attempts, expected 2 x 4"):
        load_logged_runs(edit(corpus, tmp_path, drop))


def test_gzip_shards_read_like_the_stream(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "gz"
    out.mkdir()
    (out / "manifest.json").write_text((corpus / "manifest.json").read_text())
    (out / "traces-0.jsonl.gz").write_bytes(gzip.compress((corpus / "traces.jsonl").read_bytes()))
    a, b = load_logged_runs(corpus), load_logged_runs(out)
    assert (a.answers == b.answers).all() and a.members == b.members


def test_config_errors_say_how_to_fix() -> None:
    with pytest.raises(ConfigError, match="reviser members last"):
        TeamConfig(cells=(("add", 1),), n_tasks=1, members=(Member("r", 0.2, "reviser"), Member("a", 0.2)))
    with pytest.raises(ConfigError, match="single-answer families"):
        TeamConfig(cells=(("arith", 1),), n_tasks=1)
    with pytest.raises(ConfigError, match="unknown style"):
        parse_team("a:0.2:judge")
    with pytest.raises(ConfigError, match="distinct"):
        parse_team("a:0.2,a:0.7")
    with pytest.raises(ConfigError, match="not a number"):
        parse_team("a:hot")


def test_the_cli_refuses_a_bad_team_with_a_located_message(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrace.cli import app

    res = CliRunner().invoke(app, ["collect", "team", str(tmp_path / "c"), "--team", "a:0.2:judge",
                                   "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert res.exit_code == 2 and "unknown style 'judge'" in res.output and "Traceback" not in res.output


ints = st.integers(0, 999).map(str)
exprs = st.recursive(ints, lambda sub: st.one_of(
    st.tuples(sub, st.sampled_from(["+", "-", "*"]), sub).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
    sub.map(lambda e: f"({e})"), sub.map(lambda e: f"-{e}")), max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(exprs)
def test_calc_eval_agrees_with_python_on_calculator_expressions(expr: str) -> None:
    ref = eval(expr, {"__builtins__": {}}, {})  # noqa: S307 (built from digits and + - * ( ) only)
    assert calc_eval(expr) == (ref if len(expr) <= 60 else None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_calc_eval_never_raises_and_never_runs_code(text: str) -> None:
    got = calc_eval(text)
    assert got is None or (isinstance(got, int) and set(text.strip()) <= set("0123456789+-*() "))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(-20, 0), min_size=1, max_size=5), max_size=12), st.integers(1, 6))
def test_deepconf_confidence_is_the_lowest_window_mean(top: list[list[float]], window: int) -> None:
    got = deepconf_confidence(top, window=window)
    tok = [-sum(t) / len(t) for t in top]
    if not tok:
        assert got is None
        return
    w = min(window, len(tok))
    ref = min(np.mean(tok[i:i + w]) for i in range(len(tok) - w + 1))
    assert got == pytest.approx(ref, abs=1e-3)
