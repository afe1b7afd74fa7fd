"""The shared-columns path (the graph reusing the validator's columns) against the plain one.

``measures.compute(trace)`` and ``orchestrace metrics`` validate a trace, then build its graph
with the same explicit ``_dag.Columns`` object; the plain path builds the graph from the trace alone. On
random traces — valid ones, and hostile ones with duplicate ids, dangling edges, cycles,
time running backwards and unknown types — both must give the same graph arrays, the same
measures, the same validation report and the same refusal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace import Edge, EdgeType, Event, EventType, Trace, synth, validate
from orchestrace.analysis.graph import TraceGraph
from orchestrace.analysis.measures import compute
from orchestrace.core._dag import Columns, column
from orchestrace.errors import TraceInvalidError

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ARRAYS = ("t", "t_end", "duration", "end_known", "type", "agent", "edge_src", "edge_dst", "edge_type",
           "dep_src", "dep_dst", "succ_ptr", "succ_idx", "pred_ptr", "pred_idx")


@st.composite
def hostile_traces(draw: Any, max_events: int = 16) -> Trace:
    """Random traces, often invalid: ids from a small pool, edges between any ids (some unknown)."""
    n = draw(st.integers(1, max_events))
    pool = [f"e{i}" for i in range(n + 2)]
    events = []
    for i in range(n):
        t = draw(st.integers(0, 10))
        events.append(Event(
            id=draw(st.sampled_from(pool)) if draw(st.booleans()) else pool[i],
            t=float(t), t_end=draw(st.sampled_from([None, float(t), float(t + 2), float(t - 1)])),
            type=draw(st.sampled_from(list(EventType))), agent=draw(st.sampled_from(["o", "w1", "w2", ""])),
            to=draw(st.sampled_from([None, "w1", "w2", "o"])),
            tokens_in=draw(st.one_of(st.none(), st.integers(-3, 50))), tokens_out=draw(st.one_of(st.none(), st.integers(0, 9))),
            cost=draw(st.one_of(st.none(), st.floats(-1, 1, allow_nan=False))),
            error=draw(st.sampled_from([None, True, False])), trusted=draw(st.sampled_from([None, True, False])),
            privileged=draw(st.sampled_from([None, True])),
        ))
    edges = [Edge(draw(st.sampled_from(pool)), draw(st.sampled_from(pool)), draw(st.sampled_from(list(EdgeType))))
             for _ in range(draw(st.integers(0, 2 * n)))]
    return Trace(trace_id="h", task_id="k", events=tuple(events), edges=tuple(edges))


def _graph_or_error(build: Any) -> Any:
    try:
        return build()
    except TraceInvalidError as exc:
        return ("refused", str(exc), [(p.code, p.path, p.message) for p in exc.problems])


def _same_graph(a: Any, b: Any) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    for name in _ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert a.ids == b.ids and a.agents == b.agents and a.assumptions == b.assumptions


def _same_metrics(a: dict[str, float | None], b: dict[str, float | None]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        assert x == y or (x is not None and y is not None and math.isnan(x) and math.isnan(y)), (k, x, y)


def _check(tr: Trace) -> None:
    plain_report = validate(tr)
    plain_graph = _graph_or_error(lambda: TraceGraph.from_trace(tr))
    cols = Columns(tr)
    shared_report = validate(tr, columns=cols)
    shared_graph = _graph_or_error(lambda: TraceGraph.from_trace(tr, columns=cols))
    assert shared_report == plain_report
    _same_graph(shared_graph, plain_graph)
    if isinstance(plain_graph, TraceGraph):  # measures: through compute(trace) (shared) vs a plain graph
        plain = compute(plain_graph)
        try:
            fast = compute(tr)
        except TraceInvalidError:
            assert not plain_report.valid  # compute refuses exactly the traces the validator rejects
            return
        assert plain_report.valid
        _same_metrics(fast.metrics, plain.metrics)
        assert fast.assumptions == plain.assumptions and fast.flows == plain.flows


@SETTINGS
@given(hostile_traces())
def test_shared_columns_change_nothing_on_random_traces(tr: Trace) -> None:
    _check(tr)


@pytest.mark.parametrize("seed", range(4))
def test_shared_columns_change_nothing_on_synth_traces(seed: int) -> None:
    _check(synth(events=400 + 300 * seed, agents=3 + seed, seed=seed))


def test_shared_arrays_are_read_only_and_belong_to_one_trace() -> None:
    tr = synth(events=50, agents=2, seed=0)
    cols = Columns(tr)
    validate(tr, columns=cols)
    t = column(cols, tr, "t", lambda: np.zeros(1))
    assert t.shape == (50,) and not t.flags.writeable
    with pytest.raises(ValueError):
        t[0] = 1.0
    assert column(None, tr, "t", lambda: np.zeros(1)).shape == (1,)  # no Columns: nothing kept
    other = synth(events=50, agents=2, seed=1)
    g = TraceGraph.from_trace(other, columns=cols)  # another trace's columns are never used
    assert np.array_equal(g.t, TraceGraph.from_trace(other).t)


def test_no_hidden_state_between_calls() -> None:
    """A validate() call leaves nothing behind that a later graph could pick up (issue 27)."""
    import orchestrace.core._dag as dag

    assert not any(type(v).__name__ == "ContextVar" for v in vars(dag).values())
    import orchestrace.core._validate as val

    assert not hasattr(val, "_keep")
