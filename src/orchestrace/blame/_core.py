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

>>> from orchestrace.builder import TraceBuilder
>>> from orchestrace.trace import Outcome
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

from ..evidence import STRENGTH, Evidence, EvidenceKind, Provenance, evidence_of, turn_of
from ..vocab import EventType

if TYPE_CHECKING:
    from ..graph import TraceGraph
    from ..trace import Event, Trace
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
#: Confidence of a fallback pick.
FALLBACK_CONFIDENCE = 0.15
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
    ``evidence`` are human-readable lines ``kind @ event (source): excerpt``. ``confidence`` is the
    learned scorer's calibrated probability that ``agent`` is the culprit, ``step_confidence`` that
    this turn is the culprit step (:mod:`._scorer`; the fixed strength formula when no scorer is
    readable, said in the notes).
    """

    agent: str
    event: str
    step: int
    step_of: str
    confidence: float
    kinds: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    source: str | None = None
    step_confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"agent": self.agent, "event": self.event, "step": self.step, "step_of": self.step_of,
                "confidence": self.confidence, "step_confidence": self.step_confidence, "kinds": list(self.kinds),
                "evidence": list(self.evidence), "source": self.source}


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


@dataclass
class _Cand:
    origin: int  # event index of the error's origin
    flagged: list[tuple[int, Evidence | None]] = field(default_factory=list)

    def strength(self) -> float:
        return max(STRENGTH[e.kind] if e is not None else _ERROR_FLAG for _, e in self.flagged)


def step_of(ev: Event, index: int) -> tuple[int, str]:
    """``(step, what it counts)``: the source turn index when the event's source has one
    (:func:`orchestrace.evidence.turn_of`: the turn's, not a tool call's inside it), else ``index``.

    >>> from orchestrace.trace import Event
    >>> step_of(Event(id="e9", t=0.0, type="tool_call", agent="a", source="r.json:$.history[3].tool_calls[1]"), 9)
    (3, 'source turn index')
    """
    k = turn_of(ev.source)
    if k is not None:
        return k, "source turn index"
    return index, "event index"


def _team(trace: Trace) -> tuple[set[str] | None, str]:
    """The declared team (``meta.team``, else the keys of a ``system_prompt`` object the source carried),
    else the speakers (``meta.agents``); with the orchestrator. Second item: where it came from."""
    meta = trace.meta if isinstance(trace.meta, dict) else {}
    declared = meta.get("team")
    sp = (meta.get("source_fields") or {}).get("system_prompt") if isinstance(meta.get("source_fields"), dict) else None
    if isinstance(declared, list) and declared:
        agents, where = declared, "meta.team"
    elif isinstance(sp, dict) and sp:
        agents, where = list(sp), "the system prompts the source declares"
    else:
        agents, where = meta.get("agents"), "meta.agents"
    if not isinstance(agents, list) or not agents:
        return None, ""
    team = {a for a in agents if isinstance(a, str)}
    orch = meta.get("orchestrator")
    if isinstance(orch, str):
        team.add(orch)
    return team, where


def _is_human(ev: Event) -> bool:
    return ev.type is EventType.HUMAN_INTERVENTION or ev.role == "human"


def failed_of(trace: Trace) -> bool | None:
    """True / False when the run's outcome says it failed / succeeded; None when it states none."""
    return None if trace.outcome is None or trace.outcome.success is None else not trace.outcome.success


def _votes(trace: Trace, g: TraceGraph) -> list[tuple[int, int, Evidence]]:
    """``(flagged, origin, record)``: a graded aggregate that failed (the run's output, else the last one)
    blames the members whose answer it adopted (``attrs.answer`` equal to the aggregate's)."""
    agg = [i for i, e in enumerate(trace.events) if e.type is EventType.AGGREGATE and e.outcome is not None]
    if not agg:
        return []
    k = g.output if g.output is not None and g.output in agg else agg[-1]
    e = trace.events[k]
    ans = (e.attrs or {}).get("answer")
    if e.outcome is None or e.outcome.success is not False or ans is None:
        return []
    out = []
    for j in g.pred_idx[g.pred_ptr[k]:g.pred_ptr[k + 1]].tolist():
        if (trace.events[j].attrs or {}).get("answer") == ans:
            out.append((k, j, Evidence(EvidenceKind.WRONG_VOTE, None, f"answer {str(ans)[:60]!r} adopted by the "
                                       f"failed aggregate {e.id}", trace.events[j].id, Provenance.VERIFIER)))
    return out


def origins_of(trace: Trace, g: TraceGraph, kinds: set[EvidenceKind] | frozenset[EvidenceKind] | None = None,
               reach: np.ndarray | None = None) -> tuple[dict[int, _Cand], list[str], list[str]]:
    """The errors' origins (event index → the flags that point there), the skipped flags and the symptoms,
    each with a located line. ``reach``: events whose effect reaches the output (default: computed)."""
    ev = trace.events
    if reach is None:
        seeds = [i for i in (g.output, g.stop) if i is not None and i >= 0]
        reach = g.ancestor_mask(seeds, inclusive=True) if seeds else np.ones(g.n, dtype=bool)
    team, team_from = _team(trace)
    cands: dict[int, _Cand] = {}
    skipped: list[str] = []
    symptoms: list[str] = []
    flagged: list[tuple[int, int | None, Evidence | None]] = []
    for i, e in enumerate(ev):
        recs: list[Evidence | None] = list(evidence_of(e.attrs))
        if kinds is not None:
            recs = [r for r in recs if r is not None and r.kind in kinds]
        elif not recs and e.error:
            recs = [None]
        flagged.extend((i, None, r) for r in recs)
    if kinds is None or EvidenceKind.WRONG_VOTE in kinds:
        flagged.extend(_votes(trace, g))
    for i, origin_hint, r in flagged:
        e = ev[i]
        where = f"{e.id} ({e.source or e.agent})"
        if r is not None and not r.is_evidence:
            skipped.append(f"{where}: {r.kind.value} text quoted by {e.agent!r} (not an executor's, a tool's or a "
                           "ledger's output): not evidence")
            continue
        if r is not None and r.provenance is None and _is_human(e):
            skipped.append(f"{where}: {r.kind.value} on a person's turn (a quote, not evidence)")
            continue
        if not reach[i]:
            skipped.append(f"{where}: flagged but its effect does not reach the output")
            continue
        if r is not None and r.kind in SYMPTOM_KINDS:
            symptoms.append(f"{where}: {r.kind.value}" + (f": {r.excerpt}" if r.excerpt else ""))
            continue
        origin = i if origin_hint is None else origin_hint
        if origin_hint is None and r is not None and r.blames is not None:
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
                           f"team ({', '.join(sorted(team))}, from {team_from}); skipped")
            continue
        cands.setdefault(origin, _Cand(origin)).flagged.append((i, r))
    return cands, skipped, symptoms


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
    from ..graph import TraceGraph

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
        res = BlameResult(trace.trace_id, dec, runner, "earliest flagged error reaching the output", True, failed,
                          shares, tuple(notes))
        return _scored(trace, g, res, method, scorer)
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
        return replace(c, confidence=round(sc.agents.get(c.agent, 0.0), 3),
                       step_confidence=None if row is None else round(float(sc.p[row]), 3))

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
        return Culprit(agent, e.id, step, what, round(sc.agents[agent], 3), kinds, lines, e.source,
                       round(float(sc.p[row]), 3))

    dec = culprit(*top)
    second = pick(sc, exclude=top[0])
    shares = {ev[t.index].id: float(v) for t, v in zip(sc.cands.turns, sc.p.tolist(), strict=True) if v > 0}
    tot = sum(shares.values())
    return replace(res, decisive=dec, runner_up=None if second is None else culprit(*second), rule=LEARNED_RULE,
                   shares={k: v / tot for k, v in shares.items()})
