"""A Ray worker process killed mid-run: its shard is retried, nothing is lost or duplicated,
and the output is still byte-identical to the one-process run."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrace.env import config_for, make_baseline
from orchestrace.scale import Cluster, EpisodeJob, run_shard, shards

ENV = "orchestrace/Orchestrate-small-v0"


def _die_once_then_run(item: tuple[Path, EpisodeJob, list[int]]) -> Any:
    """Kill this worker process (no cleanup, as a crash or an OOM kill) the first time a shard runs."""
    marker, job, seeds = item
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    from orchestrace.scale._rollout import run_shard as rs

    return rs(job, seeds)


def test_killed_worker_is_retried_and_output_is_identical(ray_cluster: Any, tmp_path: Path) -> None:
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import the tests
    job = EpisodeJob(ENV, (), make_baseline("random", config_for(ENV)), "random")
    seeds = list(range(100, 116))
    parts = shards(len(seeds), 4)
    # shards 1 and 3 lose their worker on the first attempt
    items = [(tmp_path / f"m{i}" if i in (1, 3) else tmp_path, job, [seeds[j] for j in r])
             for i, r in enumerate(parts)]
    cluster = Cluster(ray_cluster, 2, owns=False)
    got = cluster.map(_die_once_then_run, items, retries=2)
    assert (tmp_path / "m1").exists() and (tmp_path / "m3").exists()  # the crashes did happen
    blobs = [b for part in got for b in part.blobs]
    assert len(blobs) == len(seeds)
    assert b"".join(blobs) == b"".join(run_shard(job, seeds).blobs)


def test_no_retries_left_is_an_error_not_a_silent_gap(ray_cluster: Any, tmp_path: Path) -> None:
    ray_cluster.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    job = EpisodeJob(ENV, (), make_baseline("threshold", config_for(ENV)), "threshold")
    cluster = Cluster(ray_cluster, 2, owns=False)
    with pytest.raises(Exception, match="(?i)worker|died|crash|exit"):
        cluster.map(_die_once_then_run, [(tmp_path / "m", job, [1, 2])], retries=0)
