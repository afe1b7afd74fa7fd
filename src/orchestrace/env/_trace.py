"""Build the orchestration :class:`~orchestrace.Trace` of one episode from the world's step log.

Shape (per round)::

    O1 ─► O2 ─► [O3] ─► … (one chain of orchestrator_decision events, causal edges)
            └─spawn─► spawn w ─► [message] ─► tool_call ─tool_dependency─► tool_result ─return─► return
    O4 ─causal─► aggregate ◄─aggregate─ returns that support each subtask's aggregate answer
    aggregate ─causal─► O5 (continue → next round's O1, or stop)

Only the returns an aggregation actually needs feed it (the minimal winning set for
``majority``/``verifier``, the most confident attempt for ``best_of``, all for ``merge``), so a
redundant or wrong attempt is not an ancestor of the output: that is the *wasted work* a late
stop produces. Parent results shared by O3 reach the child through a ``message`` event
(causal edges from the parents' supporting returns); untrusted tool results that reach a
privileged tool call are linked by ``safety_flow`` edges, and an obeyed injection adds a
``safety_event``.

Times
-----
By default every time is the world's simulated clock. When the log carries real wall-clock
times (a real-time backend, see :mod:`orchestrace.env.world`: ``rt`` per step, ``rt``/
``rt_end`` per attempt), the trace is laid out on the **real clock**, zero = the first
step's ``rt`` (kept in ``meta["t0_wall"]``, with ``meta["clock"] = "real"``):

* a measured attempt keeps its real interval ``[rt − t0 + lag, rt_end − t0 + lag]`` (so
  concurrent attempts overlap exactly as they did); its spawn runs from its decision to its
  start; its tool calls split that interval as in simulated mode; its return is at its end;
* an attempt without real times (verifier votes, which stay simulated) starts
  ``spawn_time_s`` after its decision and lasts its simulated latency;
* decision ``s`` is at ``T_s = max(rt_s − t0 + lag, T_{s−1}, end of every return logged
  before it)`` and is instantaneous (the policy's time is outside the step); then
  ``lag ← T_s − (rt_s − t0)``. ``lag`` stays 0 unless a simulated attempt would otherwise
  end after the next decision: it then shifts the rest of the episode later (measured
  durations and overlaps are kept). An O4's aggregate is at its decision's time;
* ``costs["wall_clock_s"]`` is the trace's real span (the reward still uses simulated time).

An attempt whose call failed has ``attrs["cause"]`` (a short label such as ``timeout``,
``http_500``, ``empty_completion``) on its return event, which has ``error=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.trace import DecisionPayload, Edge, Event, Outcome, Trace
from ..vocab import EdgeType, EventType, Topology
from .config import AGG_METHODS, COMM_MODES, SUBTASK_TYPES, EnvConfig
from .layout import DECISIONS, Agg, Comm, Phase

__all__ = ["DECISION_KINDS", "action_labels", "build_trace"]

DECISION_KINDS = DECISIONS  # the layout's head order (kept under this name for its importers)
#: An O5 decision that chose to go on is written ``kind="stop", action="continue"``
#: (:data:`orchestrace.core.trace.CONTINUE`): an O5 decision, not the trace's stop.
_TOOLS = ("web.search", "reasoner.solve", "code.exec")
_ORCH = "orchestrator"


def action_labels(cfg: EnvConfig) -> list[str]:
    """Human-readable label of every action index.

    >>> action_labels(EnvConfig.small())[:5]
    ['spawn:0', 'spawn:1', 'spawn:2', 'spawn:3', 'delegate:cheap']
    """
    out = [f"spawn:{f}" for f in range(cfg.max_fanout + 1)]
    out += [f"delegate:{p.name}" for p in cfg.profiles]
    out += [f"communicate:{m}" for m in COMM_MODES]
    out += [f"aggregate:{m}" for m in AGG_METHODS]
    out += ["stop", "continue"]
    return out


class _Att:
    __slots__ = ("ret", "answer", "conf", "kind", "accept", "tool_result", "untrusted")

    def __init__(self, ret: str, answer: int, conf: float, kind: str, accept: bool, tool_result: str, untrusted: bool):
        self.ret, self.answer, self.conf, self.kind = ret, answer, conf, kind
        self.accept, self.tool_result, self.untrusted = accept, tool_result, untrusted


def _support(atts: list[_Att], method: int, answer: int) -> list[str]:
    """Return-event ids the aggregation of one subtask actually used."""
    sol = [a for a in atts if a.kind == "solve"]
    if not sol or answer < 0:
        return []
    if method == Agg.MERGE:  # merge reads everything
        return [a.ret for a in sol]
    mine = [a for a in sol if a.answer == answer]
    if not mine:
        return [a.ret for a in sol]
    if method == Agg.BEST_OF:  # best_of: the most confident one
        return [max(mine, key=lambda a: a.conf).ret]
    counts: dict[int, int] = {}
    for a in sol:
        counts[a.answer] = counts.get(a.answer, 0) + 1
    second = max([v for k, v in counts.items() if k != answer], default=0)
    need = min(len(mine), second + 1)
    ids = [a.ret for a in mine[:need]]
    if method == Agg.VERIFIER:
        ids += [a.ret for a in atts if a.kind == "verify" and a.answer == answer and a.accept]
    return ids


class _Layout:
    """The trace of one episode, built step by step: one method per kind of step (a decision, a
    sub-agent's attempt, the aggregation); the state they share lives here."""

    def __init__(self, cfg: EnvConfig, log: list[dict[str, Any]], *, n: int, types: np.ndarray, parents: np.ndarray,
                 policy: str | None, logprobs: list[float | None], alternatives: list[tuple[str, ...]]) -> None:
        self.cfg, self.types, self.parents, self.policy = cfg, types, parents, policy
        self.logprobs, self.alternatives = logprobs, alternatives
        self.labels = action_labels(cfg)
        self.ev: list[Event] = []
        self.ed: list[Edge] = []
        self.counter = 0
        self.atts: list[list[_Att]] = [[] for _ in range(n)]
        self.n = n
        self.real = bool(log) and "rt" in log[0]
        self.t0_wall = float(log[0]["rt"]) if self.real else 0.0
        self.lag = self.floor = self.t_dec = 0.0  # real-time layout state (see the module docstring)
        self.prev_dec: str | None = None
        self.last_agg: str | None = None
        self.agent_no = 0

    def nid(self) -> str:
        self.counter += 1
        return f"e{self.counter}"

    def decision(self, step: int, rec: dict[str, Any]) -> str:
        """The orchestrator decision of ``step`` (and its causal edges); returns its id."""
        cfg, ev, ed, real = self.cfg, self.ev, self.ed, self.real
        labels, alternatives, logprobs, policy = self.labels, self.alternatives, self.logprobs, self.policy
        dt, dtok = cfg.decision_time_s, int(cfg.decision_tokens)
        kind = DECISION_KINDS[rec["phase"]]
        label = labels[rec["action"]]
        did = self.nid()
        if real:
            self.t_dec = max(rec["rt"] - self.t0_wall + self.lag, self.t_dec, self.floor)
            self.lag = self.t_dec - (rec["rt"] - self.t0_wall)
            t_d, t_d_end = self.t_dec, self.t_dec
        else:
            t_d, t_d_end = rec["t"], rec["t"] + dt
        ev.append(Event(
            id=did, t=t_d, t_end=t_d_end, type=EventType.ORCHESTRATOR_DECISION, agent=_ORCH, role="orchestrator",
            tokens_out=dtok,
            decision=DecisionPayload(kind=kind, action=label, alternatives=alternatives[step],
                                     logprob=logprobs[step], policy=policy, step=step),
            attrs={"head": f"O{rec['phase'] + 1}", "round": rec["rnd"],
                   **({"subtask": rec["cur"]} if rec["phase"] <= Phase.O3 else {})},
        ))
        if self.prev_dec is not None:
            ed.append(Edge(self.prev_dec, did, EdgeType.CAUSAL))
        if rec["phase"] == Phase.O5 and self.last_agg is not None:
            ed.append(Edge(self.last_agg, did, EdgeType.CAUSAL))
        self.prev_dec = did
        return did

    def attempt(self, did: str, a: dict[str, Any]) -> None:
        """One sub-agent's attempt: spawn, shared context, tool calls and results, safety, return."""
        cfg, ev, ed = self.cfg, self.ev, self.ed
        self.agent_no += 1
        w = f"w{self.agent_no}"
        prof = cfg.profiles[a["profile"]]
        i = a["i"]
        t_sp, t0, t1 = self._attempt_times(a)
        sp = self.nid()
        ev.append(Event(id=sp, t=t_sp, t_end=t0, type=EventType.SPAWN, agent=_ORCH, to=w,
                        role="orchestrator", attrs={"profile": prof.name, "subtask": i, "slot": a["slot"]}))
        ed.append(Edge(did, sp, EdgeType.SPAWN))
        pars = [int(p) for p in self.parents[i] if p >= 0]
        prev = self._shared_context(a, sp, w, pars, t0)
        typ = int(self.types[i])
        tc, tr, span = self._tool_steps(a, w, prof.name, typ, sp, prev, t0, t1)
        t_mid = t0 + 0.6 * span
        if a["kind"] == "solve" and a.get("exposed"):
            for p in pars:
                for pa in self.atts[p]:
                    if pa.untrusted:
                        ed.append(Edge(pa.tool_result, tc, EdgeType.SAFETY_FLOW))
        if a.get("unsafe"):
            se = self.nid()
            ev.append(Event(id=se, t=t_mid, t_end=t_mid, type=EventType.SAFETY_EVENT, agent=w, role=prof.name,
                            tool=_TOOLS[typ], error=True, attrs={"kind": "injected_instruction_followed"}))
            ed.append(Edge(tc, se, EdgeType.SAFETY_FLOW))
        self._return(a, w, prof.name, i, tr, t1)

    def _attempt_times(self, a: dict[str, Any]) -> tuple[float, float, float]:
        """When the attempt is spawned, starts and ends: the world's clock, or the real one when measured."""
        cfg = self.cfg
        t0, t1 = a["t"], a["t_end"]
        t_sp = t0 - cfg.spawn_time_s
        if self.real:
            t_dec = self.t_dec
            t_sp = t_dec
            if "rt" in a:
                t0 = max(a["rt"] - self.t0_wall + self.lag, t_dec)
                t1 = max(a["rt_end"] - self.t0_wall + self.lag, t0)
            else:
                t0, t1 = t_dec + cfg.spawn_time_s, t_dec + cfg.spawn_time_s + (t1 - t0)
            self.floor = max(self.floor, t1)
        return t_sp, t0, t1

    def _shared_context(self, a: dict[str, Any], sp: str, w: str, pars: list[int], t0: float) -> str:
        """The parents' answers passed to a solver (a message after its spawn, edges from their returns);
        returns the event the first tool call follows."""
        if not (a["kind"] == "solve" and a["comm"] != Comm.NONE and pars):
            return sp
        ev, ed = self.ev, self.ed
        mid = self.nid()
        ev.append(Event(id=mid, t=t0, t_end=t0, type=EventType.MESSAGE, agent=_ORCH, from_=_ORCH, to=w,
                        role="orchestrator",  # its tokens are counted in the tool call's tokens_in
                        attrs={"mode": COMM_MODES[a["comm"]], "parents": pars}))
        ed.append(Edge(sp, mid, EdgeType.CAUSAL))
        for p in pars:
            for pa in self.atts[p]:
                if pa.kind == "solve":
                    ed.append(Edge(pa.ret, mid, EdgeType.CAUSAL))
        return mid

    def _tool_steps(self, a: dict[str, Any], w: str, role: str, typ: int, sp: str, prev: str, t0: float,
                    t1: float) -> tuple[str, str, float]:
        """The attempt's tool call / result pairs (one for a verifier); returns the first call, the last result
        and the span of one step."""
        ev, ed, nid = self.ev, self.ed, self.nid
        k_steps = self.cfg.tool_steps if a["kind"] == "solve" else 1
        span = 0.9 * (t1 - t0) / k_steps
        untrusted = bool(a.get("untrusted", False))
        tool = _TOOLS[typ] if a["kind"] == "solve" else "verifier.check"
        first_tc = tc = tr = ""
        for k in range(k_steps):
            ts = t0 + k * span
            t_mid = ts + 0.6 * span
            last = k == k_steps - 1
            tc = nid()
            if a["kind"] == "solve":
                privileged = SUBTASK_TYPES[typ] == "code"
                ev.append(Event(id=tc, t=ts, t_end=t_mid, type=EventType.TOOL_CALL, agent=w, role=role, tool=tool,
                                tokens_in=a["tokens_in"] if k == 0 else None, privileged=privileged or None,
                                error=(a["over_context"] or None)))
            else:
                ev.append(Event(id=tc, t=ts, t_end=t_mid, type=EventType.TOOL_CALL, agent=w, role=role, tool=tool,
                                tokens_in=a["tokens_in"]))
            if k == 0:
                first_tc = tc
                ed.append(Edge(prev, tc, EdgeType.MESSAGE if prev != sp else EdgeType.CAUSAL))
                if prev != sp:
                    ed.append(Edge(sp, tc, EdgeType.CAUSAL))
            else:
                ed.append(Edge(tr, tc, EdgeType.CAUSAL))
            tr = nid()
            ev.append(Event(id=tr, t=t_mid, t_end=ts + span, type=EventType.TOOL_RESULT, agent=w, role=role,
                            tool=tool, trusted=not (untrusted and last),
                            attrs={"injected": True} if (a.get("injected") and last) else None))
            ed.append(Edge(tc, tr, EdgeType.TOOL_DEPENDENCY))
        return first_tc, tr, span

    def _return(self, a: dict[str, Any], w: str, role: str, i: int, tr: str, t1: float) -> None:
        """The attempt's return to the orchestrator: a solver's answer, or a verifier's verdict."""
        ev = self.ev
        rid = self.nid()
        untrusted = bool(a.get("untrusted", False))
        if a["kind"] == "solve":
            wrong = a["answer"] != 0
            cause = a.get("cause")
            ev.append(Event(id=rid, t=t1, t_end=t1, type=EventType.RETURN, agent=w, from_=w, to=_ORCH, role=role,
                            tokens_out=a["tokens_out"], error=(wrong or bool(cause)) or None,
                            attrs={"subtask": i, "answer": a["answer"], "confidence": round(a["conf"], 6),
                                   **({"cause": str(cause)} if cause else {})}))
            self.atts[i].append(_Att(rid, a["answer"], a["conf"], "solve", False, tr, untrusted))
        else:
            ev.append(Event(id=rid, t=t1, t_end=t1, type=EventType.RETURN, agent=w, from_=w, to=_ORCH, role=role,
                            tokens_out=a["tokens_out"],
                            outcome=Outcome(success=a["accept"], verifier=w),
                            attrs={"subtask": i, "verdict_on": a["answer"]}))
            self.atts[i].append(_Att(rid, a["answer"], 0.0, "verify", a["accept"], tr, False))
        self.ed.append(Edge(tr, rid, EdgeType.RETURN))

    def aggregate(self, did: str, rec: dict[str, Any]) -> None:
        """The O4 aggregation: the aggregate event and the attempts that support each answer."""
        cfg, ev, ed, atts, n = self.cfg, self.ev, self.ed, self.atts, self.n
        answers = rec["agg"]
        method = rec["action"] - (cfg.max_fanout + 1 + cfg.n_profiles + 3)
        ok = all(x == 0 for x in answers)
        aid = self.nid()
        merge_tok = int(cfg.merge_tokens * sum(1 for lst in atts for a in lst if a.kind == "solve")) if method == Agg.MERGE else None
        t_agg = self.t_dec if self.real else rec["t_agg"]
        ev.append(Event(id=aid, t=t_agg, t_end=t_agg, type=EventType.AGGREGATE, agent=_ORCH,
                        role="orchestrator", tokens_in=merge_tok, error=(not ok) or None,
                        outcome=Outcome(success=ok, score=sum(x == 0 for x in answers) / max(len(answers), 1)),
                        attrs={"method": AGG_METHODS[method], "answers": answers}))
        ed.append(Edge(did, aid, EdgeType.CAUSAL))
        for i in range(n):
            for src in _support(atts[i], method, answers[i]):
                ed.append(Edge(src, aid, EdgeType.AGGREGATE))
        self.last_agg = aid


def build_trace(
    cfg: EnvConfig,
    log: list[dict[str, Any]],
    *,
    seed: int,
    n: int,
    types: np.ndarray,
    parents: np.ndarray,
    success: bool,
    summary: dict[str, float],
    env_id: str,
    policy: str | None,
    logprobs: list[float | None],
    alternatives: list[tuple[str, ...]],
    env_set: tuple[str, ...] = (),
    price: float | None = None,
) -> Trace:
    """Turn the per-step log of a ``B = 1`` world into a validating trace."""
    lay = _Layout(cfg, log, n=n, types=types, parents=parents, policy=policy, logprobs=logprobs,
                  alternatives=alternatives)
    for step, rec in enumerate(log):
        did = lay.decision(step, rec)
        for a in rec["attempts"]:
            lay.attempt(did, a)
        if rec["phase"] == Phase.O4:
            lay.aggregate(did, rec)
    ev, ed, real, t0_wall = lay.ev, lay.ed, lay.real, lay.t0_wall
    outcome = Outcome(success=success, score=1.0 if success else 0.0, verifier="ground_truth")
    costs = {
        "tokens": float(summary["tokens"]),
        "wall_clock_s": max((e.t_end if e.t_end is not None else e.t) for e in ev) if real else float(summary["wall_clock_s"]),
        "tool_calls": float(sum(1 for e in ev if e.type is EventType.TOOL_CALL)),
        "messages": float(sum(1 for e in ev if e.type is EventType.MESSAGE)),
        "critical_steps": float(summary["critical_steps"]),
        "safety_events": float(summary["safety_events"]),
    }
    return Trace(
        trace_id=f"{env_id}:{seed}",
        task_id=f"{cfg.name}-task-{seed}",
        system="orchestrace.env",
        topology=Topology.CENTRALIZED,
        events=tuple(ev),
        edges=tuple(ed),
        rewards={"team": float(summary["return"]), "success": 1.0 if success else 0.0},
        costs=costs,
        metrics={"task_success": 1.0 if success else 0.0},
        outcome=outcome,
        meta={"env_id": env_id, "seed": seed, "config": cfg.name, "policy": policy, "subtasks": n,
              "difficulty": float(summary["difficulty"]),
              **({"env_set": list(env_set)} if env_set else {}),
              **({"token_price": price} if price is not None else {}),
              **({"clock": "real", "t0_wall": t0_wall} if real else {})},
    )
