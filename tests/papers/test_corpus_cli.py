"""``orchestrace corpus check|stats`` through typer's CliRunner: exit codes, no tracebacks."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from orchestrace.cli._corpus import corpus_app

runner = CliRunner()


def run(*args: str):
    result = runner.invoke(corpus_app, [str(a) for a in args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_check_reference_copy_ok(reference):
    r = run("check", reference / "papers.csv")
    assert r.exit_code == 0 and "ok" in r.output and "0 error(s)" in r.output
    assert run("check", reference / "excluded.csv").exit_code == 0


def test_check_reports_located_error(mini_rows, csv_text, tmp_path):
    rows = [r[:] for r in mini_rows]
    rows[2][10] = "hybird"
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(rows), encoding="utf-8")
    r = run("check", path)
    assert r.exit_code == 1
    assert "papers.csv:row 3:reward_type" in r.output and "did you mean 'hybrid'?" in r.output
    j = run("check", path, "--format", "json")
    assert j.exit_code == 1
    data = json.loads(j.stdout)
    assert data["valid"] is False
    assert data["problems"][0]["path"] == "papers.csv:row 3:reward_type"


def test_check_markup_in_values_is_printed_verbatim(mini_rows, csv_text, tmp_path):
    rows = [r[:] for r in mini_rows]
    rows[2][10] = "[bold]x[/]"
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(rows), encoding="utf-8")
    r = run("check", path)
    assert r.exit_code == 1 and "'[bold]x[/]'" in r.output


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_check_io_errors_exit_2(tmp_path, kind):
    path = tmp_path / "nope.csv" if kind == "missing" else tmp_path
    r = run("check", path)
    assert r.exit_code == 2 and ("does not exist" in r.output or "directory" in r.output)


def test_check_invalid_utf8_exit_1(tmp_path):
    path = tmp_path / "papers.csv"
    path.write_bytes(b"key,title\n\xff\xfe,x\n")
    r = run("check", path)
    assert r.exit_code == 1 and "corpus.encoding" in r.output


def test_stats_markdown_and_json(reference):
    r = run("stats", reference / "papers.csv", "--excluded", reference / "excluded.csv")
    assert r.exit_code == 0
    assert "| audited (retained + excluded) | 116 |" in r.stdout
    j = run("stats", reference / "papers.csv", "-e", reference / "excluded.csv", "-f", "json")
    data = json.loads(j.stdout)
    assert (data["retained"], data["excluded"], data["audited"]) == (84, 32, 116)
    alone = json.loads(run("stats", reference / "papers.csv", "--format", "json").stdout)
    assert alone["excluded"] is None and alone["retained"] == 84


def test_stats_on_bad_file_exit_1(mini_rows, csv_text, tmp_path):
    rows = [r[:] for r in mini_rows]
    rows[3][4] = "19x9"
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(rows), encoding="utf-8")
    r = run("stats", path)
    assert r.exit_code == 1 and "papers.csv:row 4:year" in r.stderr and r.stdout == ""


def test_stats_io_errors_exit_2(tmp_path, mini_rows, csv_text):
    assert run("stats", tmp_path / "nope.csv").exit_code == 2
    path = tmp_path / "papers.csv"
    path.write_text(csv_text(mini_rows), encoding="utf-8")
    assert run("stats", path, "--excluded", tmp_path).exit_code == 2


def test_usage_errors_exit_2(tmp_path):
    assert run("stats", tmp_path / "x.csv", "--format", "html").exit_code == 2
    assert run("check").exit_code == 2
    assert run("nonsense").exit_code == 2


def test_mounts_under_corpus():
    app = typer.Typer()
    app.add_typer(corpus_app, name="corpus")

    @app.command()
    def other() -> None:  # a second command so that "corpus" stays a sub-group
        pass

    r = runner.invoke(app, ["corpus", "--help"])
    assert r.exit_code == 0 and "check" in r.output and "stats" in r.output
