"""The vote-corpus collector (offline.collect) and its reader (offline._logged.load_logged_runs).

The endpoint is an in-process httpx MockTransport whose reply is a function of the request's
seed, so every expected number below is computed here from the replies, independently of the
collector's own majority / grading code.
"""

from __future__ import annotations

import collections
import gzip
import json
import shutil
import warnings
from pathlib import Path

import httpx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.collection.collect import CollectConfig, collect, majority, parse_cells
from orchestrace.errors import ConfigError, LLMError, TraceInvalidError
from orchestrace.llm.tasks import make_vote_task
from orchestrace.logged.runs import (
    load_logged_runs,
    logged_from_codes,
    make_synthetic_logged,
    split_of,
)

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


def reply_for(seed: int) -> str:
    """The fake model's reply to the attempt with this seed (some unparsable)."""
    if seed % 7 == 3:
        return "I am not sure."
    return f"The answer is {seed % 3}."


def transport(fail_after: int | None = None) -> httpx.MockTransport:
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if fail_after is not None and calls["n"] > fail_after:
            raise httpx.ConnectError("refused", request=request)
        body = json.loads(request.content)
        text = reply_for(int(body["seed"]))
        return httpx.Response(200, json={
            "choices": [{"message": {"content": text}, "finish_reason": "stop",
                         "logprobs": {"content": [{"logprob": -0.5}, {"logprob": -1.5}]}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5}, "model": "fake"})

    return httpx.MockTransport(handler)


def run(cfg: CollectConfig, folder: Path, **kw) -> object:
    client_kw = {"transport": kw.pop("tp", None) or transport(), "max_retries": 0}
    return collect(cfg, folder, base_url="http://fake/v1", model="fake", client_kw=client_kw, **kw)


CFG = CollectConfig(cells=(("add", 1), ("add", 2)), n_tasks=6, rounds=3, width=2)


def expected_arrays(cfg: CollectConfig) -> dict[str, list]:
    """Per task id: parsed answers in order, the graded majority after each round (computed here)."""
    out = {}
    for i, task in enumerate(cfg.tasks()):
        parsed = [task.parse(None, reply_for(cfg.attempt_seed(i, r, w))) for r in range(cfg.rounds)
                  for w in range(cfg.width)]
        graded = []
        for r in range(cfg.rounds):
            seen = [a for a in parsed[: (r + 1) * cfg.width] if a is not None]
            cnt = collections.Counter(seen)
            top = max(cnt.values()) if cnt else 0
            first = next((a for a in seen if cnt[a] == top), None)
            graded.append(first == task.answer)
        out[task.id] = [parsed, graded, task.answer]
    return out


def test_collect_writes_one_graded_trace_per_task_and_the_reader_agrees(tmp_path: Path) -> None:
    res = run(CFG, tmp_path / "c")
    assert res.written == 6 and res.calls == 36
    runs = load_logged_runs(tmp_path / "c")
    assert runs.shape == (6, 3, 2)
    exp = expected_arrays(CFG)
    for t, tid in enumerate(runs.task_ids):
        parsed, graded, answer = exp[str(tid)]
        assert runs.round_correct[t].tolist() == graded
        assert runs.correct[t].reshape(-1).tolist() == [a == answer for a in parsed]
        assert ((runs.answers[t].reshape(-1) == -1) == np.array([a is None for a in parsed])).all()
    assert (runs.prompt_tokens == 20).all() and (runs.completion_tokens == 5).all()
    assert np.allclose(runs.logprob_mean, -1.0)
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert man["config"]["rounds"] == 3 and man["tasks_done"] == 6 and man["sessions"][0]["written"] == 6
    assert runs.meta["config"]["width"] == 2 and runs.meta["excluded"] == {}


def test_answer_codes_follow_first_appearance() -> None:
    runs = make_synthetic_logged(30, 3, 3, seed=4)
    for a in runs.answers.reshape(30, -1):
        seen = [int(x) for x in a if x >= 0]
        firsts = list(dict.fromkeys(seen))
        assert firsts == list(range(len(firsts)))


def test_a_killed_collection_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    run(CollectConfig(cells=CFG.cells, n_tasks=6, rounds=3, width=2), folder, concurrency=1)
    lines = (folder / "traces.jsonl").read_bytes().splitlines(keepends=True)
    # keep the first 2 traces whole, then a torn third one (no end record, a cut line)
    ends = [i for i, ln in enumerate(lines) if ln.startswith(b'{"end":')]
    torn = b"".join(lines[: ends[1] + 1]) + b"".join(lines[ends[1] + 1: ends[2] - 3]) + lines[ends[2] - 3][:17]
    (folder / "traces.jsonl").write_bytes(torn)
    with pytest.raises(ConfigError, match="--resume"):
        run(CFG, folder)
    res = run(CFG, folder, resume=True)
    assert (res.already, res.written) == (2, 4)
    runs = load_logged_runs(folder)
    assert sorted(runs.task_ids.tolist()) == sorted(t.id for t in CFG.tasks())
    exp = expected_arrays(CFG)
    assert all(runs.round_correct[t].tolist() == exp[str(tid)][1] for t, tid in enumerate(runs.task_ids))
    sessions = json.loads((folder / "manifest.json").read_text())["sessions"]
    assert sessions[-1]["cut_bytes"] > 0


def test_resume_with_other_settings_is_refused(tmp_path: Path) -> None:
    run(CollectConfig(cells=CFG.cells, n_tasks=2, rounds=3, width=2), tmp_path / "c")
    with pytest.raises(ConfigError, match="different settings"):
        run(CollectConfig(cells=CFG.cells, n_tasks=2, rounds=2, width=2), tmp_path / "c", resume=True)


def test_an_endpoint_that_dies_stops_with_the_count_done_and_resumes(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    with pytest.raises(LLMError, match=r"after 2 of 6 tasks were written"):
        run(CFG, folder, tp=transport(fail_after=14), concurrency=1)  # 6 calls per task: 2 whole tasks
    assert json.loads((folder / "manifest.json").read_text())["sessions"][0]["failed"]
    res = run(CFG, folder, resume=True)
    assert (res.already, res.written) == (2, 4)
    assert load_logged_runs(folder).shape == (6, 3, 2)


def test_cli_collect_reports_a_dead_endpoint_and_bad_cells(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrace.cli import app

    r = CliRunner().invoke(app, ["collect", "run", str(tmp_path / "c"), "-n", "2", "-R", "1", "-W", "1",
                                 "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert r.exit_code == 1 and "0 of 2 tasks were written" in r.output
    r = CliRunner().invoke(app, ["collect", "run", str(tmp_path / "d"), "--suites", "add:x"])
    assert r.exit_code == 2 and "not an integer" in r.output


# -- the reader's bad input ------------------------------------------------------------------------
@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    run(CFG, tmp_path / "c", concurrency=1)
    return tmp_path / "c"


def _edit(folder: Path, fn) -> None:
    p = folder / "traces.jsonl"
    p.write_text("".join(fn(p.read_text().splitlines(keepends=True))))


def test_missing_grade_is_a_located_error_or_a_counted_exclusion(corpus: Path) -> None:
    def drop_outcome(lines: list[str]) -> list[str]:
        i = next(k for k, ln in enumerate(lines) if '"type":"aggregate"' in ln)
        rec = json.loads(lines[i])
        del rec["event"]["outcome"]
        lines[i] = json.dumps(rec) + "\n"
        return lines

    _edit(corpus, drop_outcome)
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(corpus)
    p = ei.value.problems[0]
    assert p.code == "corpus.grade" and p.path.startswith(str(corpus / "traces.jsonl") + ":")
    with pytest.warns(UserWarning, match="excluded 1 run"):
        runs = load_logged_runs(corpus, exclude=True)
    assert runs.shape[0] == 5 and len(runs.meta["excluded"]["grade"]) == 1


def test_truncated_run_is_reported(corpus: Path) -> None:
    _edit(corpus, lambda lines: lines[:-3])  # the last trace loses its stop and end records
    with pytest.raises(TraceInvalidError, match="cut short"):
        load_logged_runs(corpus)
    with pytest.warns(UserWarning, match="truncated: 1"):
        assert load_logged_runs(corpus, exclude=True).shape[0] == 5


def test_a_different_round_limit_is_reported(corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "o"
    run(CollectConfig(cells=CFG.cells, n_tasks=1, rounds=2, width=2, seed=50), other)
    with open(corpus / "traces.jsonl", "a") as fh:
        fh.write((other / "traces.jsonl").read_text())
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(corpus)
    assert [p.code for p in ei.value.problems] == ["corpus.shape"] and "2 rounds x 2" in ei.value.problems[0].message
    with pytest.warns(UserWarning, match="shape: 1"):
        assert load_logged_runs(corpus, exclude=True).shape == (6, 3, 2)


def test_mixed_suites_are_reported(corpus: Path) -> None:
    _edit(corpus, lambda lines: [ln.replace('"suite":"add"', '"suite":"mentor"', 1) if i == 0 else ln
                                 for i, ln in enumerate(lines)])
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(corpus)
    assert ei.value.problems[0].code == "corpus.suite" and ":1" in ei.value.problems[0].path


def test_torn_json_line_is_located(corpus: Path) -> None:
    _edit(corpus, lambda lines: [*lines[:5], '{"event": {"id": "e9", "t', *lines[5:]])
    with pytest.raises(TraceInvalidError) as ei:
        load_logged_runs(corpus)
    assert ei.value.problems[0].code == "corpus.json" and ei.value.problems[0].path.endswith(":6")


def test_gzip_and_folder_of_shards_read_the_same(corpus: Path, tmp_path: Path) -> None:
    g = tmp_path / "g"
    g.mkdir()
    shutil.copy(corpus / "manifest.json", g / "manifest.json")
    lines = (corpus / "traces.jsonl").read_bytes().splitlines(keepends=True)
    cut = [i for i, ln in enumerate(lines) if ln.startswith(b'{"end":')][2] + 1
    (g / "traces-0.jsonl.gz").write_bytes(gzip.compress(b"".join(lines[:cut])))
    (g / "traces-1.jsonl.gz").write_bytes(gzip.compress(b"".join(lines[cut:])))
    a, b = load_logged_runs(corpus), load_logged_runs(g)
    assert (a.task_ids == b.task_ids).all() and (a.answers == b.answers).all()


def test_committed_tiny_corpus_reads() -> None:
    runs = load_logged_runs(TINY)
    t, r, w = runs.shape
    assert t >= 25 and (r, w) == (runs.meta["config"]["rounds"], runs.meta["config"]["width"])
    assert runs.meta["server"]["model_sha256"] and set(runs.suite.tolist()) <= {"add", "mentor"}
    assert 0.0 < runs.correct.mean() < 1.0


# -- properties --------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from("abcd")), max_size=12))
def test_majority_is_the_earliest_of_the_most_frequent(xs: list[str | None]) -> None:
    seen = [x for x in xs if x is not None]
    got = majority(xs)
    if not seen:
        assert got is None
    else:
        counts = {x: seen.count(x) for x in seen}
        assert counts[got] == max(counts.values())
        assert all(seen.index(got) <= seen.index(x) for x in counts if counts[x] == counts[got])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.data())
def test_round_grades_from_codes_match_a_plain_majority(r: int, w: int, data: st.DataObject) -> None:
    labels = data.draw(st.lists(st.integers(-1, 3), min_size=r * w, max_size=r * w))
    seen: dict[int, int] = {}
    codes = [seen.setdefault(x, len(seen)) if x >= 0 else -1 for x in labels]
    truth = data.draw(st.integers(-1, max(len(seen) - 1, 0)))
    out = logged_from_codes(["t"], ["s"], [1], np.array(codes, np.int32).reshape(1, r, w), np.array([truth]))
    for k in range(r):
        agg = majority([str(c) if c >= 0 else None for c in codes[: (k + 1) * w]])
        assert bool(out.round_correct[0, k]) == (agg is not None and truth >= 0 and int(agg) == truth)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "mentor", "arith"]), st.integers(1, 3)), min_size=1, max_size=4))
def test_parse_cells_round_trips(cells: list[tuple[str, int]]) -> None:
    assert parse_cells(",".join(f"{s}:{n}" for s, n in cells)) == tuple(cells)


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=20))
def test_parse_cells_never_crashes(text: str) -> None:
    try:
        assert parse_cells(text)
    except ConfigError as exc:
        assert "--suites" in str(exc)


def test_split_is_a_pure_function_of_the_id_with_about_60_20_20() -> None:
    ids = [make_vote_task("add", seed=i, size=1).id for i in range(2000)]
    sp = collections.Counter(split_of(x) for x in ids)
    assert abs(sp["train"] / 2000 - 0.6) < 0.05 and abs(sp["test"] / 2000 - 0.2) < 0.04
    assert [split_of(x) for x in ids[:50]] == [split_of(x) for x in ids[:50]]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.one_of(
    st.text(max_size=30),
    st.sampled_from(['{"event": 1}', '{"header": []}', '[1, 2]', '"header"', '{"end": {}, "x": 1}',
                     '{"event": {"type": "return", "attrs": {"round": "0"}}}',
                     '{"event": {"type": "aggregate", "outcome": [], "attrs": {}}}',
                     '{"header": {"task_id": 3, "meta": {"rounds": "4", "width": null}}}']),
))
def test_reader_never_crashes_on_a_mutated_line(tmp_path_factory: pytest.TempPathFactory, where: int, junk: str) -> None:
    folder = tmp_path_factory.mktemp("fz")
    lines = (TINY_PLAIN if TINY_PLAIN else _tiny_plain()).splitlines(keepends=True)
    i = where % len(lines)
    lines[i] = junk.replace("\n", " ") + "\n"
    (folder / "traces.jsonl").write_text("".join(lines))
    shutil.copy(TINY / "manifest.json", folder / "manifest.json")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = load_logged_runs(folder, exclude=True)
    except (TraceInvalidError, ConfigError):
        return
    assert runs.shape[1:] == (4, 2) and runs.shape[0] >= 1


TINY_PLAIN: str = ""


def _tiny_plain() -> str:
    global TINY_PLAIN
    TINY_PLAIN = gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()).decode()
    return TINY_PLAIN


def test_the_committed_corpus_meets_the_brief() -> None:
    folder = Path(__file__).resolve().parents[2] / "src" / "orchestrace" / "data" / "corpora" / "smollm2-v1"
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size <= 20 * 1024**2
    runs = load_logged_runs(folder)
    man = json.loads((folder / "manifest.json").read_text())
    assert runs.shape[0] == man["tasks"] >= 1000 and runs.meta["excluded"] == {}
    assert {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")} == man["split_counts"]
    p = runs.correct.reshape(runs.shape[0], -1).mean(1)
    assert 0.1 < p.mean() < 0.9 and ((p > 0) & (p < 1)).mean() > 0.3  # voting can matter
    assert np.isfinite(runs.logprob_mean).mean() > 0.99


def test_an_interrupted_collection_keeps_whole_traces_and_a_finished_manifest(tmp_path: Path) -> None:
    calls = {"n": 0}
    inner = transport()

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] > 15:
            raise KeyboardInterrupt  # what the CLI's SIGTERM/SIGINT handler raises
        return inner.handle_request(request)

    with pytest.raises(KeyboardInterrupt):
        run(CFG, tmp_path / "c", tp=httpx.MockTransport(handler), concurrency=1)
    import gc

    gc.collect()  # the abandoned asyncio tasks are reported (logged) here, inside this test
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert man["tasks_done"] == 2 and man["sessions"][-1]["finished"] is True  # 6 calls per task
    assert load_logged_runs(tmp_path / "c").shape == (2, 3, 2)
