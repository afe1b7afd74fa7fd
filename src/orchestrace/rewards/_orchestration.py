"""R7 orchestration rewards (R8 mixes of them are in :mod:`._hybrid`).

R7 signals land on the ``orchestrator`` unit of the **terminal decision** (the stop
decision, else the latest ``orchestrator_decision``; the ``team`` unit when the trace has
no decision). Formulas:

* Kimi PARL: ``r = λ1·r_parallel + λ2·r_finish + r_perf`` with ``r_parallel`` the
  instantiation reward ``min(1, sub-agents / max_agents)``, ``r_finish`` the sub-agent
  finish rate (``spawn/finish_rate``), ``r_perf`` the outcome; ``λ1, λ2`` annealed to 0
  over training (:func:`anneal`).
* Puppeteer: ``C_t = F_t·log(1 + t/φ)`` for decision ``t = 1..T`` (``F_t`` its tokens ×
  ``token_scale``, ``φ`` the maximum episode length), ``R_T = r − λ·C_T``,
  ``R_t = γ·R_{t+1} − λ·C_t``.
* parallelism speedup ``1 − 1/e2/speedup`` (or the raw speedup), split correctness,
  aggregation quality, critical-steps cost ``−c·e2/critical_steps``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.trace import Signal, Trace
from ..errors import ConfigError
from ..vocab import EventType, RewardFamily
from ._core import signal
from ._families import _graph, event_score, outcome_value, subagents

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph

__all__ = [
    "aggregation_quality",
    "anneal",
    "critical_steps_cost",
    "parallel_speedup",
    "parl",
    "parl_reward",
    "puppeteer",
    "puppeteer_returns",
    "split_correctness",
]

_R7 = RewardFamily.ORCHESTRATION


def _terminal(g: TraceGraph) -> tuple[str, str]:
    """(unit, id) where trace-level orchestration rewards land."""
    if g.stop >= 0:
        return "orchestrator", g.ids[g.stop]
    dec = np.flatnonzero(g.is_type(EventType.ORCHESTRATOR_DECISION))
    if dec.size:
        return "orchestrator", g.ids[int(dec[np.lexsort((dec, g.t[dec]))[-1]])]
    return "team", "team"


def _r7(g: TraceGraph, value: float, name: str) -> list[Signal]:
    unit, uid = _terminal(g)
    return [signal(unit, uid, value, _R7, name)]


def _measure(g: TraceGraph, name: str) -> float | None:
    from ..analysis.measures import MEASURES

    v = MEASURES[name](g)
    return None if v is None or not math.isfinite(v) else float(v)


def anneal(value: float, step: int, total_steps: int, *, end: float = 0.0, schedule: str = "linear") -> float:
    """Annealed coefficient at ``step`` of ``total_steps`` (PARL's λ → 0): ``linear`` or ``cosine``.

    >>> anneal(0.1, 50, 100), round(anneal(0.1, 50, 100, schedule="cosine"), 6), anneal(0.1, 200, 100)
    (0.05, 0.05, 0.0)
    """
    if total_steps <= 0:
        raise ConfigError(f"total_steps must be ≥ 1, got {total_steps}")
    frac = min(max(step / total_steps, 0.0), 1.0)
    if schedule == "linear":
        return value + (end - value) * frac
    if schedule == "cosine":
        return end + (value - end) * 0.5 * (1.0 + math.cos(math.pi * frac))
    raise ConfigError(f"schedule must be linear or cosine, got {schedule!r}")


def parl_reward(r_parallel: float, r_finish: float, r_perf: float, *, lambda1: float, lambda2: float) -> float:
    """Kimi PARL ``r = λ1·r_parallel + λ2·r_finish + r_perf``.

    >>> parl_reward(1.0, 0.5, 1.0, lambda1=0.1, lambda2=0.2)
    1.2
    """
    return lambda1 * r_parallel + lambda2 * r_finish + r_perf


def parl(
    trace: Trace,
    *,
    truth: Any = None,
    lambda1: float = 0.1,
    lambda2: float = 0.1,
    max_agents: int = 8,
    step: int | None = None,
    total_steps: int | None = None,
    schedule: str = "linear",
) -> list[Signal]:
    """R7 Kimi PARL reward on the terminal decision (see the module docstring).

    With ``step`` and ``total_steps``, ``λ1`` and ``λ2`` are annealed to 0 by ``schedule``.

    >>> from orchestrace import synth
    >>> s = parl(synth(events=60, agents=4, seed=4), lambda1=0.1, lambda2=0.1, max_agents=8)
    >>> s[0].unit.value, round(s[0].value, 6)        # 0.1·4/8 + 0.1·1 + 1
    ('orchestrator', 1.15)
    """
    if max_agents < 1:
        raise ConfigError(f"max_agents must be ≥ 1, got {max_agents}")
    if (step is None) != (total_steps is None):
        raise ConfigError("give both step and total_steps to anneal λ1, λ2 (or neither)")
    if step is not None and total_steps is not None:
        lambda1 = anneal(lambda1, step, total_steps, schedule=schedule)
        lambda2 = anneal(lambda2, step, total_steps, schedule=schedule)
    g = _graph(trace)
    n_sub = len(g.spawn_tree().spawned)
    r_parallel = min(1.0, n_sub / max_agents)
    r_finish = _measure(g, "spawn/finish_rate") or 0.0
    r_perf = outcome_value(trace, truth)
    return _r7(g, parl_reward(r_parallel, r_finish, r_perf, lambda1=lambda1, lambda2=lambda2), "parl")


def puppeteer_returns(r: float, cost_tokens: np.ndarray, *, lam: float, gamma: float, phi: float) -> np.ndarray:
    """Puppeteer returns ``R_t`` for steps ``t = 1..T`` (``cost_tokens[t−1] = F_t``).

    >>> puppeteer_returns(1.0, np.array([1.0, 1.0]), lam=0.5, gamma=1.0, phi=2.0).round(4).tolist()
    [0.4507, 0.6534]
    """
    T = len(cost_tokens)
    if phi <= 0:
        raise ConfigError(f"phi (maximum episode length) must be > 0, got {phi}")
    t = np.arange(1, T + 1)
    C = np.asarray(cost_tokens, dtype=float) * np.log1p(t / phi)
    R = np.empty(T)
    nxt = None
    for k in range(T - 1, -1, -1):
        R[k] = (r if nxt is None else gamma * nxt) - lam * C[k]
        nxt = R[k]
    return R


def puppeteer(
    trace: Trace,
    *,
    truth: Any = None,
    lam: float = 0.1,
    gamma: float = 0.99,
    max_steps: int | None = None,
    token_scale: float = 1e-3,
) -> list[Signal]:
    """R7 Puppeteer step-cost returns, one per ``orchestrator_decision`` in time order.

    ``F_t`` = the decision's tokens × ``token_scale`` (default: thousands of tokens);
    ``φ`` = ``max_steps`` (default: the number of decisions); ``r`` = the outcome.

    >>> from orchestrace import synth
    >>> [round(s.value, 4) for s in puppeteer(synth(events=60, agents=3, seed=4), lam=0.1, gamma=1.0)]
    [0.9861, 0.9962]
    """
    g = _graph(trace)
    dec = np.flatnonzero(g.is_type(EventType.ORCHESTRATOR_DECISION))
    if not dec.size:
        raise ConfigError("puppeteer needs orchestrator_decision events (its steps); the trace has none")
    dec = dec[np.lexsort((dec, g.t[dec]))]
    F = (g.tokens_in[dec] + g.tokens_out[dec]) * token_scale
    phi = float(max_steps if max_steps is not None else dec.size)
    R = puppeteer_returns(outcome_value(trace, truth), F, lam=lam, gamma=gamma, phi=phi)
    return [signal("orchestrator", g.ids[i], v, _R7, "puppeteer") for i, v in zip(dec.tolist(), R.tolist(), strict=False)]


def parallel_speedup(trace: Trace, *, truth: Any = None, normalize: bool = True) -> list[Signal]:
    """R7 parallelism: ``1 − 1/speedup`` (0 when serial; ``normalize=False``: the raw
    ``e2/speedup``), speedup = busy time / critical-path time; unknown → serial."""
    g = _graph(trace)
    s = _measure(g, "e2/speedup") or 1.0
    return _r7(g, 1.0 - 1.0 / s if normalize else s, "parallel_speedup")


def split_correctness(trace: Trace, *, truth: Any = None) -> list[Signal]:
    """R7 split correctness: share of sub-agents whose ``return`` reaches the final output
    and is not flagged ``error`` (0 without sub-agents).

    >>> from orchestrace import synth
    >>> split_correctness(synth(events=200, agents=10, seed=0))[0].value
    0.9
    """
    from ..analysis.measures import useful_mask

    g = _graph(trace)
    subs = subagents(g)
    if not subs:
        return _r7(g, 0.0, "split_correctness")
    good = g.is_type(EventType.RETURN) & useful_mask(g) & ~g.error
    ok = set(g.agent[good].tolist())
    return _r7(g, sum(1 for a in subs if a in ok) / len(subs), "split_correctness")


def aggregation_quality(trace: Trace, *, truth: Any = None) -> list[Signal]:
    """R7 aggregation quality: the final output's score if judged, else 1 − ``e4/output_tainted``
    (an error reached the output → 0), else 1."""
    g = _graph(trace)
    s = event_score(trace.events[g.output]) if g.output >= 0 else None
    if s is None:
        tainted = _measure(g, "e4/output_tainted")
        s = 1.0 - tainted if tainted is not None else 1.0
    return _r7(g, s, "aggregation_quality")


def critical_steps_cost(trace: Trace, *, truth: Any = None, per_step: float = 0.01) -> list[Signal]:
    """R7 critical-steps cost ``−per_step · e2/critical_steps`` (Kimi PARL's latency budget)."""
    g = _graph(trace)
    return _r7(g, -per_step * (_measure(g, "e2/critical_steps") or 0.0), "critical_steps_cost")
