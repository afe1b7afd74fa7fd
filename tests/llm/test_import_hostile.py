"""``collect import`` on hostile logs (issue 41, class 5): absurd numbers and deep nesting are located
exclusions of their own line (the rest imported), auto-detection reads a samples file as samples,
sparse files and gzip bombs are refused by their caps, and a failed write leaves no partial corpus."""

from __future__ import annotations

import errno
import gzip
import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app
from orchestrace.collection.logimport import detect_format, import_logs
from orchestrace.offline import load_logged_runs


def _good(i: int) -> str:
    return json.dumps({"id": f"q{i}", "answer": "4", "samples": [
        {"text": "4", "logprob_mean": -0.1, "tokens": 3}, "5", "4", "so 4"]})


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    return path


def test_absurd_numbers_and_deep_nesting_are_located_exclusions(tmp_path: Path) -> None:
    big = "9" * 400
    bad = [
        '{"id": "nan", "answer": "4", "samples": [{"text": "4", "logprob_mean": NaN}, "4", "4", "4"]}',
        '{"id": "inf", "answer": "4", "samples": [{"text": "4", "logprob_mean": 1e999}, "4", "4", "4"]}',
        '{"id": "bigint", "answer": "4", "samples": [{"text": "4", "tokens": ' + big + '}, "4", "4", "4"]}',
        '{"id": "ansnan", "answer": NaN, "samples": ["4", "4", "4", "4"]}',
        '{"id": "lp", "answer": "4", "samples": [{"text": "4", "logprob_mean": 5.0}, "4", "4", "4"]}',
        '{"id": "tok", "answer": "4", "samples": [{"text": "4", "tokens": 99999999999}, "4", "4", "4"]}',
        '{"id": "long", "answer": "%s", "samples": ["4", "4", "4", "4"]}' % ("x" * 5000),
        '{"samples": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ]
    f = _write(tmp_path / "s.jsonl", [_good(0), *bad, _good(1), _good(2)])
    r = CliRunner().invoke(app, ["collect", "import", str(f), "-o", str(tmp_path / "c")])
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output and "excluded 8 record(s)" in r.output
    man = json.loads((tmp_path / "c" / "manifest.json").read_text())
    ex = man["import"]["excluded_examples"]
    located = sorted(loc.split(" ")[0].rsplit(":", 1)[1] for locs in ex.values() for loc in locs)
    assert located == [str(n) for n in range(2, 10)]  # every bad line, by its own number
    assert sorted(load_logged_runs(tmp_path / "c").task_ids.tolist()) == ["q0", "q1", "q2"]


@pytest.mark.parametrize("first", ["{torn", "# a comment", '{"id": "a", "answer": "1", "samples": ["\u2028", "1"]}',
                                   json.dumps({"id": "p", "answer": "1", "samples": ["x" * 70_000, "1"]})])
def test_auto_detection_reads_a_samples_file_as_samples(tmp_path: Path, first: str) -> None:
    f = _write(tmp_path / "s.jsonl", [first, _good(0), _good(1)])
    assert detect_format(f) == "samples"
    d = tmp_path / "d.json"
    d.write_text(json.dumps({"What is 2+2?": [[[{"role": "user", "content": "q"},
                                                 {"role": "assistant", "content": "4"}]], "4"]}, indent=1))
    assert detect_format(d) == "debate"


def test_sparse_files_fifos_and_gzip_bombs_are_refused_by_their_caps(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    sparse = tmp_path / "sparse.jsonl"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for p, why in [(sparse, "over the"), (fifo, "a FIFO")]:
        t0 = time.monotonic()
        r = CliRunner().invoke(app, ["collect", "import", str(p), "-o", str(tmp_path / "c")])
        assert r.exit_code == 2 and why in r.output and str(p) in r.output, r.output
        assert time.monotonic() - t0 < 5
    monkeypatch.setenv("ORCHESTRACE_MAX_CORPUS_BYTES", str(1 << 20))
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write((_good(0) + "\n").encode())
        fh.write(b" " * (8 << 20) + b"\n")
    assert bomb.stat().st_size < 1 << 20
    r = CliRunner().invoke(app, ["collect", "import", str(bomb), "-o", str(tmp_path / "c")])
    assert r.exit_code == 1 and "compression bomb" in r.output
    assert not (tmp_path / "c").exists()


def test_a_failed_write_leaves_no_partial_corpus_and_a_rerun_works(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    f = _write(tmp_path / "s.jsonl", [_good(i) for i in range(4)])
    real = os.fsync
    n = [0]

    def full_disk(fd: int) -> None:
        n[0] += 1
        if n[0] == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        import_logs([f], tmp_path / "c", width=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no corpus, no staging folder
    monkeypatch.setattr(os, "fsync", real)
    rep = import_logs([f], tmp_path / "c", width=2)
    assert rep.tasks == 4 and load_logged_runs(tmp_path / "c").shape == (4, 2, 2)
