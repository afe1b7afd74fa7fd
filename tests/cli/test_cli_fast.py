"""The light argv reader (``orchestrace.cli._fast``) against typer's own parser.

Whenever the light reader answers, typer must parse the same command line to exactly the
same values; where it gives up, typer decides (and owns every error message).
"""

from __future__ import annotations

import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace.cli import _fast, app

GROUP = typer.main.get_command(app)
COMMANDS = {info.name or info.callback.__name__.replace("_", "-"): info.callback
            for info in app.registered_commands if info.callback is not None}
FAST = sorted(name for name, cb in COMMANDS.items() if _fast._spec(getattr(cb, "__wrapped__", cb)) is not None)


def _typer_params(name: str, argv: list[str]) -> dict[str, Any] | None:
    """typer's parsed values for ``name argv``, or None when typer refuses the line."""
    cmd = GROUP.commands[name]  # type: ignore[attr-defined]
    try:
        ctx = cmd.make_context(name, list(argv))
    except Exception:  # a usage error, --help's exit …
        return None
    return dict(ctx.params)


def _tokens(name: str) -> st.SearchStrategy[str]:
    cb = COMMANDS[name]
    spec = _fast._spec(getattr(cb, "__wrapped__", cb))
    assert spec is not None
    _, options, params = spec
    values = ["run.json", "a b.jsonl", "json", "text", "1", "-1", "0.5", "1e3", "x=y", "", "--", "-",
              "e2/speedup", "--unknown", "-z", "--help", "1_000", "nan", "-5.5"]
    for p in params:
        if isinstance(p.leaf, type) and issubclass(p.leaf, Enum):
            values += [str(m.value) for m in p.leaf] + [str(m.value).upper() for m in p.leaf]
    opts = list(options) + [f"{o}={v}" for o in options if o.startswith("--") for v in ("json", "1", "x")]
    return st.sampled_from(values + opts)


def test_the_hot_commands_take_the_light_path() -> None:
    assert {"validate", "metrics", "inspect"} <= set(FAST), FAST


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_light_reader_agrees_with_typer(name: str, data: st.DataObject) -> None:
    argv = data.draw(st.lists(_tokens(name), max_size=7))
    cb = COMMANDS[name]
    fast = _fast.parse(getattr(cb, "__wrapped__", cb), argv)
    if fast is None:
        return  # typer decides
    assert _typer_params(name, argv) == fast, argv


def test_examples_agree_and_unusual_lines_go_to_typer() -> None:
    val = COMMANDS["validate"].__wrapped__  # type: ignore[attr-defined]
    got = _fast.parse(val, ["a.json", "-f", "json", "--strict", "b.json"])
    assert got == _typer_params("validate", ["a.json", "-f", "json", "--strict", "b.json"])
    assert got is not None and got["paths"] == ["a.json", "b.json"] and got["strict"] is True
    for argv in (["--help"], [], ["-rf", "json", "a"], ["--format", "xml", "a"], ["a", "--no-such"]):
        assert _fast.parse(val, argv) is None, argv


def test_process_exit_codes_and_output_are_typer_s(tmp_path: Path) -> None:
    """Through ``python -m orchestrace``: the light path and typer end alike."""
    import orchestrace as ot

    good = tmp_path / "ok.json"
    ot.dump(ot.synth(events=50, agents=2, seed=1), good)
    bad = tmp_path / "bad.json"
    bad.write_text('{"trace_id": "t", "task_id": "k", "events": [{"id": "e1", "t": -1, "type": "spawn", "agent": "a"}]}')

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "orchestrace", *argv], capture_output=True, text=True)

    light = run("validate", str(good), "--format", "json")
    via_typer = run("validate", "--format=json", "--", str(good))  # "--" after an option: still light
    assert light.returncode == via_typer.returncode == 0 and light.stdout == via_typer.stdout
    assert run("validate", str(bad)).returncode == 1
    assert run("validate", str(tmp_path / "missing.json")).returncode == 2
    usage = run("validate", "--format", "xml", str(good))  # typer's own usage error
    assert usage.returncode == 2 and "Invalid value" in usage.stderr


BAD = sorted(p for d in ("bad", "bad_cli") for p in (Path(__file__).parents[1] / "data" / d).glob("*.json*"))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_bad_corpus_reports_are_the_same_through_both_paths(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every file of the bad-input corpus: the light path prints what typer's path prints."""
    from typer.testing import CliRunner

    assert len(BAD) > 30
    runner = CliRunner()
    for path in BAD:
        argv = ["validate", str(path), "--format", fmt]
        code = _fast.run(app, argv)
        out = capsys.readouterr().out
        res = runner.invoke(app, argv)
        assert (code, out) == (res.exit_code, res.stdout), path


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_plain_valid_line_is_what_rich_prints(source: str) -> None:
    import io

    from rich.console import Console
    from rich.markup import escape

    from orchestrace.cli._core import _plain_stdout

    line = f"✓ {source}  (3 events, 2 edges)"
    if not _plain_stdout(line):
        return  # rich prints it
    buf = io.StringIO()
    Console(file=buf, highlight=False, force_terminal=False, width=40).print(
        f"[green]✓[/] {escape(source)}  (3 events, 2 edges)", soft_wrap=True)
    assert buf.getvalue() == line + "\n"


@pytest.mark.parametrize("command", ["validate", "metrics"])
def test_a_closed_stdout_ends_quietly_with_exit_1(command: str, tmp_path: Path) -> None:
    """``orchestrace validate run.json | head -0``: exit 1 and no message, as rich and click end it."""
    import os

    import orchestrace as ot

    good = tmp_path / "ok.json"
    ot.dump(ot.synth(events=50, agents=2, seed=1), good)
    for unbuffered in ("1", ""):
        r, w = os.pipe()
        os.close(r)  # nobody reads: every write to stdout fails with EPIPE
        try:
            env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
            res = subprocess.run([sys.executable, "-m", "orchestrace", command, str(good)], stdout=w,
                                 stderr=subprocess.PIPE, text=True, env=env)
        finally:
            os.close(w)
        assert res.returncode == 1 and "error" not in res.stderr, (unbuffered, res.stderr)
