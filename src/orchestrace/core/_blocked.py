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

It runs only on a trace from the strict typed decode (``Decoded.finite``: every value has its
declared type and every float is finite), where a missing optional number is exactly a NaN of its
float column. Traces built in code, and documents that needed the tolerant decode, take the
plain one-column-at-a-time path; ``tests/core/test_core_blocked.py`` checks both give the same
columns and the same reports.

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

__all__ = ["BLOCK", "EVENT_FLOATS", "GRAPH_FLAGS", "prefill"]

#: Events per block: ~400 bytes of structs and values each, so a block stays in a core's L2 cache.
BLOCK = 4096
#: Optional numeric event fields, kept as float64 columns ``float:NAME`` (NaN = absent).
EVENT_FLOATS = ("t_end", "tokens_in", "tokens_out", "cost")
#: Optional flags the graph core reads as lists ``list:NAME`` (filled with ``graph=True``).
GRAPH_FLAGS = ("error", "trusted", "privileged")

_g = {name: attrgetter(name) for name in ("id", "t", "type", "agent", "decision", "src", "dst",
                                           *EVENT_FLOATS, *GRAPH_FLAGS)}


def _floats(values: list[Any]) -> np.ndarray:
    """Floats with None → NaN; an integer beyond the float range → inf (as the plain columns do)."""
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:
        return np.array([np.inf if v is not None and abs(v) > 1e308 else v for v in values], dtype=np.float64)


def prefill(trace: Any, columns: Columns | None = None, *, graph: bool = False) -> Columns:
    """Fill ``columns`` (a new :class:`~orchestrace.core._dag.Columns` when None) with ``trace``'s
    per-event and per-edge columns, walking the structs block by block; returns the columns.

    Filled: ``t``, ``event_type_code``, ``agent_first``, ``id_index``, ``float:t_end``,
    ``float:tokens_in``, ``float:tokens_out``, ``float:cost``, ``list:decision``, ``edge_src``,
    ``edge_dst``, ``edge_type_code``; with ``graph=True`` also ``list:id`` and the flag lists of
    :data:`GRAPH_FLAGS` (what :class:`~orchestrace.analysis.graph.TraceGraph` reads besides).
    Only for traces from the strict typed decode (see the module docstring).
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
            out[lo:hi] = _floats(list(map(_g[f], block)))
        decisions += map(g_dec, block)
        for f, values in flags.items():
            values += map(_g[f], block)
    put = columns.put
    put("t", t)
    put("event_type_code", types)
    put("agent_first", (agent, first))
    for f, out in floats.items():
        put(f"float:{f}", out)
    put("list:decision", decisions)
    if graph:
        put("list:id", ids)
        for f, values in flags.items():
            put(f"list:{f}", values)
    index = IdIndex(hashes, ids.__getitem__ if graph else lambda i: ev[i].id)
    put("id_index", index)
    _prefill_edges(trace.edges, index, columns)
    return columns


def _prefill_edges(ed: Any, index: IdIndex, columns: Columns) -> None:
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
    columns.put("edge_src", src)
    columns.put("edge_dst", dst)
    columns.put("edge_type_code", etype)
