"""The columnar dataset (Parquet): lossless round trip, plain-pyarrow readability, CLI, bad input."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from foundation_strategies import traces as trace_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import orchestrace as ot
from orchestrace import synth
from orchestrace.cli import app
from orchestrace.core.dataset import TABLES, is_dataset, read_dataset, write_dataset
from orchestrace.core.trace import DecisionPayload, Edge, Event, Outcome, Signal, Trace
from orchestrace.errors import TraceDecodeError, TraceError
from orchestrace.vocab import CreditUnit, Decision, EdgeType, EventType, Topology

DATA = Path(__file__).resolve().parents[1] / "data"
REFERENCE = DATA / "reference" / "example_trace.json"
SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
runner = CliRunner()


def roundtrip(traces: list[Trace], folder: Path, **kw: int) -> list[Trace]:
    assert write_dataset(traces, folder, **kw) == len(traces)
    return list(read_dataset(folder))


def assert_identical(a: list[Trace], b: list[Trace]) -> None:
    """Equal as structs AND byte-identical as native JSON (None vs missing, attrs, key order)."""
    assert b == a
    assert [ot.dumps(t) for t in b] == [ot.dumps(t) for t in a]


# ----------------------------------------------------------------------------- round trip
@settings(SETTINGS, max_examples=40)
@given(st.lists(trace_strategy(max_workers=3, max_steps=3), min_size=0, max_size=3),
       st.sampled_from([2, 7, 1000]), st.sampled_from([3, 1000]))
def test_hypothesis_roundtrip_is_lossless(tmp_path_factory: pytest.TempPathFactory, trs: list[Trace],
                                          rows: int, batch: int) -> None:
    folder = tmp_path_factory.mktemp("ds")
    # small rows_per_group → many row groups; small batch_rows → traces straddle read batches
    assert write_dataset(trs, folder, rows_per_group=rows) == len(trs)
    assert_identical(trs, list(read_dataset(folder, batch_rows=batch)))


def test_edge_values_roundtrip(tmp_path: Path) -> None:
    """None vs {} attrs, Outcome() vs None, empty alternatives vs listed, non-finite costs, unicode."""
    evs = (
        Event(id="d", t=-1.5, type=EventType.ORCHESTRATOR_DECISION, agent="o",
              decision=DecisionPayload(kind=Decision.STOP, action="stop")),
        Event(id="d2", t=0.0, type=EventType.ORCHESTRATOR_DECISION, agent="o", attrs={},
              decision=DecisionPayload(kind=Decision.DELEGATE, action="w", alternatives=("w", ""), logprob=-0.0,
                                       policy="p", step=0)),
        Event(id="x", t=1e300, t_end=1e300, type="tool_call", agent="ü🙂", tool="t", tokens_in=2**62, tokens_out=0,
              cost=0.0, trusted=False, error=False, privileged=True, content="", source="f:1", content_ref="h",
              outcome=Outcome(), attrs={"nested": {"a": [1, 2.5, None, True, "s"]}, "z": 1, "a": 0}),
        Event(id="y", t=2.0, type=EventType.MESSAGE, agent="a", from_="a", to="b", role="",
              outcome=Outcome(success=False, score=0.25, verifier="v", answer_ref="r")),
    )
    tr = Trace(trace_id="t", task_id="", events=evs, edges=(Edge("d", "x", EdgeType.CAUSAL), Edge("x", "x", "temporal")),
               rewards={"b": 1.0, "a": -2.0}, costs={"inf": float("inf")}, metrics={}, outcome=Outcome(),
               signals=(Signal(unit=CreditUnit.AGENT, id="a", value=1.0, name="n"),), meta={"seed": 7, "x": [1, {}]},
               topology=Topology.SWARM, system="", schema_version="9.9")
    empty = Trace(trace_id="t", task_id="k", events=())  # same trace_id twice, no events, no edges
    back = roundtrip([tr, empty, tr], tmp_path)
    assert_identical([tr, empty, tr], back)
    assert back[0].events[1].attrs == {} and back[0].events[0].attrs is None
    assert back[0].outcome == Outcome() and back[1].outcome is None
    assert list(back[0].events[2].attrs) == ["nested", "z", "a"]  # key order kept
    assert list(back[0].rewards) == ["b", "a"]
    assert back[0].events[0].decision.alternatives == () and back[0].events[1].decision.alternatives == ("w", "")


def test_synth_traces_roundtrip_across_row_groups(tmp_path: Path) -> None:
    trs = [synth(events=n, agents=k, seed=s) for s, (n, k) in enumerate([(300, 4), (6, 1), (2000, 30), (57, 2)])]
    back = roundtrip(trs, tmp_path, rows_per_group=500)
    assert_identical(trs, back)
    meta = pq.ParquetFile(tmp_path / "events.parquet").metadata
    assert meta.num_row_groups >= 4 and meta.num_rows == sum(len(t.events) for t in trs)


def test_reference_example_roundtrip(tmp_path: Path) -> None:
    ref = ot.load(REFERENCE)
    assert len(ref.events) > 5 and ref.topology is not None
    back = roundtrip([ref, ref], tmp_path)
    assert_identical([ref, ref], back)
    assert ot.validate(back[0]).valid


def test_write_streams_from_a_generator(tmp_path: Path) -> None:
    produced: list[int] = []

    def gen():  # noqa: ANN202
        for s in range(6):
            produced.append(s)
            yield synth(events=100, agents=2, seed=s)

    assert write_dataset(gen(), tmp_path, rows_per_group=150) == 6
    # several row groups prove the writer flushed before the generator was exhausted
    assert pq.ParquetFile(tmp_path / "traces.parquet").metadata.num_row_groups >= 3
    assert [t.trace_id for t in read_dataset(tmp_path)] == [synth(events=100, agents=2, seed=s).trace_id
                                                            for s in range(6)]


def test_unstorable_trace_leaves_no_half_dataset(tmp_path: Path) -> None:
    ok = synth(events=20, agents=2, seed=0)
    bad = msgspec.structs.replace(ok, events=(msgspec.structs.replace(ok.events[0], tokens_in=2**70),))
    write_dataset([ok], tmp_path)
    with pytest.raises(TraceError, match="cannot store"):
        write_dataset([ok, bad], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(TABLES)  # old dataset intact, no temp files
    assert list(read_dataset(tmp_path)) == [ok]


# ----------------------------------------------------------------------------- without orchestrace
def test_readable_by_plain_pyarrow(tmp_path: Path) -> None:
    trs = [synth(events=200, agents=3, seed=s) for s in range(3)]
    write_dataset(trs, tmp_path)
    traces = pq.read_table(tmp_path / "traces.parquet")
    events = pq.read_table(tmp_path / "events.parquet")
    edges = pq.read_table(tmp_path / "edges.parquet")
    assert traces.column("trace_id").to_pylist() == [t.trace_id for t in trs]
    assert traces.column("n_events").to_pylist() == [len(t.events) for t in trs]
    assert events.num_rows == sum(len(t.events) for t in trs) and edges.num_rows == sum(len(t.edges) for t in trs)
    assert events.schema.field("decision_alternatives").type == pa.list_(pa.string())
    assert events.schema.field("t").type == pa.float64() and events.schema.field("tokens_in").type == pa.int64()
    # plain-arrow aggregate equals the trace-model computation
    tok = events.group_by("trace_id").aggregate([("tokens_out", "sum")]).to_pylist()
    assert {r["trace_id"]: r["tokens_out_sum"] for r in tok} == {
        t.trace_id: sum(e.tokens_out or 0 for e in t.events) for t in trs}
    row = events.slice(0, 1).to_pylist()[0]
    first = trs[0].events[0]
    assert (row["id"], row["type"], row["agent"], row["event_index"]) == (first.id, first.type.value, first.agent, 0)
    assert dict(traces.column("rewards").to_pylist()[0]) == trs[0].rewards
    assert json.loads(traces.column("meta").to_pylist()[0]) == trs[0].meta
    assert pq.ParquetFile(tmp_path / "events.parquet").schema_arrow.metadata[b"orchestrace.table"] == b"events"


@pytest.mark.skipif(importlib.util.find_spec("duckdb") is None, reason="duckdb not installed (optional check)")
def test_readable_by_duckdb(tmp_path: Path) -> None:
    import duckdb

    trs = [synth(events=100, agents=2, seed=s) for s in range(2)]
    write_dataset(trs, tmp_path)
    n = duckdb.sql(f"SELECT count(*) FROM '{tmp_path / 'events.parquet'}' WHERE type = 'tool_call'").fetchone()[0]
    assert n == sum(e.type is EventType.TOOL_CALL for t in trs for e in t.events)


@pytest.mark.skipif(importlib.util.find_spec("polars") is None, reason="polars not installed (optional check)")
def test_readable_by_polars(tmp_path: Path) -> None:
    import polars as pl

    trs = [synth(events=100, agents=2, seed=s) for s in range(2)]
    write_dataset(trs, tmp_path)
    df = pl.read_parquet(tmp_path / "edges.parquet")
    assert df.height == sum(len(t.edges) for t in trs)


def test_foreign_types_are_cast(tmp_path: Path) -> None:
    """A table rewritten by another tool with large_string / large_list columns still loads."""
    trs = [synth(events=60, agents=2, seed=1)]
    write_dataset(trs, tmp_path)
    ev = pq.read_table(tmp_path / "events.parquet")
    big = pa.schema([pa.field(f.name, pa.large_string() if f.type == pa.string() else
                              pa.large_list(pa.large_string()) if f.name == "decision_alternatives" else f.type)
                     for f in ev.schema])
    pq.write_table(ev.cast(big), tmp_path / "events.parquet")
    assert list(read_dataset(tmp_path)) == trs


# ----------------------------------------------------------------------------- bad input
def _dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "ds"
    write_dataset([synth(events=80, agents=2, seed=s) for s in range(2)], folder)
    return folder


def _error(folder: Path) -> TraceDecodeError:
    with pytest.raises(TraceDecodeError) as info:
        list(read_dataset(folder))
    assert info.value.problems, "error must carry located problems"
    return info.value


def test_missing_table_is_located(tmp_path: Path) -> None:
    folder = _dataset(tmp_path)
    (folder / "edges.parquet").unlink()
    err = _error(folder)
    assert err.problems[0].code == "io.not-found" and err.problems[0].path.endswith("edges.parquet")


def test_corrupted_and_truncated_tables_are_located(tmp_path: Path) -> None:
    folder = _dataset(tmp_path)
    (folder / "events.parquet").write_bytes(b"not parquet at all")
    err = _error(folder)
    assert err.problems[0].code == "parquet.corrupt" and "events.parquet" in err.problems[0].path
    folder = _dataset(tmp_path / "2")
    data = (folder / "traces.parquet").read_bytes()
    (folder / "traces.parquet").write_bytes(data[: len(data) // 2])
    assert _error(folder).problems[0].code == "parquet.corrupt"


def test_inconsistent_tables_are_located(tmp_path: Path) -> None:
    folder = _dataset(tmp_path)
    ev = pq.read_table(folder / "events.parquet")
    pq.write_table(ev.slice(0, ev.num_rows - 1), folder / "events.parquet")  # one event lost
    assert _error(folder).problems[0].code == "parquet.mismatch"
    folder = _dataset(tmp_path / "2")
    ev = pq.read_table(folder / "events.parquet")
    pq.write_table(ev.drop_columns(["agent"]), folder / "events.parquet")
    err = _error(folder)
    assert err.problems[0].code == "parquet.schema" and "agent" in err.problems[0].message
    folder = _dataset(tmp_path / "3")
    ed = pq.read_table(folder / "edges.parquet")
    types = ed.column("type").to_pylist()
    types[5] = "telepathy"
    pq.write_table(ed.set_column(3, "type", pa.array(types)), folder / "edges.parquet")
    err = _error(folder)
    assert err.problems[0].code == "parquet.value" and err.problems[0].path.endswith("[row 5].type")


# ----------------------------------------------------------------------------- CLI
def test_cli_convert_to_parquet_then_metrics(tmp_path: Path) -> None:
    trs = [synth(events=120, agents=3, seed=s) for s in range(3)]
    src = tmp_path / "many.jsonl"
    src.write_bytes(b"".join(ot.dumps(t, format="jsonl") for t in trs))
    out = tmp_path / "ds"
    res = runner.invoke(app, ["convert", str(src), "--to", "parquet", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert is_dataset(out) and list(read_dataset(out)) == trs
    res = runner.invoke(app, ["metrics", str(out), "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["trace_id"] for r in rows] == [t.trace_id for t in trs]
    # same numbers as measuring the JSONL file
    res2 = runner.invoke(app, ["metrics", str(src), "--json"])
    assert [json.loads(line) for line in res2.stdout.splitlines() if line.startswith("{")] == rows
    # a parent folder finds the dataset inside it; and a dataset converts back to JSONL
    res = runner.invoke(app, ["metrics", str(tmp_path), "--json"])
    assert res.exit_code == 0 and sum(line.startswith("{") for line in res.stdout.splitlines()) == 6
    back = tmp_path / "back.jsonl"
    res = runner.invoke(app, ["convert", str(out), "-o", str(back)])
    assert res.exit_code == 0, res.output
    assert list(ot.iter_traces(back)) == trs


def test_cli_single_json_to_parquet(tmp_path: Path) -> None:
    out = tmp_path / "ref"
    res = runner.invoke(app, ["convert", str(REFERENCE), "--to", "parquet", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert list(read_dataset(out)) == [ot.load(REFERENCE)]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = runner.invoke(app, ["convert", str(REFERENCE), "--to", "parquet", "-o", str(blocker)])
    assert res.exit_code == 2 and "folder" in res.output


def test_cli_bad_dataset_exits_cleanly(tmp_path: Path) -> None:
    folder = _dataset(tmp_path)
    (folder / "events.parquet").write_bytes(b"PAR1garbagePAR1")
    res = runner.invoke(app, ["metrics", str(folder)])
    assert res.exit_code == 1 and "Traceback" not in res.output and "events.parquet" in res.output
    res = runner.invoke(app, ["convert", str(folder), "-o", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 1 and "Traceback" not in res.output and "parquet.corrupt" in res.output
    (folder / "events.parquet").unlink()
    res = runner.invoke(app, ["convert", str(folder), "-o", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2 and "Traceback" not in res.output and "io.not-found" in res.output
    res = runner.invoke(app, ["metrics", str(folder)])  # I/O, like convert above: exit 2
    assert res.exit_code == 2 and "Traceback" not in res.output and "missing" in res.output
