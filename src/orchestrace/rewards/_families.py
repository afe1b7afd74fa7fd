"""Built-in rewards R1–R6: outcome, agent, role, process, tool use, debate/verifier.

Each is ``fn(trace, *, truth=None, **params) -> list[Signal]``. Event *scores* are read
the same way everywhere: ``outcome.score`` if present, else ``outcome.success`` as 1/0,
else — where a default is documented — ``0`` if the event is flagged ``error`` and ``1``
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.trace import Event, Signal, Trace
from ..errors import ConfigError
from ..vocab import CreditUnit, EventType, RewardFamily
from ._core import signal

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph

__all__ = ["agent_success", "judge", "process", "role_reward", "shared_outcome", "tool_use"]

_R = RewardFamily


def _graph(trace: Trace) -> TraceGraph:
    from ..analysis.graph import TraceGraph

    return TraceGraph.from_trace(trace)


def event_score(e: Event, *, default_clean: bool = False) -> float | None:
    """``outcome.score`` → ``outcome.success`` (1/0) → (``default_clean``) 1 − error → None."""
    o = e.outcome
    if o is not None:
        if o.score is not None:
            return float(o.score)
        if o.success is not None:
            return 1.0 if o.success else 0.0
    if default_clean:
        return 0.0 if e.error else 1.0
    return None


def outcome_value(trace: Trace, truth: Any = None) -> float:
    """The run's outcome (used by R1 and by rewards that include ``r_perf``).

    ``truth`` a number/bool → that value (an external verdict); a string → 1 if the run's
    answer (``outcome.answer_ref`` of the trace, else of the final output event) equals it,
    else 0. Without ``truth``: ``trace.outcome.score`` → ``trace.outcome.success`` →
    ``trace.rewards["team"]`` → the final output event's score/success.
    """
    if isinstance(truth, (bool, int, float, np.bool_, np.integer, np.floating)):
        return float(truth)
    if isinstance(truth, str):
        answer = trace.outcome.answer_ref if trace.outcome is not None else None
        if answer is None:
            g = _graph(trace)
            out = trace.events[g.output].outcome if g.output >= 0 else None
            answer = out.answer_ref if out is not None else None
        if answer is None:
            raise ConfigError(
                "truth is an answer string but the run records no answer: set Trace.outcome.answer_ref "
                "or the final output event's outcome.answer_ref, or pass truth as a number"
            )
        return 1.0 if answer == truth else 0.0
    if truth is not None:
        raise ConfigError(f"truth must be a number, a bool or an answer string, got {type(truth).__name__}")
    o = trace.outcome
    if o is not None and o.score is not None:
        return float(o.score)
    if o is not None and o.success is not None:
        return 1.0 if o.success else 0.0
    if "team" in trace.rewards:
        return float(trace.rewards["team"])
    if trace.events:
        g = _graph(trace)
        s = event_score(trace.events[g.output]) if g.output >= 0 else None
        if s is not None:
            return s
    raise ConfigError(
        f"trace {trace.trace_id!r} has no outcome: set Trace.outcome (success/score), rewards['team'] "
        f"or the final output event's outcome, or pass truth=…"
    )


def shared_outcome(trace: Trace, *, truth: Any = None) -> list[Signal]:
    """R1 shared team outcome: one ``team`` signal = :func:`outcome_value`.

    >>> from orchestrace import synth
    >>> shared_outcome(synth(events=60, agents=3, seed=4))[0].value
    1.0
    """
    return [signal("team", "team", outcome_value(trace, truth), _R.SHARED, "shared_outcome")]


def subagents(g: TraceGraph) -> list[int]:
    """Agent codes of the sub-agents: spawned agents; without spawns, every non-root agent."""
    tree = g.spawn_tree()
    if tree.spawned.size:
        return tree.spawned.tolist()
    return [a for a in range(len(g.agents)) if a != g.root_agent]


def agent_success(
    trace: Trace,
    *,
    truth: Mapping[str, float] | None = None,
    finish_weight: float = 0.5,
    success_weight: float = 0.5,
) -> list[Signal]:
    """R2 individual agent reward for every sub-agent ``a``:
    ``finish_weight·finished_a + success_weight·success_a``.

    ``finished_a`` = 1 if ``a`` emitted a ``return``; ``success_a`` = ``truth[a]`` if given,
    else the score of ``a``'s latest event with an outcome, else (if finished) 1 − error flag
    of its latest return, else 0.

    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("r2"); s = b.spawn("w1", t=0); _ = b.return_("w1", t=1, after=s)
    >>> [(x.id, x.value) for x in agent_success(b.build())]
    [('w1', 1.0)]
    """
    g = _graph(trace)
    ev = trace.events
    ret = g.is_type(EventType.RETURN)
    out = []
    truth = truth or {}
    for a in subagents(g):
        name = g.agents[a]
        mine = np.flatnonzero(g.agent == a)
        rets = mine[ret[mine]]
        finished = 1.0 if rets.size else 0.0
        if name in truth:
            success = float(truth[name])
        else:
            scored = [i for i in mine.tolist() if event_score(ev[i]) is not None]
            if scored:
                success = event_score(ev[max(scored, key=lambda i: (g.t[i], i))]) or 0.0
            elif rets.size:
                last = int(rets[np.argmax(g.t[rets])])
                success = 0.0 if ev[last].error else 1.0
            else:
                success = 0.0
        out.append(signal("agent", name, finish_weight * finished + success_weight * success, _R.INDIVIDUAL,
                          "agent_success"))
    return out


# -- R3 per-role scorers: (trace, graph, event indices of the role, truth) -> float ------------------
def _score_success(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    ev = trace.events
    vals = [event_score(ev[i], default_clean=True) or 0.0 for i in idx.tolist()]
    return float(np.mean(vals)) if vals else 0.0


def _score_outcome(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    return outcome_value(trace, truth)


def _score_finish(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    agents = set(g.agent[idx].tolist()) & set(subagents(g))
    if not agents:
        return 0.0
    ret = g.is_type(EventType.RETURN)
    done = set(g.agent[ret].tolist())
    return len(agents & done) / len(agents)


def _score_tools(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    calls = {g.ids[i] for i in idx.tolist() if g.type[i] == _TOOL}
    vals = [s.value for s in tool_use(trace) if s.id in calls]
    return float(np.mean(vals)) if vals else 0.0


def _score_judge(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    vals = [x for x in (event_score(trace.events[i]) for i in idx.tolist()) if x is not None]
    return float(np.mean(vals)) if vals else 0.0


def _score_cost(trace: Trace, g: TraceGraph, idx: np.ndarray, truth: Any) -> float:
    return -float((g.tokens_in[idx] + g.tokens_out[idx]).sum()) / 1000.0


_TOOL = list(EventType).index(EventType.TOOL_CALL)

#: Named per-role scorers usable from a TOML spec.
ROLE_SCORERS: dict[str, Callable[[Trace, Any, np.ndarray, Any], float]] = {
    "success": _score_success,   # mean event score of the role's events (clean = 1)
    "outcome": _score_outcome,   # the team outcome
    "finish": _score_finish,     # share of the role's sub-agents that returned
    "tool_success": _score_tools,  # mean R5 value of the role's tool calls
    "judge": _score_judge,       # mean judged score (events with an outcome)
    "cost": _score_cost,         # −tokens/1000 of the role's events
}


def role_reward(
    trace: Trace,
    *,
    truth: Any = None,
    scorers: Mapping[str, str | Callable[..., float]] | None = None,
    default: str = "success",
    weights: Mapping[str, float] | None = None,
) -> list[Signal]:
    """R3 role-specific rewards: ``weights[r] · scorer_r(role r's events)`` for each role ``r``.

    ``scorers`` maps a role to a scorer name of :data:`ROLE_SCORERS` (``success``,
    ``outcome``, ``finish``, ``tool_success``, ``judge``, ``cost``) or to a callable
    ``(trace, graph, event_indices, truth) -> float``; other roles use ``default``.
    Roles follow the ``role`` credit unit (event role, else its agent's role).

    >>> from orchestrace import synth
    >>> [(s.id, s.value) for s in role_reward(synth(events=60, agents=3, seed=4), scorers={"lead": "outcome"})]
    [('lead', 1.0), ('worker', 1.0)]
    """
    from ..analysis.units import role_codes

    g = _graph(trace)
    event_role, names, _ = role_codes(g)
    if not names:
        raise ConfigError("role_reward needs roles: set Event.role (or the role on each spawn) in the trace")
    scorers = dict(scorers or {})
    weights = dict(weights or {})
    for r in list(scorers) + list(weights):
        if r not in names:
            raise ConfigError(f"role_reward names role {r!r}, which the trace lacks (roles: {', '.join(names)})")
    out = []
    for code, r in enumerate(names):
        sc = scorers.get(r, default)
        fn = ROLE_SCORERS.get(sc) if isinstance(sc, str) else sc
        if fn is None:
            raise ConfigError(f"unknown role scorer {sc!r} for role {r!r}; choose from {', '.join(ROLE_SCORERS)}")
        val = float(weights.get(r, 1.0)) * fn(trace, g, np.flatnonzero(event_role == code), truth)
        out.append(signal("role", r, val, _R.ROLE, "role_reward"))
    return out


def process(trace: Trace, *, truth: Any = None, default: float | None = None) -> list[Signal]:
    """R4 process rewards: per-turn scores found in the trace.

    The trace's own ``turn`` signals (or any signal of family ``process``) pass through;
    every model turn (:data:`~orchestrace.credit.TURN_TYPES`) with an outcome score adds
    a ``turn`` signal unless a signal already names it; ``default`` scores the remaining
    turns (None: skip them).

    >>> from orchestrace.core.builder import TraceBuilder
    >>> from orchestrace.core.trace import Outcome
    >>> b = TraceBuilder("p"); _ = b.add("message", "a", t=0, outcome=Outcome(score=0.5))
    >>> [(s.unit.value, s.id, s.value) for s in process(b.build())]
    [('turn', 'e1', 0.5)]
    """
    from ..analysis.units import TURN_TYPES

    out = [s for s in trace.signals if s.unit == CreditUnit.TURN or s.family == RewardFamily.PROCESS]
    named = {s.id for s in out}
    for e in trace.events:
        if e.type in TURN_TYPES and e.id not in named:
            sc = event_score(e)
            if sc is None:
                sc = default
            if sc is not None:
                out.append(signal("turn", e.id, sc, _R.PROCESS, "process"))
    return out


def tool_use(
    trace: Trace,
    *,
    truth: Any = None,
    success_weight: float = 1.0,
    call_cost: float = 0.0,
    token_cost: float = 0.0,
    latency_cost: float = 0.0,
) -> list[Signal]:
    """R5 tool-use reward per ``tool_call`` ``c``: success and efficiency,
    ``success_weight·s_c − call_cost − token_cost·tok_c/1000 − latency_cost·d_c``.

    ``s_c`` = the call's score, else its result's (a ``tool_result`` that depends on it),
    else 0 if the call or a result is flagged ``error``, else 1; ``tok_c`` its tokens,
    ``d_c`` its duration (s).

    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("t"); c = b.tool_call("a", "x", t=0, t_end=2, tokens_in=500)
    >>> _ = b.tool_result("a", "x", t=2, after=c, error=True)
    >>> tool_use(b.build(), call_cost=0.1, token_cost=0.2)[0].value      # 0 − 0.1 − 0.1
    -0.2
    """
    g = _graph(trace)
    ev = trace.events
    calls = np.flatnonzero(g.type == _TOOL)
    res_of: dict[int, list[int]] = {}
    is_res = g.is_type(EventType.TOOL_RESULT)
    for s, d in zip(g.dep_src.tolist(), g.dep_dst.tolist(), strict=False):
        if g.type[s] == _TOOL and is_res[d]:
            res_of.setdefault(s, []).append(d)
    out = []
    for c in calls.tolist():
        s = event_score(ev[c])
        results = res_of.get(c, [])
        if s is None:
            scores = [x for x in (event_score(ev[r]) for r in results) if x is not None]
            if scores:
                s = float(np.mean(scores))
            else:
                s = 0.0 if (ev[c].error or any(ev[r].error for r in results)) else 1.0
        tok = g.tokens_in[c] + g.tokens_out[c]
        val = success_weight * s - call_cost - token_cost * tok / 1000.0 - latency_cost * g.duration[c]
        out.append(signal("tool_call", ev[c].id, val, _R.TOOL, "tool_use"))
    return out


def judge(trace: Trace, *, truth: Any = None) -> list[Signal]:
    """R6 debate / verifier reward per ``message``: its judged score.

    With ``truth`` (an answer string), a message whose ``outcome.answer_ref`` is set scores
    1 if it equals ``truth`` else 0 (agreement with the correct answer, as in debate).
    Otherwise the message's score (``outcome.score`` / ``success``, e.g. from a verifier).
    The trace's own ``message`` signals (or family ``debate``) pass through.

    >>> from orchestrace.core.builder import TraceBuilder
    >>> from orchestrace.core.trace import Outcome
    >>> b = TraceBuilder("d"); _ = b.message("a", "b", t=0, outcome=Outcome(answer_ref="42"))
    >>> [s.value for s in judge(b.build(), truth="42")]
    [1.0]
    """
    out = [s for s in trace.signals if s.unit == CreditUnit.MESSAGE or s.family == RewardFamily.DEBATE]
    named = {s.id for s in out}
    for e in trace.events:
        if e.type is not EventType.MESSAGE or e.id in named:
            continue
        if isinstance(truth, str) and e.outcome is not None and e.outcome.answer_ref is not None:
            out.append(signal("message", e.id, 1.0 if e.outcome.answer_ref == truth else 0.0, _R.DEBATE, "judge"))
            continue
        sc = event_score(e)
        if sc is not None:
            out.append(signal("message", e.id, sc, _R.DEBATE, "judge"))
    return out
