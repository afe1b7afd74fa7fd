"""The shared typer application and CLI helpers (exit codes, error printing)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import typer
from rich.console import Console

from .._problems import Problem

app = typer.Typer(
    name="orchestrace",
    help="Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Exit codes used by every command.
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def fail(message: str, *, problems: Iterable[Problem] = (), code: int = EXIT_USAGE) -> typer.Exit:
    """Print an actionable error (and its located problems) to stderr; return an Exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    for p in problems:
        err_console.print(f"  {p}", markup=False, soft_wrap=True)
    return typer.Exit(code)


def is_tty() -> bool:
    return sys.stderr.isatty()


@app.callback()
def _root() -> None:
    """Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces."""
