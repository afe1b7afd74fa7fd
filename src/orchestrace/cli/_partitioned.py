"""``metrics`` / ``validate`` over columnar dataset folders by partitions: ``--ray N``, ``--out DIR``.

The partitions (``--partition-traces`` traces each) are computed in one process or as Ray
tasks (:mod:`orchestrace.scale._dataset`); either way the driver prints them in trace order
with the same messages as the one-process command, and ``--out`` writes one Parquet file per
partition, atomically. A folder with a missing table is refused before any work (exit 2).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, console, error, fail, note

__all__ = ["measure_partitioned"]


def _datasets(paths: list[str]) -> list[Path]:
    from ..core.dataset import TABLES

    out = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir() or not any((p / t).is_file() for t in TABLES):
            raise fail(f"{raw}: --ray / --out work on columnar dataset folders ({', '.join(TABLES)}); convert "
                       "traces with `orchestrace convert … --to parquet`", code=EXIT_USAGE)
        missing = [t for t in TABLES if not (p / t).is_file()]
        if missing:
            raise fail(f"{raw}: table {', '.join(missing)} is missing; a dataset folder holds {', '.join(TABLES)} "
                       "(rewrite it with `orchestrace convert … --to parquet`)", code=EXIT_USAGE)
        out.append(p)
    return out


def _outcomes(job: Any, parts: list[range], *, ray: int | None, ray_address: str | None,
              min_work_s: float | None, clusters: list[Any]) -> Iterator[Any]:
    """PartOutcomes in order: the first partition here (timing the work), the rest here or on Ray
    (a connection made here is kept in ``clusters`` for the command's next pass)."""
    from ..scale import connect, measure_partition, ray_decision

    if not parts:
        return
    t0 = time.perf_counter()
    yield measure_partition((job, parts[0]))
    rest = parts[1:]
    if not rest:
        return
    work = (time.perf_counter() - t0) * len(rest)
    use_ray = ray is not None or ray_address is not None
    if use_ray:
        distribute, why = ray_decision(work, ray or 2, address_given=ray_address is not None, min_work_s=min_work_s,
                                       tasks=len(rest))
        if distribute:
            if not clusters:
                clusters.append(connect(ray, ray_address))
            yield from clusters[0].imap(measure_partition, [(job, r) for r in rest])
            return
        note(why)
    for r in rest:
        yield measure_partition((job, r))


def measure_partitioned(kind: str, paths: list[str], *, names: list[str] | None = None, force: bool = False,
                        max_flows: int = 10, strict: bool = False, as_json: bool = False, ray: int | None, ray_address: str | None,
                        out: Path | None, partition_traces: int, min_work_s: float | None,
                        report: Callable[[list[Any]], None], on_trace: Callable[[Path, Any], int] | None = None,
                        job_options: dict[str, Any] | None = None) -> None:
    """Run ``kind`` (``metrics``, ``validate``, ``reward``, ``credit``) on every trace of the dataset
    folders; print as the one-process command does (``on_trace(path, outcome)`` → exit code of
    that trace, or the metrics printing; ``report(rows)`` at the end) and exit with the worst code."""
    import msgspec

    from ..core.dataset import count_traces
    from ..errors import ConfigError, MissingExtraError, TraceError
    from ..scale import MeasureJob, check_request, partitions, write_parts

    folders = _datasets(paths)
    if out is not None and len(folders) != 1:
        raise fail(f"--out writes the measures of one dataset folder; {len(folders)} were given")
    if ray is not None or ray_address is not None:
        try:
            check_request(ray, ray_address)
        except (ConfigError, MissingExtraError) as exc:
            raise fail(str(exc)) from None
    encoder = msgspec.json.Encoder()
    rows: list[tuple[str, Any]] = []
    refused, io_error, worst = 0, False, EXIT_OK
    clusters: list[Any] = []  # at most one connection, shut down when the command ends

    def show(path: Path, part: Any) -> None:
        nonlocal refused, io_error, worst
        for o in part.outcomes:
            if on_trace is not None:
                worst = max(worst, on_trace(path, o))
                continue
            if o.status == "refused":
                error(f"{path}: {o.message}", problems=o.problems)
                refused += 1
                continue
            if o.status == "error":
                where = f"{path} trace {o.trace_id!r}"
                msg = o.message[len(where) + 2:] if o.message.startswith(f"{where}: ") else o.message
                error(f"{where}: {msg}", problems=o.problems)
                refused += 1
                continue
            if o.status == "forced":
                note(f"{path}: {o.message}", kind="warning")
            rows.append((str(path), o.result))
            if as_json and kind == "metrics":
                res = o.result
                console.file.write(encoder.encode({"trace_id": res.trace_id, "metrics": res.metrics,
                                                   "assumptions": res.assumptions}).decode() + "\n")
        if part.error is not None:
            exc = part.error
            msg = str(exc)
            msg = msg[len(str(path)) + 2:] if msg.startswith(f"{path}: ") else msg
            error(f"{path}: {msg}", problems=getattr(exc, "problems", []))
            refused += 1
            io_error |= any(p.code.startswith("io.") for p in getattr(exc, "problems", []))
        for w in part.warnings:
            note(w, kind="warning")

    try:
        for folder in folders:
            job = MeasureJob(kind, str(folder), tuple(names or ()), force, max_flows, strict, **(job_options or {}))
            if kind == "credit" and job.baselines == "group":
                job = _group_baselines(job, folder, partition_traces, ray=ray, ray_address=ray_address,
                                       min_work_s=min_work_s, clusters=clusters)
            try:
                parts = partitions(count_traces(folder), partition_traces)
            except TraceError as exc:
                raise fail(str(exc), problems=exc.problems, code=EXIT_USAGE) from None
            except ConfigError as exc:
                raise fail(str(exc)) from None
            stream = _outcomes(job, parts, ray=ray, ray_address=ray_address, min_work_s=min_work_s,
                               clusters=clusters)
            if out is not None:
                n = write_parts(job, stream, out, on_part=lambda part, f=folder: show(f, part))
                if n < 0:
                    note(f"not written: {out} (a partition could not be read)", kind="warning")
                else:
                    note(f"wrote {out}/: {n} Parquet part(s), {parts[-1].stop if parts else 0} traces", kind="note")
            else:
                for part in stream:
                    show(folder, part)
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        for cluster in clusters:
            cluster.shutdown()
    report(rows)
    raise typer.Exit(max(worst, EXIT_USAGE if io_error else EXIT_INVALID if refused else EXIT_OK))


def _group_baselines(job: Any, folder: Path, partition_traces: int, **ray_kw: Any) -> Any:
    """``--baseline group`` over a dataset: a first pass for every trace's total reward and task,
    then each trace's baseline is the mean of its task group (as in one process)."""
    import dataclasses

    from ..core.dataset import count_traces
    from ..credit import group_baselines
    from ..credit.signals import alone_note
    from ..scale import partitions

    first = dataclasses.replace(job, kind="signals", baselines=None)
    totals: list[float] = []
    groups: list[str] = []
    tasks = _task_ids(folder)
    for part in _outcomes(first, partitions(count_traces(folder), partition_traces), **ray_kw):
        for o in part.outcomes:
            totals.append(sum(x.value for x in o.result) if o.status == "ok" else 0.0)
            groups.append(tasks[o.index])
    base = group_baselines(totals, groups).tolist()
    alone = alone_note(groups)
    if alone:
        note(alone)
    return dataclasses.replace(job, baselines=tuple(base))


def _task_ids(folder: Path) -> list[str]:
    from ..errors import require

    pq = require("pyarrow.parquet", extra="parquet")
    return [str(t) for t in pq.read_table(str(folder / "traces.parquet"), columns=["task_id"]).column(0).to_pylist()]
