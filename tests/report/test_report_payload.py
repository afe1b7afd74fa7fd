"""The report payload: columnar, consistent with the graph and measures, safe to embed."""

from __future__ import annotations

import json
import re

import msgspec
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import orchestrace as ot
from orchestrace.analysis.graph import TraceGraph
from orchestrace.analysis.measures import compute, useful_mask
from orchestrace.report import analyse, report_html
from orchestrace.report._payload import FLAGS, TYPES, trace_payload


def _payload_of(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="payload">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_columns_match_the_trace():
    tr = ot.synth(events=400, agents=7, seed=5)
    p = trace_payload(tr)
    ev = p["ev"]
    n = len(tr.events)
    assert all(len(col) == n for col in ev.values())
    assert ev["id"] == [e.id for e in tr.events]
    assert [TYPES[k] for k in ev["type"]] == [e.type.value for e in tr.events]
    t0 = min(e.t for e in tr.events)
    assert np.allclose(ev["t"], [e.t - t0 for e in tr.events], atol=1e-6)
    assert [p["lanes"][k]["name"] for k in ev["lane"]] == [e.agent for e in tr.events]
    assert sorted(lane["name"] for lane in p["lanes"]) == sorted(tr.agents)
    assert sum(lane["n"] for lane in p["lanes"]) == n
    tools = [p["S"][k] if k >= 0 else None for k in ev["tool"]]
    assert tools == [e.tool for e in tr.events]


def test_flags_critical_wasted_flows_follow_graph_and_measures():
    tr = ot.synth(events=3000, agents=20, seed=1, p_wasted=0.3, p_untrusted=0.1)
    g = TraceGraph.from_trace(tr)
    p = trace_payload(tr)
    flags = np.asarray(p["ev"]["flags"])
    assert p["crit"] == g.critical_path().events.tolist()
    assert np.flatnonzero(flags & FLAGS["critical"]).tolist() == sorted(p["crit"])
    assert np.array_equal((flags & FLAGS["wasted"]) != 0, ~useful_mask(g))
    assert ((flags & FLAGS["wasted"]) != 0).any()
    assert p["final"] == g.output and flags[g.output] & FLAGS["final"]
    assert np.flatnonzero(flags & FLAGS["stop"]).tolist() == [g.stop]
    res = compute(tr)
    assert [[p["ev"]["id"][i] for i in path] for path in p["flows"]] == [list(f.path) for f in res.flows]
    edges = {(e.src, e.dst) for e in tr.edges}
    for path in p["flows"]:  # a flow is a walk along edges of the trace
        ids = [p["ev"]["id"][i] for i in path]
        assert all((a, b) in edges for a, b in zip(ids, ids[1:], strict=False))
    assert dict(p["measures"]) == _as_floats(res.metrics)


def _as_floats(d):
    return {k: (None if v is None else float(v)) for k, v in d.items()}


def test_edges_only_for_small_traces():
    small, big = ot.synth(events=100, agents=3, seed=0), ot.synth(events=400, agents=3, seed=0)
    assert len(trace_payload(small)["edges"]["src"]) == len(small.edges)
    assert trace_payload(big)["edges"] is None
    assert trace_payload(big, max_graph_events=1000)["edges"] is not None


def _random_tree_trace(parents: list[int]) -> ot.Trace:
    """Agent k+1 is spawned by agent parents[k] (an earlier agent), then returns."""
    b = ot.TraceBuilder("tree")
    names = ["root"] + [f"a{k + 1}" for k in range(len(parents))]
    last = {"root": b.add("orchestrator_decision", "root", t=0)}
    for k, p in enumerate(parents):
        child = names[k + 1]
        s = b.add("spawn", names[p], t=k + 1, to=child, after=last[names[p]], edge="spawn")
        last[names[p]] = s
        last[child] = b.add("tool_call", child, t=k + 1.5, after=s)
    return b.build()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=0, max_size=25))
def test_lanes_are_a_preorder_of_the_spawn_tree(raw):
    parents = [r % (k + 1) for k, r in enumerate(raw)]  # parent index < child index
    tr = _random_tree_trace(parents)
    an = analyse(tr)
    lanes, par, depth = an.lanes, an.lane_parent, an.lane_depth
    assert sorted(lanes) == sorted(tr.agents)
    names = ["root"] + [f"a{k + 1}" for k in range(len(parents))]
    want_parent = {names[k + 1]: names[p] for k, p in enumerate(parents)}
    for i, name in enumerate(lanes):
        if name in want_parent:
            assert lanes[par[i]] == want_parent[name]
            assert par[i] < i and depth[i] == depth[par[i]] + 1
            # preorder: every lane between the parent and this child is inside the parent's subtree
            for j in range(par[i] + 1, i):
                assert depth[j] > depth[par[i]]
        else:
            assert par[i] == -1 and depth[i] == 0


def test_html_is_self_contained_and_escapes_content():
    evil = "</script><script>alert('x')</script><!--"
    b = ot.TraceBuilder("esc")
    a = b.add("message", "root", t=0, content=evil, to="w")
    b.add("tool_call", "w", t=1, after=a, tool="<b>tool</b>")
    tr = b.build()
    html = report_html(tr)
    assert "<script>alert" not in html
    body = html.split('<script type="application/json"')[0]
    assert not re.search(r"(src|href)\s*=", body, re.I)
    assert "@import" not in html and "url(http" not in html
    assert not re.search(r"\bfetch\(|XMLHttpRequest|WebSocket|<link\b|<iframe\b", html)
    assert "default-src 'none'" in html
    p = _payload_of(html)
    assert p["extra"]["0"]["content"] == evil
    assert "<b>tool</b>" in p["S"]


def test_many_traces_summary_payload(tmp_path):
    trs = [msgspec.structs.replace(ot.synth(events=80, agents=2, seed=s), meta={"policy": f"p{s % 2}"},
                                   trace_id=f"t{s}") for s in range(4)]
    p = _payload_of(report_html(trs))
    assert p["kind"] == "many" and len(p["rows"]) == 4 and len(p["traces"]) == 4
    assert [r["policy"] for r in p["rows"]] == ["p0", "p1", "p0", "p1"]
    assert all("cost/tokens" in r["measures"] for r in p["rows"])
    p2 = _payload_of(report_html(trs, embed_events=100))
    assert p2["traces"] == []  # too many events to embed every trace


def test_folder_source(tmp_path):
    for s in range(3):
        ot.dump(ot.synth(events=60, agents=2, seed=s), tmp_path / f"t{s}.json")
    (tmp_path / "notes.txt").write_text("not a trace")
    p = _payload_of(report_html(tmp_path))
    assert p["kind"] == "many" and p["meta"]["n_traces"] == 3
