"""A batched environment whose rows live on Ray actors; the policy stays on the learner.

:class:`RayBatchEnv` implements :class:`orchestrace.env.batch.BatchedEnv`, the learner's seam
(``reset(seeds)``, ``step(actions)``, ``stop_values()``): its ``B`` rows are split into
contiguous shards, one :class:`~orchestrace.env.BatchEnv` per Ray actor, stepped in parallel;
observations, masks, rewards and infos are concatenated back in row order. :class:`RayEnvs` is
the :data:`~orchestrace.env.batch.EnvMaker` a training run takes (``train(cfg, out,
envs=RayEnvs(cluster))``; ``orchestrace train --ray N``): every batched env of the run — the
rollouts of every algorithm and the fitted stop's path collection — is then a RayBatchEnv.

Why the policy runs on the driver: one forward pass over all rows with one random stream is
what the one-process learner does, so the sampled actions — and therefore the rollout, the
gradients and the checkpoint — are bit-identical to the run without Ray, whatever the number
of actors. Each row of the world is a function of its task seed and its actions alone, so
where a row is simulated does not change it.

Faults: an actor that dies is replaced, and its shard is rebuilt by deterministic replay
(reset with the same seeds, then the actions taken since) before the call is repeated, so no
step is lost or applied twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._rollout import shards

__all__ = ["RayBatchEnv", "RayEnvs", "ray_player"]


class _EnvShard:
    """The actor: one BatchEnv over a shard of the rows (no auto-reset)."""

    def __init__(self, config: Any) -> None:
        from ..env import BatchEnv

        self.env = BatchEnv(config, 1, auto_reset=False)

    def pid(self) -> int:
        import os

        return os.getpid()

    def reset(self, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.env.reset(seeds=seeds)

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        return self.env.step(actions)

    def stop_values(self) -> np.ndarray:
        return self.env.stop_values()


class RayBatchEnv:
    """``B`` rows over ``cluster.workers`` Ray actors (see the module docstring).

    ``reset(seeds)`` sizes the batch to ``len(seeds)``; ``step(a)`` returns
    ``(obs (B, D), mask (B, A), r (B,), done (B,), info)`` exactly as ``BatchEnv`` does.
    """

    def __init__(self, config: Any, batch_size: int, cluster: Any, *, max_restarts: int = 3) -> None:
        self.config, self.B, self.cluster = config, int(batch_size), cluster
        self.ray = cluster.ray
        self.max_restarts = max_restarts
        self.restarts = 0
        self._cls = self.ray.remote(num_cpus=1, max_restarts=0)(_EnvShard)
        self.actors: list[Any] = [self._cls.remote(config) for _ in range(cluster.workers)]
        self._rows: list[range] = []
        self._seeds: list[np.ndarray] = []
        self._log: list[list[np.ndarray]] = []
        #: calls of :meth:`reset` and :meth:`step` so far (what a run stepped here, not locally)
        self.resets = 0
        self.steps = 0

    # -- plumbing ------------------------------------------------------------------------
    def _replace(self, i: int) -> None:
        """A fresh actor for shard ``i``, brought back to the current step by replay."""
        self.restarts += 1
        if self.restarts > self.max_restarts:
            from ..errors import OrchestraceError

            raise OrchestraceError(f"Ray env actors died {self.restarts} times; giving up (check the cluster's "
                                   "memory and logs)")
        self.actors[i] = self._cls.remote(self.config)
        if i < len(self._seeds):
            self.ray.get(self.actors[i].reset.remote(self._seeds[i]))
            for a in self._log[i]:
                self.ray.get(self.actors[i].step.remote(a))

    def _call(self, method: str, args: list[tuple[Any, ...]]) -> list[Any]:
        """Call ``method`` on every shard's actor in parallel; a dead actor is replaced and retried."""
        from ray.exceptions import RayActorError

        n = len(args)
        refs = [getattr(self.actors[i], method).remote(*args[i]) for i in range(n)]
        out: list[Any] = []
        for i, ref in enumerate(refs):
            while True:
                try:
                    out.append(self.ray.get(ref))
                    break
                except RayActorError:
                    self._replace(i)
                    ref = getattr(self.actors[i], method).remote(*args[i])
        return out

    # -- the BatchEnv interface ------------------------------------------------------------
    def reset(self, seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if seeds is None:
            seeds = np.arange(self.B, dtype=np.int64)
        seeds = np.asarray(seeds, dtype=np.int64).reshape(-1)
        self.B = len(seeds)
        self._rows = shards(self.B, len(self.actors))
        self._seeds = [seeds[r.start:r.stop] for r in self._rows]
        self._log = [[] for _ in self._rows]
        self.resets += 1
        parts = self._call("reset", [(s,) for s in self._seeds])
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        a = np.asarray(actions, np.int64).reshape(self.B)
        pieces = [a[r.start:r.stop].copy() for r in self._rows]
        parts = self._call("step", [(p,) for p in pieces])
        for log, p in zip(self._log, pieces, strict=True):
            log.append(p)
        self.steps += 1
        info = {k: np.concatenate([p[4][k] for p in parts]) for k in parts[0][4]}
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]), info)

    def stop_values(self) -> np.ndarray:
        return np.concatenate(self._call("stop_values", [() for _ in self._rows]))

    def close(self) -> None:
        """Release the actors."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


class RayEnvs:
    """The :data:`~orchestrace.env.batch.EnvMaker` of a run on Ray: ``envs(config, B)`` is a
    :class:`RayBatchEnv` over the cluster's workers; :meth:`close` releases every env it made.
    ``made`` lists them (their ``steps`` say how much was stepped on the cluster)."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.made: list[RayBatchEnv] = []

    def __call__(self, config: Any, batch_size: int) -> RayBatchEnv:
        env = RayBatchEnv(config, batch_size, self.cluster)
        self.made.append(env)
        return env

    def close(self) -> None:
        """Release the actors of every env made."""
        for env in self.made:
            env.close()


def _play_item(item: tuple[Any, Any, np.ndarray]) -> dict[str, np.ndarray]:
    """The Ray task of ``eval --ray``: the batched evaluator on one shard of the seeds."""
    from ..env.baselines import evaluate as run_batch

    cfg, policy, seeds = item
    return run_batch(cfg, policy, seeds)


def ray_player(cluster: Any, *, parts_per_worker: int = 1) -> Any:
    """A ``play(cfg, policy, seeds)`` for :func:`orchestrace.evaluation.simulated.players`: the seeds
    split into contiguous shards evaluated as Ray tasks, the per-episode arrays concatenated in
    seed order (every episode depends on its seed alone). The uniform-random baseline is the
    exception: it draws one random stream across the whole batch, so its rows depend on the
    batch they are in; it is played here, in one piece (it is also the cheapest to play)."""

    def play(cfg: Any, policy: Any, seeds: np.ndarray) -> dict[str, np.ndarray]:
        seeds = np.asarray(seeds, dtype=np.int64)
        if getattr(policy, "name", "") == "random":
            from ..env.baselines import evaluate as run_batch

            return run_batch(cfg, policy, seeds)
        parts = shards(len(seeds), parts_per_worker * cluster.workers)
        outs = cluster.map(_play_item, [(cfg, policy, seeds[r.start:r.stop]) for r in parts])
        return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}

    return play
