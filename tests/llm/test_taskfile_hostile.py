"""The task-file reader on hostile files (issue 41, class 3): size checked before reading, the 16 MiB
cap, lines split at ``\\n`` only (a raw U+2028 stays in its line), symlink loops and FIFOs located,
non-finite answers and what a corpus reader would refuse (long answers, absurd difficulty, 1 MiB
lines) refused at load, a file of junk lines refused in bounded time and memory."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection.taskfile import TaskFileError, load_task_file


def _problems(path: Path) -> dict[str, str]:
    with pytest.raises(TaskFileError) as ei:
        load_task_file(path)
    return {p.path.rsplit(":", 1)[1]: f"{p.code} {p.message}" for p in ei.value.problems}


def test_a_sparse_gigabyte_and_a_20_mb_file_are_refused_by_stat(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.jsonl"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)
    big = tmp_path / "big.jsonl"
    line = json.dumps({"id": "x", "prompt": "p" * 1000, "answer": "1"}) + "\n"
    big.write_text(line * (20_000_000 // len(line) + 1))
    for p in (sparse, big):
        t0 = time.monotonic()
        with pytest.raises(TaskFileError, match="over the 16777216-byte limit"):
            load_task_file(p)
        assert time.monotonic() - t0 < 5


def test_a_raw_line_separator_stays_in_its_line_and_lines_are_counted_at_newlines(tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"id": "a", "prompt": "one\u2028two\u0085three\u2029four", "answer": "1"}\n'
                 '{"id": "b", "prompt": "?"}\n', encoding="utf-8")
    got = _problems(f)
    assert set(got) == {"2"} and got["2"].startswith("taskfile.answer")
    f.write_text('{"id": "a", "prompt": "one\u2028two", "answer": "1"}\n', encoding="utf-8")
    [t] = load_task_file(f)
    assert t.question == "one\u2028two"


@pytest.mark.parametrize("answer", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_answers_are_refused(tmp_path: Path, answer: str) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"id": "a", "prompt": "?", "answer": 1}\n{"id": "b", "prompt": "?", "answer": ' + answer + "}\n")
    got = _problems(f)
    assert set(got) == {"2"} and ("not a finite number" in got["2"] or "not a number a task file may hold" in got["2"])


def test_what_a_corpus_reader_refuses_is_refused_at_load(tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    rows = [{"id": "ok", "prompt": "?", "answer": "1"},
            {"id": "long", "prompt": "?", "answer": "x" * 5000},
            {"id": "hard", "prompt": "?", "answer": "1", "difficulty": 10**30},
            {"id": "neg", "prompt": "?", "answer": "1", "difficulty": -1},
            {"id": "huge", "prompt": "p" * (1 << 20), "answer": "1"}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows) + "[" * 200_000 + "\n")
    got = _problems(f)
    assert {k: v.split()[0] for k, v in got.items()} == {
        "2": "taskfile.answer", "3": "taskfile.difficulty", "4": "taskfile.difficulty", "5": "taskfile.size",
        "6": "taskfile.json"}


def test_symlink_loops_fifos_and_folders_are_located(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for p, why in [(loop, "cannot read the task file"), (fifo, "a FIFO"), (tmp_path, "a folder"),
                   (tmp_path / "nope.jsonl", "no such task file")]:
        with pytest.raises(TaskFileError, match=why) as ei:
            load_task_file(p)
        assert str(p) in str(ei.value)
    r = CliRunner().invoke(app, ["collect", "run", str(tmp_path / "c"), "--task-file", str(loop),
                                 "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert r.exit_code == 2 and str(loop) in r.output and "internal error" not in r.output


def test_a_file_of_junk_lines_is_refused_in_bounded_time(tmp_path: Path) -> None:
    f = tmp_path / "junk.jsonl"
    f.write_bytes(b"x\n" * 4_000_000 + b"\n" * 4_000_000)  # 12 MB: under the cap, 4 M bad lines
    t0 = time.monotonic()
    with pytest.raises(TaskFileError, match="reading stopped at line") as ei:
        load_task_file(f)
    assert time.monotonic() - t0 < 10 and len(ei.value.problems) == 200


_PIECES = ['{"id": "a", "prompt": "?", "answer": 1}', '{"id": "a"', "NaN", "1e999", "9" * 400, '"\u2028"', "[[[[",
           '{"id": 1, "prompt": "p", "answer": "x", "difficulty": 10000000}', '{"grader": {"type": "regex"}}', "\x00"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=60), st.sampled_from(_PIECES)), max_size=6))
def test_any_task_file_loads_or_is_a_located_refusal(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.jsonl"
        p.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
        try:
            tasks = load_task_file(p, check_graders=False)
        except TaskFileError as exc:
            assert all(pr.path.startswith(f"{p}:") for pr in exc.problems)
            return
        assert all(len(t.answer) <= 4096 and 0 <= t.difficulty <= 10**6 for t in tasks)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.sampled_from(_PIECES)))
def test_the_log_decoder_returns_or_raises_value_error(text: str) -> None:
    from orchestrace.collection._logread import loads

    try:
        out = loads(text)
    except ValueError:
        return
    stack = [out]
    while stack:  # what decodes holds only finite floats and integers within ±2**63
        x = stack.pop()
        if isinstance(x, dict):
            stack += list(x.values())
        elif isinstance(x, list):
            stack += x
        elif isinstance(x, float):
            assert math.isfinite(x)
        elif isinstance(x, int) and not isinstance(x, bool):
            assert -(2**63) < x < 2**63
