"""Write traces to one export file in a named format (what ``orchestrace export`` writes).

:func:`write_export` picks the exporter by name (:data:`~orchestrace.exporters.EXPORT_FORMATS`),
writes ``out`` (atomically for the JSON formats) and says how many records it wrote and of what
kind: ``otlp`` one OTLP JSON document with every trace's spans, ``reference`` the survey's JSON
of the one trace, ``verl`` Parquet rows, ``rllm`` episodes and ``trl`` rows as JSONL. The training
formats take the per-turn rewards of :func:`~orchestrace.exporters.export_turns` (``turns``).

>>> import tempfile, pathlib
>>> from orchestrace import synth
>>> out = pathlib.Path(tempfile.mkdtemp()) / "t.json"
>>> write_export("otlp", [synth(events=40, agents=3, seed=0)], out)[1]
'spans'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..core.trace import Trace

__all__ = ["write_export"]


def write_export(fmt: str, traces: Sequence[Trace], out: Path, *, turns: Any = None) -> tuple[int, str]:
    """Write ``traces`` as ``fmt`` to ``out``; (records written, what they are: spans, events, rows, episodes)."""
    from ..core.io import atomic_write, to_reference
    from .otlp import to_otlp
    from .training import to_rllm, to_trl, to_verl, write_jsonl

    kw: dict[str, Any] = {} if turns is None else {"turns": turns}
    if fmt == "otlp":
        docs = [to_otlp(t) for t in traces]
        doc = {"resourceSpans": [rs for d in docs for rs in d["resourceSpans"]]}
        atomic_write(out, json.dumps(doc).encode())
        return sum(len(rs["scopeSpans"][0]["spans"]) for rs in doc["resourceSpans"]), "spans"
    if fmt == "reference":
        if len(traces) != 1:
            raise ConfigError(f"{len(traces)} traces; the reference format holds one (use convert per trace)")
        atomic_write(out, json.dumps(to_reference(traces[0], warn=False)).encode())
        return len(traces[0].events), "events"
    if fmt == "verl":
        return to_verl(list(traces), out, **kw), "rows"
    if fmt == "rllm":
        eps = to_rllm(list(traces), **kw)
        write_jsonl(eps, out)
        return len(eps), "episodes"
    if fmt == "trl":
        rows = to_trl(list(traces), **kw)
        write_jsonl(rows, out)
        return len(rows), "rows"
    raise ConfigError(f"unknown export format {fmt!r}; choose one of otlp, rllm, verl, trl, reference")
