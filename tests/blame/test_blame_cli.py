"""``orchestrace blame`` and ``credit --method blame`` through the real CLI: the README recipe on one failed
run, and bad input (located message, documented exit code, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orchestrace.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "whowhen"
runner = CliRunner()


def _run(*argv: str) -> tuple[int, str]:
    r = runner.invoke(app, list(argv))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def test_recipe_on_one_failed_run(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    code, _ = _run("import", "chat", str(DATA / "ag_27.json"), "-o", str(out))
    assert code == 0
    code, text = _run("blame", str(out))
    assert code == 0
    assert "decisive error: agent DataVerification_Expert, step 1" in text and "exec_failed @" in text
    assert "runner-up:" in text
    code, text = _run("blame", str(out), "--json")
    d = json.loads(text.strip().splitlines()[0])
    assert d["decisive"]["agent"] == "DataVerification_Expert" and d["evidence_found"] is True
    for unit in ("agent", "turn", "message", "role", "orchestrator", "team"):  # token: needs --estimate-tokens
        code, text = _run("credit", str(out), "--method", "blame", "--unit", unit, "--json")
        assert code == 0, (unit, text)
        rows = [json.loads(x) for x in text.splitlines() if x.startswith("{")]
        assert abs(sum(r["credit"] for r in rows)) < 1e-9  # a failed run: reward 0, credit sums to it
    code, text = _run("credit", str(out), "--method", "blame", "--unit", "agent", "--json")
    rows = {r["unit"]: r["credit"] for r in (json.loads(x) for x in text.splitlines() if x.startswith("{"))}
    assert min(rows, key=rows.__getitem__) == "DataVerification_Expert" and rows["DataVerification_Expert"] < 0


def test_no_evidence_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _run("import", "chat", str(DATA / "ag_45.json"), "-o", str(out))
    code, text = _run("blame", str(out))
    assert code == 0 and "no evidence" in text and "fallback" in text


def test_bad_input(tmp_path: Path) -> None:
    code, text = _run("blame", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "no such file" in text
    code, text = _run("blame", str(tmp_path))
    assert code == 2 and "is a folder" in text
    raw = tmp_path / "raw.json"
    raw.write_text((DATA / "ag_27.json").read_text())  # a transcript, not a trace
    code, text = _run("blame", str(raw))
    assert code == 1 and "raw.json" in text
    code, text = _run("blame", str(raw), "--fallback", "nope")
    assert code == 2 and "first-reply" in text
    humans = tmp_path / "h.json"
    humans.write_text(json.dumps({"history": [{"role": "user", "content": "hi"}], "is_correct": False}))
    out = tmp_path / "h.jsonl"
    assert _run("import", "chat", str(humans), "-o", str(out))[0] == 0
    code, text = _run("blame", str(out))
    assert code == 1 and "nobody to blame" in text
