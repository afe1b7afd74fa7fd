"""Caller-supplied value functions ``v(coalition) -> float``: batching, caching, checking.

A value function says how good the outcome is when only the players in a coalition take
part. orchestrace accepts two shapes:

* **vectorised** — ``v(masks) -> values`` with ``masks`` a ``(B, n)`` boolean array (row =
  coalition, column = player, in the order of the players' ids) and ``values`` ``(B,)``
  floats. Mark it with :func:`batched` (or pass ``batched=True``) so it is called once per
  batch of coalitions;
* **scalar** — ``v(coalition) -> float`` with ``coalition`` a ``frozenset`` of player
  labels; it is called once per distinct coalition.

Either way every result is checked (a number, finite) and cached for the duration of one
computation, and a failure raises :class:`~orchestrace.errors.ValueFunctionError` that
names the coalition.

>>> v = batched(lambda m: m.sum(axis=1).astype(float))
>>> ev = Evaluator(v, n=3)
>>> ev(np.array([[True, False, True], [False, False, False]])).tolist()
[2.0, 0.0]
>>> Evaluator(lambda s: float("nan"), n=2, labels=("a", "b"))(np.ones((1, 2), bool))
Traceback (most recent call last):
...
orchestrace.errors.ValueFunctionError: value function returned NaN for coalition {a, b}; return a finite float for every coalition (the empty one included)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ValueFunctionError

__all__ = ["Batched", "Evaluator", "batched", "coalition_label"]


@dataclass(frozen=True)
class Batched:
    """A vectorised value function: ``fn((B, n) bool masks) -> (B,) floats``."""

    fn: Callable[[np.ndarray], Any]

    def __call__(self, masks: np.ndarray) -> Any:
        return self.fn(masks)


def batched(fn: Callable[[np.ndarray], Any]) -> Batched:
    """Mark ``fn`` as vectorised over a ``(B, n)`` boolean coalition-mask array.

    >>> v = batched(lambda m: m @ np.array([1.0, 2.0]))
    >>> v(np.array([[True, True]])).tolist()
    [3.0]
    """
    return fn if isinstance(fn, Batched) else Batched(fn)


def coalition_label(row: np.ndarray, labels: Sequence[Hashable] | None = None) -> str:
    """``{a, b}`` for a boolean coalition row (``∅`` when empty).

    >>> coalition_label(np.array([True, False, True]), ("x", "y", "z"))
    '{x, z}'
    """
    idx = np.flatnonzero(row)
    if idx.size == 0:
        return "∅"
    names = [str(labels[i]) if labels is not None else str(i) for i in idx[:12]]
    more = f", … (+{idx.size - 12})" if idx.size > 12 else ""
    return "{" + ", ".join(names) + more + "}"


class Evaluator:
    """Call a value function on batches of coalitions, check and cache the results.

    ``masks`` are ``(B, n)`` boolean arrays. Results are cached by coalition (packed mask
    bytes) for this evaluator's lifetime, i.e. one credit computation; ``calls`` counts
    the user function's invocations and ``evaluations`` the distinct coalitions valued.
    The cache is skipped for batches larger than ``cache_limit`` rows that are known to
    be distinct (exact enumeration), which would only cost memory.
    """

    def __init__(
        self,
        v: Callable[..., Any],
        *,
        n: int,
        labels: Sequence[Hashable] | None = None,
        batched: bool | None = None,
        cache_limit: int = 1 << 16,
    ) -> None:
        self.v = v
        self.n = n
        self.labels = tuple(labels) if labels is not None else tuple(range(n))
        self.is_batched = (isinstance(v, Batched) or getattr(v, "batched", None) is True) if batched is None else batched
        self.cache: dict[bytes, float] = {}
        self.cache_limit = cache_limit
        self.calls = 0
        self.evaluations = 0

    # ------------------------------------------------------------------------------
    def __call__(self, masks: np.ndarray, *, distinct: bool = False, owned: bool = False) -> np.ndarray:
        """Values of the coalitions ``masks`` (``(B, n)`` bool) as a ``(B,)`` float array.

        ``owned``: the caller will not read ``masks`` again, so a vectorised function may
        get them without the protective copy.
        """
        masks = np.asarray(masks, dtype=bool)
        if masks.ndim != 2 or masks.shape[1] != self.n:
            raise ValueError(f"coalition masks must have shape (B, {self.n}), got {masks.shape}")
        if distinct or masks.shape[0] > self.cache_limit:
            return self._evaluate(masks, owned=owned)
        packed = np.packbits(masks, axis=1)
        keys = [r.tobytes() for r in packed]
        out = np.empty(len(keys))
        todo: dict[bytes, int] = {}
        for j, k in enumerate(keys):
            hit = self.cache.get(k)
            if hit is None:
                todo.setdefault(k, j)
            else:
                out[j] = hit
        if todo:
            rows = np.fromiter(todo.values(), dtype=np.int64, count=len(todo))
            vals = self._evaluate(masks[rows])
            for k, val in zip(todo, vals.tolist(), strict=False):
                self.cache[k] = val
            for j, k in enumerate(keys):
                if k in todo:
                    out[j] = self.cache[k]
        return out

    # ------------------------------------------------------------------------------
    def _evaluate(self, masks: np.ndarray, owned: bool = False) -> np.ndarray:
        self.evaluations += masks.shape[0]
        if self.is_batched:
            return self._evaluate_batched(masks, owned)
        out = np.empty(masks.shape[0])
        for j, row in enumerate(masks):
            coalition = frozenset(self.labels[i] for i in np.flatnonzero(row))
            self.calls += 1
            try:
                val = self.v(coalition)
            except Exception as exc:  # the user's code failed: say on which coalition
                raise ValueFunctionError(
                    f"value function raised {type(exc).__name__}: {exc} "
                    f"for coalition {coalition_label(row, self.labels)}"
                ) from exc
            out[j] = self._check(val, row)
        return out

    def _evaluate_batched(self, masks: np.ndarray, owned: bool = False) -> np.ndarray:
        self.calls += 1
        try:
            raw = self.v(masks if owned else masks.copy())
        except Exception as exc:
            bad = self._find_raising_row(masks)
            where = (
                f"coalition {coalition_label(masks[bad], self.labels)}"
                if bad is not None
                else f"a batch of {masks.shape[0]} coalitions starting with "
                f"{coalition_label(masks[0], self.labels)}"
            )
            raise ValueFunctionError(
                f"value function raised {type(exc).__name__}: {exc} for {where}"
            ) from exc
        try:
            vals = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            vals = None
        if vals is None or vals.shape not in ((masks.shape[0],), (masks.shape[0], 1)):
            got = type(raw).__name__ if vals is None else f"shape {vals.shape}"
            raise ValueFunctionError(
                f"vectorised value function must return {masks.shape[0]} floats (one per row "
                f"of the (B, n) mask), got {got} for the batch starting with coalition "
                f"{coalition_label(masks[0], self.labels)}"
            )
        vals = vals.reshape(-1)
        bad_rows = np.flatnonzero(~np.isfinite(vals))
        if bad_rows.size:
            j = int(bad_rows[0])
            what = "NaN" if math.isnan(vals[j]) else str(vals[j])
            raise ValueFunctionError(
                f"value function returned {what} for coalition "
                f"{coalition_label(masks[j], self.labels)}; return a finite float for "
                f"every coalition (the empty one included)"
            )
        return vals

    def _find_raising_row(self, masks: np.ndarray) -> int | None:
        for j in range(min(masks.shape[0], 4096)):
            try:
                self.v(masks[j : j + 1].copy())
            except Exception:
                return j
        return None

    def _check(self, val: Any, row: np.ndarray) -> float:
        if not isinstance(val, (bool, int, float, np.bool_, np.integer, np.floating)):
            arr = np.asarray(val) if isinstance(val, np.ndarray) else None
            if arr is not None and arr.size == 1 and arr.dtype.kind in "fiu":
                val = arr.reshape(()).item()
            else:
                raise ValueFunctionError(
                    f"value function returned {type(val).__name__} ({val!r:.40}) for coalition "
                    f"{coalition_label(row, self.labels)}; it must return a float"
                )
        f = float(val)
        if not math.isfinite(f):
            what = "NaN" if math.isnan(f) else str(f)
            raise ValueFunctionError(
                f"value function returned {what} for coalition "
                f"{coalition_label(row, self.labels)}; return a finite float for every "
                f"coalition (the empty one included)"
            )
        return f
