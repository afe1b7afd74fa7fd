"""Rollouts at the orchestrator-decision unit, and the advantage pieces the trainers share.

One update collects exactly one episode per slot of the batched environment, in lock-step:
slot i plays task seed ``seeds[i]`` until it finishes (the auto-reset episodes that follow
are ignored). The decisions of all episodes are flattened into one :class:`Rollout`
(N decisions, E episodes).

Task seeds come from a stateless stream: ``train_seeds(seed, update, n)`` (a function of the
run seed and the update index only), so a resumed run replays the same tasks; held-out
evaluation seeds live in a disjoint range (:data:`HELD_OUT_BASE` and up).

Advantage pieces (formulas; t indexes the decisions of one episode, γ per decision):

- returns-to-go        G_t = Σ_{t' ≥ t} γ^{t'−t} r_{t'}
- GAE (PPO)            δ_t = r_t + γ V(s_{t+1}) − V(s_t),  Â_t = Σ_l (γλ)^l δ_{t+l}
- group normalisation  A_i = (R_i − mean_G R) / (std_G R + ε)        (GRPO; key = task seed)
- Dr. MAS              the same with key (task seed, decision head); a group of one gets 0
- stop credit          at an O5 check with gate λ, Q_S = value of stopping now, Q_C = value of
                       continuing: A(STOP) = (1−λ)(Q_S − Q_C), A(CONTINUE) = λ(Q_C − Q_S) —
                       the chosen action's value minus the gate's own baseline
                       V_gate = λQ_S + (1−λ)Q_C. The realised return-to-go stands for the
                       chosen action; the other one comes from the environment's replay
                       counterfactual "stop at decision k" (Q_S, exact) when offered, else
                       from the learned Q_stop / Q_cont heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..env.layout import due_phase

__all__ = [
    "HELD_OUT_BASE",
    "VALIDATION_BASE",
    "Rollout",
    "collect",
    "continue_values",
    "discounted_returns",
    "gae",
    "group_normalise",
    "held_out_seeds",
    "stop_advantages",
    "train_seeds",
    "validation_seeds",
]

#: Training task seeds are drawn from [0, VALIDATION_BASE); validation (best-checkpoint
#: selection) uses VALIDATION_BASE + i; held-out evaluation uses HELD_OUT_BASE + i.
VALIDATION_BASE = 900_000_000
HELD_OUT_BASE = 1_000_000_000

_EP_KEYS = ("success", "tokens", "decisions", "return", "difficulty", "critical_steps", "wall_clock_s")


def train_seeds(seed: int, update: int, n: int) -> np.ndarray:
    """The ``n`` training task seeds of update ``update`` (stateless: resumable).

    >>> bool((train_seeds(0, 3, 4) == train_seeds(0, 3, 4)).all()), bool((train_seeds(0, 3, 4) < HELD_OUT_BASE).all())
    (True, True)
    """
    return np.random.default_rng([int(seed), int(update), 7]).integers(0, VALIDATION_BASE, n, dtype=np.int64)


def validation_seeds(n: int) -> np.ndarray:
    """``n`` validation seeds (model selection only; disjoint from training and held-out seeds).

    >>> validation_seeds(2).tolist()
    [900000000, 900000001]
    """
    return np.arange(VALIDATION_BASE, VALIDATION_BASE + n, dtype=np.int64)


def held_out_seeds(n: int, offset: int = 0) -> np.ndarray:
    """``n`` held-out evaluation seeds (never used in training).

    >>> held_out_seeds(2).tolist()
    [1000000000, 1000000001]
    """
    return np.arange(HELD_OUT_BASE + offset, HELD_OUT_BASE + offset + n, dtype=np.int64)


@dataclass
class Rollout:
    """Decisions (N rows) of E complete episodes, flattened in (episode, step) order."""

    obs: torch.Tensor  # (N, D) float32
    mask: torch.Tensor  # (N, A) bool
    action: torch.Tensor  # (N,) int64
    logp: torch.Tensor  # (N,) behaviour log-prob
    value: torch.Tensor  # (N,) V(s) at collection time
    q_stop: torch.Tensor  # (N,) learned Q_stop at collection time
    q_cont: torch.Tensor  # (N,) learned Q_cont at collection time
    stop_prob: torch.Tensor  # (N,) gate λ at collection time
    head: np.ndarray  # (N,) 0..4 = O1..O5
    reward: np.ndarray  # (N,) float64
    ep: np.ndarray  # (N,) episode index 0..E-1
    t: np.ndarray  # (N,) decision index inside the episode
    last: np.ndarray  # (N,) bool, last decision of its episode
    seeds: np.ndarray  # (E,) task seed of each episode
    episodes: dict[str, np.ndarray] = field(default_factory=dict)  # (E,) per-episode info
    cf_stop: np.ndarray | None = None  # (N,) counterfactual return of stopping here (NaN unknown)
    cf_cont: np.ndarray | None = None  # (N,) counterfactual return of continuing here (NaN unknown)

    @property
    def n_episodes(self) -> int:
        return len(self.seeds)

    @property
    def is_stop(self) -> np.ndarray:
        from ..env.layout import Phase

        return self.head == Phase.O5


def collect(benv: Any, policy: Any, seeds: np.ndarray, *, device: Any, reward_scale: float = 1.0,
            greedy: bool = False, stop_counterfactual: bool = False, max_steps: int = 1_000_000) -> Rollout:
    """Play one episode per slot of the batched env ``benv`` (a
    :class:`~orchestrace.env.batch.BatchedEnv`; task ``seeds[i]`` in slot i) with ``policy``.
    The decision head of each row is read from its observation (``layout.due_phase``).

    With ``stop_counterfactual`` (and an env that offers ``stop_values()``), each O5 row also
    records the counterfactual return-to-go of stopping at that decision (``cf_stop``).
    """
    want_cf = stop_counterfactual and hasattr(benv, "stop_values")
    b = len(seeds)
    obs_np, mask_np = _reset(benv, seeds)
    alive = np.ones(b, dtype=bool)
    steps_t = np.zeros(b, dtype=np.int64)
    rows: dict[str, list[Any]] = {k: [] for k in ("obs", "mask", "action", "logp", "value", "q_stop", "q_cont",
                                                   "lam", "head", "reward", "ep", "t", "last", "cf")}
    ep_info: dict[str, np.ndarray] = {k: np.full(b, np.nan) for k in _EP_KEYS}
    for _ in range(max_steps):
        idx = np.flatnonzero(alive)
        o = torch.as_tensor(obs_np, dtype=torch.float32, device=device)
        m = torch.as_tensor(mask_np, dtype=torch.bool, device=device)
        a, logp, out = policy.act(o, m, greedy=greedy)
        a_np = a.cpu().numpy().astype(np.int64)
        if want_cf:
            rows["cf"].append(np.asarray(benv.stop_values(), dtype=np.float64)[idx] * reward_scale)
        obs2, mask2, rew, done, info = benv.step(a_np)
        rew = np.asarray(rew, dtype=np.float64) * reward_scale
        done = np.asarray(done, dtype=bool)
        sel = torch.as_tensor(idx, device=device)
        rows["obs"].append(o[sel].cpu())
        rows["mask"].append(m[sel].cpu())
        rows["action"].append(a[sel].cpu())
        rows["logp"].append(logp[sel].cpu())
        rows["value"].append(out.value[sel].cpu())
        rows["q_stop"].append(out.q_stop[sel].cpu())
        rows["q_cont"].append(out.q_cont[sel].cpu())
        rows["lam"].append(out.stop_prob[sel].cpu())
        rows["head"].append(due_phase(obs_np[idx]))
        rows["reward"].append(rew[idx])
        rows["ep"].append(idx)
        rows["t"].append(steps_t[idx].copy())
        fin = idx[done[idx]]
        rows["last"].append(done[idx])
        for k in _EP_KEYS:
            if k in info:
                ep_info[k][fin] = np.asarray(info[k], dtype=np.float64)[fin]
        steps_t[idx] += 1
        alive[fin] = False
        obs_np, mask_np = obs2, mask2
        if not alive.any():
            break
    else:  # pragma: no cover - the env bounds episode length
        raise RuntimeError(f"episodes did not finish within {max_steps} steps")
    ep = np.concatenate(rows["ep"])
    t = np.concatenate(rows["t"])
    order = np.lexsort((t, ep))  # (episode, step) order
    ot = torch.as_tensor(order)
    cat = {k: torch.cat(rows[k])[ot] for k in ("obs", "mask", "action", "logp", "value", "q_stop", "q_cont", "lam")}
    episodes = {k: v for k, v in ep_info.items() if not np.all(np.isnan(v))}
    episodes["length"] = steps_t.astype(np.float64)
    return Rollout(
        obs=cat["obs"], mask=cat["mask"], action=cat["action"], logp=cat["logp"], value=cat["value"],
        q_stop=cat["q_stop"], q_cont=cat["q_cont"], stop_prob=cat["lam"],
        head=np.concatenate(rows["head"])[order], reward=np.concatenate(rows["reward"])[order],
        ep=ep[order], t=t[order], last=np.concatenate(rows["last"])[order],
        seeds=np.asarray(seeds, dtype=np.int64), episodes=episodes,
        cf_stop=np.concatenate(rows["cf"])[order] if want_cf else None,
    )


def _reset(benv: Any, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    obs, mask = benv.reset(seeds=np.asarray(seeds, dtype=np.int64))
    return np.asarray(obs, dtype=np.float32), np.asarray(mask, dtype=bool)


# ---------------------------------------------------------------------------- advantages
def discounted_returns(reward: np.ndarray, ep: np.ndarray, gamma: float) -> np.ndarray:
    """Returns-to-go G_t per decision (rows in (episode, step) order), (N,) → (N,).

    >>> discounted_returns(np.array([1., 2., 3., 5.]), np.array([0, 0, 0, 1]), 0.5).tolist()
    [2.75, 3.5, 3.0, 5.0]
    """
    g = np.zeros_like(reward, dtype=np.float64)
    acc = 0.0
    for i in range(len(reward) - 1, -1, -1):
        if i == len(reward) - 1 or ep[i + 1] != ep[i]:
            acc = 0.0
        acc = reward[i] + gamma * acc
        g[i] = acc
    return g


def gae(reward: np.ndarray, value: np.ndarray, ep: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates over decisions; episodes end (V = 0) at the last row.

    >>> gae(np.array([0., 1.]), np.array([0.5, 0.5]), np.array([0, 0]), 1.0, 1.0).tolist()
    [0.5, 0.5]
    """
    adv = np.zeros_like(reward, dtype=np.float64)
    acc = 0.0
    for i in range(len(reward) - 1, -1, -1):
        terminal = i == len(reward) - 1 or ep[i + 1] != ep[i]
        next_v = 0.0 if terminal else value[i + 1]
        if terminal:
            acc = 0.0
        delta = reward[i] + gamma * next_v - value[i]
        acc = delta + gamma * lam * acc
        adv[i] = acc
    return adv


def group_normalise(values: np.ndarray, keys: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """(x − mean_key x)/(std_key x + ε) per key; a group of size 1 (or zero spread) gives 0.

    Uses :mod:`orchestrace.credit.advantages` when it provides ``group_normalize``; this plain
    version is the reference it is tested against.

    >>> group_normalise(np.array([1., 3., 5., 7.]), np.array([0, 0, 1, 2])).round(3).tolist()
    [-1.0, 1.0, 0.0, 0.0]
    """
    values = np.asarray(values, dtype=np.float64)
    keys = np.asarray(keys)
    _, inv = np.unique(keys, return_inverse=True, axis=0) if keys.ndim > 1 else np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1)
    n = np.bincount(inv).astype(np.float64)
    mean = np.bincount(inv, values) / n
    var = np.bincount(inv, (values - mean[inv]) ** 2) / n
    std = np.sqrt(var)
    out = (values - mean[inv]) / (std[inv] + eps)
    out[(n[inv] < 2) | (std[inv] < 1e-12)] = 0.0
    return out


def stop_advantages(realised: np.ndarray, action_is_stop: np.ndarray, lam: np.ndarray,
                    q_stop_other: np.ndarray, q_cont_other: np.ndarray, stop_cost: float = 0.0) -> np.ndarray:
    """The stop head's advantage at each O5 check (see the module docstring).

    ``realised`` is the return-to-go of the chosen action; ``q_stop_other`` the value of
    stopping (used where CONTINUE was chosen), ``q_cont_other`` the value of continuing (used
    where STOP was chosen). ``stop_cost`` is charged to CONTINUE.

    >>> stop_advantages(np.array([1.0, 0.0]), np.array([True, False]), np.array([0.5, 0.5]),
    ...                 np.array([9., 1.]), np.array([0., 9.])).tolist()
    [0.5, -0.5]
    """
    q_s = np.where(action_is_stop, realised, q_stop_other)
    q_c = np.where(action_is_stop, q_cont_other, realised) - stop_cost
    return np.where(action_is_stop, (1.0 - lam) * (q_s - q_c), lam * (q_c - q_s))


def continue_values(env_config: Any, policy: Any, ro: Rollout, stop_index: int, *, device: Any,
                    reward_scale: float = 1.0) -> np.ndarray:
    """Counterfactual "continue instead of stopping" by deterministic replay, (N,) (NaN elsewhere).

    For every O5 check where the policy chose STOP and CONTINUE was legal, the environment's
    :func:`orchestrace.env.replay.rollout_after` replays the episode from its seed with its
    recorded actions up to that check, takes CONTINUE there, and then follows the current
    policy (sampling) to the end; the value is the reward-to-go from the check on.
    """
    from ..env.replay import rollout_after

    out = np.full(len(ro.action), np.nan)
    act = ro.action.numpy()
    rows = np.flatnonzero(ro.is_stop & (act == stop_index) & (ro.mask.numpy().sum(1) >= 2))
    if rows.size == 0:
        return out
    eps, t_stop = ro.ep[rows], ro.t[rows]
    start = np.searchsorted(ro.ep, eps)  # first row of each episode (rows are (episode, step) ordered)
    width = int(t_stop.max()) + 1
    prefix = np.zeros((rows.size, width), dtype=np.int64)
    for j in range(width):
        have = j < t_stop
        prefix[have, j] = act[start[have] + j]

    def follow(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        a, _, _ = policy.act(torch.as_tensor(obs, device=device), torch.as_tensor(mask, device=device))
        return a.cpu().numpy().astype(np.int64)

    value = rollout_after(env_config, ro.seeds[eps], prefix, t_stop, np.full(rows.size, stop_index + 1), follow)
    out[rows] = value * reward_scale
    return out
