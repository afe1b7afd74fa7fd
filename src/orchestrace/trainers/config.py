"""The training configuration: one frozen dataclass drives the Python API and the CLI.

Every field carries its help text in ``field(metadata={"help": ...})``; the ``orchestrace
train`` options are generated from these fields (:func:`cli_fields`). Cross-field rules are
checked at construction and fail with a :class:`~orchestrace.errors.ConfigError` that names
the field and says how to fix it.

>>> cfg = TrainConfig(algo="grpo", steps=10, episodes_per_step=32, group_size=8)
>>> cfg.algo, cfg.n_groups
('grpo', 4)
>>> TrainConfig(algo="grpo", episodes_per_step=30, group_size=8)
Traceback (most recent call last):
...
orchestrace.errors.ConfigError: episodes_per_step=30 is not a multiple of group_size=8 (GRPO needs whole groups); use episodes_per_step=32 or group_size=6
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

__all__ = ["ALGOS", "ENV_ALIASES", "TrainConfig", "cli_fields", "resolve_env_id"]

#: The training algorithms (each one file, readable top to bottom).
ALGOS = ("reinforce", "grpo", "ppo")

#: Short names accepted for ``--env`` (the gymnasium ids registered by ``orchestrace.env``).
ENV_ALIASES = {
    "default": "orchestrace/Orchestrate-v0",
    "small": "orchestrace/Orchestrate-small-v0",
    "industrial": "orchestrace/Orchestrate-industrial-v0",
    "default-v1": "orchestrace/Orchestrate-v1",
    "v1": "orchestrace/Orchestrate-v1",
    "small-v1": "orchestrace/Orchestrate-small-v1",
    "industrial-v1": "orchestrace/Orchestrate-industrial-v1",
}

_NORMALISE = ("none", "batch", "group", "drmas")
_STOP_CREDIT = ("counterfactual", "critic", "return")
_TEACHERS = ("none", "base", "adaptive", "fixed-budget", "threshold", "fixed-fanout", "greedy", "always-continue")


def resolve_env_id(name: str) -> str:
    """Map a short name (``small``/``default``/``industrial``) to its gymnasium id.

    >>> resolve_env_id("small")
    'orchestrace/Orchestrate-small-v0'
    >>> resolve_env_id("orchestrace/Orchestrate-v0")
    'orchestrace/Orchestrate-v0'
    >>> resolve_env_id("default-v2")
    Traceback (most recent call last):
    ...
    orchestrace.errors.ConfigError: unknown environment 'default-v2'; did you mean 'default-v1' or 'default'? (short names: default, small, industrial, default-v1, v1, small-v1, industrial-v1; or a gymnasium id orchestrace/Orchestrate-…)
    """
    if name in ENV_ALIASES:
        return ENV_ALIASES[name]
    if "/" in name:  # a gymnasium id: ``config_for`` checks it (with its own "did you mean")
        return name
    from ..errors import ConfigError, did_you_mean

    hint = did_you_mean(name, list(ENV_ALIASES), prefix="; ", n=2)
    raise ConfigError(f"unknown environment {name!r}{hint} (short names: {', '.join(ENV_ALIASES)}; "
                      "or a gymnasium id orchestrace/Orchestrate-…)")


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of one training run (see each field's ``help``).

    ``steps`` counts policy updates; each update collects ``episodes_per_step`` complete
    episodes in lock-step with the batched environment.
    """

    env: str = field(default="default", metadata={"help": "Environment: small | default | industrial (the v0 worlds), small-v1 | default-v1 | industrial-v1 (the demo's), or a gymnasium id."})
    env_set: tuple[str, ...] = field(default=(), metadata={"help": "World overrides FIELD=VALUE of EnvConfig (the CLI's repeatable --set), recorded with the run."})
    algo: str = field(default="grpo", metadata={"help": "Trainer: reinforce | grpo | ppo."})
    steps: int = field(default=400, metadata={"help": "Number of policy updates."})
    seed: int = field(default=0, metadata={"help": "Seed of torch, numpy, python and of the training task-seed stream."})
    episodes_per_step: int = field(default=128, metadata={"help": "Complete episodes collected per update (the batch size B of the batched env)."})
    group_size: int = field(default=8, metadata={"help": "GRPO: rollouts per task seed (a group); episodes_per_step must be a multiple."})
    lr: float = field(default=3e-3, metadata={"help": "Adam learning rate."})
    hidden: int = field(default=64, metadata={"help": "Width of the shared encoder MLP."})
    layers: int = field(default=2, metadata={"help": "Depth of the shared encoder MLP."})
    gamma: float = field(default=1.0, metadata={"help": "Discount per orchestrator decision (1 = undiscounted episode return)."})
    gae_lambda: float = field(default=0.95, metadata={"help": "PPO: GAE lambda over orchestrator decisions."})
    entropy_coef: float = field(default=0.01, metadata={"help": "Entropy bonus weight (all heads)."})
    value_coef: float = field(default=0.5, metadata={"help": "Weight of the value losses (state value and stop values)."})
    max_grad_norm: float = field(default=0.5, metadata={"help": "Gradient clipping norm."})
    normalize: str = field(default="none", metadata={"help": "Advantage normalisation: none | batch | group (GRPO, key = task) | drmas (key = (task, decision head))."})
    stop_credit: str = field(default="counterfactual", metadata={"help": "Stop-head credit: counterfactual (env replay 'stop at decision k' when offered, else critic) | critic (learned Q_stop/Q_continue) | return (plain return-to-go)."})
    stop_update: str = field(default="pg", metadata={"help": "How the stop gate learns from its credit: pg (policy gradient on the chosen action's advantage) | regret (both actions' values are known — replayed or from the critic — so fit the gate to the better one, each check weighted by |Q_stop − Q_continue|; no sampling variance, no sigmoid saturation) | fitted (O1–O4 fixed after the warm start; a dedicated stop network regresses Q_continue − Q_stop on replayed always-continue paths of steps × episodes_per_step training tasks — Longstaff–Schwartz policy iteration — and the gate continues iff the prediction beats a margin chosen on validation seeds)."})
    stop_cost: float = field(default=0.004, metadata={"help": "Extra cost per CONTINUE decision charged in the stop head's advantage only (ReasoNet/Puppeteer-style ponder cost; 0 = the env's costs only)."})
    warm_start: str = field(default="base", metadata={"help": "Behaviour-clone the O1–O4 heads (never O5) from this env heuristic before RL: none (from scratch) | base (the stop-free base heuristic every stop rule shares) | adaptive (a stop-aware heuristic: its O1–O4 were tuned with its stop rule) | fixed-budget | threshold | fixed-fanout | greedy."})
    warm_start_episodes: int = field(default=512, metadata={"help": "Teacher episodes for the warm start."})
    warm_start_steps: int = field(default=300, metadata={"help": "Gradient steps of the warm start (minibatches of 512 decisions)."})
    ppo_epochs: int = field(default=4, metadata={"help": "PPO: optimisation epochs per update."})
    minibatches: int = field(default=4, metadata={"help": "PPO: minibatches per epoch."})
    clip: float = field(default=0.2, metadata={"help": "PPO: ratio clipping epsilon."})
    target_kl: float = field(default=0.0, metadata={"help": "PPO: stop the epochs early when approx-KL exceeds this (0 = never)."})
    reward_scale: float = field(default=1.0, metadata={"help": "Multiply env rewards by this before computing advantages."})
    anneal_updates: int = field(default=400, metadata={"help": "Decay lr linearly to 10 % over this many updates (0 = constant lr); independent of steps, so --resume stays exact."})
    eval_every: int = field(default=25, metadata={"help": "Every N updates, score the greedy policy on validation seeds (disjoint from training and held-out seeds) and keep the best as best.pt (0 = never)."})
    eval_episodes: int = field(default=256, metadata={"help": "Validation episodes per evaluation."})
    checkpoint_every: int = field(default=10, metadata={"help": "Save a checkpoint every N updates (and always at the end)."})
    num_threads: int = field(default=1, metadata={"help": "torch CPU threads (1 keeps a shared machine usable and runs bit-exact)."})
    device: str = field(default="auto", metadata={"help": "auto | cpu | cuda (auto uses a GPU when present)."})

    def __post_init__(self) -> None:
        def bad(name: str, fix: str) -> ConfigError:
            return ConfigError(f"{name}={getattr(self, name)!r} is invalid; {fix}")

        if self.algo not in ALGOS:
            raise bad("algo", f"use one of {', '.join(ALGOS)}")
        if self.normalize not in _NORMALISE:
            raise bad("normalize", f"use one of {', '.join(_NORMALISE)}")
        if self.stop_credit not in _STOP_CREDIT:
            raise bad("stop_credit", f"use one of {', '.join(_STOP_CREDIT)}")
        if self.stop_update not in ("pg", "regret", "fitted"):
            raise bad("stop_update", "use pg, regret or fitted")
        if self.warm_start not in _TEACHERS:
            raise bad("warm_start", f"use one of {', '.join(_TEACHERS)}")
        if self.device not in ("auto", "cpu", "cuda"):
            raise bad("device", "use auto, cpu or cuda")
        for name in ("steps", "episodes_per_step", "hidden", "layers", "ppo_epochs", "minibatches",
                     "checkpoint_every", "num_threads", "group_size", "warm_start_episodes", "warm_start_steps",
                     "eval_episodes"):
            if getattr(self, name) < 1:
                raise bad(name, "it must be a positive integer")
        for name in ("lr", "max_grad_norm", "clip", "reward_scale"):
            if not getattr(self, name) > 0:
                raise bad(name, "it must be > 0")
        for name in ("entropy_coef", "value_coef", "target_kl", "stop_cost", "anneal_updates", "eval_every"):
            if not getattr(self, name) >= 0:
                raise bad(name, "it must be >= 0")
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise bad(name, "it must lie in [0, 1]")
        if self.seed < 0:
            raise bad("seed", "use a non-negative integer")
        # cross-field rules
        if self.algo == "grpo":
            if self.group_size < 2:
                raise ConfigError(f"group_size={self.group_size} is too small for GRPO: a group of one rollout "
                                  "has no relative advantage; use group_size >= 2")
            if self.episodes_per_step % self.group_size:
                lo = self.episodes_per_step - self.episodes_per_step % self.group_size
                up = lo + self.group_size
                alt = next((g for g in range(self.group_size, 1, -1) if self.episodes_per_step % g == 0), 2)
                raise ConfigError(
                    f"episodes_per_step={self.episodes_per_step} is not a multiple of group_size={self.group_size} "
                    f"(GRPO needs whole groups); use episodes_per_step={up} or group_size={alt}"
                )
        if self.normalize == "group" and self.algo != "grpo":
            raise ConfigError(f"normalize='group' needs algo='grpo' (groups are rollouts of one task seed), "
                              f"got algo={self.algo!r}; use normalize='batch' or 'drmas'")
        if self.algo == "ppo" and self.minibatches > self.episodes_per_step:
            raise ConfigError(f"minibatches={self.minibatches} exceeds episodes_per_step={self.episodes_per_step}; "
                              "use minibatches <= episodes_per_step")

    # ------------------------------------------------------------------ helpers
    @property
    def n_groups(self) -> int:
        """Number of distinct task seeds per update (GRPO groups; 1 episode per seed otherwise)."""
        return self.episodes_per_step // self.group_size if self.algo == "grpo" else self.episodes_per_step

    @property
    def env_id(self) -> str:
        """The gymnasium id of :attr:`env`."""
        return resolve_env_id(self.env)

    def env_config(self) -> Any:
        """The :class:`~orchestrace.env.EnvConfig` this run trains on (id + ``env_set``)."""
        from ..env import config_for

        return config_for(self.env_id).with_overrides(list(self.env_set))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields."""
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """JSON text of the fields (sorted keys)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Build from a dict; unknown keys are rejected with a "did you mean" hint.

        >>> TrainConfig.from_dict({"algo": "ppo", "steps": 3}).steps
        3
        """
        from ..errors import did_you_mean

        names = {f.name for f in dataclasses.fields(cls)}
        for key in data:
            if key not in names:
                hint = did_you_mean(key, sorted(names), prefix="; ")
                raise ConfigError(f"unknown TrainConfig field {key!r}{hint}")
        hints = typing.get_type_hints(cls)
        clean: dict[str, Any] = {}
        for key, value in data.items():
            typ = hints[key]
            if key == "env_set":
                if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                    raise ConfigError(f"env_set={value!r} must be a list of FIELD=VALUE strings")
                clean[key] = tuple(value)
                continue
            try:
                clean[key] = typ(value) if typ in (int, float, str) and not isinstance(value, bool) else value
            except (TypeError, ValueError):
                raise ConfigError(f"{key}={value!r} is not a valid {typ.__name__}") from None
        return cls(**clean)

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def cli_fields() -> list[tuple[str, type, Any, str]]:
    """``(name, type, default, help)`` of every field, in declaration order (drives the CLI).

    >>> [n for n, *_ in cli_fields()][:3]
    ['env', 'env_set', 'algo']
    """
    hints = typing.get_type_hints(TrainConfig)
    return [(f.name, hints[f.name], f.default, f.metadata["help"]) for f in dataclasses.fields(TrainConfig)]
