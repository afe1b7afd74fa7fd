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
import warnings
from pathlib import Path

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


def _traces_of(path: Path) -> tuple[list, str]:
    """Traces of a file and the format they were decoded from, or of a columnar dataset folder ("dataset")."""
    from ..core.dataset import is_dataset, read_dataset
    from ..core.io import read_traces
    from ..errors import MissingExtraError, require

    if not is_dataset(path):
        got = read_traces(path)
        return got.traces, got.format
    try:
        require("pyarrow", extra="parquet")
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    return list(read_dataset(path)), "dataset"


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


def _refuse(where: str, exc: Exception) -> None:
    msg = str(exc)
    if msg.startswith(f"{where}: "):  # the decoder already names the file
        msg = msg[len(where) + 2:]
    error(f"{where}: {msg}", problems=getattr(exc, "problems", []))


def _write_back(path: Path, fmt: str, traces: list, results: list, n_decoded: int) -> None:
    """Rewrite ``path`` in the format it was decoded from, the measures merged into each trace's ``metrics``.

    Every trace the file held is written back, or nothing is: a count that does not match
    what was decoded refuses (exit 2) rather than shorten the file.
    """
    import msgspec

    from ..analysis.measures import reference_metrics
    from ..core.io import atomic_write, dumps

    if len(traces) != n_decoded or (fmt != "jsonl" and n_decoded != 1):
        raise fail(f"not written: {path} holds {n_decoded} trace(s) in {fmt} format and {len(traces)} were "
                   "measured; a rewrite would lose traces (use --json to keep the measures elsewhere)")
    new = []
    for tr, res in zip(traces, results, strict=True):
        merged = dict(tr.metrics)
        merged.update(reference_metrics(res))
        merged.update({k: v for k, v in res.metrics.items() if v is not None})
        dropped = sorted(k for k, v in merged.items() if not math.isfinite(v))
        if dropped:  # a trace's metrics must be finite
            note(f"{path}: trace {tr.trace_id!r}: not written (not finite): {', '.join(dropped)}", kind="warning")
            merged = {k: v for k, v in merged.items() if math.isfinite(v)}
        new.append(msgspec.structs.replace(tr, metrics=merged))
    if fmt == "jsonl":
        blob = b"".join(dumps(t, format="jsonl") for t in new)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blob = dumps(new[0], format=fmt)  # type: ignore[arg-type]
    atomic_write(path, blob)  # keeps the file's mode


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
    import msgspec

    from .._problems import force_verdict
    from ..analysis.measures import compute, select_measures
    from ..core._dag import Columns
    from ..core._validate import validate
    from ..core.dataset import is_dataset
    from ..errors import ConfigError, TraceError

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
    refused = 0
    io_error = False
    encoder = msgspec.json.Encoder()

    progress = None
    if len(files) >= _PROGRESS_MIN_FILES and err_console.is_terminal:
        from rich.progress import Progress
        progress = Progress(console=err_console, transient=True)
        progress.start()
        task = progress.add_task("measuring", total=len(files))
    try:
        for path in files:
            traces, results, file_ok = [], [], True
            fmt, n_decoded = "", 0
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    decoded, fmt = _traces_of(path)
                    n_decoded = len(decoded)
                    for tr in decoded:
                        columns = Columns(tr)  # the graph reuses the validator's columns
                        rep = validate(tr, columns=columns)
                        go_on, why = force_verdict(rep, tr.trace_id, force=force, verb="measure")
                        if not go_on:
                            error(f"{path}: {why}", problems=rep.errors)
                            refused += 1
                            file_ok = False
                            continue
                        if why:
                            note(f"{path}: {why}", kind="warning")
                        try:
                            # validated just above (with --force an invalid trace is measured as it is)
                            res = compute(tr, names, max_flows=max_flows, validate=False,
                                          columns=columns)
                        except TraceError as exc:
                            _refuse(f"{path} trace {tr.trace_id!r}", exc)
                            refused += 1
                            file_ok = False
                            continue
                        traces.append(tr)
                        results.append(res)
                        rows.append((str(path), res))
                        if as_json:
                            console.file.write(encoder.encode({"trace_id": res.trace_id, "metrics": res.metrics,
                                                               "assumptions": res.assumptions}).decode() + "\n")
                except TraceError as exc:
                    _refuse(str(path), exc)
                    refused += 1
                    io_error |= any(p.code.startswith("io.") for p in exc.problems)
                    file_ok = False
            keep(traces)  # a process that ends with os._exit does not free them (cli._app.keep)
            for w in caught:
                note(str(w.message), kind="warning")
            if write and results:
                if is_dataset(path):
                    err_console.print(f"[yellow]not written:[/] {escape(str(path))} (a columnar dataset is not "
                                      "rewritten in place; use --json)")
                elif file_ok:
                    try:
                        _write_back(path, fmt, traces, results, n_decoded)
                    except OSError as exc:
                        raise fail(f"cannot write {path}: {exc.strerror or exc}") from None
                    except TraceError as exc:
                        raise fail(f"cannot write {path}: {exc}", problems=exc.problems) from None
                else:
                    err_console.print(f"[yellow]not written:[/] {escape(str(path))} (a trace in it was refused)")
            if progress is not None:
                progress.advance(task)
    finally:
        if progress is not None:
            progress.stop()

    _report(rows, names, select, as_json)
    if write and rows:
        err_console.print(f"wrote measures into {len({r[0] for r in rows})} file(s)")
    raise typer.Exit(EXIT_USAGE if io_error else EXIT_INVALID if refused else EXIT_OK)


def _report(rows: list, names: list[str], select: list[str] | None, as_json: bool) -> None:
    import numpy as np

    if not as_json:
        if len(rows) == 1:
            _print_one(rows[0][1], names)
        elif rows:
            _print_many(rows, names, explicit=bool(select), np=np)


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


def _print_many(rows: list, names: list[str], *, explicit: bool, np) -> None:  # noqa: ANN001
    from rich.table import Table

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
    for name in names:
        vals = np.array([r.metrics[name] for _, r in rows if r.metrics[name] is not None], dtype=float)
        unknown = len(rows) - vals.size
        stats: tuple[float | None, float | None, float | None]
        if vals.size:
            stats = (float(vals.mean()), float(np.median(vals)), float(np.percentile(vals, 95)))
        else:
            stats = (None, None, None)
        summ.add_row(name, str(vals.size), str(unknown), *(_fmt(s) for s in stats))
    console.print(summ)
