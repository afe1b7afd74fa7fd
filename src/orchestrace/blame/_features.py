"""Candidate turns of a failed run and their features, for the learned blame scorer.

Every agent turn is a candidate (a person's turns are not): the worker turns the evidence
points at, but also the orchestrator's plans and instructions that precede a loop or a
failure, the turn that first stated what became the final answer (a claim the failure later
contradicts), the last turn before a stalled streak, and claims of results with no tool
output behind them. A turn is the source transcript's turn (:func:`orchestrace.evidence.turn_of`)
or, for traces that were not imported from a transcript, one working event.

Features (:data:`FEATURES`, all in [0, 1] or small logs) come from the trace alone: evidence
and its provenance (through :func:`~._core.origins_of`), position, role, dependency paths to
the output, position relative to the failed executions (1, 2, 3+ turns after the last one, before
the first), the ledger's verdict on a worker's turn (the next progress ledger flags a stall, or
not), and cheap text cues (fabrication words, giving up on a tool: "manually", "instead"; claims
of done work: "I have verified", "here are the results"). No label, no LLM.

>>> from orchestrace.importers.chat import from_doc
>>> hist = [{"name": "user", "content": "Sum 2 and 2."},
...         {"name": "Coder", "content": "```python\\nprint(2+2)\\n```"},
...         {"name": "Computer_terminal", "content": "exitcode: 1 (execution failed)\\nboom"},
...         {"name": "Coder", "content": "The answer is 5."}]
>>> (tr,), _ = from_doc({"history": hist, "is_correct": False}, "r.json", content="keep")
>>> c = candidates(tr)
>>> [(t.step, t.agent) for t in c.turns]
[(1, 'Coder'), (2, 'Computer_terminal'), (3, 'Coder')]
>>> float(c.x[0, FEATURES.index("ev_strong_origin")]), float(c.x[2, FEATURES.index("introduces_final")])
(1.0, 1.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..evidence import EvidenceKind, turn_of
from ..vocab import EventType

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..core.trace import Event, Trace

__all__ = ["FAMILIES", "FEATURES", "Candidates", "Turn", "candidates"]

_BASE = (
    "pos_rel", "pos_first", "pos_last", "log_rank", "agent_first_turn", "agent_log_turn", "is_orch",
    "is_instruction", "is_output", "is_opener", "has_code", "log_len", "agent_share_chars", "agent_most_chars",
    "agent_first_speaker", "agent_last_speaker", "ev_strong_origin", "ev_ledger_origin", "ev_weak_origin",
    "ev_first_origin", "ev_agent_blamed", "ev_carries", "ev_count", "rule_pick", "orch_before_failure",
    "last_before_stall", "introduces_final", "states_final", "claim_unbacked", "after_output",
    "after_failed_output", "fabrication_cue", "verify_cue", "reaches_output", "desc_share",
    # position relative to the failures; cues of giving up on a tool and of claiming unseen results; the ledger
    "since_fail_1", "since_fail_2", "since_fail_3", "before_first_fail", "giving_up_cue", "done_claim_cue",
    "ledger_stall_next", "ledger_ok_next",
)
#: Feature names (the columns of :attr:`Candidates.x`).
FEATURES: tuple[str, ...] = _BASE
#: Run families, each with its own weights: runs with a progress ledger (Magentic-One style) and the rest.
FAMILIES = ("chat", "ledger")
_STRONG = {EvidenceKind.EXEC_FAILED, EvidenceKind.TRACEBACK, EvidenceKind.TOOL_ERROR, EvidenceKind.ERROR_STATUS,
           EvidenceKind.WRONG_VOTE}
_LEDGER = {EvidenceKind.LEDGER_LOOP, EvidenceKind.LEDGER_NO_PROGRESS}
_WEAK = {EvidenceKind.REPEATED_ACTION, EvidenceKind.REFUSAL}
_WORK = (EventType.MESSAGE, EventType.TOOL_CALL, EventType.RETURN, EventType.AGGREGATE, EventType.TOOL_RESULT)
_FAB = re.compile(r"(?i)\b(?:hypothetical\w*|assum\w*|placeholder|for (?:example|demonstration)|sample data|mock\w*|"
                  r"simulat\w*|dummy|let'?s say|suppose|fictional|illustrat\w*)\b")
_VERIFY = re.compile(r"(?i)\b(?:verif\w*|confirm\w*|double[- ]check\w*|cross[- ]check\w*)\b")
_CLAIM = re.compile(r"(?i)(?:\b(?:the answer is|result(?:s)? (?:is|are|show)|found that|final answer|is located|"
                    r"according to)\b|\d)")
_GIVE_UP = re.compile(r"(?i)\b(?:manual(?:ly)?|instead|unable to|(?:cannot|can't|could not|couldn't) (?:access|run|"
                      r"execute|retrieve|find|view|open)|without (?:access|running|executing)|alternative\w*|"
                      r"let'?s proceed|proceed (?:by|with))\b")
_DONE = re.compile(r"(?i)\b(?:I have (?:now )?(?:verified|checked|found|confirmed|identified|reviewed|located)|"
                   r"here (?:is|are) the (?:full|complete|details|results|findings)|findings|after (?:manually )?"
                   r"(?:searching|checking|reviewing|analy[sz]ing)|based on (?:my|the) (?:search|review|analysis))\b")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\"[^\"\n]{2,40}\"|'[^'\n]{2,40}'")


@dataclass(frozen=True)
class Turn:
    """A candidate: its ``step`` (source turn index, else event index), ``agent``, main event index and id."""

    step: int
    agent: str
    index: int
    event: str


@dataclass(frozen=True)
class Candidates:
    """The candidate ``turns`` of a run, their feature matrix ``x`` (n_turns, len(FEATURES)), the
    run's ``family`` (:data:`FAMILIES`) and which turns may be blamed (``allowed``, (n,) bool: False
    for a speaker outside the team the source declares)."""

    turns: tuple[Turn, ...]
    x: np.ndarray  # (n, F)
    family: str = "chat"
    allowed: np.ndarray | None = None  # (n,) bool

    def mask(self, p: np.ndarray) -> np.ndarray:
        """``p`` with the turns that may not be blamed set to 0, renormalised (unchanged if none may be)."""
        if self.allowed is None or not self.allowed.any() or self.allowed.all():
            return p
        q = np.where(self.allowed, p, 0.0)
        return q / q.sum() if q.sum() > 0 else self.allowed / self.allowed.sum()


def _text(e: Event) -> str:
    return e.content or ""


def _turns(trace: Trace) -> list[tuple[int, int]]:
    """``(step, main event index)`` per turn, in order; a person's turns excluded."""
    seen: dict[int, int] = {}
    out: list[tuple[int, int]] = []
    for i, e in enumerate(trace.events):
        if e.type not in _WORK and e.type is not EventType.HUMAN_INTERVENTION:
            continue
        k = turn_of(e.source)
        step = i if k is None else k
        if step in seen:
            continue
        seen[step] = i
        out.append((step, i))
    return [(s, i) for s, i in out
            if trace.events[i].type is not EventType.HUMAN_INTERVENTION and trace.events[i].role != "human"]


def _final_tokens(texts: list[str], task: str) -> set[str]:
    """Numbers and quoted strings of the last stated answer that the task statement does not contain."""
    for t in reversed(texts):
        body = re.sub(r"\bTERMINATE\b", "", t).strip()
        if body:
            return {m.lower() for m in _TOKEN.findall(body[-600:])} - {m.lower() for m in _TOKEN.findall(task)}
    return set()


def _descendants(g: TraceGraph) -> list[int]:
    """Number of descendants of every event (exact, bitsets over a reverse topological order)."""
    bits = [0] * g.n
    for v in g.topo_order()[::-1].tolist():
        b = 0
        for w in g.succ_idx[g.succ_ptr[v]:g.succ_ptr[v + 1]].tolist():
            b |= bits[w] | (1 << w)
        bits[v] = b
    return [b.bit_count() for b in bits]


def _row_of_event(ev: Sequence[Event], turns: list[tuple[int, int]]) -> dict[int, int]:
    """Event index → its turn's row (the other events of a turn, tool calls, map to the turn's row)."""
    row_of_event: dict[int, int] = {}
    for r, (_, i) in enumerate(turns):
        row_of_event[i] = r
    row_of_step = {s: r for r, (s, _) in enumerate(turns)}
    for i, e in enumerate(ev):
        k = turn_of(e.source)
        if i not in row_of_event and k is not None and k in row_of_step:
            row_of_event[i] = row_of_step[k]
    return row_of_event


def _evidence_rows(cands: dict[int, Any], row_of_event: dict[int, int], n: int
                   ) -> tuple[list[set[EvidenceKind]], set[int], np.ndarray]:
    """Per row: the evidence kinds whose origin it is, the rows a flag sits on, the count of flags it originates."""
    kinds_at: list[set[EvidenceKind]] = [set() for _ in range(n)]
    flagged_rows: set[int] = set()
    count = np.zeros(n)
    for origin, c in cands.items():
        ro = row_of_event.get(origin)
        for fi, rec in c.flagged:
            fr = row_of_event.get(fi)
            if fr is not None:
                flagged_rows.add(fr)
            if ro is not None:
                kinds_at[ro].add(rec.kind if rec is not None else EvidenceKind.ERROR_STATUS)
                count[ro] += 1
    return kinds_at, flagged_rows, count


def _failures(ev: Sequence[Event], turns: list[tuple[int, int]], is_out: list[bool]
              ) -> tuple[list[bool], list[int], int | None]:
    """Per row: a failed output or not, the non-output turns since the last failed output (0: none before);
    the first failed output's row."""
    n = len(turns)
    failed_out = [is_out[r] and any(isinstance(x, dict) and x.get("kind") in ("exec_failed", "traceback")
                                    for x in (ev[turns[r][1]].attrs or {}).get("evidence", []) or [])
                  for r in range(n)]
    since = [0] * n
    last_fail = None
    for r in range(n):
        if failed_out[r]:
            last_fail, since[r] = r, 0
        elif not is_out[r] and last_fail is not None:
            since[r] = sum(1 for q in range(last_fail + 1, r + 1) if not is_out[q])
    return failed_out, since, next((r for r in range(n) if failed_out[r]), None)


def _next_worker(is_orch: list[bool]) -> list[int]:
    """Per row: the next turn that is not the orchestrator's (−1: none)."""
    out, nxt = [-1] * len(is_orch), -1
    for q in range(len(is_orch) - 1, -1, -1):
        out[q] = nxt
        if not is_orch[q]:
            nxt = q
    return out


@dataclass(frozen=True)
class _Context:
    """What the features of one turn read: the whole run's facts, computed once (:func:`candidates`)."""

    g: TraceGraph
    ev: Sequence[Event]
    turns: list[tuple[int, int]]
    agents: list[str]
    texts: list[str]
    is_orch: list[bool]
    is_out: list[bool]
    kinds_at: list[set[EvidenceKind]]
    flagged_rows: set[int]
    count: np.ndarray
    first_origin: int | None
    rule_row: int | None
    chars: dict[str, int]
    total: int
    most: str | None
    first_sp: str | None
    last_sp: str | None
    final: set[str]
    intro: int | None
    desc: np.ndarray
    blamed_agents: set[str]
    before_stall: int
    next_worker: list[int]
    failed_out: list[bool]
    since: list[int]
    first_fail: int | None
    next_ledger: list[int | None]
    reach: np.ndarray


def _turn_features(c: _Context, r: int, seen: int) -> dict[str, float]:
    """The features of row ``r`` (``seen``: how many turns its agent has had so far, this one included)."""
    i = c.turns[r][1]
    e, a, t, n = c.ev[i], c.agents[r], c.texts[r], len(c.turns)
    is_orch, is_out, kinds_at, g, final = c.is_orch, c.is_out, c.kinds_at, c.g, c.final
    nxt = c.next_worker[r] if c.next_worker[r] >= 0 else None
    return {
        "pos_rel": r / max(1, n - 1), "pos_first": float(r == 0), "pos_last": float(r == n - 1),
        "log_rank": math.log1p(r) / 5, "agent_first_turn": float(seen == 1),
        "agent_log_turn": math.log1p(seen - 1) / 3, "is_orch": float(is_orch[r]),
        "is_instruction": float(is_orch[r] and e.to is not None), "is_output": float(is_out[r]),
        "is_opener": float(g.pred_ptr[i + 1] == g.pred_ptr[i]), "has_code": float("```" in t),
        "log_len": math.log1p(len(t)) / 10, "agent_share_chars": c.chars.get(a, 0) / c.total,
        "agent_most_chars": float(a == c.most), "agent_first_speaker": float(a == c.first_sp),
        "agent_last_speaker": float(a == c.last_sp), "ev_strong_origin": float(bool(kinds_at[r] & _STRONG)),
        "ev_ledger_origin": float(bool(kinds_at[r] & _LEDGER)), "ev_weak_origin": float(bool(kinds_at[r] & _WEAK)),
        "ev_first_origin": float(r == c.first_origin),
        "ev_agent_blamed": float(a in c.blamed_agents),
        "ev_carries": float(r in c.flagged_rows), "ev_count": math.log1p(c.count[r]) / 2,
        "rule_pick": float(r == c.rule_row),
        "orch_before_failure": float(is_orch[r] and nxt is not None and bool(kinds_at[nxt])),
        "last_before_stall": float(r == c.before_stall),
        "introduces_final": float(r == c.intro), "states_final": float(bool(final) and any(
            tok in t.lower() for tok in final)),
        "claim_unbacked": float(not is_out[r] and not is_orch[r] and "```" not in t and bool(_CLAIM.search(t))
                                and not (r > 0 and is_out[r - 1])),
        "after_output": float(r > 0 and is_out[r - 1] and not is_out[r]),
        "after_failed_output": float(r > 0 and c.failed_out[r - 1] and not is_out[r]),
        "fabrication_cue": float(bool(_FAB.search(t))), "verify_cue": float(bool(_VERIFY.search(t))),
        "reaches_output": float(c.reach[i]), "desc_share": c.desc[r],
        "since_fail_1": float(c.since[r] == 1), "since_fail_2": float(c.since[r] == 2),
        "since_fail_3": float(c.since[r] >= 3), "before_first_fail": float(c.first_fail is not None
                                                                          and r < c.first_fail and not is_out[r]),
        "giving_up_cue": float(not is_out[r] and bool(_GIVE_UP.search(t))),
        "done_claim_cue": float(not is_out[r] and bool(_DONE.search(t))),
        "ledger_stall_next": float(not is_orch[r] and c.next_ledger[r] is not None
                                   and c.next_ledger[r] in c.flagged_rows),
        "ledger_ok_next": float(not is_orch[r] and c.next_ledger[r] is not None
                                and c.next_ledger[r] not in c.flagged_rows),
    }


def candidates(trace: Trace, graph: TraceGraph | None = None) -> Candidates:
    """The candidate turns of ``trace`` and their features (see the module docstring)."""
    from ..analysis.graph import TraceGraph
    from ._origins import _team

    g = graph if graph is not None else TraceGraph.from_trace(trace)
    turns = _turns(trace)
    if not turns:
        return Candidates((), np.zeros((0, len(FEATURES))))
    c, ledger_run = _context(trace, g, turns)
    seen_agent: dict[str, int] = {}
    x = np.zeros((len(turns), len(_BASE)))
    for r in range(len(turns)):
        seen_agent[c.agents[r]] = seen_agent.get(c.agents[r], 0) + 1
        f = _turn_features(c, r, seen_agent[c.agents[r]])
        x[r] = [f[k] for k in _BASE]
    team, _ = _team(trace)
    allowed = np.array([team is None or a in team for a in c.agents], dtype=bool)
    ev = trace.events
    return Candidates(tuple(Turn(s, c.agents[r], i, ev[i].id) for r, (s, i) in enumerate(turns)), x,
                      "ledger" if ledger_run else "chat", allowed)


def _context(trace: Trace, g: TraceGraph, turns: list[tuple[int, int]]) -> tuple[_Context, bool]:
    """The run's facts every turn's features read, and whether the run keeps a progress ledger."""
    from ._origins import _fallback, origins_of

    ev, n = trace.events, len(turns)
    meta = trace.meta if isinstance(trace.meta, dict) else {}
    orch = meta.get("orchestrator")
    seeds = [i for i in (g.output, g.stop) if i is not None and i >= 0]
    reach = g.ancestor_mask(seeds, inclusive=True) if seeds else np.ones(g.n, dtype=bool)
    cands, _, _ = origins_of(trace, g, None, reach)
    row_of_event = _row_of_event(ev, turns)
    kinds_at, flagged_rows, count = _evidence_rows(cands, row_of_event, n)
    order = sorted(cands, key=lambda o: (g.t[o], o))
    first_origin = row_of_event.get(order[0]) if order else None
    fb = _fallback(trace, g)
    rule_row = first_origin if first_origin is not None else (row_of_event.get(g.index[fb.event]) if fb else None)
    agents = [ev[i].agent for _, i in turns]
    texts = [_text(ev[i]) for _, i in turns]
    is_orch = [ev[i].role == "orchestrator" or ev[i].agent == orch for _, i in turns]
    is_out = [(ev[i].attrs or {}).get("output") is True or ev[i].type is EventType.TOOL_RESULT for _, i in turns]
    chars: dict[str, int] = {}
    for a, t, o in zip(agents, texts, is_orch, strict=True):
        if not o:
            chars[a] = chars.get(a, 0) + len(t)
    workers = [a for a, o, u in zip(agents, is_orch, is_out, strict=True) if not o and not u]
    ledger_run = meta.get("dialect") == "magentic-one" or any(k & _LEDGER for k in kinds_at) or any(
        '"is_progress_being_made"' in t for t in texts)
    # the first stall: the earliest origin of a ledger verdict (a judged streak's start)
    stall = next((r for r in range(n) if kinds_at[r] & _LEDGER), None)
    task = _text(ev[0]) if ev else ""
    final = _final_tokens([t for t, o, u in zip(texts, is_orch, is_out, strict=True) if not o and not u], task)
    intro = None
    if final:
        need = max(1, math.ceil(len(final) / 2))
        intro = next((r for r in range(n) if not is_out[r]
                      and sum(tok in texts[r].lower() for tok in final) >= need), None)
    below = _descendants(g)
    failed_out, since, first_fail = _failures(ev, turns, is_out)
    ledger_rows = [r for r in range(n) if is_orch[r] and '"is_progress_being_made"' in texts[r]]
    return _Context(
        g=g, ev=ev, turns=turns, agents=agents, texts=texts, is_orch=is_orch, is_out=is_out, kinds_at=kinds_at,
        flagged_rows=flagged_rows, count=count, first_origin=first_origin, rule_row=rule_row, chars=chars,
        total=max(1, sum(chars.values())), most=max(chars, key=lambda a: chars[a]) if chars else None,
        first_sp=workers[0] if workers else None, last_sp=workers[-1] if workers else None, final=final,
        intro=intro, desc=np.array([below[i] / max(1, g.n) for _, i in turns]),
        blamed_agents={agents[q] for q in range(n) if kinds_at[q]},
        before_stall=max((q for q in range(stall) if not is_orch[q]), default=-1) if stall is not None else -1,
        next_worker=_next_worker(is_orch), failed_out=failed_out, since=since, first_fail=first_fail,
        next_ledger=[next((q for q in ledger_rows if q > r), None) for r in range(n)], reach=reach), ledger_run
