"""``orchestrace import`` / ``export`` through the real CLI: outputs and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, timeout=120)


def test_import_report_then_export_all_formats(fx: Path, tmp_path: Path) -> None:
    out = tmp_path / "cc.jsonl"
    r = _run("import", "claude-code", str(fx / "claude-code" / "subagent.jsonl"), "-o", str(out), "--report")
    assert r.returncode == 0, r.stderr
    assert "progress/hook_progress" in r.stdout and "total" in r.stdout
    r = _run("validate", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    for fmt, name in [("otlp", "o.json"), ("rllm", "e.jsonl"), ("trl", "t.jsonl"), ("reference", "ref.json")]:
        r = _run("export", fmt, str(out), "-o", str(tmp_path / name))
        assert r.returncode == 0, (fmt, r.stderr)
    rows = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert rows and {"prompt", "completion", "reward"} <= set(rows[0])
    r = _run("import", "otlp", str(tmp_path / "o.json"), "-o", str(tmp_path / "back.json"))
    assert r.returncode == 0, r.stderr
    if pytest.importorskip("pyarrow"):
        assert _run("export", "verl", str(out), "-o", str(tmp_path / "v.parquet")).returncode == 0


def test_import_json_report_and_auto(fx: Path, tmp_path: Path) -> None:
    files = [str(p) for p in sorted((fx / "any-agent").glob("*.json"))]
    r = _run("import", "auto", *files, "-o", str(tmp_path / "a.jsonl"), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["traces"] == 7 and rep["totals"]["unknown"] == 0


def test_exit_codes(fx: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01garbage\n")
    r = _run("import", "claude-code", str(bad), "-o", str(tmp_path / "x.jsonl"))
    assert r.returncode == 1 and "bad.jsonl:1" in r.stderr and "Traceback" not in r.stderr
    r = _run("import", "jaeger", str(fx / "codex" / "sample_codex_session.jsonl"), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 1 and "import.wrong-format" in r.stderr
    r = _run("import", "codex", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 2
    r = _run("import", "nonsense", str(bad), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 2
    r = _run("export", "trl", str(bad), "-o", str(tmp_path / "x.jsonl"))
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr
    # warnings only: exit 0, or 1 with --strict
    tempo = str(fx / "otel-jaeger" / "tempo_export_with_batches.json")
    assert _run("import", "otlp", tempo, "-o", str(tmp_path / "t.json")).returncode == 0
    assert _run("import", "otlp", tempo, "-o", str(tmp_path / "t.json"), "--strict").returncode == 1
