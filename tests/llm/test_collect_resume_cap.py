"""``collect --resume`` reads the corpus stream one capped line at a time (issue 39, item 3 of the split brief).

A line longer than the JSONL record cap (``_limits.MAX_LINE_BYTES``, 1 MiB) is refused with a located
``ConfigError`` — the collector never writes one — and it is never read whole: a 10 MB line with no
newline is refused quickly, in bounded memory, and the file is left as it was.
"""

from __future__ import annotations

import gzip
import time
import tracemalloc
from pathlib import Path

import pytest

from orchestrace._limits import MAX_LINE_BYTES
from orchestrace.collection._resume import scan_and_cut
from orchestrace.collection.collect import CorpusWriter
from orchestrace.errors import ConfigError

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"


@pytest.fixture
def stream(tmp_path: Path) -> Path:
    """The tiny committed corpus's stream (30 complete traces) in a fresh folder."""
    p = tmp_path / "c" / "traces.jsonl"
    p.parent.mkdir()
    p.write_bytes(gzip.decompress((TINY / "traces.jsonl.gz").read_bytes()))
    return p


def test_a_10_mb_line_without_newline_is_refused_quickly_in_bounded_memory(stream: Path) -> None:
    whole = stream.read_bytes()
    n_lines = whole.count(b"\n")
    with stream.open("ab") as fh:
        fh.write(b'{"header": {"task_id": "' + b"x" * (10 * 1024**2))  # a torn header, 10 MB, no newline
    before = stream.read_bytes()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(ConfigError) as exc:
            CorpusWriter(stream.parent, resume=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - t0
    msg = str(exc.value)
    assert f"{stream}:{n_lines + 1}:" in msg  # located: the file and the line
    assert f"longer than {MAX_LINE_BYTES} bytes" in msg and "by hand" in msg  # what, and how to fix it
    assert peak < 4 * MAX_LINE_BYTES, peak  # one capped line at a time, never the 10 MB
    assert elapsed < 10.0, elapsed  # generous: a shared, loaded machine; the read itself is milliseconds
    assert stream.read_bytes() == before  # refused, nothing cut


def test_the_cap_counts_the_newline_and_a_line_at_the_cap_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "traces.jsonl"
    header = b'{"header": {"task_id": "a"}}\n'
    end = b'{"end": {}}\n'
    limit = len(header)
    p.write_bytes(header + end)
    assert scan_and_cut(p, line_limit=limit) == ({"a"}, 0)  # a line of exactly the cap (newline included)
    p.write_bytes(header + end)
    with pytest.raises(ConfigError, match=r"traces.jsonl:1: a line longer than 28 bytes"):
        scan_and_cut(p, line_limit=limit - 1)
    assert p.read_bytes() == header + end


def test_an_over_long_torn_tail_is_refused_not_cut(tmp_path: Path) -> None:
    p = tmp_path / "traces.jsonl"
    good = b'{"header": {"task_id": "a"}}\n{"end": {}}\n'
    p.write_bytes(good + b'{"header": {"task_id": "b"}}\n{"event": "' + b"y" * 500)
    with pytest.raises(ConfigError, match=r"traces.jsonl:4: a line longer than 64 bytes"):
        scan_and_cut(p, line_limit=64)
    p.write_bytes(good + b'{"header": {"task_id": "b"}}\n{"event": "' + b"y" * 10)  # under the cap: cut as before
    assert scan_and_cut(p, line_limit=64) == ({"a"}, 29 + 21)
    assert p.read_bytes() == good


def test_resume_still_keeps_every_complete_trace(stream: Path) -> None:
    whole = stream.read_bytes()
    stream.write_bytes(whole + b'{"header": {"task_id": "torn"}}\n{"ev')
    w = CorpusWriter(stream.parent, resume=True)
    w.close()
    assert len(w.done) == 30 and w.cut_bytes == len(b'{"header": {"task_id": "torn"}}\n{"ev')
    assert stream.read_bytes() == whole
