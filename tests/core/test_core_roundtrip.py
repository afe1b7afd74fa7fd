"""Formats: every generated valid trace round-trips and validates; reference output passes the schema."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import jsonschema
import msgspec
import pytest
from foundation_strategies import mutated_json, traces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import orchestrace as ot
from orchestrace.cli import app
from orchestrace.core.io import ReferenceLossWarning, TruncatedStreamWarning
from orchestrace.core.schema import native_schema, reference_schema

DATA = Path(__file__).resolve().parents[1] / "data"
REF_VALIDATOR = jsonschema.Draft202012Validator(reference_schema())
NATIVE_VALIDATOR = jsonschema.Draft202012Validator(native_schema())
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ref_errors(doc: object) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in REF_VALIDATOR.iter_errors(doc)]


@SETTINGS
@given(traces())
def test_generated_traces_are_valid_and_roundtrip_native_and_jsonl(tr: ot.Trace) -> None:
    report = ot.validate(tr)
    assert report.valid and not report.problems, report.problems
    native = ot.dumps(tr)
    assert ot.loads(native) == tr
    assert ot.validate(native).problems == ()
    stream = ot.dumps(tr, format="jsonl")
    assert ot.loads(stream) == tr
    assert ot.loads(ot.dumps(ot.loads(stream))) == tr  # native → JSONL → native
    assert NATIVE_VALIDATOR.is_valid(json.loads(native))


@SETTINGS
@given(traces(reference_safe=True))
def test_reference_output_passes_the_reference_schema_and_roundtrips(tr: ot.Trace) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReferenceLossWarning)  # nothing may be lost here
        doc = ot.to_reference(tr)
    assert ref_errors(doc) == []
    back = ot.loads(json.dumps(doc))
    assert back == tr
    assert ot.validate(json.dumps(doc).encode()).problems == ()


@SETTINGS
@given(traces())
def test_reference_output_is_schema_valid_even_when_lossy(tr: ot.Trace) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReferenceLossWarning)
        doc = ot.to_reference(tr)
    assert ref_errors(doc) == []


@SETTINGS
@given(mutated_json())
def test_any_mutation_validates_or_yields_problems_never_raises(data: bytes) -> None:
    report = ot.validate(data)
    assert isinstance(report, ot.ValidationReport)
    assert all(p.code != "internal.error" for p in report.problems), report.problems
    if not report.valid:
        assert report.errors
    # loading agrees with the structural layer: it raises only a TraceDecodeError
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ot.loads(data)
    except ot.errors.TraceDecodeError as exc:
        assert exc.problems


@SETTINGS
@given(traces(max_workers=2, max_steps=2), st.sampled_from([None, "x", 3, float("nan"), float("inf"), -1.0, [], {}]))
def test_trace_objects_with_wrong_python_types_never_raise(tr: ot.Trace, junk: object) -> None:
    ev = msgspec.structs.replace(tr.events[0], t=junk) if junk is not None else tr.events[0]
    ev2 = msgspec.structs.replace(tr.events[-1], tokens_in=junk)
    bad = msgspec.structs.replace(tr, events=(ev, *tr.events[1:-1], ev2))
    report = ot.validate(bad)
    assert all(p.code != "internal.error" for p in report.problems), report.problems


def test_example_validates_and_converts_to_schema_valid_reference(tmp_path: Path) -> None:
    example = DATA / "reference" / "example_trace.json"
    assert ot.validate(example).problems == ()
    runner = CliRunner()
    res = runner.invoke(app, ["validate", str(example)])
    assert res.exit_code == 0, res.stdout
    out = tmp_path / "ref.json"
    res = runner.invoke(app, ["convert", str(example), "-o", str(out), "--to", "reference"])
    assert res.exit_code == 0, res.stdout
    doc = json.loads(out.read_text())
    assert ref_errors(doc) == []
    assert ot.load(out) == ot.load(example)


@pytest.mark.parametrize("events,agents", [(200, 5), (3000, 40)])
def test_synth_converts_to_schema_valid_reference_via_cli(tmp_path: Path, events: int, agents: int) -> None:
    src, out = tmp_path / "s.json", tmp_path / "r.json"
    ot.dump(ot.synth(events=events, agents=agents, seed=3), src)
    res = CliRunner().invoke(app, ["convert", str(src), "-o", str(out), "--to", "reference"])
    assert res.exit_code == 0
    assert "note:" in res.stderr and "meta" in res.stderr  # the loss is named, clearly
    assert ref_errors(json.loads(out.read_text())) == []
    assert ot.validate(out).valid


def test_truncated_jsonl_reader_returns_complete_records_and_one_warning(tmp_path: Path) -> None:
    tr = ot.synth(events=100, agents=3, seed=1)
    data = ot.dumps(tr, format="jsonl")
    cut = data[: len(data) - 30]  # inside the end record's line
    lines_complete = cut.count(b"\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = ot.loads(cut)
    assert [w.category for w in caught] == [TruncatedStreamWarning]
    assert len(got.events) + len(got.edges) + 1 == lines_complete
    assert got.events == tr.events and got.edges == tr.edges
    cut2 = data[: data.index(b'{"edge"') + 10]  # cut inside the first edge
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = ot.loads(cut2)
    assert len(caught) == 1 and got.events == tr.events and got.edges == ()


def test_convert_formats_via_cli_are_lossless(tmp_path: Path) -> None:
    tr = ot.synth(events=300, agents=4, seed=2)
    src = tmp_path / "a.json"
    ot.dump(tr, src)
    runner = CliRunner()
    assert runner.invoke(app, ["convert", str(src), "-o", str(tmp_path / "b.jsonl")]).exit_code == 0
    assert ot.load(tmp_path / "b.jsonl") == tr
    assert runner.invoke(app, ["convert", str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "c.json"),
                               "--to", "native"]).exit_code == 0
    assert ot.load(tmp_path / "c.json") == tr
    # a two-trace stream cannot become one JSON document
    (tmp_path / "two.jsonl").write_bytes(ot.dumps(tr, format="jsonl") * 2)
    res = runner.invoke(app, ["convert", str(tmp_path / "two.jsonl"), "-o", str(tmp_path / "d.json")])
    assert res.exit_code == 2
    assert len(list(ot.iter_traces(tmp_path / "two.jsonl"))) == 2
    res = runner.invoke(app, ["convert", str(DATA / "bad" / "cycle.json"), "-o", str(tmp_path / "e.json")])
    assert res.exit_code == 1 and "edge.cycle" in res.stderr and "--force" in res.stderr  # validate rejects it
    assert not (tmp_path / "e.json").exists()
    res = runner.invoke(app, ["convert", str(DATA / "bad" / "cycle.json"), "-o", str(tmp_path / "e.json"), "--force"])
    assert res.exit_code == 0 and "--force" in res.stderr and (tmp_path / "e.json").exists()
    res = runner.invoke(app, ["convert", str(DATA / "bad" / "not_json.json"), "-o", str(tmp_path / "e.json")])
    assert res.exit_code == 1 and "json.malformed" in res.stderr and "Traceback" not in res.stderr
