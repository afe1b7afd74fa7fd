"""Collect a two-family team corpus (issue 42; docs/team2-preregistration.md) on two local llama.cpp servers.

    python benchmarks/team2_collect.py OUT_DIR --tasks 80 --seed 900000      # the pilot
    python benchmarks/team2_collect.py OUT_DIR --tasks 1600 --seed 0         # the development corpus
    python benchmarks/team2_collect.py OUT_DIR --tasks 1200 --seed 500000    # the fresh set (after fitting)

Starts one server per model (SmolLM2-135M-Instruct, Gemma 3 270M base; one compute thread each),
runs the pre-registered team (:data:`orchestrace.collection.mixed_team.MIXED_TEAM`) over the cells
add:2, add:3, mentor:1, mentor:2, and writes OUT_DIR/traces.jsonl + manifest.json (resumable with
--resume). Prints the load average before and after, and the wall time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tasks", type=int, default=80)
    ap.add_argument("--seed", type=int, default=900000)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()

    from orchestrace.collection.mixed_team import MixedTeamConfig, collect_mixed_team
    from orchestrace.errors import OrchestraceError

    cfg = MixedTeamConfig(cells=(("add", 2), ("add", 3), ("mentor", 1), ("mentor", 2)), n_tasks=a.tasks,
                          seed=a.seed)
    print("load before:", Path("/proc/loadavg").read_text().strip(), flush=True)
    t0 = time.time()
    try:
        res = collect_mixed_team(cfg, a.out, resume=a.resume, concurrency=a.concurrency, threads=1,
                                 on_task=lambda d, n: print(f"{d}/{n} tasks {time.time() - t0:.0f} s", flush=True)
                                 if d % 10 == 0 else None)
    except OrchestraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"written {res.written} (already {res.already}), calls {res.calls}, wall {res.wall_s:.0f} s, "
          f"grader errors {len(res.errors)}")
    print("load after:", Path("/proc/loadavg").read_text().strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
