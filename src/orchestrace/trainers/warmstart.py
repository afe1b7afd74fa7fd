"""Behaviour-cloning warm start of the O1–O4 heads from a heuristic teacher.

Policy gradient from a uniformly random orchestrator is slow on the default world (random
O1–O4 choices succeed ~50 % of the time at twice the tokens of a sensible heuristic), and
the 10-minute budget of ``orchestrace demo`` does not leave room for it. So, before RL,
the spawn / delegate / communicate / aggregate heads are cloned from one of the
environment's heuristics (``TrainConfig.warm_start``; ``none`` skips it):

    min_θ  − Σ_{t: head(t) ∈ O1..O4} log π_θ(a_teacher(s_t) | s_t)

on states visited by the teacher. **The stop head (O5) is never cloned**: it starts at
λ = ½ and is learned by RL alone, so every stopping skill the learned policy shows comes
from its own credit. RL then fine-tunes all five heads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .rollout import VALIDATION_BASE

__all__ = ["behaviour_clone", "teacher_dataset"]


def teacher_dataset(env_config: Any, teacher: str, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """States, masks and teacher actions of the O1–O4 decisions on ``seeds``."""
    from ..env.baselines import make_baseline
    from ..env.batch import rule_decisions
    from ..env.layout import O5

    pol = make_baseline("fixed-budget" if teacher == "base" else teacher, env_config)  # base: O1–O4 of every stop rule
    obs, mask, act, phase = rule_decisions(env_config, pol, seeds)
    keep = phase < O5  # O1..O4 decisions only
    return obs[keep], mask[keep], act[keep]


def behaviour_clone(policy: Any, env_config: Any, *, teacher: str, episodes: int, steps: int, seed: int,
                    lr: float, device: Any, advance: Any = None) -> dict[str, float]:
    """Clone O1–O4 from ``teacher`` into ``policy`` (in place); returns the final loss/accuracy.
    ``advance(1)`` (optional) is called after each gradient step (a progress bar)."""
    rng = np.random.default_rng([seed, 99])
    seeds = rng.integers(0, VALIDATION_BASE, episodes, dtype=np.int64)
    obs, mask, act = teacher_dataset(env_config, teacher, seeds)
    o = torch.as_tensor(obs, dtype=torch.float32, device=device)
    m = torch.as_tensor(mask, dtype=torch.bool, device=device)
    a = torch.as_tensor(act, dtype=torch.long, device=device)
    policy.update_norm(o)
    opt = torch.optim.Adam([p for n, p in policy.named_parameters()
                            if not n.startswith(("stop_gate", "value_head", "stop_values"))], lr=lr)
    gen = torch.Generator().manual_seed(int(seed))
    n = len(a)
    bs = min(512, n)
    loss = torch.zeros(())
    for _ in range(steps):
        idx = torch.randint(0, n, (bs,), generator=gen).to(device)
        logits = policy(o[idx], m[idx]).logits
        loss = torch.nn.functional.cross_entropy(logits, a[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if advance is not None:
            advance(1)
    with torch.no_grad():
        acc = float((policy(o, m).logits.argmax(-1) == a).float().mean())
    return {"warmstart/loss": float(loss.detach()), "warmstart/accuracy": acc, "warmstart/decisions": float(n)}
