"""Progress of a long phase, shown honestly wherever stderr goes.

:func:`progress_bar` is the one progress display of the trainers and of ``orchestrace env
run``: a rich bar on a terminal; when stderr is a pipe or a file, plain-text lines — one each
time another tenth of the work is done, and one at the end, once the phase has run for
``min_seconds`` (2 s: a quick phase stays quiet) — so that a piped or logged run still says
what runs and how far it is (``label: 300/1,000 (30 %) 12 s elapsed, ~28 s left``).

>>> import io
>>> buf = io.StringIO()
>>> with progress_bar(4, "collect paths", stream=buf, min_seconds=0) as advance:
...     for _ in range(4):
...         advance(1)
>>> [line.split(" (")[0] for line in buf.getvalue().splitlines()]
['collect paths: 1/4', 'collect paths: 2/4', 'collect paths: 3/4', 'collect paths: 4/4']
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["progress_bar"]


def _fields(fields: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in fields.items())


@contextmanager
def progress_bar(total: int, description: str, *, enabled: bool = True, completed: int = 0,
                 transient: bool = False, stream: TextIO | None = None, min_seconds: float = 2.0) -> Iterator[Any]:
    """Show the progress of ``total`` units of work labelled ``description``; yields
    ``advance(n=1, **fields)`` (fields such as ``ret=…`` are shown beside the count).

    A rich bar when ``stream`` (default: stderr) is a terminal, else plain-text lines every
    10 % (see the module docstring). ``enabled=False`` shows nothing."""
    if not enabled:
        yield lambda n=1, **kw: None
        return
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        yield from _plain(total, description, completed, out, min_seconds)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
        console=Console(file=out), transient=transient,
    ) as prog:
        task = prog.add_task(description, total=total, completed=completed, info="")

        def advance(n: int = 1, **fields: Any) -> None:
            prog.update(task, advance=n, info=_fields(fields))

        yield advance


def _plain(total: int, label: str, completed: int, out: TextIO, min_seconds: float) -> Iterator[Any]:
    t0 = time.perf_counter()
    state: dict[str, Any] = {"done": completed, "shown": -1 if total <= 0 else (10 * completed) // max(total, 1),
                             "t1": None, "d1": completed}

    def line(fields: dict[str, Any]) -> None:
        done, el = state["done"], time.perf_counter() - t0
        if total > 0:
            frac = min(done / total, 1.0)
            # the rate since the first unit finished (start-up excluded), and no estimate before a fifth
            # of the work: extrapolating the first slow units made the estimate jump (1,015 s → 130 s)
            steady = (done - completed) >= 0.2 * max(total - completed, 1) and done > state["d1"]
            rate_t = time.perf_counter() - state["t1"]
            left = rate_t * (total - done) / max(done - state["d1"], 1) if steady else float("nan")
            eta = f", ~{left:.0f} s left" if done < total and left == left else ""
            text = f"{label}: {done:,}/{total:,} ({100 * frac:.0f} %) {el:.0f} s elapsed{eta}"
        else:
            text = f"{label}: {done:,} done, {el:.0f} s elapsed"
        extra = _fields(fields)
        print(text + (f" {extra}" if extra else ""), file=out, flush=True)

    def advance(n: int = 1, **fields: Any) -> None:
        state["done"] += n
        if state["t1"] is None:  # the first unit done: the rate is measured from here
            state["t1"], state["d1"] = time.perf_counter(), state["done"]
        tenth = (10 * state["done"]) // total if total > 0 else state["shown"]
        due = tenth > state["shown"] or (total > 0 and state["done"] >= total and state["shown"] < 10)
        if due and time.perf_counter() - t0 >= min_seconds:
            state["shown"] = tenth
            line(fields)

    yield advance
