"""Golden traces: tiny hand-drawn runs with every expected value computed by hand.

Notation in the drawings: ``name[t, t_end]``; ``→`` a dependency edge; durations of
spawns/returns/stops are 0 unless drawn otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace import Decision, EdgeType, Outcome, TraceBuilder, load
from orchestrace.analysis.graph import TraceGraph
from orchestrace.analysis.measures import compute, reference_metrics, safety_flows, wasted_by_agent
from orchestrace.errors import TraceInvalidError

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "example_trace.json"


def check(trace, expected: dict, *, validate: bool = True):
    res = compute(trace, validate=validate)
    for name, want in expected.items():
        got = res.metrics[name]
        if want is None:
            assert got is None, f"{name}: expected unknown, got {got}"
            assert name in res.unknown
        else:
            assert got == pytest.approx(want, abs=1e-12), f"{name}: expected {want}, got {got}"
    return res


# ---------------------------------------------------------------------------------- 1
def serial_chain():
    """One agent, four 1-s tool calls in a chain, no stop, no outcome.

    a:  c1[0,1] → c2[1,2] → c3[2,3] → c4[3,4]
    """
    b = TraceBuilder("serial")
    prev = None
    for k in range(4):
        prev = b.tool_call("a", "x", t=k, t_end=k + 1, after=prev)
    return b.build()


def test_serial_chain():
    res = check(serial_chain(), {
        "e1/task_success": None,                 # no outcome anywhere → unknown, not 0
        "e2/critical_path_s": 4.0, "e2/critical_path_events": 4.0, "e2/work_s": 4.0,
        "e2/speedup": 1.0, "e2/peak_concurrency": 1.0, "e2/efficiency": 1.0,
        "e2/critical_steps": 4.0, "e2/stages": 1.0,  # root "a" has no decisions: one stage
        "e3/overhead_events": 0.0, "waste/events": 0.0, "waste/share": 0.0,
        "spawn/depth": 0.0, "spawn/agents": 0.0, "spawn/finish_rate": None,
        "cost/tool_calls": 4.0, "cost/wall_clock_s": 4.0, "cost/tokens_in": None,
    })
    assert any("final output = 'e4'" in a for a in res.assumptions)


# ---------------------------------------------------------------------------------- 2
def fan_out():
    """Perfect fan-out of 3 equal workers.

    d[0,1] ─spawn→ s1,s2,s3[1,1] → c_i(w_i)[1,3] → r_i[3,3] ─aggregate→ agg[3,4] → stop[4,4]
    tokens: c_i 100 in + 10 out, agg 30 in.
    """
    b = TraceBuilder("fanout", topology="centralized")
    d = b.decide(Decision.SPAWN, action="spawn:3", t=0, t_end=1)
    spawns = [b.spawn(f"w{i}", t=1, t_end=1, after=d) for i in (1, 2, 3)]
    calls = [b.tool_call(f"w{i}", "x", t=1, t_end=3, after=s, tokens_in=100, tokens_out=10)
             for i, s in zip((1, 2, 3), spawns, strict=True)]
    rets = [b.return_(f"w{i}", t=3, t_end=3, after=c) for i, c in zip((1, 2, 3), calls, strict=True)]
    agg = b.aggregate(t=3, t_end=4, after=rets, tokens_in=30, outcome=Outcome(success=True, score=0.9))
    b.decide(Decision.STOP, action="stop", t=4, t_end=4, after=agg)
    return b.build()


def test_perfect_fan_out():
    res = check(fan_out(), {
        "e1/task_success": 1.0, "e1/score": 0.9,     # from the aggregate (the final output)
        "e2/work_s": 8.0,                            # d 1 + 3×2 + agg 1
        "e2/critical_path_s": 4.0,                   # d → c → agg
        "e2/critical_path_events": 6.0,              # d, s, c, r, agg, stop
        "e2/speedup": 2.0, "e2/peak_concurrency": 3.0, "e2/efficiency": 2.0 / 3.0,
        # stages cut at d(0), agg(3), stop(4): [0,3): 4 main + max 1 ; [3,4): 1 + 1 ; [4,∞): 1
        "e2/critical_steps": 8.0, "e2/stages": 4.0,
        "e3/overhead_events": 9 / 12, "e3/overhead_time": 2 / 8, "e3/overhead_tokens": 30 / 360,
        "e3/messages_per_subagent": 0.0,
        "waste/events": 0.0, "waste/tokens": 0.0,
        "spawn/depth": 1.0, "spawn/max_fanout": 3.0, "spawn/agents": 3.0, "spawn/finish_rate": 1.0,
        "spawn/peak_alive": 3.0,
        "cost/tokens_in": 330.0, "cost/tokens_out": 30.0, "cost/tokens": 360.0, "cost/wall_clock_s": 4.0,
    })
    ref = reference_metrics(res)
    assert ref == {"task_success": 1.0, "parallelism_efficiency": pytest.approx(2 / 3),
                   "protocol_overhead": pytest.approx(30 / 360), "error_amplification": 0.0}


# ---------------------------------------------------------------------------------- 3
def straggler():
    """Two workers, one 8× slower: the critical path runs through it.

    d[0,1] → s1,s2[1,1];  w1: c1[1,2] → r1[2,2];  w2: c2[1,9] → r2[9,9];  r1,r2 → agg[9,10] → stop[10,10]
    """
    b = TraceBuilder("straggler")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
    s1, s2 = b.spawn("w1", t=1, t_end=1, after=d), b.spawn("w2", t=1, t_end=1, after=d)
    c1, c2 = b.tool_call("w1", "x", t=1, t_end=2, after=s1), b.tool_call("w2", "x", t=1, t_end=9, after=s2)
    r1, r2 = b.return_("w1", t=2, t_end=2, after=c1), b.return_("w2", t=9, t_end=9, after=c2)
    agg = b.aggregate(t=9, t_end=10, after=[r1, r2])
    b.decide("stop", action="stop", t=10, t_end=10, after=agg)
    return b.build()


def test_straggler():
    tr = straggler()
    res = check(tr, {
        "e2/work_s": 11.0, "e2/critical_path_s": 10.0, "e2/speedup": 1.1,
        "e2/peak_concurrency": 2.0, "e2/efficiency": 0.55,
        # [0,9): main d,s1,s2 = 3 + max(w1: c1,r1 = 2; w2: c2 = 1) ; [9,10): agg + r2 ; [10,∞): stop
        "e2/critical_steps": 8.0, "e2/critical_path_events": 6.0,
    })
    g = TraceGraph.from_trace(tr)
    assert [g.ids[i] for i in g.critical_path().events] == ["e1", "e3", "e5", "e7", "e8", "e9"]
    assert res.metrics["e1/task_success"] is None


# ---------------------------------------------------------------------------------- 4
def debate():
    """Two debaters alternate messages; the orchestrator judges.

    d[0,1] → sA,sB[1,1];  A: m1[1,2] ─msg→ B: m2[2,3] ─msg→ A: m3[3,4] ─msg→ B: rB[4,4]
    A: m3 → rA[4,4];  rA,rB → agg[4,5] → stop[5,5]
    """
    b = TraceBuilder("debate", topology="debate")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
    sa, sb = b.spawn("A", t=1, t_end=1, after=d), b.spawn("B", t=1, t_end=1, after=d)
    m1 = b.message("A", "B", t=1, t_end=2, after=None)
    b.edge(sa, m1, EdgeType.CAUSAL)
    m2 = b.message("B", "A", t=2, t_end=3, after=m1)
    b.edge(sb, m2, EdgeType.CAUSAL)
    m3 = b.message("A", "B", t=3, t_end=4, after=m2)
    ra = b.return_("A", t=4, t_end=4, after=m3)
    rb = b.return_("B", t=4, t_end=4)
    b.edge(m3, rb, EdgeType.MESSAGE)
    agg = b.aggregate(t=4, t_end=5, after=[ra, rb], outcome=Outcome(success=False))
    b.decide("stop", action="stop", t=5, t_end=5, after=agg)
    return b.build()


def test_debate_is_serial():
    check(debate(), {
        "e1/task_success": 0.0,
        "e2/work_s": 5.0, "e2/critical_path_s": 5.0, "e2/speedup": 1.0, "e2/peak_concurrency": 1.0,
        "e2/efficiency": 1.0, "e2/critical_path_events": 8.0,
        # [0,4): main d,sA,sB = 3 + max(A: m1,m3 = 2; B: m2 = 1); [4,5): agg + 1; [5,∞): stop
        "e2/critical_steps": 8.0,
        "e3/overhead_events": 1.0, "e3/messages_per_subagent": 1.5, "cost/messages": 3.0,
        "waste/events": 0.0,
    })


# ---------------------------------------------------------------------------------- 5
def hierarchical():
    """Three levels: O spawns managers M1, M2; M1 spawns W1, W2; M2 spawns W3.

    O: d[0,1] → sM1, sM2[1,1]
    M1: sW1, sW2[1,1]        M2: sW3[1,1]
    W1: c1[1,3] → r1[3,3]    W2: c2[1,4] → r2[4,4]    W3: c3[1,2] → r3[2,2]
    M1: r1,r2 → a1[4,5] → rm1[5,5]       M2: r3 → a2[2,3] → rm2[3,3]
    O: rm1,rm2 → agg[5,6] → stop[6,6]
    """
    b = TraceBuilder("hier", topology="hierarchical", orchestrator="O")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
    sm1, sm2 = b.spawn("M1", t=1, t_end=1, after=d), b.spawn("M2", t=1, t_end=1, after=d)
    sw1 = b.spawn("W1", t=1, t_end=1, after=sm1, by="M1")
    sw2 = b.spawn("W2", t=1, t_end=1, after=sm1, by="M1")
    sw3 = b.spawn("W3", t=1, t_end=1, after=sm2, by="M2")
    c1 = b.tool_call("W1", "x", t=1, t_end=3, after=sw1)
    c2 = b.tool_call("W2", "x", t=1, t_end=4, after=sw2)
    c3 = b.tool_call("W3", "x", t=1, t_end=2, after=sw3)
    r1 = b.return_("W1", t=3, t_end=3, to="M1", after=c1)
    r2 = b.return_("W2", t=4, t_end=4, to="M1", after=c2)
    r3 = b.return_("W3", t=2, t_end=2, to="M2", after=c3)
    a1 = b.aggregate(t=4, t_end=5, after=[r1, r2], agent="M1")
    a2 = b.aggregate(t=2, t_end=3, after=[r3], agent="M2")
    rm1 = b.return_("M1", t=5, t_end=5, after=a1)
    rm2 = b.return_("M2", t=3, t_end=3, after=a2)
    agg = b.aggregate(t=5, t_end=6, after=[rm1, rm2])
    b.decide("stop", action="stop", t=6, t_end=6, after=agg)
    return b.build()


def test_hierarchical_three_levels():
    tr = hierarchical()
    check(tr, {
        "spawn/depth": 2.0, "spawn/max_fanout": 2.0, "spawn/agents": 5.0, "spawn/finish_rate": 1.0,
        "spawn/peak_alive": 5.0,
        "e2/work_s": 10.0, "e2/critical_path_s": 6.0, "e2/critical_path_events": 9.0,
        "e2/speedup": 10 / 6, "e2/peak_concurrency": 3.0, "e2/efficiency": 10 / 18,
        # [0,5): O d,sM1,sM2 = 3 + max(M1 3, M2 3, W* 2) ; [5,6): agg + rm1 ; [6,∞): stop
        "e2/critical_steps": 9.0,
        "waste/events": 0.0,
    })
    tree = TraceGraph.from_trace(tr).spawn_tree()
    g = TraceGraph.from_trace(tr)
    assert {g.agents[c] for c in tree.children[g.agent_index["M1"]]} == {"W1", "W2"}
    assert tree.depth[g.agent_index["W3"]] == 2 and tree.roots == [g.agent_index["O"]]


# ---------------------------------------------------------------------------------- 6
def wasted_branches():
    """w3 returns after the aggregate was formed: its branch is wasted work.

    d[0,1] → s1,s2,s3[1,1];  w1: c1[1,3] → r1[3,3];  w2: c2[1,2] → r2[2,2];  w3: c3[1,5] → r3[5,5]
    r1,r2 → agg[3,4] → stop[5,5]            (r3 feeds nothing)
    tokens: c_i 100 in.
    """
    b = TraceBuilder("waste")
    d = b.decide("spawn", action="spawn:3", t=0, t_end=1)
    s = [b.spawn(f"w{i}", t=1, t_end=1, after=d) for i in (1, 2, 3)]
    ends = (3, 2, 5)
    c = [b.tool_call(f"w{i + 1}", "x", t=1, t_end=ends[i], after=s[i], tokens_in=100) for i in range(3)]
    r = [b.return_(f"w{i + 1}", t=ends[i], t_end=ends[i], after=c[i]) for i in range(3)]
    agg = b.aggregate(t=3, t_end=4, after=r[:2])
    b.decide("stop", action="stop", t=5, t_end=5, after=agg)
    return b.build()


def test_wasted_branches():
    tr = wasted_branches()
    check(tr, {
        "waste/events": 3.0,               # s3, c3, r3
        "waste/share": 3 / 12, "waste/time_s": 4.0, "waste/tokens": 100.0,
        "waste/agents": 1.0,               # every event of w3 is wasted
        "spawn/finish_rate": 1.0,
    })
    g = TraceGraph.from_trace(tr)
    per = dict(zip(g.agents, wasted_by_agent(g).tolist(), strict=True))
    assert per == {"orchestrator": 1, "w1": 0, "w2": 0, "w3": 2}


# ---------------------------------------------------------------------------------- 7
def untrusted_to_privileged():
    """An untrusted search result flows into a privileged shell call and on to the output.

    d[0,1] → s(w)[1,1] → c1 search[1,2] → r1 search[2,3] (trusted: false) → c2 shell[3,4] (privileged)
           → r2[4,5] → ret[5,5] ─┐
    d → s(w2)[1,1] → c4 fs.write[1,2] (privileged) → ret2[2,2] ─┴→ agg[5,6] → stop[6,6]
    """
    b = TraceBuilder("inject")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)                       # e1
    s = b.spawn("w", t=1, t_end=1, after=d)                                      # e2
    c1 = b.tool_call("w", "web.search", t=1, t_end=2, after=s)                   # e3
    r1 = b.tool_result("w", "web.search", t=2, t_end=3, after=c1, trusted=False)  # e4
    c2 = b.tool_call("w", "shell", t=3, t_end=4, after=r1, privileged=True)      # e5
    r2 = b.tool_result("w", "shell", t=4, t_end=5, after=c2, trusted=True)       # e6
    ret = b.return_("w", t=5, t_end=5, after=r2)                                 # e7
    s2 = b.spawn("w2", t=1, t_end=1, after=d)                                    # e8
    c4 = b.tool_call("w2", "fs.write", t=1, t_end=2, after=s2, privileged=True)  # e9
    ret2 = b.return_("w2", t=2, t_end=2, after=c4)                               # e10
    agg = b.aggregate(t=5, t_end=6, after=[ret, ret2])                           # e11
    b.decide("stop", action="stop", t=6, t_end=6, after=agg)                     # e12
    return b.build()


def test_untrusted_result_reaches_privileged_call():
    res = check(untrusted_to_privileged(), {
        "safety/untrusted_events": 1.0, "safety/privileged_calls": 2.0,
        "safety/flows": 2.0,               # c2 (privileged) and agg (final output)
        "safety/tainted_privileged": 1.0,  # c4 is not reached
        "safety/output_tainted": 1.0,
    })
    assert [(f.sink, f.kind, f.path) for f in res.flows] == [
        ("e5", "privileged_call", ("e4", "e5")),
        ("e11", "final_output", ("e4", "e5", "e6", "e7", "e11")),
    ]


# ---------------------------------------------------------------------------------- 8
def error_caught():
    """w1 errs; the verifying aggregate is explicitly clean, so the error stops there.

    d[0,1] → s1,s2[1,1];  w1: c1[1,2] (error) → r1[2,2] (error);  w2: c2[1,2] → r2[2,2]
    r1,r2 → v = aggregate[2,3] (error: false, verifier "judge", success) → stop[3,3]
    """
    b = TraceBuilder("caught")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
    s1, s2 = b.spawn("w1", t=1, t_end=1, after=d), b.spawn("w2", t=1, t_end=1, after=d)
    c1 = b.tool_call("w1", "x", t=1, t_end=2, after=s1, error=True)
    r1 = b.return_("w1", t=2, t_end=2, after=c1, error=True)
    c2 = b.tool_call("w2", "x", t=1, t_end=2, after=s2)
    r2 = b.return_("w2", t=2, t_end=2, after=c2)
    v = b.aggregate(t=2, t_end=3, after=[r1, r2], error=False, outcome=Outcome(success=True, verifier="judge"))
    b.decide("stop", action="stop", t=3, t_end=3, after=v)
    return b.build()


def test_error_caught_by_verifier():
    check(error_caught(), {
        "e4/erroneous_events": 2.0, "e4/erroneous_roots": 1.0,   # c1 is the root, r1 inherits
        "e4/amplification": 1.0,                                 # F \ R = {r1}
        "e4/output_tainted": 0.0, "e4/caught_by_aggregation": 1.0,
        "e1/task_success": 1.0,
    })


# ---------------------------------------------------------------------------------- 9
def error_reaches_output():
    """Same run, but the aggregate passes the error on to the output.

    ... r1 (error), r2 → agg[2,3] (error, success false) → stop[3,3]
    """
    b = TraceBuilder("tainted")
    d = b.decide("spawn", action="spawn:2", t=0, t_end=1)
    s1, s2 = b.spawn("w1", t=1, t_end=1, after=d), b.spawn("w2", t=1, t_end=1, after=d)
    c1 = b.tool_call("w1", "x", t=1, t_end=2, after=s1, error=True)
    r1 = b.return_("w1", t=2, t_end=2, after=c1, error=True)
    c2 = b.tool_call("w2", "x", t=1, t_end=2, after=s2)
    r2 = b.return_("w2", t=2, t_end=2, after=c2)
    agg = b.aggregate(t=2, t_end=3, after=[r1, r2], error=True, outcome=Outcome(success=False))
    b.decide("stop", action="stop", t=3, t_end=3, after=agg)
    return b.build()


def test_error_reaches_output():
    res = check(error_reaches_output(), {
        "e4/erroneous_events": 3.0, "e4/erroneous_roots": 1.0,
        "e4/amplification": 2.0,             # flagged r1, agg descend from the one root c1 (stop is tainted, not flagged)
        "e4/output_tainted": 1.0, "e4/caught_by_aggregation": 0.0,
        "e1/task_success": 0.0,
    })
    assert reference_metrics(res)["error_amplification"] == 2.0


# ---------------------------------------------------------------------------------- 10
def missing_durations():
    """No event has an end time: durations come from the fill rule.

    O: d t=0 → spawn t=1 ............................ agg t=6 → stop t=7
    b:            c t=2 → ret t=5 ─return→ agg
    filled (each event lasts until the first thing that followed it: the agent's next event
    or its earliest dependant): d 1, spawn 1 (until c starts — not 5, O's wait for b),
    c 3, ret 1 (until agg), agg 1, stop 0. Before this rule the spawn lasted 5 s, b's work
    was counted twice and the critical path was 10 s in a 7-s run.
    """
    b = TraceBuilder("nodur")
    d = b.decide("spawn", action="spawn:1", t=0)
    s = b.spawn("b", t=1, after=d)
    c = b.tool_call("b", "x", t=2, after=s)
    r = b.return_("b", t=5, after=c)
    agg = b.aggregate(t=6, after=r)
    b.decide("stop", action="stop", t=7, after=agg)
    return b.build()


def test_missing_durations_filled_and_recorded():
    tr = missing_durations()
    res = check(tr, {
        "e2/work_s": 7.0, "e2/critical_path_s": 7.0, "e2/speedup": 1.0,
        "e2/peak_concurrency": 1.0, "e2/efficiency": 1.0,
        "e2/critical_steps": 6.0, "cost/wall_clock_s": 7.0,
    })
    g = TraceGraph.from_trace(tr)
    assert g.duration.tolist() == [1.0, 1.0, 3.0, 1.0, 1.0, 0.0]
    assert not g.end_known.any()
    assert any("6 of 6 events have no end time" in a for a in res.assumptions)


# ---------------------------------------------------------------------------------- 11
def safety_flow_edges():
    """``safety_flow`` edges carry taint but are not dependencies.

    w: r1[0,1] (untrusted) ─safety_flow→ w2: c2[2,3] (privileged) → human h[3,3]
    r1 → guard: safety_event[1,1]
    no stop: the final output is the latest event, h
    """
    b = TraceBuilder("sflow")
    r1 = b.tool_result("w", "web", t=0, t_end=1, trusted=False)
    c2 = b.tool_call("w2", "shell", t=2, t_end=3, privileged=True)
    b.edge(r1, c2, EdgeType.SAFETY_FLOW)
    b.add("human_intervention", "human", t=3, t_end=3, after=c2)
    b.add("safety_event", "guard", t=1, t_end=1, after=r1)
    return b.build()


def test_safety_flow_edges_taint_but_do_not_depend():
    res = check(safety_flow_edges(), {
        "safety/flows": 2.0, "safety/tainted_privileged": 1.0, "safety/output_tainted": 1.0,
        "safety/events": 1.0, "safety/human_interventions": 1.0,
        "e2/critical_path_s": 1.0,  # would be 2 if the safety_flow edge were a dependency
        "waste/events": 2.0,        # r1 and the safety event are not ancestors of the output
    })
    assert [f.path for f in res.flows] == [("e1", "e2"), ("e1", "e2", "e3")]


# ---------------------------------------------------------------------------------- 12
def cyclic():
    """e1 → e2 → e3 → e2: a causal cycle."""
    b = TraceBuilder("cyc")
    e1 = b.tool_call("a", "x", t=0, t_end=1)
    e2 = b.tool_call("a", "x", t=1, t_end=2, after=e1)
    e3 = b.tool_call("a", "x", t=2, t_end=3, after=e2)
    b.edge(e3, e2)
    return b.build()


def test_cycle_is_named():
    with pytest.raises(TraceInvalidError) as info:
        compute(cyclic(), validate=False)
    msg = str(info.value)
    assert "cycle" in msg and "e2 → e3 → e2" in msg
    p = info.value.problems[0]  # the validator's code, located at an edge of the cycle
    assert (p.code, p.path) == ("edge.cycle", "$.edges[1]")
    from orchestrace import validate
    (v,) = [q for q in validate(cyclic()).problems if q.code == "edge.cycle"]
    assert (v.path, v.message) == (p.path, p.message)  # one graph core, one problem table
    with pytest.raises(TraceInvalidError):  # through the validator too
        compute(cyclic())


# ---------------------------------------------------------------------------------- 13
def test_reference_example():
    """The survey's example: no end times, no stop, one untrusted result reaching the output.

    No end times: each event lasts until the first thing that followed it (its agent's next
    event or its earliest dependant) — e1 1 (until e2), e2 1 (until e3), e3 1 (until e4, not 5
    until the orchestrator's next event e8), e4 1, e5 1 (until e6), e6 1, e7 1, e8 0: work 7 s
    in a 7-s run, one event at a time. Critical path e1 → e3 → e4 → e5 → e6 → e7 → e8 =
    1 + 1 + 1 + 1 + 1 + 1 + 0 = 6 s; speedup = 7 / max(6, 7 / 1) = 1 (peak concurrency 1).
    Before: work 9, critical path 8 s for a 7-s run, peak concurrency 2, speedup 9/8.
    The trace declares costs (tokens 12000, wall_clock_s 420): cost/* honours them,
    cost/derived/* gives the events' own values.
    """
    tr = load(REFERENCE)
    res = check(tr, {
        "e1/task_success": 1.0,            # the producer's own metrics (recorded as an assumption)
        "e2/work_s": 7.0, "e2/critical_path_s": 6.0, "e2/critical_path_events": 7.0,
        "e2/speedup": 1.0, "e2/peak_concurrency": 1.0, "e2/efficiency": 1.0,
        "e2/critical_steps": 6.0, "spawn/finish_rate": 0.5, "safety/flows": 1.0,
        "cost/tokens": 12000.0, "cost/wall_clock_s": 420.0, "cost/tool_calls": 1.0, "cost/messages": 1.0,
        "cost/derived/tokens": None, "cost/derived/wall_clock_s": 7.0, "cost/derived/tool_calls": 1.0,
        "cost/derived/messages": 1.0, "e3/overhead_tokens": None,
    })
    assert [f.path for f in res.flows] == [("e6", "e7", "e8")]
    assert any("task_success taken from the trace's own metrics" in a for a in res.assumptions)
    assert any("cost/wall_clock_s = 420 as declared" in a and "the events give 7" in a for a in res.assumptions)
    line = json.dumps({"trace_id": res.trace_id, "metrics": res.metrics})
    assert json.loads(line)["metrics"]["e2/critical_path_s"] == 6.0


def test_flows_are_capped():
    b = TraceBuilder("many")
    r = b.tool_result("w", "web", t=0, t_end=1, trusted=False)
    for k in range(5):
        b.tool_call("w", "shell", t=1 + k, t_end=2 + k, after=r, privileged=True)
    tr = b.build()
    assert len(safety_flows(tr, limit=3)) == 3
    assert compute(tr).metrics["safety/flows"] == 5.0
