"""The interval helpers every evaluation shares (one definition each; issue 30).

- :func:`ci_mean`: a mean with a normal-approximation 95 % interval over many units (tasks,
  episodes); a paired comparison passes the per-unit differences;
- :func:`t_interval`: a mean with a Student-t 95 % interval over a few runs (fitting seeds);
- :func:`t_quantile`: the one Student-t quantile ``t_{q, dof}`` (the Cornish–Fisher expansion in
  ``1/dof``, A&S 26.7.5; no scipy needed); :func:`t975`, its two-sided 95 % case, reads a table to
  30 degrees of freedom (6 decimals) first. The credit module's CLT bounds use the same function;
- :func:`wilson`: a success rate's Wilson score interval; :func:`welch_interval`: a difference of two
  means (unpooled variances);
- :data:`Z975`: the 97.5 % normal quantile; :data:`Z975_ROUNDED` (1.96) where an evaluation has
  always used the rounded value (Wilson intervals, the simulator's normal-approximation checks).

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

__all__ = ["Z975", "Z975_ROUNDED", "ci_mean", "paired_ci", "t975", "t_interval", "t_quantile", "welch_interval",
           "wilson"]

#: The 97.5 % quantile of the standard normal.
Z975 = 1.959963984540054
#: The same, rounded to 1.96, as the simulator's evaluation and the fitted stop's check have always used it.
Z975_ROUNDED = 1.96
_Z = Z975
_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
         2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
         2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)


def t_quantile(q: float, dof: float) -> float:
    """Student-t quantile ``t_{q, dof}`` (Cornish–Fisher expansion in ``1/dof``; A&S 26.7.5).

    Accurate to ~1e-3 for ``dof ≥ 10``; the normal quantile when ``dof`` is infinite.

    >>> round(t_quantile(0.9995, 15), 3), round(t_quantile(0.975, 30), 3)
    (4.073, 2.042)
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf(q)
    if not math.isfinite(dof):
        return z
    v = float(dof)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` ≥ 1 degrees of freedom (exact table to 30, then
    :func:`t_quantile`)."""
    if df < 1:
        raise ValueError(f"degrees of freedom {df}: must be ≥ 1")
    if df <= len(_T975):
        return _T975[df - 1]
    return t_quantile(0.975, df)


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


def wilson(k: int, n: int, z: float = Z975_ROUNDED) -> dict[str, float]:
    """Wilson score interval of a success rate k/n.

    >>> r = wilson(45, 50); round(r["lo"], 3), round(r["hi"], 3)
    (0.786, 0.957)
    """
    if n == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return {"mean": p, "lo": c - h, "hi": c + h, "n": n}


def welch_interval(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """The difference of two means with a normal-approximation interval (Welch's unpooled variance, z = 1.96)."""
    m = float(a.mean() - b.mean())
    h = Z975_ROUNDED * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return {"mean": m, "lo": m - h, "hi": m + h}
