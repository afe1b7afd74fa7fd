"""``orchestrace env run`` piped: progress comes as plain-text lines on stderr (a rich bar shows
nothing when stderr is not a terminal), with Ray and without; the traces file is unchanged."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

runner = CliRunner()
ENV = "orchestrace/Orchestrate-small-v0"


@pytest.fixture
def eager_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines from the first tenth on (the default waits 2 s, longer than these tiny runs)."""
    import orchestrace.trainers.progress as progress

    monkeypatch.setattr(progress, "progress_bar", functools.partial(progress.progress_bar, min_seconds=0))


def _lines(stderr: str, n: int) -> list[int]:
    return [int(m.group(1).replace(",", "")) for m in re.finditer(rf"random on {ENV}: ([\d,]+)/{n} \(", stderr)]


@pytest.mark.parametrize("ray", [False, True])
def test_env_run_piped_prints_progress_lines(eager_progress: None, tmp_path: Path, request: pytest.FixtureRequest,
                                             ray: bool) -> None:
    extra = []
    if ray:
        request.getfixturevalue("ray_cluster")
        extra = ["--ray", "2", "--ray-min-work", "0"]
    out = tmp_path / "t.jsonl"
    res = runner.invoke(app, ["env", "run", ENV, "-p", "random", "-n", "40", "--seed", "3", "-o", str(out), *extra])
    assert res.exit_code == 0, res.output
    done = _lines(res.stderr, 40)
    assert done and done == sorted(done) and done[-1] == 40 and len(done) <= 11, res.stderr
    assert len(out.read_bytes().splitlines()) >= 40


def test_a_quick_piped_run_stays_quiet(tmp_path: Path) -> None:
    res = runner.invoke(app, ["env", "run", ENV, "-p", "random", "-n", "3", "-o", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
    assert _lines(res.stderr, 3) == []


def test_progress_lines_say_what_runs_and_how_far() -> None:
    import io

    from orchestrace.trainers.progress import progress_bar

    buf = io.StringIO()
    with progress_bar(1000, "fitted stop: collect always-continue paths", stream=buf, min_seconds=0) as advance:
        for _ in range(10):
            advance(100, always_continue=-0.25)
    lines = buf.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("fitted stop: collect always-continue paths: 1,000/1,000 (100 %)")
    assert all("always_continue=-0.25" in x for x in lines) and "s left" in lines[1]  # estimates from 20 % done
