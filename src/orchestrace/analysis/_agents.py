"""The agents and time views of a trace graph: per-agent busy timelines, the spawn tree, and
the number of events in progress over time. :class:`~orchestrace.analysis.graph.TraceGraph`
exposes each as a method (``g.timelines()``, ``g.spawn_tree()``, ``g.concurrency()``,
``g.peak_concurrency``); the result records are importable from ``orchestrace.analysis.graph``.
The functions here take the graph's arrays (per event: ``agent`` code, start ``t``, end ``t_end``,
``duration``, ``type`` code), so they sit below the graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core._dag import EVENT_CODE
from ..core.trace import Event
from ..vocab import EventType
from ._csr import _EMPTY, _I32

_SPAWN = EVENT_CODE[EventType.SPAWN]


@dataclass(frozen=True)
class Timelines:
    """Per-agent busy intervals (overlapping events of one agent merged).

    ``agent`` (int32), ``start``, ``end`` (float64) — one row per merged interval, sorted
    by agent then start; ``busy_s[a]`` = Σ (end − start) over agent ``a``'s intervals.
    """

    agent: np.ndarray
    start: np.ndarray
    end: np.ndarray
    busy_s: np.ndarray


@dataclass(frozen=True)
class SpawnTree:
    """Who spawned whom (agent codes). ``parent[a]`` = spawner of ``a`` (-1 for roots);
    ``depth[a]`` = spawn edges from a root (-1 if unreachable from a root, i.e. a spawn
    cycle); ``children[a]`` = distinct agents ``a`` spawned; ``spawned`` = agents that
    were spawned at least once."""

    parent: np.ndarray
    depth: np.ndarray
    children: dict[int, list[int]]
    spawned: np.ndarray
    roots: list[int]

    @property
    def max_depth(self) -> int:
        """Largest depth (0 when nobody is spawned)."""
        return int(self.depth.max()) if self.depth.size else 0

    @property
    def max_fanout(self) -> int:
        """Most distinct children of one agent."""
        return max((len(c) for c in self.children.values()), default=0)


@dataclass(frozen=True)
class Concurrency:
    """Number of events in progress over time (events of zero duration excluded).

    ``times[k]`` is a change point and ``counts[k]`` the number of running events on
    ``[times[k], times[k+1])``; an event ending exactly when another starts does not
    overlap it. ``peak = counts.max()`` (0 for no timed events).
    """

    times: np.ndarray
    counts: np.ndarray
    peak: int


def timelines(agent: np.ndarray, t: np.ndarray, t_end: np.ndarray, n_agents: int) -> Timelines:
    """Per-agent busy intervals: events of one agent sorted by start, overlaps merged (:meth:`TraceGraph.timelines`)."""
    order = np.lexsort((t, agent))
    a, s, e = agent[order], t[order], np.maximum(t_end[order], t[order])
    na = n_agents
    if not order.size:
        return Timelines(_EMPTY, np.zeros(0), np.zeros(0), np.zeros(na))
    # running max of ends within each agent: offset agents so one accumulate does all
    span = float(e.max() - s.min()) + 1.0
    off = a.astype(np.float64) * span - s.min()
    run = np.maximum.accumulate(e + off) - off
    new = np.ones(a.size, dtype=bool)
    new[1:] = (a[1:] != a[:-1]) | (s[1:] > run[:-1])
    starts = np.flatnonzero(new)
    ends_at = np.r_[starts[1:] - 1, a.size - 1]
    ia, st, en = a[starts], s[starts], run[ends_at]
    busy = np.bincount(ia, weights=en - st, minlength=na)
    return Timelines(ia.astype(_I32), st, en, busy)


def spawn_tree(type_code: np.ndarray, agent: np.ndarray, events: Sequence[Event],
               agent_index: dict[str, int]) -> SpawnTree:
    """The spawn tree over agent codes from ``spawn`` events (``agent`` spawns ``to``) (:meth:`TraceGraph.spawn_tree`)."""
    na = len(agent_index)
    parent = np.full(na, -1, dtype=_I32)
    children: dict[int, list[int]] = {}
    ev = events
    ai = agent_index
    for i in np.flatnonzero(type_code == _SPAWN).tolist():
        to = ev[i].to
        if to is None:
            continue
        p, c = int(agent[i]), ai[to]
        kids = children.setdefault(p, [])
        if c not in kids:
            kids.append(c)
        if parent[c] < 0 and c != p:
            parent[c] = p
    spawned = parent >= 0
    roots = [a for a in range(na) if not spawned[a]]
    depth = np.full(na, -1, dtype=_I32)
    frontier = roots
    d = 0
    while frontier:
        nxt: list[int] = []
        for a in frontier:
            if depth[a] < 0:
                depth[a] = d
                nxt.extend(k for k in children.get(a, ()) if depth[k] < 0 and parent[k] == a)
        frontier, d = nxt, d + 1
    return SpawnTree(parent, depth, children, np.flatnonzero(spawned).astype(_I32), roots)


def concurrency(t: np.ndarray, t_end: np.ndarray, duration: np.ndarray) -> Concurrency:
    """Events in progress over time by a sweep over sorted starts and ends (:meth:`TraceGraph.concurrency`)."""
    timed = duration > 0
    s, e = t[timed], t_end[timed]
    if not s.size:
        return Concurrency(np.zeros(0), np.zeros(0, dtype=np.int64), 0)
    times = np.concatenate([e, s])
    delta = np.concatenate([np.full(e.size, -1, np.int64), np.ones(s.size, np.int64)])
    order = np.argsort(times, kind="stable")  # ends listed first: at a tie they close first
    times, counts = times[order], np.cumsum(delta[order])
    last = np.ones(times.size, dtype=bool)
    last[:-1] = times[1:] != times[:-1]  # keep the count after the last change at each time
    return Concurrency(times[last], counts[last], int(counts.max()))


def peak_concurrency(t: np.ndarray, t_end: np.ndarray, duration: np.ndarray) -> int:
    """Most events in progress at once (= ``concurrency().peak``, via two sorts only) (:meth:`TraceGraph.peak_concurrency`)."""
    timed = duration > 0
    s, e = np.sort(t[timed]), np.sort(t_end[timed])
    if not s.size:
        return 0
    running = np.arange(1, s.size + 1) - np.searchsorted(e, s, side="right")
    return int(running.max())
