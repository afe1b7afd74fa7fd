"""The learner's view of :mod:`orchestrace.env`: batched env, head ranges, stop counterfactuals.

``make_batch_env(env_id, B)`` returns a lock-step batch with

- ``reset(seeds) -> (obs (B, D) float32, mask (B, A) bool)`` — slot i plays task ``seeds[i]``;
- ``step(actions (B,)) -> (obs, mask, reward (B,), done (B,), info)`` with per-episode numbers
  in ``info`` where ``done``;
- ``stop_values() -> (B,)``: the counterfactual return-to-go of taking STOP *now* (NaN where
  O5 is not due) — the environment's deterministic replay "stop at decision k", evaluated
  on a copy of the world state (``World.take``) so the real episodes are untouched.

It wraps :class:`orchestrace.env.BatchEnv` when present and otherwise drives the env's
vectorised :class:`~orchestrace.env.world.World` directly (same episodes: randomness is
addressed by (seed, subtask, attempt), so both paths agree with the single env).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BatchRunner", "env_config_for", "env_heads", "make_batch_env"]

_INFO_KEYS = ("success", "tokens", "critical_steps", "wall_clock_s", "decisions", "difficulty", "return",
              "safety_events", "rounds")


def env_config_for(env_id: str) -> Any:
    """The EnvConfig of a registered id (``small``/``default``/``industrial`` accepted)."""
    from ..env import config_for
    from .config import resolve_env_id

    return config_for(resolve_env_id(env_id))


def env_heads(env_id: str) -> tuple[int, dict[Any, tuple[int, int]]]:
    """``(obs_dim, heads)`` of an environment (heads = ``env.unwrapped.heads``)."""
    from ..env import OrchestrationEnv

    cfg = env_config_for(env_id)
    env = OrchestrationEnv(cfg, record_trace=False)
    return int(cfg.obs_dim), dict(env.heads)


class BatchRunner:
    """Lock-step batch of episodes over the env's vectorised world (see the module docstring)."""

    def __init__(self, config: Any, batch_size: int) -> None:
        from ..env.world import World

        self.config = config
        self.B = int(batch_size)
        self.world = World(config, self.B)
        self._o5 = int(np.cumsum((0,) + tuple(config.head_sizes))[4])

    def _ensure(self, b: int) -> None:
        if b != self.world.B:
            from ..env.world import World

            self.world = World(self.config, b)
            self.B = b

    def reset(self, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        seeds = np.asarray(seeds, dtype=np.int64)
        self._ensure(len(seeds))
        self.world.reset_rows(np.arange(len(seeds)), seeds.astype(np.uint64))
        return self.world.obs(), self.world.mask()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        from ..env.world import DONE

        w: Any = self.world
        live = w.phase < DONE
        a = np.asarray(actions, dtype=np.int64)
        m = w.mask()
        bad = live & ~m[np.arange(len(a)), np.clip(a, 0, m.shape[1] - 1)]
        if bad.any():
            from ..errors import IllegalActionError

            i = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(f"slot {i}: action {int(a[i])} is masked; legal: {np.flatnonzero(m[i]).tolist()}")
        rew = w.step(np.where(live, a, 0))
        done = live & (w.phase == DONE)
        info = {
            "success": w.success.copy(), "tokens": w.tokens.copy(), "critical_steps": w.crit.astype(np.float64),
            "wall_clock_s": w.clock.copy(), "decisions": w.ndec.copy(), "difficulty": w.dtask.copy(),
            "return": w.ret.copy(), "safety_events": w.safety.copy(), "rounds": w.rnd + 1,
        }
        return w.obs(), w.mask(), rew, done, info

    def stop_values(self) -> np.ndarray:
        """Counterfactual reward-to-go of STOP now, (B,); NaN where O5 is not due."""
        from ..env.world import O5

        w = self.world
        out = np.full(w.B, np.nan)
        rows = np.flatnonzero(w.phase == O5)
        if rows.size:
            cp = w.take(rows)
            out[rows] = cp.step(np.full(rows.size, self._o5, dtype=np.int64))
        return out


def make_batch_env(env_id: str, batch_size: int) -> tuple[BatchRunner, Any]:
    """A :class:`BatchRunner` for ``env_id`` and its EnvConfig."""
    cfg = env_config_for(env_id)
    return BatchRunner(cfg, batch_size), cfg
