"""Array kernels of the trace graph: CSR adjacency, neighbour gathering, de-duplication, and
per-event columns pulled out of the events with C-level ``map`` passes (no Python loop).

>>> import numpy as np
>>> ptr, idx = _csr(np.array([0, 0, 1]), np.array([1, 2, 2]), 3)
>>> ptr.tolist(), idx.tolist()
([0, 2, 3, 3], [1, 2, 2])
>>> [a.tolist() for a in _gather(ptr, idx, np.array([0, 1]))]
[[1, 2, 2], [0, 0, 1]]
"""

from __future__ import annotations

import itertools
import operator

import numpy as np

from ..core._dag import stable_argsort_small

_I32 = np.int32
_EMPTY = np.zeros(0, dtype=_I32)


def _csr(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (``ptr``, ``idx``) of ``src → dst``: neighbours of ``v`` are ``idx[ptr[v]:ptr[v+1]]``."""
    order = stable_argsort_small(src, n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[order].astype(_I32, copy=False)


def _gather(ptr: np.ndarray, idx: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All CSR neighbours of ``nodes``: (neighbour, owner) pairs, one per edge."""
    starts = ptr[nodes]
    counts = ptr[nodes + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return _EMPTY, _EMPTY
    csum = np.cumsum(counts)
    pos = np.arange(total, dtype=np.int64) + np.repeat(starts - (csum - counts), counts)
    return idx[pos], np.repeat(nodes, counts)


def _dedupe(a: np.ndarray, stamp: np.ndarray) -> np.ndarray:
    """``a`` without repeated values, in O(len(a)) (``stamp`` is scratch space of length n)."""
    if a.size < 2:
        return a
    pos = np.arange(a.size)
    stamp[a] = pos  # the last write for each value wins
    return a[stamp[a] == pos]


def _bools(values: list[object], target: object, n: int) -> np.ndarray:
    """``v is target`` for each value, as a bool array (C-level map, no Python loop).

    An optional flag is often absent from every event: then no per-event pass is needed.
    """
    if values and values[0] is None and _all_none(values):
        return np.zeros(n, dtype=bool)
    return np.fromiter(map(operator.is_, values, itertools.repeat(target)), dtype=bool, count=n)


def _all_none(values: list[object]) -> bool:
    """Every value is None (``list.count`` compares with ``==``, which None answers by identity)."""
    try:
        return values.count(None) == len(values)
    except Exception:  # a value whose ``==`` misbehaves (a Trace built in code): not all None
        return False


def _floats(values: list) -> np.ndarray:
    """Floats with None → NaN; an integer beyond the float range → inf (never OverflowError)."""
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:
        return np.array([np.inf if v is not None and abs(v) > 1e308 else v for v in values], dtype=np.float64)
