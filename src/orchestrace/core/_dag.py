"""The graph core shared by the validator and :class:`~orchestrace.analysis.graph.TraceGraph`.

One id index, one cycle finder, one dependency-edge set and one way to describe a cycle, so
that :func:`orchestrace.validate` and the measures can never disagree about whether a trace
is a DAG, which events an edge joins, or what the problem is called:

* :class:`IdIndex` — event id → position by 64-bit string hashes in a numpy hash table (no
  million-entry dict, no sort); unknown ids map to −1, duplicates are listed exactly;
* :func:`find_cycle` — one directed cycle of an edge list, or None (vectorised Kahn peel);
* :data:`EVENT_CODE`, :data:`EDGE_CODE`, :data:`DEPENDENCY_CODES` — enum → int8 code tables
  and the dependency mask over edge codes (:data:`~orchestrace.vocab.DEPENDENCY_EDGE_TYPES`);
* :func:`cycle_message`, :func:`duplicate_message`, :func:`dangling_message` — the text of
  the ``edge.cycle``, ``id.duplicate`` and ``edge.dangling`` problems (codes in
  :data:`~orchestrace._problems.PROBLEM_CODES`);
* :class:`Columns` / :func:`column` — an explicit object holding the per-event columns that
  the validator pulls out of one trace (times, type codes, the id index, edge ends …), handed
  by the caller to the graph core (``validate(tr, columns=c)`` then
  ``TraceGraph.from_trace(tr, columns=c)``) instead of pulling them out a second time (~40 ns
  an event and a column; ``orchestrace metrics`` validates, then builds the graph, of the
  same trace). No hidden state: without a ``Columns`` every column is computed where needed.

>>> find_cycle(np.array([0, 1, 2]), np.array([1, 2, 0]), 3)
[0, 1, 2]
>>> cycle_message(["a", "b"])[0]
'dependency edges form a 2-event cycle: a → b → a'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import count, repeat
from typing import Any, TypeVar

import numpy as np

from ..vocab import DEPENDENCY_EDGE_TYPES, EdgeType, EventType
from . import _idtable

__all__ = [
    "DEPENDENCY_CODES",
    "EDGE_CODE",
    "EVENT_CODE",
    "Columns",
    "TABLE_MIN_IDS",
    "IdIndex",
    "column",
    "cycle_message",
    "dangling_message",
    "duplicate_message",
    "find_cycle",
    "first_positions",
    "stable_argsort_hashes",
    "stable_argsort_small",
    "unique_ints",
]

#: Event type → int8 code (enum order).
EVENT_CODE: dict[EventType, int] = {e: i for i, e in enumerate(EventType)}
#: Edge type → int8 code (enum order).
EDGE_CODE: dict[EdgeType, int] = {e: i for i, e in enumerate(EdgeType)}
#: ``DEPENDENCY_CODES[code]`` is True for the dependency edge types.
DEPENDENCY_CODES: np.ndarray = np.array([e in DEPENDENCY_EDGE_TYPES for e in EdgeType])

_MAX_LISTED = 20
#: Ids from which :class:`IdIndex` uses the hash table (:mod:`~orchestrace.core._idtable`); below it,
#: a few dozen numpy calls per probe round cost more than sorting (measured: 2,000 ids 0.4 ms
#: slower, 10,000 ids 0.7–1.5 ms faster a trace).
TABLE_MIN_IDS = 8192
_T = TypeVar("_T")

class Columns:
    """The per-event columns of one trace, computed once, for the validator and the graph core.

    Made by the caller for one trace and passed explicitly to :func:`orchestrace.validate`
    and :meth:`TraceGraph.from_trace <orchestrace.analysis.graph.TraceGraph.from_trace>` (and
    :func:`orchestrace.analysis.measures.compute`). Shared numpy arrays are read-only, so no consumer
    can change what another one reads; a ``Columns`` given with another trace is ignored.

    >>> cols = Columns("trace")
    >>> a = column(cols, "trace", "x", lambda: [1])
    >>> a is column(cols, "trace", "x", lambda: [2])
    True
    >>> column(None, "trace", "x", lambda: [2])  # no Columns: computed every time
    [2]
    >>> column(cols, "another trace", "x", lambda: [3])  # not this trace's: computed
    [3]
    """

    __slots__ = ("_cols", "trace")

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self._cols: dict[str, Any] = {}

    def get(self, name: str, make: Callable[[], _T]) -> _T:
        """The column ``name``: ``make()`` the first time, the same object afterwards."""
        try:
            return self._cols[name]  # type: ignore[no-any-return]
        except KeyError:
            value = make()
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            self._cols[name] = value
            return value

    def put(self, name: str, value: Any) -> None:
        """Store the column ``name`` computed elsewhere (:func:`orchestrace.core._blocked.prefill`),
        read-only as :meth:`get` makes it."""
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        self._cols[name] = value

    def has(self, name: str) -> bool:
        """Whether the column ``name`` is already computed."""
        return name in self._cols


def column(columns: Columns | None, trace: Any, name: str, make: Callable[[], _T]) -> _T:
    """``make()``, or the column ``name`` of ``columns`` when they are ``trace``'s."""
    if columns is None or columns.trace is not trace:
        return make()
    return columns.get(name, make)


def _short(value: Any, limit: int = 30) -> str:
    s = value if isinstance(value, str) else repr(value)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def cycle_message(names: Sequence[str]) -> tuple[str, str]:
    """``(message, hint)`` of an ``edge.cycle`` problem for a cycle given in edge order."""
    shown = [_short(x) for x in names[:_MAX_LISTED]]
    ring = " → ".join([*shown, shown[0]]) if len(names) <= _MAX_LISTED else " → ".join(shown) + " → …"
    return (f"dependency edges form a {len(names)}-event cycle: {ring}",
            "dependency edges (every type but temporal and safety_flow, message included) must not loop; "
            "remove or reverse one edge of the cycle")


def duplicate_message(event_id: str, first_path: str) -> tuple[str, str]:
    """``(message, hint)`` of an ``id.duplicate`` problem."""
    return f"event id {_short(event_id, 60)!r} is already used by {first_path}", "give every event a unique id"


def dangling_message(end: str, value: str) -> tuple[str, str]:
    """``(message, hint)`` of an ``edge.dangling`` problem (``end`` is ``src`` or ``dst``)."""
    return f"edge {end} {_short(value, 60)!r} is not the id of any event", "add the event, or fix the id"


class IdIndex:
    """Event id → position via 64-bit string hashes (numpy).

    Python's string hash (SipHash, seeded per process; cached on the string) is taken
    once per id and per key; ids go into a vectorised open-addressing table
    (:mod:`~orchestrace.core._idtable`; no sort) and keys are looked up in it. Should probing
    run long, the ids are sorted by hash instead and keys looked up with one ``searchsorted``
    over *sorted* needles (cache-friendly). Ids with equal hashes are
    compared as strings, so duplicates are exact and a true 64-bit collision between two
    ids switches to an exact dict. A key that is *not* an id but shares an id's hash would
    be taken for that id: with SipHash-64 that chance is about
    ``len(keys) · len(ids) / 2**64`` (≈ 5e-8 for a million edges into a million events).

    >>> ids = ["a", "b", "a"]
    >>> ix = IdIndex.of(ids)
    >>> ix.lookup(["b", "z", "a"]).tolist(), ix.duplicates().tolist()
    ([1, -1, 0], [2])
    """

    def __init__(self, hashes: np.ndarray, key_at: Any) -> None:
        self.hashes = hashes  # (n,) in event order
        self.key_at = key_at
        self.dict: dict[str, int] | None = None
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None  # (order, hashes in that order), made lazily
        # None: a small trace (numpy's per-call cost makes rounds dearer than a sort) or long probing
        self.table = _idtable.build(hashes) if len(hashes) >= TABLE_MIN_IDS else None
        if self.table is not None:
            later, first = self.table.later, self.table.first  # (k,) later occurrences of a hash, its first
        else:
            order, sorted_ = self._sorted_hashes()
            same = np.flatnonzero(sorted_[1:] == sorted_[:-1])
            later, first = order[same + 1], order[same]  # pairs of equal hashes (stable: later > first)
        if any(key_at(i) != key_at(j) for i, j in zip(later.tolist(), first.tolist(), strict=True)):  # a real collision
            self.dict = {}
            for i in range(len(hashes)):
                self.dict.setdefault(key_at(i), i)
        self._later = np.sort(later)

    def _sorted_hashes(self) -> tuple[np.ndarray, np.ndarray]:
        """(positions in hash order (n,), the hashes in that order): the fallback when the table gives up."""
        if self._sorted is None:
            order = stable_argsort_hashes(self.hashes)
            self._sorted = order, self.hashes[order]
        return self._sorted

    @classmethod
    def of(cls, ids: Sequence[str]) -> IdIndex:
        """The index of a list of ids."""
        return cls(np.fromiter(map(hash, ids), np.int64, len(ids)), ids.__getitem__)

    def duplicates(self) -> np.ndarray:
        """Positions of every later occurrence of an id (first occurrences excluded), sorted."""
        if self.dict is not None:
            return np.array([i for i in range(len(self.hashes)) if self.dict[self.key_at(i)] != i], np.int64)
        return self._later

    def lookup(self, keys: Sequence[str]) -> np.ndarray:
        """Position of each key's first occurrence, or -1."""
        if self.dict is not None:
            return np.fromiter(map(self.dict.get, keys, repeat(-1)), np.int64, len(keys))
        return self._lookup_hashes(np.fromiter(map(hash, keys), np.int64, len(keys)))

    def lookup_of(self, items: Sequence[Any], getter: Any) -> np.ndarray:
        """:meth:`lookup` of ``getter(item)`` for every item, without building a key list."""
        if self.dict is not None:
            return self.lookup(list(map(getter, items)))
        return self._lookup_hashes(np.fromiter(map(hash, map(getter, items)), np.int64, len(items)))

    def lookup_hashes(self, hk: np.ndarray) -> np.ndarray:
        """:meth:`lookup` of keys given by their ``hash`` (only when :attr:`dict` is None: no
        collision among the ids; otherwise use :meth:`lookup`)."""
        if self.dict is not None:
            raise ValueError("the ids collide in 64 bits: look keys up by value (IdIndex.lookup)")
        return self._lookup_hashes(hk)

    def _lookup_hashes(self, hk: np.ndarray) -> np.ndarray:
        if self.table is not None:
            found = _idtable.find(self.table, self.hashes, hk)
            if found is not None:
                return found
        out = np.full(len(hk), -1, np.int64)
        order, sorted_ = self._sorted_hashes()
        if not len(sorted_) or not len(hk):
            return out
        o = np.argsort(hk)  # sorted needles make searchsorted cache-friendly
        hk_sorted = hk[o]
        pos = np.minimum(np.searchsorted(sorted_, hk_sorted), len(sorted_) - 1)
        hit = sorted_[pos] == hk_sorted
        out[o[hit]] = order[pos[hit]]
        return out


def first_positions(names: Iterable[Any], n: int) -> tuple[np.ndarray, dict[Any, int]]:
    """Each name's first position, and name → first position (keys in order of first appearance).

    One C-level pass (``dict.setdefault`` with a running count): two events share an agent
    exactly when they share a code, with no hashing of our own and no collision to confirm.
    The validator and the graph core both read agents this way (one shared column).

    >>> codes, first = first_positions(["m", "w1", "m", "w2", "w1"], 5)
    >>> codes.tolist(), first
    ([0, 1, 0, 3, 1], {'m': 0, 'w1': 1, 'w2': 3})
    """
    first: dict[Any, int] = {}
    return np.fromiter(map(first.setdefault, names, count()), np.int64, n), first


def stable_argsort_small(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integer keys in ``[0, bound)``, ~10× faster.

    numpy's stable sort of 64-bit keys is a merge sort; here each key is made unique as
    ``key · m + position`` and sorted *by value* (numpy's vectorised sort): the positions,
    read back as ``value mod m``, are exactly the stable order.

    >>> stable_argsort_small(np.array([2, 0, 2, 1, 0]), 3).tolist()
    [1, 4, 3, 0, 2]
    """
    m = len(keys)
    if m == 0 or bound * m >= 2**62:
        return np.argsort(keys, kind="stable")
    comp = keys.astype(np.int64) * m + np.arange(m, dtype=np.int64)
    comp.sort()
    return comp % m


def stable_argsort_hashes(hashes: np.ndarray) -> np.ndarray:
    """``np.argsort(hashes, kind="stable")`` of 64-bit hashes: an unstable (vectorised) argsort,
    then each run of equal hashes — duplicates, rare — put back in position order.

    >>> stable_argsort_hashes(np.array([5, -1, 5, 5, 0])).tolist()
    [1, 4, 0, 2, 3]
    """
    order = np.argsort(hashes)
    if len(order) < 2:
        return order if len(order) else np.argsort(hashes, kind="stable")
    sorted_ = hashes[order]
    same = np.flatnonzero(sorted_[1:] == sorted_[:-1])
    if same.size:
        in_run = np.zeros(len(order), dtype=bool)
        in_run[same] = True
        in_run[same + 1] = True
        idx = np.flatnonzero(in_run)  # runs are contiguous: reorder them by (hash, position)
        sub = order[idx]
        order[idx] = sub[np.lexsort((sub, sorted_[idx]))]
    return order


def unique_ints(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of an integer array, without its lazy import of ``numpy.ma`` (~25 ms
    of start-up that numpy ≥ 2 spends on the first plain ``np.unique`` call of a process).

    >>> unique_ints(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    s = np.sort(np.asarray(a).ravel())
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def find_cycle(src: np.ndarray, dst: np.ndarray, n: int) -> list[int] | None:
    """One directed cycle (node list in edge order) in the graph ``src → dst``, or None.

    Vectorised Kahn peel, frontier by frontier (``np.bincount`` in-degrees, CSR
    gathers); only if nodes are left over is a cycle walked out of them. The cycle is
    rotated to start at its smallest node.

    >>> find_cycle(np.array([0, 1]), np.array([1, 2]), 3) is None
    True
    """
    if not len(src):
        return None
    nodes, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
    k, e = len(nodes), len(src)
    s, d = inv[:e], inv[e:]
    order = stable_argsort_small(s, k)
    d_sorted = d[order]
    indptr = np.zeros(k + 1, np.int64)
    np.cumsum(np.bincount(s, minlength=k), out=indptr[1:])
    indeg = np.bincount(d, minlength=k)
    frontier = np.flatnonzero(indeg == 0)
    while frontier.size:
        starts, stops = indptr[frontier], indptr[frontier + 1]
        counts = stops - starts
        total = int(counts.sum())
        if not total:
            break
        # positions of every out-edge of the frontier, without a Python loop
        offs = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
        targets = d_sorted[offs]
        if total > k // 8:
            indeg -= np.bincount(targets, minlength=k)
        else:
            np.subtract.at(indeg, targets, 1)
        cand = unique_ints(targets)
        frontier = cand[indeg[cand] == 0]
    left = indeg > 0
    if not left.any():
        return None
    # every leftover node has an in-edge from a leftover node: walk those backwards
    both = left[s] & left[d]
    pred = np.full(k, -1, np.int64)
    pred[d[both]] = s[both]
    seen: dict[int, int] = {}
    walk: list[int] = []
    node = int(np.flatnonzero(left)[0])
    while node not in seen:
        seen[node] = len(walk)
        walk.append(node)
        node = int(pred[node])
    loop = [int(nodes[x]) for x in walk[seen[node]:][::-1]]  # predecessor walk reversed = edge order
    r = loop.index(min(loop))
    return loop[r:] + loop[:r]
