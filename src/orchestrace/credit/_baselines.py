"""Counterfactual baselines: C3 (message level) and COMA (per agent / decision).

* **C3** — at a message node, ``K`` alternatives ``k`` (index 0 = the message actually sent)
  were continued by replay with the context frozen; ``R̄_k`` is the mean return of
  alternative ``k`` and ``w_k`` its weight (e.g. its sampling probability or count). The
  advantage of alternative ``j`` against a leave-one-out baseline is

  ``A_j = R̄_j − b_j``,  ``b_j = (Σ_k w_k R̄_k − w_j R̄_j) / (Σ_k w_k − w_j)``.

* **COMA** — for agent ``a`` with the other agents' actions ``u_−a`` fixed, ``Q(s, (u_−a, u'))``
  for each of its actions ``u'`` and its policy ``π_a(u'|τ_a)``:

  ``A_a = Q(s, u) − Σ_{u'} π_a(u'|τ_a) Q(s, (u_−a, u'))``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError

__all__ = ["c3_advantages", "coma_advantage"]


def c3_advantages(returns: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """C3 advantages ``A_j = R̄_j − b_j`` of all ``K`` alternatives at one message node.

    ``returns`` ``(K,)`` mean returns ``R̄_k``; ``weights`` ``(K,)`` (1 each if None).

    >>> c3_advantages([1.0, 0.0, 0.5]).tolist()       # b_0 = (0 + 0.5)/2
    [0.75, -0.75, 0.0]
    """
    r = np.asarray(returns, dtype=float)
    w = np.ones_like(r) if weights is None else np.asarray(weights, dtype=float)
    if r.ndim != 1 or r.shape != w.shape or r.size < 2:
        raise ConfigError(f"C3 needs ≥ 2 alternatives with one weight each; got returns {r.shape}, weights {w.shape}")
    if (w < 0).any() or not np.isfinite(r).all() or not np.isfinite(w).all():
        raise ConfigError("C3 returns must be finite and weights finite and ≥ 0")
    rest = w.sum() - w
    if (rest <= 0).any():
        raise ConfigError("C3 baseline undefined: the other alternatives of some node have zero total weight")
    b = ((w * r).sum() - w * r) / rest
    return r - b


def coma_advantage(q: Sequence[float] | np.ndarray, pi: Sequence[float] | np.ndarray, taken: int = 0) -> float:
    """COMA advantage of the taken action: ``Q(s,u) − Σ_{u'} π(u') Q(s,(u_−a,u'))``.

    >>> coma_advantage([1.0, 0.0], [0.25, 0.75], taken=0)
    0.75
    """
    qa = np.asarray(q, dtype=float)
    p = np.asarray(pi, dtype=float)
    if qa.ndim != 1 or qa.shape != p.shape or qa.size < 1:
        raise ConfigError(f"COMA needs one Q value per action and one probability per action; got {qa.shape}, {p.shape}")
    if not 0 <= taken < qa.size:
        raise ConfigError(f"COMA: taken={taken} is not an action index (0..{qa.size - 1})")
    if (p < 0).any() or abs(p.sum() - 1.0) > 1e-6:
        raise ConfigError(f"COMA: π must be a probability vector (≥ 0, sums to 1), sums to {p.sum():.6g}")
    return float(qa[taken] - p @ qa)
