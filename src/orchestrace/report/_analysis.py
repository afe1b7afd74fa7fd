"""What the report needs from a trace: lanes (spawn tree), critical path, wasted work, flows.

Built on :class:`orchestrace.analysis.graph.TraceGraph` and :mod:`orchestrace.analysis.measures` (one graph,
built once, serves both):

* **lanes** — agents in depth-first spawn-tree order (``TraceGraph.spawn_tree``; agents
  nobody spawned are roots, in order of first appearance; children by first spawn).
* **critical path** — ``TraceGraph.critical_path()`` (duration-weighted longest
  dependency path).
* **final output** — ``TraceGraph.output``.
* **wasted work** — ``~orchestrace.analysis.measures.useful_mask`` (events that are not ancestors of
  the final output, the output itself or the stop decision).
* **safety flows** — ``orchestrace.analysis.measures.compute(...).flows``: paths from an untrusted
  event to a privileged call or the final output (at most 50).
* **measures** — ``orchestrace.analysis.measures.compute(...).metrics`` (None = unknown).

>>> from orchestrace import synth
>>> an = analyse(synth(events=120, agents=4, seed=3))
>>> an.lanes[0], len(an.lanes), len(an.critical) > 0
('orchestrator', 5, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.graph import TraceGraph
from ..analysis.measures import compute, useful_mask
from ..core.trace import Trace

__all__ = ["Analysis", "analyse"]

_MAX_FLOWS = 50


@dataclass(frozen=True)
class Analysis:
    """Derived structure of one trace, as integer event indices (into ``trace.events``)."""

    lanes: list[str]  # agent names, spawn-tree DFS order
    lane_parent: list[int]  # lane index of the spawner, -1 for roots
    lane_depth: list[int]
    critical: np.ndarray  # (P,) event indices in path order
    wasted: np.ndarray  # (W,) event indices
    final: int  # final output event index, -1 if none
    flows: list[list[int]]  # safety flow paths (event indices)
    flow_kinds: list[str] = field(default_factory=list)  # sink kind of each flow
    measures: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)


def _lanes(g: TraceGraph) -> tuple[list[str], list[int], list[int]]:
    tree = g.spawn_tree()
    na = len(g.agents)
    parent = tree.parent.tolist()
    kids: list[list[int]] = [[] for _ in range(na)]
    for c in range(na):
        if parent[c] >= 0:
            kids[parent[c]].append(c)
    roots = [a for a in range(na) if parent[a] < 0]
    order: list[int] = []
    depth = [0] * na
    seen = [False] * na
    stack = [(a, 0) for a in reversed(roots)]
    while stack:
        a, d = stack.pop()
        if seen[a]:
            continue
        seen[a] = True
        order.append(a)
        depth[a] = d
        stack.extend((c, d + 1) for c in reversed(kids[a]))
    for a in range(na):  # spawn cycles (unreachable from a root): append as roots
        if not seen[a]:
            order.append(a)
            parent[a] = -1
    lane_of = {a: i for i, a in enumerate(order)}
    return (
        [g.agents[a] for a in order],
        [lane_of[parent[a]] if parent[a] >= 0 else -1 for a in order],
        [depth[a] if parent[a] >= 0 else 0 for a in order],
    )


def analyse(trace: Trace, graph: TraceGraph | None = None) -> Analysis:
    """Lanes, critical path, final output, wasted work, safety flows and measures of a trace.

    Raises :class:`~orchestrace.errors.TraceInvalidError` for a trace the graph cannot
    be built from (duplicate ids, dangling edges, a dependency cycle). The trace is not
    re-validated here (the CLI validates first).

    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("t"); s = b.add("spawn", "orchestrator", t=0, t_end=1, to="w")
    >>> r = b.add("return", "w", t=1, t_end=3, to="orchestrator", after=s)
    >>> a = b.add("aggregate", "orchestrator", t=3, t_end=4, after=r)
    >>> w = b.add("tool_call", "w", t=3, t_end=3.5, after=s)
    >>> _ = b.decide("stop", action="stop", t=4, after=a)
    >>> an = analyse(b.build())
    >>> an.critical.tolist(), an.final, an.wasted.tolist(), an.lanes
    ([0, 1, 2, 4], 2, [3], ['orchestrator', 'w'])
    >>> an.measures["waste/events"]
    1.0
    """
    g = graph if graph is not None else TraceGraph.from_trace(trace)
    lanes, parent, depth = _lanes(g)
    result = compute(g, max_flows=_MAX_FLOWS)
    index = g.index
    flows = [[index[i] for i in f.path] for f in result.flows]
    return Analysis(
        lanes=lanes,
        lane_parent=parent,
        lane_depth=depth,
        critical=g.critical_path().events.astype(np.int64),
        wasted=np.flatnonzero(~useful_mask(g)),
        final=int(g.output),
        flows=flows,
        flow_kinds=[f.kind for f in result.flows],
        measures=dict(result.metrics),
        assumptions=list(result.assumptions),
    )
