"""``metrics`` / ``validate`` over columnar dataset folders by partitions: ``--ray N``, ``--out DIR``.

The partitions (``--partition-traces`` traces each) are computed in one process or as Ray
tasks (:mod:`orchestrace.scale.partitioned`); either way the driver prints them in trace order
with the same messages as the one-process command, and ``--out`` writes one Parquet file per
partition, atomically. A folder with a missing table is refused before any work (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from ._app import EXIT_INVALID, EXIT_OK, EXIT_USAGE, console, error, fail, note

__all__ = ["measure_partitioned"]


def measure_partitioned(kind: str, paths: list[str], *, names: list[str] | None = None, force: bool = False,
                        max_flows: int = 10, strict: bool = False, as_json: bool = False, ray: int | None, ray_address: str | None,
                        out: Path | None, partition_traces: int, min_work_s: float | None,
                        report: Callable[[list[Any]], None], on_trace: Callable[[Path, Any], int] | None = None,
                        job_options: dict[str, Any] | None = None) -> None:
    """Run ``kind`` (``metrics``, ``validate``, ``reward``, ``credit``) on every trace of the dataset
    folders; print as the one-process command does (``on_trace(path, outcome)`` → exit code of
    that trace, or the metrics printing; ``report(rows)`` at the end) and exit with the worst code."""
    import msgspec

    from ..errors import ConfigError, MissingExtraError, TraceError
    from ..scale.partitioned import dataset_folders, run_partitioned

    encoder = msgspec.json.Encoder()
    rows: list[tuple[str, Any]] = []
    refused, io_error, worst = 0, False, EXIT_OK

    def show(path: Path, part: Any) -> None:
        nonlocal refused, io_error, worst
        for o in part.outcomes:
            if on_trace is not None:
                worst = max(worst, on_trace(path, o))
                continue
            refused += _show_outcome(path, o, rows)
            if o.status not in ("refused", "error") and as_json and kind == "metrics":
                res = o.result
                console.file.write(encoder.encode({"trace_id": res.trace_id, "metrics": res.metrics,
                                                   "assumptions": res.assumptions}).decode() + "\n")
        if part.error is not None:
            refused += 1
            io_error |= _show_error(path, part.error)
        for w in part.warnings:
            note(w, kind="warning")

    try:
        run_partitioned(kind, dataset_folders(paths), on_part=show, names=names or (), force=force,
                        max_flows=max_flows, strict=strict, job_options=job_options, ray=ray, ray_address=ray_address,
                        out=out, partition_traces=partition_traces, min_work_s=min_work_s,
                        note=lambda text, k: note(text, kind=k))
    except TraceError as exc:
        raise fail(str(exc), problems=exc.problems, code=EXIT_USAGE) from None
    except (ConfigError, MissingExtraError) as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror or exc}") from None
    report(rows)
    raise typer.Exit(max(worst, EXIT_USAGE if io_error else EXIT_INVALID if refused else EXIT_OK))


def _show_outcome(path: Path, o: Any, rows: list[tuple[str, Any]]) -> int:
    """Print one trace's outcome as the one-process command does; 1 when it was refused."""
    if o.status == "refused":
        error(f"{path}: {o.message}", problems=o.problems)
        return 1
    if o.status == "error":
        where = f"{path} trace {o.trace_id!r}"
        msg = o.message[len(where) + 2:] if o.message.startswith(f"{where}: ") else o.message
        error(f"{where}: {msg}", problems=o.problems)
        return 1
    if o.status == "forced":
        note(f"{path}: {o.message}", kind="warning")
    rows.append((str(path), o.result))
    return 0


def _show_error(path: Path, exc: Any) -> bool:
    """Print a partition that could not be read; True when the problem is I/O."""
    msg = str(exc)
    msg = msg[len(str(path)) + 2:] if msg.startswith(f"{path}: ") else msg
    error(f"{path}: {msg}", problems=getattr(exc, "problems", []))
    return any(p.code.startswith("io.") for p in getattr(exc, "problems", []))
