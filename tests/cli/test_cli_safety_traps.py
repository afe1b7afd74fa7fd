"""Issue 27's silent traps of the trace commands, each met as a user meets it (CLI or API).

`ValidationReport.ok`, a TOML file named `.json`, a JSON config file given as a trace,
`--env default-v2`, `export trl` of a session whose assistant turns only call tools,
directories and `--json` across the analysing commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrace import validate
from orchestrace.core.builder import TraceBuilder
from orchestrace.core.io import dumps

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, timeout=120)


def _trace(tid: str = "t", *, backwards: bool = False):  # noqa: ANN202
    b = TraceBuilder(tid)
    b.add("spawn", "orchestrator", t=5 if backwards else 0, to="w1")
    b.add("message", "w1", t=1, to="orchestrator")
    return b.build()


def test_report_ok_is_false_for_an_invalid_trace() -> None:
    bad = validate(_trace(backwards=True))
    assert not bad.valid
    assert not bad.ok  # was a bound method: `if report.ok:` was always true
    good = validate(_trace())
    assert good.ok is True and good.valid is True
    assert good.passes(strict=True) == (not good.problems)


def test_toml_named_json_says_it_looks_like_toml(tmp_path: Path) -> None:
    p = tmp_path / "spec.json"
    p.write_text('[[reward]]\nfn = "shared_outcome"\nweight = 2.0\n')
    for cmd in ("validate", "metrics"):
        r = _run(cmd, str(p))
        assert r.returncode == 1
        assert "looks like TOML" in r.stdout + r.stderr and "an array" not in r.stdout + r.stderr
    q = tmp_path / "cfg.json"
    q.write_text("title = 'x'\n[owner]\nname = 'y'\n")
    assert "looks like TOML" in _run("validate", str(q)).stdout


@pytest.mark.parametrize("doc", ['[[true]]', '[ {"trace_id": "t"} ]'])
def test_json_arrays_are_not_mistaken_for_toml(tmp_path: Path, doc: str) -> None:
    p = tmp_path / "a.json"
    p.write_text(doc)
    r = _run("validate", str(p))
    assert r.returncode == 1 and "got an array" in r.stdout and "TOML" not in r.stdout


def test_a_json_config_file_gets_one_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "package.json"
    p.write_text(json.dumps({"name": "my-project", "version": "1.0", "dependencies": {"a": "^1"}, "scripts": {}}))
    r = _run("validate", "--json", str(p))
    assert r.returncode == 1
    (row,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert [q["code"] for q in row["problems"]] == ["schema.not-a-trace"]
    assert "'name', 'version'" in row["problems"][0]["message"]


def test_a_missing_id_is_not_also_reported_empty(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"task_id": "k", "events": [{"id": "e1", "t": 0, "type": "message", "agent": "a"}]}))
    codes = [q.code for q in validate(p).problems]
    assert "schema.missing-field" in codes and "reference.empty-string" not in codes


def test_unknown_env_suggests_close_names(tmp_path: Path) -> None:
    r = _run("env", "run", "default-v2", "--episodes", "1", "-o", str(tmp_path / "x.jsonl"))
    assert r.returncode == 2 and "did you mean 'default-v1'" in r.stderr


def test_export_trl_renders_tool_call_only_turns(tmp_path: Path) -> None:
    sess = tmp_path / "s.json"
    src = FIXTURES / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    r = _run("import", "claude-code", str(src), "-o", str(sess), "--content", "keep")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "t.jsonl"
    r = _run("export", "trl", str(sess), "-o", str(out))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 344
    assert all(row["completion"][0]["content"] for row in rows)  # 63 were empty
    assert "--content keep" not in r.stderr  # the user did keep the content
    e9 = next(row for row in rows if row["turn_id"] == "e9")  # a turn whose output is two Bash calls
    assert e9["completion"][0]["content"].count("Bash({") == 2


def test_export_of_hashed_content_still_advises_keep(tmp_path: Path) -> None:
    sess = tmp_path / "s.json"
    src = FIXTURES / "claude-code" / "short.jsonl"
    assert _run("import", "claude-code", str(src), "-o", str(sess), "--content", "hash").returncode == 0
    r = _run("export", "trl", str(sess), "-o", str(tmp_path / "t.jsonl"))
    assert r.returncode == 0 and "--content keep" in r.stderr


def _folder(tmp_path: Path) -> Path:
    top = tmp_path / "runs"
    (top / "sub").mkdir(parents=True)
    (top / "a.json").write_bytes(dumps(_trace("a")))
    (top / "sub" / "b.json").write_bytes(dumps(_trace("b")))
    return top


def test_validate_and_metrics_read_a_folder_alike(tmp_path: Path) -> None:
    top = _folder(tmp_path)
    for cmd in ("validate", "metrics"):
        flat = _run(cmd, "--json", str(top))
        assert flat.returncode == 0, flat.stderr
        assert len(flat.stdout.splitlines()) == 1  # a.json only
        assert "1 trace file(s) in subfolders not read; pass -r" in flat.stderr
        deep = _run(cmd, "-r", "--json", str(top))
        assert deep.returncode == 0, deep.stderr
        assert len(deep.stdout.splitlines()) == 2 and "not read" not in deep.stderr
    empty = tmp_path / "nest"
    (empty / "deeper").mkdir(parents=True)
    (empty / "deeper" / "c.json").write_bytes(dumps(_trace("c")))
    for cmd in ("validate", "metrics"):
        r = _run(cmd, str(empty))
        assert r.returncode == 2 and "pass -r to read them" in r.stdout + r.stderr


def test_validate_format_json_is_a_deprecated_alias_of_json(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_bytes(dumps(_trace("a")))
    new = _run("validate", "--json", str(p))
    old = _run("validate", "-f", "json", str(p))
    assert new.returncode == old.returncode == 0
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert "deprecated; use --json" in old.stderr and not new.stderr


def test_a_wrong_base_url_is_one_line_of_error() -> None:
    pytest.importorskip("httpx")
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = _run("llm", "run", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "x", "--episodes", "3")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "all 36 LLM calls failed (connect×36)" in lines[0], r.stderr
    assert "retrying" not in r.stderr and "success 0/1" in r.stdout
