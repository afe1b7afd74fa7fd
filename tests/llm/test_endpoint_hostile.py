"""Hostile endpoint replies and collector outputs (issue 41, classes 2 and 7): huge integers, deep
nesting, NaN, a key echoed in any field — a located error or a clean run, never an internal error,
never the key in a file, never a manifest that says a failed run ended cleanly; a FIFO in place of
``traces.jsonl`` is refused unopened, a write error is located."""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.llm.fake_endpoint import FakeEndpoint, completion_bytes

pytest.importorskip("httpx")

KEY = "sk-HOSTILEabcdefghijklmnop0123"
BIG = "9" * 400


def _completion(content: str = "The answer is 2.", *, usage: str = "1", **raw: str) -> bytes:
    return completion_bytes(content, prompt_tokens=usage, completion_tokens=usage, **raw)


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[str], bytes]], str]]:
    """A loopback endpoint answering every POST with ``body(authorization_header)`` (bytes, as is)."""
    servers: list[FakeEndpoint] = []

    def make(body: Callable[[str], bytes]) -> str:
        srv = FakeEndpoint(raw=lambda path, headers: body(headers.get("authorization", ""))).start()
        servers.append(srv)
        return srv.base_url

    yield make
    for s in servers:
        s.stop()


def _tasks(tmp_path: Path) -> Path:
    f = tmp_path / "t.jsonl"
    f.write_text('{"id": "a", "prompt": "1+1?", "answer": "2", "grader": "numeric"}\n'
                 '{"id": "b", "prompt": "0+2?", "answer": "2", "grader": "numeric"}\n')
    return f


def _collect(command: str, out: Path, tasks: Path, url: str, *extra: str) -> object:
    args = ["collect", command, str(out), "--task-file", str(tasks), "-R", "1", "--base-url", url, "--model", "m",
            *extra]
    if command == "run":
        args += ["-W", "1"]
    return CliRunner().invoke(app, args)


def _files_text(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.iterdir() if p.is_file())


@pytest.mark.parametrize("command", ["run", "team"])
@pytest.mark.parametrize("logprob", [f"-{BIG}", BIG, "NaN", "-Infinity", "1e999"])
def test_absurd_numbers_in_a_reply_are_ignored_not_a_crash(raw_server, tmp_path: Path, command: str,
                                                           logprob: str) -> None:  # type: ignore[no-untyped-def]
    url = raw_server(lambda auth: _completion(logprob=logprob, usage=BIG if logprob == BIG else "1"))
    out = tmp_path / "c"
    r = _collect(command, out, _tasks(tmp_path), url, *(["--top-logprobs", "2"] if command == "team" else []))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert "internal error" not in r.output  # type: ignore[attr-defined]
    recs = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines()]
    lps = [e["event"]["attrs"].get("logprob_mean") for e in recs if e.get("event", {}).get("type") == "return"]
    assert lps and all(lp is None for lp in lps)  # no corrupt value averaged in
    toks = [e["event"].get("tokens_out") for e in recs if e.get("event", {}).get("type") == "return"]
    assert all(t is None or t < 2**31 for t in toks)


def test_a_deeply_nested_reply_is_a_located_failure_recorded_in_the_manifest(raw_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = raw_server(lambda auth: b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    out = tmp_path / "c"
    r = _collect("team", out, _tasks(tmp_path), url)
    assert r.exit_code == 1 and "nested too deeply" in r.output and "--resume" in r.output  # type: ignore[attr-defined]
    sess = json.loads((out / "manifest.json").read_text())["sessions"][-1]
    assert sess["failed"] and "nested too deeply" in sess["failed"]


@pytest.mark.parametrize("command", ["run", "team"])
def test_a_key_echoed_in_any_field_of_a_reply_is_never_stored(raw_server, tmp_path: Path, command: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ORCHESTRACE_API_KEY", KEY)
    (tmp_path / "g_leak.py").write_text(
        "import os\ndef grade(reply, ref):\n    if reply == 'The answer is 2.':\n        return True\n"
        "    raise ValueError('key ' + os.environ['ORCHESTRACE_API_KEY'])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"id": "a", "prompt": "?", "answer": "2", "grader": "g_leak:grade"}\n'
                     '{"id": "b", "prompt": "?", "answer": "2", "grader": "numeric"}\n')
    url = raw_server(lambda auth: _completion(f"echo {auth} {auth[7:]}", finish=json.dumps(auth),
                                              model=json.dumps(auth[7:])))
    out = tmp_path / "c"
    r = _collect(command, out, tasks, url)
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    text = _files_text(out)
    assert "grade_error" in text and "raised ValueError: key ***" in text  # the grader's error, scrubbed
    assert KEY not in text and KEY not in r.output  # type: ignore[attr-defined]


def test_a_fifo_in_place_of_the_traces_is_refused_unopened(raw_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = raw_server(lambda auth: _completion())
    out = tmp_path / "c"
    out.mkdir()
    os.mkfifo(out / "traces.jsonl")
    t0 = time.monotonic()
    r = _collect("run", out, _tasks(tmp_path), url, "--resume")
    assert time.monotonic() - t0 < 30
    assert r.exit_code == 2 and "not a regular file (a FIFO)" in r.output and "traces.jsonl" in r.output  # type: ignore[attr-defined]


def test_a_write_error_is_located_and_the_manifest_records_it(raw_server, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    url = raw_server(lambda auth: _completion())
    real_fsync = os.fsync
    calls = [0]

    def full_disk(fd: int) -> None:  # the second trace's sync fails as on a full disk
        traces = os.readlink(f"/proc/self/fd/{fd}").endswith("traces.jsonl")
        calls[0] += traces
        if traces and calls[0] == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    import orchestrace.collection.collect as coll

    monkeypatch.setattr(coll.os, "fsync", full_disk)  # os itself: the manifest's writer syncs too
    out = tmp_path / "c"
    r = _collect("run", out, _tasks(tmp_path), url, "--concurrency", "1")
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    assert f"{out / 'traces.jsonl'}" in r.output and "No space left" in r.output and "--resume" in r.output  # type: ignore[attr-defined]
    sess = json.loads((out / "manifest.json").read_text())["sessions"][-1]
    assert sess["failed"] and "No space left" in sess["failed"] and sess["written"] == 1


def test_a_team_reply_with_absurd_top_logprobs_stores_a_confidence_readers_accept(raw_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from orchestrace.offline import load_logged_runs

    url = raw_server(lambda auth: _completion(logprob="-1e300"))
    out = tmp_path / "c"
    r = _collect("team", out, _tasks(tmp_path), url, "--top-logprobs", "2")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    recs = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines()]
    conf = [e["event"]["attrs"].get("confidence") for e in recs if e.get("event", {}).get("type") == "return"]
    assert conf and all(c is None or 0 <= c <= 1e6 for c in conf)
    assert load_logged_runs(out).shape[0] == 2  # what was written reads back


def test_a_manifest_that_cannot_be_written_is_located(tmp_path: Path) -> None:
    from orchestrace.collection.collect import _write_manifest

    os.mkfifo(tmp_path / "manifest.json")
    with pytest.raises(OSError, match="cannot write the manifest") as ei:
        _write_manifest(tmp_path / "manifest.json", {"format": "x"})
    assert ei.value.filename == str(tmp_path / "manifest.json")
    assert stat.S_ISFIFO((tmp_path / "manifest.json").lstat().st_mode)


def test_a_huge_reply_is_stored_so_that_the_corpus_reads_back(raw_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from orchestrace.offline import load_logged_runs  # (the team collector stores the same Attempt)

    # 1.08 MB once JSON-escaped (\x01 is written \u0001), and an answer of 5,000 characters
    url = raw_server(lambda auth: _completion("x" * 120_000 + "\n" + "\x01" * 160_000 + "\nThe answer is " + "7" * 5000))
    out = tmp_path / "c"
    r = _collect("run", out, _tasks(tmp_path), url)
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert max(len(x) for x in (out / "traces.jsonl").read_bytes().splitlines()) < 1 << 20
    runs = load_logged_runs(out)  # the writer stored nothing its reader refuses
    assert runs.shape[0] == 2 and not runs.correct.any()
