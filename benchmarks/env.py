"""Environment speed: decisions/s (single env, BatchEnv) and one industrial episode with its trace.

    python benchmarks/env.py [--quick]

Prints medians over repeats, then — last — the ratios against the targets of issue 5:
≥ 50,000 decisions/s on the default configuration with the batched path; one industrial
episode (≈1,000 sub-agents, 20,000+ trace steps) ≤ 2 s including building its trace.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from orchestrace.env import BatchEnv, EnvConfig, OrchestrationEnv, make_baseline


def single_env(episodes: int) -> float:
    cfg = EnvConfig.default()
    env = OrchestrationEnv(cfg, record_trace=False)
    pol = make_baseline("random", cfg)
    n, t0 = 0, time.perf_counter()
    for s in range(episodes):
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
            n += 1
    return n / (time.perf_counter() - t0)


def batch_env(batch: int, steps: int, cfg: EnvConfig | None = None) -> float:
    cfg = cfg if cfg is not None else EnvConfig.default()
    be = BatchEnv(cfg, batch, seed=0, check_actions=True)
    obs, mask = be.reset()
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        a = (rng.random(mask.shape) * mask).argmax(1)  # random legal actions
        obs, mask, r, done, info = be.step(a)
    return batch * steps / (time.perf_counter() - t0)


def industrial(seed: int) -> tuple[float, int, int, int]:
    cfg = EnvConfig.industrial()
    env = OrchestrationEnv(cfg, env_id="orchestrace/Orchestrate-industrial-v0", record_trace=True)
    pol = make_baseline("fixed-budget", cfg, rounds=3)
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, done, _, info = env.step(pol.act(obs, info))
    tr = info["trace"]
    dt = time.perf_counter() - t0
    return dt, len(tr.events), len(tr.agents) - 1, info["decisions"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 3 if args.quick else 5
    single = statistics.median(single_env(30 if args.quick else 100) for _ in range(reps))
    batch = statistics.median(batch_env(1024, 50 if args.quick else 200) for _ in range(reps))
    batch_v1 = statistics.median(batch_env(1024, 50 if args.quick else 200, EnvConfig.default_v1()) for _ in range(reps))
    ind = [industrial(s) for s in range(reps)]
    ind_t = statistics.median(x[0] for x in ind)
    print(f"single env (default, random policy):      {single:12,.0f} decisions/s (median of {reps})")
    print(f"BatchEnv B=1024 (default, random legal):  {batch:12,.0f} decisions/s (median of {reps})")
    print(f"BatchEnv B=1024 (default-v1, evidence):   {batch_v1:12,.0f} decisions/s (median of {reps})")
    print(f"industrial episode incl. trace:           {ind_t:12.3f} s  (median of {reps}; "
          f"{statistics.median(x[1] for x in ind):,.0f} events, {statistics.median(x[2] for x in ind):,.0f} sub-agents, "
          f"{statistics.median(x[3] for x in ind):,.0f} decisions)")
    print(f"ratio batched / target 50,000 decisions/s: {batch / 50_000:.2f}x")
    print(f"ratio industrial target 2 s / measured:    {2.0 / ind_t:.2f}x")


if __name__ == "__main__":
    main()
