"""The blame method: the decisive error of a failed run, from the evidence on its events and its graph.

Rule (DESIGN §5 "Blame from evidence"): the **decisive error** is the earliest flagged event
whose effect reaches the failed outcome along dependency edges. An event is flagged when it
carries evidence (``attrs.evidence``, written by the importers) or ``error: true``; a record's
``blames`` moves the error to the event that made it (an execution's failure → the turn that
wrote the code; a ledger verdict → the worker turn it judges). "Earliest" orders the errors'
origins by time, then by position. The origin's agent is the culprit, its turn the culprit
step. A final answer that contradicts the checked facts confirms the failure but is not an
origin (:data:`SYMPTOM_KINDS`). Origins on a person's turn or on an agent outside the team are skipped with a located
note. With no usable evidence, a stated fallback rule picks the first turn of the first
working agent, at low confidence, and the result says ``no evidence``.

>>> from orchestrace.builder import TraceBuilder
>>> b = TraceBuilder("r")
>>> m1 = b.add("message", "coder", t=0, t_end=1)
>>> m2 = b.add("message", "terminal", t=1, t_end=2, after=m1,
...            attrs={"evidence": [{"kind": "exec_failed", "blames": m1}]}, error=True)
>>> m3 = b.add("message", "critic", t=2, t_end=3, after=m2)
>>> r = blame(b.build())
>>> r.decisive.agent, r.decisive.event, r.rule
('coder', 'e1', 'earliest flagged error reaching the output')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..importers import STRENGTH, Evidence, EvidenceKind, evidence_of
from ..vocab import EventType

if TYPE_CHECKING:
    from ..graph import TraceGraph
    from ..trace import Event, Trace

__all__ = ["FALLBACK_RULE", "BlameResult", "Culprit", "blame"]

#: The rule used when the trace carries no usable evidence.
FALLBACK_RULE = "no evidence: fallback 'first reply' (the first turn of an agent that is neither the " \
                "orchestrator nor a person, nor an executor's output, skipping an opening turn that only states the task)"
_FALLBACK_WORKER = "no evidence: fallback 'first worker turn' (the first turn of an agent that is neither the " \
                   "orchestrator nor a person, nor an executor's output)"
#: Confidence of a fallback pick.
FALLBACK_CONFIDENCE = 0.15
_STEP = re.compile(r"\[(\d+)\](?:\.[^\[\]]*)?$")
_ERROR_FLAG = 0.5  # strength of a bare ``error: true`` without evidence records
#: Evidence that confirms the failure but is not where an error was made (not an origin).
SYMPTOM_KINDS = frozenset({EvidenceKind.CONTRADICTS_FACTS})
#: Weak evidence: a repeat or a refusal is not a mistake by itself (re-running a search, saying one
#: cannot browse); it decides only when the trace has no strong evidence (``tiers=True``).
WEAK_KINDS = frozenset({EvidenceKind.REPEATED_ACTION, EvidenceKind.REFUSAL})
#: Fallback rules: ``first-reply`` skips an opening turn that only states the task (it depends on
#: no other turn); ``first-worker`` takes the first working agent's first turn.
FALLBACKS = ("first-reply", "first-worker")


@dataclass(frozen=True)
class Culprit:
    """One blamed error: its ``agent``, origin ``event`` id, ``step``, the evidence lines, a confidence.

    ``step`` is the turn index in the source transcript (``$.history[k]``) when the event says
    where it came from, else the event's position in ``Trace.events`` (``step_of`` says which).
    ``evidence`` are human-readable lines ``kind @ event (source): excerpt``.
    """

    agent: str
    event: str
    step: int
    step_of: str
    confidence: float
    kinds: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"agent": self.agent, "event": self.event, "step": self.step, "step_of": self.step_of,
                "confidence": self.confidence, "kinds": list(self.kinds), "evidence": list(self.evidence),
                "source": self.source}


@dataclass(frozen=True)
class BlameResult:
    """The decisive error of a run (``decisive``, None when no agent can be blamed), the runner-up,
    the ``rule`` that chose it, whether evidence was found, event blame shares and notes."""

    trace_id: str
    decisive: Culprit | None
    runner_up: Culprit | None
    rule: str
    evidence_found: bool
    failed: bool | None
    shares: dict[str, float] = field(default_factory=dict)  # event id → blame share (sums to 1)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``orchestrace blame --json``)."""
        return {"trace_id": self.trace_id, "failed": self.failed, "evidence_found": self.evidence_found,
                "rule": self.rule, "decisive": None if self.decisive is None else self.decisive.to_dict(),
                "runner_up": None if self.runner_up is None else self.runner_up.to_dict(),
                "shares": self.shares, "notes": list(self.notes)}


@dataclass
class _Cand:
    origin: int  # event index of the error's origin
    flagged: list[tuple[int, Evidence | None]] = field(default_factory=list)

    def strength(self) -> float:
        return max(STRENGTH[e.kind] if e is not None else _ERROR_FLAG for _, e in self.flagged)


def step_of(ev: Event, index: int) -> tuple[int, str]:
    """``(step, what it counts)``: the source turn index ``[k]`` when the event's source has one."""
    if ev.source:
        m = _STEP.search(ev.source)
        if m:
            return int(m.group(1)), "source turn index"
    return index, "event index"


def _team(trace: Trace) -> set[str] | None:
    agents = trace.meta.get("agents") if isinstance(trace.meta, dict) else None
    if not isinstance(agents, list) or not agents:
        return None
    team = {a for a in agents if isinstance(a, str)}
    orch = trace.meta.get("orchestrator")
    if isinstance(orch, str):
        team.add(orch)
    return team


def _is_human(ev: Event) -> bool:
    return ev.type is EventType.HUMAN_INTERVENTION or ev.role == "human"


def blame(trace: Trace, *, graph: TraceGraph | None = None,
          kinds: set[EvidenceKind] | frozenset[EvidenceKind] | None = None, tiers: bool = True,
          fallback: str = "first-reply") -> BlameResult:
    """The decisive error of ``trace`` (see the module docstring); ``kinds`` restricts the evidence used.

    ``tiers``: weak evidence (:data:`WEAK_KINDS`) decides only when there is no strong evidence;
    ``fallback``: the rule used without evidence (:data:`FALLBACKS`).

    Never raises on a valid trace: a trace without evidence, with only human turns, with an
    unknown outcome or with evidence on an agent outside the team gets a result whose
    ``notes`` say so (``decisive`` is None only when no agent turn exists at all).
    """
    from ..graph import TraceGraph

    g = graph if graph is not None else TraceGraph.from_trace(trace)
    ev = trace.events
    notes: list[str] = []
    failed = None if trace.outcome is None else (None if trace.outcome.success is None else not trace.outcome.success)
    if failed is None:
        notes.append("the run's outcome is unknown (no outcome, or outcome fields that disagree): blamed as if it failed")
    elif not failed:
        notes.append("the run is recorded as a success: the flagged errors below did not make it fail")
    seeds = [i for i in (g.output, g.stop) if i is not None and i >= 0]
    reach = g.ancestor_mask(seeds, inclusive=True) if seeds else np.ones(g.n, dtype=bool)
    team = _team(trace)
    cands: dict[int, _Cand] = {}
    skipped: list[str] = []
    symptoms: list[str] = []
    for i, e in enumerate(ev):
        recs: list[Evidence | None] = list(evidence_of(e.attrs))
        if kinds is not None:
            recs = [r for r in recs if r is not None and r.kind in kinds]
        elif not recs and e.error:
            recs = [None]
        if not recs:
            continue
        if not reach[i]:
            skipped.append(f"{e.id} ({e.source or e.agent}): flagged but its effect does not reach the output")
            continue
        for r in recs:
            if r is not None and r.kind in SYMPTOM_KINDS:
                symptoms.append(f"{e.id} ({e.source or e.agent}): {r.kind.value}"
                                + (f": {r.excerpt}" if r.excerpt else ""))
                continue
            origin = i
            if r is not None and r.blames is not None:
                j = g.index.get(r.blames)
                if j is None:
                    skipped.append(f"{e.id}: evidence blames {r.blames!r}, which is no event of the trace; "
                                   "kept on the flagged event")
                else:
                    origin = j
            o = ev[origin]
            if _is_human(o):
                skipped.append(f"{o.id} ({o.source or o.agent}): evidence on a person's turn, not an agent's; skipped")
                continue
            if team is not None and o.agent not in team:
                skipped.append(f"{o.id} ({o.source or o.agent}): evidence on agent {o.agent!r}, which is not in the "
                               f"team ({', '.join(sorted(team))}); skipped")
                continue
            cands.setdefault(origin, _Cand(origin)).flagged.append((i, r))
    if symptoms:
        notes.append("the final answer contradicts the checked facts (a symptom that confirms the failure, not "
                     "its origin): " + symptoms[0])
        if failed is None:
            failed = True
    notes.extend(skipped[:20])
    if len(skipped) > 20:
        notes.append(f"… {len(skipped) - 20} more skipped flags")
    order = sorted(cands.values(), key=lambda c: (g.t[c.origin], c.origin))
    if tiers:
        strong = [c for c in order if any(r is None or r.kind not in WEAK_KINDS for _, r in c.flagged)]
        if strong and len(strong) < len(order):
            notes.append(f"{len(order) - len(strong)} error(s) with weak evidence only (a repeat, a refusal) do not "
                         "decide: stronger evidence exists")
            order = strong + [c for c in order if c not in strong]
    total = sum(c.strength() for c in order)
    by_agent: dict[str, float] = {}
    for c in order:
        by_agent[ev[c.origin].agent] = by_agent.get(ev[c.origin].agent, 0.0) + c.strength()

    def culprit(c: _Cand) -> Culprit:
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

    if order:
        first = order[0]
        dec = culprit(first)
        other = next((c for c in order[1:] if ev[c.origin].agent != dec.agent), order[1] if len(order) > 1 else None)
        runner = culprit(other) if other is not None else _fallback(trace, g, exclude=dec.agent)
        shares = _shares(g, [c.origin for c in order], reach)
        return BlameResult(trace.trace_id, dec, runner, "earliest flagged error reaching the output", True, failed,
                           shares, tuple(notes))
    if fallback not in FALLBACKS:
        from ..errors import ConfigError

        raise ConfigError(f"unknown blame fallback {fallback!r}; use one of {', '.join(FALLBACKS)}")
    rule = FALLBACK_RULE if fallback == "first-reply" else _FALLBACK_WORKER
    notes.append(rule)
    fb = _fallback(trace, g, reply=fallback == "first-reply")
    if fb is None:
        notes.append("no agent turn to blame (only a person's turns, or only the orchestrator's structure)")
        return BlameResult(trace.trace_id, None, None, "no evidence, no agent", False, failed, {}, tuple(notes))
    second = _fallback(trace, g, exclude=fb.agent, reply=fallback == "first-reply")
    shares = _shares(g, [g.index[fb.event]], reach)
    return BlameResult(trace.trace_id, fb, second, rule, False, failed, shares, tuple(notes))


def _fallback(trace: Trace, g: TraceGraph, exclude: str | None = None, reply: bool = True) -> Culprit | None:
    """The first turn of the first working agent (not the orchestrator, not a person, not an executor's
    output, not ``exclude``); ``reply``: an opening turn that depends on no other event only states the task."""
    orch = trace.meta.get("orchestrator") if isinstance(trace.meta, dict) else None
    work = (EventType.MESSAGE, EventType.TOOL_CALL, EventType.RETURN, EventType.AGGREGATE)
    order = np.argsort(g.t, kind="stable").tolist()

    def first(allow_orch: bool, skip_opener: bool) -> int | None:
        for i in order:
            e = trace.events[i]
            if e.type not in work or _is_human(e) or e.agent == exclude or (e.attrs or {}).get("output") is True:
                continue
            if not allow_orch and (e.role == "orchestrator" or e.agent == orch):
                continue
            if skip_opener and g.pred_ptr[i + 1] == g.pred_ptr[i]:  # an opener: it answers nothing
                continue
            return i
        return None

    # a lone agent (it is its own orchestrator) is blamed for its own turns
    pick = next((i for i in (first(o, s) for o in (False, True) for s in ((True, False) if reply else (False,)))
                 if i is not None), None)
    if pick is None:
        return None
    e = trace.events[pick]
    step, what = step_of(e, pick)
    return Culprit(e.agent, e.id, step, what, FALLBACK_CONFIDENCE, ("fallback",),
                   (f"no evidence: first {'reply' if reply else 'worker turn'} {e.id} ({e.source or e.agent})",), e.source)


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
