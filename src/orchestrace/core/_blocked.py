"""Cache-blocked column extraction: every per-event column of a decoded trace in one walk.

The validator and the graph core read ~15 columns out of the decoded ``Event`` structs (times,
type codes, id hashes, agents, end times, tokens, decisions, edge ends …). Pulled one column at
a time, each pass walks the whole trace — about 400 bytes of structs and values per event, far
beyond the CPU caches at 200k events — so every pass pays the memory misses again (~50 ns an
event and a column, against ~23 ns when the same structs are in cache). :func:`prefill` walks
the events in blocks of :data:`BLOCK` and pulls every column out of a block while it is still in
cache, writing into preallocated arrays: the same C-level ``map`` passes, the same values, in
the same :class:`~orchestrace.core._dag.Columns` entries (same names) that the plain lambdas of
:mod:`orchestrace.core._validate` and :mod:`orchestrace.analysis.graph` would fill — they find
them there and compute nothing again.

Besides each optional number's float column it counts the absent values (``none:NAME``), so
that the validator tells a missing value (None → NaN) from a NaN in the data without a list of
the values. ``tests/core/test_core_blocked.py`` checks that both paths give the same columns and
the same reports.

>>> from orchestrace import synth
>>> from orchestrace.core._dag import Columns
>>> tr = synth(events=50, agents=3, seed=0)
>>> cols = prefill(tr, Columns(tr), graph=True)
>>> cols.get("t", list).tolist() == [e.t for e in tr.events]
True
"""

from __future__ import annotations

from itertools import count, repeat
from operator import attrgetter
from typing import Any

import numpy as np

from ._dag import EDGE_CODE, EVENT_CODE, Columns, IdIndex

__all__ = ["BLOCK", "EVENT_FLOATS", "GRAPH_FLAGS", "float_column", "prefill"]

#: Events per block: ~400 bytes of structs and values each, so a block stays in a core's L2 cache.
BLOCK = 4096
#: Optional numeric event fields, kept as float64 columns ``float:NAME`` (NaN = absent).
EVENT_FLOATS = ("t_end", "tokens_in", "tokens_out", "cost")
#: Optional flags the graph core reads as lists ``list:NAME`` (filled with ``graph=True``).
GRAPH_FLAGS = ("error", "trusted", "privileged")

_g = {name: attrgetter(name) for name in ("id", "t", "type", "agent", "decision", "src", "dst",
                                           *EVENT_FLOATS, *GRAPH_FLAGS)}


def float_column(values: list[Any]) -> np.ndarray:
    """The validator's float column: None → NaN, beyond the float range → inf, not a number → NaN.

    >>> float_column([1, None, 10**400, "x"]).tolist()
    [1.0, nan, inf, nan]
    """
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return np.array([_as_float(v) for v in values], dtype=np.float64)


def _as_float(v: Any) -> float:
    try:
        return float(v) if v is not None else np.nan
    except (TypeError, ValueError):
        return np.nan
    except OverflowError:
        return np.inf


def prefill(trace: Any, columns: Columns | None = None, *, graph: bool = False) -> Columns:
    """Fill ``columns`` (a new :class:`~orchestrace.core._dag.Columns` when None) with ``trace``'s
    per-event and per-edge columns, walking the structs block by block; returns the columns.

    Filled: ``t``, ``event_type_code``, ``agent_first``, ``id_index``, ``float:t_end``,
    ``float:tokens_in``, ``float:tokens_out``, ``float:cost`` (and ``none:NAME``, the count of
    absent values of each), ``list:decision``, ``edge_src``,
    ``edge_dst``, ``edge_type_code``; with ``graph=True`` also ``list:id`` and the flag lists of
    :data:`GRAPH_FLAGS` (what :class:`~orchestrace.analysis.graph.TraceGraph` reads besides).
    Values of the wrong Python type (a trace built in code) raise as the plain passes do.
    """
    if columns is None:
        columns = Columns(trace)
    ev = trace.events
    n = len(ev)
    t = np.empty(n, np.float64)  # (n,)
    types = np.empty(n, np.int8)  # (n,) -1 = not an event type
    hashes = np.empty(n, np.int64)  # (n,) hash of each id
    agent = np.empty(n, np.int64)  # (n,) position of the agent's first event
    floats = {f: np.empty(n, np.float64) for f in EVENT_FLOATS}  # (n,) NaN = absent
    nones = dict.fromkeys(EVENT_FLOATS, 0)
    first: dict[Any, int] = {}
    positions = count()
    decisions: list[Any] = []
    ids: list[str] = []
    flags: dict[str, list[Any]] = {f: [] for f in GRAPH_FLAGS} if graph else {}
    g_id, g_t, g_type, g_agent, g_dec = _g["id"], _g["t"], _g["type"], _g["agent"], _g["decision"]
    for lo in range(0, n, BLOCK):
        block = ev[lo:lo + BLOCK]
        k = len(block)
        hi = lo + k
        t[lo:hi] = np.fromiter(map(g_t, block), np.float64, k)
        types[lo:hi] = np.fromiter(map(EVENT_CODE.get, map(g_type, block), repeat(-1)), np.int8, k)
        if graph:
            block_ids = list(map(g_id, block))
            ids += block_ids
            hashes[lo:hi] = np.fromiter(map(hash, block_ids), np.int64, k)
        else:
            hashes[lo:hi] = np.fromiter(map(hash, map(g_id, block)), np.int64, k)
        agent[lo:hi] = np.fromiter(map(first.setdefault, map(g_agent, block), positions), np.int64, k)
        for f, out in floats.items():
            values = list(map(_g[f], block))
            none = values.count(None)
            nones[f] += none
            out[lo:hi] = np.nan if none == k else float_column(values)  # absent everywhere: no conversion
        decisions += map(g_dec, block)
        for f, flag in flags.items():
            flag += map(_g[f], block)
    index = IdIndex(hashes, ids.__getitem__ if graph else lambda i: ev[i].id)
    edges = _edge_columns(trace.edges, index)  # before anything is stored: all or nothing
    put = columns.put
    put("t", t)
    put("event_type_code", types)
    put("agent_first", (agent, first))
    for f, out in floats.items():
        put(f"float:{f}", out)
        put(f"none:{f}", nones[f])
    put("list:decision", decisions)
    if graph:
        put("list:id", ids)
        for f, flag in flags.items():
            put(f"list:{f}", flag)
    for name, value in (*edges, ("id_index", index)):
        put(name, value)
    return columns


def _edge_columns(ed: Any, index: IdIndex) -> tuple[tuple[str, np.ndarray], ...]:
    """``edge_src``, ``edge_dst`` (event positions, −1 = no such event) and ``edge_type_code``."""
    m = len(ed)
    src_hash, dst_hash = np.empty(m, np.int64), np.empty(m, np.int64)  # (m,)
    etype = np.empty(m, np.int8)  # (m,) -1 = not an edge type
    g_src, g_dst, g_type = _g["src"], _g["dst"], _g["type"]
    for lo in range(0, m, BLOCK):
        block = ed[lo:lo + BLOCK]
        k = len(block)
        hi = lo + k
        src_hash[lo:hi] = np.fromiter(map(hash, map(g_src, block)), np.int64, k)
        dst_hash[lo:hi] = np.fromiter(map(hash, map(g_dst, block)), np.int64, k)
        etype[lo:hi] = np.fromiter(map(EDGE_CODE.get, map(g_type, block), repeat(-1)), np.int8, k)
    if index.dict is not None:  # a true 64-bit collision among the ids: the exact dict path
        src, dst = index.lookup_of(ed, g_src), index.lookup_of(ed, g_dst)
    else:
        src, dst = index.lookup_hashes(src_hash), index.lookup_hashes(dst_hash)
    return ("edge_src", src), ("edge_dst", dst), ("edge_type_code", etype)
