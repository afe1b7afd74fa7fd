"""What a user meets first on the command line: --version, readable --help, readable inspect."""

from __future__ import annotations

import enum
import re
import subprocess
import sys
import typing
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import orchestrace
from orchestrace.cli import app

runner = CliRunner()


def _paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):  # a group (typer has its own copy of click)
            out += _paths(cmd, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


COMMANDS = _paths(typer.main.get_command(app))


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "orchestrace", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"orchestrace {orchestrace.__version__}\n"


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"", "validate", "inspect", "export", "corpus check", "env run", "llm run", "train"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "orchestrace")
def test_help_is_plain_and_unbroken(path: tuple[str, ...]) -> None:
    res = runner.invoke(app, [*path, "--help"], terminal_width=60, env={"COLUMNS": "60"})
    assert res.exit_code == 0, res.output
    text = res.output
    assert "<bool>" not in text  # flags take no value: no invitation to write --json true
    assert "╭" not in text
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    if cmd.callback is None:
        return
    for hint in typing.get_type_hints(cmd.callback).values():
        for t in (hint, *typing.get_args(hint)):  # Enum or Enum | None
            if isinstance(t, type) and issubclass(t, enum.Enum):
                metavar = "|".join(str(m.value) for m in t)
                assert metavar in text, f"choice list {metavar!r} broken or missing in\n{text}"

def test_inspect_prints_words_not_a_python_dict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "t.json"
    orchestrace.dump(orchestrace.synth(events=60, agents=3, seed=0), path)
    res = runner.invoke(app, ["inspect", str(path)], terminal_width=100)
    assert res.exit_code == 0, res.output
    assert not re.search(r"\{'|': (None|True|False)", res.output), res.output
    assert re.search(r"outcome\s*│\s*(succeeded|failed)", res.output)


def test_shared_options_are_declared_once() -> None:
    """--ray, --ray-address, --quiet and -r are declared in cli/_app.py only (issue 27: 6, 4 and 3 copies)."""
    from pathlib import Path

    cli = Path(__file__).resolve().parents[2] / "src" / "orchestrace" / "cli"
    for flag in ("--ray", "--ray-address", "--quiet", "--recursive"):
        where = [p.name for p in sorted(cli.glob("*.py")) for _ in re.finditer(rf'Option\([^\n]*"{flag}"', p.read_text())]
        assert where == ["_app.py"], (flag, where)


@pytest.mark.parametrize("command", ["validate", "metrics", "inspect", "reward", "credit"])
def test_every_analysing_command_has_json(command: str) -> None:
    r = CliRunner().invoke(app, [command, "--help"])
    assert r.exit_code == 0 and "--json" in r.output
