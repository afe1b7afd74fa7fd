"""MAS-native measures (E1–E4), critical steps, wasted work, safety flows, spawn and cost.

Every measure is a pure function ``f(trace_or_graph) -> float | None`` with a stable,
namespaced name (``e2/speedup``) listed in :data:`MEASURES`; its docstring gives the
formula. ``None`` means *unknown* (the trace lacks what the measure needs) — never 0.
:func:`compute` builds one :class:`~orchestrace.analysis.graph.TraceGraph` and evaluates all (or a
selection of) measures on it, with the assumptions made and the safety flows found.

Notation: ``V`` events, ``d(v)`` duration (``t_end − t``, or the graph's fill rule),
``tok(v) = tokens_in + tokens_out``, ``out`` the final output event
(:attr:`TraceGraph.output`), ``anc(S)``/``desc(S)`` dependency ancestors/descendants,
``root`` the orchestrator agent (:attr:`TraceGraph.root_agent`).

Event classes (E3): *coordination* ``C`` = orchestrator_decision, spawn, despawn, message
to another agent, return, aggregate; *work* ``W`` = tool_call, tool_result, and model turns
(a ``message`` whose ``to`` is empty or the sender itself: :attr:`TraceGraph.turn`);
human_intervention and safety_event are neither and are left out of E3 shares.

Declared vs derived costs: ``cost/tokens``, ``cost/wall_clock_s``, ``cost/tool_calls`` and
``cost/messages`` honour what the trace *declares* in ``Trace.costs`` (the producer may know
better: a run's real wall clock when the events are illustrative, tokens the events do not
carry); only when a key is not declared are they derived from the events. The values
derived from the events are always reported as well, as ``cost/derived/…``, and when the
two disagree an assumption says so. Every other measure (E2's critical path and work, waste)
is computed from the events.

The reachability measures (E4 error taint, wasted work, safety flows) live in
:mod:`orchestrace.analysis._flows`, the notes and per-graph memo every measure shares in
:mod:`orchestrace.analysis._notes`; every measure is importable from here.

>>> from orchestrace import synth
>>> r = compute(synth(events=300, agents=4, seed=2))
>>> r.metrics["spawn/agents"], r.metrics["e2/speedup"] >= 1, r.metrics["e1/score"]
(4.0, True, 0.0)
>>> sorted(reference_metrics(r))
['error_amplification', 'parallelism_efficiency', 'protocol_overhead', 'task_success']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import msgspec
import numpy as np

from ..core._dag import Columns
from ..core.trace import Trace
from ..errors import ConfigError, TraceInvalidError, did_you_mean
from ..vocab import Measure
from ._flows import (
    SafetyFlow,
    amplification,
    caught_by_aggregation,
    erroneous_events,
    erroneous_roots,
    flow_count,
    human_interventions,
    output_tainted,
    privileged_calls,
    safety_events,
    safety_flows,
    safety_output_tainted,
    tainted_privileged,
    untrusted_events,
    useful_mask,
    wasted_agents,
    wasted_events,
    wasted_share,
    wasted_time,
    wasted_tokens,
)
from ._flows import (
    wasted_by_agent as wasted_by_agent,  # public: re-exported for callers of measures
)
from ._notes import _T, Value, _count, _graph, _memo, _note, _noting, _ratio, _tok, _tree
from .graph import TraceGraph

__all__ = [
    "MEASURES",
    "REFERENCE_KEYS",
    "MetricsResult",
    "SafetyFlow",
    "compute",
    "reference_metrics",
    "safety_flows",
    "select_measures",
    "useful_mask",
]

_COORD = (_T.ORCHESTRATOR_DECISION, _T.SPAWN, _T.DESPAWN, _T.MESSAGE, _T.RETURN, _T.AGGREGATE)
_WORK = (_T.TOOL_CALL, _T.TOOL_RESULT)


class MetricsResult(msgspec.Struct, frozen=True, kw_only=True):
    """All measures of one trace: ``metrics`` name → value (None = unknown), the
    ``assumptions`` made (filled durations, fallback rules), and the safety ``flows``."""

    trace_id: str
    metrics: dict[str, float | None]
    assumptions: list[str] = []
    flows: list[SafetyFlow] = []

    @property
    def unknown(self) -> list[str]:
        """Names of measures whose value is unknown."""
        return [k for k, v in self.metrics.items() if v is None]

    def to_dict(self) -> dict:
        """``{"trace_id", "metrics", "assumptions", "unknown", "flows"}`` (JSON-ready)."""
        return {"trace_id": self.trace_id, "metrics": dict(self.metrics), "assumptions": list(self.assumptions),
                "unknown": self.unknown, "flows": [msgspec.to_builtins(f) for f in self.flows]}


# ---------------------------------------------------------------------- E1
def _outcome_field(g: TraceGraph, field: str) -> tuple[Value, str]:
    tr = g.trace
    if tr.outcome is not None and getattr(tr.outcome, field) is not None:
        return float(getattr(tr.outcome, field)), ""
    if g.output >= 0:
        oc = tr.events[g.output].outcome
        if oc is not None and getattr(oc, field) is not None:
            return float(getattr(oc, field)), f"E1 {field} taken from the final output event {g.ids[g.output]!r}"
    return None, ""


def task_success(x: Trace | TraceGraph) -> Value:
    """``e1/task_success`` ∈ {0, 1}: ``trace.outcome.success``; else the final output event's
    ``outcome.success``; else the producer's own ``metrics.task_success``; else unknown."""
    g = _graph(x)
    v, note = _outcome_field(g, "success")
    if v is None and "task_success" in g.trace.metrics:
        v, note = float(g.trace.metrics["task_success"]), "E1 task_success taken from the trace's own metrics (no outcome fields)"
    if note:
        _note(g, note)
    return v


def task_score(x: Trace | TraceGraph) -> Value:
    """``e1/score``: ``trace.outcome.score``; else the final output event's ``outcome.score``; else unknown."""
    g = _graph(x)
    v, note = _outcome_field(g, "score")
    if note:
        _note(g, note)
    return v


# ---------------------------------------------------------------------- E2
def critical_path_s(x: Trace | TraceGraph) -> Value:
    """``e2/critical_path_s`` = max over dependency paths P of Σ_{v∈P} d'(v) (seconds), ``d'(v)``
    the duration of ``v`` clipped at the start of the next event on P (:meth:`TraceGraph.critical_path`);
    ≤ the run's span ``cost/derived/wall_clock_s`` and ≤ ``e2/work_s``."""
    g = _graph(x)
    return float(_memo(g, "cp", g.critical_path).length_s)  # type: ignore[attr-defined]


def critical_path_events(x: Trace | TraceGraph) -> Value:
    """``e2/critical_path_events`` = number of events on the critical path."""
    g = _graph(x)
    return float(_memo(g, "cp", g.critical_path).steps)  # type: ignore[attr-defined]


def work_s(x: Trace | TraceGraph) -> Value:
    """``e2/work_s`` = total busy time = Σ_v d(v) (seconds; the work of work/span analysis)."""
    return float(_graph(x).duration.sum())


def speedup(x: Trace | TraceGraph) -> Value:
    """``e2/speedup`` = W / max(CP, W / P): total work ``W = Σ_v d(v)`` over the shortest time
    the dependency graph allows **with the run's own peak concurrency** ``P`` (Brent's lower
    bound on a ``P``-way schedule). So ``1 ≤ speedup ≤ min(W / CP, P)``: a trace whose
    recorded dependencies leave work unordered that in fact ran one piece at a time (sequential
    sub-agents, waves) is not credited with parallelism it never had. Unknown when the
    critical path is 0 s."""
    g = _graph(x)
    cp, w, p = critical_path_s(g) or 0.0, work_s(g) or 0.0, g.peak_concurrency
    if not cp:
        return None
    if p and w / p > cp:
        _note(g, f"e2/speedup capped by peak concurrency {p}: the dependency graph alone would allow "
                 f"{w / cp:.3g}× (work {w:.6g} s / critical path {cp:.6g} s)")
        return float(p)
    return w / cp


def peak_concurrency(x: Trace | TraceGraph) -> Value:
    """``e2/peak_concurrency`` = max over time of the number of events in progress
    (zero-duration events excluded; back-to-back events do not overlap)."""
    return float(_graph(x).peak_concurrency)


def efficiency(x: Trace | TraceGraph) -> Value:
    """``e2/efficiency`` = speedup / peak_concurrency ∈ (0, 1] (reference key ``parallelism_efficiency``)."""
    g = _graph(x)
    s = speedup(g)
    return None if s is None or g.peak_concurrency == 0 else s / g.peak_concurrency


def _stages(g: TraceGraph) -> tuple[np.ndarray, int]:
    """Stage index of every event and the number of stages (see :func:`critical_steps`)."""
    def run() -> tuple[np.ndarray, int]:
        if g.n == 0:
            return np.zeros(0, dtype=np.int64), 0
        bound = (g.agent == g.root_agent) & g.is_type(_T.ORCHESTRATOR_DECISION, _T.AGGREGATE)
        b = np.sort(g.t[bound])
        stage = np.searchsorted(b, g.t, side="right")
        return stage, int(b.size) + 1
    return _memo(g, "stages", run)  # type: ignore[return-value]


def critical_steps(x: Trace | TraceGraph) -> Value:
    """``e2/critical_steps`` (Kimi PARL) = Σ_t ( S_main(t) + max_i S_sub,i(t) ).

    Stages: the start times ``b_1 ≤ … ≤ b_B`` of the root agent's orchestrator_decision and
    aggregate events cut time into ``B + 1`` stages; an event with start ``t`` is in stage
    ``#{k : b_k ≤ t}`` (a boundary event opens its stage). ``S_main(t)`` = events of the
    root agent in stage t; ``S_sub,i(t)`` = events of sub-agent i in stage t (every
    event is one step)."""
    g = _graph(x)
    if g.n == 0:
        return 0.0
    stage, ns = _stages(g)
    main = g.agent == g.root_agent
    s_main = np.bincount(stage[main], minlength=ns)
    sub_stage, sub_agent = stage[~main], g.agent[~main].astype(np.int64)
    na = len(g.agents)
    s_sub = np.zeros(ns, dtype=np.int64)
    if sub_stage.size:
        if ns * na <= 4 * g.n + 1024:
            s_sub = np.bincount(sub_stage * na + sub_agent, minlength=ns * na).reshape(ns, na).max(axis=1)
        else:
            keys, counts = np.unique(sub_stage * na + sub_agent, return_counts=True)
            np.maximum.at(s_sub, keys // na, counts)
    return float((s_main + s_sub).sum())


def n_stages(x: Trace | TraceGraph) -> Value:
    """``e2/stages`` = number of orchestration stages used by ``e2/critical_steps``."""
    return float(_stages(_graph(x))[1])


# ---------------------------------------------------------------------- E3
def _share(g: TraceGraph, weights: np.ndarray | None) -> Value:
    turn = g.turn
    c, w = g.is_type(*_COORD) & ~turn, g.is_type(*_WORK) | turn
    if weights is None:
        return _ratio(c.sum(), c.sum() + w.sum())
    return _ratio(weights[c].sum(), weights[c].sum() + weights[w].sum())


def overhead_events(x: Trace | TraceGraph) -> Value:
    """``e3/overhead_events`` = |C| / (|C| + |W|) (coordination share of events)."""
    return _share(_graph(x), None)


def overhead_tokens(x: Trace | TraceGraph) -> Value:
    """``e3/overhead_tokens`` = Σ_C tok / Σ_{C∪W} tok (unknown when no event reports tokens)."""
    g = _graph(x)
    return _share(g, _tok(g)) if g.tokens_known else None


def overhead_time(x: Trace | TraceGraph) -> Value:
    """``e3/overhead_time`` = Σ_C d / Σ_{C∪W} d (coordination share of busy time)."""
    g = _graph(x)
    return _share(g, g.duration)


def messages_per_subagent(x: Trace | TraceGraph) -> Value:
    """``e3/messages_per_subagent`` = #messages between agents (model turns excluded) /
    #sub-agents, sub-agents being the spawned agents (or, when nothing is spawned, every
    agent but the root)."""
    g = _graph(x)
    k = int(_tree(g).spawned.size) or max(len(g.agents) - 1, 0)  # type: ignore[attr-defined]
    return _ratio(int((g.is_type(_T.MESSAGE) & ~g.turn).sum()), k)


def protocol_overhead(x: Trace | TraceGraph) -> Value:
    """Reference ``protocol_overhead`` = ``e3/overhead_tokens`` when the trace reports
    tokens, else ``e3/overhead_events`` (recorded as an assumption)."""
    g = _graph(x)
    if g.tokens_known:
        return overhead_tokens(g)
    _note(g, "protocol_overhead = coordination share of events (no event reports tokens)")
    return overhead_events(g)


# ---------------------------------------------------------------------- spawn structure
def spawn_depth(x: Trace | TraceGraph) -> Value:
    """``spawn/depth`` = longest chain of spawns from a root agent (root alone: 0)."""
    return float(_tree(_graph(x)).max_depth)  # type: ignore[attr-defined]


def spawn_max_fanout(x: Trace | TraceGraph) -> Value:
    """``spawn/max_fanout`` = max over agents of the distinct agents it spawned."""
    return float(_tree(_graph(x)).max_fanout)  # type: ignore[attr-defined]


def spawn_agents(x: Trace | TraceGraph) -> Value:
    """``spawn/agents`` = distinct agents spawned (sub-agents)."""
    return float(_tree(_graph(x)).spawned.size)  # type: ignore[attr-defined]


def spawn_finish_rate(x: Trace | TraceGraph) -> Value:
    """``spawn/finish_rate`` = spawned agents that emit ≥ 1 ``return`` / spawned agents
    (Kimi PARL's finish rate; unknown when nothing is spawned)."""
    g = _graph(x)
    spawned = _tree(g).spawned  # type: ignore[attr-defined]
    if not spawned.size:
        return None
    returned = np.zeros(len(g.agents), dtype=bool)
    returned[g.agent[g.is_type(_T.RETURN)]] = True
    return float(returned[spawned].mean())


def spawn_peak_alive(x: Trace | TraceGraph) -> Value:
    """``spawn/peak_alive`` = max over time of spawned agents alive, an agent being alive from
    its first spawn to the end of its last event (or its despawn, if later)."""
    g = _graph(x)
    spawned = _tree(g).spawned  # type: ignore[attr-defined]
    if not spawned.size:
        return 0.0
    na = len(g.agents)
    born = np.full(na, np.inf)
    sp = g.is_type(_T.SPAWN)
    to = [g.trace.events[i].to for i in np.flatnonzero(sp).tolist()]
    at = g.t[sp]
    for name, t in zip(to, at.tolist(), strict=True):
        if name is not None:
            a = g.agent_index[name]
            born[a] = min(born[a], t)
    dies = np.full(na, -np.inf)
    np.maximum.at(dies, g.agent, g.t_end)
    despawn = g.is_type(_T.DESPAWN)
    for i in np.flatnonzero(despawn).tolist():
        name = g.trace.events[i].to
        if name is not None and name in g.agent_index:
            a = g.agent_index[name]
            dies[a] = max(dies[a], g.t_end[i])
    b, d = born[spawned], np.maximum(dies[spawned], born[spawned])
    b, d = np.sort(b), np.sort(d)
    running = np.arange(1, b.size + 1) - np.searchsorted(d, b, side="left")
    return float(running.max())


# ---------------------------------------------------------------------- cost
def tokens_in(x: Trace | TraceGraph) -> Value:
    """``cost/tokens_in`` = Σ_v tokens_in (unknown when no event reports tokens)."""
    g = _graph(x)
    return float(g.tokens_in.sum()) if g.tokens_known else None


def tokens_out(x: Trace | TraceGraph) -> Value:
    """``cost/tokens_out`` = Σ_v tokens_out (unknown when no event reports tokens)."""
    g = _graph(x)
    return float(g.tokens_out.sum()) if g.tokens_known else None


def derived_tokens(x: Trace | TraceGraph) -> Value:
    """``cost/derived/tokens`` = Σ_v tok(v) (unknown when no event reports tokens)."""
    g = _graph(x)
    return float(_tok(g).sum()) if g.tokens_known else None


def derived_tool_calls(x: Trace | TraceGraph) -> Value:
    """``cost/derived/tool_calls`` = number of ``tool_call`` events."""
    return float(_count(_graph(x), _T.TOOL_CALL))


def derived_messages(x: Trace | TraceGraph) -> Value:
    """``cost/derived/messages`` = number of ``message`` events."""
    return float(_count(_graph(x), _T.MESSAGE))


def derived_wall_clock_s(x: Trace | TraceGraph) -> Value:
    """``cost/derived/wall_clock_s`` = the run's span, max_v t_end − min_v t (0 for an empty trace)."""
    g = _graph(x)
    return float(g.t_end.max() - g.t.min()) if g.n else 0.0


def _declared_or(g: TraceGraph, key: str, derived: Value) -> Value:
    """The declared ``costs[key]`` if the trace has one (noted when it differs from ``derived``), else ``derived``."""
    declared = g.trace.costs.get(key)
    if declared is None:
        return derived
    declared = float(declared)
    if derived is None:
        _note(g, f"cost/{key} = {declared:.6g} as declared in the trace's costs (the events do not give it)")
    elif not math.isclose(declared, derived, rel_tol=1e-6, abs_tol=1e-9):
        _note(g, f"cost/{key} = {declared:.6g} as declared in the trace's costs; the events give "
                 f"{derived:.6g} (cost/derived/{key})")
    return declared


def tokens(x: Trace | TraceGraph) -> Value:
    """``cost/tokens`` = the trace's declared ``costs.tokens``; else Σ_v tok(v); else unknown."""
    g = _graph(x)
    return _declared_or(g, "tokens", derived_tokens(g))


def tool_calls(x: Trace | TraceGraph) -> Value:
    """``cost/tool_calls`` = the declared ``costs.tool_calls``; else the number of ``tool_call`` events."""
    g = _graph(x)
    return _declared_or(g, "tool_calls", derived_tool_calls(g))


def messages(x: Trace | TraceGraph) -> Value:
    """``cost/messages`` = the declared ``costs.messages``; else the number of ``message`` events."""
    g = _graph(x)
    return _declared_or(g, "messages", derived_messages(g))


def events(x: Trace | TraceGraph) -> Value:
    """``cost/events`` = |V|."""
    return float(_graph(x).n)


def wall_clock_s(x: Trace | TraceGraph) -> Value:
    """``cost/wall_clock_s`` = the declared ``costs.wall_clock_s``; else the events' span
    (``cost/derived/wall_clock_s``)."""
    g = _graph(x)
    return _declared_or(g, "wall_clock_s", derived_wall_clock_s(g))


# ---------------------------------------------------------------------- registry
#: Every measure by its stable name, in report order.
MEASURES: dict[str, Callable[[Trace | TraceGraph], Value]] = {
    "e1/task_success": task_success,
    "e1/score": task_score,
    "e2/speedup": speedup,
    "e2/efficiency": efficiency,
    "e2/peak_concurrency": peak_concurrency,
    "e2/critical_path_s": critical_path_s,
    "e2/critical_path_events": critical_path_events,
    "e2/critical_steps": critical_steps,
    "e2/stages": n_stages,
    "e2/work_s": work_s,
    "e3/overhead_events": overhead_events,
    "e3/overhead_tokens": overhead_tokens,
    "e3/overhead_time": overhead_time,
    "e3/messages_per_subagent": messages_per_subagent,
    "e4/erroneous_events": erroneous_events,
    "e4/erroneous_roots": erroneous_roots,
    "e4/amplification": amplification,
    "e4/output_tainted": output_tainted,
    "e4/caught_by_aggregation": caught_by_aggregation,
    "waste/events": wasted_events,
    "waste/tokens": wasted_tokens,
    "waste/time_s": wasted_time,
    "waste/share": wasted_share,
    "waste/agents": wasted_agents,
    "safety/flows": flow_count,
    "safety/tainted_privileged": tainted_privileged,
    "safety/output_tainted": safety_output_tainted,
    "safety/untrusted_events": untrusted_events,
    "safety/privileged_calls": privileged_calls,
    "safety/events": safety_events,
    "safety/human_interventions": human_interventions,
    "spawn/depth": spawn_depth,
    "spawn/max_fanout": spawn_max_fanout,
    "spawn/agents": spawn_agents,
    "spawn/finish_rate": spawn_finish_rate,
    "spawn/peak_alive": spawn_peak_alive,
    "cost/tokens_in": tokens_in,
    "cost/tokens_out": tokens_out,
    "cost/tokens": tokens,
    "cost/tool_calls": tool_calls,
    "cost/messages": messages,
    "cost/events": events,
    "cost/wall_clock_s": wall_clock_s,
    "cost/derived/tokens": derived_tokens,
    "cost/derived/tool_calls": derived_tool_calls,
    "cost/derived/messages": derived_messages,
    "cost/derived/wall_clock_s": derived_wall_clock_s,
}

#: Reference ``metrics`` keys (the survey schema) and how each is computed.
REFERENCE_KEYS: dict[str, Callable[[Trace | TraceGraph], Value]] = {
    Measure.TASK_SUCCESS.value: task_success,
    Measure.PARALLELISM_EFFICIENCY.value: efficiency,
    Measure.PROTOCOL_OVERHEAD.value: protocol_overhead,
    Measure.ERROR_AMPLIFICATION.value: amplification,
}


def select_measures(select: Iterable[str] | None = None) -> list[str]:
    """Measure names for a selection: exact names, families (``e2``, ``e2/``, ``e2/*``) or
    comma-separated lists of them; ``None`` or empty = all. Unknown names raise
    :class:`~orchestrace.errors.ConfigError` with the closest names.

    >>> select_measures(["e2/speedup", "spawn"])[:3]
    ['e2/speedup', 'spawn/depth', 'spawn/max_fanout']
    """
    items = [s.strip() for item in (select or ()) for s in item.split(",") if s.strip()]
    if not items:
        return list(MEASURES)
    out: dict[str, None] = {}
    for s in items:
        fam = s.rstrip("*").rstrip("/")
        hits = [k for k in MEASURES if k == s or k.split("/")[0] == fam]
        if not hits:
            hint = did_you_mean(s, list(MEASURES) + sorted({k.split("/")[0] for k in MEASURES}), prefix="; ", n=3)
            raise ConfigError(f"unknown measure {s!r}{hint} (families: e1 e2 e3 e4 waste safety spawn cost)")
        out.update(dict.fromkeys(hits))
    return list(out)


def _clean(v: object) -> Value:
    if v is None:
        return None
    f = float(v)  # type: ignore[arg-type]
    return None if math.isnan(f) else f


def compute(
    trace: Trace | TraceGraph,
    select: Iterable[str] | None = None,
    *,
    validate: bool = True,
    max_flows: int = 50,
    columns: Columns | None = None,
) -> MetricsResult:
    """Evaluate the selected measures (default: all) on one graph built once.

    With ``validate`` (default) a :class:`~orchestrace.Trace` is first checked with
    :func:`orchestrace.validate`; an invalid trace raises
    :class:`~orchestrace.errors.TraceInvalidError` carrying the validator's problems. A
    dependency cycle raises it too, naming the cycle. ``columns`` — the
    :class:`~orchestrace.core._dag.Columns` a caller's own :func:`orchestrace.validate` call of this
    trace filled — are handed to the graph; without them the validation here fills its own.
    """
    if isinstance(trace, Trace) and columns is None:
        columns = Columns(trace)  # the graph reuses the columns the validator pulls out of the trace
    if isinstance(trace, Trace) and validate:
        _check(trace, columns)
    names = select_measures(select)
    g = trace if isinstance(trace, TraceGraph) else TraceGraph.from_trace(trace, columns=columns)
    with _noting() as notes:
        metrics = {name: _clean(MEASURES[name](g)) for name in names}
        flows = safety_flows(g, limit=max_flows) if any(n.startswith("safety/") for n in names) else []
        if g.output >= 0 and not g.output_rule.startswith("aggregate/return"):
            _note(g, f"final output = {g.ids[g.output]!r} ({g.output_rule})")
    assumptions = [*g.assumptions, *(n for n in notes if n not in g.assumptions)]
    return MetricsResult(trace_id=g.trace_id, metrics=metrics, assumptions=assumptions, flows=flows)


def _check(trace: Trace, columns: Columns | None = None) -> None:
    from ..core._validate import validate as run_validator

    report = run_validator(trace, columns=columns)
    if not report.valid:
        errors = [p for p in report.problems if str(p.severity) == "error"]
        raise TraceInvalidError(
            f"trace {trace.trace_id!r} is not valid ({len(errors)} error(s)); measures refused", report.problems
        )


def reference_metrics(result: MetricsResult | Trace | TraceGraph) -> dict[str, float]:
    """The reference ``metrics`` keys (task_success, parallelism_efficiency,
    protocol_overhead, error_amplification) that are known, for writing into a trace."""
    if isinstance(result, MetricsResult):
        m = result.metrics
        ref = {
            "task_success": m.get("e1/task_success"),
            "parallelism_efficiency": m.get("e2/efficiency"),
            "protocol_overhead": m.get("e3/overhead_tokens") if m.get("e3/overhead_tokens") is not None
            else m.get("e3/overhead_events"),
            "error_amplification": m.get("e4/amplification"),
        }
    else:
        g = _graph(result)
        ref = {k: _clean(f(g)) for k, f in REFERENCE_KEYS.items()}
    return {k: float(v) for k, v in ref.items() if v is not None}
