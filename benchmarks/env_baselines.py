"""Baselines, oracle and the adaptive rule on the default configuration, with 95% CIs.

    python benchmarks/env_baselines.py [--episodes 500] [--seed0 100000] [--json out.json]

Each policy plays the same held-out seeds in the single env (traces built); wasted work is
``waste/events`` of :mod:`orchestrace.analysis.measures` on each trace. CI = mean ± 1.96·sd/√n.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from orchestrace._stats import Z975_ROUNDED
from orchestrace.analysis.measures import compute
from orchestrace.env import EnvConfig, OrchestrationEnv, make_baseline

POLICIES = [
    ("random", {}), ("fixed-fanout", {}), ("greedy", {}), ("always-continue", {}),
    *[("fixed-budget", {"rounds": b}) for b in range(1, 6)],
    *[("threshold", {"threshold": t}) for t in (0.6, 0.7, 0.8)],
    ("adaptive", {}), ("oracle", {"heads": "stop"}), ("oracle", {"heads": "all"}),
]


def run(name: str, kw: dict, seeds: range) -> dict[str, np.ndarray]:
    cfg = EnvConfig.default()
    env = OrchestrationEnv(cfg, policy_name=name, record_trace=True)
    pol = make_baseline(name, cfg, **kw).bind(env)
    rows = []
    for s in seeds:
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
        m = compute(info["trace"]).metrics
        rows.append((info["success"], info["tokens"], info["critical_steps"], m["waste/events"], info["return"],
                     info["decisions"], info["difficulty"], info["wall_clock_s"]))
    a = np.array(rows, dtype=float)
    keys = ["success", "tokens", "critical_steps", "wasted_events", "return", "decisions", "difficulty", "wall_clock_s"]
    return {k: a[:, i] for i, k in enumerate(keys)}


def ci(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(Z975_ROUNDED * x.std(ddof=1) / np.sqrt(len(x)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=500)
    ap.add_argument("--seed0", type=int, default=100_000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    seeds = range(args.seed0, args.seed0 + args.episodes)
    res, out = {}, {}
    for name, kw in POLICIES:
        label = name + "".join(f"[{k}={v}]" for k, v in kw.items())
        t0 = time.perf_counter()
        res[label] = r = run(name, kw, seeds)
        out[label] = {k: ci(v) for k, v in r.items() if k != "difficulty"}
        easy, hard = r["difficulty"] < 0.3, r["difficulty"] >= 0.7
        out[label]["decisions_easy"] = ci(r["decisions"][easy])
        out[label]["decisions_hard"] = ci(r["decisions"][hard])
        print(f"{label:32s} " + "  ".join(f"{k} {m:.3f}±{h:.3f}" if k in ("success", "return") else f"{k} {m:.1f}±{h:.1f}"
                                          for k, (m, h) in out[label].items()) + f"  ({time.perf_counter() - t0:.0f}s)", flush=True)
    fb = {k: v for k, v in res.items() if k.startswith("fixed-budget")}
    best = max(fb, key=lambda k: fb[k]["return"].mean())
    ad, orc = res["adaptive"], res["oracle[heads=stop]"]
    print(f"best fixed budget by return: {best}")
    print(f"adaptive: return/oracle(stop) {ad['return'].mean() / orc['return'].mean():.3f}; tokens vs best budget "
          f"{ad['tokens'].mean() / fb[best]['tokens'].mean() - 1:+.3f}; success − best budget "
          f"{ad['success'].mean() - fb[best]['success'].mean():+.3f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
