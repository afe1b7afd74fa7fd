"""R8 hybrid rewards, which mix the other families by name, and :data:`BUILTINS`, the names.

* hybrid local-global: each ``local`` signal → ``α·local + (1−α)·Σ global``.
* MARTI shaping for an agent's turn reward ``R`` with ``Q`` the mean of its earlier
  rewards: quality ``R + α(Q·R − (1−Q)(1−R))``, margin ``R + α(R − Q)``, ``α = 0.5``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.trace import Signal, Trace
from ..errors import ConfigError, did_you_mean
from ..vocab import CreditUnit, RewardFamily
from ._core import mix, signal
from ._families import _graph, agent_success, judge, process, role_reward, shared_outcome, tool_use
from ._orchestration import (
    aggregation_quality,
    critical_steps_cost,
    parallel_speedup,
    parl,
    puppeteer,
    split_correctness,
)

__all__ = ["BUILTINS", "hybrid", "marti", "marti_margin", "marti_quality"]


def marti_quality(R: Any, Q: Any, alpha: float = 0.5) -> Any:
    """MARTI quality shaping ``R + α(Q·R − (1−Q)(1−R))`` (numpy-vectorised).

    >>> float(marti_quality(1.0, 0.5)), float(marti_quality(0.0, 0.5))
    (1.25, -0.25)
    """
    R, Q = np.asarray(R, dtype=float), np.asarray(Q, dtype=float)
    return R + alpha * (Q * R - (1.0 - Q) * (1.0 - R))


def marti_margin(R: Any, Q: Any, alpha: float = 0.5) -> Any:
    """MARTI margin shaping ``R + α(R − Q)``.

    >>> float(marti_margin(1.0, 0.5))
    1.25
    """
    R, Q = np.asarray(R, dtype=float), np.asarray(Q, dtype=float)
    return R + alpha * (R - Q)


def _resolve(fn: str | Callable[..., list[Signal]]) -> Callable[..., list[Signal]]:
    if callable(fn):
        return fn
    f = BUILTINS.get(fn)
    if f is None:
        raise ConfigError(f"unknown reward function {fn!r}{did_you_mean(fn, BUILTINS, prefix='; ')}")
    return f


def hybrid(
    trace: Trace,
    *,
    truth: Any = None,
    local: str | Callable[..., list[Signal]] = "agent_success",
    global_: str | Callable[..., list[Signal]] = "shared_outcome",
    alpha: float = 0.5,
) -> list[Signal]:
    """R8 hybrid local-global: each ``local`` signal → ``α·local + (1−α)·Σ global``.

    >>> from orchestrace import synth
    >>> [round(s.value, 3) for s in hybrid(synth(events=60, agents=3, seed=4), alpha=0.5)]
    [1.0, 1.0, 1.0]
    """
    return mix(_resolve(local), _resolve(global_), alpha)(trace, truth=truth)


def marti(
    trace: Trace,
    *,
    truth: Any = None,
    base: str | Callable[..., list[Signal]] = "process",
    mode: str = "quality",
    alpha: float = 0.5,
) -> list[Signal]:
    """R8 MARTI shaping of per-turn rewards, per agent in time order.

    ``base`` gives event-level signals (default R4 ``process``); for agent ``m``'s ``t``-th
    rewarded turn, ``Q`` = mean of its earlier raw rewards and the value becomes
    ``quality`` or ``margin`` shaped (the first turn has no history and stays ``R``).

    >>> from orchestrace.core.builder import TraceBuilder
    >>> from orchestrace.core.trace import Outcome
    >>> b = TraceBuilder("m"); _ = b.add("message", "a", t=0, outcome=Outcome(score=0.0))
    >>> _ = b.add("message", "a", t=1, outcome=Outcome(score=1.0))
    >>> [s.value for s in marti(b.build(), mode="margin")]      # 1 + ½(1 − 0)
    [0.0, 1.5]
    """
    if mode not in ("quality", "margin"):
        raise ConfigError(f"mode must be quality or margin, got {mode!r}")
    shape = marti_quality if mode == "quality" else marti_margin
    g = _graph(trace)
    sigs = _resolve(base)(trace, truth=truth)
    out: list[Signal] = []
    history: dict[int, list[float]] = {}
    keyed = []
    for s in sigs:
        e = g.index.get(s.id.split("[", 1)[0]) if CreditUnit(s.unit) not in (CreditUnit.TEAM, CreditUnit.AGENT, CreditUnit.ROLE) else None
        if e is None:
            raise ConfigError(f"marti shapes per-turn rewards; base gave a {CreditUnit(s.unit).value} signal {s.id!r}")
        keyed.append((g.t[e], e, s))
    for _, e, s in sorted(keyed, key=lambda x: (x[0], x[1])):
        past = history.setdefault(int(g.agent[e]), [])
        val = s.value if not past else float(shape(s.value, float(np.mean(past)), alpha))
        past.append(s.value)
        out.append(signal(CreditUnit(s.unit).value, s.id, val, RewardFamily.HYBRID, f"marti_{mode}"))
    return out


#: Built-in reward functions by spec name (family in the comment).
BUILTINS: dict[str, Callable[..., list[Signal]]] = {
    "shared_outcome": shared_outcome,  # R1
    "agent_success": agent_success,  # R2
    "role_reward": role_reward,  # R3
    "process": process,  # R4
    "tool_use": tool_use,  # R5
    "judge": judge,  # R6
    "parl": parl,  # R7
    "puppeteer": puppeteer,  # R7
    "parallel_speedup": parallel_speedup,  # R7
    "split_correctness": split_correctness,  # R7
    "aggregation_quality": aggregation_quality,  # R7
    "critical_steps_cost": critical_steps_cost,  # R7
    "hybrid": hybrid,  # R8
    "marti": marti,  # R8
}
