"""The env ↔ learner seam's cost: one observation and one batched decision, in this checkout or another.

    python benchmarks/seam.py [--reps 7] [--src PATH_A --src PATH_B ...]

Without ``--src`` it measures the importable ``orchestrace``. With several ``--src`` (source
trees, e.g. the main branch's ``src`` and this branch's), each repeat runs one fresh process
per tree, alternating, so that both see the same machine load; it prints each tree's medians
and, for every tree after the first, the paired ratio to the first with a 95 % interval
(t interval over the per-repeat log-ratios). Times are the process's CPU time
(``time.process_time``), which a machine shared with other jobs disturbs far less than the
wall clock.

Measured per process:

* ``summary_obs v1 B=1`` — µs per ``World.summary_obs()`` call in the ``evidence`` world
  (the rules' features; it used to build and validate a fresh EnvConfig on every call);
* ``obs v1 B=1`` — µs per ``World.obs()`` (the evidence observation) call;
* ``BatchEnv default`` / ``BatchEnv v1`` — decisions/s of ``BatchEnv.step`` at B = 1,024 with
  random legal actions (as ``benchmarks/env.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

KEYS = ("summary_obs v1 B=1 (us)", "obs v1 B=1 (us)", "BatchEnv default (dec/s)", "BatchEnv v1 (dec/s)")


def measure() -> dict[str, float]:
    """One process's numbers (see the module docstring)."""
    import numpy as np

    from orchestrace.env import BatchEnv, EnvConfig
    from orchestrace.env.world import World

    out: dict[str, float] = {}
    v1 = EnvConfig.default_v1()
    w = World(v1, 1)
    w.reset_rows(np.arange(1), np.array([7], dtype=np.uint64))
    for key, fn in (("summary_obs v1 B=1 (us)", w.summary_obs), ("obs v1 B=1 (us)", w.obs)):
        fn()
        n, t0 = 2000, time.process_time()
        for _ in range(n):
            fn()
        out[key] = (time.process_time() - t0) / n * 1e6
    for key, cfg in (("BatchEnv default (dec/s)", EnvConfig.default()), ("BatchEnv v1 (dec/s)", v1)):
        be = BatchEnv(cfg, 1024, seed=0)
        obs, mask = be.reset()
        rng = np.random.default_rng(0)
        steps, t0 = 40, time.process_time()
        for _ in range(steps):
            a = (rng.random(mask.shape) * mask).argmax(1)
            obs, mask, r, done, info = be.step(a)
        out[key] = 1024 * steps / (time.process_time() - t0)
    return out


def _t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (table; normal beyond 30).

    Not ``orchestrace._stats.t975`` (6 decimals, Cornish–Fisher beyond 30): this benchmark's published
    intervals (docs/seam.md) were computed with this 3-decimal table, and stay reproducible with it."""
    table = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
             2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
             2.045, 2.042)
    return table[df - 1] if 1 <= df <= len(table) else 1.96


def _run(src: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src}
    res = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True,
                         cwd="/")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--src", action="append", default=[])
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    trees = args.src or [""]
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    for _ in range(args.reps):
        for t in trees:
            runs[t].append(_run(t) if t else measure())
    for t in trees:
        print(f"{t or 'this checkout'} (median of {args.reps}):")
        for k in KEYS:
            print(f"  {k:28s} {statistics.median(r[k] for r in runs[t]):12,.1f}")
    base = trees[0]
    for t in trees[1:]:
        print(f"{t} / {base}: ratio of medians and paired 95 % interval of the ratio")
        for k in KEYS:
            lr = [math.log(b[k] / a[k]) for a, b in zip(runs[base], runs[t], strict=True)]
            m = statistics.mean(lr)
            half = _t975(len(lr) - 1) * statistics.stdev(lr) / math.sqrt(len(lr)) if len(lr) > 1 else float("nan")
            print(f"  {k:28s} {math.exp(m):6.3f}  [{math.exp(m - half):.3f}, {math.exp(m + half):.3f}]")


if __name__ == "__main__":
    main()
