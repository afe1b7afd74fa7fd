"""Level-order kernels of the trace graph: one Kahn pass by frontier levels with the longest-path DP,
the level sweeps that propagate a mask along dependency edges, and frontier BFS on a CSR.

They take the graph's arrays (CSR adjacency, durations, the per-edge overlap), so they sit below
:class:`~orchestrace.analysis.graph.TraceGraph`, whose ``_kahn``, ``sweep_forward``,
``sweep_backward`` and ``ancestor_mask`` / ``descendant_mask`` call them.

>>> import numpy as np
>>> from ._csr import _csr
>>> ptr, idx = _csr(np.array([0, 0, 1]), np.array([1, 2, 2]), 3)       # 0 → 1 → 2, 0 → 2
>>> lv = kahn_levels(np.array([1, 2, 2]), ptr, idx, np.array([1.0, 2.0, 0.5]), lambda s, d: np.zeros(s.size))
>>> lv.order.tolist(), lv.level.tolist(), lv.finish.tolist()
([0, 1, 2], [0, 1, 2], [1.0, 3.0, 3.5])
>>> sweep_forward(np.array([False, True, False]), lv.lv_src, lv.lv_dst, lv.lv_ptr).tolist()
[False, True, True]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..core._dag import unique_ints
from ._csr import _EMPTY, _I32, _dedupe, _gather


class Levels(NamedTuple):
    """What one Kahn pass finds (see :func:`kahn_levels`)."""

    order: np.ndarray
    level: np.ndarray
    finish: np.ndarray
    ready: np.ndarray
    level_ptr: list[int]
    lv_src: np.ndarray
    lv_dst: np.ndarray
    lv_ptr: list[int]


def kahn_levels(dep_dst: np.ndarray, succ_ptr: np.ndarray, succ_idx: np.ndarray, duration: np.ndarray,
                overlap: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Levels:
    """One Kahn pass by frontier levels that also runs the longest-path DP.

    ``finish[v] = ready[v] + duration[v]``, ``ready[v] = max over predecessors u of finish[u] −
    overlap(u, v)`` (0 for sources); ``order[level_ptr[L]:level_ptr[L+1]]`` are the level-L vertices,
    and ``lv_src/lv_dst`` are the dependency edges grouped by the level of their source (edges of
    level L at ``lv_ptr[L]:lv_ptr[L+1]``). Vertices on a cycle get level −1 and are not in ``order``.
    """
    n = duration.size
    indeg = np.bincount(dep_dst, minlength=n).astype(np.int64)
    level = np.full(n, -1, dtype=_I32)
    ready = np.zeros(n)
    finish = np.zeros(n)
    frontier = np.flatnonzero(indeg == 0).astype(_I32)
    finish[frontier] = duration[frontier]
    stamp = np.zeros(n, dtype=np.int64)
    parts, srcs, dsts = [], [], []
    level_ptr, lv_ptr = [0], [0]
    lvl = 0
    while frontier.size:
        level[frontier] = lvl
        parts.append(frontier)
        level_ptr.append(level_ptr[-1] + frontier.size)
        tgt, src = _gather(succ_ptr, succ_idx, frontier)
        srcs.append(src)
        dsts.append(tgt)
        lv_ptr.append(lv_ptr[-1] + tgt.size)
        if not tgt.size:
            break
        np.maximum.at(ready, tgt, finish[src] - overlap(src, tgt))
        np.subtract.at(indeg, tgt, 1)
        nxt = _dedupe(tgt[indeg[tgt] == 0], stamp)
        finish[nxt] = ready[nxt] + duration[nxt]
        frontier = nxt
        lvl += 1
    order = np.concatenate(parts) if parts else _EMPTY
    lv_src = np.concatenate(srcs) if srcs else _EMPTY
    lv_dst = np.concatenate(dsts) if dsts else _EMPTY
    return Levels(order, level, finish, ready, level_ptr, lv_src, lv_dst, lv_ptr)


def bfs(n: int, ptr: np.ndarray, idx: np.ndarray, seeds: np.ndarray, inclusive: bool) -> np.ndarray:
    """Bool mask of the vertices reachable from ``seeds`` along the CSR (``inclusive``: the seeds too)."""
    seen = np.zeros(n, dtype=bool)
    stamp = np.zeros(n, dtype=np.int64)
    frontier = unique_ints(np.asarray(seeds, dtype=_I32))
    if inclusive:
        seen[frontier] = True
    while frontier.size:
        nb, _ = _gather(ptr, idx, frontier)
        nb = _dedupe(nb[~seen[nb]], stamp)
        seen[nb] = True
        frontier = nb
    return seen


def sweep_forward(mask: np.ndarray, src: np.ndarray, dst: np.ndarray, ptr: list[int], *,
                  blocked: np.ndarray | None = None, parent: np.ndarray | None = None) -> np.ndarray:
    """``mask`` propagated along the level-grouped edges, one step per level (see
    :meth:`~orchestrace.analysis.graph.TraceGraph.sweep_forward`)."""
    mask = mask.copy()
    for lo, hi in zip(ptr[:-1], ptr[1:], strict=True):
        if lo == hi:
            continue
        s = src[lo:hi]
        sel = mask[s]
        if not sel.any():
            continue
        d = dst[lo:hi][sel]
        if blocked is not None or parent is not None:
            keep = ~mask[d]
            if blocked is not None:
                keep &= ~blocked[d]
            d = d[keep]
            if parent is not None:
                parent[d] = s[sel][keep]
        mask[d] = True
    return mask


def sweep_backward(mask: np.ndarray, src: np.ndarray, dst: np.ndarray, ptr: list[int]) -> np.ndarray:
    """``mask | ancestors(mask)`` by a reverse level sweep over the level-grouped edges."""
    mask = mask.copy()
    for k in range(len(ptr) - 1, 0, -1):
        lo, hi = ptr[k - 1], ptr[k]
        if lo == hi:
            continue
        sel = mask[dst[lo:hi]]
        if sel.any():
            mask[src[lo:hi][sel]] = True
    return mask
