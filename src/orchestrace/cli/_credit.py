"""``orchestrace reward`` and ``orchestrace credit``: rewards R1–R8 and credit per unit.

``reward PATH --spec spec.toml [--json]`` evaluates a reward spec on every trace in PATH;
``credit PATH --unit UNIT --method METHOD [--spec spec.toml] [--baseline B] [--samples N]
[--json]`` credits each unit. Without ``--spec`` the trace's own signals (else its
outcome, R1) are credited. ``--baseline VALUE`` credits the advantage ``R − VALUE``;
``--baseline group`` uses, for each trace, the mean reward of the traces in PATH with the
same ``task_id`` (a GRPO group): a failed run then gets negative credit — blame — placed on
the causes of its failure. ``--json`` prints one JSON object per line: per signal for
``reward``, per unit (``unit``, ``credit``, ``stderr`` where sampled) for ``credit``; notes
go to stderr.

Exit codes: 0 ok; 1 a trace is invalid or undecodable; 2 usage, spec or I/O error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .._limits import printable
from ._app import (
    DATASET_OUT_OPTION,
    DATASET_RAY_OPTION,
    EXIT_INVALID,
    EXIT_USAGE,
    PARTITION_TRACES_OPTION,
    RAY_ADDRESS_OPTION,
    RAY_MIN_WORK_OPTION,
    app,
    console,
    fail,
    note,
)
from ._app import (
    escape as _markup_escape,
)
from ._checks import FORCE_HELP

__all__ = ["credit", "reward"]


def escape(text: str) -> str:
    """A name from the trace for a rich table: markup escaped, control characters written as escapes."""
    return _markup_escape(printable(text))


_UNITS = "token, tool_call, message, turn, agent, role, orchestrator, team"
_METHODS = "broadcast, discounted, causal, leave-one-out, shapley, owen, c3, coma, blame"


def _traces(path: Path, force: bool, verb: str) -> list[Any]:
    from ._checks import load_traces

    if path.is_dir():
        raise fail(f"{path}: is a folder; give one .json or .jsonl trace file", code=EXIT_USAGE)
    return load_traces(path, force=force, verb=verb)


def _spec(spec: Path | None) -> Any:
    from ..errors import ConfigError
    from ..rewards import load_spec

    if spec is None:
        return None
    try:
        return load_spec(spec)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None


def baseline_option(raw: str | None) -> float | str | None:
    """``--baseline`` read by :func:`orchestrace.credit.signals.parse_baseline` (exit 2 when it is neither)."""
    from ..credit.signals import parse_baseline
    from ..errors import ConfigError

    try:
        return parse_baseline(raw)
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None


def signals_of(traces: list[Any], spec: Any, truth: str | None, baseline: float | str | None,
               path: Path) -> tuple[list[Any], list[float | None]]:
    """:func:`orchestrace.credit.signals.signals_and_baselines`, its errors located in ``path`` (exit 2 / 1)."""
    from ..credit.signals import signals_and_baselines
    from ..errors import ConfigError, TraceError

    try:
        sigs, bases, alone = signals_and_baselines(traces, spec, truth, baseline,
                                                   lambda t: f"{path} (trace {t.trace_id!r})")
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None
    except TraceError as exc:
        raise fail(str(exc), problems=exc.problems[:20], code=EXIT_INVALID) from None
    if alone:
        note(alone)
    return sigs, bases


def _json_line(obj: dict[str, Any]) -> None:
    import msgspec

    typer.echo(msgspec.json.encode(obj).decode())


@app.command()
def reward(
    path: Path = typer.Argument(..., help="Trace file (.json document or .jsonl stream of traces)."),
    spec: Path = typer.Option(None, "--spec", help="TOML reward spec (default: R1 shared outcome)."),
    truth: str = typer.Option(None, "--truth", help="Ground truth: a number/true/false verdict or the answer string."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per signal per line."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    ray: int = DATASET_RAY_OPTION,
    ray_address: str = RAY_ADDRESS_OPTION,
    parts_out: Path = DATASET_OUT_OPTION,
    partition_traces: int = PARTITION_TRACES_OPTION,
    ray_min_work: float = RAY_MIN_WORK_OPTION,
) -> None:
    """Evaluate reward functions (R1–R8) on each trace: one value per unit."""
    from ..credit.signals import parse_truth
    from ..errors import ConfigError, TraceError
    from ..rewards import RewardSpec, Term, signals_for

    rs = _spec(spec) or RewardSpec(terms=(Term(fn="shared_outcome"),), name="default (R1 shared_outcome)")
    if ray is not None or ray_address is not None or parts_out is not None:
        from ._partitioned import measure_partitioned

        def show(_p: Path, o: Any) -> int:
            code = _outcome_error(path, o)
            if code is None:
                _print_signals(o.trace_id, o.result, as_json=as_json, multi=True, title=rs.name or str(spec))
            return code or 0

        measure_partitioned("reward", [str(path)], force=force, ray=ray, ray_address=ray_address, out=parts_out,
                            partition_traces=partition_traces, min_work_s=ray_min_work, report=lambda rows: None,
                            on_trace=show, job_options={"spec": rs, "truth": parse_truth(truth)})
    traces = _traces(path, force, "reward")
    multi = len(traces) > 1
    for tr in traces:
        try:
            sigs = signals_for(tr, spec=rs, truth=parse_truth(truth), printing=True)
        except ConfigError as exc:
            raise fail(f"{path} (trace {tr.trace_id!r}): {exc}", code=EXIT_USAGE) from None
        except TraceError as exc:
            raise fail(f"{path} (trace {tr.trace_id!r}): {exc}", problems=exc.problems, code=EXIT_INVALID) from None
        _print_signals(tr.trace_id, sigs, as_json=as_json, multi=multi, title=rs.name or str(spec))


def _outcome_error(path: Path, o: Any) -> int | None:
    """Print a partitioned outcome's error as the one-process command words it; its exit code."""
    from ._app import error

    where = f"{path} (trace {o.trace_id!r})"
    if o.status == "refused":
        error(f"{path}: {o.message}", problems=o.problems)
        return EXIT_INVALID
    if o.status == "usage":
        error(f"{where}: {o.message}")
        return EXIT_USAGE
    if o.status == "error":
        error(f"{where}: {o.message}", problems=o.problems[:20])
        return EXIT_INVALID
    return None


def _print_signals(trace_id: str, sigs: Any, *, as_json: bool, multi: bool, title: str) -> None:
    from ..rewards import total

    if as_json:
        for s in sigs:
            rec = {"unit": s.unit.value, "id": s.id, "value": s.value,
                   "family": s.family.code if s.family is not None else None, "name": s.name}
            if multi:
                rec = {"trace_id": trace_id, **rec}
            _json_line(rec)
        return
    from rich.table import Table

    table = Table(title=f"{escape(trace_id)} — spec {escape(title)}", title_justify="left")
    for col, just in (("unit", "left"), ("id", "left"), ("family", "left"), ("name", "left"), ("value", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for s in sigs:
        fam = f"{s.family.code} {s.family.value}" if s.family is not None else "mixed"
        table.add_row(s.unit.value, escape(s.id), fam, escape(s.name or ""), f"{s.value:.6g}")
    console.print(table)
    console.print(f"total reward: {total(sigs):.6g} over {len(sigs)} signal(s)")


@app.command()
def credit(
    path: Path = typer.Argument(..., help="Trace file (.json document or .jsonl stream of traces)."),
    unit: str = typer.Option(None, "--unit", "-u", help=f"Credit unit: {_UNITS}."),
    method: str = typer.Option(None, "--method", "-m", help=f"Method: {_METHODS} (default broadcast)."),
    spec: Path = typer.Option(None, "--spec", help="TOML reward spec: its rewards are credited; its [credit] table gives defaults."),
    samples: int = typer.Option(None, "--samples", help="Permutations for sampled Shapley / Owen values."),
    seed: int = typer.Option(None, "--seed", help="Random seed for sampling (default 0)."),
    truth: str = typer.Option(None, "--truth", help="Ground truth passed to the reward functions; without --spec, the team outcome (e.g. --truth true for a run that succeeded)."),
    baseline: str = typer.Option(None, "--baseline", help="Credit the advantage R − b: a number b, or 'group' (the mean reward of the file's runs of the same task). A failed run then gets negative credit on the causes of its failure."),
    limit: int = typer.Option(50, "--limit", help="Rows shown in the table (0 = all; --json prints all)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON record per unit: unit, credit (, stderr)."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    ray: int = DATASET_RAY_OPTION,
    ray_address: str = RAY_ADDRESS_OPTION,
    parts_out: Path = DATASET_OUT_OPTION,
    partition_traces: int = PARTITION_TRACES_OPTION,
    ray_min_work: float = RAY_MIN_WORK_OPTION,
) -> None:
    """Assign credit for the rewards to every unit of a trace (8 units × 8 methods)."""
    from ..credit import assign
    from ..credit.signals import parse_truth
    from ..errors import ConfigError, TraceError, ValueFunctionError

    base_opt = baseline_option(baseline)
    rs = _spec(spec)
    cs = rs.credit if rs is not None else None
    chosen_unit = unit or (cs.unit if cs is not None else None)
    if chosen_unit is None:
        raise fail(f"--unit is required (or set unit in the spec's [credit] table): one of {_UNITS}", code=EXIT_USAGE)
    chosen: str = method or (cs.method if cs is not None and cs.method else None) or "broadcast"
    params = dict(cs.params) if cs is not None and (cs.method is None or cs.method == chosen) else {}
    samples = samples if samples is not None else (cs.samples if cs else None)
    seed = seed if seed is not None else (cs.seed if cs else 0)
    if ray is not None or ray_address is not None or parts_out is not None:
        from ._partitioned import measure_partitioned

        def show(_p: Path, o: Any) -> int:
            code = _outcome_error(path, o)
            if code is None:
                _print_credit(o.trace_id, o.result, as_json=as_json, multi=True, limit=limit)
            return code or 0

        options = {"spec": rs, "truth": parse_truth(truth), "baselines": base_opt,
                   "credit": {"unit": chosen_unit, "method": chosen, "samples": samples, "seed": seed, "params": params}}
        measure_partitioned("credit", [str(path)], force=force, ray=ray, ray_address=ray_address, out=parts_out,
                            partition_traces=partition_traces, min_work_s=ray_min_work, report=lambda rows: None,
                            on_trace=show, job_options=options)
    traces = _traces(path, force, "credit")
    multi = len(traces) > 1
    all_sigs, bases = signals_of(traces, rs, truth, base_opt, path)
    for tr, sigs, b in zip(traces, all_sigs, bases, strict=True):
        where = f"{path} (trace {tr.trace_id!r})"
        try:
            res = assign(tr, sigs, unit=chosen_unit, method=chosen, samples=samples, seed=seed, baseline=b, **params)
        except (ConfigError, ValueFunctionError) as exc:
            raise fail(f"{where}: {exc}", code=EXIT_USAGE) from None
        except TraceError as exc:
            raise fail(f"{where}: {exc}", problems=exc.problems, code=EXIT_INVALID) from None
        _print_credit(tr.trace_id, res, as_json=as_json, multi=multi, limit=limit)


def _print_credit(trace_id: str, res: Any, *, as_json: bool, multi: bool, limit: int) -> None:
    if as_json:
        for rec in res.records():
            _json_line({"trace_id": trace_id, **rec} if multi else rec)
        for msg in res.notes:
            note(printable(msg))
        return
    _table(trace_id, res, limit)


def _table(trace_id: str, res: Any, limit: int) -> None:
    from rich.table import Table

    sampled = res.stderr is not None
    table = Table(title=f"{escape(trace_id)} — {res.unit.value} credit by {res.method.value}", title_justify="left")
    table.add_column(res.unit.value)
    table.add_column("role")
    table.add_column("credit", justify="right")
    if sampled:
        table.add_column("± stderr", justify="right")
    shown = len(res) if limit <= 0 else min(limit, len(res))
    vals = res.values.tolist()
    ses = res.stderr.tolist() if sampled else None
    for k in range(shown):
        row = [escape(res.ids[k]), escape(res.roles[k] or "—"), f"{vals[k]:.6g}"]
        if ses is not None:
            row.append(f"± {ses[k]:.3g}")
        table.add_row(*row)
    console.print(table)
    if shown < len(res):
        console.print(f"[dim]… {len(res) - shown} more unit(s); use --limit 0 or --json for all[/]")
    if res.baseline is not None:
        tail = (f"Σ credit = {sum(vals):.6g}; advantage = reward {res.total_reward + res.baseline:.6g} − "
                f"baseline {res.baseline:.6g} = {res.total_reward:.6g}")
    else:
        tail = f"Σ credit = {sum(vals):.6g}; total reward = {res.total_reward:.6g}"
    if res.epsilon is not None:
        tail += f"; max error ≤ {res.epsilon:.3g} with probability ≥ {1 - res.delta:g} ({res.samples} permutations)"
    console.print(tail)
    for msg in res.notes:
        console.print(f"[dim]note: {escape(msg)}[/]", soft_wrap=True)
