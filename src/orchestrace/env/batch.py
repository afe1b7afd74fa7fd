"""Vectorised lock-step episodes (no per-episode Python loop): the fast path for training.

:class:`BatchedEnv` is the env ↔ learner seam: the three verbs every batched environment offers
a learner — ``reset(seeds)``, ``step(actions)`` and ``stop_values()`` — with the arrays laid out
by the configuration's :class:`~orchestrace.env.layout.Layout` (``config.layout``). This
module's :class:`BatchEnv` is the local one; :class:`orchestrace.scale.RayBatchEnv` shards the
rows over Ray actors; a training run takes a :data:`EnvMaker` (``train(..., envs=…)``) and
steps whatever it makes — its rollouts, the fitted stop's path collection, all of it. A learner
reads the due decision from the observation (:func:`~orchestrace.env.layout.due_phase`), never
from the simulation's state.

``BatchEnv(config, B, seed=s)`` runs ``B`` episodes of the same world as
:class:`~orchestrace.env.OrchestrationEnv`; row ``b`` plays the episode seeds
``s + b, s + b + B, s + b + 2B, …`` (the seed stream), auto-resetting a finished row with its
next seed. Episode ``seed`` here equals ``OrchestrationEnv.reset(seed=seed)`` decision for
decision. Traces are not built in the batched path.

>>> import numpy as np
>>> from orchestrace.env.config import EnvConfig
>>> be = BatchEnv(EnvConfig.small(), 4, seed=0)
>>> obs, mask = be.reset()
>>> obs.shape, mask.shape
((4, 46), (4, 19))
>>> a = mask.argmax(1)          # first legal action of each row
>>> obs, mask, r, done, info = be.step(a)
>>> r.dtype, done.shape, sorted(info)[:3]
(dtype('float64'), (4,), ['critical_steps', 'decisions', 'difficulty'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import IllegalActionError
from ._trace import action_labels
from .config import EnvConfig
from .layout import DONE, O5
from .world import World

__all__ = ["BatchEnv", "BatchedEnv", "EnvMaker", "local_batch_env", "rule_decisions"]


@runtime_checkable
class BatchedEnv(Protocol):
    """``B`` episodes stepped together (see the module docstring): the learner's whole view of an env.

    >>> from orchestrace.env.config import EnvConfig
    >>> isinstance(BatchEnv(EnvConfig.small(), 2), BatchedEnv)
    True
    """

    config: EnvConfig

    def reset(self, seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start one episode per seed (the batch takes ``len(seeds)`` rows): ``(obs (B, D), mask (B, A))``."""
        ...

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """One decision per row: ``(obs, mask, reward (B,), done (B,), info)``."""
        ...

    def stop_values(self) -> np.ndarray:
        """(B,) the return-to-go of STOP now in each row (NaN where O5 is not due)."""
        ...


#: Makes the batched env of a configuration and a batch size (the run's ``envs``).
EnvMaker = Callable[[EnvConfig, int], BatchedEnv]


def local_batch_env(config: EnvConfig, batch_size: int) -> BatchEnv:
    """The default :data:`EnvMaker`: this process's :class:`BatchEnv`, one whole episode per row
    (no auto-reset), as a learner collects.

    >>> from orchestrace.env.config import EnvConfig
    >>> local_batch_env(EnvConfig.small(), 4).auto_reset
    False
    """
    return BatchEnv(config, batch_size, auto_reset=False)


def rule_decisions(config: EnvConfig, policy: Any, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                  np.ndarray]:
    """Every decision a hand-written rule (``policy.act_batch(obs, mask, world)``, which may read
    the simulation, e.g. the summary features in any mode) takes on ``seeds``, one episode per
    seed in lock-step: ``(obs (M, D), mask (M, A), action (M,), phase (M,))`` in step order —
    what a learner clones from a teacher without stepping the world itself.

    >>> from orchestrace.env.baselines import make_baseline
    >>> from orchestrace.env.config import EnvConfig
    >>> cfg = EnvConfig.small()
    >>> obs, mask, act, ph = rule_decisions(cfg, make_baseline("fixed-budget", cfg), np.arange(3))
    >>> obs.shape[1] == cfg.obs_dim, bool(mask[np.arange(len(act)), act].all()), int(ph.max()) == O5
    (True, True, True)
    """
    w = World(config, len(seeds))
    w.reset_rows(np.arange(len(seeds)), np.asarray(seeds, dtype=np.uint64))
    parts: list[tuple[np.ndarray, ...]] = []
    while (w.phase < DONE).any():
        live = w.phase < DONE
        obs, mask = w.obs(), w.mask()
        a = np.asarray(policy.act_batch(obs, mask, w), dtype=np.int64)
        parts.append((obs[live], mask[live], a[live], w.phase[live].copy()))
        w.step(np.where(live, a, 0))
    if not parts:
        return (np.zeros((0, config.obs_dim), np.float32), np.zeros((0, config.n_actions), bool),
                np.zeros(0, np.int64), np.zeros(0, np.int64))
    obs_a, mask_a, act_a, ph_a = (np.concatenate(x) for x in zip(*parts, strict=True))
    return obs_a, mask_a, act_a, ph_a


class BatchEnv:
    """``B`` episodes stepped together; ``reset() -> (obs, mask)``, ``step(a) -> (obs, mask, r, done, info)``."""

    def __init__(self, config: EnvConfig | None = None, batch_size: int = 64, *, seed: int = 0, check_actions: bool = True,
                 auto_reset: bool = True) -> None:
        #: decisions stepped so far (calls of :meth:`step`)
        self.steps = 0
        self.config = cfg = config if config is not None else EnvConfig.default()
        if batch_size < 1:
            from ..errors import ConfigError

            raise ConfigError(f"batch_size={batch_size} is invalid; use 1 or more")
        self.B = int(batch_size)
        self.seed = int(seed)
        self.world = World(cfg, self.B)
        self.check_actions = check_actions
        #: False: a finished row stays finished (all-False mask, zero observation and reward) until
        #: the next reset — one episode per row, as a learner that collects whole episodes wants
        self.auto_reset = auto_reset
        self.labels = action_labels(cfg)
        self.obs_dim, self.n_actions = cfg.obs_dim, cfg.n_actions
        self._next = np.zeros(self.B, np.uint64)
        self._mask = np.zeros((self.B, cfg.n_actions), bool)

    def reset(self, seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start episode seeds ``seed + b`` in row ``b`` (or ``seeds[b]``, resizing the batch to
        ``len(seeds)``); returns (obs (B, D) float32, mask (B, A) bool)."""
        if seeds is not None:
            seeds = np.asarray(seeds, dtype=np.int64).reshape(-1)
            if len(seeds) != self.B:
                self.B = len(seeds)
                self.world = World(self.config, self.B)
        rows = np.arange(self.B)
        self.episode_seed = (self.seed + rows).astype(np.uint64) if seeds is None else seeds.astype(np.uint64)
        self._next = self.episode_seed + np.uint64(self.B)
        self.world.reset_rows(rows, self.episode_seed)
        self._mask = self.world.mask()
        return self.world.obs(), self._mask

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """One decision per row. ``info`` arrays are valid where ``done`` (the finished episode's values)."""
        w = self.world
        a = np.asarray(actions, np.int64).reshape(self.B)
        live = w.phase < DONE
        a = np.where(live, a, 0)
        if self.check_actions:
            ok = (a >= 0) & (a < self.n_actions)
            ok[ok] = self._mask[np.flatnonzero(ok), a[ok]]
            ok |= ~live
            if not ok.all():
                b = int(np.flatnonzero(~ok)[0])
                legal = ", ".join(f"{i}={self.labels[i]}" for i in np.flatnonzero(self._mask[b]))
                raise IllegalActionError(f"row {b}: action {int(a[b])} is not legal; legal actions: {legal}")
        r = w.step(a)
        self.steps += 1
        done = live & (w.phase == DONE)
        info = {**w.episode_summary(), "seed": self.episode_seed.astype(np.int64)}
        if done.any() and self.auto_reset:
            rows = np.flatnonzero(done)
            self.episode_seed = self.episode_seed.copy()
            self.episode_seed[rows] = self._next[rows]
            self._next[rows] += np.uint64(self.B)
            w.reset_rows(rows, self.episode_seed[rows])
        self._mask = w.mask()
        return w.obs(), self._mask, r, done, info

    def stop_values(self) -> np.ndarray:
        """(B,) the reward-to-go of taking STOP now in each row (NaN where O5 is not due): the
        replay counterfactual "stop at this decision", evaluated on copies (``World.take``)."""
        w = self.world
        out = np.full(w.B, np.nan)
        rows = np.flatnonzero(w.phase == O5)
        if rows.size:
            out[rows] = w.take(rows).step(np.full(rows.size, w.heads.stop, dtype=np.int64))
        return out
