"""The cache-blocked column walk (issue 43) against the plain one-column-at-a-time passes.

``core._blocked.prefill`` pulls every per-event and per-edge column out of a decoded trace block
by block; the validator and the graph then read those columns instead of their own lambdas.
Checked here, with blocks of 3 events so that every trace spans several blocks:

* every column equals the same column written out plainly (one comprehension per field), on
  random traces with duplicate ids, dangling and mistyped edges, empty names, absent and huge
  token counts, decisions on the wrong events and flags;
* the same report (codes, paths, messages) on the blocked and the plain path — for random
  traces as JSON bytes, for every golden file, for hostile byte mutations (truncated, BOM,
  invalid UTF-8, 1e999 and 30-digit numbers, a string time, a duplicated event, deep nesting) —
  and the same graph when the columns are handed on (what ``orchestrace metrics`` does).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_core_columns import _MUTATIONS, GOLDEN, _graph, _mutate

from orchestrace import validate
from orchestrace.core import _blocked, _dag
from orchestrace.core import _validate as validate_module
from orchestrace.core._dag import EDGE_CODE, EVENT_CODE, Columns
from orchestrace.core._located import Collector
from orchestrace.core._structural import decode_bytes

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_TYPES = ["spawn", "return", "tool_call", "message", "orchestrator_decision", "tool_cal"]
_EDGE_TYPES = ["causal", "spawn", "message", "temporal", "return", "causl"]


@contextlib.contextmanager
def _small_blocks() -> Iterator[None]:
    """Blocks of 3 events (every random trace spans several blocks) and the id hash table for
    any number of ids (the plain path keeps the sorted index of small traces)."""
    old = _blocked.BLOCK, _dag.TABLE_MIN_IDS
    _blocked.BLOCK, _dag.TABLE_MIN_IDS = 3, 0
    try:
        yield
    finally:
        _blocked.BLOCK, _dag.TABLE_MIN_IDS = old


@contextlib.contextmanager
def _plain() -> Iterator[None]:
    """The validator without the blocked walk (the plain per-column passes)."""
    old = validate_module._BLOCKED_MIN_EVENTS
    validate_module._BLOCKED_MIN_EVENTS = 10**18
    try:
        yield
    finally:
        validate_module._BLOCKED_MIN_EVENTS = old


@st.composite
def trace_bytes(draw: Any) -> bytes:
    """A random trace as JSON bytes: colliding ids and agents, stray edges, optional fields."""
    n = draw(st.integers(1, 16))
    ids = [draw(st.sampled_from([f"e{i}", f"e{i}", "e0", ""])) for i in range(n)]
    events = []
    for i in range(n):
        kind = draw(st.sampled_from(_TYPES))
        e: dict[str, Any] = {"id": ids[i], "t": draw(st.sampled_from([0.0, 1.0, 2.5, float(i), -1.0])),
                             "type": kind, "agent": draw(st.sampled_from(["o", "w1", "w2", ""]))}
        for f, values in (("to", [None, "w1", "w2", "o"]), ("t_end", [None, 0.5, 3.0, float(i) + 1]),
                          ("tokens_in", [None, 0, 7, 2**60, -3]), ("tokens_out", [None, 1, 2**54]),
                          ("cost", [None, 0.25, -1.0]), ("error", [None, True, False]),
                          ("trusted", [None, False]), ("privileged", [None, True])):
            v = draw(st.sampled_from(values))
            if v is not None:
                e[f] = v
        if draw(st.booleans()) and (kind == "orchestrator_decision" or draw(st.booleans())):
            e["decision"] = {"kind": draw(st.sampled_from(["stop", "spawn"])),
                             "action": draw(st.sampled_from(["stop", "continue", "x"]))}
        events.append(e)
    ends = [*ids, "nope"]
    edges = [{"src": draw(st.sampled_from(ends)), "dst": draw(st.sampled_from(ends)),
              "type": draw(st.sampled_from(_EDGE_TYPES))} for _ in range(draw(st.integers(0, 20)))]
    doc = {"trace_id": "r", "task_id": "k", "events": events, "edges": edges, "schema_version": "1.0"}
    return msgspec.json.encode(doc)


def _plain_columns(tr: Any) -> dict[str, Any]:
    """Every column of ``prefill``, one comprehension per field."""
    ev, ed = tr.events, tr.edges
    first: dict[str, int] = {}
    for i, e in enumerate(ev):
        first.setdefault(e.agent, i)
    pos: dict[str, int] = {}
    for i, e in enumerate(ev):
        pos.setdefault(e.id, i)
    nan = float("nan")
    out: dict[str, Any] = {
        "t": [e.t for e in ev],
        "event_type_code": [EVENT_CODE.get(e.type, -1) for e in ev],
        "agent_first": ([first[e.agent] for e in ev], first),
        "list:decision": [e.decision for e in ev],
        "list:id": [e.id for e in ev],
        "edge_src": [pos.get(x.src, -1) for x in ed],
        "edge_dst": [pos.get(x.dst, -1) for x in ed],
        "edge_type_code": [EDGE_CODE.get(x.type, -1) for x in ed],
    }
    for f in _blocked.EVENT_FLOATS:
        out[f"float:{f}"] = [nan if getattr(e, f) is None else float(getattr(e, f)) for e in ev]
    for f in _blocked.GRAPH_FLAGS:
        out[f"list:{f}"] = [getattr(e, f) for e in ev]
    return out


def _as_plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [None if isinstance(x, float) and x != x else x for x in value.tolist()]
    if isinstance(value, tuple):
        return tuple(_as_plain(v) for v in value)
    if isinstance(value, list):
        return [None if isinstance(x, float) and x != x else x for x in value]
    return value


def _report(data: bytes) -> list[tuple[str, str, str, str]]:
    return [(p.code, p.path, p.message, p.hint) for p in validate(data).problems]


@SETTINGS
@given(trace_bytes())
def test_blocked_columns_equal_the_plain_columns(data: bytes) -> None:
    decoded = decode_bytes(data, "<bytes>", Collector())
    if not decoded or not decoded[0].finite:
        return  # only the strict decode's traces take the blocked walk
    tr = decoded[0].trace
    with _small_blocks():
        cols = _blocked.prefill(tr, Columns(tr), graph=True)
    want = _plain_columns(tr)
    for name, value in want.items():
        assert _as_plain(cols.get(name, list)) == _as_plain(value), name
    index = cols.get("id_index", list)
    assert index.duplicates().tolist() == [i for i, e in enumerate(tr.events) if want["list:id"].index(e.id) != i]


@SETTINGS
@given(trace_bytes())
def test_blocked_and_plain_paths_report_the_same(data: bytes) -> None:
    with _small_blocks():
        blocked = _report(data)
    with _plain():
        plain = _report(data)
    assert blocked == plain
    # handed on to the graph, as `orchestrace metrics` does: the same report and the same graph
    for d in decode_bytes(data, "<bytes>", Collector()):
        tr = d.trace
        with _small_blocks():
            cols = Columns(tr)
            rep = validate_module.validate_keeping(data, columns=cols)
        assert [(p.code, p.path, p.message, p.hint) for p in rep.problems] == plain
        a, b = _graph(tr, cols), _graph(tr, None)
        assert a == b or (a[0] != "refused" and str(a) == str(b))  # NaN ends compare as text


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_golden_files_same_report_on_the_blocked_and_plain_paths(path: Any) -> None:
    data = path.read_bytes()
    with _small_blocks():
        blocked = _report(data)
    with _plain():
        assert _report(data) == blocked


@SETTINGS
@given(trace_bytes(), st.sampled_from(_MUTATIONS), st.integers(0, 10**6))
def test_hostile_bytes_same_report_on_both_paths(data: bytes, how: str, at: int) -> None:
    bad = _mutate(data, how, at)
    with _small_blocks():
        blocked = _report(bad)
    assert not any(code == "internal.error" for code, *_ in blocked)
    with _plain():
        assert _report(bad) == blocked
