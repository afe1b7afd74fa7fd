"""Measures of what flows along the dependency edges: error taint (E4), wasted work, and
untrusted content reaching privileged calls or the output (safety flows).

Each is a reachability question on :class:`~orchestrace.analysis.graph.TraceGraph`: a sweep
forward from flagged / untrusted events, or backward from the final output. The names and
formulas are those of :mod:`orchestrace.analysis.measures`, which lists them in ``MEASURES``.
"""

from __future__ import annotations

import msgspec
import numpy as np

from ..core._dag import unique_ints
from ..core.trace import Trace
from ..vocab import EdgeType
from ._notes import _T, Value, _count, _graph, _memo, _note, _ratio, _tok
from .graph import TraceGraph


class SafetyFlow(msgspec.Struct, frozen=True, kw_only=True):
    """Untrusted content reaching a sink: ``path`` of event ids from ``source`` (``trusted:
    false``) to ``sink`` (a privileged tool call and/or the final output, named in ``kind``)."""

    source: str
    sink: str
    kind: str
    path: tuple[str, ...]


# ---------------------------------------------------------------------- E4
def _errors(g: TraceGraph) -> dict[str, object]:
    """Error taint: flagged events F; taint T = F ∪ events reached from F along dependency
    edges without passing a *catcher* (an aggregate, or an event whose outcome names a
    verifier, that is explicitly ``error: false``); roots R = F minus events reached from
    another flagged event."""
    def run() -> dict[str, object]:
        f = g.error
        if not f.any():
            if not (g.error | g.error_clean).any():
                _note(g, "no event carries an error flag; E4 assumes no errors")
            z = np.zeros(g.n, dtype=bool)
            return {"flagged": z, "taint": z, "roots": z, "caught": 0}
        catcher = g.is_type(_T.AGGREGATE) & g.error_clean
        ev = g.trace.events
        for i in np.flatnonzero(g.error_clean & ~catcher).tolist():  # few: explicitly clean events
            oc = ev[i].outcome
            catcher[i] = oc is not None and oc.verifier is not None
        taint = g.sweep_forward(f, blocked=catcher)
        # reached from a flagged event by ≥ 1 edge: sweep from the flagged events' successors
        succ = np.zeros(g.n, dtype=bool)
        nxt = g.dep_dst[f[g.dep_src]]
        keep = nxt[~catcher[nxt] | f[nxt]]
        succ[keep] = True
        reached = g.sweep_forward(succ, blocked=catcher & ~f)
        roots = f & ~reached
        hit = g.dep_dst[taint[g.dep_src]]
        caught = int(unique_ints(hit[catcher[hit] & ~f[hit]]).size)
        return {"flagged": f, "taint": taint, "roots": roots, "caught": caught}
    return _memo(g, "errors", run)  # type: ignore[return-value]


def erroneous_events(x: Trace | TraceGraph) -> Value:
    """``e4/erroneous_events`` = |F| (events with ``error: true``)."""
    return float(_graph(x).error.sum())


def erroneous_roots(x: Trace | TraceGraph) -> Value:
    """``e4/erroneous_roots`` = |R| (flagged events not reached from another flagged event)."""
    return float(_errors(_graph(x))["roots"].sum())  # type: ignore[attr-defined]


def amplification(x: Trace | TraceGraph) -> Value:
    """``e4/amplification`` = |F \\ R| / |R| — erroneous (flagged) descendants per erroneous
    root (0 without errors; reference key ``error_amplification``). Only events the trace
    itself flags count: a long sequential transcript is not "amplified" by one early error
    just because everything after it depends on it (that reachability is ``e4/output_tainted``)."""
    e = _errors(_graph(x))
    r = int(e["roots"].sum())  # type: ignore[attr-defined]
    return 0.0 if r == 0 else float((e["flagged"] & ~e["roots"]).sum()) / r  # type: ignore[operator]


def output_tainted(x: Trace | TraceGraph) -> Value:
    """``e4/output_tainted`` = 1 if the final output is in the error taint T, else 0."""
    g = _graph(x)
    return None if g.output < 0 else float(bool(_errors(g)["taint"][g.output]))  # type: ignore[index]


def caught_by_aggregation(x: Trace | TraceGraph) -> Value:
    """``e4/caught_by_aggregation`` = number of catchers (clean aggregates / verifiers) with a
    tainted dependency predecessor."""
    return float(_errors(_graph(x))["caught"])  # type: ignore[arg-type]


# ---------------------------------------------------------------------- wasted work
def useful_mask(x: Trace | TraceGraph) -> np.ndarray:
    """Useful events: ancestors of the final output, the output itself, and the stop
    decision. Every other event is wasted: ``useful + wasted = V``."""
    g = _graph(x)

    def run() -> np.ndarray:
        m = np.zeros(g.n, dtype=bool)
        if g.output >= 0:
            m[g.output] = True
            m = g.sweep_backward(m)
        if g.stop >= 0:
            m[g.stop] = True
        return m
    return _memo(g, "useful", run)  # type: ignore[return-value]


def wasted_events(x: Trace | TraceGraph) -> Value:
    """``waste/events`` = |V \\ U|, U = :func:`useful_mask`."""
    g = _graph(x)
    return float(g.n - useful_mask(g).sum())


def wasted_share(x: Trace | TraceGraph) -> Value:
    """``waste/share`` = |V \\ U| / |V|."""
    g = _graph(x)
    return _ratio(g.n - useful_mask(g).sum(), g.n)


def wasted_tokens(x: Trace | TraceGraph) -> Value:
    """``waste/tokens`` = Σ_{v∉U} tok(v) (unknown when no event reports tokens)."""
    g = _graph(x)
    return float(_tok(g)[~useful_mask(g)].sum()) if g.tokens_known else None


def wasted_time(x: Trace | TraceGraph) -> Value:
    """``waste/time_s`` = Σ_{v∉U} d(v)."""
    g = _graph(x)
    return float(g.duration[~useful_mask(g)].sum())


def wasted_by_agent(x: Trace | TraceGraph) -> np.ndarray:
    """Wasted events per agent code (int64, length ``len(g.agents)``)."""
    g = _graph(x)
    return np.bincount(g.agent[~useful_mask(g)], minlength=len(g.agents))


def wasted_agents(x: Trace | TraceGraph) -> Value:
    """``waste/agents`` = agents that have events and all of them are wasted."""
    g = _graph(x)
    total = np.bincount(g.agent, minlength=len(g.agents))
    return float(((total > 0) & (wasted_by_agent(g) == total)).sum())


# ---------------------------------------------------------------------- safety
def _taint(g: TraceGraph) -> tuple[np.ndarray, np.ndarray]:
    """Untrusted taint and parent pointers along dependency and ``safety_flow`` edges."""
    def run() -> tuple[np.ndarray, np.ndarray]:
        parent = np.full(g.n, -1, dtype=np.int64)
        mask = g.untrusted
        if not mask.any():
            return mask, parent
        sf = g.edge_type == list(EdgeType).index(EdgeType.SAFETY_FLOW)
        s_src, s_dst = g.edge_src[sf], g.edge_dst[sf]
        while True:
            mask = g.sweep_forward(mask, parent=parent)
            sel = mask[s_src] & ~mask[s_dst]
            if not sel.any():
                return mask, parent
            parent[s_dst[sel]] = s_src[sel]
            mask = mask.copy()
            mask[s_dst[sel]] = True
    return _memo(g, "taint", run)  # type: ignore[return-value]


def _sinks(g: TraceGraph) -> tuple[np.ndarray, np.ndarray]:
    """Sink indices (privileged calls ∪ {output}) that untrusted content reaches, tainted mask."""
    taint, _ = _taint(g)
    sink = g.privileged.copy()
    if g.output >= 0:
        sink[g.output] = True
    return np.flatnonzero(sink & taint), taint


def safety_flows(x: Trace | TraceGraph, *, limit: int = 50) -> list[SafetyFlow]:
    """One :class:`SafetyFlow` per tainted sink (earliest sinks first, at most ``limit``):
    a path of event ids from an untrusted event to the sink.

    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("s"); r = b.tool_result("w", "web", t=0, trusted=False)
    >>> c = b.tool_call("w", "shell", t=1, after=r, privileged=True)
    >>> [(f.source, f.sink, f.kind, f.path) for f in safety_flows(b.build())]
    [('e1', 'e2', 'privileged_call+final_output', ('e1', 'e2'))]
    """
    g = _graph(x)
    sinks, _ = _sinks(g)
    _, parent = _taint(g)
    sinks = sinks[np.argsort(g.t[sinks], kind="stable")][:limit]
    flows = []
    item = parent.item
    for s in sinks.tolist():
        path = [s]
        while (p := item(path[-1])) >= 0 and len(path) <= g.n:
            path.append(p)
        kinds = [k for k, on in (("privileged_call", g.privileged[s]), ("final_output", s == g.output)) if on]
        ids = tuple(g.ids[i] for i in reversed(path))
        flows.append(SafetyFlow(source=ids[0], sink=ids[-1], kind="+".join(kinds), path=ids))
    return flows


def flow_count(x: Trace | TraceGraph) -> Value:
    """``safety/flows`` = number of sinks (privileged tool calls, final output) reachable from an
    untrusted event along dependency and safety_flow edges."""
    return float(_sinks(_graph(x))[0].size)


def tainted_privileged(x: Trace | TraceGraph) -> Value:
    """``safety/tainted_privileged`` = privileged tool calls reached by untrusted content."""
    g = _graph(x)
    return float((g.privileged & _taint(g)[0]).sum())


def safety_output_tainted(x: Trace | TraceGraph) -> Value:
    """``safety/output_tainted`` = 1 if untrusted content reaches the final output, else 0."""
    g = _graph(x)
    return None if g.output < 0 else float(bool(_taint(g)[0][g.output]))


def untrusted_events(x: Trace | TraceGraph) -> Value:
    """``safety/untrusted_events`` = events with ``trusted: false``."""
    return float(_graph(x).untrusted.sum())


def privileged_calls(x: Trace | TraceGraph) -> Value:
    """``safety/privileged_calls`` = events with ``privileged: true``."""
    return float(_graph(x).privileged.sum())


def safety_events(x: Trace | TraceGraph) -> Value:
    """``safety/events`` = number of ``safety_event`` events."""
    return float(_count(_graph(x), _T.SAFETY_EVENT))


def human_interventions(x: Trace | TraceGraph) -> Value:
    """``safety/human_interventions`` = number of ``human_intervention`` events."""
    return float(_count(_graph(x), _T.HUMAN_INTERVENTION))
