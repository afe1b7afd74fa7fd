"""PPO (clipped surrogate, GAE over orchestrator decisions) with an explicit stop head.

Each update, read top to bottom:

1. draw ``episodes_per_step`` task seeds and play one episode each in the batched env;
2. advantages: GAE over the decisions of each episode, Â_t = Σ_l (γλ)^l δ_{t+l},
   δ_t = r_t + γV(s_{t+1}) − V(s_t); normalised per batch or per decision head (Dr. MAS
   key). O5 checks get the stop head's own credit (stopping vs continuing, from the env's
   counterfactual "stop at decision k" where offered, else from Q_stop / Q_cont);
3. ``ppo_epochs`` epochs over ``minibatches`` shuffled minibatches of *episodes* of the
   clipped surrogate max(−Â·ρ, −Â·clip(ρ, 1 ± ε)) − c_H·H + c_V·(value losses); stop the
   epochs early when approx-KL > ``target_kl`` (if set);
4. log ``charts/*``, ``losses/*``, ``stop/*``; checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from ._run import Run, RunResult, episode_scalars
from .config import TrainConfig
from .losses import decision_advantages, policy_value_loss
from .rollout import gae, train_seeds

__all__ = ["train"]


def train(cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
          envs: Any = None) -> RunResult:
    """Train with PPO (``cfg.algo == "ppo"``) into the run directory ``out``. ``envs`` makes the batched env (default: a local BatchEnv)."""
    run = Run.start(cfg, out, resume=resume, progress=progress, envs=envs)
    policy, device = run.policy, run.device
    with run.progress() as advance:
        for update in range(run.start_update, cfg.steps):
            run.set_lr(update)
            # 1. one episode per task seed
            seeds = train_seeds(cfg.seed, update, cfg.episodes_per_step)  # (E,)
            ro = run.collect(seeds)  # (+ replayed "continue instead of stopping" values)
            policy.update_norm(ro.obs.to(device))
            obs, mask = ro.obs.to(device), ro.mask.to(device)
            with torch.no_grad():  # behaviour log-probs and values under the updated normaliser
                out0 = policy(obs, mask)
                old_logp = torch.log_softmax(out0.logits, -1).gather(1, ro.action.to(device)[:, None]).squeeze(1).cpu()
                values = out0.value.double().cpu().numpy()

            # 2. GAE per decision (+ the stop head's own credit)
            raw = gae(ro.reward, values, ro.ep, cfg.gamma, cfg.gae_lambda)  # (N,)
            adv, targets = decision_advantages(ro, cfg, raw=raw, group=np.zeros(len(raw), dtype=np.int64),
                                               group_centred=False, stop_index=policy.stop_index)
            targets["returns"] = raw + values  # λ-returns as the value target

            # 3. clipped-surrogate epochs over minibatches of whole episodes
            parts: dict[str, float] = {}
            gnorm = 0.0
            ep_order = torch.arange(ro.n_episodes)
            ep_t = torch.as_tensor(ro.ep)
            for _epoch in range(cfg.ppo_epochs):
                perm = ep_order[torch.randperm(ro.n_episodes)]
                for chunk in perm.chunk(cfg.minibatches):
                    rows = torch.nonzero(torch.isin(ep_t, chunk)).squeeze(1)  # (n,) decisions of these episodes
                    out_ = policy(obs[rows.to(device)], mask[rows.to(device)])
                    loss, parts = policy_value_loss(out_, ro, adv, targets, cfg, device=device, rows=rows,
                                                    old_logp=old_logp, clip=cfg.clip)
                    gnorm = run.step(loss, update)
                if cfg.target_kl and parts["losses/approx_kl"] > cfg.target_kl:
                    break

            # 4. log and checkpoint
            scalars = {**episode_scalars(ro, policy.stop_index), **parts, "losses/grad_norm": gnorm}
            run.end_update(update, scalars)
            advance(1, ret=scalars["charts/episodic_return"], succ=scalars.get("charts/success", float("nan")))
    return run.finish()
