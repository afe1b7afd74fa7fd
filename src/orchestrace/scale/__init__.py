"""Scale out on Ray (``pip install 'orchestrace[ray]'``): rollouts, training and trace datasets.

Importing this package does not import Ray; :func:`connect` does. Everything here keeps one
rule: the distributed result is the one-process result, byte for byte — work is split into
pure shards (a shard's output depends on its items alone), Ray runs them (retrying a shard
whose worker died), and the driver puts the outputs back in item order.

- :func:`connect` / :class:`Cluster` — join or start a cluster; ``Cluster.map`` runs shards;
- :class:`EpisodeJob`, :func:`run_shard`, :func:`shards` — the episodes of ``env run``;
- :class:`RayBatchEnv` — a ``BatchEnv`` whose rows live on Ray actors; :class:`RayEnvs` makes
  them for a training run (``train --ray``: ``learn.train(cfg, out, envs=RayEnvs(cluster))``);
- :class:`MeasureJob`, :func:`measure_partition`, :func:`partitions` — dataset measures by
  trace-aligned partitions (``metrics`` / ``validate`` / ``reward`` / ``credit --ray``);
- :func:`break_even_s`, :func:`should_distribute`, :func:`ray_decision` — below the break-even
  work, one process (and the note that says so).

See ``docs/scale.md``.
"""

from __future__ import annotations

from ._batchenv import RayBatchEnv, RayEnvs, ray_player
from ._cluster import (
    RAY_START_S,
    RAY_TASK_S,
    Cluster,
    break_even_s,
    check_request,
    connect,
    ray_decision,
    ray_running,
    should_distribute,
)
from ._dataset import MeasureJob, measure_partition, partitions, write_parts
from ._rollout import EpisodeJob, ShardResult, run_shard, shards
from ._rollout import (
    _run_item as run_item,  # the Ray task of ``env run`` (pickled by its module name)
)

__all__ = [
    "RAY_START_S",
    "RAY_TASK_S",
    "Cluster",
    "EpisodeJob",
    "MeasureJob",
    "RayBatchEnv",
    "RayEnvs",
    "ShardResult",
    "break_even_s",
    "check_request",
    "connect",
    "measure_partition",
    "partitions",
    "ray_decision",
    "ray_player",
    "ray_running",
    "run_item",
    "run_shard",
    "write_parts",
    "shards",
    "should_distribute",
]
