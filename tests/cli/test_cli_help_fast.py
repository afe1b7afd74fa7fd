"""The fast ``--help`` path (issue 43) prints typer's own help text, byte for byte, for every command.

``orchestrace CMD --help`` is answered by :mod:`orchestrace.cli._help` without click's parser
(no pydantic import, only the asked-for command built). Here its text is compared with what
typer's parser prints for the same line, for the root, every group and every command, with
``--help`` and ``-h``; lines that are not plain help requests are left to typer.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from orchestrace.cli import _help, app


def _paths() -> list[list[str]]:
    out: list[list[str]] = [[]]

    def walk(cmd: object, prefix: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return out


PATHS = _paths()


def test_every_command_is_covered() -> None:
    assert len(PATHS) > 30 and ["metrics"] in PATHS and ["env", "run"] in PATHS


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "(root)")
def test_help_text_is_typers(path: list[str], flag: str) -> None:
    runner = CliRunner()
    ref = runner.invoke(app, [*path, flag], prog_name="orchestrace")
    assert ref.exit_code == 0, ref.output
    with runner.isolation():  # the same terminal width as the invocation
        got = _help.help_text(app, [*path, flag], "orchestrace")
    assert got is not None
    assert got + "\n" == ref.stdout


@pytest.mark.parametrize("argv", [
    [], ["metrics"], ["metrics", "x.json", "--help"], ["nosuch", "--help"], ["--version", "--help"],
    ["env", "nosuch", "--help"], ["metrics", "--json", "--help"], ["validate", "run", "--help"],
])
def test_other_lines_are_left_to_typer(argv: list[str]) -> None:
    assert _help.help_text(app, argv, "orchestrace") is None


def test_the_process_prints_the_same_and_skips_pydantic() -> None:
    code = ("import sys; sys.argv = ['orchestrace', 'env', 'run', '--help']\n"
            "from orchestrace.cli import _help, app\n"
            "rc = _help.run(app, sys.argv[1:])\n"
            "print('pydantic' in sys.modules, rc, file=sys.stderr)\n")
    fast = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert fast.stderr.split() == ["False", "0"]
    typer_code = ("import sys; sys.argv = ['orchestrace', 'env', 'run', '--help']\n"
                  "from orchestrace.cli import app\n"
                  "app(prog_name='orchestrace')\n")
    ref = subprocess.run([sys.executable, "-c", typer_code], capture_output=True, text=True)
    assert ref.returncode == 0 and fast.stdout == ref.stdout
