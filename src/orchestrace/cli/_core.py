"""Core commands: validate, convert, inspect, schema, synth.

Exit codes (every command): 0 ok · 1 the input is invalid / has problems · 2 usage or I/O
error (missing file, directory, unreadable, unwritable). No command prints a traceback:
unexpected failures are reported as one ``internal error`` line (exit 2).

``validate`` takes files and quoted globs (``'runs/**/*.jsonl'``, expanded here, ``**``
recursive). A directory is an ``io.is-directory`` problem (exit 2) unless ``-r`` is given,
which expands it to the ``*.json`` / ``*.jsonl`` files below it.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import OrchestraceError
from ._app import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    JSON_OPTION,
    PARTITION_TRACES_OPTION,
    RAY_ADDRESS_OPTION,
    RAY_MIN_WORK_OPTION,
    RECURSIVE_OPTION,
    app,
    console,
    error,
    escape,
    fail,
    note,
    progress,
    ray_option,
    stdout_to_devnull,
)
from ._checks import FORCE_HELP

if TYPE_CHECKING:
    from .._problems import ValidationReport
    from ..core.trace import Trace


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class ConvertTo(str, Enum):
    native = "native"
    reference = "reference"
    jsonl = "jsonl"
    parquet = "parquet"


@contextlib.contextmanager
def _no_traceback() -> Iterator[None]:
    """Turn any unexpected exception into one line on stderr and exit 2."""
    try:
        yield
    except (typer.Exit, typer.Abort, KeyboardInterrupt, SystemExit, OrchestraceError):
        raise  # an OrchestraceError is printed by the command guard (cli._app.guard)
    except Exception as exc:  # the CLI's contract: never a traceback
        error(f"internal error: {type(exc).__name__}: {str(exc)[:500]} — this is a bug in orchestrace; "
              "please report it with the command and the input")
        raise typer.Exit(EXIT_USAGE) from None


# ----------------------------------------------------------------------------- validate
@app.command()
def validate(
    paths: list[str] = typer.Argument(..., help="Trace files (.json, .jsonl) or quoted globs ('runs/*.jsonl')."),
    as_json: bool = JSON_OPTION,
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f",
                                        help="Deprecated: -f json is --json."),
    strict: bool = typer.Option(False, "--strict", help="Warnings count as errors (exit 1)."),
    recursive: bool = RECURSIVE_OPTION,
    ray: int = ray_option("Validate a dataset folder's traces (one report per trace) by partitions"),
    ray_address: str = RAY_ADDRESS_OPTION,
    parts_out: Path = typer.Option(None, "--out", "-o", help="Write per-trace error/warning counts and codes of a "
                                   "dataset folder as partitioned Parquet (DIR/part-00000.parquet …)."),
    partition_traces: int = PARTITION_TRACES_OPTION,
    ray_min_work: float = RAY_MIN_WORK_OPTION,
) -> None:
    """Check traces: structure (types, enums, required fields) and semantics (ids, DAG, time, spawns, stop).

    Exit 0 when every file is valid (warnings allowed unless --strict), 1 when any file
    has an error, 2 when a file cannot be read (or no file matches). With --ray or --out the
    paths are dataset folders and every trace gets its own report.
    """
    from .._problems import Problem, ValidationReport
    from ..core._validate import validate_keeping
    from ..vocab import Severity
    from ._app import QUICK_EXIT, keep

    hold = keep if QUICK_EXIT else None  # a process ending in os._exit need not free the traces
    if format is OutputFormat.json:
        note("-f json is deprecated; use --json", kind="warning")
    format = OutputFormat.json if as_json else format

    if ray is not None or ray_address is not None or parts_out is not None:
        from ._partitioned import measure_partitioned

        counts = [0, 0]

        def show(_path: Path, o: Any) -> int:
            counts[0] += 1
            counts[1] += o.status == "ok"
            _print_report(o.result, format, o.status == "ok")
            return EXIT_OK if o.status == "ok" else EXIT_INVALID

        def summary(_rows: list[Any]) -> None:
            if format is OutputFormat.text:
                console.print(f"{counts[0]} traces: {counts[1]} valid, {counts[0] - counts[1]} with errors")

        measure_partitioned("validate", paths, strict=strict, ray=ray, ray_address=ray_address, out=parts_out,
                            partition_traces=partition_traces, min_work_s=ray_min_work, report=summary,
                            on_trace=show)

    with _no_traceback():
        from ..core._paths import expand_paths

        got = expand_paths(paths, recursive=recursive, datasets=False)
        targets = [(t.path, t.problem) for t in got.targets]
        if got.skipped:
            note(f"{got.skipped} trace file(s) in subfolders not read; pass -r to read them")
        io_error = invalid = False
        n_valid = 0
        with progress(len(targets), "validating", enabled=len(targets) > 3) as advance:
            for path, why in targets:
                if why is not None:
                    report = ValidationReport(source=path, problems=(Problem(
                        code="io.is-directory" if Path(path).is_dir() else "io.not-found",
                        severity=Severity.ERROR, path=path, message=why,
                        hint="check the path or the glob (quote it so the shell does not expand it)"),))
                else:
                    report = validate_keeping(path, strict=strict, keep=hold)
                io_error |= any(p.code.startswith("io.") for p in report.problems)
                ok = report.passes(strict=strict)
                invalid |= not ok
                n_valid += ok
                _print_report(report, format, ok)
                advance()
        if format is OutputFormat.text and len(targets) > 1:
            console.print(f"{len(targets)} files: {n_valid} valid, {len(targets) - n_valid} with errors")
    raise typer.Exit(EXIT_USAGE if io_error else EXIT_INVALID if invalid else EXIT_OK)


def _print_report(report: ValidationReport, format: OutputFormat, ok: bool) -> None:
    if format is OutputFormat.json:
        d = report.to_dict()
        d["valid"] = ok
        sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    n_err, n_warn = len(report.errors), len(report.warnings)
    if not report.problems:
        line = f"✓ {report.source}  ({report.n_events} events, {report.n_edges} edges)"
        if _plain_stdout(line):  # what rich would print, without importing rich (~30 ms)
            try:
                sys.stdout.write(line + "\n")
            except BrokenPipeError:  # the reader went away: end as rich does (exit 1, no message)
                stdout_to_devnull()
                raise SystemExit(1) from None
            return
        console.print(f"[green]✓[/] {escape(str(report.source))}  ({report.n_events} events, {report.n_edges} edges)",
                      soft_wrap=True)
        return
    path = escape(str(report.source))
    mark = "[green]✓[/]" if ok else "[red]✗[/]"
    console.print(f"{mark} {path}: {n_err} error(s), {n_warn} warning(s)"
                  f"  ({report.n_events} events, {report.n_edges} edges)", soft_wrap=True)
    for p in report.problems:
        color = "red" if p.severity.value == "error" else "yellow"
        console.print(f"  [{color}]{p.severity.value:7}[/] [bold]{escape(p.code)}[/] at {escape(p.path)}: "
                      f"{escape(p.message)}", soft_wrap=True)
        if p.hint:
            console.print(f"           hint: {escape(p.hint)}", soft_wrap=True)


def _plain_stdout(text: str) -> bool:
    """True when rich would print ``text`` (no markup in it) to stdout unchanged: stdout is
    not a terminal by rich's rules (no colour codes), speaks UTF-8, and the text holds
    nothing rich rewrites (``:emoji:`` codes, ``[`` markup, backslashes, control characters)."""
    import os

    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE", "") not in ("", "0"):
        return False
    if "ipykernel" in sys.modules or not text.isprintable() or any(c in text for c in ":[\\"):
        return False
    try:
        return not sys.stdout.isatty() and (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
    except (AttributeError, ValueError):
        return False


# ----------------------------------------------------------------------------- loading helpers
def _load_all(path: Path, *, force: bool = False, verb: str = "analyse") -> list[Trace]:
    """All traces of a file or dataset; exit 1 when one is not a trace or does not validate (unless ``force``)."""
    from ._checks import load_traces

    return load_traces(path, force=force, verb=verb)


def _notes(caught: list[warnings.WarningMessage]) -> None:
    for w in caught:
        note(str(w.message))


# ----------------------------------------------------------------------------- convert
@app.command()
def convert(
    src: Path = typer.Argument(..., help="Input trace (native or reference JSON, JSONL stream, or a "
                               "columnar dataset folder)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output file (a folder for --to parquet)."),
    to: ConvertTo | None = typer.Option(None, "--to", help="native | reference | jsonl | parquet (default: from "
                                        "the output suffix, .jsonl → jsonl, else native)."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Convert between native JSON, the survey's reference JSON, the JSONL stream and the columnar dataset.

    --to reference writes a file that passes the reference JSON Schema; native fields
    without a reference slot are dropped and named in a note. --to parquet writes a
    dataset folder (traces/events/edges.parquet, needs orchestrace[parquet]) holding every
    trace of the input.
    """
    from ..core.io import atomic_write, dumps, to_reference

    with _no_traceback():
        fmt = to.value if to is not None else ("jsonl" if out.suffix == ".jsonl" else "native")
        traces = _load_all(src, force=force, verb="convert")
        if fmt == "parquet":
            _write_parquet(traces, out)
            return
        if len(traces) > 1 and fmt != "jsonl":
            raise fail(f"{str(src)} holds {len(traces)} traces; a {fmt} JSON file holds one (use --to jsonl)",
                       code=EXIT_USAGE) from None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if fmt == "reference":
                data = json.dumps(to_reference(traces[0]), ensure_ascii=False, allow_nan=False).encode()
            else:
                data = b"".join(dumps(tr, format=fmt) for tr in traces)  # type: ignore[arg-type]
        _notes(caught)
        try:
            atomic_write(out, data)
        except OSError as exc:
            raise fail(f"cannot write {str(out)}: {str(exc.strerror or exc)}") from None
        n_ev = sum(len(tr.events) for tr in traces)
        console.print(f"wrote {escape(str(out))} ({fmt}): {len(traces)} trace(s), {n_ev} events")


def _write_parquet(traces: list[Trace], out: Path) -> None:
    """``convert --to parquet``: write the traces as a dataset folder (exit 2 on I/O or a missing extra)."""
    from ..core.dataset import write_dataset
    from ..errors import MissingExtraError, TraceError

    if out.exists() and not out.is_dir():
        raise fail(f"{str(out)} is a file; --to parquet writes a folder (traces/events/edges.parquet)")
    try:
        write_dataset(traces, out)
    except MissingExtraError as exc:
        raise fail(str(exc)) from None
    except TraceError as exc:
        raise fail(str(exc), code=EXIT_INVALID) from None
    except OSError as exc:
        raise fail(f"cannot write {str(out)}: {str(exc.strerror or exc)}") from None
    n_ev = sum(len(tr.events) for tr in traces)
    console.print(f"wrote {escape(str(out))} (parquet dataset): {len(traces)} trace(s), {n_ev} events")


# ----------------------------------------------------------------------------- inspect
@app.command()
def inspect(
    path: Path = typer.Argument(..., help="Trace file (.json or .jsonl)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON instead of tables."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Summarise a trace: agents, spawn tree, events by type, time span, tokens, tool calls, rewards."""
    from ..analysis.summary import summarize

    with _no_traceback():
        traces = _load_all(path, force=force, verb="inspect")
        for k, tr in enumerate(traces):
            info = summarize(tr)
            if as_json:
                sys.stdout.write(json.dumps(info, ensure_ascii=False, default=str) + "\n")
            else:
                if len(traces) > 1:
                    console.rule(f"trace {k + 1} of {len(traces)}")
                _print_summary(tr, info)


def _fmt(x: Any) -> str:
    if x is None:
        return "—"
    return f"{x:.6g}" if isinstance(x, float) else escape(str(x))


def _print_summary(tr: Trace, s: dict[str, Any]) -> None:
    """``inspect``'s tables: the overview, events and edges by type, then the agents and the rest."""
    _print_overview(s)
    _print_details(s)


def _print_overview(s: dict[str, Any]) -> None:
    from rich.table import Table

    fmt = _fmt
    over = Table(title=f"trace {escape(s['trace_id'])}", show_header=False)
    span = None if s["t_start"] is None else s["t_end"] - s["t_start"]
    for k, v in [("task", s["task_id"]), ("system", s["system"]), ("topology", s["topology"]),
                 ("schema_version", s["schema_version"]), ("events", s["events"]), ("edges", s["edges"]),
                 ("agents", s["agents"]), ("time span", f"{fmt(s['t_start'])} → {fmt(s['t_end'])}  ({fmt(span)} s)"),
                 ("tokens in / out", f"{s['tokens_in']} / {s['tokens_out']}"), ("cost", s["cost"]),
                 ("tool calls", sum(s["tool_calls"].values())), ("errors flagged", s["errors_flagged"]),
                 ("untrusted events", s["untrusted"]), ("stop decision", s["stop"]),
                 ("outcome", _outcome_text(s["outcome"]))]:
        over.add_row(k, fmt(v))
    console.print(over)

    by_type = Table(title="events by type")
    by_type.add_column("type")
    by_type.add_column("events", justify="right")
    by_type.add_column("share", justify="right")
    for k, v in s["events_by_type"].items():
        by_type.add_row(k, str(v), f"{v / max(1, s['events']):.1%}")
    edges = Table(title="edges by type")
    edges.add_column("type")
    edges.add_column("edges", justify="right")
    for k, v in s["edges_by_type"].items():
        edges.add_row(k, str(v))
    console.print(by_type, edges)



def _print_details(s: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.tree import Tree

    fmt = _fmt
    agents = Table(title="agents")
    for col, just in (("agent", "left"), ("roles", "left"), ("events", "right"), ("tokens", "right"),
                      ("first t", "right"), ("last t", "right")):
        agents.add_column(col, justify=just)  # type: ignore[arg-type]
    rows = sorted(s["per_agent"].items(), key=lambda kv: -kv[1]["events"])
    for a, v in rows[:30]:
        agents.add_row(escape(a), escape(", ".join(v["roles"])), str(v["events"]), str(v["tokens"]),
                       fmt(v["first_t"]), fmt(v["last_t"]))
    if len(rows) > 30:
        agents.add_row(f"… {len(rows) - 30} more", "", "", "", "", "")
    console.print(agents)

    console.print(_spawn_tree(s["spawns"], Tree))
    if s["tool_calls"]:
        tools = Table(title="tool calls")
        tools.add_column("tool")
        tools.add_column("calls", justify="right")
        tools.add_column("flagged errors", justify="right")
        items = list(s["tool_calls"].items())
        for k, v in items[:15]:
            tools.add_row(escape(k), str(v), str(s["tool_errors"].get(k, 0)))
        if len(items) > 15:
            tools.add_row(f"… {len(items) - 15} more", "", "")
        console.print(tools)
    money = Table(title="rewards, costs, metrics")
    money.add_column("kind")
    money.add_column("name")
    money.add_column("value", justify="right")
    for kind in ("rewards", "costs", "metrics"):
        for k, v in s[kind].items():
            money.add_row(kind, escape(k), fmt(v))
    if s["signals"]:
        money.add_row("signals", "(per-unit)", str(s["signals"]))
    console.print(money)


def _outcome_text(outcome: dict[str, Any] | None) -> str | None:
    """``succeeded``, ``failed, score 0.25``, ``score 0.8`` … (None when the trace has none).

    >>> _outcome_text({"success": False, "score": None}), _outcome_text({"success": None, "score": 0.8})
    ('failed', 'score 0.8')
    """
    if outcome is None:
        return None
    parts = [] if outcome["success"] is None else ["succeeded" if outcome["success"] else "failed"]
    if outcome["score"] is not None:
        parts.append(f"score {outcome['score']:.6g}")
    return ", ".join(parts) or "recorded, without success or score"


def _spawn_tree(spawns: list[tuple[str, str]], tree_cls: Any, fanout: int = 20) -> Any:
    children: dict[str, list[str]] = {}
    spawned = set()
    for parent, child in spawns:
        if child not in spawned:
            children.setdefault(parent, []).append(child)
            spawned.add(child)
    roots = [p for p in children if p not in spawned] or list(children)[:1]
    tree = tree_cls("spawn tree" if spawns else "spawn tree (no spawns)")
    seen: set[str] = set()

    def grow(node: Any, name: str, depth: int) -> None:
        kids = children.get(name, [])
        for c in kids[:fanout]:
            if c in seen or depth > 50:
                continue
            seen.add(c)
            grow(node.add(escape(c)), c, depth + 1)
        if len(kids) > fanout:
            node.add(f"… {len(kids) - fanout} more")

    for r in roots:
        seen.add(r)
        grow(tree.add(f"[bold]{escape(r)}[/]"), r, 0)
    return tree


# ----------------------------------------------------------------------------- schema
@app.command()
def schema(
    reference: bool = typer.Option(False, "--reference", help="Print the survey's reference schema instead."),
) -> None:
    """Print the JSON Schema of the native trace format (generated from the code), or the reference one."""
    from ..core.schema import native_schema, reference_schema

    with _no_traceback():
        sys.stdout.write(json.dumps(reference_schema() if reference else native_schema(), indent=2) + "\n")


# ----------------------------------------------------------------------------- synth
@app.command()
def synth(
    out: Path = typer.Option(..., "-o", "--out", help="Output file (.json native, .jsonl stream)."),
    events: int = typer.Option(1000, "--events", "-n", help="Number of events (exact)."),
    agents: int = typer.Option(10, "--agents", "-k", help="Number of sub-agents the orchestrator spawns."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same trace)."),
    success: float = typer.Option(0.7, "--success", help="Probability that the run succeeds (its outcome and team reward)."),
    p_error: float = typer.Option(0.01, "--p-error", help="Per-step probability of an error root in a worker."),
    propagate: float = typer.Option(0.5, "--propagate", help="Probability that an error spreads to the worker's next step."),
    runs: int = typer.Option(1, "--runs", help="Write this many runs of one task (seeds SEED, SEED+1, …) to a .jsonl: a group for --baseline group."),
) -> None:
    """Write a realistic synthetic trace (orchestrator, K workers, tools, messages, stop; ~70 % succeed)."""
    from ..core._synth import synth as make
    from ..core.io import dump, dumps
    from ..errors import ConfigError

    with _no_traceback():
        if runs < 1:
            raise fail(f"--runs must be ≥ 1, got {runs}")
        if runs > 1 and out.suffix != ".jsonl":
            raise fail(f"{runs} runs need a .jsonl output (-o {escape(str(out.with_suffix('.jsonl')))})")
        try:
            trs = [make(events=events, agents=agents, seed=seed + k, success=success, p_error=p_error,
                        propagate=propagate, task_id=f"synth-task-{seed}" if runs > 1 else None) for k in range(runs)]
        except ConfigError as exc:
            raise fail(str(exc)) from None
        tr = trs[0]
        try:
            if runs > 1:
                out.write_bytes(b"".join(dumps(t, format="jsonl") for t in trs))
            else:
                dump(tr, out)
        except OSError as exc:
            raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
        if runs > 1:
            ok = sum(bool(t.outcome and t.outcome.success) for t in trs)
            console.print(f"wrote {escape(str(out))}: {runs} runs of task synth-task-{seed}, {ok} succeeded")
            return
        verdict = "succeeded" if tr.outcome is not None and tr.outcome.success else "failed"
        console.print(f"wrote {escape(str(out))}: {len(tr.events)} events, {len(tr.edges)} edges, {len(tr.agents)} agents; "
                      f"the run {verdict}")
