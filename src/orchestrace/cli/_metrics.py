"""``orchestrace metrics``: MAS-native measures of one trace or of a whole dataset.

One trace → a table of every measure, its assumptions and its safety flows. Several
(files, folders, globs, JSONL files with many traces) → one row per trace and mean /
median / p95 per measure. ``--json`` → one ``{"trace_id", "metrics", "assumptions"}``
object per line. ``--write`` stores the measures in each trace's ``metrics`` field (the
reference keys plus the namespaced names) and rewrites the file in its own format.

Exit codes: 0 ok; 1 a trace was refused (invalid, cyclic, undecodable); 2 usage or I/O.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import typer

from ._app import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    PARTITION_TRACES_OPTION,
    RAY_ADDRESS_OPTION,
    RAY_MIN_WORK_OPTION,
    RECURSIVE_OPTION,
    app,
    console,
    err_console,
    error,
    escape,
    fail,
    keep,
    note,
    progress,
    ray_option,
)
from ._checks import FORCE_HELP

__all__ = ["metrics"]

#: Columns of the per-trace table for several traces when ``--select`` is not given.
DEFAULT_COLUMNS = {
    "e1/task_success": "E1", "e2/speedup": "speedup", "e2/efficiency": "effic",
    "e2/critical_steps": "crit.st", "e3/overhead_events": "ovhd", "e4/amplification": "err.amp",
    "waste/share": "waste", "safety/flows": "flows", "cost/tokens": "tokens", "cost/wall_clock_s": "wall_s",
}
_PROGRESS_MIN_FILES = 4


def _expand(paths: list[str], recursive: bool) -> list[Path]:
    """The files, folders, globs and dataset folders of the command line (:func:`orchestrace.core._paths.expand_paths`)."""
    from ..core._paths import expand_paths

    got = expand_paths(paths, recursive=recursive)
    for t in got.targets:
        if t.problem is not None:
            raise fail(f"{t.path}: {t.problem}", code=EXIT_USAGE)
    if got.skipped:
        note(f"{got.skipped} trace file(s) in subfolders not read; pass -r to read them")
    return [Path(t.path) for t in got.targets]


def _fmt(v: float | None, *, short: bool = False) -> str:
    if v is None:
        return "[dim]?[/]" if short else "[dim]unknown[/]"
    if not math.isfinite(v):
        return str(v)
    if short and abs(v) >= 1e4:
        return f"{v / 1e6:.3g}M" if abs(v) >= 1e6 else f"{v / 1e3:.3g}k"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v)}"
    return f"{v:.3g}" if short else f"{v:.4g}"


@app.command()
def metrics(
    paths: list[str] = typer.Argument(..., metavar="PATH...", help="Trace files, folders, globs or JSONL datasets."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per trace per line."),
    select: list[str] = typer.Option(None, "--select", "-s", metavar="NAME",
                                     help="Measures or families to compute (repeat or comma-separate: "
                                          "e2/speedup,e4 …). Default: all."),
    write: bool = typer.Option(False, "--write", help="Write the measures into each trace's metrics field, in place."),
    max_flows: int = typer.Option(10, "--flows", help="Safety flows to list for a single trace."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    recursive: bool = RECURSIVE_OPTION,
    ray: int = ray_option("Measure a dataset folder's partitions"),
    ray_address: str = RAY_ADDRESS_OPTION,
    parts_out: Path = typer.Option(None, "--out", "-o", help="Write the per-trace measures of a dataset folder as "
                                   "partitioned Parquet (DIR/part-00000.parquet …), with or without --ray."),
    partition_traces: int = PARTITION_TRACES_OPTION,
    ray_min_work: float = RAY_MIN_WORK_OPTION,
) -> None:
    """Measure traces: E1–E4, critical steps, wasted work, safety flows, spawn tree, cost."""
    from ..analysis.measures import select_measures
    from ..errors import ConfigError

    try:
        names = select_measures(select)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if ray is not None or ray_address is not None or parts_out is not None:
        if write:
            raise fail("--write rewrites files in place; it does not combine with --ray / --out (a dataset folder "
                       "is never rewritten): drop --write")
        from ._partitioned import measure_partitioned

        measure_partitioned("metrics", paths, names=names, force=force, max_flows=max_flows, as_json=as_json,
                            ray=ray, ray_address=ray_address, out=parts_out, partition_traces=partition_traces,
                            min_work_s=ray_min_work, report=lambda rows: _report(rows, names, select, as_json))
    files = _expand(paths, recursive)
    rows: list[tuple[str, object]] = []  # (label, MetricsResult)
    refused, io_error = 0, False
    with progress(len(files), "measuring", enabled=len(files) >= _PROGRESS_MIN_FILES) as advance:
        for path in files:
            got = _measure(path, names, force=force, max_flows=max_flows, as_json=as_json)
            rows.extend((str(path), res) for res in got.results)
            refused += got.refused
            io_error |= got.io_error
            if write and got.results:
                _write(got)
            advance()
    _report(rows, names, select, as_json)
    if write and rows:
        err_console.print(f"wrote measures into {len({r[0] for r in rows})} file(s)")
    raise typer.Exit(EXIT_USAGE if io_error else EXIT_INVALID if refused else EXIT_OK)


def _measure(path: Path, names: list[str], *, force: bool, max_flows: int, as_json: bool) -> Any:
    """:func:`orchestrace.analysis.batch.measure_file`, its messages printed and ``--json`` lines written."""
    import msgspec

    from ..analysis.batch import measure_file
    from ..errors import MissingExtraError

    try:
        got = measure_file(path, names, force=force, max_flows=max_flows)
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    keep(got.traces)  # a process that ends with os._exit does not free them (cli._app.keep)
    if as_json:
        encoder = msgspec.json.Encoder()
        for res in got.results:
            console.file.write(encoder.encode({"trace_id": res.trace_id, "metrics": res.metrics,
                                               "assumptions": res.assumptions}).decode() + "\n")
    for m in got.messages:
        if m.kind == "error":
            error(m.text, problems=m.problems)
        else:
            note(m.text, kind=m.kind)
    return got


def _write(got: Any) -> None:
    """``--write``: :func:`orchestrace.analysis.batch.write_measures`, or say why a file is not rewritten."""
    from ..analysis.batch import write_measures
    from ..errors import ConfigError, TraceError

    if got.format == "dataset":
        err_console.print(f"[yellow]not written:[/] {escape(str(got.path))} (a columnar dataset is not "
                          "rewritten in place; use --json)")
    elif not got.complete:
        err_console.print(f"[yellow]not written:[/] {escape(str(got.path))} (a trace in it was refused)")
    else:
        try:
            write_measures(got, warn=lambda s: note(s, kind="warning"))
        except ConfigError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            raise fail(f"cannot write {got.path}: {exc.strerror or exc}") from None
        except TraceError as exc:
            raise fail(f"cannot write {got.path}: {exc}", problems=exc.problems) from None


def _report(rows: list, names: list[str], select: list[str] | None, as_json: bool) -> None:
    if not as_json:
        if len(rows) == 1:
            _print_one(rows[0][1], names)
        elif rows:
            _print_many(rows, names, explicit=bool(select))


def _print_one(res, names: list[str]) -> None:  # noqa: ANN001
    from rich.table import Table

    table = Table(title=f"metrics · {escape(res.trace_id)}", title_justify="left")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name in names:
        table.add_row(name, _fmt(res.metrics[name]))
    console.print(table)
    for a in res.assumptions:
        console.print(f"[dim]assumption:[/] {escape(a)}", soft_wrap=True)
    for f in res.flows:
        console.print(f"[magenta]safety flow[/] ({escape(f.kind)}): {escape(' → '.join(f.path))}", soft_wrap=True)
    total = res.metrics.get("safety/flows")
    if isinstance(total, (int, float)) and total > len(res.flows):
        console.print(f"… and {int(total) - len(res.flows):,} more safety flow(s) ({int(total):,} in all; --flows N "
                      "lists more)", soft_wrap=True, markup=False)


def _print_many(rows: list, names: list[str], *, explicit: bool) -> None:
    from rich.table import Table

    from ..analysis.batch import summary_stats

    cols = names if explicit else [c for c in DEFAULT_COLUMNS if c in names]
    from rich import box

    per = Table(title=f"metrics · {len(rows)} traces", title_justify="left", box=box.SIMPLE_HEAD,
                padding=(0, 1), pad_edge=False)
    per.add_column("trace", overflow="fold", min_width=12)
    for c in cols:
        per.add_column(DEFAULT_COLUMNS.get(c, c) if not explicit else c, justify="right", no_wrap=True)
    for _, res in rows:
        per.add_row(escape(res.trace_id), *(_fmt(res.metrics[c], short=True) for c in cols))
    out = console
    if not console.is_terminal:  # piped: print the table whole rather than squeezed to 80 columns
        from rich.console import Console
        from rich.measure import Measurement

        need = Measurement.get(console, console.options.update_width(400), per).maximum
        out = Console(file=console.file, width=max(console.width, min(need, 400)), highlight=False)
    out.print(per)
    summ = Table(title="summary", title_justify="left")
    for h in ("measure", "n", "unknown", "mean", "median", "p95"):
        summ.add_column(h, justify="left" if h == "measure" else "right")
    for name, n, unknown, *stats in summary_stats([r for _, r in rows], names):
        summ.add_row(name, str(n), str(unknown), *(_fmt(s) for s in stats))
    console.print(summ)
