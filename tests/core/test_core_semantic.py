"""The vectorised semantic checks against a plain, loop-by-loop reference implementation."""

from __future__ import annotations

import json

import numpy as np
from foundation_strategies import traces
from hypothesis import given, settings
from hypothesis import strategies as st

import orchestrace as ot
from orchestrace.core._validate import find_cycle
from orchestrace.vocab import DEPENDENCY_EDGE_TYPES

TOL = 1e-9


def plain_problems(tr: ot.Trace) -> set[tuple[str, str]]:
    """(code, path) of every semantic problem, computed the obvious way."""
    out: set[tuple[str, str]] = set()
    ev = tr.events
    first: dict[str, int] = {}
    for i, e in enumerate(ev):
        if e.id in first:
            out.add(("id.duplicate", f"$.events[{i}].id"))
        first.setdefault(e.id, i)
        if e.t_end is not None and e.t_end < e.t - TOL:
            out.add(("event.end-before-start", f"$.events[{i}].t_end"))
        for f in ("tokens_in", "tokens_out", "cost"):
            if (getattr(e, f) or 0) < 0:
                out.add(("cost.negative", f"$.events[{i}].{f}"))
    causal = []
    for j, d in enumerate(tr.edges):
        for f in ("src", "dst"):
            if getattr(d, f) not in first:
                out.add(("edge.dangling", f"$.edges[{j}].{f}"))
        if d.src in first and d.dst in first and d.type in DEPENDENCY_EDGE_TYPES:
            causal.append((first[d.src], first[d.dst]))
            if ev[first[d.dst]].t < ev[first[d.src]].t - TOL:
                out.add(("edge.time-backwards", f"$.edges[{j}]"))
    # cycle: plain DFS with colours
    adj: dict[int, list[int]] = {}
    for a, b in causal:
        adj.setdefault(a, []).append(b)
    colour: dict[int, int] = {}

    def dfs(u: int) -> bool:
        colour[u] = 1
        for v in adj.get(u, []):
            if colour.get(v) == 1 or (v not in colour and dfs(v)):
                return True
        colour[u] = 2
        return False

    if any(u not in colour and dfs(u) for u in list(adj)):
        out.add(("edge.cycle", "*"))
    # spawns
    spawn: dict[str, tuple[float, int]] = {}
    for i, e in enumerate(ev):
        if e.type is ot.EventType.SPAWN and e.to is not None and (e.to not in spawn or (e.t, i) < spawn[e.to]):
            spawn[e.to] = (e.t, i)
    earliest: dict[str, int] = {}
    for i, e in enumerate(ev):
        if e.agent in spawn and e.t < spawn[e.agent][0] - TOL and (
                e.agent not in earliest or (e.t, i) < (ev[earliest[e.agent]].t, earliest[e.agent])):
            earliest[e.agent] = i
        if e.type is ot.EventType.RETURN and e.agent in spawn and e.to is not None \
                and e.to != ev[spawn[e.agent][1]].agent:
            out.add(("return.wrong-target", f"$.events[{i}].to"))
    out |= {("agent.before-spawn", f"$.events[{i}].t") for i in earliest.values()}
    stops = sorted((e.t, i) for i, e in enumerate(ev) if e.decision is not None and e.decision.is_stop)
    out |= {("stop.multiple", f"$.events[{i}]") for _, i in stops[1:]}
    stop_ids = {i for _, i in stops}
    for j, d in enumerate(tr.edges):
        if d.type in DEPENDENCY_EDGE_TYPES and d.dst in first and first.get(d.src) in stop_ids:
            out.add(("stop.has-successor", f"$.edges[{j}]"))
    return out


@st.composite
def broken_traces(draw: st.DrawFn) -> ot.Trace:
    tr = draw(traces(max_workers=3, max_steps=4))
    doc = json.loads(ot.dumps(tr))
    ev, ed = doc["events"], doc["edges"]
    ids = [e["id"] for e in ev]
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, 6))
        i = draw(st.integers(0, len(ev) - 1))
        if k == 0:
            ev[i]["t"] = draw(st.floats(0, 200))
        elif k == 1:
            ev[i]["id"] = draw(st.sampled_from(ids))
        elif k == 2:
            ed.append({"src": draw(st.sampled_from(ids + ["ghost"])), "dst": draw(st.sampled_from(ids)),
                       "type": draw(st.sampled_from(["causal", "spawn", "message", "aggregate"]))})
        elif k == 3:
            ev[i]["t_end"] = ev[i]["t"] - draw(st.floats(-1, 5))
        elif k == 4:
            ev[i]["cost"] = draw(st.floats(-3, 3))
        elif k == 5:
            ev[i]["type"] = draw(st.sampled_from(["spawn", "return"]))
            ev[i]["to"] = draw(st.sampled_from([e["agent"] for e in ev]))
        else:
            ev[i]["decision"] = {"kind": "stop", "action": "stop"}
            ev[i]["type"] = "orchestrator_decision"
    return ot.loads(json.dumps(doc))


@settings(max_examples=80, deadline=None)
@given(broken_traces())
def test_vectorised_checks_match_the_plain_implementation(tr: ot.Trace) -> None:
    got = {(p.code, "*" if p.code == "edge.cycle" else p.path) for p in ot.validate(tr).problems
           if p.code in {c for c, _ in plain_problems(tr)} | {"edge.cycle", "id.duplicate", "edge.dangling",
                                                               "edge.time-backwards", "agent.before-spawn",
                                                               "return.wrong-target", "stop.multiple",
                                                               "stop.has-successor", "cost.negative",
                                                               "event.end-before-start"}}
    assert got == plain_problems(tr)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60))))
def test_find_cycle_is_exact(case: tuple[int, list[tuple[int, int]]]) -> None:
    n, pairs = case
    src = np.array([a for a, _ in pairs], np.int64)
    dst = np.array([b for _, b in pairs], np.int64)
    cyc = find_cycle(src, dst, n)
    edges = set(pairs)
    # plain: repeatedly delete nodes without in-edges
    alive = set(range(n))
    while True:
        free = {v for v in alive if not any(b == v and a in alive for a, b in edges)}
        if not free:
            break
        alive -= free
    if not alive:
        assert cyc is None
    else:
        assert cyc is not None and len(set(cyc)) == len(cyc)
        assert all((cyc[k], cyc[(k + 1) % len(cyc)]) in edges for k in range(len(cyc)))
