"""Episodes to JSONL traces, as pure shards: the one code path of ``env run``, with or without Ray.

An :class:`EpisodeJob` says which world, policy and workers; :func:`run_shard` plays the job on a
list of task seeds and returns each episode's JSONL bytes. Every episode depends on its seed
alone (the policy's ``start_episode(seed)`` re-seeds stateful rules such as ``random``, and a
fresh environment state is drawn from the seed), so splitting the seeds into shards and
concatenating the shards' bytes in seed order gives the single-process file byte for byte,
whatever the number of workers and whichever shard a retry re-ran.

>>> from orchestrace.env import config_for, make_baseline
>>> cfg = config_for("orchestrace/Orchestrate-small-v0")
>>> job = EpisodeJob("orchestrace/Orchestrate-small-v0", (), make_baseline("random", cfg), "random")
>>> whole = run_shard(job, [0, 1, 2, 3])
>>> halves = [run_shard(job, [0, 1]), run_shard(job, [2, 3])]
>>> whole.blobs == halves[0].blobs + halves[1].blobs
True
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EpisodeJob", "ShardResult", "run_shard", "shards"]


@dataclass(frozen=True)
class EpisodeJob:
    """What to play: a world (``env_id`` + ``--set`` overrides), a policy object, its name in the
    traces, and optionally a picklable factory ``llm(config) -> backend`` of the LLM worker
    backend (e.g. a ``functools.partial`` of ``orchestrace.llm.envbackend.make_llm_workers``), called inside
    each worker process so that every shard has its own connections."""

    env_id: str
    env_set: tuple[str, ...]
    policy: Any
    policy_name: str
    llm: Callable[..., Any] | None = None


@dataclass
class ShardResult:
    """Per episode, in seed order: the JSONL bytes of its trace, success and return; plus the
    LLM backend's failure counts (empty with simulated workers)."""

    blobs: list[bytes] = field(default_factory=list)
    success: list[bool] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    llm_calls_all_failed: bool = False


def shards(n: int, parts: int) -> list[range]:
    """Split ``range(n)`` into ``parts`` contiguous, nearly equal, non-empty ranges (fewer if n < parts).

    >>> [list(r) for r in shards(5, 2)]
    [[0, 1, 2], [3, 4]]
    >>> sum(len(r) for r in shards(1000, 7)), len(shards(3, 8))
    (1000, 3)
    """
    parts = max(1, min(parts, n))
    q, r = divmod(n, parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + q + (i < r)
        out.append(range(lo, hi))
        lo = hi
    return out


def run_shard(job: EpisodeJob, seeds: Sequence[int], progress: Any = None) -> ShardResult:
    """Play ``job`` once per seed, in order; ``progress()`` (optional) is called after each episode."""
    from ..core.io import dumps
    from ..env import OrchestrationEnv, config_for

    cfg = config_for(job.env_id).with_overrides(list(job.env_set))
    env = OrchestrationEnv(cfg, env_id=job.env_id, policy_name=job.policy_name, env_set=list(job.env_set),
                           record_trace=True)
    backend = None
    if job.llm is not None:
        backend = job.llm(config=cfg)
        env.world.backend = backend
    pol = copy.copy(job.policy)  # bound to this shard's env only: the job stays picklable
    if hasattr(pol, "bind"):
        pol.bind(env)
    start = getattr(pol, "start_episode", None)
    res = ShardResult()
    try:
        for s in seeds:
            if start is not None:
                start(int(s))
            obs, info = env.reset(seed=int(s))
            done = False
            while not done:
                obs, _, done, _, info = env.step(pol.act(obs, info))
            res.blobs.append(dumps(info["trace"], format="jsonl"))
            res.success.append(bool(info["success"]))
            res.returns.append(float(info["return"]))
            if progress is not None:
                progress()
    finally:
        if backend is not None:
            backend.workers.close()
    if backend is not None:
        res.failures = backend.failures()
        res.llm_calls_all_failed = backend.all_failed()
    return res


def _run_item(item: tuple[EpisodeJob, list[int]]) -> ShardResult:
    """The Ray task: one shard (module level, so workers import it by name)."""
    job, seeds = item
    return run_shard(job, seeds)
