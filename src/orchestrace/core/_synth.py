"""Realistic synthetic traces for tests and benchmarks (up to millions of events).

Shape of a synthetic run (``agents = K``)::

    d0 orchestrator_decision(spawn) ──spawn──► spawn w1 … spawn wK   (in waves)
    each worker wi:  tool_call → tool_result → (message → wj) → tool_call → … → return
    returns ──aggregate──► aggregate ──causal──► orchestrator_decision(stop)

Workers start in waves (``waves`` stages of ``K / waves`` workers), run their steps
sequentially with exponential step times, sometimes message a peer (a ``message`` edge
into the peer's next event) and sometimes read untrusted tool output (``trusted=False``).
A fraction ``p_wasted`` of workers return after the aggregate was formed: their work is
not an ancestor of the output (wasted work). Same ``seed`` → same trace.

Outcome and errors (realistic defaults: most runs succeed, few events are erroneous):

* the run succeeds with probability ``success`` (default 0.7): the aggregate is correct,
  ``outcome.success`` is True and ``rewards["team"]`` is 1, else both are 0; the outcome
  is drawn from its own random stream, so a seed's outcome does not depend on ``events``
  or ``agents`` (seed 0 succeeds at the default rate, seed 2 fails);
* any worker step errs with probability ``p_error`` (an error *root*, ``error=True``); an
  error spreads to the worker's next step with probability ``propagate`` (default 0.5),
  so an error run has mean length ``1 / (1 − propagate)`` and the expected erroneous share
  of worker events is about ``p_error / (1 − propagate)`` (2 % by default);
* in a successful run the aggregate is explicitly clean (``error=False``): an error that
  reached a worker's result was *caught by aggregation* (E4);
* in a failed run one useful worker (the culprit) makes the fatal error: an error run
  that reaches its ``return``, and the aggregate and the run's outcome are erroneous. So
  blame on failure has a cause to find (``credit --baseline``).

>>> tr = synth(events=200, agents=5, seed=1)
>>> len(tr.events), tr.stop_event is not None, len(tr.agents)
(200, True, 6)
>>> runs = [synth(events=300, agents=4, seed=s) for s in range(40)]
>>> 0.5 < sum(r.outcome.success for r in runs) / 40 < 0.9
True
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..vocab import Decision, EdgeType, EventType, Topology
from .trace import DecisionPayload, Edge, Event, Outcome, Trace

__all__ = ["synth"]

_ORCH = "orchestrator"
#: The outcome has its own random stream (``[seed, 2]``), so a seed's success does not change
#: with ``events`` or ``agents`` (at the default success rate seed 0 succeeds, seed 2 fails).
_OUTCOME_STREAM = 2


def synth(
    *,
    events: int = 1000,
    agents: int = 10,
    seed: int = 0,
    waves: int = 3,
    p_message: float = 0.05,
    p_untrusted: float = 0.05,
    p_error: float = 0.01,
    p_wasted: float = 0.1,
    success: float = 0.7,
    propagate: float = 0.5,
    trace_id: str | None = None,
    task_id: str | None = None,
) -> Trace:
    """Generate a synthetic orchestration trace with exactly ``events`` events.

    ``success`` is the probability that the run succeeds, ``p_error`` the per-step chance
    of an error root, ``propagate`` the chance that an error spreads to the worker's next
    step (see the module docstring). ``task_id`` defaults to ``synth-task-<seed>``; give
    several seeds one ``task_id`` to make a group of runs of one task.
    """
    _check_args(events, agents, success=success, propagate=propagate, p_error=p_error, p_message=p_message,
                p_untrusted=p_untrusted, p_wasted=p_wasted)
    overhead = 1 + agents + agents + 1 + 1  # decision, spawns, returns, aggregate, stop
    if not 1 <= waves <= agents:
        waves = max(1, min(waves, agents))
    rng = np.random.default_rng(seed)
    work = events - overhead
    # steps per worker: at least 1, the rest spread multinomially
    steps = 1 + rng.multinomial(work - agents, np.full(agents, 1.0 / agents))
    ev: list[Event] = []
    ed: list[Edge] = []
    ids = _IdGen()

    d0 = ids()
    ev.append(_first_decision(d0, agents))
    wave_of = np.sort(rng.integers(0, waves, size=agents))
    wave_start = np.cumsum(np.r_[0.0, rng.exponential(5.0, size=waves - 1)]) + 1.0
    wasted = rng.random(agents) < p_wasted
    if wasted.all():
        wasted[0] = False
    failed = bool(np.random.default_rng([seed, _OUTCOME_STREAM]).random() >= success)
    useful_idx = np.flatnonzero(~wasted)
    culprit = int(useful_idx[rng.integers(0, useful_idx.size)]) if failed else -1
    starts = [float(wave_start[wave_of[i]] + 0.01 * i) for i in range(agents)]
    returns = _workers(rng, ids, ev, ed, d0, starts, steps, wasted, culprit, p_message=p_message,
                       p_untrusted=p_untrusted, p_error=p_error, propagate=propagate)
    agg_err = failed  # a clean aggregate catches the errors that reached it; a failed run's does not
    stop_t = _aggregate_and_stop(ids, ev, ed, returns, agg_err)
    ev.sort(key=lambda e: e.t)
    tokens = float(sum(e.tokens for e in ev))
    return Trace(
        trace_id=trace_id or f"synth-{events}-{agents}-{seed}",
        task_id=task_id or f"synth-task-{seed}",
        system="orchestrace.synth",
        topology=Topology.CENTRALIZED,
        events=tuple(ev),
        edges=tuple(ed),
        rewards={"team": 0.0 if agg_err else 1.0},
        costs={"tokens": tokens, "wall_clock_s": float(stop_t + 0.1),
               "tool_calls": float(sum(1 for e in ev if e.type is EventType.TOOL_CALL)),
               "messages": float(sum(1 for e in ev if e.type is EventType.MESSAGE))},
        outcome=Outcome(success=not agg_err),
        meta={"generator": "orchestrace.synth", "seed": seed, "agents": agents, "success_rate": success,
              "p_error": p_error, "propagate": propagate},
    )


def _first_decision(d0: str, agents: int) -> Event:
    """The orchestrator's opening decision: spawn every worker."""
    return Event(id=d0, t=0.0, t_end=0.5, type=EventType.ORCHESTRATOR_DECISION, agent=_ORCH, role="lead",
                 tokens_in=200, tokens_out=50,
                 decision=DecisionPayload(kind=Decision.SPAWN, action=f"spawn:{agents}",
                                          alternatives=("spawn:1", f"spawn:{agents}", "none"), step=0))


def _workers(rng: np.random.Generator, ids: _IdGen, ev: list[Event], ed: list[Edge], d0: str, starts: list[float],
             steps: np.ndarray, wasted: np.ndarray, culprit: int, **probs: float) -> list[tuple[int, bool]]:
    """Every worker's timeline from its start, then the peer messages wired to their targets.

    Returns each worker's (last event index, wasted); ``probs`` are :func:`_worker`'s probabilities.
    """
    names = [f"w{i + 1}" for i in range(len(starts))]
    chains: list[list[int]] = []  # event indices per worker (for message targets)
    times: list[np.ndarray] = []
    returns: list[tuple[int, bool]] = []
    pending_msgs: list[tuple[int, int, float]] = []  # (msg event idx, target worker, t)
    for i, s_t in enumerate(starts):
        chain = _worker(rng, ids, ev, ed, i, names, s_t, d0, int(steps[i]), culprit=i == culprit,
                        pending_msgs=pending_msgs, **probs)
        returns.append((chain[-1], bool(wasted[i])))
        chains.append(chain)
        times.append(np.array([ev[c].t for c in chain]))
    for m_idx, j, t1 in pending_msgs:  # message edge into the peer's next event after arrival
        pos = int(np.searchsorted(times[j], t1))
        if pos < len(chains[j]):
            ed.append(Edge(ev[m_idx].id, ev[chains[j][pos]].id, EdgeType.MESSAGE))
    return returns


def _aggregate_and_stop(ids: _IdGen, ev: list[Event], ed: list[Edge], returns: list[tuple[int, bool]],
                        agg_err: bool) -> float:
    """The lead's aggregate of the useful workers' returns (after the stragglers) and its stop decision;
    returns the stop's time."""
    useful = [idx for idx, w in returns if not w]
    agg_t = max(ev[idx].t_end or ev[idx].t for idx in useful) + 0.1
    late = [idx for idx, w in returns if w]
    agg_t2 = max([agg_t] + [(ev[idx].t_end or ev[idx].t) + 0.1 for idx in late])  # waits for stragglers
    ag = ids()
    ev.append(Event(id=ag, t=agg_t, t_end=agg_t + 0.5, type=EventType.AGGREGATE, agent=_ORCH, role="lead",
                    tokens_in=100 * len(useful), tokens_out=200, error=agg_err,
                    outcome=Outcome(success=not agg_err, score=0.0 if agg_err else 1.0)))
    for idx in useful:
        ed.append(Edge(ev[idx].id, ag, EdgeType.AGGREGATE))
    st = ids()
    stop_t = max(agg_t + 0.6, agg_t2)
    ev.append(Event(id=st, t=stop_t, t_end=stop_t + 0.1, type=EventType.ORCHESTRATOR_DECISION, agent=_ORCH,
                    role="lead", tokens_in=50, tokens_out=5,
                    decision=DecisionPayload(kind=Decision.STOP, action="stop", alternatives=("stop", "continue"), step=1)))
    ed.append(Edge(ag, st, EdgeType.CAUSAL))
    return stop_t


def _check_args(events: int, agents: int, **probabilities: float) -> None:
    """Refuse settings that make no trace: a probability outside [0, 1], errors that always propagate, no
    worker, or too few events for the team."""
    for name, p in probabilities.items():
        if not 0.0 <= p <= 1.0:
            raise ConfigError(f"{name} must be a probability in [0, 1], got {p!r}")
    if probabilities["propagate"] >= 1.0 and probabilities["p_error"] > 0:
        raise ConfigError("propagate must be < 1 when p_error > 0 (with 1 every error would run to the end of its "
                          "worker's chain); use e.g. --propagate 0.9")
    if agents < 1:
        raise ConfigError("agents must be ≥ 1 (the orchestrator spawns at least one worker)")
    overhead = 1 + agents + agents + 1 + 1  # decision, spawns, returns, aggregate, stop
    if events < overhead + agents:
        raise ConfigError(
            f"events={events} is too few for agents={agents}: need ≥ {overhead + agents} "
            f"(2 per agent + 3 + one step each); raise --events or lower --agents"
        )


def _worker(rng: np.random.Generator, ids: _IdGen, ev: list[Event], ed: list[Edge], i: int, names: list[str],
            s_t: float, d0: str, n: int, *, culprit: bool, p_message: float, p_untrusted: float, p_error: float,
            propagate: float, pending_msgs: list[tuple[int, int, float]]) -> list[int]:
    """Worker ``i``'s spawn at ``s_t``, its ``n`` steps and its return, appended to ``ev`` / ``ed`` (messages to
    peers queued in ``pending_msgs``); returns the indices of its steps and return. The draws from ``rng`` are
    in a fixed order, so a seed gives one trace."""
    agents = len(names)
    sp = ids()
    ev.append(Event(id=sp, t=s_t, t_end=s_t + 0.01, type=EventType.SPAWN, agent=_ORCH, to=names[i], role="lead"))
    ed.append(Edge(d0, sp, EdgeType.SPAWN))
    dur = rng.exponential(2.0, size=n) + 0.05
    start = s_t + 0.02 + np.concatenate([[0.0], np.cumsum(dur[:-1] + 0.01)])
    kinds = rng.random(n)
    untrusted = rng.random(n) < p_untrusted
    err = _error_runs(rng.random(n) < p_error, rng.random(n) < propagate)
    if culprit:  # the fatal error: an error run that reaches the worker's result
        fatal = n if propagate >= 1 else min(n, int(rng.geometric(1.0 - propagate)))
        err[n - fatal:] = True
    tok = rng.integers(20, 800, size=n)
    prev = sp
    prev_edge = EdgeType.SPAWN
    erroneous = False
    chain = []
    for k in range(n):
        idx = len(ev)
        eid = ids()
        t0 = float(start[k])
        t1 = t0 + float(dur[k])
        erroneous = bool(err[k])
        if kinds[k] < p_message and agents > 1:
            j = int(rng.integers(0, agents - 1))
            j = j + 1 if j >= i else j
            ev.append(Event(id=eid, t=t0, t_end=t1, type=EventType.MESSAGE, agent=names[i], from_=names[i],
                            to=names[j], role="worker", tokens_out=int(tok[k]), error=erroneous or None))
            pending_msgs.append((idx, j, t1))
            edge_t = prev_edge
        elif k % 2 == 0:
            ev.append(Event(id=eid, t=t0, t_end=t1, type=EventType.TOOL_CALL, agent=names[i], role="worker",
                            tool="search" if k % 4 == 0 else "code.run", privileged=(k % 4 == 2) or None,
                            tokens_in=int(tok[k]), tokens_out=int(tok[k]) // 4, error=erroneous or None))
            edge_t = prev_edge
        else:
            ev.append(Event(id=eid, t=t0, t_end=t1, type=EventType.TOOL_RESULT, agent=names[i], role="worker",
                            tool="search" if k % 4 == 1 else "code.run",
                            trusted=not untrusted[k], tokens_in=int(tok[k]),
                            error=erroneous or None))
            edge_t = EdgeType.TOOL_DEPENDENCY if ev[idx - 1].type is EventType.TOOL_CALL else prev_edge
        ed.append(Edge(prev, eid, edge_t if edge_t is not EdgeType.SPAWN else EdgeType.SPAWN))
        prev, prev_edge = eid, EdgeType.CAUSAL
        chain.append(idx)
    r_t = float(start[-1] + dur[-1] + 0.01)
    rid = ids()
    ev.append(Event(id=rid, t=r_t, t_end=r_t + 0.01, type=EventType.RETURN, agent=names[i], from_=names[i],
                    to=_ORCH, role="worker", tokens_out=120, error=erroneous or None))
    ed.append(Edge(prev, rid, EdgeType.RETURN))
    chain.append(len(ev) - 1)
    return chain



def _error_runs(roots: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Erroneous steps: a root errs; an erroneous step's error spreads to the next with ``spread[k]``."""
    out = roots.copy()
    for k in range(1, out.size):
        if not out[k] and out[k - 1] and spread[k]:
            out[k] = True
    return out


class _IdGen:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"e{self.n}"
