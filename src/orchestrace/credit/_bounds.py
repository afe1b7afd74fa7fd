"""The error bounds of sampled game values: Hoeffding's (guaranteed, given the range of the marginal
contributions) and the CLT half-width with a Student-t quantile (asymptotic), and how many samples
a target needs.

>>> hoeffding_samples(10, epsilon=0.1, delta=0.05, value_range=1.0)
300
>>> round(hoeffding_epsilon(10, samples=300, delta=0.05, value_range=1.0), 3)
0.1
"""

from __future__ import annotations

import math

from .._stats import t_quantile  # the one Student-t quantile (re-exported: credit.t_quantile)
from ..errors import ConfigError

__all__ = ["MIN_BLOCKS", "hoeffding_epsilon", "hoeffding_samples", "t_quantile"]


def hoeffding_samples(n: int, *, epsilon: float, delta: float, value_range: float) -> int:
    """Pairs ``m ≥ r²·ln(2n/δ)/(2ε²)`` so that all ``n`` estimates are within ε w.p. 1−δ.

    >>> hoeffding_samples(1000, epsilon=0.01, delta=0.05, value_range=0.1)
    530
    """
    _check_eps_delta(epsilon, delta)
    return max(1, math.ceil(value_range**2 * math.log(2 * n / delta) / (2 * epsilon**2)))


def hoeffding_epsilon(n: int, *, samples: int, delta: float, value_range: float) -> float:
    """Achieved ``ε = r·sqrt(ln(2n/δ)/(2m))`` after ``m`` i.i.d. samples.

    >>> round(hoeffding_epsilon(1000, samples=530, delta=0.05, value_range=0.1), 4)
    0.01
    """
    _check_eps_delta(None, delta)
    return value_range * math.sqrt(math.log(2 * n / delta) / (2 * max(samples, 1)))


def _check_eps_delta(epsilon: float | None, delta: float) -> None:
    if epsilon is not None and not (epsilon > 0 and math.isfinite(epsilon)):
        raise ConfigError(f"epsilon must be a positive number, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must be in (0, 1), got {delta!r} (e.g. 0.05 for 95% confidence)")


#: fewest i.i.d. blocks before the CLT bound may stop sampling
MIN_BLOCKS = 16
