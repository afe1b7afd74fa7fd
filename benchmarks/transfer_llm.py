"""Transfer check: a policy trained on simulated workers, run with real LLM workers (local SmolLM2).

    python benchmarks/transfer_llm.py RUN [--episodes 8] [--suite arith]

Starts SmolLM2-135M-Instruct on xllamacpp (127.0.0.1, one thread), then plays the same task
seeds on ``Orchestrate-small-v1`` (the run's world at 2–3 subtasks, ≤ 3 rounds) with the
learned policy, the learned heads with a one-round budget, a base-heads threshold and the
adaptive heuristic — once with LLM workers, once with simulated workers — and prints success,
tokens, decisions and return side by side. A handful of episodes: a smoke-level transfer
check, not a claim (the CIs are wide; they are printed).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--suite", default="arith")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from orchestrace.env import OrchestrationEnv, make_baseline
    from orchestrace.evaluation.simulated import SameHeads, ci_mean, wilson
    from orchestrace.llm.envbackend import make_llm_workers
    from orchestrace.llm.local import LocalServer
    from orchestrace.policies.checkpoint import load_policy
    from orchestrace.trainers.envs import env_config_for

    learned = load_policy(a.run)
    cfg = env_config_for("small-v1", learned.env_set)
    pols = {"learned": learned,
            "learned+budget@1": SameHeads(cfg, learned, make_baseline("fixed-budget", cfg, rounds=1)),
            "base+threshold@0.7": SameHeads(cfg, None, make_baseline("threshold", cfg, threshold=0.7)),
            "adaptive": make_baseline("adaptive", cfg)}
    seeds = range(1_000_000_000, 1_000_000_000 + a.episodes)
    t0 = time.time()
    rows = []
    with LocalServer(threads=1, parallel=4, ctx=4096) as srv:
        print(f"local server up in {time.time() - t0:.1f} s ({srv.model})", flush=True)
        for name, pol in pols.items():
            for workers in ("llm", "sim"):
                res = {k: [] for k in ("success", "tokens", "decisions", "return")}
                for s in seeds:
                    env = OrchestrationEnv(cfg, env_id="orchestrace/Orchestrate-small-v1")
                    be = make_llm_workers(srv.base_url or "", srv.model, suite=a.suite, config=cfg) if workers == "llm" else None
                    if be is not None:
                        env.world.backend = be
                    if hasattr(pol, "bind"):
                        pol.bind(env)
                    obs, info = env.reset(seed=s)
                    done = False
                    while not done:
                        obs, _, done, _, info = env.step(pol.act(obs, info))
                    if be is not None:
                        be.workers.close()
                    for k in res:
                        res[k].append(float(info[k]))
                r = {k: np.array(v) for k, v in res.items()}
                succ = wilson(int(r["success"].sum()), len(r["success"]))
                ret = ci_mean(r["return"])
                rows.append((name, workers, succ, r["tokens"].mean(), r["decisions"].mean(), ret))
                print(f"{name:20s} {workers:3s} success {succ['mean']:.2f} [{succ['lo']:.2f}, {succ['hi']:.2f}]  "
                      f"tokens {r['tokens'].mean():7.0f}  decisions {r['decisions'].mean():5.1f}  "
                      f"return {ret['mean']:.3f} [{ret['lo']:.3f}, {ret['hi']:.3f}]", flush=True)
    print(f"\n{a.episodes} episodes per policy and worker kind, suite {a.suite}; wall clock {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
