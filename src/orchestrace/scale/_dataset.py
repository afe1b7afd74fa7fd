"""Measures over a columnar trace dataset, partition by partition (one process or Ray tasks).

A partition is a contiguous range of traces (rows of ``traces.parquet``); the events and
edges it owns follow from the ``n_events`` / ``n_edges`` columns, so a task reads only its row
groups (:func:`orchestrace.core.dataset.read_dataset` with ``traces=range(lo, hi)``). Partitions
are fixed by the dataset and ``traces_per_part`` — never by the number of workers — so the
per-trace outcomes, the printed report and the partitioned Parquet output are the same
whether one process or N Ray workers computed them.

Why plain Ray tasks and not Ray Data: Ray Data splits each table into blocks by row count,
without regard to which trace a row belongs to, while a measure needs one trace's events,
edges and trace row together; joining three tables back by ``trace_id`` in Ray Data costs a
shuffle that a trace-aligned partition (offsets from the trace table) never needs. The output
is still plain Parquet that Ray Data, DuckDB or Polars read directly.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MeasureJob", "PartOutcome", "TraceOutcome", "measure_partition", "partitions", "write_parts"]


@dataclass(frozen=True)
class MeasureJob:
    """What to compute on every trace of a dataset ``folder``: ``kind`` is ``metrics`` (the
    measures ``names``), ``validate`` (warnings count as errors with ``strict``), ``reward``
    (the signals of ``spec``), ``signals`` (the signals ``credit`` would credit) or ``credit``
    (``assign`` with the ``credit`` options and the baseline); all but ``validate`` refuse an invalid trace unless ``force``."""

    kind: str
    folder: str
    names: tuple[str, ...] = ()
    force: bool = False
    max_flows: int = 10
    strict: bool = False
    spec: Any = None  # reward / credit: a RewardSpec (None: the default signals)
    truth: Any = None  # reward / credit: the ground truth passed to the reward functions
    credit: dict[str, Any] = field(default_factory=dict)  # credit: unit, method, samples, seed, params
    baselines: tuple[float | None, ...] | float | str | None = None  # credit: a baseline, "group", or one per trace


@dataclass
class TraceOutcome:
    """One trace's result: ``status`` ok / forced / invalid / refused / error, with the measures
    (:class:`~orchestrace.MetricsResult`) or the validation report, and the problems."""

    index: int
    trace_id: str
    status: str
    result: Any = None
    message: str = ""
    problems: list[Any] = field(default_factory=list)


@dataclass
class PartOutcome:
    """A partition's outcomes in trace order, the warnings raised while reading it, and the
    read error that ended it early (a corrupted table), if any."""

    traces: range
    outcomes: list[TraceOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: Any = None


def partitions(n_traces: int, traces_per_part: int) -> list[range]:
    """Consecutive ranges of at most ``traces_per_part`` traces covering ``range(n_traces)``.

    >>> partitions(5, 2)
    [range(0, 2), range(2, 4), range(4, 5)]
    >>> partitions(0, 3)
    []
    """
    if traces_per_part < 1:
        from ..errors import ConfigError

        raise ConfigError(f"--partition-traces {traces_per_part} must be ≥ 1")
    return [range(lo, min(lo + traces_per_part, n_traces)) for lo in range(0, n_traces, traces_per_part)]


def _one(job: MeasureJob, index: int, tr: Any) -> TraceOutcome:
    from .._problems import force_verdict
    from ..analysis.measures import compute
    from ..core._dag import Columns
    from ..core._validate import validate
    from ..errors import TraceError

    cols = Columns(tr)  # the graph reuses the validator's columns
    rep = validate(tr, columns=cols)
    if job.kind in ("reward", "signals", "credit") and (rep.valid or job.force):
        return _reward_or_credit(job, index, tr)
    if job.kind == "validate":
        import msgspec

        rep = msgspec.structs.replace(rep, source=f"{job.folder}[{index}] {tr.trace_id}")
        return TraceOutcome(index, tr.trace_id, "ok" if rep.passes(strict=job.strict) else "invalid", rep)
    go_on, why = force_verdict(rep, tr.trace_id, force=job.force, verb="measure" if job.kind == "metrics" else job.kind)
    if not go_on:
        return TraceOutcome(index, tr.trace_id, "refused", problems=list(rep.errors), message=why)
    status = "ok" if rep.valid else "forced"
    try:
        res = compute(tr, list(job.names), max_flows=job.max_flows, validate=False, columns=cols)  # checked above
    except TraceError as exc:
        return TraceOutcome(index, tr.trace_id, "error", message=str(exc), problems=list(exc.problems))
    return TraceOutcome(index, tr.trace_id, status, res, message=why)


def _signals(job: MeasureJob, tr: Any) -> list[Any]:
    """The signals ``reward`` prints and ``credit`` credits (:func:`orchestrace.rewards.signals_for`)."""
    from ..rewards import signals_for

    return signals_for(tr, spec=job.spec, truth=job.truth, printing=job.kind == "reward")


def _reward_or_credit(job: MeasureJob, index: int, tr: Any) -> TraceOutcome:
    from ..credit import assign
    from ..errors import ConfigError, TraceError, ValueFunctionError

    try:
        sigs = _signals(job, tr)
        if job.kind in ("reward", "signals"):
            return TraceOutcome(index, tr.trace_id, "ok", sigs)
        base = job.baselines[index] if isinstance(job.baselines, tuple) else job.baselines
        if isinstance(base, str):
            raise ConfigError(f"baseline {base!r}: resolve 'group' to one baseline per trace first")
        c = job.credit
        res = assign(tr, sigs, unit=c["unit"], method=c["method"], samples=c.get("samples"), seed=c.get("seed", 0),
                     baseline=base, **c.get("params", {}))
        return TraceOutcome(index, tr.trace_id, "ok", res)
    except (ConfigError, ValueFunctionError) as exc:
        return TraceOutcome(index, tr.trace_id, "usage", message=str(exc))
    except TraceError as exc:
        return TraceOutcome(index, tr.trace_id, "error", message=str(exc), problems=list(exc.problems))


def measure_partition(item: tuple[MeasureJob, range]) -> PartOutcome:
    """Read traces ``item[1]`` of the dataset and compute ``item[0]`` on each (a pure task).

    >>> import tempfile
    >>> from orchestrace import synth
    >>> from orchestrace.core.dataset import write_dataset
    >>> d = tempfile.mkdtemp(); _ = write_dataset([synth(events=30, agents=2, seed=s) for s in range(4)], d)
    >>> part = measure_partition((MeasureJob("metrics", d, ("e2/speedup",)), range(1, 3)))
    >>> [(o.index, o.status) for o in part.outcomes]
    [(1, 'ok'), (2, 'ok')]
    """
    from ..core.dataset import read_dataset
    from ..errors import TraceError

    job, traces = item
    out = PartOutcome(traces)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for k, tr in enumerate(read_dataset(job.folder, traces=traces)):
                out.outcomes.append(_one(job, traces.start + k, tr))
        except TraceError as exc:
            out.error = exc
    out.warnings = [str(w.message) for w in caught]
    return out


def _columns(job: MeasureJob, part: PartOutcome) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"trace_index": [], "trace_id": [], "status": []}
    if job.kind == "validate":
        cols.update(errors=[], warnings=[], codes=[])
    elif job.kind in ("reward", "credit"):
        cols.update(total=[], ids=[], values=[])
    else:
        cols.update({name: [] for name in job.names})
    for o in part.outcomes:
        cols["trace_index"].append(o.index)
        cols["trace_id"].append(o.trace_id)
        cols["status"].append(o.status)
        if job.kind in ("reward", "credit"):
            r = o.result
            if r is None:
                for k in ("total", "ids", "values"):
                    cols[k].append(None)
            elif job.kind == "reward":
                cols["total"].append(float(sum(x.value for x in r)))
                cols["ids"].append([f"{x.unit.value}:{x.id}" for x in r])
                cols["values"].append([float(x.value) for x in r])
            else:
                cols["total"].append(float(r.total_reward))
                cols["ids"].append(list(r.ids))
                cols["values"].append([float(v) for v in r.values.tolist()])
        elif job.kind == "validate":
            cols["errors"].append(len(o.result.errors))
            cols["warnings"].append(len(o.result.warnings))
            cols["codes"].append(sorted({p.code for p in o.result.problems}))
        else:
            for name in job.names:
                v = None if o.result is None else o.result.metrics.get(name)
                cols[name].append(None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
    return cols


def write_parts(job: MeasureJob, parts: Any, out: Any, on_part: Any = None) -> int:
    """Write each partition's outcomes as ``part-00000.parquet`` … into folder ``out``, atomically
    (a temporary folder renamed at the end; an existing ``out`` is replaced only then). ``parts``
    is an iterable of :class:`PartOutcome` in order; ``on_part(part)`` sees each one first.
    Returns the number of part files, or -1 when a partition could not be read (then nothing
    is written and an existing ``out`` is kept). Columns: ``trace_index``, ``trace_id``, ``status`` and one
    float64 column per measure (null: unknown or refused) — for ``validate``, the error and
    warning counts and the problem codes; for ``reward`` / ``credit``, the total and the
    ``ids`` / ``values`` lists (signals as ``unit:id``, or the credited units)."""
    import os
    import shutil
    from pathlib import Path

    from ..errors import require

    pa = require("pyarrow", extra="parquet")
    pq = require("pyarrow.parquet", extra="parquet")
    out = Path(out)
    tmp = out.with_name(f".{out.name}.orchestrace-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    types: dict[str, Any] = {"trace_index": pa.int64(), "trace_id": pa.string(), "status": pa.string()}
    if job.kind == "validate":
        types.update(errors=pa.int64(), warnings=pa.int64(), codes=pa.list_(pa.string()))
    elif job.kind in ("reward", "credit"):
        types.update(total=pa.float64(), ids=pa.list_(pa.string()), values=pa.list_(pa.float64()))
    else:
        types.update({name: pa.float64() for name in job.names})
    schema = pa.schema([(k, v) for k, v in types.items()], metadata={b"orchestrace.measure": job.kind.encode()})
    n = 0
    ok = False
    try:
        for part in parts:
            if on_part is not None:
                on_part(part)
            if part.error is not None:
                return -1
            table = pa.table(_columns(job, part), schema=schema)
            pq.write_table(table, str(tmp / f"part-{n:05d}.parquet"), compression="zstd")
            n += 1
        if out.exists():
            old = out.with_name(f".{out.name}.orchestrace-old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
        ok = True
    finally:
        if not ok:
            shutil.rmtree(tmp, ignore_errors=True)
    return n
