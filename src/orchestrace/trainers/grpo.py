"""GRPO for orchestration: a group of rollouts per task seed, group-relative advantages.

Each update, read top to bottom:

1. draw ``n_groups`` task seeds from the run's seed stream and play each ``group_size``
   times in the batched environment (one lock-step batch of ``episodes_per_step`` episodes);
2. advantages at the orchestrator-decision unit: every decision of episode i in group g
   gets A = R_i − mean_g R (default ``normalize="none"``, Dr. GRPO-style), or
   A = (R_i − mean_g R)/(std_g R + ε) (``"group"``, GRPO), or the same with statistics per
   (task seed, decision head) (``"drmas"``, Dr. MAS's agent-wise key with the decision head
   as the agent). The default omits the std: on this world, groups in which every rollout
   succeeds differ only by token costs, and dividing by their tiny std turned that noise
   into full-size advantages (measured: success fell from 0.80 to 0.13 in 100 updates). O5 checks get the stop head's own
   credit instead (:func:`~orchestrace.trainers.rollout.stop_advantages`): stopping versus
   continuing valued by the environment's counterfactual "stop at decision k" where it
   offers one, else by the learned Q_stop / Q_cont heads;
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
from .rollout import train_seeds

__all__ = ["train"]


def train(cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
          envs: Any = None) -> RunResult:
    """Train with GRPO (``cfg.algo == "grpo"``) into the run directory ``out``. ``envs`` makes the batched env (default: a local BatchEnv)."""
    run = Run.start(cfg, out, resume=resume, progress=progress, envs=envs)
    policy, device = run.policy, run.device
    with run.progress() as advance:
        for update in range(run.start_update, cfg.steps):
            run.set_lr(update)
            # 1. a group of rollouts per task seed
            seeds = np.repeat(train_seeds(cfg.seed, update, cfg.n_groups), cfg.group_size)  # (E,)
            ro = run.collect(seeds)  # (+ replayed "continue instead of stopping" values)
            policy.update_norm(ro.obs.to(device))

            # 2. group-relative advantages per decision (+ the stop head's own credit)
            ep_return = np.bincount(ro.ep, ro.reward, minlength=ro.n_episodes)  # (E,)
            group = np.repeat(np.arange(cfg.n_groups), cfg.group_size)  # (E,) group id of each episode
            adv, targets = decision_advantages(ro, cfg, raw=ep_return[ro.ep], group=group[ro.ep],
                                               group_centred=True, stop_index=policy.stop_index)

            # 3. one policy-gradient step
            out_ = policy(ro.obs.to(device), ro.mask.to(device))
            loss, parts = policy_value_loss(out_, ro, adv, targets, cfg, device=device)
            gnorm = run.step(loss, update)

            # 4. log and checkpoint
            scalars = {**episode_scalars(ro, policy.stop_index), **parts, "losses/grad_norm": gnorm,
                       "charts/group_return_std": float(np.mean([ep_return[group == g].std()
                                                                 for g in range(cfg.n_groups)]))}
            run.end_update(update, scalars)
            advance(1, ret=scalars["charts/episodic_return"], succ=scalars.get("charts/success", float("nan")))
    return run.finish()
