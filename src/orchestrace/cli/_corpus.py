"""``orchestrace corpus``: check the survey's paper pool and print its statistics.

Mounted by the CLI registry as ``app.add_typer(corpus_app, name="corpus")``. Exit codes:
0 ok, 1 the file has errors, 2 usage or I/O error (missing file, directory, too large).
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import typer

from ._app import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    JSON_OPTION,
    console,
    err_console,
    error,
    escape,
)

__all__ = ["corpus_app"]

corpus_app = typer.Typer(
    help="Check the survey's tagged paper pool (papers.csv, excluded.csv) and print its statistics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class StatsFormat(str, Enum):
    md = "md"
    json = "json"


class CheckFormat(str, Enum):
    text = "text"
    json = "json"


def _exit_code(problems: list) -> int:
    from ..papers import IO_CODES
    from ..vocab import Severity

    if any(p.code in IO_CODES for p in problems):
        return EXIT_USAGE
    return EXIT_INVALID if any(p.severity is Severity.ERROR for p in problems) else EXIT_OK


def _print_problems(problems: list, *, to_stderr: bool) -> None:
    out = err_console if to_stderr else console
    from rich.text import Text

    for p in problems:  # the Problem's own one-line form, markup off for the file's text
        colour = "red" if p.severity == "error" else "yellow"
        out.print(Text.assemble((p.severity.value, colour), " ", str(p).split(" ", 1)[1]), soft_wrap=True,
                  highlight=False)


@corpus_app.command("check")
def check_cmd(
    path: Path = typer.Argument(..., metavar="FILE.csv", help="papers.csv or excluded.csv (told apart by the header)."),
    as_json: bool = JSON_OPTION,
    fmt: CheckFormat = typer.Option(CheckFormat.text, "--format", "-f", help="text or json (json: also --json)."),
) -> None:
    """Report every problem of a pool CSV, located as papers.csv:row 12:reward_type."""
    from .._problems import ValidationReport
    from ..papers import check

    fmt = CheckFormat.json if as_json else fmt
    problems = check(path)
    code = _exit_code(problems)
    if fmt is CheckFormat.json:
        report = ValidationReport(source=str(path), problems=tuple(problems))
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_problems(problems, to_stderr=False)
        n_err = sum(p.severity == "error" for p in problems)
        n_warn = len(problems) - n_err
        verdict = "[green]ok[/]" if code == EXIT_OK else "[red]failed[/]"
        console.print(f"{escape(str(path))}: {verdict} — {n_err} error(s), {n_warn} warning(s)",
                      soft_wrap=True, highlight=False)
    raise typer.Exit(code)


@corpus_app.command("stats")
def stats_cmd(
    papers: Path = typer.Argument(..., metavar="PAPERS.csv", help="The retained pool, papers.csv."),
    excluded: Path | None = typer.Option(None, "--excluded", "-e", metavar="EXCLUDED.csv",
                                         help="excluded.csv, for the excluded and audited counts."),
    as_json: bool = JSON_OPTION,
    fmt: StatsFormat = typer.Option(StatsFormat.md, "--format", "-f", help="md (a statistics page) or json "
                                    "(json: also --json)."),
) -> None:
    """Print the pool's statistics: headline counts, counts per column, cross-tabs, sparse cells."""
    from ..papers import CorpusError, load_excluded, load_papers, stats, to_json, to_markdown

    fmt = StatsFormat.json if as_json else fmt
    try:
        pool = load_papers(papers)
        ex = None if excluded is None else load_excluded(excluded)
    except CorpusError as exc:
        errors = [p for p in exc.problems if p.severity == "error"]
        error(f"{len(errors)} error(s); no statistics printed")
        _print_problems(errors, to_stderr=True)
        raise typer.Exit(_exit_code(errors)) from None
    s = stats(pool, ex)
    typer.echo(to_json(s) if fmt is StatsFormat.json else to_markdown(s), nl=False)
