"""The interval helpers every evaluation shares (one definition each; issue 30).

- :func:`ci_mean`: a mean with a normal-approximation 95 % interval over many units (tasks,
  episodes); a paired comparison passes the per-unit differences;
- :func:`t_interval`: a mean with a Student-t 95 % interval over a few runs (fitting seeds);
- :func:`t975`: the two-sided 95 % Student-t quantile (a table to 30 degrees of freedom, to 6
  decimals, then the Cornish–Fisher expansion, within 2e-6 of the exact quantile; no scipy needed).

Non-finite values are dropped (a run that produced no number does not count).

>>> ci_mean([1.0, 2.0, 3.0])["mean"], round(t975(10), 4), round(t975(60), 4)
(2.0, 2.2281, 2.0003)
>>> r = t_interval([1.0, 2.0, 3.0, 4.0, 5.0]); round(r["lo"], 3), round(r["hi"], 3)
(1.037, 4.963)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["ci_mean", "paired_ci", "t975", "t_interval"]

_Z = 1.959963984540054
_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
         2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
         2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` ≥ 1 degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom {df}: must be ≥ 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def _finite(x: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(x, np.float64).reshape(-1)
    return a[np.isfinite(a)]


def ci_mean(x: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean with a normal-approximation 95 % interval (``n`` = the finite values used)."""
    a = _finite(x)
    if a.size == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    m = float(a.mean())
    h = _Z * float(a.std(ddof=1)) / math.sqrt(a.size) if a.size > 1 else float("nan")
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(a.size)}


def paired_ci(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> dict[str, float]:
    """:func:`ci_mean` of the per-unit differences a − b (the same units, in the same order).

    >>> paired_ci([1.0, 2.0], [0.5, 1.5])["mean"]
    0.5
    """
    return ci_mean(np.asarray(a, np.float64) - np.asarray(b, np.float64))


def t_interval(x: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean with a Student-t 95 % interval across a few runs (NaN bounds for fewer than two)."""
    a = _finite(x)
    m = float(a.mean()) if a.size else float("nan")
    if a.size < 2:
        return {"mean": m, "lo": float("nan"), "hi": float("nan"), "n": int(a.size)}
    h = t975(a.size - 1) * float(a.std(ddof=1)) / math.sqrt(a.size)
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(a.size)}
