"""``train --ray N`` and ``eval --ray N``: the learner on the driver, the episodes on Ray; the
checkpoint and the evaluation results are bit-identical to the run without Ray. A Ray env
actor killed mid-rollout is replaced by replay and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

pytest.importorskip("torch", reason="torch is not installed (pip install 'orchestrace[learn]')")

runner = CliRunner()
TINY = ["--env", "small", "--steps", "2", "--episodes-per-step", "8", "--group-size", "4",
        "--warm-start-episodes", "16", "--warm-start-steps", "3", "--eval-every", "0", "--num-threads", "1", "-q"]


def _rows(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("train") / "plain"
    res = runner.invoke(app, ["train", *TINY, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize("algo", ["grpo", "ppo"])
def test_train_on_ray_gives_the_same_checkpoint(ray_cluster: Any, plain_run: Path, tmp_path: Path,
                                                algo: str) -> None:
    ref = plain_run
    if algo != "grpo":
        ref = tmp_path / "plain"
        assert runner.invoke(app, ["train", *TINY, "--algo", algo, "--out", str(ref)]).exit_code == 0
    out = tmp_path / "ray"
    res = runner.invoke(app, ["train", *TINY, "--algo", algo, "--ray", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    for name in ("checkpoint.pt", "policy.pt", "config.json"):
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    assert _rows(out) == _rows(ref)


def test_eval_on_ray_gives_the_same_results(ray_cluster: Any, plain_run: Path, tmp_path: Path) -> None:
    args = ["eval", str(plain_run), "-n", "6", "--validation", "4", "--traces", "0", "--no-oracle-all", "-q"]
    one = runner.invoke(app, [*args, "-o", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    two = runner.invoke(app, [*args, "--ray", "2", "-o", str(tmp_path / "two")])
    assert two.exit_code == 0, two.output
    assert (tmp_path / "two" / "summary.md").read_text() == (tmp_path / "one" / "summary.md").read_text()
    a, b = np.load(tmp_path / "one" / "episodes.npz"), np.load(tmp_path / "two" / "episodes.npz")
    assert sorted(a.files) == sorted(b.files) and len(a.files) > 10
    for k in a.files:
        assert np.array_equal(a[k], b[k], equal_nan=True), k
    ra, rb = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("one", "two"))
    for k in ("eval_seconds", "timing"):  # wall-clock measurements of the run, not its results
        ra.pop(k, None), rb.pop(k, None)
    assert ra == rb


def test_killed_env_actor_is_replayed(ray_cluster: Any) -> None:
    from orchestrace.env import BatchEnv, config_for
    from orchestrace.scale import Cluster
    from orchestrace.scale._batchenv import RayBatchEnv

    cfg = config_for("orchestrace/Orchestrate-small-v0")
    seeds = np.arange(50, 60)
    ref = BatchEnv(cfg, 1, auto_reset=False)
    env = RayBatchEnv(cfg, 1, Cluster(ray_cluster, 2, owns=False))
    try:
        o1, m1 = ref.reset(seeds=seeds)
        o2, m2 = env.reset(seeds=seeds)
        rng = np.random.default_rng(0)
        for step in range(40):
            assert np.array_equal(o1, o2) and np.array_equal(m1, m2)
            if not m1.any():
                break
            a = (rng.random(m1.shape) * m1).argmax(1)
            if step == 3:  # a worker dies between two steps
                ray_cluster.kill(env.actors[1], no_restart=True)
            o1, m1, r1, d1, i1 = ref.step(a)
            o2, m2, r2, d2, i2 = env.step(a)
            assert np.array_equal(r1, r2) and np.array_equal(d1, d2)
            assert all(np.array_equal(i1[k], i2[k]) for k in i1)
            if step > 3:
                assert np.array_equal(env.stop_values(), ref.stop_values(), equal_nan=True)
        assert env.restarts == 1
    finally:
        env.close()


def test_train_with_too_many_workers_exits_2(ray_cluster: Any, tmp_path: Path) -> None:
    res = runner.invoke(app, ["train", *TINY, "--ray", "5", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "use --ray 2 or fewer" in res.output
    assert not (tmp_path / "r" / "checkpoint.pt").exists()
