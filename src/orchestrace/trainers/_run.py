"""A training run's state and its bookkeeping (start / resume, checkpoint, NaN guard, logging).

The trainers own the algorithm; this module owns what every trainer does the same way:

- ``Run.start(cfg, out, resume, envs=…)``: seed everything, build the batched env (``envs``,
  an :data:`~orchestrace.env.batch.EnvMaker`, or the local ``BatchEnv``), the policy (given the
  environment's typed :class:`~orchestrace.env.layout.Layout`) and Adam; with ``resume`` load ``checkpoint.pt`` (weights_only), check that the saved config
  equals ``cfg`` except for ``steps`` (the total may grow), restore python / numpy / torch
  RNG states, and truncate ``metrics.jsonl`` to the checkpointed rows;
- ``run.step(loss)``: backward, clip, Adam step — unless the loss is not finite, which raises
  :class:`~orchestrace.errors.TrainingError` (the last good checkpoint is kept);
- ``run.end_update(update, scalars)``: validate every ``eval_every`` updates (once: not when
  the scalars already hold this update's validation), log, and checkpoint every
  ``checkpoint_every`` updates.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import CheckpointError, ConfigError, TrainingError
from ..policies.checkpoint import build_policy, load_checkpoint, save_checkpoint
from ..policies.neural import OrchestrationPolicy, expected_decisions
from .common import (
    MetricLogger,
    get_rng_state,
    progress_bar,
    seed_everything,
    select_device,
    set_rng_state,
)
from .config import TrainConfig
from .envs import env_heads, make_batch_env
from .rollout import Rollout

__all__ = ["Run", "RunResult", "episode_scalars"]

_RESUMABLE_CHANGES = {"steps", "checkpoint_every"}


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What :func:`orchestrace.learn.train` returns."""

    out: Path
    updates: int
    last_row: dict[str, Any]
    seconds: float


class Run:
    """Everything one training run holds (see the module docstring)."""

    def __init__(self, cfg: TrainConfig, out: Path, *, progress: bool, envs: Any = None) -> None:
        self.cfg, self.out, self.show_progress = cfg, out, progress
        self.device = select_device(cfg.device, cfg.num_threads)
        #: the run's batched env (a BatchedEnv: local, or Ray-sharded when ``envs`` makes one)
        self.benv, self.env_config = make_batch_env(cfg.env_config(), cfg.episodes_per_step, envs)
        obs_dim, heads = env_heads(self.env_config)
        seed_everything(cfg.seed)
        self.policy = OrchestrationPolicy(obs_dim, heads, cfg.hidden, cfg.layers, layout=self.env_config.layout,
                                          stop_critic={"hidden": cfg.hidden} if cfg.stop_update == "fitted" else None,
                                          ).to(self.device)
        self.optim = torch.optim.Adam(self.policy.parameters(), lr=cfg.lr, eps=1e-5)
        self.start_update = 0
        self.best = -float("inf")
        self.t0 = time.perf_counter()
        self.logger: MetricLogger | None = None

    @classmethod
    def start(cls, cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
              envs: Any = None) -> Run:
        """Start (or, with ``resume``, continue) the run in ``out``; ``envs`` makes its batched env."""
        out = Path(out)
        if resume:
            cfg = _check_resume_config(cfg, out)
        elif (out / "checkpoint.pt").exists():
            raise ConfigError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
        out.mkdir(parents=True, exist_ok=True)
        run = cls(cfg, out, progress=progress, envs=envs)
        keep = 0
        if resume:
            data = load_checkpoint(out)
            policy = build_policy(data, out / "checkpoint.pt", expect_spec=run.policy.spec())
            run.policy.load_state_dict(policy.state_dict())
            try:
                run.optim.load_state_dict(data["optim"])
                set_rng_state(data["rng"])
            except (KeyError, ValueError, RuntimeError, TypeError) as exc:
                raise CheckpointError(f"{out / 'checkpoint.pt'}: optimiser or RNG state is unusable ({exc})") from None
            run.start_update = int(data["update"])
            keep = int(data["log_rows"])
            run.best = float(json.loads(data.get("extra", "{}")).get("best", -float("inf")))
        (out / "config.json").write_text(cfg.to_json() + "\n", encoding="utf-8")
        run.logger = MetricLogger(out, keep=keep)
        if not resume and cfg.warm_start != "none":
            from .warmstart import behaviour_clone

            with run.progress(f"warm start: clone {cfg.warm_start}'s O1–O4", cfg.warm_start_steps) as advance:
                stats = behaviour_clone(run.policy, run.env_config, teacher=cfg.warm_start,
                                        episodes=cfg.warm_start_episodes, steps=cfg.warm_start_steps,
                                        seed=cfg.seed, lr=cfg.lr, device=run.device, advance=advance)
            run.logger.log(0, stats)
        return run

    # ------------------------------------------------------------------ optimisation
    def collect(self, seeds: Any) -> Any:
        """Play one episode per task seed in the batched env; with counterfactual stop
        credit, also replay "continue instead of stopping here" for every O5 stop."""
        from .rollout import collect, continue_values

        cfg, policy, device = self.cfg, self.policy, self.device
        counterfactual = cfg.stop_credit == "counterfactual"
        ro = collect(self.benv, policy, seeds, device=device, reward_scale=cfg.reward_scale,
                     stop_counterfactual=counterfactual)
        if counterfactual:
            ro.cf_cont = continue_values(self.env_config, policy, ro, policy.stop_index, device=device,
                                         reward_scale=cfg.reward_scale)
        return ro

    def set_lr(self, update: int) -> float:
        """lr of this update: linear decay to 10 % over ``anneal_updates`` (constant when 0)."""
        frac = 1.0 if not self.cfg.anneal_updates else max(0.1, 1.0 - update / self.cfg.anneal_updates)
        for group in self.optim.param_groups:
            group["lr"] = self.cfg.lr * frac
        return self.cfg.lr * frac

    def validate(self, update: int) -> dict[str, float]:
        """Greedy policy on the validation seeds; keeps the best (by mean return) as ``best.pt``."""
        from ..env.baselines import evaluate as run_batch
        from ..policies.checkpoint import LearnedPolicy, save_policy
        from .rollout import validation_seeds

        learned: Any = LearnedPolicy(self.policy, device=str(self.device))
        res = run_batch(self.env_config, learned,
                        validation_seeds(self.cfg.eval_episodes))
        self.policy.train()
        score = float(res["return"].mean())
        if score > self.best:
            self.best = score
            save_policy(self.out / "best.pt", self.policy, env_id=self.cfg.env_id, env_set=self.cfg.env_set)
        return {"val/return": score, "val/success": float(res["success"].mean()),
                "val/tokens": float(res["tokens"].mean()), "val/decisions": float(res["decisions"].mean()),
                "val/best_return": self.best}

    def step(self, loss: torch.Tensor, update: int) -> float:
        """One optimiser step on ``loss``; returns the gradient norm. NaN/inf → TrainingError."""
        if not torch.isfinite(loss):
            raise TrainingError(
                f"update {update}: the loss is {float(loss.detach())} (not finite); training stopped. "
                f"The last good checkpoint is in {self.out / 'checkpoint.pt'}; lower lr (now {self.cfg.lr}) "
                "or reward_scale and resume"
            )
        self.optim.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.policy.parameters(), self.cfg.max_grad_norm)
        if not torch.isfinite(gnorm):
            raise TrainingError(f"update {update}: non-finite gradient norm; training stopped "
                                f"(last good checkpoint: {self.out / 'checkpoint.pt'})")
        self.optim.step()
        return float(gnorm)

    def checkpoint(self, update: int) -> None:
        """Save everything needed to continue after ``update`` updates."""
        assert self.logger is not None
        save_checkpoint(self.out, policy=self.policy, optim=self.optim, config_json=self.cfg.to_json(),
                        update=update, rng=get_rng_state(), log_rows=len(self.logger.rows),
                        env_id=self.cfg.env_id, extra={"best": self.best}, env_set=self.cfg.env_set)

    def end_update(self, update: int, scalars: dict[str, float]) -> dict[str, Any]:
        """Log the update's scalars; checkpoint every ``checkpoint_every`` updates and at the end."""
        assert self.logger is not None
        bad = [k for k, v in scalars.items() if k.startswith("losses/") and not math.isfinite(v)]
        if bad:
            raise TrainingError(f"update {update}: {', '.join(bad)} not finite; training stopped "
                                f"(last good checkpoint: {self.out / 'checkpoint.pt'})")
        done = update + 1
        due = self.cfg.eval_every and done % self.cfg.eval_every == 0  # multiples only: resume stays exact
        if due and "val/return" not in scalars:  # the caller may have validated this update already
            scalars.update(self.validate(update))
        scalars["charts/learning_rate"] = self.optim.param_groups[0]["lr"]
        scalars["time/seconds"] = time.perf_counter() - self.t0
        row = self.logger.log(done, scalars)
        if done % self.cfg.checkpoint_every == 0 or done == self.cfg.steps:
            self.checkpoint(done)
        return row

    def progress(self, label: str | None = None, total: int | None = None) -> Any:
        """A progress bar for one phase of the run: by default the updates of ``train ALGO``;
        ``label``/``total`` name another phase (the fitted stop's warm start, paths, fit…)."""
        if label is None:
            return progress_bar(self.cfg.steps, f"train {self.cfg.algo}", enabled=self.show_progress,
                                completed=self.start_update)
        return progress_bar(int(total or 0), label, enabled=self.show_progress)

    def finish(self) -> RunResult:
        assert self.logger is not None
        self.logger.close()
        last = self.logger.rows[-1] if self.logger.rows else {}
        return RunResult(self.out, self.cfg.steps, last, time.perf_counter() - self.t0)


def _check_resume_config(cfg: TrainConfig, out: Path) -> TrainConfig:
    path = out / "config.json"
    if not path.is_file():
        raise CheckpointError(f"{out}: no config.json; --resume needs a run directory written by `orchestrace train`")
    try:
        saved = TrainConfig.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ConfigError) as exc:
        raise CheckpointError(f"{path}: unreadable config ({exc})") from None
    diff = [f.name for f in dataclasses.fields(cfg)
            if f.name not in _RESUMABLE_CHANGES and getattr(cfg, f.name) != getattr(saved, f.name)]
    if diff:
        pairs = ", ".join(f"{k}: run has {getattr(saved, k)!r}, asked {getattr(cfg, k)!r}" for k in diff)
        raise ConfigError(f"--resume with a different config ({pairs}); only steps and checkpoint_every may change")
    return cfg


def episode_scalars(ro: Rollout, stop_index: int) -> dict[str, float]:
    """The ``charts/*`` and ``stop/*`` scalars of one update's episodes."""
    ep = ro.episodes
    s: dict[str, float] = {}
    for key, name in (("return", "charts/episodic_return"), ("success", "charts/success"), ("tokens", "charts/tokens"),
                      ("critical_steps", "charts/critical_steps"), ("wall_clock_s", "charts/wall_clock_s")):
        if key in ep:
            s[name] = float(np.nanmean(ep[key]))
    s["charts/episodic_length"] = float(ep["length"].mean())
    s["stop/mean_decisions"] = float(ep["length"].mean())
    stop_rows = np.flatnonzero(ro.is_stop)
    if len(stop_rows):
        lam = ro.stop_prob[torch.as_tensor(stop_rows)].double()
        s["stop/mean_lambda"] = float(lam.mean())
        s["stop/stop_rate_per_check"] = float((ro.action[torch.as_tensor(stop_rows)] == stop_index).double().mean())
        exp = []
        for e in range(ro.n_episodes):
            rows = stop_rows[ro.ep[stop_rows] == e]
            if len(rows):
                exp.append(expected_decisions(ro.stop_prob[torch.as_tensor(rows)].double(),
                                              torch.as_tensor(ro.t[rows] + 1), int(ep["length"][e])))
            else:
                exp.append(float(ep["length"][e]))
        s["stop/expected_decisions"] = float(np.mean(exp))
    if "difficulty" in ep:
        d = ep["difficulty"]
        easy, hard = d <= np.nanquantile(d, 1 / 3), d >= np.nanquantile(d, 2 / 3)
        if easy.any() and hard.any():
            s["stop/decisions_easy"] = float(ep["length"][easy].mean())
            s["stop/decisions_hard"] = float(ep["length"][hard].mean())
    return s
