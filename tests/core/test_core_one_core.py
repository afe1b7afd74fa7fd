"""One dependency-edge set, one graph core, one problem-code table: the validator and the graph
(measures, credit) agree on what a trace's defects are and what they are called.

Before issue 15 a cycle through ``message`` edges validated clean, then ``metrics`` refused it
with ``graph.cycle``, a code the validator's table did not have.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from orchestrace import Edge, EdgeType, Event, EventType, Trace, TraceBuilder, validate
from orchestrace._problems import PROBLEM_CODES
from orchestrace.analysis.graph import TraceGraph
from orchestrace.analysis.measures import compute
from orchestrace.errors import TraceInvalidError
from orchestrace.vocab import DEPENDENCY_EDGE_TYPES

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


def test_one_dependency_edge_set() -> None:
    assert {EdgeType.TEMPORAL, EdgeType.SAFETY_FLOW}.isdisjoint(DEPENDENCY_EDGE_TYPES)
    assert DEPENDENCY_EDGE_TYPES | {EdgeType.TEMPORAL, EdgeType.SAFETY_FLOW} == set(EdgeType)
    import orchestrace.analysis.graph as graph_module

    assert graph_module.DEPENDENCY_EDGE_TYPES is DEPENDENCY_EDGE_TYPES


def test_the_validator_docstring_lists_exactly_the_code_table() -> None:
    doc = importlib.import_module("orchestrace.core._validate").__doc__ or ""  # the module, not the function
    rows = re.findall(r"^``([a-z0-9.-]+)``\s+(error|warning)\b", doc, re.M)
    assert {c: s for c, s in rows} == {c: s.value for c, (s, _) in PROBLEM_CODES.items()}


def test_every_code_the_validator_reports_on_the_bad_corpus_is_in_the_table() -> None:
    seen = set()
    for p in sorted(BAD.glob("*.json*")):
        if p.name == "EXPECTED.json":
            continue
        for q in validate(p).problems:
            assert q.code in PROBLEM_CODES, (p.name, q.code)
            assert q.severity is PROBLEM_CODES[q.code][0] or q.code == "schema.unknown-field", (p.name, q.code)
            seen.add(q.code)
    assert {"edge.cycle", "id.duplicate", "edge.dangling"} <= seen


def _message_cycle(t2: float = 0.0) -> Trace:
    """a's message → b's message → (message edge) back to a's: a cycle of message edges only."""
    ev = (Event(id="m1", t=0.0, t_end=1.0, type=EventType.MESSAGE, agent="a", to="b"),
          Event(id="m2", t=t2, t_end=2.0, type=EventType.MESSAGE, agent="b", to="a"))
    return Trace(trace_id="cyc", task_id="k", events=ev,
                 edges=(Edge("m1", "m2", EdgeType.MESSAGE), Edge("m2", "m1", EdgeType.MESSAGE)))


def test_a_message_cycle_is_the_same_defect_for_validate_and_metrics() -> None:
    tr = _message_cycle()
    (v,) = validate(tr).problems  # equal times: no edge goes back in time, only the cycle
    assert v.code == "edge.cycle" and "message included" in v.hint
    for run in (lambda: TraceGraph.from_trace(tr), lambda: compute(tr, validate=False), lambda: compute(tr)):
        with pytest.raises(TraceInvalidError) as info:
            run()
        (p,) = info.value.problems
        assert (p.code, p.path, p.message) == (v.code, v.path, v.message)


def test_a_message_edge_back_in_time_is_refused() -> None:
    tr = _message_cycle(t2=-1.0)
    codes = {p.code for p in validate(tr).problems}
    assert {"edge.time-backwards", "edge.cycle"} <= codes


def test_graph_refusals_use_the_validator_codes_paths_and_messages() -> None:
    b = TraceBuilder("t")
    a = b.add("tool_call", "x", t=0)
    b.add("tool_call", "x", t=1, after=a)
    tr = b.build()
    dup = Trace(trace_id="t", task_id="k", events=(*tr.events, tr.events[0]), edges=tr.edges)
    dang = Trace(trace_id="t", task_id="k", events=tr.events, edges=(*tr.edges, Edge("e1", "ghost", EdgeType.CAUSAL)))
    for bad in (dup, dang):
        with pytest.raises(TraceInvalidError) as info:
            TraceGraph.from_trace(bad)
        got = [(p.code, p.path, p.message) for p in info.value.problems]
        want = [(p.code, p.path, p.message) for p in validate(bad).problems if p.code in ("id.duplicate", "edge.dangling")]
        assert got == want and got
