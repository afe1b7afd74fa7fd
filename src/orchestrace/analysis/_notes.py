"""What every measure shares: the running :func:`~orchestrace.analysis.measures.compute` call's
notes (the assumptions a measure makes) and the per-graph memo that carries them.

A measure is ``f(trace_or_graph) -> float | None``; :func:`_graph` accepts either, :func:`_memo`
caches a value derived from the graph (:meth:`TraceGraph.derived`) together with the notes it
made, so a cached value still reports its assumptions.

>>> from orchestrace import synth
>>> g = _graph(synth(events=20, agents=2, seed=0))
>>> with _noting() as notes:
...     _ = _memo(g, "doc", lambda: (_note(g, "assumed"), 1)[1])
...     _ = _memo(g, "doc", lambda: 2)
>>> notes
['assumed']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..core.trace import Trace
from ..vocab import EventType
from .graph import TraceGraph

Value = float | None
_T = EventType


def _graph(x: Trace | TraceGraph) -> TraceGraph:
    return x if isinstance(x, TraceGraph) else TraceGraph.from_trace(x)


#: The assumptions noted by the measures of the running :func:`compute` call (None outside
#: one: a measure called on its own computes its value and drops its notes).
_NOTES: ContextVar[list[str] | None] = ContextVar("orchestrace_measure_notes", default=None)


@contextmanager
def _noting() -> Iterator[list[str]]:
    """Collect the notes made inside the block (nested blocks see only their own)."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def _note(g: TraceGraph, text: str) -> None:
    """Record an assumption for the running :func:`compute` call (once)."""
    notes = _NOTES.get()
    if notes is not None and text not in notes:
        notes.append(text)


def _memo(g: TraceGraph, key: str, fn: Callable[[], object]) -> object:
    """``fn()`` cached on the graph (:meth:`TraceGraph.derived`) with the notes it made,
    which are noted again on every use, so a cached value carries its assumptions."""
    def run() -> tuple[object, tuple[str, ...]]:
        with _noting() as notes:
            value = fn()
        return value, tuple(notes)

    value, notes = g.derived(("measures", key), run)
    for text in notes:
        _note(g, text)
    return value


def _ratio(a: float, b: float) -> Value:
    return float(a) / float(b) if b else None


def _count(g: TraceGraph, *kinds: EventType) -> int:
    return int(g.is_type(*kinds).sum())


def _tok(g: TraceGraph) -> np.ndarray:
    return _memo(g, "tok", lambda: g.tokens_in + g.tokens_out)  # type: ignore[return-value]


def _tree(g: TraceGraph):  # noqa: ANN202 — the spawn tree, shared by E3 and spawn/
    return _memo(g, "tree", g.spawn_tree)
