"""Where errors come from: the origins the evidence points at, the team, the fallback pick, the step.

Split from :mod:`._core` (the blame rule) so the learned scorer's features
(:mod:`._features`) read the same origins without importing the rule.

>>> from orchestrace.core.trace import Event
>>> step_of(Event(id="e9", t=0.0, type="tool_call", agent="a", source="r.json:$.history[3].tool_calls[1]"), 9)
(3, 'source turn index')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..evidence import STRENGTH, Evidence, EvidenceKind, Provenance, evidence_of, turn_of
from ..vocab import EventType

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..core.trace import Event, Trace

__all__ = ["FALLBACK_CONFIDENCE", "SYMPTOM_KINDS", "WEAK_KINDS", "Culprit", "failed_of", "origins_of", "step_of"]

#: Confidence of a fallback pick.
FALLBACK_CONFIDENCE = 0.15
_ERROR_FLAG = 0.5  # strength of a bare ``error: true`` without evidence records
#: Evidence that confirms the failure but is not where an error was made (not an origin).
SYMPTOM_KINDS = frozenset({EvidenceKind.CONTRADICTS_FACTS})
#: Weak evidence: a repeat or a refusal is not a mistake by itself (re-running a search, saying one
#: cannot browse); it decides only when the trace has no strong evidence (``tiers=True``).
WEAK_KINDS = frozenset({EvidenceKind.REPEATED_ACTION, EvidenceKind.REFUSAL})


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


@dataclass
class _Cand:
    origin: int  # event index of the error's origin
    flagged: list[tuple[int, Evidence | None]] = field(default_factory=list)

    def strength(self) -> float:
        return max(STRENGTH[e.kind] if e is not None else _ERROR_FLAG for _, e in self.flagged)


def step_of(ev: Event, index: int) -> tuple[int, str]:
    """``(step, what it counts)``: the source turn index when the event's source has one
    (:func:`orchestrace.evidence.turn_of`: the turn's, not a tool call's inside it), else ``index``.

    >>> from orchestrace.core.trace import Event
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
    agents: Any
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


def _fallback(trace: Trace, g: TraceGraph, exclude: str | None = None, reply: bool = True) -> Culprit | None:
    """The first turn of the first working agent (not the orchestrator, not a person, not an executor's
    output, not ``exclude``); ``reply``: an opening turn that depends on no other event only states the task."""
    orch = trace.meta.get("orchestrator") if isinstance(trace.meta, dict) else None
    team, _ = _team(trace)
    work = (EventType.MESSAGE, EventType.TOOL_CALL, EventType.RETURN, EventType.AGGREGATE)
    order = np.argsort(g.t, kind="stable").tolist()

    def first(allow_orch: bool, skip_opener: bool) -> int | None:
        for i in order:
            e = trace.events[i]
            if e.type not in work or _is_human(e) or e.agent == exclude or (e.attrs or {}).get("output") is True:
                continue
            if team is not None and e.agent not in team:  # a speaker outside the declared team
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
