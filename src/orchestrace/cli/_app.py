"""The shared typer application and CLI helpers (exit codes, error printing)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from .._problems import Problem

app = typer.Typer(
    name="orchestrace",
    help="Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help (click's formatter): flags without a ``<bool>`` metavar, choice lists that
    # wrap between words, and no rich/markdown/pygments import just to print --help.
    rich_markup_mode=None,
)

#: Exit codes used by every command.
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class _LazyConsole:
    """A :class:`rich.console.Console` built on first use (rich costs start-up time that
    ``--help`` and ``--version`` do not need)."""

    def __init__(self, **kw: Any) -> None:
        self._kw = kw
        self._console: Console | None = None

    def _get(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kw)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __enter__(self) -> Console:  # ``with console:`` buffers output, as on a Console
        return self._get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._get().__exit__(*exc)


console: Console = _LazyConsole(highlight=False)  # type: ignore[assignment]
err_console: Console = _LazyConsole(stderr=True, highlight=False)  # type: ignore[assignment]


def escape(text: str) -> str:
    """:func:`rich.markup.escape`, imported on first use."""
    from rich.markup import escape as _escape

    return _escape(text)


def plain_help(typer_app: typer.Typer) -> None:
    """Give a command group, and the groups mounted on it, the plain help of :data:`app`."""
    typer_app.rich_markup_mode = None
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            plain_help(group.typer_instance)


def fail(message: str, *, problems: Iterable[Problem] = (), code: int = EXIT_USAGE) -> typer.Exit:
    """Print an actionable error (and its located problems) to stderr; return an Exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    for p in problems:
        err_console.print(f"  {p}", markup=False, soft_wrap=True)
    return typer.Exit(code)


def is_tty() -> bool:
    return sys.stderr.isatty()


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"orchestrace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Record, validate, measure, reward, credit and learn LLM multi-agent orchestration traces."""
