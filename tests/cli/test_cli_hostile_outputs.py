"""Amplification and exports (issue 41, classes 4 and 6): blank-line padding in a gzip shard is capped,
not one object per line; ``export --decisions`` refuses what ``train`` refuses, with the same exit
code; ``-o`` naming a FIFO or a device is refused before any work and never replaced; a failed write
keeps the previous output."""

from __future__ import annotations

import errno
import gzip
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace._limits import MAX_BLANK_LINES, capped_lines
from orchestrace.cli import app
from orchestrace.core.io import atomic_write

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


def _padded(tmp_path: Path, blank: bytes) -> Path:
    c = tmp_path / "c"
    c.mkdir()
    shutil.copy(TINY / "manifest.json", c)
    with gzip.open(c / "traces.jsonl.gz", "wb") as fh:
        fh.write(gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()))
        fh.write(blank)
    return c


def test_blank_lines_are_skipped_and_padding_is_capped(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"a\n\n \n\t\r\nb\n")
    assert [(n, x) for n, x in capped_lines(p)] == [(1, b"a\n"), (5, b"b\n")]  # numbers still count blank lines
    p.write_bytes(b"a\n" + b"\n" * (MAX_BLANK_LINES + 1) + b"b\n")
    got = list(capped_lines(p))
    assert got[0] == (1, b"a\n") and isinstance(got[-1][1], OSError) and "blank lines" in str(got[-1][1])


def test_a_gzip_shard_of_blank_lines_is_refused_alike_by_train_and_export(tmp_path: Path) -> None:
    c = _padded(tmp_path, b"\n" * (64 << 20))  # 64 MiB of newlines, ~64 KB gzipped
    assert (c / "traces.jsonl.gz").stat().st_size < 1 << 20
    codes = []
    for args in (["train", "--from-traces", str(c), "-o", str(tmp_path / "run")],
                 ["export", "trl", str(c), "--decisions", "exact", "-o", str(tmp_path / "x.jsonl")]):
        t0 = time.monotonic()
        r = CliRunner().invoke(app, args)
        assert time.monotonic() - t0 < 20
        assert "more than 10000 blank lines" in r.output and "internal error" not in r.output, r.output
        codes.append(r.exit_code)
    assert codes == [1, 1] and not (tmp_path / "x.jsonl").exists()


def test_export_refuses_a_corpus_train_refuses_with_the_same_code(tmp_path: Path) -> None:
    r_train = CliRunner().invoke(app, ["train", "--from-traces", str(TINY), "-o", str(tmp_path / "run")])
    r_exp = CliRunner().invoke(app, ["export", "trl", str(TINY), "--decisions", "exact", "-o", str(tmp_path / "x")])
    assert r_train.exit_code == r_exp.exit_code == 1
    assert "too few tasks" in r_train.output and "too few tasks" in r_exp.output
    assert not (tmp_path / "x").exists()


def test_an_output_that_is_a_fifo_or_a_device_is_refused_and_kept(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = [fifo]
    if os.geteuid() == 0:  # a device node of our own (never /dev/null: a regression must not replace it)
        dev = tmp_path / "null"
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append(dev)
    for t in targets:
        for fmt in ("trl", "verl"):
            r = CliRunner().invoke(app, ["export", fmt, str(TINY), "--decisions", "exact", "-o", str(t)])
            assert r.exit_code == 2 and "not a regular file" in r.output and str(t) in r.output
        with pytest.raises(OSError, match="not a regular file"):
            atomic_write(t, b"x")
        mode = t.lstat().st_mode
        assert stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)  # still what it was


def test_a_failed_write_keeps_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "x.jsonl"
    out.write_text("previous\n")

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        atomic_write(out, b"new\n")
    assert out.read_text() == "previous\n" and [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]
    pa = pytest.importorskip("pyarrow")
    from orchestrace.exporters.training import to_verl

    pq_out = tmp_path / "x.parquet"
    pq_out.write_bytes(b"previous")
    monkeypatch.setattr("orchestrace.exporters.training.verl_rows", lambda traces, **kw: [{"a": 1}])
    with pytest.raises(OSError, match="No space"):
        to_verl([], pq_out)
    assert pq_out.read_bytes() == b"previous" and pa is not None


def test_member_names_from_a_corpus_are_printed_without_terminal_control(tmp_path: Path) -> None:
    import dataclasses

    from orchestrace.offline import make_synthetic_team, save_runs

    t = make_synthetic_team(120, 3, seed=3)
    names = tuple(f"\x1b[31m{m}\x1b]0;pwn\x07" for m in t.members)
    t = dataclasses.replace(t, members=names, meta={**t.meta, "members": list(names)})
    save_runs(t, tmp_path / "t.npz")
    r = CliRunner().invoke(app, ["train", "--from-traces", str(tmp_path / "t.npz"), "-o", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "\x07" not in r.output and "\\x1b[31mcold" in r.output


def test_env_run_episodes_are_bounded(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["env", "run", "orchestrace/Orchestrate-small-v0", "--episodes", str(10**12),
                                 "-o", str(tmp_path / "e.jsonl")])
    assert r.exit_code == 2 and "--episodes" in r.output and not (tmp_path / "e.jsonl").exists()


def test_one_exit_code_rule_for_task_files_across_commands(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "prompt": "?", "answer": NaN}\n')
    log = tmp_path / "s.jsonl"
    log.write_text('{"id": "a", "answer": "1", "samples": ["1", "1", "1", "1"]}\n')
    url = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    for tasks, code in [(bad, 1), (tmp_path / "none.jsonl", 2)]:
        got = [CliRunner().invoke(app, argv).exit_code for argv in (
            ["collect", "run", str(tmp_path / "r"), "--task-file", str(tasks), *url],
            ["collect", "team", str(tmp_path / "t"), "--task-file", str(tasks), *url],
            ["collect", "import", str(log), "--tasks", str(tasks), "-o", str(tmp_path / "i")])]
        assert got == [code] * 3, (tasks, got)
