"""Counter-based randomness: every random number is a pure function of its coordinates.

``uniform(seed, i, j, field)`` hashes (episode seed, subtask, attempt slot, field id) with the
splitmix64 finaliser into a float in [0, 1). Because randomness is *addressed* rather than
drawn from a stream, (1) a batch of episodes is reset and stepped without a per-episode
Python loop, (2) the same (config, seed) gives the same episode in the single and the
batched environment, and (3) a counterfactual replay that changes one delegation changes
only that attempt's outcome: every other attempt reads the same numbers.

>>> import numpy as np
>>> u = uniform(np.array([7], np.uint64), 0, 1, 2)
>>> bool(0.0 <= u[0] < 1.0), float(u[0]) == float(uniform(np.array([7], np.uint64), 0, 1, 2)[0])
(True, True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["normal", "uniform"]

_K0 = np.uint64(0x9E3779B97F4A7C15)
_K1 = np.uint64(0xBF58476D1CE4E5B9)
_K2 = np.uint64(0x94D049BB133111EB)
_KI = np.uint64(0xD6E8FEB86659FD93)
_KJ = np.uint64(0xA0761D6478BD642F)
_KF = np.uint64(0xE7037ED1A0B428DB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / float(1 << 53)


def _mix(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> _S30)) * _K1
    x = (x ^ (x >> _S27)) * _K2
    return x ^ (x >> _S31)


def uniform(seed: np.ndarray, i: np.ndarray | int, j: np.ndarray | int, field: int | np.ndarray) -> np.ndarray:
    """Uniform [0, 1) numbers addressed by (seed, i, j, field); arrays broadcast
    (pass ``field`` as a column ``(F, 1)`` to draw several fields in one call)."""
    with np.errstate(over="ignore"):
        s = np.asarray(seed, dtype=np.uint64)
        ii = np.asarray(i).astype(np.uint64)
        jj = np.asarray(j).astype(np.uint64)
        f = np.asarray(field).astype(np.uint64)
        x = _mix(s * _K0 + f * _KF + np.uint64(1))
        x = _mix(x ^ (ii * _KI + jj * _KJ))
        return (x >> _S11).astype(np.float64) * _INV53


def normal(seed: np.ndarray, i: np.ndarray | int, j: np.ndarray | int, field: int) -> np.ndarray:
    """Standard normal numbers (Box–Muller over fields ``field`` and ``field + 1000``).

    >>> import numpy as np
    >>> z = normal(np.arange(20000, dtype=np.uint64), 0, 0, 5)
    >>> abs(float(z.mean())) < 0.05, abs(float(z.std()) - 1) < 0.05
    (True, True)
    """
    u1 = uniform(seed, i, j, field)
    u2 = uniform(seed, i, j, field + 1000)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
