"""The validator's columns (issue 43): agents as first-position codes, ids and floats shared with the graph.

* the agent rules (``agent.before-spawn``, ``return.wrong-target``), now on exact first-position
  codes, against a plain per-event reference written out here, on random traces;
* the same problems whether a trace is validated as an object, as its JSON bytes, or with a
  ``Columns`` that the graph then reuses — on random traces and on every golden file (the
  bad-input corpus, the reference example, an importer's golden trace, the packaged examples);
* hostile byte-level mutations of random traces (truncated, BOM, invalid UTF-8, huge numbers,
  wrong types, duplicated events) never escape as an exception or an ``internal.error``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace import Edge, EdgeType, Event, EventType, Trace, validate
from orchestrace.analysis.graph import TraceGraph
from orchestrace.core._dag import Columns, first_positions
from orchestrace.core._located import Collector
from orchestrace.core._structural import decode_bytes
from orchestrace.errors import TraceInvalidError

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TESTS = Path(__file__).resolve().parents[1]
GOLDEN = sorted([*(TESTS / "data" / "bad").glob("*.json*"), TESTS / "data" / "reference" / "example_trace.json",
                 TESTS / "importers" / "golden_chat_magentic.trace.json",
                 *(TESTS.parent / "src" / "orchestrace" / "data" / "examples").glob("*.json")])
_AGENT_CODES = ("agent.before-spawn", "return.wrong-target")


@st.composite
def agent_traces(draw: Any) -> Trace:
    """Random spawns, returns and acts over a small pool of agents (times collide often)."""
    agents = ["o", "w1", "w2", "w3"]
    events = []
    for i in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from([EventType.SPAWN, EventType.RETURN, EventType.TOOL_CALL, EventType.MESSAGE]))
        t = draw(st.sampled_from([0.0, 1.0, 1.0, 2.0, 3.0, 1e-10, 2.0 + 1e-12]))
        events.append(Event(id=f"e{i}", t=t, type=kind, agent=draw(st.sampled_from(agents)),
                            to=draw(st.sampled_from([None, *agents]))))
    return Trace(trace_id="a", task_id="k", events=tuple(events))


def reference_agent_problems(tr: Trace) -> list[tuple[str, str]]:
    """The two agent rules written plainly, one event at a time."""
    ev = tr.events
    finite = [abs(e.t) for e in ev if math.isfinite(e.t)]
    tol = 1e-9 + 1e-12 * max(finite, default=0.0)
    spawns: dict[str, list[int]] = {}
    for i, e in enumerate(ev):
        if e.type is EventType.SPAWN and e.to is not None:
            spawns.setdefault(e.to, []).append(i)
    first = {c: min(idx, key=lambda i: (math.isnan(ev[i].t), ev[i].t if not math.isnan(ev[i].t) else 0.0, i))
             for c, idx in spawns.items()}
    early: dict[str, int] = {}
    out = []
    for i, e in enumerate(ev):
        j = first.get(e.agent)
        if j is None:
            continue
        if e.t < ev[j].t - tol and (e.agent not in early or e.t < ev[early[e.agent]].t):
            early[e.agent] = i
        if e.type is EventType.RETURN and e.to is not None and e.to != ev[j].agent:
            out.append(("return.wrong-target", f"$.events[{i}].to"))
    out += [("agent.before-spawn", f"$.events[{i}].t") for i in sorted(early.values())]
    return sorted(out)


def _problems(report: Any, codes: tuple[str, ...] | None = None) -> list[tuple[str, str, str]]:
    return sorted((p.code, p.path, p.message) for p in report.problems if codes is None or p.code in codes)


@SETTINGS
@given(agent_traces())
def test_agent_rules_match_the_plain_reference(tr: Trace) -> None:
    got = [(c, p) for c, p, _ in _problems(validate(tr), _AGENT_CODES)]
    assert got == reference_agent_problems(tr)


@SETTINGS
@given(agent_traces())
def test_object_bytes_and_shared_columns_report_the_same(tr: Trace) -> None:
    plain = validate(tr)
    cols = Columns(tr)
    assert validate(tr, columns=cols) == plain
    from_bytes = validate(msgspec.json.encode(tr))
    assert _problems(from_bytes) == _problems(plain)


def test_first_positions_is_a_plain_first_index() -> None:
    rng = np.random.default_rng(0)
    names = [f"a{k}" for k in rng.integers(0, 50, 2000)]
    codes, first = first_positions(names, len(names))
    assert codes.tolist() == [names.index(x) for x in names]
    assert list(first) == list(dict.fromkeys(names))


def _graph(tr: Trace, cols: Columns | None) -> Any:
    try:
        g = TraceGraph.from_trace(tr, columns=cols)
    except TraceInvalidError as exc:
        return ("refused", [(p.code, p.path) for p in exc.problems])
    return (g.ids, g.agents, g.agent.tolist(), g.t_end.tolist(), g.tokens_in.tolist(), g.turn.tolist())


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_golden_files_same_problems_and_graph_on_both_paths(path: Path) -> None:
    data = path.read_bytes()
    report = validate(data)
    assert not any(p.code == "internal.error" for p in report.problems)
    col = Collector()
    for d in decode_bytes(data, str(path), col):  # every trace the file holds, as decoded
        tr = d.trace
        cols = Columns(tr)
        assert validate(tr, columns=cols) == validate(tr)
        a, b = _graph(tr, cols), _graph(tr, None)
        assert a == b or (a[0] != "refused" and str(a) == str(b))  # NaN ends compare as text


_MUTATIONS = ("truncate", "bom", "bad_utf8", "huge", "t_string", "dup_event", "deep")


def _mutate(data: bytes, how: str, at: int) -> bytes:
    if how == "truncate":
        return data[: max(1, at % len(data))]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "bad_utf8":
        k = at % len(data)
        return data[:k] + b"\xff" + data[k + 1:]
    if how == "huge":
        return data.replace(b'"t":0.0', b'"t":1e999', 1).replace(b'"t":1.0', b'"t":123456789012345678901234567890', 1)
    if how == "t_string":
        return data.replace(b'"t":', b'"t":"x","_t":', 1)
    if how == "dup_event":
        i = data.find(b'"events":[') + len(b'"events":[')
        j = data.find(b"}", i) + 1
        return data[:i] + data[i:j] + b"," + data[i:]
    return data.replace(b'"events":[', b'"events":[' + b"[" * 3000 + b"]" * 3000 + b",", 1)


@SETTINGS
@given(agent_traces(), st.sampled_from(_MUTATIONS), st.integers(0, 10**6))
def test_hostile_bytes_are_reported_never_raised(tr: Trace, how: str, at: int) -> None:
    edges = tuple(Edge(a.id, b.id, EdgeType.CAUSAL) for a, b in zip(tr.events, tr.events[1:], strict=False))
    data = _mutate(msgspec.json.encode(msgspec.structs.replace(tr, edges=edges)), how, at)
    report = validate(data)
    assert not any(p.code == "internal.error" for p in report.problems)
    assert report == validate(data)  # deterministic
