"""REINFORCE with a learned baseline, at the orchestrator-decision unit.

Each update, read top to bottom:

1. draw ``episodes_per_step`` task seeds from the run's seed stream and play one episode
   each in the batched environment;
2. advantages: A_t = G_t − V(s_t) with G_t the return-to-go of decision t and V the
   learned state value at collection time; normalised per batch or, with
   ``normalize="drmas"``, per decision head. O5 checks get the stop head's own credit
   (:func:`~orchestrace.trainers.rollout.stop_advantages`): the value of stopping at this
   decision versus continuing, from the env's counterfactual "stop at decision k" where it
   offers one, else from the learned Q_stop / Q_cont heads (ReasoNet / Puppeteer's
   REINFORCE-trained terminator, with a baseline);
3. loss = −mean(A · log π(a|s)) − c_H·H[π] + c_V·(value losses), one Adam step;
4. log ``charts/*``, ``losses/*``, ``stop/*``; checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ._run import Run, RunResult, episode_scalars
from .config import TrainConfig
from .losses import decision_advantages, policy_value_loss
from .rollout import discounted_returns, train_seeds

__all__ = ["train"]


def train(cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
          envs: Any = None) -> RunResult:
    """Train with REINFORCE + baseline (``cfg.algo == "reinforce"``) into ``out``.

    ``envs`` makes the batched env (default: a local BatchEnv)."""
    run = Run.start(cfg, out, resume=resume, progress=progress, envs=envs)
    policy, device = run.policy, run.device
    with run.progress() as advance:
        for update in range(run.start_update, cfg.steps):
            run.set_lr(update)
            # 1. one episode per task seed
            seeds = train_seeds(cfg.seed, update, cfg.episodes_per_step)  # (E,)
            ro = run.collect(seeds)  # (+ replayed "continue instead of stopping" values)
            policy.update_norm(ro.obs.to(device))

            # 2. A_t = G_t − V(s_t), per decision (+ the stop head's own credit)
            returns = discounted_returns(ro.reward, ro.ep, cfg.gamma)  # (N,)
            raw = returns - ro.value.double().numpy()
            adv, targets = decision_advantages(ro, cfg, raw=raw, group=np.zeros(len(raw), dtype=np.int64),
                                               group_centred=False, stop_index=policy.stop_index)

            # 3. one policy-gradient step
            out_ = policy(ro.obs.to(device), ro.mask.to(device))
            loss, parts = policy_value_loss(out_, ro, adv, targets, cfg, device=device)
            gnorm = run.step(loss, update)

            # 4. log and checkpoint
            scalars = {**episode_scalars(ro, policy.stop_index), **parts, "losses/grad_norm": gnorm}
            run.end_update(update, scalars)
            advance(1, ret=scalars["charts/episodic_return"], succ=scalars.get("charts/success", float("nan")))
    return run.finish()
