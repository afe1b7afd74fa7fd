"""Property tests: the numpy graph core and measures against plain reference implementations
(networkx and obviously-correct Python loops) on random DAG-shaped traces."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace import Edge, EdgeType, Event, EventType, Trace, synth
from orchestrace.analysis.graph import DEPENDENCY_EDGE_TYPES, TraceGraph
from orchestrace.analysis.measures import compute, critical_steps, useful_mask
from orchestrace.errors import TraceInvalidError

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TYPES = list(EventType)
EDGE_KINDS = list(EdgeType)


@st.composite
def dag_traces(draw, max_events: int = 24):
    """Events sorted by start; edges only go from earlier to later index (a DAG)."""
    n = draw(st.integers(1, max_events))
    n_agents = draw(st.integers(1, 4))
    starts = sorted(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)))
    events = []
    for i, t in enumerate(starts):
        dur = draw(st.one_of(st.none(), st.integers(0, 5)))
        events.append(Event(
            id=f"v{i}", t=float(t), t_end=None if dur is None else float(t + dur),
            type=draw(st.sampled_from(TYPES)), agent=f"a{draw(st.integers(0, n_agents - 1))}",
            error=draw(st.sampled_from([None, None, True, False])),
            trusted=draw(st.sampled_from([None, True, False])),
            privileged=draw(st.sampled_from([None, True])),
            tokens_in=draw(st.one_of(st.none(), st.integers(0, 50))),
        ))
    edges = []
    if n > 1:
        pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
        for a, b in pairs:
            if a != b:
                lo, hi = min(a, b), max(a, b)
                edges.append(Edge(f"v{lo}", f"v{hi}", draw(st.sampled_from(EDGE_KINDS))))
    return Trace(trace_id="rand", task_id="k", events=tuple(events), edges=tuple(edges))


def nx_dep(g: TraceGraph) -> nx.DiGraph:
    d = nx.DiGraph()
    d.add_nodes_from(range(g.n))
    d.add_edges_from(zip(g.dep_src.tolist(), g.dep_dst.tolist(), strict=True))
    return d


@SETTINGS
@given(dag_traces())
def test_topology_and_reachability_match_networkx(tr):
    g = TraceGraph.from_trace(tr)
    dep_types = {e.type for e in tr.edges} & DEPENDENCY_EDGE_TYPES
    assert g.dep_src.size == sum(1 for e in tr.edges if e.type in dep_types)
    d = nx_dep(g)
    order = g.topo_order()
    assert sorted(order.tolist()) == list(range(g.n))
    pos = np.empty(g.n, int)
    pos[order] = np.arange(g.n)
    assert (pos[g.dep_src] < pos[g.dep_dst]).all()
    # level = longest hop distance from a source
    for v in nx.topological_sort(d):
        want = max((g.level[u] + 1 for u in d.predecessors(v)), default=0)
        assert g.level[v] == want
    rng = np.random.default_rng(len(tr.edges))
    for _ in range(3):
        seeds = rng.choice(g.n, size=min(g.n, 2), replace=False).tolist()
        anc = set().union(*(nx.ancestors(d, s) for s in seeds))
        desc = set().union(*(nx.descendants(d, s) for s in seeds))
        assert set(g.ancestors(seeds).tolist()) == anc
        assert set(g.descendants(seeds).tolist()) == desc
        assert set(g.ancestors(seeds, inclusive=True).tolist()) == anc | set(seeds)
        mask = np.zeros(g.n, bool)
        mask[seeds] = True
        assert set(np.flatnonzero(g.sweep_forward(mask)).tolist()) == desc | set(seeds)
        assert set(np.flatnonzero(g.sweep_backward(mask)).tolist()) == anc | set(seeds)


def contribution(g: TraceGraph, u: int, v: int) -> float:
    """What ``u`` adds to a path that goes on to ``v``: its duration up to ``v``'s start."""
    d = float(g.duration[u])
    return d - min(max(float(g.t[u]) + d - float(g.t[v]), 0.0), d)


@SETTINGS
@given(dag_traces())
def test_critical_path_matches_reference_dp(tr):
    g = TraceGraph.from_trace(tr)
    d = nx_dep(g)
    dur = g.duration.tolist()
    finish = {}
    for v in nx.topological_sort(d):  # plain longest-path DP, each event clipped at its successor's start
        finish[v] = dur[v] + max((finish[u] - dur[u] + contribution(g, u, v) for u in d.predecessors(v)), default=0.0)
    cp = g.critical_path()
    assert cp.length_s == pytest.approx(max(finish.values()))
    path = cp.events.tolist()
    assert all(d.has_edge(a, b) for a, b in zip(path, path[1:], strict=False))
    along = sum(contribution(g, a, b) for a, b in zip(path, path[1:], strict=False)) + dur[path[-1]]
    assert along == pytest.approx(cp.length_s)
    assert cp.steps == len(path)
    # networkx longest path: edge u→v weighs u's clipped contribution, a super-sink takes the last duration
    w = nx.DiGraph()
    w.add_weighted_edges_from((u, v, contribution(g, u, v)) for u, v in d.edges)
    w.add_weighted_edges_from((v, "sink", dur[v]) for v in d.nodes)
    assert nx.dag_longest_path_length(w) == pytest.approx(cp.length_s)
    # work/span: the critical path never exceeds total busy time nor the run's span
    assert cp.length_s <= g.duration.sum() + 1e-9
    assert cp.length_s <= float(g.t_end.max() - g.t.min()) + 1e-9
    m = compute(g).metrics
    if m["e2/speedup"] is not None:
        assert 1 - 1e-12 <= m["e2/speedup"] <= m["e2/peak_concurrency"] + 1e-12


@SETTINGS
@given(dag_traces())
def test_fill_rule_concurrency_timelines(tr):
    g = TraceGraph.from_trace(tr)
    ev = tr.events
    index = {e.id: i for i, e in enumerate(ev)}
    for i, e in enumerate(ev):  # missing end: the agent's next start or the earliest dependant's, else 0 s
        if e.t_end is not None:
            assert g.t_end[i] == e.t_end
        else:
            later = [f.t for j, f in enumerate(ev) if f.agent == e.agent and (f.t, j) > (e.t, i)]
            later += [ev[index[x.dst]].t for x in tr.edges if x.src == e.id and x.type in DEPENDENCY_EDGE_TYPES]
            assert g.t_end[i] == (max(min(later), e.t) if later else e.t)
    c = g.concurrency()
    assert c.peak == g.peak_concurrency
    iv = [(s, e) for s, e in zip(g.t.tolist(), g.t_end.tolist(), strict=True) if e > s]
    for k, x in enumerate(c.times.tolist()):
        assert c.counts[k] == sum(1 for s, e in iv if s <= x < e)
    assert c.peak == max((sum(1 for s, e in iv if s <= x < e) for x, _ in iv), default=0)
    tl = g.timelines()
    for a in range(len(g.agents)):
        pts = sorted((s, max(s, e)) for s, e, ag in zip(g.t.tolist(), g.t_end.tolist(), g.agent.tolist(), strict=True)
                     if ag == a)
        merged: list[list[float]] = []
        for s, e in pts:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        assert tl.busy_s[a] == pytest.approx(sum(e - s for s, e in merged))


@SETTINGS
@given(dag_traces())
def test_waste_errors_safety_and_steps_match_reference(tr):
    g = TraceGraph.from_trace(tr)
    d = nx_dep(g)
    m = compute(g).metrics
    # wasted + useful = total; useful = ancestors of the output ∪ {output, stop}
    useful = useful_mask(g)
    want = nx.ancestors(d, g.output) | {g.output} | ({g.stop} if g.stop >= 0 else set())
    assert set(np.flatnonzero(useful).tolist()) == want
    assert m["waste/events"] + useful.sum() == g.n
    assert m["waste/time_s"] + g.duration[useful].sum() == pytest.approx(g.duration.sum())
    # untrusted taint: BFS along dependency and safety_flow edges
    t = nx.DiGraph(d)
    t.add_edges_from((g.index[e.src], g.index[e.dst]) for e in tr.edges if e.type is EdgeType.SAFETY_FLOW)
    src = [i for i, e in enumerate(tr.events) if e.trusted is False]
    tainted = set(src).union(*(nx.descendants(t, s) for s in src)) if src else set()
    sinks = {i for i, e in enumerate(tr.events) if e.privileged} | {g.output}
    assert m["safety/flows"] == len(sinks & tainted)
    for f in compute(g).flows:  # every listed flow is a real path from an untrusted event
        idx = [g.index[x] for x in f.path]
        assert tr.events[idx[0]].trusted is False and idx[-1] in sinks
        assert all(t.has_edge(a, b) for a, b in zip(idx, idx[1:], strict=False))
    # error roots and taint with catchers, by plain loops
    ev = tr.events
    flagged = {i for i, e in enumerate(ev) if e.error is True}
    catcher = {i for i, e in enumerate(ev) if e.error is False and (
        e.type is EventType.AGGREGATE or (e.outcome is not None and e.outcome.verifier is not None))}
    taint, stack = set(flagged), list(flagged)
    while stack:
        u = stack.pop()
        for v in d.successors(u):
            if v not in taint and v not in catcher:
                taint.add(v)
                stack.append(v)
    reached = set()
    for f in flagged:
        stack = [v for v in d.successors(f) if v not in catcher or v in flagged]
        while stack:
            u = stack.pop()
            if u in reached:
                continue
            reached.add(u)
            stack.extend(v for v in d.successors(u) if v not in catcher or v in flagged)
    roots = flagged - reached
    assert m["e4/erroneous_roots"] == len(roots)
    assert m["e4/amplification"] == (len(flagged - roots) / len(roots) if roots else 0.0)
    assert m["e4/output_tainted"] == float(g.output in taint)
    # critical steps: plain per-stage counting
    root = g.agents[g.root_agent]
    bounds = sorted(e.t for e in ev if e.agent == root and e.type in (EventType.ORCHESTRATOR_DECISION, EventType.AGGREGATE))
    total = 0
    for k in range(len(bounds) + 1):
        lo = bounds[k - 1] if k else -np.inf
        hi = bounds[k] if k < len(bounds) else np.inf
        inside = [e for e in ev if lo <= e.t < hi]
        main = sum(1 for e in inside if e.agent == root)
        subs = {}
        for e in inside:
            if e.agent != root:
                subs[e.agent] = subs.get(e.agent, 0) + 1
        total += main + max(subs.values(), default=0)
    assert critical_steps(g) == total


@SETTINGS
@given(dag_traces(max_events=12), st.data())
def test_a_cycle_is_named_with_real_members(tr, data):
    if len(tr.events) < 2:
        return
    n = len(tr.events)
    a = data.draw(st.integers(0, n - 2))
    b = data.draw(st.integers(a + 1, n - 1))
    extra = (Edge(f"v{a}", f"v{b}", EdgeType.CAUSAL), Edge(f"v{b}", f"v{a}", EdgeType.CAUSAL))
    cyc = Trace(trace_id="c", task_id="k", events=tr.events, edges=tr.edges + extra)
    with pytest.raises(TraceInvalidError) as info:
        TraceGraph.from_trace(cyc)
    ring = str(info.value).split("cycle: ")[1].split(" → ")
    assert ring[0] == ring[-1] and len(ring) >= 2
    dg = nx.DiGraph([(e.src, e.dst) for e in cyc.edges if e.type in DEPENDENCY_EDGE_TYPES])
    assert all(dg.has_edge(x, y) for x, y in zip(ring, ring[1:], strict=False))


@SETTINGS
@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=30, unique=True), st.data())
def test_id_mapping_matches_a_dict(ids, data):
    """The sort-based id → index map agrees with a dict, for any ids (non-ASCII, NULs, long)."""
    events = tuple(Event(id=x, t=float(i), type=EventType.TOOL_CALL, agent="a") for i, x in enumerate(ids))
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=20))
    edges = tuple(Edge(a, b, EdgeType.TEMPORAL) for a, b in pairs)
    g = TraceGraph.from_trace(Trace(trace_id="i", task_id="k", events=events, edges=edges))
    index = {x: i for i, x in enumerate(ids)}
    assert g.edge_src.tolist() == [index[a] for a, _ in pairs]
    assert g.edge_dst.tolist() == [index[b] for _, b in pairs]
    bad = Trace(trace_id="i", task_id="k", events=events, edges=(*edges, Edge(ids[0], ids[0] + "\x00zz", EdgeType.CAUSAL)))
    with pytest.raises(TraceInvalidError, match="unknown event"):
        TraceGraph.from_trace(bad)
    dup = Trace(trace_id="i", task_id="k", events=(*events, events[0]))
    with pytest.raises(TraceInvalidError, match="duplicate"):
        TraceGraph.from_trace(dup)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_synth_agrees_with_networkx(seed):
    tr = synth(events=3000, agents=40, seed=seed)
    g = TraceGraph.from_trace(tr)
    d = nx_dep(g)
    dur = g.duration.tolist()
    w = nx.DiGraph()
    w.add_weighted_edges_from((u, v, contribution(g, u, v)) for u, v in d.edges)
    w.add_weighted_edges_from((v, "sink", dur[v]) for v in d.nodes)
    assert g.critical_path().length_s == pytest.approx(nx.dag_longest_path_length(w))
    anc = nx.ancestors(d, g.output) | {g.output, g.stop}
    assert set(np.flatnonzero(useful_mask(g)).tolist()) == anc
    m = compute(tr).metrics
    assert m["waste/events"] == g.n - len(anc)
    assert m["e2/speedup"] >= 1 and m["spawn/agents"] == 40
