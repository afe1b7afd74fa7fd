"""Run a trace command over columnar dataset folders by partitions, here or on Ray (``--ray N``, ``--out DIR``).

``metrics``, ``validate``, ``reward`` and ``credit`` over a dataset folder: the partitions
(``partition_traces`` traces each) are computed in one process or as Ray tasks
(:func:`~orchestrace.scale.measure_partition`); the first one here times the work, and Ray is used
only when :func:`~orchestrace.scale.ray_decision` says it is worth it. :func:`run_partitioned`
hands every partition, in trace order, to ``on_part(folder, part)`` — the caller prints it — and
with ``out`` writes one Parquet file per partition, atomically. ``credit`` with group baselines
makes a first pass for each trace's total reward and task. A folder with a missing table is
refused before any work (:func:`dataset_folders`, ConfigError).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["dataset_folders", "run_partitioned"]


def dataset_folders(paths: Sequence[str]) -> list[Path]:
    """The dataset folders of ``paths``; ConfigError for a path that is not one, or lacks a table."""
    from ..core.dataset import TABLES

    out = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir() or not any((p / t).is_file() for t in TABLES):
            raise ConfigError(f"{raw}: --ray / --out work on columnar dataset folders ({', '.join(TABLES)}); convert "
                              "traces with `orchestrace convert … --to parquet`")
        missing = [t for t in TABLES if not (p / t).is_file()]
        if missing:
            raise ConfigError(f"{raw}: table {', '.join(missing)} is missing; a dataset folder holds "
                              f"{', '.join(TABLES)} (rewrite it with `orchestrace convert … --to parquet`)")
        out.append(p)
    return out


def _outcomes(job: Any, parts: list[range], *, ray: int | None, ray_address: str | None,
              min_work_s: float | None, clusters: list[Any], note: Callable[[str], None]) -> Iterator[Any]:
    """PartOutcomes in order: the first partition here (timing the work), the rest here or on Ray
    (a connection made here is kept in ``clusters`` for the next pass)."""
    from . import connect, measure_partition, ray_decision

    if not parts:
        return
    t0 = time.perf_counter()
    yield measure_partition((job, parts[0]))
    rest = parts[1:]
    if not rest:
        return
    work = (time.perf_counter() - t0) * len(rest)
    if ray is not None or ray_address is not None:
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


def run_partitioned(kind: str, folders: Sequence[Path], *, on_part: Callable[[Path, Any], None],
                    names: Sequence[str] = (), force: bool = False, max_flows: int = 10, strict: bool = False,
                    job_options: dict[str, Any] | None = None, ray: int | None = None, ray_address: str | None = None,
                    out: Path | None = None, partition_traces: int = 1000, min_work_s: float | None = None,
                    note: Callable[[str, str], None] = lambda text, kind: None) -> None:
    """Run ``kind`` on every trace of ``folders``; each partition's outcomes go to ``on_part`` in trace order.

    ``note(text, kind)`` gets the notes (``"note"``) and warnings (``"warning"``): why Ray was not
    used, the group-baseline note, what ``out`` holds. Raises ConfigError (usage), the trace count's
    TraceError (an unreadable folder) and OSError (``out`` cannot be written).
    """
    from ..core.dataset import count_traces
    from . import MeasureJob, check_request, partitions, write_parts

    if out is not None and len(folders) != 1:
        raise ConfigError(f"--out writes the measures of one dataset folder; {len(folders)} were given")
    if ray is not None or ray_address is not None:
        check_request(ray, ray_address)
    clusters: list[Any] = []  # at most one connection, shut down at the end
    ray_kw: dict[str, Any] = {"ray": ray, "ray_address": ray_address, "min_work_s": min_work_s, "clusters": clusters,
              "note": lambda s: note(s, "note")}
    try:
        for folder in folders:
            job = MeasureJob(kind, str(folder), tuple(names), force, max_flows, strict, **(job_options or {}))
            if kind == "credit" and job.baselines == "group":
                job = _group_baselines(job, folder, partition_traces, say=note, **ray_kw)
            parts = partitions(count_traces(folder), partition_traces)
            stream = _outcomes(job, parts, **ray_kw)
            if out is None:
                for part in stream:
                    on_part(folder, part)
                continue
            n = write_parts(job, stream, out, on_part=lambda part, f=folder: on_part(f, part))
            if n < 0:
                note(f"not written: {out} (a partition could not be read)", "warning")
            else:
                note(f"wrote {out}/: {n} Parquet part(s), {parts[-1].stop if parts else 0} traces", "note")
    finally:
        for cluster in clusters:
            cluster.shutdown()


def _group_baselines(job: Any, folder: Path, partition_traces: int, *, say: Callable[[str, str], None],
                     **ray_kw: Any) -> Any:
    """``--baseline group`` over a dataset: a first pass for every trace's total reward and task,
    then each trace's baseline is the mean of its task group (as in one process)."""
    from ..core.dataset import count_traces
    from ..credit import group_baselines
    from ..credit.signals import alone_note
    from ..errors import require
    from . import partitions

    first = dataclasses.replace(job, kind="signals", baselines=None)
    totals: list[float] = []
    groups: list[str] = []
    pq = require("pyarrow.parquet", extra="parquet")
    tasks = [str(t) for t in pq.read_table(str(folder / "traces.parquet"), columns=["task_id"]).column(0).to_pylist()]
    for part in _outcomes(first, partitions(count_traces(folder), partition_traces), **ray_kw):
        for o in part.outcomes:
            totals.append(sum(x.value for x in o.result) if o.status == "ok" else 0.0)
            groups.append(tasks[o.index])
    base = group_baselines(totals, groups).tolist()
    alone = alone_note(groups)
    if alone:
        say(alone, "note")
    return dataclasses.replace(job, baselines=tuple(base))
