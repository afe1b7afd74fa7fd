"""The trace as integer-indexed numpy arrays: CSR adjacency, topological levels, critical path.

:class:`TraceGraph` is the analysis core that measures, rewards and credit build on. Event
``i`` of the trace is vertex ``i``; every per-event quantity is a numpy array of length
``n`` and every per-edge quantity an array of length ``m``. No per-event Python objects
are touched after :meth:`TraceGraph.from_trace` (a handful of C-level ``map`` passes).

Dependency edges
    ``causal, spawn, return, aggregate, tool_dependency, message``
    (:data:`~orchestrace.vocab.DEPENDENCY_EDGE_TYPES`, the one set the validator checks too):
    "the destination used the source". ``temporal`` edges only order events and
    ``safety_flow`` edges annotate taint; neither is a dependency, so neither enters the
    topological order, the critical path, ancestors/descendants or wasted work. (Safety
    taint propagation, :mod:`orchestrace.analysis.measures`, follows ``safety_flow`` edges as well.)
    A cycle of dependency edges is refused with the validator's own ``edge.cycle`` problem.

Durations (no double counting)
    ``t_end`` comes from the trace. A missing end is filled by the rule of
    :data:`MISSING_END_RULE`: *the event lasts until the first thing that followed it
    started — the same agent's next event or the earliest event that depends on it,
    whichever is first; an event followed by neither has zero duration*. A ``spawn`` is
    therefore the act of spawning (it ends when the child starts), not the child's life,
    and an orchestrator waiting for a sub-agent is not busy. When the rule is used, a
    sentence saying so is in :attr:`TraceGraph.assumptions` (a tuple fixed when the graph
    is built). Negative durations are clipped to 0.

Critical path
    The longest dependency path, each event weighted by its duration **clipped at the
    start of the next event on the path** (an event that is still running when an event
    depending on it starts counts only up to that start). So on a valid trace (dependency
    edges never go back in time) the critical path is never longer than the run's span,
    ``max t_end − min t``, and never longer than the total work ``Σ duration``.

Levels
    ``level[v]`` = number of edges on the longest dependency path from a source to ``v``;
    every dependency edge goes from a lower to a higher level, so sweeping levels in order
    (one vectorised step per level) is a topological traversal.

Final output
    :attr:`TraceGraph.output` is (1) the latest ``aggregate``/``return`` that is an ancestor
    of the stop decision; else (2) the stop's latest dependency predecessor; else (3) the
    latest event (ties: the later index). The rule used is in :attr:`TraceGraph.output_rule`.

>>> from orchestrace.core.builder import TraceBuilder
>>> b = TraceBuilder("g")
>>> d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
>>> s1 = b.spawn("w1", t=1, t_end=1, after=d); s2 = b.spawn("w2", t=1, t_end=1, after=d)
>>> c1 = b.tool_call("w1", "x", t=1, t_end=4, after=s1); c2 = b.tool_call("w2", "x", t=1, t_end=2, after=s2)
>>> r1 = b.return_("w1", t=4, t_end=4, after=c1); r2 = b.return_("w2", t=2, t_end=2, after=c2)
>>> a = b.aggregate(t=4, t_end=5, after=[r1, r2]); st = b.decide("stop", action="stop", t=5, t_end=5, after=a)
>>> g = TraceGraph.from_trace(b.build())
>>> cp = g.critical_path()
>>> [g.ids[i] for i in cp.events], cp.length_s, cp.steps
(['e1', 'e2', 'e4', 'e6', 'e8', 'e9'], 5.0, 6)
>>> g.ids[g.output], g.output_rule
('e8', 'aggregate/return ancestor of the stop decision')
>>> [g.ids[i] for i in g.ancestors([g.index["e6"]])]
['e1', 'e2', 'e4']
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._problems import problem
from ..core._dag import (
    DEPENDENCY_CODES,
    EDGE_CODE,
    EVENT_CODE,
    Columns,
    IdIndex,
    column,
    cycle_message,
    dangling_message,
    duplicate_message,
    find_cycle,
    first_positions,
)
from ..errors import TraceInvalidError
from ..vocab import DEPENDENCY_EDGE_TYPES, EdgeType, EventType
from . import _agents, _levels
from ._agents import Concurrency, SpawnTree, Timelines
from ._csr import _EMPTY, _I32, _bools, _csr, _floats
from ._levels import bfs, kahn_levels

if TYPE_CHECKING:
    from ..core.trace import Trace

__all__ = [
    "DEPENDENCY_EDGE_TYPES",
    "EDGE_TYPES",
    "EVENT_TYPES",
    "Concurrency",
    "CriticalPath",
    "SpawnTree",
    "Timelines",
    "TraceGraph",
]

#: Event types in code order: ``g.type == EVENT_TYPES.index(EventType.TOOL_CALL)``.
EVENT_TYPES: tuple[EventType, ...] = tuple(EventType)
#: Edge types in code order.
EDGE_TYPES: tuple[EdgeType, ...] = tuple(EdgeType)
_EV = {et: np.int8(i) for et, i in EVENT_CODE.items()}
_ED = {et: np.int8(i) for et, i in EDGE_CODE.items()}
_EV_CODE_OR_NONE, _ED_CODE_OR_NONE = EVENT_CODE, EDGE_CODE  # the validator's tables (.get → −1)
_DEP_CODES = DEPENDENCY_CODES
_V = TypeVar("_V")

#: How a missing ``t_end`` is filled (see the module docstring).
MISSING_END_RULE = (
    "until the first thing that followed it started: the same agent's next event or the earliest "
    "event that depends on it, whichever is first (zero when followed by neither), so a spawn lasts "
    "until the child starts, not the child's whole life"
)


@dataclass(frozen=True)
class CriticalPath:
    """The duration-weighted longest dependency path.

    ``events`` (int32, source → sink) are vertex indices; ``length_s`` = Σ duration over
    them; ``steps`` = ``len(events)``.
    """

    events: np.ndarray
    length_s: float
    steps: int


class TraceGraph:
    """Integer-indexed view of one :class:`~orchestrace.Trace` (see the module docstring).

    Arrays (length ``n`` events unless said otherwise):

    ``ids`` (list[str]), ``index`` (dict id → int), ``t``, ``t_end``, ``duration``
    (float64 s), ``end_known`` (bool), ``type`` (int8, code order :data:`EVENT_TYPES`),
    ``agent`` (int32, names in ``agents``), ``edge_src``/``edge_dst`` (int32, length ``m``),
    ``edge_type`` (int8, :data:`EDGE_TYPES`), ``dep_src``/``dep_dst`` (dependency edges only),
    ``succ_ptr``/``succ_idx`` and ``pred_ptr``/``pred_idx`` (CSR over dependency edges).

    Lazily derived (cached): ``level``, ``topo_order()``, ``critical_path()``, ``output``,
    ``stop``, ``root_agent``, token/error/trust/privilege columns, ``timelines()``,
    ``spawn_tree()``, ``concurrency()``. Layers above (measures, credit) cache what they
    derive from the graph through :meth:`derived`; nothing else is written to a graph.
    """

    def __init__(self, trace: Trace, columns: Columns | None = None) -> None:
        """Use :meth:`from_trace`."""
        self.trace = trace
        self._columns = columns
        self.trace_id = trace.trace_id
        #: What the graph assumed where the trace was silent (e.g. filled end times).
        self.assumptions: tuple[str, ...] = ()
        self._derived: dict[Hashable, Any] = {}
        ev = trace.events
        n = self.n = len(ev)
        # columns the validator may already have pulled out of this trace (handed over explicitly as a _dag.Columns)
        self.ids: list[str] = column(columns, trace, "list:id", lambda: list(map(attrgetter("id"), ev)))
        self.t = column(columns, trace, "t", lambda: np.fromiter(map(attrgetter("t"), ev), dtype=np.float64, count=n))
        t_end = column(columns, trace, "float:t_end", lambda: _floats(
            column(columns, trace, "list:t_end", lambda: list(map(attrgetter("t_end"), ev))))).reshape(n)
        codes = column(columns, trace, "event_type_code", lambda: np.fromiter(
            map(_EV_CODE_OR_NONE.get, map(attrgetter("type"), ev), itertools.repeat(-1)), dtype=np.int8, count=n))
        if n and codes.min() < 0:  # not an EventType: fail as the plain column would
            codes = np.fromiter(map(_EV.__getitem__, map(attrgetter("type"), ev)), dtype=np.int8, count=n)
        self.type = codes
        # agents as first-position codes (the validator's column): acting agents in order of appearance
        agent_code, first_of = column(columns, trace, "agent_first", lambda: first_positions(
            map(attrgetter("agent"), ev), n))
        names = dict.fromkeys(first_of)
        for i in np.flatnonzero(self.type == _EV[EventType.SPAWN]).tolist():
            to = ev[i].to  # spawned agents that never act still exist
            if to is not None:
                names.setdefault(to, None)
        self.agents: list[str] = list(names)
        self.agent_index: dict[str, int] = dict(zip(self.agents, range(len(self.agents)), strict=True))
        rank = np.zeros(n, dtype=_I32)  # first position → agent index (positions ascend with the index)
        rank[np.fromiter(first_of.values(), np.int64, len(first_of))] = np.arange(len(first_of), dtype=_I32)
        self.agent = rank[agent_code]
        ed = trace.edges
        m = self.m = len(ed)
        ix = column(columns, trace, "id_index", lambda: IdIndex.of(self.ids))  # the validator's id index (one core)
        dup = ix.duplicates()
        if dup.size:
            raise _duplicate_ids(self.ids, dup, ix)
        src = column(columns, trace, "edge_src", lambda: ix.lookup_of(ed, attrgetter("src")))  # (m,) −1 = no such event
        dst = column(columns, trace, "edge_dst", lambda: ix.lookup_of(ed, attrgetter("dst")))
        if m and (src.min() < 0 or dst.min() < 0):
            raise _dangling(ed, src, dst)
        self.edge_src, self.edge_dst = src.astype(_I32), dst.astype(_I32)
        etype = column(columns, trace, "edge_type_code", lambda: np.fromiter(
            map(_ED_CODE_OR_NONE.get, map(attrgetter("type"), ed), itertools.repeat(-1)), dtype=np.int8, count=m))
        if m and etype.min() < 0:  # not an EdgeType: fail as the plain column would
            etype = np.fromiter(map(_ED.__getitem__, map(attrgetter("type"), ed)), dtype=np.int8, count=m)
        self.edge_type = etype
        dep = _DEP_CODES[self.edge_type] if m else np.zeros(0, dtype=bool)
        self.dep_src = self.edge_src[dep]
        self.dep_dst = self.edge_dst[dep]
        self.succ_ptr, self.succ_idx = _csr(self.dep_src, self.dep_dst, n)
        self.pred_ptr, self.pred_idx = _csr(self.dep_dst, self.dep_src, n)

        self.end_known = ~np.isnan(t_end)
        if not self.end_known.all():
            t_end = self._fill_missing_ends(t_end)
        self.t_end = t_end
        self.duration = np.maximum(t_end - self.t, 0.0)

    @cached_property
    def index(self) -> dict[str, int]:
        """Event id → vertex index (built on first use)."""
        return dict(zip(self.ids, range(self.n), strict=True))

    @classmethod
    def from_trace(cls, trace: Trace, *, columns: Columns | None = None) -> TraceGraph:
        """Build the graph; raises :class:`~orchestrace.errors.TraceInvalidError` on duplicate
        event ids, edges to unknown events, or a dependency cycle (naming its members).

        ``columns`` — the :class:`~orchestrace.core._dag.Columns` a :func:`~orchestrace.validate`
        call of the same trace filled — are reused instead of being pulled out again."""
        g = cls(trace, columns)
        g._kahn  # noqa: B018 — detect cycles up front
        return g

    def __repr__(self) -> str:
        return f"TraceGraph({self.trace_id!r}, n={self.n}, m={self.m}, agents={len(self.agents)})"

    def derived(self, key: Hashable, compute: Callable[[], _V]) -> _V:
        """``compute()``, cached on this graph under ``key``.

        The explicit cache for values that other layers derive from the graph (the unit
        index of credit, the error taint of measures, …). ``compute`` must be a pure function
        of the graph, so a cached value is the value: callers never see a difference, only
        the time saved. Keys are namespaced by their layer (``("credit", "roles")``).

        >>> from orchestrace import synth
        >>> g = TraceGraph.from_trace(synth(events=40, agents=2, seed=0))
        >>> g.derived(("doc", "events"), lambda: g.n), g.derived(("doc", "events"), lambda: -1)
        (40, 40)
        """
        try:
            return self._derived[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._derived[key] = compute()
            return value

    # ------------------------------------------------------------------ durations
    def _fill_missing_ends(self, t_end: np.ndarray) -> np.ndarray:
        """:data:`MISSING_END_RULE`: min(the agent's next start, the earliest dependant's start), ≥ t."""
        n = self.n
        miss = ~self.end_known
        order = np.lexsort((np.arange(n), self.t, self.agent))  # by agent, then start, then index
        a_s, t_s = self.agent[order], self.t[order]
        nxt = np.full(n, np.inf)
        same = np.zeros(n, dtype=bool)
        same[:-1] = a_s[1:] == a_s[:-1]
        nxt[:-1][same[:-1]] = t_s[1:][same[:-1]]
        fill = np.empty(n)
        fill[order] = nxt  # the agent's next start (inf for its last event)
        if self.dep_src.size:
            np.minimum.at(fill, self.dep_src, self.t[self.dep_dst])  # … or the earliest dependant's start
        fill = np.where(np.isfinite(fill), np.maximum(fill, self.t), self.t)  # followed by neither: 0 s
        self.assumptions = (
            f"{int(miss.sum())} of {n} events have no end time; each lasts {MISSING_END_RULE}",
        )
        return np.where(miss, fill, t_end)

    # ------------------------------------------------------------------ per-event columns
    def _column(self, name: str) -> list:
        return column(self._columns, self.trace, f"list:{name}", lambda: list(map(attrgetter(name), self.trace.events)))

    @cached_property
    def _tokens(self) -> tuple[np.ndarray, np.ndarray, bool]:
        raw_in, raw_out = (column(self._columns, self.trace, f"float:{f}", lambda f=f: _floats(self._column(f))).reshape(self.n)  # type: ignore[misc]
                           for f in ("tokens_in", "tokens_out"))
        known = bool((~np.isnan(raw_in)).any() or (~np.isnan(raw_out)).any())
        return np.nan_to_num(raw_in), np.nan_to_num(raw_out), known

    @property
    def tokens_in(self) -> np.ndarray:
        """Tokens read per event (float64; missing → 0)."""
        return self._tokens[0]

    @property
    def tokens_out(self) -> np.ndarray:
        """Tokens written per event (float64; missing → 0)."""
        return self._tokens[1]

    @property
    def tokens_known(self) -> bool:
        """True when at least one event reports ``tokens_in`` or ``tokens_out``."""
        return self._tokens[2]

    @cached_property
    def error(self) -> np.ndarray:
        """``error is True`` per event (bool)."""
        return _bools(self._column("error"), True, self.n)

    @cached_property
    def error_clean(self) -> np.ndarray:
        """``error is False`` per event: explicitly judged clean (bool)."""
        return _bools(self._column("error"), False, self.n)

    @cached_property
    def untrusted(self) -> np.ndarray:
        """``trusted is False`` per event (bool)."""
        return _bools(self._column("trusted"), False, self.n)

    @cached_property
    def privileged(self) -> np.ndarray:
        """``privileged is True`` per event (bool)."""
        return _bools(self._column("privileged"), True, self.n)

    @cached_property
    def turn(self) -> np.ndarray:
        """Model turns: ``message`` events addressed to nobody else (``to`` is None or the
        sender itself) — an agent's own work, not coordination (bool)."""
        msg = self.is_type(EventType.MESSAGE)
        idx = np.flatnonzero(msg)
        out = np.zeros(self.n, dtype=bool)
        sub = list(map(self.trace.events.__getitem__, idx.tolist()))  # C-level maps, no Python loop
        to, agent = list(map(attrgetter("to"), sub)), list(map(attrgetter("agent"), sub))
        out[idx] = (np.fromiter(map(operator.is_, to, itertools.repeat(None)), dtype=bool, count=len(sub))
                    | np.fromiter(map(operator.eq, to, agent), dtype=bool, count=len(sub)))
        return out

    def is_type(self, *kinds: EventType) -> np.ndarray:
        """Bool mask of events whose type is one of ``kinds``."""
        table = np.zeros(len(EVENT_TYPES), dtype=bool)
        table[[int(_EV[k]) for k in kinds]] = True
        return table[self.type]

    # ------------------------------------------------------------------ topology
    @cached_property
    def _kahn(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int], np.ndarray, np.ndarray]:
        """One Kahn pass by frontier levels that also runs the longest-path DP.

        Returns ``order, level, finish, ready, level_ptr, lv_src, lv_dst`` where
        ``finish[v] = ready[v] + duration[v]``, ``ready[v] = max over predecessors u of
        finish[u] − overlap(u, v)`` (0 for sources; :meth:`_overlap`), ``order[level_ptr[L]:level_ptr[L+1]]`` are the level-L vertices,
        and ``lv_src/lv_dst`` are the dependency edges grouped by the level of their source
        (edges of level L at ``lv_ptr[L]:lv_ptr[L+1]``, kept in ``_lv_ptr``).
        """
        lv = kahn_levels(self.dep_dst, self.succ_ptr, self.succ_idx, self.duration, self._overlap)
        if lv.order.size < self.n:
            raise self._cycle_error(lv.level < 0)
        self._lv_ptr = lv.lv_ptr
        return lv.order, lv.level, lv.finish, lv.ready, lv.level_ptr, lv.lv_src, lv.lv_dst

    def _overlap(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """How long ``src`` is still running after ``dst`` (which depends on it) started:
        ``clip(t_end[src] − t[dst], 0, duration[src])`` — the part of ``src`` that a path
        through ``src → dst`` does not count (see *Critical path* in the module docstring)."""
        return np.clip(self.t[src] + self.duration[src] - self.t[dst], 0.0, self.duration[src])

    def _cycle_error(self, remaining: np.ndarray) -> TraceInvalidError:
        """The validator's ``edge.cycle`` problem, located at an edge of one cycle."""
        keep = remaining[self.edge_src] & remaining[self.edge_dst] & _DEP_CODES[self.edge_type]
        cycle = find_cycle(self.edge_src[keep], self.edge_dst[keep], self.n)
        assert cycle is not None  # Kahn left these vertices: they hold a cycle
        on = np.flatnonzero(keep & (self.edge_src == cycle[0]) & (self.edge_dst == cycle[1 % len(cycle)]))
        message, hint = cycle_message([self.ids[i] for i in cycle])
        p = problem("edge.cycle", f"$.edges[{int(on[0])}]", message, hint)
        return TraceInvalidError(f"trace {self.trace_id!r}: {message}", [p])

    @property
    def level(self) -> np.ndarray:
        """Longest-hop level of each vertex (int32): every dependency edge goes up a level."""
        return self._kahn[1]

    @property
    def n_levels(self) -> int:
        """Number of levels (0 for an empty trace)."""
        return len(self._kahn[4]) - 1

    def topo_order(self) -> np.ndarray:
        """A topological order of the dependency DAG (int32 vertex indices, level by level).

        >>> from orchestrace import synth
        >>> g = TraceGraph.from_trace(synth(events=60, agents=3, seed=0))
        >>> pos = np.empty(g.n, int); pos[g.topo_order()] = np.arange(g.n)
        >>> bool((pos[g.dep_src] < pos[g.dep_dst]).all())
        True
        """
        return self._kahn[0]

    # ------------------------------------------------------------------ reachability
    def _bfs(self, ptr: np.ndarray, idx: np.ndarray, seeds: np.ndarray, inclusive: bool) -> np.ndarray:
        return bfs(self.n, ptr, idx, seeds, inclusive)

    def ancestor_mask(self, seeds: Iterable[int] | np.ndarray, *, inclusive: bool = False) -> np.ndarray:
        """Bool mask of vertices with a dependency path *to* some seed (frontier BFS on the
        predecessor CSR). ``inclusive`` also marks the seeds."""
        return self._bfs(self.pred_ptr, self.pred_idx, np.asarray(list(seeds) if not isinstance(seeds, np.ndarray) else seeds), inclusive)

    def descendant_mask(self, seeds: Iterable[int] | np.ndarray, *, inclusive: bool = False) -> np.ndarray:
        """Bool mask of vertices reachable *from* some seed along dependency edges."""
        return self._bfs(self.succ_ptr, self.succ_idx, np.asarray(list(seeds) if not isinstance(seeds, np.ndarray) else seeds), inclusive)

    def ancestors(self, seeds: Iterable[int] | np.ndarray, *, inclusive: bool = False) -> np.ndarray:
        """Sorted int32 indices of the ancestors of a set of vertices."""
        return np.flatnonzero(self.ancestor_mask(seeds, inclusive=inclusive)).astype(_I32)

    def descendants(self, seeds: Iterable[int] | np.ndarray, *, inclusive: bool = False) -> np.ndarray:
        """Sorted int32 indices of the descendants of a set of vertices."""
        return np.flatnonzero(self.descendant_mask(seeds, inclusive=inclusive)).astype(_I32)

    def sweep_forward(
        self, mask: np.ndarray, *, blocked: np.ndarray | None = None, parent: np.ndarray | None = None
    ) -> np.ndarray:
        """Propagate a bool mask along dependency edges in level order (one step per level).

        Returns ``mask | descendants(mask)``, except that vertices in ``blocked`` are never
        marked (and so never propagate) unless already set. When ``parent`` (int32, −1 =
        none) is given, it records for each newly marked vertex one marked predecessor it
        was reached from, so a path back to a seed can be read off.
        """
        _, _, _, _, _, src, dst = self._kahn
        return _levels.sweep_forward(mask, src, dst, self._lv_ptr, blocked=blocked, parent=parent)

    def sweep_backward(self, mask: np.ndarray) -> np.ndarray:
        """``mask | ancestors(mask)`` by a reverse level sweep (one step per level)."""
        _, _, _, _, _, src, dst = self._kahn
        return _levels.sweep_backward(mask, src, dst, self._lv_ptr)

    # ------------------------------------------------------------------ critical path
    def critical_path(self) -> CriticalPath:
        """The duration-weighted longest dependency path (level-by-level DP).

        ``finish[v] = duration[v] + max(finish[u] − overlap(u, v) for u → v)`` (0 without
        predecessors), ``overlap(u, v)`` the part of ``u`` still running when ``v`` started
        (:meth:`_overlap`); the path ends at ``argmax finish`` (ties: the highest level) and
        follows, backwards, a predecessor that sets ``v``'s ready time. Length = ``max
        finish`` seconds ≤ the run's span on a valid trace.
        """
        if self.n == 0:
            return CriticalPath(_EMPTY, 0.0, 0)
        _, level, finish, ready, _, _, _ = self._kahn
        cand = np.flatnonzero(finish == finish.max())
        end = int(cand[np.argmax(level[cand])])  # ties: the deepest, so zero-length tails count
        tight = finish[self.dep_src] - self._overlap(self.dep_src, self.dep_dst) == ready[self.dep_dst]
        parent = np.full(self.n, -1, dtype=np.int64)
        parent[self.dep_dst[tight]] = self.dep_src[tight]
        path = []
        v = end
        item = parent.item
        while v >= 0:
            path.append(v)
            v = item(v)
        events = np.array(path[::-1], dtype=_I32)
        return CriticalPath(events, float(finish[end]), len(path))

    @property
    def finish(self) -> np.ndarray:
        """Earliest finish of each event if it started when its last dependency finished (s)."""
        return self._kahn[2]

    # ------------------------------------------------------------------ stop, root, output
    @cached_property
    def stop(self) -> int:
        """Index of the stop decision (latest O5 decision whose action is not ``continue``), or −1."""
        ev = self.trace.events
        best, best_t = -1, -np.inf
        for i in np.flatnonzero(self.type == _EV[EventType.ORCHESTRATOR_DECISION]).tolist():
            d = ev[i].decision
            if d is not None and d.is_stop and self.t[i] >= best_t:
                best, best_t = i, self.t[i]
        return best

    @cached_property
    def root_agent(self) -> int:
        """The orchestrator's agent code: agent of the stop decision; else of the first
        ``orchestrator_decision``; else the first spawner that is never spawned; else the
        agent of the earliest event (−1 for an empty trace)."""
        if self.n == 0:
            return -1
        if self.stop >= 0:
            return int(self.agent[self.stop])
        dec = np.flatnonzero(self.type == _EV[EventType.ORCHESTRATOR_DECISION])
        if dec.size:
            return int(self.agent[dec[np.argmin(self.t[dec])]])
        tree = self.spawn_tree()
        for a in tree.children:
            if tree.parent[a] < 0:
                return a
        return int(self.agent[int(np.argmin(self.t))])

    def _latest(self, cand: np.ndarray) -> int:
        """Latest start among candidate indices (ties: the later index)."""
        tc = self.t[cand]
        return int(cand[np.flatnonzero(tc == tc.max())[-1]])

    @cached_property
    def _output(self) -> tuple[int, str]:
        if self.n == 0:
            return -1, "empty trace"
        s = self.stop
        if s >= 0:
            seed = np.zeros(self.n, dtype=bool)
            seed[s] = True
            anc = self.sweep_backward(seed)
            anc[s] = False
            cand = np.flatnonzero(anc & self.is_type(EventType.AGGREGATE, EventType.RETURN))
            if cand.size:
                return self._latest(cand), "aggregate/return ancestor of the stop decision"
            preds = self.pred_idx[self.pred_ptr[s]:self.pred_ptr[s + 1]]
            if preds.size:
                return self._latest(preds), "latest dependency predecessor of the stop decision"
            return self._latest(np.arange(self.n)), "stop decision has no predecessor: latest event"
        return self._latest(np.arange(self.n)), "no stop decision: latest event"

    @property
    def output(self) -> int:
        """Index of the final output event (rule in the module docstring), −1 if empty."""
        return self._output[0]

    @property
    def output_rule(self) -> str:
        """Which rule chose :attr:`output`."""
        return self._output[1]

    # ------------------------------------------------------------------ agents and time (._agents)
    def timelines(self) -> Timelines:
        """Per-agent busy intervals: events of one agent sorted by start, overlaps merged.

        >>> from orchestrace.core.builder import TraceBuilder
        >>> b = TraceBuilder("x"); _ = b.add("tool_call", "a", t=0, t_end=2)
        >>> _ = b.add("tool_call", "a", t=1, t_end=3); _ = b.add("tool_call", "a", t=5, t_end=6)
        >>> tl = TraceGraph.from_trace(b.build()).timelines()
        >>> tl.start.tolist(), tl.end.tolist(), tl.busy_s.tolist()
        ([0.0, 5.0], [3.0, 6.0], [4.0])
        """
        return _agents.timelines(self.agent, self.t, self.t_end, len(self.agents))

    def spawn_tree(self) -> SpawnTree:
        """The spawn tree over agent codes from ``spawn`` events (``agent`` spawns ``to``).

        >>> from orchestrace.core.builder import TraceBuilder
        >>> b = TraceBuilder("x"); _ = b.spawn("m", t=0); _ = b.spawn("w", t=1, by="m")
        >>> tree = TraceGraph.from_trace(b.build()).spawn_tree()
        >>> tree.max_depth, tree.max_fanout, tree.roots
        (2, 1, [0])
        """
        return _agents.spawn_tree(self.type, self.agent, self.trace.events, self.agent_index)

    def concurrency(self) -> Concurrency:
        """Events in progress over time by a sweep over sorted starts and ends.

        >>> from orchestrace.core.builder import TraceBuilder
        >>> b = TraceBuilder("x"); _ = b.add("tool_call", "a", t=0, t_end=2)
        >>> _ = b.add("tool_call", "b", t=1, t_end=3); _ = b.add("tool_call", "c", t=2, t_end=4)
        >>> c = TraceGraph.from_trace(b.build()).concurrency()
        >>> c.times.tolist(), c.counts.tolist(), c.peak
        ([0.0, 1.0, 2.0, 3.0, 4.0], [1, 2, 2, 1, 0], 2)
        """
        return _agents.concurrency(self.t, self.t_end, self.duration)

    @cached_property
    def peak_concurrency(self) -> int:
        """Most events in progress at once (= ``concurrency().peak``, via two sorts only)."""
        return _agents.peak_concurrency(self.t, self.t_end, self.duration)


# ---------------------------------------------------------------------- errors (the validator's codes)
def _duplicate_ids(ids: list[str], dup: np.ndarray, ix: IdIndex) -> TraceInvalidError:
    first = ix.lookup([ids[i] for i in dup.tolist()])
    problems = [problem("id.duplicate", f"$.events[{i}].id", *duplicate_message(ids[i], f"$.events[{f}]"))
                for i, f in zip(dup.tolist(), first.tolist(), strict=True)]
    return TraceInvalidError(f"{len(problems)} duplicate event id(s), first {problems[0].path}", problems)


def _dangling(edges: tuple, src: np.ndarray, dst: np.ndarray) -> TraceInvalidError:
    problems = []
    for end, codes in (("src", src), ("dst", dst)):
        for j in np.flatnonzero(codes < 0).tolist():
            problems.append(problem("edge.dangling", f"$.edges[{j}].{end}", *dangling_message(end, getattr(edges[j], end))))
    problems.sort(key=lambda p: p.path)
    return TraceInvalidError(f"{len(problems)} edge end(s) point to unknown events, first {problems[0].path}", problems)
