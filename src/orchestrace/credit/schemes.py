"""Per-decision advantages for a GRPO group of multi-decision episodes, under four credit schemes.

A *group* is ``n`` episodes sampled for the same prompt (task); episode ``i`` makes ``T_i``
decisions and receives reward ``r_{i,k}`` right after its decision ``k`` (``k < T_i``), plus an
optional ``start_i`` before its first decision. Its return is ``G_i = start_i + Σ_k r_{i,k}``.
Every scheme gives each decision ``(i, k)`` one advantage ``A_{i,k}``:

============  ===================================================================================
scheme        ``A_{i,k}`` (``scale="std"``; with ``scale="none"`` nothing is divided)
============  ===================================================================================
broadcast     ``(G_i − mean_j G_j) / (std_j G_j + ε)``: the episode's group-normalised return on
              every one of its decisions (Agent Lightning's identical credit; each episode
              counted once in the mean and std). A group of one gets 0.
per-turn      MT-GRPO / verl RFC #7244: per-turn rewards normalised among the episodes that
              reached the same turn index, then summed to go —
              ``ř_{i,j} = (r_{i,j} − μ_j) / (σ_j + ε)`` over ``{i' : T_{i'} > j}``,
              ``A_{i,k} = Σ_{k ≤ j < T_i} ř_{i,j}``. The number of baseline terms is set by the
              episode's own stopping turn, so when the policy controls termination (O5) the
              baseline depends on the action: **biased**.
per-agent     Dr. MAS: every decision carries its episode's return ``G_i`` and is normalised
              among the group's decisions *of the same agent* (each decision one sample), so
              a long episode weighs more in its agent's mean; an agent with a single decision
              gets mean 0 and std 1 (its advantage is ``G_i``).
exact         ``Q(s_{i,k}, a_{i,k}) − V(s_{i,k})`` with ``V(s) = Σ_a π(a|s) Q(s, a)``, both given
              by the caller (from an always-continue log, or a model), so every alternative at
              the state is valued counterfactually. ``scale="std"`` divides by the group's std of
              these advantages (when it exceeds ``ε``); it does not re-centre them.
============  ===================================================================================

:func:`group_advantages` is the vectorised form over ``B`` groups of padded arrays (what a
benchmark or trainer calls); :func:`scheme_advantages` takes a list of :class:`DecisionEpisode`.
``docs/credit-schemes.md`` measures the bias of each against true advantages.

Three episodes of one task: two continue (reward 0) then stop with 1 or 0; one stops at once
with 0.5 — exactly the mean return, yet per-turn credit calls its stop good:

>>> eps = [DecisionEpisode((0.0, 1.0)), DecisionEpisode((0.0, 0.0)), DecisionEpisode((0.5,))]
>>> [a.round(3).tolist() for a in scheme_advantages(eps, "broadcast", scale="none")]
[[0.5, 0.5], [-0.5, -0.5], [0.0]]
>>> [a.round(3).tolist() for a in scheme_advantages(eps, "per-turn", scale="none")]
[[0.333, 0.5], [-0.667, -0.5], [0.333]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, parse_named
from ..vocab import _StrEnum

__all__ = ["SCALES", "CreditScheme", "DecisionEpisode", "group_advantages", "parse_scheme",
           "reply_advantages", "scheme_advantages"]

#: How advantages are scaled: ``std`` (GRPO: divide by the group std + ε) or ``none`` (mean baseline only).
SCALES = ("std", "none")


class CreditScheme(_StrEnum):
    """The per-decision credit schemes compared in ``docs/credit-schemes.md`` (module docstring)."""

    BROADCAST = "broadcast"
    PER_TURN = "per-turn"
    PER_AGENT = "per-agent"
    EXACT = "exact"


_ALIASES = {"turn": "per-turn", "per-turn-index": "per-turn", "mt-grpo": "per-turn", "agent": "per-agent",
            "dr-mas": "per-agent", "identical": "broadcast"}


def parse_scheme(scheme: CreditScheme | str) -> CreditScheme:
    """The :class:`CreditScheme` named ``scheme`` (``turn``, ``mt-grpo`` → per-turn; ``agent``, ``dr-mas`` → per-agent).

    >>> parse_scheme("MT-GRPO"), parse_scheme("exact")
    (<CreditScheme.PER_TURN: 'per-turn'>, <CreditScheme.EXACT: 'exact'>)
    >>> parse_scheme("braodcast")
    Traceback (most recent call last):
    ...
    orchestrace.errors.ConfigError: unknown credit scheme 'braodcast'; did you mean 'broadcast'? (choose from broadcast, per-turn, per-agent, exact)
    """
    return parse_named(scheme, CreditScheme, aliases=_ALIASES, what="credit scheme")


@dataclass(frozen=True)
class DecisionEpisode:
    """One sampled episode: ``rewards[k]`` follows decision ``k``; ``agents``, ``q``, ``v`` are per decision.

    ``agents`` (default: every decision by ``"orchestrator"``) is read by ``per-agent``; ``q`` and
    ``v`` (``Q(s_k, a_k)`` and ``V(s_k)``) are required by ``exact`` only. ``start`` is a reward
    received before the first decision (counted in the return, credited to no decision).
    """

    rewards: tuple[float, ...]
    agents: tuple[str, ...] | None = None
    q: tuple[float, ...] | None = None
    v: tuple[float, ...] | None = None
    start: float = 0.0


def _check(name: str, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if x.shape != shape:
        raise ConfigError(f"{name} has shape {x.shape}; expected {shape} (groups, episodes, turns)")
    if x.dtype.kind == "f" and not np.isfinite(x).all():
        raise ConfigError(f"{name} must be finite")
    return x


def group_advantages(scheme: CreditScheme | str, rewards: np.ndarray, lengths: np.ndarray, *,
                     agents: np.ndarray | None = None, q: np.ndarray | None = None,
                     v: np.ndarray | None = None, start: np.ndarray | None = None,
                     scale: str = "std", eps: float = 1e-6) -> np.ndarray:
    """Advantages ``(B, n, T)`` for ``B`` groups of ``n`` episodes padded to ``T`` decisions.

    ``rewards`` ``(B, n, T)``: ``r_{i,k}``, read where ``k < lengths[b, i]`` (``lengths`` ``(B, n)``,
    ``0 ≤ T_i ≤ T``); ``agents`` ``(B, n, T)`` integer agent codes (default: one agent); ``q``, ``v``
    ``(B, n, T)`` for ``exact``; ``start`` ``(B, n)``. Entries past an episode's end are 0.

    >>> r = np.array([[[-0.1, 1.0], [0.0, 0.0]]])       # (1 group, 2 episodes, 2 turns)
    >>> group_advantages("broadcast", r, np.array([[2, 1]]), scale="none").round(3).tolist()
    [[[0.45, 0.45], [-0.45, 0.0]]]
    >>> q = np.array([[[0.5, 1.0], [0.0, 0.0]]]); v = np.array([[[0.25, 0.5], [0.25, 0.0]]])
    >>> group_advantages("exact", r, np.array([[2, 1]]), q=q, v=v, scale="none").tolist()
    [[[0.25, 0.5], [-0.25, 0.0]]]
    """
    sch = parse_scheme(scheme)
    if scale not in SCALES:
        raise ConfigError(f"scale {scale!r}: use {' or '.join(SCALES)}")
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 3:
        raise ConfigError(f"rewards has shape {r.shape}; expected 3 axes (groups, episodes, turns)")
    B, n, T = r.shape
    _check("rewards", r, r.shape)
    ln = _check("lengths", np.asarray(lengths), (B, n))
    if ln.dtype.kind not in "iu" or (ln < 0).any() or (ln > T).any():
        raise ConfigError(f"lengths must be integers in [0, {T}]")
    m = np.arange(T) < ln[..., None]  # (B, n, T) a real decision
    rm = np.where(m, r, 0.0)
    std = scale == "std"
    if sch is CreditScheme.EXACT:
        if q is None or v is None:
            raise ConfigError("scheme exact needs q (Q of the action taken) and v (V of the state) per decision")
        a = np.where(m, _check("q", np.asarray(q, float), r.shape) - _check("v", np.asarray(v, float), r.shape), 0.0)
        if std:
            cnt = np.maximum(m.sum((1, 2)), 1)  # (B,)
            mu = a.sum((1, 2)) / cnt
            sd = np.sqrt((np.where(m, a - mu[:, None, None], 0.0) ** 2).sum((1, 2)) / cnt)
            a = a / np.where(sd > eps, sd, 1.0)[:, None, None]
        return a
    G = rm.sum(-1) + (0.0 if start is None else _check("start", np.asarray(start, float), (B, n)))  # (B, n)
    if sch is CreditScheme.BROADCAST:
        dev = G - G.mean(1, keepdims=True)
        if std:
            dev = dev / (G.std(1, keepdims=True) + eps)
        return np.where(m, dev[..., None], 0.0)
    if sch is CreditScheme.PER_TURN:
        cnt = m.sum(1, keepdims=True)  # (B, 1, T) episodes that reached turn j
        mu = rm.sum(1, keepdims=True) / np.maximum(cnt, 1)
        dev = np.where(m, r - mu, 0.0)
        if std:
            dev = dev / (np.sqrt((dev**2).sum(1, keepdims=True) / np.maximum(cnt, 1)) + eps)
        return np.where(m, np.cumsum(dev[..., ::-1], axis=-1)[..., ::-1], 0.0)
    codes = np.zeros(r.shape, np.int64) if agents is None else _check("agents", np.asarray(agents), r.shape)
    if codes.dtype.kind not in "iu" or (codes < 0).any():
        raise ConfigError("agents must be non-negative integer codes")
    k = int(codes.max()) + 1 if codes.size else 1
    key = (np.arange(B)[:, None, None] * k + codes)[m]  # one group per (prompt, agent)
    val = np.broadcast_to(G[..., None], r.shape)[m]
    c = np.bincount(key, minlength=B * k).astype(float)
    mu = np.bincount(key, weights=val, minlength=B * k) / np.maximum(c, 1)
    sd = np.sqrt(np.bincount(key, weights=(val - mu[key]) ** 2, minlength=B * k) / np.maximum(c, 1))
    single = c == 1
    mu[single] = 0.0
    sd = np.where(single, 1.0, sd + eps) if std else np.ones_like(sd)
    out = np.zeros(r.shape)
    out[m] = (val - mu[key]) / sd[key]
    return out


def scheme_advantages(episodes: Sequence[DecisionEpisode], scheme: CreditScheme | str, *,
                      scale: str = "std", eps: float = 1e-6) -> list[np.ndarray]:
    """Per-decision advantages of one group of episodes (one array per episode; module docstring).

    >>> eps = [DecisionEpisode((-0.1, 1.0), agents=("a", "b")), DecisionEpisode((0.5,), agents=("a",))]
    >>> [x.round(3).tolist() for x in scheme_advantages(eps, "per-agent", scale="none")]
    [[0.2, 0.9], [-0.2]]
    """
    sch = parse_scheme(scheme)
    if not episodes:
        raise ConfigError("a group needs at least one episode")
    n, T = len(episodes), max(len(e.rewards) for e in episodes)
    r, q, v = (np.zeros((1, n, T)) for _ in range(3))
    ag = np.zeros((1, n, T), np.int64)
    names: dict[str, int] = {}
    for i, e in enumerate(episodes):
        t = len(e.rewards)
        r[0, i, :t] = e.rewards
        for field, arr in (("agents", e.agents), ("q", e.q), ("v", e.v)):
            if arr is not None and len(arr) != t:
                raise ConfigError(f"episode {i}: {field} has {len(arr)} entries but there are {t} decisions")
        ag[0, i, :t] = [names.setdefault(a, len(names)) for a in (e.agents or ("orchestrator",) * t)]
        if sch is CreditScheme.EXACT:
            if e.q is None or e.v is None:
                raise ConfigError(f"episode {i}: scheme exact needs q and v for every decision")
            q[0, i, :t], v[0, i, :t] = e.q, e.v
    lengths = np.array([[len(e.rewards) for e in episodes]])
    start = np.array([[e.start for e in episodes]], dtype=float)
    a = group_advantages(sch, r, lengths, agents=ag, q=q, v=v, start=start, scale=scale, eps=eps)
    return [a[0, i, : len(e.rewards)].copy() for i, e in enumerate(episodes)]


def reply_advantages(episodes: Sequence[DecisionEpisode], groups: Sequence[object], scheme: CreditScheme | str, *,
                     scale: str = "none", eps: float = 1e-6) -> np.ndarray:
    """The advantage of each episode's *first* decision, the episodes grouped by ``groups`` ``(n,)``.

    For a trainer whose batch is one sampled reply per row (TRL's GRPO): row ``i``'s reply is
    decision 0 of ``episodes[i]`` (its reward, then the rewards of the continuation that followed
    it; ``start`` = reward before it), and rows with the same group key (the prompt: the state)
    form one group. Returns ``(n,)``, to be used as each row's reward.

    >>> eps = [DecisionEpisode((0.0, 1.0)), DecisionEpisode((0.0, 0.0)), DecisionEpisode((0.5,)),
    ...        DecisionEpisode((1.0,))]
    >>> reply_advantages(eps, ["s", "s", "s", "t"], "per-turn").round(3).tolist()
    [0.333, -0.667, 0.333, 0.0]
    """
    sch = parse_scheme(scheme)
    keys = list(groups)
    if len(keys) != len(episodes):
        raise ConfigError(f"groups has {len(keys)} entries but there are {len(episodes)} episodes")
    if any(not e.rewards for e in episodes):
        raise ConfigError("every episode needs at least its first decision's reward")
    members: dict[object, list[int]] = {}
    for i, k in enumerate(keys):
        members.setdefault(k, []).append(i)
    out = np.zeros(len(keys))
    for rows in members.values():
        adv = scheme_advantages([episodes[i] for i in rows], sch, scale=scale, eps=eps)
        out[rows] = [a[0] for a in adv]
    return out
