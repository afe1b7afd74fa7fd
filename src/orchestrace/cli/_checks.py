"""Loading traces for the analysis commands: invalid traces are refused unless ``--force``.

``inspect``, ``convert``, ``metrics``, ``reward``, ``credit`` and ``export`` all read their
input through :func:`load_traces`: structural problems (not JSON, wrong types) exit 1,
I/O problems exit 2, and a trace that decodes but that ``orchestrace validate`` rejects
(a cycle, a dangling edge, time running backwards …) exits 1 with the validator's located
problems — or, with ``--force``, is analysed anyway after a warning that says so.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ._app import EXIT_INVALID, EXIT_USAGE, error, fail, note

if TYPE_CHECKING:
    from ..core.trace import Trace

#: The help text of every ``--force`` option.
FORCE_HELP = "Analyse traces that `orchestrace validate` rejects (a warning names each one)."


def read_traces(path: Path) -> list[Trace]:
    """Every trace of a file or a columnar dataset folder; exits 1 (not a trace) or 2 (I/O, missing extra)."""
    from ..core.load import read_any
    from ..errors import TraceDecodeError

    if not path.exists():
        raise fail(f"{path}: no such file or folder", code=EXIT_USAGE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            traces = read_any(path).traces
        except TraceDecodeError as exc:
            io = any(p.code.startswith("io.") for p in exc.problems)
            raise fail(f"{path}: " + ("cannot read the file" if io else "not a valid trace"),
                       problems=exc.problems, code=EXIT_USAGE if io else EXIT_INVALID) from None
    for w in caught:
        note(str(w.message))
    if not traces:
        raise fail(f"{path}: holds no trace", code=EXIT_INVALID)
    return traces


def refuse_invalid(path: Path | str, traces: list[Trace], *, force: bool, verb: str) -> list[Trace]:
    """``traces`` when every one validates; else exit 1 listing the problems (``force``: warn and go on)."""
    from .._problems import force_verdict
    from ..core._validate import validate

    for tr in traces:
        rep = validate(tr)
        go_on, why = force_verdict(rep, tr.trace_id, force=force, verb=verb)
        if go_on and why:
            note(f"{path}: {why}", kind="warning")
        elif not go_on:
            error(f"{path}: {why}", problems=rep.errors)
            raise typer.Exit(EXIT_INVALID)
    return traces


def load_traces(path: Path, *, force: bool, verb: str) -> list[Trace]:
    """:func:`read_traces` then :func:`refuse_invalid`."""
    return refuse_invalid(path, read_traces(path), force=force, verb=verb)
