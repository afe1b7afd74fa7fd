"""Reward functions and their combinators (pure: no hidden state, like optax's ``combine``).

A **reward function** is any callable ``fn(trace, *, truth=None) -> list[Signal]``; the
built-ins take more keyword parameters, bound with :func:`bind`. Combinators return new
reward functions as small frozen dataclasses, so a composed reward is inspectable and
picklable:

* :func:`scale` ``(fn, w)`` — every value times ``w``;
* :func:`weighted_sum` ``((fn₁, w₁), …)`` — ``Σ_k w_k·fn_k``, signals on the same unit
  (same ``unit`` and ``id``) added;
* :func:`mix` ``(local, global_, α)`` — hybrid local-global (R8): every local signal
  becomes ``α·local + (1−α)·G`` with ``G`` the global function's total.

>>> from orchestrace.core.trace import Signal
>>> one = lambda trace, *, truth=None: [Signal(unit="team", id="team", value=1.0)]
>>> two = lambda trace, *, truth=None: [Signal(unit="team", id="team", value=2.0)]
>>> [s.value for s in weighted_sum((one, 0.5), (two, 2.0))(None)]
[4.5]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.trace import Signal, Trace
from ..errors import ConfigError
from ..vocab import CreditUnit, RewardFamily

__all__ = [
    "Bound",
    "Mixed",
    "RewardFn",
    "Scaled",
    "WeightedSum",
    "bind",
    "merge",
    "mix",
    "scale",
    "total",
    "weighted_sum",
]


class RewardFn(Protocol):
    """``fn(trace, *, truth=None) -> list[Signal]``."""

    def __call__(self, trace: Trace, *, truth: Any = None) -> list[Signal]: ...


def _checked(value: float, what: str) -> float:
    v = float(value)
    if not math.isfinite(v):
        raise ConfigError(f"{what} must be a finite number, got {value!r}")
    return v


def merge(signals: Iterable[Signal]) -> list[Signal]:
    """Add up signals on the same unit (``unit``, ``id``), first-seen order kept.

    Family and name are kept when every merged signal agrees, else dropped / ``"sum"``.

    >>> s = [Signal(unit="agent", id="a", value=1.0, name="x"), Signal(unit="agent", id="a", value=2.0, name="y")]
    >>> merge(s)
    [Signal(unit=<CreditUnit.AGENT: 'agent'>, id='a', value=3.0, family=None, name='sum')]
    """
    acc: dict[tuple[str, str], list[Any]] = {}
    for s in signals:
        unit = CreditUnit(s.unit)
        key = (unit.value, s.id)
        cur = acc.get(key)
        if cur is None:
            acc[key] = [unit, s.id, s.value, s.family, s.name]
        else:
            cur[2] += s.value
            if cur[3] is not s.family:
                cur[3] = None
            if cur[4] != s.name:
                cur[4] = "sum"
    return [Signal(unit=u, id=i, value=v, family=f, name=nm) for u, i, v, f, nm in acc.values()]


def total(signals: Iterable[Signal]) -> float:
    """Sum of the values.

    >>> total([Signal(unit="team", id="team", value=0.5)] * 3)
    1.5
    """
    return float(sum(s.value for s in signals))


def _rescale(signals: Iterable[Signal], w: float) -> list[Signal]:
    return [Signal(unit=CreditUnit(s.unit), id=s.id, value=s.value * w, family=s.family, name=s.name) for s in signals]


@dataclass(frozen=True)
class Bound:
    """``fn`` with keyword parameters fixed (see :func:`bind`)."""

    fn: Callable[..., list[Signal]]
    params: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, trace: Trace, *, truth: Any = None) -> list[Signal]:
        return self.fn(trace, truth=truth, **self.params)

    @property
    def __name__(self) -> str:  # for messages and specs
        return getattr(self.fn, "__name__", "reward")


def bind(fn: Callable[..., list[Signal]], **params: Any) -> Bound:
    """Fix the keyword parameters of a reward function.

    >>> from orchestrace.rewards import shared_outcome
    >>> bind(shared_outcome).__name__
    'shared_outcome'
    """
    return Bound(fn, dict(params))


@dataclass(frozen=True)
class Scaled:
    """``weight · fn``."""

    fn: Callable[..., list[Signal]]
    weight: float

    def __call__(self, trace: Trace, *, truth: Any = None) -> list[Signal]:
        return _rescale(self.fn(trace, truth=truth), self.weight)


def scale(fn: Callable[..., list[Signal]], weight: float) -> Scaled:
    """Multiply every signal of ``fn`` by ``weight``.

    >>> one = lambda trace, *, truth=None: [Signal(unit="team", id="team", value=1.0)]
    >>> scale(one, -2)(None)[0].value
    -2.0
    """
    return Scaled(fn, _checked(weight, "weight"))


@dataclass(frozen=True)
class WeightedSum:
    """``Σ_k w_k · fn_k`` with signals on the same unit added."""

    terms: tuple[tuple[Callable[..., list[Signal]], float], ...]

    def __call__(self, trace: Trace, *, truth: Any = None) -> list[Signal]:
        out: list[Signal] = []
        for fn, w in self.terms:
            out.extend(_rescale(fn(trace, truth=truth), w))
        return merge(out)


def weighted_sum(*terms: tuple[Callable[..., list[Signal]], float] | Callable[..., list[Signal]]) -> WeightedSum:
    """Weighted sum of reward functions; a bare function has weight 1."""
    pairs: list[tuple[Callable[..., list[Signal]], float]] = []
    for k, t in enumerate(terms):
        if isinstance(t, tuple):
            fn, w = t
            pairs.append((fn, _checked(w, f"weight of term {k}")))
        else:
            pairs.append((t, 1.0))
    return WeightedSum(tuple(pairs))


@dataclass(frozen=True)
class Mixed:
    """Hybrid local-global: ``α·local + (1−α)·G`` per local signal, ``G`` = Σ global."""

    local: Callable[..., list[Signal]]
    global_: Callable[..., list[Signal]]
    alpha: float

    def __call__(self, trace: Trace, *, truth: Any = None) -> list[Signal]:
        g = total(self.global_(trace, truth=truth))
        a = self.alpha
        return [
            Signal(unit=CreditUnit(s.unit), id=s.id, value=a * s.value + (1.0 - a) * g, family=RewardFamily.HYBRID, name="hybrid")
            for s in self.local(trace, truth=truth)
        ]


def mix(local: Callable[..., list[Signal]], global_: Callable[..., list[Signal]], alpha: float = 0.5) -> Mixed:
    """Hybrid local-global reward ``α·local + (1−α)·global`` (R8); ``0 ≤ α ≤ 1``.

    >>> loc = lambda trace, *, truth=None: [Signal(unit="agent", id="a", value=1.0)]
    >>> glo = lambda trace, *, truth=None: [Signal(unit="team", id="team", value=0.0)]
    >>> mix(loc, glo, 0.25)(None)[0].value
    0.25
    """
    a = _checked(alpha, "alpha")
    if not 0.0 <= a <= 1.0:
        raise ConfigError(f"alpha must be in [0, 1], got {alpha!r}")
    return Mixed(local, global_, a)


def signal(unit: str, id: str, value: float, family: RewardFamily | None, name: str) -> Signal:
    """A checked signal (finite value)."""
    return Signal(unit=CreditUnit(unit), id=id, value=_checked(value, f"reward {name} for {unit} {id!r}"),
                  family=family, name=name)


def as_fns(x: Callable[..., list[Signal]] | Sequence[Callable[..., list[Signal]]]) -> list[Callable[..., list[Signal]]]:
    return list(x) if isinstance(x, Sequence) else [x]
