"""Issue 27's data-safety defects, each met through the CLI as a user meets it.

* ``metrics --write`` on a JSONL stream that starts with a byte-order mark, with ``{ "header"``
  or with a pretty-printed first record keeps every trace and the stream format, or refuses
  and leaves the file as it was;
* ``metrics --force`` measures a trace that ``validate`` rejects (as ``inspect``/``credit`` do);
* messages written to a pipe are not wrapped mid-sentence, whatever the length of the path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrace import validate
from orchestrace.core.builder import TraceBuilder
from orchestrace.core.io import dumps, read_traces
from orchestrace.core.trace import Outcome


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _stream(n: int = 3) -> bytes:
    out = b""
    for i in range(n):
        b = TraceBuilder(f"t{i}")
        b.add("spawn", "orchestrator", t=0, to="w1")
        b.add("message", "w1", t=1, to="orchestrator")
        out += dumps(b.build(), format="jsonl")
    return out


def _bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def _spaced(data: bytes) -> bytes:
    return b'{ "header"' + data[len(b'{"header"'):]


def _pretty(data: bytes) -> bytes:
    first, rest = data.split(b"\n", 1)
    return json.dumps(json.loads(first), indent=2).encode() + b"\n" + rest


@pytest.mark.parametrize("shape", [_bom, _spaced, _pretty], ids=["bom", "space-before-header", "pretty-header"])
def test_metrics_write_keeps_every_trace_or_refuses(tmp_path: Path, shape) -> None:  # noqa: ANN001
    before = shape(_stream(3))
    p = tmp_path / "runs.jsonl"
    p.write_bytes(before)
    r = _run("metrics", "--write", str(p))
    after = p.read_bytes()
    if r.returncode == 0:  # written: every trace is still there, as a stream, now with measures
        got = read_traces(p)
        assert got.format == "jsonl"
        assert [t.trace_id for t in got.traces] == ["t0", "t1", "t2"]
        assert all("e2/critical_steps" in t.metrics for t in got.traces)
    else:  # refused: the file is untouched and the user is told
        assert after == before
        assert "error" in r.stderr


def test_read_traces_reports_the_decoded_format(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_bytes(_bom(_stream(2)))
    with pytest.warns(Warning, match="byte-order mark"):
        got = read_traces(p)
    assert (len(got.traces), got.format) == (2, "jsonl")
    q = tmp_path / "a.json"  # a native document named .json
    q.write_bytes(dumps(got.traces[0]))
    assert read_traces(q).format == "native"
    ref = tmp_path / "r.json"
    ref.write_text(json.dumps({"trace_id": "r", "task_id": "k", "events": [], "edges": [], "rewards": {},
                               "costs": {"tokens": 0, "wall_clock_s": 0}}))
    assert read_traces(ref).format == "reference"


def _invalid(tmp_path: Path) -> Path:
    b = TraceBuilder("bad")
    b.add("spawn", "orchestrator", t=5, to="w1")
    b.add("message", "w1", t=1, to="orchestrator")  # time runs backwards along the edge
    tr = b.build(outcome=Outcome(success=True))
    assert not validate(tr).valid
    p = tmp_path / "bad.json"
    p.write_bytes(dumps(tr))
    return p


def test_metrics_force_measures_an_invalid_trace(tmp_path: Path) -> None:
    p = _invalid(tmp_path)
    r = _run("metrics", str(p))
    assert r.returncode == 1 and "--force" in r.stderr
    r = _run("metrics", "--force", "--json", str(p))
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout.splitlines()[0])
    assert row["trace_id"] == "bad" and row["metrics"]["cost/events"] == 2
    assert "--force: measure it anyway" in r.stderr
    for cmd in (["inspect"], ["credit", "--unit", "agent"]):  # the commands that always forced: the same outcome
        assert _run(*cmd, "--force", str(p)).returncode == 0


def test_messages_to_a_pipe_are_not_wrapped_with_a_long_path(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    runs = deep / "runs.jsonl"
    r = _run("synth", "--events", "60", "--agents", "3", "--runs", "3", "-o", str(runs))
    assert r.returncode == 0, r.stderr
    assert f"wrote {runs}: 3 runs of task synth-task-0" in r.stdout
    r = _run("metrics", str(deep / "missing.json"))
    assert r.returncode == 2
    assert f"{deep / 'missing.json'}: no such file or folder" in r.stderr


def test_export_with_a_long_path(tmp_path: Path) -> None:
    """The test that failed on a fresh clone in a long temporary path (issue 27)."""
    deep = tmp_path / ("p" * 200)
    deep.mkdir()
    runs = deep / "runs.jsonl"
    r = _run("synth", "--events", "300", "--agents", "4", "--runs", "6", "-o", str(runs))
    assert r.returncode == 0 and "6 runs of task synth-task-0" in r.stdout, r.stderr
    out = deep / "t.jsonl"
    r = _run("export", "trl", str(runs), "-o", str(out), "--baseline", "group", "--method", "causal")
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}:" in r.stdout


def test_metrics_force_measures_an_invalid_trace_of_a_dataset_folder(tmp_path: Path) -> None:
    """The partitioned path (--out, --ray) followed the same rule and refused too (issue 27)."""
    pytest.importorskip("pyarrow")
    p = _invalid(tmp_path)
    ds = tmp_path / "ds"
    assert _run("convert", str(p), "--to", "parquet", "-o", str(ds), "--force").returncode == 0
    r = _run("metrics", str(ds), "--out", str(tmp_path / "parts"), "--json")
    assert r.returncode == 1 and "pass --force to measure it anyway" in r.stderr
    r = _run("metrics", str(ds), "--out", str(tmp_path / "parts2"), "--json", "--force")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[0])["metrics"]["cost/events"] == 2
