"""``orchestrace report`` through typer's CliRunner: exit codes, messages, no tracebacks."""

from __future__ import annotations

import json
import re

import msgspec
import pytest
from typer.testing import CliRunner

import orchestrace as ot
from orchestrace.cli import app
from orchestrace.errors import MissingExtraError

runner = CliRunner()


def run(*args):
    result = runner.invoke(app, ["report", *[str(a) for a in args]])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _payload(path):
    m = re.search(r'<script type="application/json" id="payload">(.*?)</script>', path.read_text(), re.S)
    return json.loads(m.group(1))


def test_single_trace(reference_trace, tmp_path):
    out = tmp_path / "r.html"
    r = run(reference_trace, "-o", out)
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and "8 events" in r.output
    p = _payload(out)
    assert p["kind"] == "trace" and p["meta"]["trace_id"] == "demo-trace-001"


def test_folder_and_jsonl_dataset(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    for s in range(3):
        ot.dump(ot.synth(events=60, agents=2, seed=s), d / f"t{s}.json")
    r = run(d, "-o", tmp_path / "s.html")
    assert r.exit_code == 0, r.output
    assert "summary of 3 traces" in r.output
    assert _payload(tmp_path / "s.html")["kind"] == "many"
    ds = tmp_path / "ds.jsonl"
    ds.write_bytes(b"".join(ot.dumps(ot.synth(events=60, agents=2, seed=s), format="jsonl") for s in range(2)))
    assert run(ds, "-o", tmp_path / "d.html").exit_code == 0


def test_invalid_trace_lists_problems_exit_1(tmp_path):
    tr = ot.synth(events=60, agents=2, seed=0)
    bad = msgspec.structs.replace(tr, edges=(*tr.edges, ot.Edge("e1", "nope", ot.EdgeType.CAUSAL)))
    path = tmp_path / "bad.json"
    ot.dump(bad, path)
    r = run(path, "-o", tmp_path / "r.html")
    assert r.exit_code == 1
    assert "edge.dangling" in r.output and "$.edges" in r.output
    assert not (tmp_path / "r.html").exists()


def test_not_json_exit_1(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    r = run(path, "-o", tmp_path / "r.html")
    assert r.exit_code == 1 and "json." in r.output


def test_usage_errors_exit_2(reference_trace, tmp_path):
    assert run(tmp_path / "missing.json", "-o", tmp_path / "r.html").exit_code == 2
    r = run(reference_trace, "-o", tmp_path / "no" / "such" / "dir" / "r.html")
    assert r.exit_code == 2 and "cannot write" in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(empty, "-o", tmp_path / "r.html").exit_code == 2
    r = run(reference_trace, "-o", tmp_path / "r.html", "--credit", "agnet:shapley")
    assert r.exit_code == 2 and "unknown credit unit" in r.output
    r = run(reference_trace, "-o", tmp_path / "r.html", "--credit", "agent:shapely")
    assert r.exit_code == 2 and "shapley" in r.output


def test_credit(tmp_path):
    path = tmp_path / "t.json"
    ot.dump(ot.synth(events=120, agents=3, seed=4), path)
    out = tmp_path / "r.html"
    r = run(path, "-o", out, "--credit", "agent:shapley")
    assert r.exit_code == 0, r.output
    c = _payload(out)["credit"]
    assert c["unit"] == "agent" and c["method"] == "shapley" and len(c["ids"]) == len(c["values"]) == 4


def test_png(tmp_path, reference_trace):
    pytest.importorskip("matplotlib", reason="matplotlib (extra 'plot') not installed")
    png = tmp_path / "t.png"
    r = run(reference_trace, "-o", tmp_path / "r.html", "--png", png)
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_png_without_matplotlib_says_how_to_install(tmp_path, reference_trace, monkeypatch):
    import orchestrace.errors as errors

    real = errors.require

    def fake(module, *, extra):
        if module == "matplotlib":
            raise MissingExtraError(f"{module} is needed for this; install it with: pip install 'orchestrace[{extra}]'")
        return real(module, extra=extra)

    monkeypatch.setattr(errors, "require", fake)
    r = run(reference_trace, "-o", tmp_path / "r.html", "--png", tmp_path / "t.png")
    assert r.exit_code == 2 and "pip install 'orchestrace[plot]'" in r.output


def test_credit_needs_one_trace(tmp_path):
    ds = tmp_path / "ds.jsonl"
    ds.write_bytes(b"".join(ot.dumps(ot.synth(events=60, agents=2, seed=s), format="jsonl") for s in range(2)))
    r = run(ds, "-o", tmp_path / "r.html", "--credit", "agent")
    assert r.exit_code == 2 and "exactly one trace" in r.output


def test_import_claude_code(tmp_path, claude_fixture):
    src = claude_fixture("subagent.jsonl")
    out = tmp_path / "cc.html"
    r = run(src, "-o", out, "--from", "claude-code")
    assert r.exit_code == 0, r.output
    p = _payload(out)
    assert p["meta"]["system"] == "claude-code" and p["meta"]["n_agents"] >= 2
