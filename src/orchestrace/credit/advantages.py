"""Advantages for training: group normalisation and placement of credit on tokens.

All functions are numpy-vectorised and pure.

* **GRPO** group normalisation: ``A_i = (R_i − mean_G R) / (std_G R + ε)`` over the group
  ``G`` of rollouts of the same prompt (population std, ``ddof=0``).
* **Dr. MAS** agent-wise normalisation: the group key is ``(prompt, agent)``, so each
  agent is normalised against its own reward distribution; a group of size 1 gets mean 0
  and std 1 (its advantage is its raw reward).
* **per-role** normalisation: group key ``(prompt, role)`` (same singleton rule).
* **token placement** of per-turn credit (MARFT): ``last`` — the turn's credit on its last
  token; ``uniform`` — the same credit on every token; ``discounted`` — the team reward
  ``R·γ^(N−1−i)`` on the last token of step ``i`` of ``N``.

>>> grpo_advantages([1.0, 0.0, 1.0, 0.0], groups=["p", "p", "q", "q"]).round(4).tolist()
[1.0, -1.0, 1.0, -1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = [
    "agentwise_advantages",
    "group_normalize",
    "grpo_advantages",
    "role_advantages",
    "token_credit",
]


def _codes(keys: Sequence[Any] | np.ndarray, n: int, what: str) -> np.ndarray:
    """Integer group codes ``(n,)`` for any hashable keys (numeric arrays via ``np.unique``)."""
    if isinstance(keys, np.ndarray) and keys.dtype != object:
        if keys.shape != (n,):
            raise ConfigError(f"{what} has shape {keys.shape} but there are {n} rewards")
        return np.unique(keys, return_inverse=True)[1].reshape(n).astype(np.int64)
    seq = list(keys)
    if len(seq) != n:
        raise ConfigError(f"{what} has {len(seq)} entries but there are {n} rewards")
    table: dict[Any, int] = {}
    return np.fromiter((table.setdefault(k, len(table)) for k in seq), dtype=np.int64, count=n)


def group_normalize(
    rewards: Sequence[float] | np.ndarray,
    codes: np.ndarray,
    *,
    eps: float = 1e-6,
    singleton: str = "identity",
) -> np.ndarray:
    """``(R_i − mean_g) / (std_g + ε)`` within integer groups ``codes`` ``(n,)``.

    ``singleton="identity"`` gives groups of one mean 0 and std 1 (Dr. MAS), so the
    advantage is the raw reward; ``"zero"`` gives them advantage 0 (plain GRPO:
    ``R − R = 0``).

    >>> group_normalize([2.0, 4.0, 5.0], np.array([0, 0, 1])).round(4).tolist()
    [-1.0, 1.0, 5.0]
    """
    r = np.asarray(rewards, dtype=float)
    if not np.isfinite(r).all():
        raise ConfigError("rewards must be finite")
    k = int(codes.max()) + 1 if codes.size else 0
    cnt = np.bincount(codes, minlength=k).astype(float)
    mean = np.bincount(codes, weights=r, minlength=k) / np.maximum(cnt, 1)
    var = np.bincount(codes, weights=(r - mean[codes]) ** 2, minlength=k) / np.maximum(cnt, 1)
    std = np.sqrt(var)
    single = cnt == 1
    if singleton == "identity":
        mean[single], std[single] = 0.0, 1.0
        return (r - mean[codes]) / np.where(single[codes], 1.0, std[codes] + eps)
    if singleton == "zero":
        return (r - mean[codes]) / (std[codes] + eps)
    raise ConfigError(f"singleton must be identity or zero, got {singleton!r}")


def grpo_advantages(
    rewards: Sequence[float] | np.ndarray,
    *,
    groups: Sequence[Any] | np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """GRPO ``A_i = (R_i − mean_G R) / (std_G R + ε)``, ``G`` = rollouts with the same group key."""
    r = np.asarray(rewards, dtype=float)
    return group_normalize(r, _codes(groups, r.size, "groups"), eps=eps, singleton="zero")


def agentwise_advantages(
    rewards: Sequence[float] | np.ndarray,
    *,
    prompts: Sequence[Any] | np.ndarray,
    agents: Sequence[Any] | np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """Dr. MAS agent-wise normalisation: groups keyed by ``(prompt, agent)``; singletons → mean 0, std 1.

    >>> agentwise_advantages([1.0, 3.0, 10.0], prompts=["p", "p", "p"], agents=["a", "a", "b"]).round(4).tolist()
    [-1.0, 1.0, 10.0]
    """
    r = np.asarray(rewards, dtype=float)
    keys = list(zip(_codes(prompts, r.size, "prompts").tolist(), _codes(agents, r.size, "agents").tolist(), strict=True))
    return group_normalize(r, _codes(keys, r.size, "keys"), eps=eps, singleton="identity")


def role_advantages(
    rewards: Sequence[float] | np.ndarray,
    *,
    prompts: Sequence[Any] | np.ndarray,
    roles: Sequence[Any] | np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """Per-role normalisation: groups keyed by ``(prompt, role)``; singletons → mean 0, std 1."""
    return agentwise_advantages(rewards, prompts=prompts, agents=roles, eps=eps)


def token_credit(
    turn_credit: Sequence[float] | np.ndarray,
    lengths: Sequence[int] | np.ndarray,
    *,
    placement: str = "last",
    gamma: float = 1.0,
    team_reward: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Place per-turn credit on tokens; returns ``(values, offsets)``.

    ``values`` is flat over all tokens of all turns (``Σ lengths``), turn ``i``'s tokens at
    ``values[offsets[i]:offsets[i+1]]``. Placements: ``last`` (credit on the last token),
    ``uniform`` (credit on every token), ``discounted`` (``team_reward·γ^(N−1−i)`` on the
    last token of step ``i``; ``turn_credit`` is ignored, ``team_reward`` defaults to its
    last entry).

    >>> v, off = token_credit([1.0, 2.0], [2, 3], placement="last")
    >>> v.tolist(), off.tolist()
    ([0.0, 1.0, 0.0, 0.0, 2.0], [0, 2, 5])
    >>> token_credit([0.0, 1.0], [1, 1], placement="discounted", gamma=0.5)[0].tolist()
    [0.5, 1.0]
    """
    c = np.asarray(turn_credit, dtype=float)
    ln = np.asarray(lengths, dtype=np.int64)
    if c.shape != ln.shape or c.ndim != 1:
        raise ConfigError(f"turn_credit and lengths must be 1-D of equal length, got {c.shape} and {ln.shape}")
    if (ln < 0).any():
        raise ConfigError("lengths must be ≥ 0")
    off = np.zeros(ln.size + 1, dtype=np.int64)
    np.cumsum(ln, out=off[1:])
    vals = np.zeros(int(off[-1]))
    has = ln > 0
    last = off[1:][has] - 1
    if placement == "last":
        vals[last] = c[has]
    elif placement == "uniform":
        vals[:] = np.repeat(c, ln)
    elif placement == "discounted":
        if not 0.0 <= gamma <= 1.0:
            raise ConfigError(f"gamma must be in [0, 1], got {gamma}")
        R = float(c[-1]) if team_reward is None and c.size else float(team_reward or 0.0)
        n = c.size
        vals[last] = R * np.power(gamma, (n - 1 - np.arange(n)))[has]
    else:
        raise ConfigError(f"placement must be last, uniform or discounted, got {placement!r}")
    return vals, off
