"""Measures and credit keep no hidden state: a graph shared between them is only a cache.

Before issue 19 both wrote caches into ``TraceGraph.__dict__`` and appended to
``g.assumptions``, so ``credit.assign(...).notes`` changed after an unrelated
``compute_metrics`` call on the same graph.
"""

from __future__ import annotations

import orchestrace as ot
from orchestrace.analysis.graph import TraceGraph


def _trace() -> ot.Trace:
    # no end times (the graph fills them: an assumption), no tokens and no error flags (the
    # measures note what they assume), an outcome to credit
    b = ot.TraceBuilder("notes", task_id="t")
    d = b.decide(ot.Decision.SPAWN, action="spawn:w1", t=0)
    s = b.spawn("w1", t=1, after=d)
    c = b.tool_call("w1", "search", t=2, after=s)
    r = b.return_("w1", t=3, after=c)
    a = b.aggregate(t=4, after=[r], outcome=ot.Outcome(success=True))
    b.decide(ot.Decision.STOP, action="stop", t=5, after=a)
    return b.build()


def test_credit_notes_do_not_depend_on_an_unrelated_compute_metrics_call() -> None:
    tr = _trace()
    alone = ot.credit.assign(tr, unit="agent", method="causal", graph=TraceGraph.from_trace(tr)).notes
    g = TraceGraph.from_trace(tr)
    metrics = ot.compute_metrics(g)
    after = ot.credit.assign(tr, unit="agent", method="causal", graph=g).notes
    assert after == alone
    assert len(metrics.assumptions) > len(g.assumptions) >= 1  # the measures did note things
    assert not set(metrics.assumptions[len(g.assumptions):]) & set(after)


def test_measure_assumptions_are_returned_by_value_and_repeat_exactly() -> None:
    g = TraceGraph.from_trace(_trace())
    before = g.assumptions
    first = ot.compute_metrics(g)
    first.assumptions.append("changed by the caller")
    second = ot.compute_metrics(g)
    assert g.assumptions == before and isinstance(g.assumptions, tuple)
    assert second.assumptions == first.assumptions[:-1]
    assert ot.compute_metrics(g, ["e1"]).assumptions != second.assumptions  # per call, per selection
    assert ot.compute_metrics(TraceGraph.from_trace(_trace())).assumptions == second.assumptions


def test_only_the_declared_cache_is_written_to_a_graph() -> None:
    tr = _trace()
    g = TraceGraph.from_trace(tr)
    fresh = set(vars(TraceGraph.from_trace(tr)))
    ot.compute_metrics(g)
    ot.credit.assign(tr, unit="turn", method="discounted", graph=g)
    lazily = {k for k, v in vars(TraceGraph).items() if hasattr(v, "__set_name__") and hasattr(v, "attrname")}
    assert set(vars(g)) - fresh <= lazily  # cached_property values only
    assert g._derived  # what measures and credit derived sits in the one explicit cache
    assert {k[0] for k in g._derived} <= {"measures", "credit", "units"}
