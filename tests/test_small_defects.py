"""Regression tests for the small defects of issue 32 (each one checked as a user meets it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture(scope="module")
def many_flows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic trace with thousands of safety flows (the issue's 4,494)."""
    out = tmp_path_factory.mktemp("flows") / "run.json"
    r = runner.invoke(app, ["synth", "--events", "20000", "--agents", "50", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_dash_h_is_help_everywhere() -> None:
    for args in (["-h"], ["eval", "-h"], ["collect", "import", "-h"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 0 and "Usage:" in r.output, (args, r.output)


def test_report_help_does_not_promise_credit_without_the_option() -> None:
    r = runner.invoke(app, ["report", "--help"])
    assert r.exit_code == 0
    first = " ".join(r.output.split("\n\n", 2)[1].split())
    assert "credit with --credit" in first


def test_metrics_counts_the_flows_it_does_not_list(many_flows: Path) -> None:
    import orchestrace as ot
    from orchestrace.analysis.measures import compute

    total = int(compute(ot.load(many_flows)).metrics["safety/flows"])
    r = runner.invoke(app, ["metrics", str(many_flows)])
    listed = r.output.count("safety flow (")
    assert r.exit_code == 0 and 0 < listed < total
    assert f"… and {total - listed:,} more safety flow(s) ({total:,} in all" in r.output


def test_the_html_report_counts_every_flow_not_the_capped_list(many_flows: Path) -> None:
    import orchestrace as ot
    from orchestrace.analysis.measures import compute
    from orchestrace.report._payload import trace_payload

    trace = ot.load(many_flows)
    p = trace_payload(trace)
    assert len(p["flows"]) == 50 and p["flows_total"] == int(compute(trace).metrics["safety/flows"]) > 50
    js = (ROOT / "src" / "orchestrace" / "data" / "report" / "views.js").read_text(encoding="utf-8")
    body = js.split("OT.flowsList", 1)[1].split("\n};", 1)[0]
    assert "P.flows_total" in body and "in all" in body and "flows.length - 8" not in body


def test_pytest_prints_skip_reasons() -> None:
    opts = _toml((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert re.search(r"(^|\s)-r\w*s", opts["addopts"])


def _toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def test_eval_without_out_prints_the_claims_and_says_how_to_get_the_rest(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    tiny = ["--env", "small", "--episodes-per-step", "16", "--group-size", "4", "--warm-start-episodes", "32",
            "--warm-start-steps", "10", "--hidden", "32", "--quiet"]
    run = tmp_path / "run"
    r = runner.invoke(app, ["train", "--algo", "grpo", "--steps", "2", "--seed", "3", "--out", str(run), *tiny])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["eval", str(run), "--episodes", "12", "--validation", "8", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "## Claims" in r.output and "## Stop rules on the same heads" not in r.output
    assert "-o DIR writes the whole summary" in r.output and len(r.output.splitlines()) < 40


def test_time_left_is_not_extrapolated_from_the_first_slow_units(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from orchestrace.learn import progress

    now = [0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    buf = io.StringIO()
    truth = {}
    with progress.progress_bar(10, "work", stream=buf, min_seconds=0) as advance:
        for k in range(10):
            now[0] += 100.0 if k == 0 else 1.0  # a slow start-up unit, then 1 s per unit
            truth[k + 1] = 10 - (k + 1)
            advance(1)
    lines = buf.getvalue().splitlines()
    assert "left" not in lines[0] and "left" in lines[2]  # 10 %: no estimate yet; 30 %: one
    for ln in lines:
        if "left" in ln:
            done = int(ln.split(": ")[1].split("/")[0])
            left = float(ln.split("~")[1].split(" s")[0])
            assert truth[done] / 2 <= left <= truth[done] * 2, ln
