"""Your own tasks (llm.taskfile, ``collect run --task-file``) and your own logs (offline.logimport, ``collect import``).

Expected numbers are computed here from the inputs the tests write, independently of the
importer's grading code; the endpoint of ``collect run`` is an httpx MockTransport whose reply
is a function of the request's seed.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection.collect import CollectConfig, collect
from orchestrace.collection.logimport import ImportError_, import_logs
from orchestrace.collection.taskfile import (
    Grader,
    TaskFileError,
    extract_answer,
    load_task_file,
    parse_number,
)
from orchestrace.errors import ConfigError
from orchestrace.offline import load_logged_runs

DEBATE = Path(__file__).resolve().parents[1] / "data" / "debate-smollm2" / "debate.json"


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


# -- the task file -------------------------------------------------------------------------------
def test_every_grader_accepts_its_reference_and_rejects_a_wrong_answer(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "mygrader.py").write_text("def grade(reply, ref):\n    return ref.lower() in reply.lower()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [
        {"id": "e", "prompt": "Capital of France?", "answer": "Paris"},
        {"id": "n", "prompt": "pi?", "answer": 3.14, "grader": {"type": "numeric", "tolerance": 0.01}},
        {"id": "r", "prompt": "a colour", "answer": "red", "grader": {"type": "regex", "pattern": r"\bred\b"}},
        {"id": "c", "prompt": "pick", "answer": "Bob", "grader": {"type": "choice", "choices": ["Alice", "Bob"]}},
        {"id": "f", "messages": [{"role": "user", "content": "say hi"}], "answer": "hi", "grader": "mygrader:grade"},
    ]
    tasks = {t.id: t for t in load_task_file(write_lines(tmp_path / "t.jsonl", rows))}
    good = {"e": "The answer is paris.", "n": "about 3.1416", "r": "it is red", "c": "I pick bob", "f": "HI there"}
    bad = {"e": "Lyon", "n": "3.2", "r": "reddish", "c": "Alice", "f": "hello"}
    for k, t in tasks.items():
        assert t.grade(good[k]) == (t.answer, True, None), k
        g = t.grade(bad[k])
        assert not g.correct and g.answer != t.answer and g.error is None, (k, g)
    assert tasks["e"].whole_prompt()[0]["role"] == "system" and tasks["f"].whole_prompt()[0]["role"] == "user"
    assert {t.suite for t in tasks.values()} == {"t"}


def test_a_bad_task_file_lists_every_problem_located(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "g_raise.py").write_text("def grade(reply, ref):\n    raise RuntimeError('boom')\n")
    (tmp_path / "g_hang.py").write_text("def grade(reply, ref):\n    while True:\n        pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [
        {"id": "ok", "prompt": "1+1?", "answer": 2, "grader": "numeric"},
        {"id": "noans", "prompt": "?"},
        {"id": "unk", "prompt": "?", "answer": "x", "grader": "fuzzy"},
        {"id": "ok", "prompt": "dup", "answer": "1"},
        {"id": "raise", "prompt": "?", "answer": "x", "grader": "g_raise:grade"},
        {"id": "hang", "prompt": "?", "answer": "x", "grader": {"type": "g_hang:grade", "timeout_s": 0.3}},
        {"id": "nomod", "prompt": "?", "answer": "x", "grader": "no_such_module_xyz:grade"},
        {"id": "long", "prompt": "word " * 2000, "answer": "x"},
        {"id": "numnan", "prompt": "?", "answer": "abc", "grader": "numeric"},
        "not json",
    ]
    with pytest.raises(TaskFileError) as ei:
        load_task_file(write_lines(tmp_path / "bad.jsonl", rows), max_prompt_tokens=1000)
    where = {p.path.rsplit(":", 1)[1]: p.code for p in ei.value.problems}
    assert where == {"2": "taskfile.answer", "3": "taskfile.grader", "4": "taskfile.duplicate",
                     "5": "taskfile.grader", "6": "taskfile.grader", "7": "taskfile.grader",
                     "8": "taskfile.context", "9": "taskfile.grader", "10": "taskfile.json"}
    msgs = " ".join(p.message for p in ei.value.problems)
    assert "RuntimeError: boom" in msgs and "did not return within 0.3 s" in msgs and "nothing was run" in str(ei.value)


def test_cli_refuses_a_bad_task_file_without_a_traceback(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "t.jsonl", [{"id": "a", "prompt": "?"}])
    r = CliRunner().invoke(app, ["collect", "run", str(tmp_path / "c"), "--task-file", str(f),
                                 "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert r.exit_code == 1 and f"{f}:1" in r.output and "Traceback" not in r.output  # invalid content: 1
    assert not (tmp_path / "c" / "traces.jsonl").exists()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_answer_extraction_never_crashes(text: str) -> None:
    extract_answer(text)
    parse_number(text)
    for g in (Grader("exact"), Grader("numeric"), Grader("regex", pattern="a"), Grader("choice", choices=("a", "b"))):
        ans, ok, err = g.grade(text, "1" if g.kind == "numeric" else "a")
        assert err is None and (not ok or ans in ("1", "a"))


@settings(max_examples=100, deadline=None)
@given(st.integers(-10**9, 10**9), st.sampled_from(["The answer is {}.", "\\boxed{{{}}}", "so... {}", "#### {}"]))
def test_numeric_grading_reads_the_stated_number(n: int, form: str) -> None:
    assert Grader("numeric").grade("first 12345 then " + form.format(n), str(n)).correct


# -- collect run --task-file ------------------------------------------------------------------------
def reply_for(seed: int) -> str:
    return "I do not know." if seed % 5 == 4 else f"The answer is {seed % 3}."


def transport() -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        text = reply_for(int(json.loads(request.content)["seed"]))
        return httpx.Response(200, json={"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 20, "completion_tokens": 5}, "model": "fake"})

    return httpx.MockTransport(handler)


def test_collect_from_a_task_file_grades_with_its_graders_and_grows_on_resume(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "g_flaky.py").write_text("def grade(reply, ref):\n    if '2' in reply:\n        raise ValueError('x')\n"
                                         "    return ref in reply\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rows = [{"id": f"t{i}", "prompt": f"q{i}", "answer": str(i % 3),
             "grader": "numeric" if i % 2 else ("g_flaky:grade" if i == 4 else "exact")} for i in range(8)]
    f = write_lines(tmp_path / "mine.jsonl", rows)
    kw = {"base_url": "http://fake/v1", "model": "fake", "client_kw": {"transport": transport(), "max_retries": 0}}
    cfg = CollectConfig(cells=(), n_tasks=4, rounds=2, width=2, task_file=str(f))
    collect(cfg, tmp_path / "c", **kw)
    cfg8 = CollectConfig(cells=(), n_tasks=8, rounds=2, width=2, task_file=str(f))
    res = collect(cfg8, tmp_path / "c", resume=True, **kw)  # a larger -n grows the corpus
    assert (res.already, res.written) == (4, 4)
    runs = load_logged_runs(tmp_path / "c")
    assert runs.shape == (8, 2, 2) and sorted(runs.task_ids.tolist()) == [f"t{i}" for i in range(8)]
    for i, tid in enumerate(runs.task_ids.tolist()):
        k = int(tid[1:])
        expect = [reply_for(cfg8.attempt_seed(k, r, w)) for r in range(2) for w in range(2)]
        ok = [(e.endswith(f" {k % 3}.")) and not (k == 4 and "2" in e) for e in expect]
        assert runs.correct[i].reshape(-1).tolist() == ok, tid
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    n_err = sum(("2" in reply_for(cfg8.attempt_seed(4, r, w))) for r in range(2) for w in range(2))
    assert man["sessions"][-1]["grader_errors"] == n_err and man["config"]["n_tasks"] == 8
    with pytest.raises(ConfigError, match="rounds: was 2, now 3"):
        collect(CollectConfig(cells=(), n_tasks=8, rounds=3, width=2, task_file=str(f)), tmp_path / "c", resume=True,
                **kw)


# -- collect import ------------------------------------------------------------------------------
def test_samples_import_counts_every_exclusion_and_grades_like_a_plain_majority(tmp_path: Path) -> None:
    rows: list = []
    for i in range(12):
        rows.append({"id": f"s{i}", "answer": str(i % 4),
                     "samples": [f"answer: {(i * 7 + j) % 3}" if j != 2 else "no idea" for j in range(5)]})
    rows += [{"id": "noanswer", "samples": ["1", "2", "3", "4"]}, {"id": "short", "answer": "1", "samples": ["1"]},
             {"id": "s0", "answer": "0", "samples": ["0"] * 4}, "{torn", {"id": "x", "answer": "1"}]
    f = write_lines(tmp_path / "s.jsonl", rows)
    rep = import_logs([f], tmp_path / "c", width=2)
    assert (rep.tasks, rep.rounds, rep.width, rep.dropped_samples) == (12, 2, 2, 12)
    assert {k: len(v) for k, v in rep.excluded.items()} == {
        "no reference answer": 1, "fewer than 4 samples (rounds × width)": 1, "duplicate id": 1,
        "line is not JSON": 1, "no 'samples' list": 1}
    assert rep.unparsed == 12 and rep.replies == 48 and rep.no_logprobs == 48 and rep.tokens_estimated
    runs = load_logged_runs(tmp_path / "c")
    for i, tid in enumerate(runs.task_ids.tolist()):
        k = int(tid[1:])
        votes = [str((k * 7 + j) % 3) if j != 2 else None for j in range(4)]
        for r in range(2):
            seen = [v for v in votes[: 2 * (r + 1)] if v is not None]
            c = collections.Counter(seen)
            maj = next((v for v in seen if c[v] == max(c.values())), None)
            assert runs.round_correct[i, r] == (maj == str(k % 4))
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert man["import"]["excluded"]["duplicate id"] == 1 and man["members"] == []


def test_batch_output_import_reads_n_choices_logprobs_and_confidence(tmp_path: Path) -> None:
    tasks = write_lines(tmp_path / "refs.jsonl", [{"id": f"b{i}", "answer": i, "grader": "numeric"} for i in range(6)])
    out = []
    for i in range(6):
        chs = [{"index": k, "message": {"role": "assistant", "content": f"It is {i + (k == 1)}"},
                "logprobs": {"content": [{"token": "a", "logprob": -0.1 * (k + 1),
                                          "top_logprobs": [{"token": "a", "logprob": -0.1 * (k + 1)},
                                                           {"token": "b", "logprob": -3.0}]}] * 3}}
               for k in range(4)]
        out.append({"id": f"r{i}", "custom_id": f"b{i}", "error": None,
                    "response": {"status_code": 200, "body": {"choices": chs, "usage": {"prompt_tokens": 40}}}})
    out.append({"custom_id": "b0", "response": {"status_code": 500, "body": {}}, "error": {"message": "x"}})
    out.append({"custom_id": "nope", "response": {"status_code": 200, "body": {"choices": []}}})
    f = write_lines(tmp_path / "batch_output.jsonl", out)
    rep = import_logs([f], tmp_path / "c", tasks=tasks, width=2)
    assert (rep.tasks, rep.rounds, rep.width, rep.no_logprobs, rep.tokens_estimated) == (6, 2, 2, 0, False)
    assert sum(map(len, rep.excluded.values())) == 2
    runs = load_logged_runs(tmp_path / "c")
    assert runs.correct[:, 0].tolist() == [[True, False]] * 6 and runs.correct[:, 1].all()
    np.testing.assert_allclose(runs.logprob_mean[0].reshape(-1), [-0.1, -0.2, -0.3, -0.4], rtol=1e-5)
    assert (runs.completion_tokens == 3).all() and (runs.prompt_tokens == 40).all()
    with pytest.raises(ConfigError, match="--tasks"):
        import_logs([f], tmp_path / "d")


def test_debate_import_makes_agents_the_columns_and_states_what_it_estimates(tmp_path: Path) -> None:
    q = {f"What is {i} + 1?": [[[{"role": "user", "content": "q"}, {"role": "assistant", "content": f"\\boxed{{{i + a // 2}}}"},
                                 {"role": "user", "content": "others said ..."},
                                 {"role": "assistant", "content": f"so {i + 1 - (a == 0)}"}] for a in range(3)],
                               f"because\n#### {i + 1}"] for i in range(10)}
    q["bad"] = [[[{"role": "user", "content": "q"}, {"role": "assistant", "content": "1"}]], None]
    q["ragged"] = [[[{"role": "assistant", "content": "1"}], []], "1"]
    f = tmp_path / "debate.json"
    f.write_text(json.dumps(q))
    rep = import_logs([f], tmp_path / "c")
    assert (rep.tasks, rep.rounds, rep.width) == (10, 2, 3) and rep.tokens_estimated and rep.no_logprobs == 60
    assert sum(map(len, rep.excluded.values())) == 2
    runs = load_logged_runs(tmp_path / "c")
    # round 0: agents answer i, i, i+1 (agent 2: i + 1) -> the right answer i+1 only from agent 2
    assert runs.correct[:, 0].tolist() == [[False, False, True]] * 10
    assert runs.correct[:, 1].tolist() == [[False, True, True]] * 10
    assert runs.round_correct.tolist() == [[False, False]] * 10  # 2 x i vs 1 x i+1, then 3 vs 3: first (i) wins
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert man["members"] == ["debater"] * 3 and man["sees"] == [[1, 2], [0, 2], [0, 1]] and man["sees_from_round"] == 1


def test_import_of_nothing_usable_is_a_located_error_and_writes_nothing(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "s.jsonl", [{"id": "a", "samples": ["1", "2"]}, "junk"])
    with pytest.raises(ImportError_) as ei:
        import_logs([f], tmp_path / "c")
    assert {p.path for p in ei.value.problems} == {f"{f}:1", f"{f}:2"}
    assert not (tmp_path / "c").exists()
    r = CliRunner().invoke(app, ["collect", "import", str(f), "-o", str(tmp_path / "c")])
    assert r.exit_code == 1 and f"{f}:1" in r.output and "Traceback" not in r.output
    g = write_lines(tmp_path / "g.jsonl", [{"id": "a", "answer": "1", "samples": ["1", "2"]}, "junk"])
    r = CliRunner().invoke(app, ["collect", "import", str(g), "-o", str(tmp_path / "d"), "--strict"])
    assert r.exit_code == 1 and "--strict" in r.output


@pytest.mark.skipif(not DEBATE.is_file(), reason="tests/data/debate-smollm2/debate.json not present")
def test_the_committed_smollm2_debate_imports_with_agents_as_columns(tmp_path: Path) -> None:
    import hashlib
    import re

    data = json.loads(DEBATE.read_text())
    r = CliRunner().invoke(app, ["collect", "import", str(DEBATE), "-o", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    runs = load_logged_runs(tmp_path / "c")
    first = next(iter(data.values()))[0]
    assert runs.shape == (len(data), sum(m["role"] == "assistant" for m in first[0]), len(first))
    row = {tid: k for k, tid in enumerate(runs.task_ids.tolist())}
    for question, (ctxs, ref) in data.items():
        k = row["debate-" + hashlib.sha256(question.encode()).hexdigest()[:12]]
        truth = float(ref.split("####")[1])
        for agent, ctx in enumerate(ctxs):
            for rnd, text in enumerate(m["content"] for m in ctx if m["role"] == "assistant"):
                boxed = [b for b in re.findall(r"\\boxed\{([^{}]*)\}", text) if re.search(r"\d", b)]
                nums = re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", boxed[-1] if boxed else text)
                assert bool(runs.correct[k, rnd, agent]) == (bool(nums) and float(nums[-1]) == truth), text


def test_cli_import_usage_errors_exit_2_and_bad_logs_exit_1(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "b.jsonl", [{"custom_id": "a", "response": {"status_code": 200, "body": {"choices": []}}}])
    r = CliRunner().invoke(app, ["collect", "import", str(f), "-o", str(tmp_path / "c")])
    assert r.exit_code == 2 and "--tasks" in r.output
    r = CliRunner().invoke(app, ["collect", "import", str(f), "-o", str(tmp_path / "c"), "--format", "csv"])
    assert r.exit_code == 2 and "--format 'csv'" in r.output
    bad = write_lines(tmp_path / "t.jsonl", [{"id": "a"}])
    r = CliRunner().invoke(app, ["collect", "import", str(f), "-o", str(tmp_path / "c"), "--tasks", str(bad)])
    assert r.exit_code == 1 and f"{bad}:1" in r.output
