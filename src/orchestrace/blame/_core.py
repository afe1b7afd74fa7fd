"""The blame method: the decisive error of a failed run, from the evidence on its events and its graph.

Rule (DESIGN §5 "Blame from evidence"): the **decisive error** is the earliest flagged event
whose effect reaches the failed outcome along dependency edges. An event is flagged when it
carries evidence (``attrs.evidence``, written by the importers) or ``error: true``; a record's
``blames`` moves the error to the event that made it (an execution's failure → the turn that
wrote the code; a ledger verdict → the worker turn it judges). "Earliest" orders the errors'
origins by time, then by position. The origin's agent is the culprit, its turn the culprit
step. A final answer that contradicts the checked facts confirms the failure but is not an
origin (:data:`SYMPTOM_KINDS`). Origins on a person's turn or on an agent outside the team
(the declared one when the source declares it) are skipped with a located note, and so is
text whose provenance says it was merely quoted. A failed graded aggregate (a vote) blames the
members whose answer it adopted. With no usable evidence, a stated fallback rule picks the
first turn of the first working agent, at low confidence, and the result says ``no evidence``.
A run recorded as a success has nothing to blame; a run that states no outcome is ``outcome
unknown`` (``assume_failed=True`` blames it as if it failed).

>>> from orchestrace.core.builder import TraceBuilder
>>> from orchestrace.core.trace import Outcome
>>> b = TraceBuilder("r")
>>> m1 = b.add("message", "coder", t=0, t_end=1)
>>> m2 = b.add("message", "terminal", t=1, t_end=2, after=m1,
...            attrs={"evidence": [{"kind": "exec_failed", "blames": m1}]}, error=True)
>>> m3 = b.add("message", "critic", t=2, t_end=3, after=m2)
>>> r = blame(b.build(outcome=Outcome(success=False)))
>>> r.decisive.agent, r.decisive.event, r.rule
('coder', 'e1', 'earliest flagged error reaching the output')
>>> r = blame(b.build())
>>> r.status, r.decisive
('outcome unknown', None)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..evidence import EvidenceKind
from ._origins import (
    WEAK_KINDS,
    Culprit,
    _Cand,
    _fallback,
    failed_of,
    origins_of,
    step_of,
)

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..core.trace import Event, Trace
    from ._scorer import Scorer

__all__ = ["FALLBACK_RULE", "METHODS", "STATUSES", "BlameResult", "Culprit", "blame", "failed_of", "step_of"]

#: The rule used when the trace carries no usable evidence.
FALLBACK_RULE = "no evidence: fallback 'first reply' (the first turn of an agent that is neither the " \
                "orchestrator nor a person, nor an executor's output, skipping an opening turn that only states the task)"
_FALLBACK_WORKER = "no evidence: fallback 'first worker turn' (the first turn of an agent that is neither the " \
                   "orchestrator nor a person, nor an executor's output)"
#: The rule of a run recorded as a success, and of a run that states no outcome.
NOTHING_RULE = "nothing to blame: the run is recorded as a success"
UNKNOWN_RULE = "outcome unknown: the run states no outcome (or outcome fields that disagree); nobody blamed"
#: What a result says: a culprit named, a success, no outcome, or no agent turn at all.
STATUSES = ("blamed", "nothing to blame", "outcome unknown", "no agent")
#: Blame methods: the fixed rule, or the learned scorer over turns.
METHODS = ("rule", "learned")
LEARNED_RULE = "learned scorer over turns: the most probable agent, its most probable turn (cross-validated by run)"
#: Fallback rules: ``first-reply`` skips an opening turn that only states the task (it depends on
#: no other turn); ``first-worker`` takes the first working agent's first turn.
FALLBACKS = ("first-reply", "first-worker")


@dataclass(frozen=True)
class BlameResult:
    """The decisive error of a run (``decisive``, None when there is nothing or nobody to blame), the
    runner-up, the ``rule`` that chose it, whether evidence was found, event blame shares, notes and
    the ``status`` (:data:`STATUSES`)."""

    trace_id: str
    decisive: Culprit | None
    runner_up: Culprit | None
    rule: str
    evidence_found: bool
    failed: bool | None
    shares: dict[str, float] = field(default_factory=dict)  # event id → blame share (sums to 1)
    notes: tuple[str, ...] = ()
    status: str = "blamed"  # one of STATUSES

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``orchestrace blame --json``)."""
        return {"trace_id": self.trace_id, "status": self.status, "failed": self.failed,
                "evidence_found": self.evidence_found,
                "rule": self.rule, "decisive": None if self.decisive is None else self.decisive.to_dict(),
                "runner_up": None if self.runner_up is None else self.runner_up.to_dict(),
                "shares": self.shares, "notes": list(self.notes)}


def blame(trace: Trace, *, graph: TraceGraph | None = None,
          kinds: set[EvidenceKind] | frozenset[EvidenceKind] | None = None, tiers: bool = True,
          fallback: str = "first-reply", assume_failed: bool = False, method: str = "rule",
          scorer: Scorer | None = None) -> BlameResult:
    """The decisive error of ``trace`` (see the module docstring); ``kinds`` restricts the evidence used.

    ``tiers``: weak evidence (:data:`WEAK_KINDS`) decides only when there is no strong evidence;
    ``fallback``: the rule used without evidence (:data:`FALLBACKS`); ``method``: ``rule`` (the
    fixed rule above) or ``learned`` (the most probable agent and turn under the learned scorer,
    ``scorer`` or the shipped one); either way the confidences are the scorer's calibrated
    probabilities. A run recorded as a success
    has nothing to blame; a run that states no outcome (or contradictory ones) is ``outcome
    unknown`` with nobody blamed, unless ``assume_failed``.

    Never raises on a valid trace: a trace without evidence, with only human turns, with quoted
    error text or with evidence on an agent outside the team gets a result whose ``notes`` say
    so (``decisive`` is None when there is nothing, or nobody, to blame: see ``status``).
    """
    from ..analysis.graph import TraceGraph

    if method not in METHODS:
        from ..errors import ConfigError

        raise ConfigError(f"unknown blame method {method!r}; use one of {', '.join(METHODS)}")
    g = graph if graph is not None else TraceGraph.from_trace(trace)
    ev = trace.events
    notes: list[str] = []
    failed = failed_of(trace)
    seeds = [i for i in (g.output, g.stop) if i is not None and i >= 0]
    reach = g.ancestor_mask(seeds, inclusive=True) if seeds else np.ones(g.n, dtype=bool)
    cands, skipped, symptoms = origins_of(trace, g, kinds, reach)
    if symptoms:
        notes.append("the final answer contradicts the checked facts (a symptom that confirms the failure, not "
                     "its origin): " + symptoms[0])
    notes.extend(skipped[:20])
    if len(skipped) > 20:
        notes.append(f"… {len(skipped) - 20} more skipped flags")
    if failed is False or (failed is None and not assume_failed):
        rule = (NOTHING_RULE if failed is False else UNKNOWN_RULE)
        if cands:
            notes.append(f"{len(cands)} flagged error(s) found; " + ("they did not make the run fail" if failed is False
                         else "blame them only if the run failed (assume_failed=True, --assume-failed)"))
        return BlameResult(trace.trace_id, None, None, rule, bool(cands), failed, {}, tuple(notes),
                           status="nothing to blame" if failed is False else "outcome unknown")
    if failed is None:
        notes.append("the run's outcome is unknown (no outcome, or outcome fields that disagree): blamed as if it "
                     "failed (assume_failed)")
    order = _ranked(cands, g, tiers, notes)
    if order:
        total = sum(c.strength() for c in order)
        by_agent: dict[str, float] = {}
        for c in order:
            by_agent[ev[c.origin].agent] = by_agent.get(ev[c.origin].agent, 0.0) + c.strength()
        dec = _culprit(ev, order[0], by_agent, total)
        other = next((c for c in order[1:] if ev[c.origin].agent != dec.agent), order[1] if len(order) > 1 else None)
        runner = _culprit(ev, other, by_agent, total) if other is not None else _fallback(trace, g, exclude=dec.agent)
        shares = _shares(g, [c.origin for c in order], reach)
        res = BlameResult(trace.trace_id, dec, runner, "earliest flagged error reaching the output", True, failed,
                          shares, tuple(notes))
        return _scored(trace, g, res, method, scorer)
    return _without_evidence(trace, g, reach, failed, notes, fallback, method, scorer)


def _ranked(cands: dict[int, _Cand], g: TraceGraph, tiers: bool, notes: list[str]) -> list[_Cand]:
    """The candidates, earliest first; with ``tiers``, those with strong evidence before the weak-only ones."""
    order = sorted(cands.values(), key=lambda c: (g.t[c.origin], c.origin))
    if tiers:
        strong = [c for c in order if any(r is None or r.kind not in WEAK_KINDS for _, r in c.flagged)]
        if strong and len(strong) < len(order):
            notes.append(f"{len(order) - len(strong)} error(s) with weak evidence only (a repeat, a refusal) do not "
                         "decide: stronger evidence exists")
            order = strong + [c for c in order if c not in strong]
    return order


def _culprit(ev: tuple[Event, ...], c: _Cand, by_agent: dict[str, float], total: float) -> Culprit:
    """The culprit a candidate names, its evidence lines, and its confidence (its strength, weighted by its agent's share)."""
    o = ev[c.origin]
    step, what = step_of(o, c.origin)
    lines = []
    for i, r in c.flagged:
        f = ev[i]
        kind = r.kind.value if r is not None else "error"
        excerpt = f": {r.excerpt}" if r is not None and r.excerpt else ""
        lines.append(f"{kind} @ {f.id} ({f.source or f.agent}){excerpt}")
    conf = c.strength() * (0.5 + 0.5 * by_agent[o.agent] / total)
    return Culprit(o.agent, o.id, step, what, round(conf, 3),
                   tuple(dict.fromkeys(r.kind.value if r is not None else "error" for _, r in c.flagged)),
                   tuple(lines), o.source)


def _without_evidence(trace: Trace, g: TraceGraph, reach: np.ndarray, failed: bool | None, notes: list[str],
                      fallback: str, method: str, scorer: Scorer | None) -> BlameResult:
    """A failed run with no flagged error: the ``fallback`` rule names the culprit (or nobody)."""
    if fallback not in FALLBACKS:
        from ..errors import ConfigError

        raise ConfigError(f"unknown blame fallback {fallback!r}; use one of {', '.join(FALLBACKS)}")
    rule = FALLBACK_RULE if fallback == "first-reply" else _FALLBACK_WORKER
    notes.append(rule)
    fb = _fallback(trace, g, reply=fallback == "first-reply")
    if fb is None:
        notes.append("no agent turn to blame (only a person's turns, or only the orchestrator's structure)")
        return BlameResult(trace.trace_id, None, None, "no evidence, no agent", False, failed, {}, tuple(notes),
                           status="no agent")
    second = _fallback(trace, g, exclude=fb.agent, reply=fallback == "first-reply")
    shares = _shares(g, [g.index[fb.event]], reach)
    return _scored(trace, g, BlameResult(trace.trace_id, fb, second, rule, False, failed, shares, tuple(notes)),
                   method, scorer)


def _shares(g: TraceGraph, origins: list[int], reach: np.ndarray) -> dict[str, float]:
    """Blame shares over events: 0.6 on the decisive origin, 0.4 over the other origins (by order, halving),
    else over the events that carried the decisive error to the output; sums to 1."""
    dec = origins[0]
    rest = origins[1:]
    if not rest:
        carried = g.descendant_mask([dec]) & reach
        rest = np.flatnonzero(carried).tolist()
        w = [1.0] * len(rest)
    else:
        w = [0.5 ** k for k in range(len(rest))]
    if not rest:
        return {g.ids[dec]: 1.0}
    s = sum(w)
    out = {g.ids[dec]: 0.6}
    for i, x in zip(rest, w, strict=True):
        out[g.ids[i]] = out.get(g.ids[i], 0.0) + 0.4 * x / s
    return out


def _scored(trace: Trace, g: TraceGraph, res: BlameResult, method: str, scorer: Scorer | None) -> BlameResult:
    """``res`` with the scorer's calibrated confidences (``rule``), or the scorer's own pick (``learned``)."""
    from dataclasses import replace

    from ..errors import ConfigError
    from ._learned import pick, turn_probs

    try:
        sc = turn_probs(trace, g, scorer)
    except ConfigError as exc:
        if method == "learned":
            raise
        return replace(res, notes=(*res.notes, f"confidence: the fixed strength formula (no learned scorer: {exc})"))
    if not sc.cands.turns:
        return res

    def conf(c: Culprit | None) -> Culprit | None:
        if c is None:
            return None
        row = sc.row_of(g.index[c.event])
        return replace(c, confidence=round(sc.calibrated(sc.agents.get(c.agent, 0.0)), 3),
                       step_confidence=None if row is None else round(sc.calibrated(float(sc.p[row]), "step"), 3))

    if method == "rule":
        return replace(res, decisive=conf(res.decisive), runner_up=conf(res.runner_up))
    top = pick(sc)
    if top is None:
        return res
    ev = trace.events

    def culprit(agent: str, row: int) -> Culprit:
        t = sc.cands.turns[row]
        e = ev[t.index]
        step, what = step_of(e, t.index)
        same = res.decisive is not None and res.decisive.event == e.id
        lines = (*(res.decisive.evidence if same and res.decisive is not None else ()),
                 f"learned @ {e.id} ({e.source or e.agent}): {sc.why(row)}")
        kinds = (*(res.decisive.kinds if same and res.decisive is not None else ()), "learned")
        return Culprit(agent, e.id, step, what, round(sc.calibrated(sc.agents[agent]), 3), kinds, lines, e.source,
                       round(sc.calibrated(float(sc.p[row]), "step"), 3))

    dec = culprit(*top)
    second = pick(sc, exclude=top[0])
    shares = {ev[t.index].id: float(v) for t, v in zip(sc.cands.turns, sc.p.tolist(), strict=True) if v > 0}
    tot = sum(shares.values())
    return replace(res, decisive=dec, runner_up=None if second is None else culprit(*second), rule=LEARNED_RULE,
                   shares={k: v / tot for k, v in shares.items()})
