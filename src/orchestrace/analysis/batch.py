"""Measure the traces of many files (what ``orchestrace metrics PATH…`` computes), and write measures back.

:func:`measure_file` reads one trace file or columnar dataset folder, validates every trace (an
invalid one is refused unless ``force``, the one rule of :func:`~orchestrace._problems.force_verdict`),
and measures the rest on the validator's own columns. It never raises for a bad trace or file: the
refusals, warnings and notes come back in order as :class:`Message` records, so a caller prints them
(or not) as it likes. :func:`write_measures` rewrites a file in the format it was decoded from with
the measures merged into each trace's ``metrics``; :func:`summary_stats` gives mean, median and p95
per measure over many traces.

>>> import tempfile, pathlib
>>> from orchestrace import synth
>>> from orchestrace.core.io import dump
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
>>> dump(synth(events=40, agents=3, seed=1), p)
>>> got = measure_file(p, ["e2/speedup", "cost/tokens"])
>>> got.format, len(got.results), got.refused, got.messages
('native', 1, 0, [])
>>> [row[0] for row in summary_stats(got.results, ["e2/speedup"])]
['e2/speedup']
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, TraceError

__all__ = ["FileMeasures", "Message", "measure_file", "summary_stats", "write_measures"]


@dataclass(frozen=True)
class Message:
    """One thing to tell the user about a file: ``kind`` error (a refused trace or file), warning or note."""

    kind: str
    text: str
    problems: tuple[Any, ...] = ()


@dataclass
class FileMeasures:
    """The measures of one file: its traces and their results (same order), and what to say about it."""

    path: Path
    format: str = ""
    n_decoded: int = 0
    traces: list[Any] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    refused: int = 0
    io_error: bool = False

    @property
    def complete(self) -> bool:
        """Every trace of the file was measured (none refused): the file may be rewritten."""
        return self.refused == 0


def _refusal(where: str, exc: Exception) -> Message:
    msg = str(exc)
    if msg.startswith(f"{where}: "):  # the decoder already names the file
        msg = msg[len(where) + 2:]
    return Message("error", f"{where}: {msg}", tuple(getattr(exc, "problems", ())))


def measure_file(path: Path, names: Sequence[str], *, force: bool = False, max_flows: int = 10) -> FileMeasures:
    """Validate and measure every trace of ``path`` (``names``: :func:`~orchestrace.analysis.measures.select_measures`).

    Raises only :class:`~orchestrace.errors.MissingExtraError` (a dataset folder without pyarrow).
    """
    from .._problems import force_verdict
    from ..core._dag import Columns
    from ..core._validate import validate
    from ..core.load import read_any
    from .measures import compute

    got = FileMeasures(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            decoded, got.format = read_any(path)  # MissingExtraError for a dataset: the caller's usage problem
            got.n_decoded = len(decoded)
            for tr in decoded:
                columns = Columns(tr)  # the graph reuses the validator's columns
                rep = validate(tr, columns=columns)
                go_on, why = force_verdict(rep, tr.trace_id, force=force, verb="measure")
                if not go_on:
                    got.messages.append(Message("error", f"{path}: {why}", tuple(rep.errors)))
                    got.refused += 1
                    continue
                if why:
                    got.messages.append(Message("warning", f"{path}: {why}"))
                try:  # validated just above (with force an invalid trace is measured as it is)
                    res = compute(tr, list(names), max_flows=max_flows, validate=False, columns=columns)
                except TraceError as exc:
                    got.messages.append(_refusal(f"{path} trace {tr.trace_id!r}", exc))
                    got.refused += 1
                    continue
                got.traces.append(tr)
                got.results.append(res)
        except TraceError as exc:
            got.messages.append(_refusal(str(path), exc))
            got.refused += 1
            got.io_error |= any(p.code.startswith("io.") for p in exc.problems)
    got.messages.extend(Message("warning", str(w.message)) for w in caught)
    return got


def write_measures(got: FileMeasures, *, warn: Callable[[str], None] = lambda s: None) -> None:
    """Rewrite ``got.path`` in the format it was decoded from, the measures merged into each trace's ``metrics``.

    Every trace the file held is written back, or nothing is: a count that does not match what was
    decoded raises ConfigError rather than shorten the file. Measures that are not finite are left
    out of a trace (``warn`` names them).
    """
    import msgspec

    from ..core.io import atomic_write, dumps
    from .measures import reference_metrics

    path, fmt, n_decoded = got.path, got.format, got.n_decoded
    if len(got.traces) != n_decoded or (fmt != "jsonl" and n_decoded != 1):
        raise ConfigError(f"not written: {path} holds {n_decoded} trace(s) in {fmt} format and {len(got.traces)} "
                          "were measured; a rewrite would lose traces (use --json to keep the measures elsewhere)")
    new = []
    for tr, res in zip(got.traces, got.results, strict=True):
        merged = dict(tr.metrics)
        merged.update(reference_metrics(res))
        merged.update({k: v for k, v in res.metrics.items() if v is not None})
        dropped = sorted(k for k, v in merged.items() if not math.isfinite(v))
        if dropped:  # a trace's metrics must be finite
            warn(f"{path}: trace {tr.trace_id!r}: not written (not finite): {', '.join(dropped)}")
            merged = {k: v for k, v in merged.items() if math.isfinite(v)}
        new.append(msgspec.structs.replace(tr, metrics=merged))
    if fmt == "jsonl":
        blob = b"".join(dumps(t, format="jsonl") for t in new)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blob = dumps(new[0], format=fmt)  # type: ignore[arg-type]
    atomic_write(path, blob)  # keeps the file's mode


def summary_stats(results: Sequence[Any], names: Sequence[str]
                  ) -> list[tuple[str, int, int, float | None, float | None, float | None]]:
    """Per measure: (name, traces where it is known, where unknown, mean, median, p95); None when never known."""
    import numpy as np

    out: list[tuple[str, int, int, float | None, float | None, float | None]] = []
    for name in names:
        vals = np.array([r.metrics[name] for r in results if r.metrics[name] is not None], dtype=float)
        if vals.size:
            out.append((name, int(vals.size), len(results) - int(vals.size), float(vals.mean()),
                        float(np.median(vals)), float(np.percentile(vals, 95))))
        else:
            out.append((name, 0, len(results), None, None, None))
    return out
