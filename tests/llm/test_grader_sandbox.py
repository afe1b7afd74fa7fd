"""User graders run in their own process (issue 41, class 1): nothing a grader does — SystemExit,
KeyboardInterrupt, a swallowed timer, a sleep at import, a regex that backtracks for ever, a
memory blow-up, ``os._exit`` — takes the collector down, hangs it, or loses a trace; each is a
counted, located grader error."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection._sandbox import GraderFailed, run_grader
from orchestrace.collection.taskfile import TaskFileError, load_task_file, parse_grader

pytest.importorskip("httpx")

#: Graders that accept their own reference ("The answer is 7.") and misbehave on any other reply.
HOSTILE = {
    "g_exit": "import sys\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
              "    sys.exit(0)\n",
    "g_kbd": "def grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
             "    raise KeyboardInterrupt\n",
    "g_swallow": "import time\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
                 "    while True:\n        try:\n            time.sleep(60)\n        except BaseException:\n"
                 "            pass\n",
    "g_osexit": "import os\ndef grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
                "    os._exit(0)\n",
    "g_mem": "def grade(reply, ref):\n    if reply == 'The answer is 7.':\n        return True\n"
             "    return len(bytearray(1 << 40))\n",
    "g_print": "import os, sys\ndef grade(reply, ref):\n    print('noise')\n    os.write(1, b'junk\\n')\n"
               "    sys.stdin.read()\n    return reply == 'The answer is 7.'\n",
    "g_import_exit": "raise SystemExit(3)\ndef grade(reply, ref):\n    return True\n",
    "g_import_sleep": "import time\ntime.sleep(3600)\ndef grade(reply, ref):\n    return True\n",
}
#: A pattern that matches the reference check at once and backtracks exponentially on "aaaa…a!".
CATASTROPHIC = r"answer is 7\.|^(a+)+$"


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, src in HOSTILE.items():
        (tmp_path / f"{name}.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _rows(names: list[str], timeout: float = 0.5) -> list[dict]:
    rows = [{"id": n, "prompt": "?", "answer": "7", "grader": {"type": f"{n}:grade", "timeout_s": timeout}}
            for n in names]
    return rows + [{"id": "re", "prompt": "?", "answer": "7",
                    "grader": {"type": "regex", "pattern": CATASTROPHIC, "timeout_s": timeout}}]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_each_hostile_grader_is_an_error_on_a_reply_and_the_next_call_works(hostile: Path) -> None:
    for name, why in [("g_exit", "raised SystemExit"), ("g_kbd", "raised KeyboardInterrupt"),
                      ("g_swallow", "did not return within 0.5 s"), ("g_osexit", "its process ended (exit code 0)"),
                      ("g_mem", "raised MemoryError")]:
        g = parse_grader({"type": f"{name}:grade", "timeout_s": 0.5})
        t0 = time.monotonic()
        got = g.grade("no", "7")
        assert got.correct is False and got.error is not None and why in got.error, (name, got)
        assert time.monotonic() - t0 < 10
        assert g.grade("The answer is 7.", "7").correct  # restarted after a kill
    g = parse_grader({"type": "g_print:grade", "timeout_s": 5})  # prints and reads stdin: the protocol holds
    assert g.grade("The answer is 7.", "7").correct and not g.grade("x", "7").correct


def test_a_catastrophic_regex_ends_at_its_deadline() -> None:
    g = parse_grader({"type": "regex", "pattern": CATASTROPHIC, "timeout_s": 0.5}, answer="7")
    t0 = time.monotonic()
    got = g.grade("a" * 60 + "!", "7")
    assert "did not return within 0.5 s" in (got.error or "") and time.monotonic() - t0 < 10
    assert g.grade("The answer is 7.", "7").correct and g.grade("a" * 5, "7").correct
    with pytest.raises(GraderFailed, match="within 0.5 s"):
        run_grader(None, "a" * 60 + "!", pattern=CATASTROPHIC, timeout_s=0.5)


def test_modules_that_exit_or_sleep_at_import_are_located_task_file_problems(hostile: Path) -> None:
    f = _write(hostile / "t.jsonl", [
        {"id": "a", "prompt": "?", "answer": "7", "grader": {"type": "g_import_exit:grade", "timeout_s": 0.5}},
        {"id": "b", "prompt": "?", "answer": "7", "grader": {"type": "g_import_sleep:grade", "timeout_s": 0.5}},
        {"id": "c", "prompt": "?", "answer": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
         "grader": {"type": "regex", "pattern": r"(a+)+$", "timeout_s": 0.5}},
        {"id": "d", "prompt": "?", "answer": "7", "grader": {"type": "g_exit:grade", "timeout_s": 0.5}},
    ])
    t0 = time.monotonic()
    with pytest.raises(TaskFileError) as ei:
        load_task_file(f)
    assert time.monotonic() - t0 < 20
    got = {p.path.rsplit(":", 1)[1]: p.message for p in ei.value.problems}
    assert set(got) == {"1", "2", "3"}  # d grades its own reference correct: it is fine at load
    assert "cannot be loaded (SystemExit: 3)" in got["1"]
    assert "its module did not import within 0.5 s" in got["2"]
    assert "did not return within 0.5 s" in got["3"]


@pytest.mark.parametrize("command", ["run", "team"])
def test_collect_survives_every_hostile_grader_and_counts_its_errors(
        faulty, hostile: Path, tmp_path: Path, command: str) -> None:  # type: ignore[no-untyped-def]
    srv = faulty("ok", text="a" * 40 + "!")  # every reply misbehaves in its grader
    names = ["g_exit", "g_kbd", "g_swallow", "g_osexit"]
    f = _write(tmp_path / "mine.jsonl", _rows(names))
    out = tmp_path / "c"
    args = ["collect", command, str(out), "--task-file", str(f), "-R", "1", "--base-url", srv.base_url,
            "--model", "fake"]
    if command == "run":
        args += ["-W", "1"]
    t0 = time.monotonic()
    r = CliRunner().invoke(app, args)
    assert time.monotonic() - t0 < 120
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output and "could not be graded" in r.output
    man = json.loads((out / "manifest.json").read_text())
    sess = man["sessions"][-1]
    assert sess["finished"] is True and sess["grader_errors"] > 0
    lines = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines()]
    tasks = {rec["header"]["task_id"] for rec in lines if "header" in rec}
    assert tasks == {*names, "re"}  # a trace for every task: nothing lost
    errs = " ".join(str(e["event"].get("attrs", {}).get("grade_error", "")) for e in lines if "event" in e)
    for why in ["raised SystemExit", "raised KeyboardInterrupt", "did not return within 0.5 s",
                "its process ended"]:
        assert why in errs, why
