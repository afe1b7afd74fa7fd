"""Rewards R1–R8 as pure, composable functions of a trace.

A reward function is ``fn(trace, *, truth=None, **params) -> list[Signal]``: it reads a
trace (and the ground truth, where one is needed) and returns
:class:`~orchestrace.Signal` s attached to units (team, agent, role, turn, message, tool
call, orchestrator decision). One built-in per family, with the literature's forms:

====  ==========================  ===================================================
R1    :func:`shared_outcome`      the team's outcome, shared by all
R2    :func:`agent_success`       per sub-agent: finish and success
R3    :func:`role_reward`         per role, a scorer per role (MARFT-style)
R4    :func:`process`             per-turn scores found in the trace
R5    :func:`tool_use`            per tool call: success minus efficiency costs
R6    :func:`judge`               per message: verifier / judge score, debate agreement
R7    :func:`parl`,               Kimi PARL ``λ1·r_parallel + λ2·r_finish + r_perf``;
      :func:`puppeteer`, …        Puppeteer step costs; speedup, split correctness,
                                  aggregation quality, critical-steps cost
R8    :func:`hybrid`,             ``α·local + (1−α)·global``; MARTI quality / margin
      :func:`marti`               shaping
====  ==========================  ===================================================

Combinators (:func:`weighted_sum`, :func:`mix`, :func:`scale`, :func:`bind`) build new
reward functions without hidden state; a TOML spec (:func:`load_spec`) names functions
and weights so a run is reproducible from its spec.

>>> from orchestrace import synth
>>> r = weighted_sum((shared_outcome, 1.0), (bind(parl, lambda1=0.1, lambda2=0.1), 0.5))
>>> [(s.unit.value, round(s.value, 3)) for s in r(synth(events=60, agents=4, seed=4))]
[('team', 1.0), ('orchestrator', 0.575)]
"""

from __future__ import annotations

from ..core.trace import Signal, Trace
from ._core import (
    Bound,
    Mixed,
    RewardFn,
    Scaled,
    WeightedSum,
    bind,
    merge,
    mix,
    scale,
    total,
    weighted_sum,
)
from ._families import (
    agent_success,
    event_score,
    judge,
    outcome_value,
    process,
    role_reward,
    shared_outcome,
    tool_use,
)
from ._hybrid import BUILTINS, hybrid, marti, marti_margin, marti_quality
from ._orchestration import (
    aggregation_quality,
    anneal,
    critical_steps_cost,
    parallel_speedup,
    parl,
    parl_reward,
    puppeteer,
    puppeteer_returns,
    split_correctness,
)
from ._spec import CreditSpec, RewardSpec, Term, load_spec, loads_spec

__all__ = [
    "BUILTINS",
    "Bound",
    "CreditSpec",
    "Mixed",
    "RewardFn",
    "RewardSpec",
    "Scaled",
    "Term",
    "WeightedSum",
    "agent_success",
    "aggregation_quality",
    "anneal",
    "bind",
    "critical_steps_cost",
    "default_signals",
    "event_score",
    "hybrid",
    "judge",
    "load_spec",
    "loads_spec",
    "marti",
    "marti_margin",
    "marti_quality",
    "merge",
    "mix",
    "outcome_value",
    "parallel_speedup",
    "parl",
    "parl_reward",
    "process",
    "puppeteer",
    "puppeteer_returns",
    "role_reward",
    "scale",
    "shared_outcome",
    "signals_for",
    "split_correctness",
    "tool_use",
    "total",
    "weighted_sum",
]


def signals_for(trace: Trace, *, spec: RewardSpec | None = None, truth: bool | float | None = None,
                printing: bool = False) -> list[Signal]:
    """The one rule for which reward signals a trace gets (``reward``, ``credit``, ``export``, ``--ray``).

    A reward ``spec`` is evaluated (with the user's ``truth`` verdict, if any); else a ``truth``
    verdict is R1 :func:`shared_outcome` of that verdict; else :func:`default_signals` (the
    trace's own signals, or R1 of its recorded outcome). ``printing`` (``orchestrace reward``)
    shows R1 when no spec is given, rather than the trace's stored signals.

    >>> from orchestrace import synth
    >>> tr = synth(events=60, agents=3, seed=4)
    >>> [s.value for s in signals_for(tr)], [s.value for s in signals_for(tr, truth=False)]
    ([1.0], [0.0])
    """
    if spec is None and printing:
        spec = RewardSpec(terms=(Term(fn="shared_outcome"),), name="default (R1 shared_outcome)")
    if spec is not None:
        return list(spec.evaluate(trace, truth=truth))
    if truth is not None:
        return list(shared_outcome(trace, truth=truth))
    return default_signals(trace)


def default_signals(trace: Trace) -> list[Signal]:
    """The signals credited when none are given: the trace's own ``signals`` if any, else
    R1 :func:`shared_outcome` (empty when the trace has no outcome at all).

    >>> from orchestrace import synth
    >>> [(s.unit.value, s.value) for s in default_signals(synth(events=60, agents=3, seed=4))]
    [('team', 1.0)]
    """
    from ..errors import ConfigError

    if trace.signals:
        return list(trace.signals)
    try:
        return shared_outcome(trace)
    except ConfigError:
        return []
