"""inspect, schema, convert notes and validate's output formats through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import orchestrace as ot
from orchestrace.cli import app

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "data"


def test_schema_native_is_generated_and_reference_is_the_survey_copy() -> None:
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0
    native = json.loads(res.stdout)
    assert native["$defs"]["Event"]["required"] == ["id", "t", "type", "agent"]
    assert "orchestrator_decision" in native["$defs"]["EventType"]["enum"]
    res = runner.invoke(app, ["schema", "--reference"])
    assert json.loads(res.stdout)["title"] == "LLM-MAS Orchestration Trace"


def test_inspect_tables_and_json(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    ot.dump(ot.synth(events=400, agents=5, seed=1), p)
    res = runner.invoke(app, ["inspect", str(p)])
    assert res.exit_code == 0, res.stdout
    for word in ("spawn tree", "events by type", "agents", "tool calls", "rewards", "time span", "w1"):
        assert word in res.stdout
    res = runner.invoke(app, ["inspect", "--json", str(p)])
    info = json.loads(res.stdout)
    assert info["events"] == 400 and info["agents"] == 6 and info["stop"] is not None
    res = runner.invoke(app, ["inspect", str(DATA / "bad" / "empty.json")])
    assert res.exit_code == 1 and "json.empty" in res.stderr
    res = runner.invoke(app, ["inspect", str(tmp_path)])
    assert res.exit_code == 2 and "io.is-directory" in res.stderr


def test_validate_text_output_strict_and_json_lines(tmp_path: Path) -> None:
    warn = DATA / "bad" / "unknown_schema_version.json"
    good = DATA / "reference" / "example_trace.json"
    res = runner.invoke(app, ["validate", str(good), str(warn)])
    assert res.exit_code == 0 and "version.unknown" in res.stdout and "2 files" in res.stdout
    res = runner.invoke(app, ["validate", "--strict", str(warn)])
    assert res.exit_code == 1
    res = runner.invoke(app, ["validate", "--format", "json", "--strict", str(good), str(warn)])
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["valid"] for x in lines] == [True, False]
    assert set(lines[1]["problems"][0]) == {"code", "severity", "path", "message", "hint"}
    res = runner.invoke(app, ["validate"])
    assert res.exit_code == 2


def test_synth_and_convert_write_errors(tmp_path: Path) -> None:
    res = runner.invoke(app, ["synth", "-n", "5", "-k", "3", "-o", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "too few" in res.stderr
    res = runner.invoke(app, ["convert", str(DATA / "reference" / "example_trace.json"),
                              "-o", str(tmp_path / "no" / "such" / "dir.json")])
    assert res.exit_code == 2 and "cannot write" in res.stderr
