"""``collect team --task-file``: your own tasks through the team collector, against a fake endpoint on loopback.

The same task file, graders and errors as ``collect run --task-file`` (tests/offline/test_your_runs.py).
The fake model's reply is a function of the request (its seed, and which member's prompt it is),
so every expected grade below is computed here from the reply and the reference, not by the
collector's grading code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection.team import TeamConfig
from orchestrace.offline import check_team_runs, load_logged_runs

pytest.importorskip("httpx")

GRADERS = {  # the test's graders (module test_team_graders, written into tmp_path)
    "flaky": "def grade(reply, ref):\n    if 'answer is 3' in reply:\n        raise ValueError('three')\n"
             "    return ref in reply\n",
    "slow": "def grade(reply, ref):\n    while reply == 'The answer is 0.':\n        pass\n    return ref in reply\n",
}


def reply(body: dict) -> str:
    """The fake model: the calc member copies the sum (or gives up on every third seed), the reviser says 3,
    the others state ``seed % 4``."""
    user = body["messages"][-1]["content"]
    seed = int(body["seed"])
    if "calculator should evaluate" in user:
        m = re.search(r"What is (\d+ \+ \d+)\?", user)
        return m.group(1) if m and seed % 3 else "I cannot"
    if "Your team answered" in user:
        return "The answer is 3."
    return f"The answer is {seed % 4}."


def task_rows() -> list[dict]:
    rows = []
    for i in range(8):
        ans = (i * 5) % 4  # 0, 1, 2, 3, 0, 1, 2, 3
        grader: object = ["numeric", "exact", {"type": "regex", "pattern": rf"(^| ){ans}\.?$"}, "numeric"][i % 4]
        if i == 5:
            grader = "test_team_graders_flaky:grade"  # raises on "… answer is 3" (reference 1: its check passes)
        if i == 6:
            grader = {"type": "test_team_graders_slow:grade", "timeout_s": 0.2}  # hangs on "The answer is 0."
        rows.append({"id": f"t{i}", "prompt": f"What is 0 + {ans}? Reply with the number only.", "answer": ans,
                     "grader": grader})
    return rows


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def graders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, src in GRADERS.items():
        (tmp_path / f"test_team_graders_{name}.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def expected(i: int, seed: int, style: str) -> tuple[bool, bool]:
    """(correct, grader error) of task ``i``'s reply at ``seed`` by a member of ``style``, from the rows above."""
    ans = (i * 5) % 4
    if style == "calc":
        if not seed % 3:
            return False, False  # "I cannot": no expression, no answer
        text = str(ans)  # the calculator's value, graded as if the member had said it
    elif style == "reviser":
        text = "The answer is 3."
    else:
        text = f"The answer is {seed % 4}."
    if i == 5 and "answer is 3" in text:
        return False, True
    if i == 6 and text == "The answer is 0.":
        return False, True
    stated = int(text.rsplit(" ", 1)[-1].rstrip("."))
    return stated == ans, False


def test_collect_team_from_a_task_file_grades_with_its_graders_and_grows_on_resume(
        faulty, graders: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok", text=reply)
    f = write_lines(tmp_path / "mine.jsonl", task_rows())
    out = tmp_path / "team"
    base = ["collect", "team", str(out), "--task-file", str(f), "-R", "2", "--base-url", srv.base_url,
            "--model", "fake", "--concurrency", "2"]
    r = CliRunner().invoke(app, [*base, "-n", "4"])
    assert r.exit_code == 0, r.output
    assert "4/4 tasks" in r.output
    r = CliRunner().invoke(app, [*base, "--resume"])  # no -n: every task of the file, so the corpus grows to 8
    assert r.exit_code == 0, r.output
    assert "8/8 tasks" in r.output and "4 now, 4 before" in r.output
    runs = load_logged_runs(out)
    cfg = TeamConfig(cells=(), n_tasks=0, rounds=2, task_file=str(f))
    assert runs.shape == (8, 2, 4) and runs.members == ("cold", "hot", "calc", "reviser")
    assert runs.sees == ((), (), (), (0, 1, 2)) and set(runs.suite.tolist()) == {"mine"}
    n_err = 0
    for row, tid in enumerate(runs.task_ids.tolist()):
        i = int(tid[1:])
        for rr in range(2):
            for w, m in enumerate(cfg.members):
                ok, err = expected(i, cfg.attempt_seed(i, rr, w), m.style)
                assert bool(runs.correct[row, rr, w]) == ok, (tid, rr, m.name)
                n_err += err
    assert n_err > 0  # the faulty graders were exercised on model replies
    man = json.loads((out / "manifest.json").read_text())
    assert [s["grader_errors"] for s in man["sessions"]] == [
        sum(expected(i, cfg.attempt_seed(i, rr, w), m.style)[1] for i in idx for rr in range(2)
            for w, m in enumerate(cfg.members)) for idx in (range(4), range(4, 8))]
    assert sum(s["grader_errors"] for s in man["sessions"]) == n_err
    assert man["format"] == "orchestrace-team-corpus-v1" and man["config"]["n_tasks"] == 8
    assert "could not be graded" in r.output and "Traceback" not in r.output
    lines = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines()]
    errs = [e["event"]["attrs"]["grade_error"] for e in lines
            if "event" in e and "grade_error" in e["event"].get("attrs", {})]
    assert len(errs) == n_err and any("raised ValueError: three" in e for e in errs)
    assert any("did not return within 0.2 s" in e for e in errs)
    checked, _ = check_team_runs(runs, where=str(out), need_splits=False)
    assert checked.shape == runs.shape


def test_a_bad_task_file_on_the_team_path_is_located_and_nothing_is_called(
        faulty, graders: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "test_team_graders_boom.py").write_text("def grade(reply, ref):\n    raise RuntimeError('boom')\n")
    srv = faulty("ok", text=reply)
    rows = [
        {"id": "ok", "prompt": "What is 0 + 1?", "answer": 1, "grader": "numeric"},
        {"id": "noans", "prompt": "?"},
        {"id": "unk", "prompt": "?", "answer": "x", "grader": "fuzzy"},
        {"id": "ok", "prompt": "dup", "answer": "1"},
        {"id": "raise", "prompt": "?", "answer": "x", "grader": "test_team_graders_boom:grade"},
        {"id": "hang", "prompt": "?", "answer": "0", "grader": {"type": "test_team_graders_slow:grade", "timeout_s": 0.2}},
        {"id": "long", "prompt": "x" * 1200, "answer": "x"},  # ~420 tokens: fits a vote's 584, not the team's 384
    ]
    f = write_lines(tmp_path / "bad.jsonl", rows)
    out = tmp_path / "team"
    r = CliRunner().invoke(app, ["collect", "team", str(out), "--task-file", str(f), "--base-url", srv.base_url,
                                 "--model", "fake", "--context-limit", "600"])
    assert r.exit_code == 1 and "Traceback" not in r.output  # invalid content, located: 1 (as collect import)
    text = " ".join(r.output.split())
    for ln, what in [(2, "missing reference 'answer'"), (3, "unknown grader 'fuzzy'"), (4, "already used on line 1"),
                     (5, "RuntimeError: boom"), (6, "did not return within 0.2 s"), (7, "over the limit of 384")]:
        assert f"{f}:{ln}" in r.output and what in text, (ln, what)
    assert "nothing was run" in text
    assert srv.requests == [] and not (out / "traces.jsonl").exists()
    # the same long prompt fits the vote collector's margin (the reply only): the team's is the calc/reviser's
    long_only = write_lines(tmp_path / "long.jsonl", [rows[0], rows[-1]])
    cfg = TeamConfig(cells=(), n_tasks=0, task_file=str(long_only), context_limit=2000)
    assert cfg.n_tasks == 2 and cfg.prompt_margin() == 216
    from orchestrace.collection.collect import CollectConfig

    assert CollectConfig(cells=(), n_tasks=0, task_file=str(long_only), context_limit=600).n_tasks == 2


def test_team_task_file_usage_errors_exit_2(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "t.jsonl", [{"id": "a", "prompt": "1?", "answer": 1}])
    base = ["collect", "team", str(tmp_path / "c"), "--task-file", str(f), "--base-url", "http://127.0.0.1:9/v1",
            "--model", "m"]
    for extra, msg in [(["-n", "2"], "holds only 1 task"), (["-n", "0"], "--tasks must be >= 1"),
                       (["--team", "a:0.2:judge"], "unknown style 'judge'")]:
        r = CliRunner().invoke(app, [*base, *extra])
        assert r.exit_code == 2 and msg in " ".join(r.output.split()) and "Traceback" not in r.output, (extra, r.output)
    r = CliRunner().invoke(app, ["collect", "team", str(tmp_path / "c"), "--task-file", str(tmp_path / "none.jsonl")])
    assert r.exit_code == 2 and "no such task file" in r.output
    assert not (tmp_path / "c" / "traces.jsonl").exists()
