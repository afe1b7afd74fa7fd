"""``orchestrace metrics`` through typer's CliRunner: one trace, many, JSON, --write, refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace import Edge, EdgeType, dump, dumps, iter_traces, load, synth
from orchestrace.cli import app

runner = CliRunner()
LOCAL = Path(__file__).resolve().parents[1] / "data" / "reference"


@pytest.fixture
def example(tmp_path) -> Path:
    src = LOCAL / "example_trace.json"
    dst = tmp_path / "example_trace.json"
    shutil.copy(src, dst)
    return dst


def run(*args):
    r = runner.invoke(app, ["metrics", *map(str, args)])
    assert "Traceback" not in r.output and "Traceback" not in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def test_one_trace_table(example):
    r = run(example)
    assert r.exit_code == 0
    assert "e2/critical_path_s" in r.stdout and "unknown" in r.stdout
    assert "assumption:" in r.stdout and "safety flow" in r.stdout and "e6 → e7 → e8" in r.stdout


def test_json_lines_and_select(example, tmp_path):
    jl = tmp_path / "many.jsonl"
    jl.write_bytes(b"".join(dumps(synth(events=200, agents=3, seed=s), format="jsonl") for s in range(3)))
    r = run("--json", "--select", "e2/speedup,e4", example, jl)
    assert r.exit_code == 0
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["trace_id"] for x in lines] == ["demo-trace-001"] + [f"synth-200-3-{s}" for s in range(3)]
    assert set(lines[0]) == {"trace_id", "metrics", "assumptions"}
    assert lines[0]["metrics"]["e2/speedup"] == pytest.approx(1.0)  # one event at a time (was 9/8)
    assert set(lines[0]["metrics"]) == {"e2/speedup", "e4/erroneous_events", "e4/erroneous_roots",
                                        "e4/amplification", "e4/output_tainted", "e4/caught_by_aggregation"}


def test_folder_glob_and_summary(tmp_path):
    d = tmp_path / "ds"
    d.mkdir()
    for s in range(5):
        dump(synth(events=150, agents=3, seed=s), d / f"t{s}.{'jsonl' if s % 2 else 'json'}")
    r = run(d)
    assert r.exit_code == 0
    assert all(f"synth-150-3-{s}" in r.stdout for s in range(5))
    assert "summary" in r.stdout and "median" in r.stdout and "p95" in r.stdout
    g = run(str(d / "t*.json"))
    assert g.exit_code == 0 and "synth-150-3-0" in g.stdout and "synth-150-3-1" not in g.stdout


def test_write_reference_keeps_reference_format(example):
    jsonschema = pytest.importorskip("jsonschema")
    r = run("--write", example)
    assert r.exit_code == 0
    raw = json.loads(example.read_text())
    assert "schema_version" not in raw  # still the reference format
    assert raw["metrics"]["parallelism_efficiency"] == pytest.approx(1.0)  # was 9/16 with the spawn's double count
    assert raw["metrics"]["e2/critical_path_s"] == 6.0 and raw["metrics"]["task_success"] == 1.0
    assert raw["costs"]["wall_clock_s"] == 420 and raw["metrics"]["cost/wall_clock_s"] == 420.0
    schema = json.loads((LOCAL / "trace_schema.json").read_text())
    jsonschema.validate(raw, schema)


def test_write_jsonl_dataset(tmp_path):
    jl = tmp_path / "ds.jsonl"
    jl.write_bytes(b"".join(dumps(synth(events=120, agents=2, seed=s), format="jsonl") for s in range(2)))
    assert run("--write", "-s", "e2", jl).exit_code == 0
    back = list(iter_traces(jl))
    assert len(back) == 2
    assert all("e2/speedup" in t.metrics and "parallelism_efficiency" in t.metrics for t in back)


def test_invalid_trace_refused_with_problems(tmp_path):
    tr = synth(events=100, agents=2, seed=0)
    bad = tmp_path / "bad.json"
    dump(tr.__class__(**{**{f: getattr(tr, f) for f in tr.__struct_fields__},
                         "edges": (*tr.edges, Edge("e1", "nope", EdgeType.CAUSAL))}), bad)
    r = run(bad)
    assert r.exit_code == 1
    assert "refused" in r.stderr and "nope" in r.stderr


def test_cycle_refused_and_named(tmp_path):
    from orchestrace import TraceBuilder

    b = TraceBuilder("cyc")
    e1 = b.tool_call("a", "x", t=0, t_end=1)
    e2 = b.tool_call("a", "x", t=1, t_end=2, after=e1)
    b.edge(e2, e1)
    p = tmp_path / "cyc.json"
    dump(b.build(), p)
    r = run(p)
    assert r.exit_code == 1 and "cycle" in r.stderr.lower()
    assert "e1" in r.stderr and "e2" in r.stderr


def test_usage_errors(tmp_path, example):
    assert run(tmp_path / "missing.json").exit_code == 2
    r = run("--select", "e2/speedpu", example)
    assert r.exit_code == 2 and "did you mean" in r.stderr
    (tmp_path / "junk.json").write_text("{not json")
    assert run(tmp_path / "junk.json").exit_code == 1
    assert load(example).trace_id == "demo-trace-001"  # untouched without --write
