"""The one reader of "every trace at this path": a trace file (JSON document, JSONL stream) or a
columnar dataset folder.

Every command that reads traces goes through :func:`read_any`: ``inspect``, ``convert``,
``metrics``, ``reward``, ``credit``, ``export``, ``blame``, ``blame-judge`` and ``report``. The
``format`` it returns is what the decoder saw (``native``, ``reference``, ``jsonl``) or
``dataset`` for a folder, so a rewrite in place keeps the file's format without guessing again.
Structural problems raise :class:`~orchestrace.errors.TraceDecodeError` with every problem
located; a dataset folder needs the ``parquet`` extra (:class:`~orchestrace.errors.MissingExtraError`).

>>> import tempfile, pathlib
>>> from orchestrace import synth
>>> from orchestrace.core.io import dumps
>>> p = pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl"
>>> _ = p.write_bytes(b"".join(dumps(synth(events=40, agents=3, seed=s), format="jsonl") for s in (0, 1)))
>>> got = read_any(p)
>>> len(got.traces), got.format
(2, 'jsonl')
"""

from __future__ import annotations

import os
from typing import NamedTuple

from .trace import Trace

__all__ = ["Loaded", "read_any"]


class Loaded(NamedTuple):
    """The traces at a path, and the format they were read from (``native``, ``reference``, ``jsonl``, ``dataset``)."""

    traces: list[Trace]
    format: str


def read_any(path: str | os.PathLike[str]) -> Loaded:
    """Every trace of a trace file or of a columnar dataset folder (see the module docstring)."""
    from ..errors import require
    from .dataset import is_dataset, read_dataset
    from .io import read_traces

    if is_dataset(path):
        require("pyarrow", extra="parquet")
        return Loaded(list(read_dataset(path)), "dataset")
    got = read_traces(path)
    return Loaded(got.traces, got.format)
