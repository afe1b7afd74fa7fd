"""``orchestrace report``: one self-contained HTML report of a trace, or a summary of many.

One trace → timeline, event graph / spawn tree, measures, safety flows (and credit with
``--credit UNIT[:METHOD]``). A folder, a JSONL dataset or several files → the summary page
(measure histograms, success-versus-cost Pareto plot of policies). ``--png`` also draws a
static timeline (matplotlib, extra ``plot``). ``--from FORMAT`` imports a foreign run
first (``claude-code``, ``codex``, ``otlp`` …; see ``orchestrace import``).

Exit codes: 0 written; 1 a trace is invalid (the validator's problems are printed);
2 usage, a missing extra, or the output cannot be written.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import typer

from ._app import EXIT_INVALID, EXIT_USAGE, app, console, error, escape, fail, note

__all__ = ["report"]

_MAX_PRINTED = 30


def _files(path: Path) -> list[Path]:
    """The trace files of a report: a file, or every .json/.jsonl below a folder (one report of the tree)."""
    from ..core._paths import expand_paths

    (target, *more) = expand_paths([path], recursive=True, datasets=False).targets
    if target.problem is not None:
        raise fail(f"{str(path)}: {target.problem}")
    return [Path(t.path) for t in (target, *more)]


def _print_problems(where: str, problems: list) -> None:
    error(f"{where}: not a valid trace", problems=problems, limit=_MAX_PRINTED)


def _load_native(files: list[Path]) -> list:
    """Validate every file (all problems of all files are printed), then decode them."""
    from ..core._validate import validate
    from ..core.load import read_any
    from ..errors import TraceError

    bad = 0
    for f in files:
        rep = validate(f)
        if not rep.valid:
            bad += 1
            _print_problems(str(f), list(rep.problems))
    if bad:
        raise typer.Exit(EXIT_INVALID)
    traces: list = []
    for f in files:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                traces.extend(read_any(f).traces)
            for w in caught:
                note(str(w.message))
        except TraceError as exc:  # pragma: no cover - validate() found nothing but decode failed
            _print_problems(str(f), list(exc.problems) or [str(exc)])
            raise typer.Exit(EXIT_INVALID) from None
    return traces


def _load_imported(fmt: str, files: list[Path]) -> list:
    from ..errors import ConfigError
    from ..importers import import_traces

    try:
        res = import_traces(fmt, files)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if not res.traces:
        _print_problems(", ".join(map(str, files)), list(res.report.errors) or ["nothing could be imported"])
        raise typer.Exit(EXIT_INVALID)
    return list(res.traces)


@app.command()
def report(
    path: Path = typer.Argument(..., help="Trace file (.json / .jsonl), a JSONL dataset, or a folder of them."),
    out: Path = typer.Option(..., "-o", "--out", help="Output HTML file (self-contained, opens offline)."),
    credit: str = typer.Option(None, "--credit", help="Credit per unit: UNIT[:METHOD], e.g. agent:shapley, turn:discounted."),
    png: Path = typer.Option(None, "--png", help="Also write a static timeline PNG (needs the 'plot' extra)."),
    from_: str = typer.Option(None, "--from", help="Import PATH from this format first (claude-code, codex, otlp, jaeger, …)."),
    graph_max: int = typer.Option(300, "--graph-max", help="Show the event DAG up to this many events; beyond, the spawn tree."),
    title: str = typer.Option(None, "--title", help="Page title (default: the trace id or the folder)."),
) -> None:
    """Write a self-contained HTML report: timeline, critical path, wasted work, measures (credit with --credit)."""
    from ..core.io import atomic_write
    from ..errors import ConfigError, MissingExtraError, TraceInvalidError
    from ..report import credit_payload, report_html, save_png

    t0 = time.perf_counter()
    files = _files(path)
    traces = _load_imported(from_, files) if from_ else _load_native(files)
    if not traces:
        raise fail(f"{str(path)}: no trace found")
    single = len(traces) == 1
    if (credit or png) and not single:
        raise fail(f"{str(path)} holds {len(traces)} traces; --credit and --png need exactly one trace")
    if png is not None:  # fail early (before the HTML work) when matplotlib is missing
        try:
            from ..errors import require

            require("matplotlib", extra="plot")
        except MissingExtraError as exc:
            raise fail(str(exc)) from None
    try:
        cred = credit_payload(traces[0], credit) if credit else None
        html = report_html(traces if not single else traces[0], credit=cred, max_graph_events=graph_max, title=title)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    except TraceInvalidError as exc:
        _print_problems(str(path), list(exc.problems) or [str(exc)])
        raise typer.Exit(EXIT_INVALID) from None
    try:
        atomic_write(out, html.encode("utf-8"))
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}", code=EXIT_USAGE) from None
    dt = time.perf_counter() - t0
    size = len(html.encode("utf-8")) / 1e6
    if single:
        tr = traces[0]
        console.print(f"wrote {escape(str(out))} ({size:.2f} MB, {dt:.2f} s): {len(tr.events):,} events, "
                      f"{len(tr.agents)} agents")
    else:
        console.print(f"wrote {escape(str(out))} ({size:.2f} MB, {dt:.2f} s): summary of {len(traces)} traces")
    if png is not None:
        try:
            save_png(traces[0], png)
        except MissingExtraError as exc:  # pragma: no cover - checked above
            raise fail(str(exc)) from None
        except OSError as exc:
            raise fail(f"cannot write {png}: {exc.strerror or exc}", code=EXIT_USAGE) from None
        console.print(f"wrote {escape(str(png))}")
