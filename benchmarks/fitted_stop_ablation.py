"""Single-seed ablation of the fitted stop (docs/fitted-stop.md): data size and fitting recipe.

    python benchmarks/fitted_stop_ablation.py RUN 7680:64:256:1e-3:3 30720:64:256:1e-3:3

``RUN`` is a training run (``orchestrace train --stop-update fitted --out RUN``) whose O1–O4
heads collect the paths. Each ``SPEC`` is ``paths:hidden:minibatch:lr:rounds``: a StopCritic
fitted on the first ``paths`` training paths (of 240 × 128 collected once and cached in
``bench-data/``), its margin chosen on the validation block, then scored with exact path
values on 2,000 held-out test tasks (seeds 1,000,000,000+) against "stop after round 1" and
the clairvoyant stop on the same paths. Printed per spec: held-out R², the gate's value and
at margin 0, the paired difference to stop-after-1 with its 95 % half-width, the share of the
clairvoyant gap closed, the share of checks that continue, and the fit's wall clock.
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

import numpy as np

from orchestrace._stats import Z975_ROUNDED


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="training run whose O1–O4 heads collect the paths")
    ap.add_argument("specs", nargs="+", help="paths:hidden:minibatch:lr:rounds")
    ap.add_argument("--cache", type=Path, default=Path("bench-data/fitted-stop-paths.pkl"))
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from orchestrace.learn import fitted_stop as fs
    from orchestrace.learn import load_policy
    from orchestrace.policies.neural import StopCritic
    from orchestrace.trainers.envs import env_config_for
    from orchestrace.trainers.rollout import train_seeds

    pol = load_policy(args.run).policy
    cfg = env_config_for("default-v1")
    if args.cache.exists():
        paths, val, test = pickle.loads(args.cache.read_bytes())
    else:
        t = time.perf_counter()
        paths = fs._concat([fs.collect_paths(cfg, pol, train_seeds(0, u, 128)) for u in range(240)])
        val = fs.collect_paths(cfg, pol, np.arange(fs.MARGIN_BASE, fs.MARGIN_BASE + 1024))
        test = fs.collect_paths(cfg, pol, np.arange(1_000_000_000, 1_000_000_000 + 2000))
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        args.cache.write_bytes(pickle.dumps((paths, val, test)))
        print(f"collected {len(paths.final)} training paths in {time.perf_counter() - t:.0f} s", flush=True)

    def first(p: fs.StopPaths, n: int) -> fs.StopPaths:
        keep = p.ep < n
        return fs.StopPaths(p.obs[keep], p.legal[keep], p.ep[keep], p.k[keep], p.payoff[keep], p.final[:n], p.seeds[:n])

    stop1 = fs.gate_value(test, np.zeros(len(test.ep), bool))
    clair = fs.clairvoyant_value(test)
    print(f"stop after round 1 {stop1.mean():.4f}; clairvoyant {clair.mean():.4f} (2,000 test tasks)")
    for spec in args.specs:
        n, hidden, batch, lr, rounds = spec.split(":")
        torch.manual_seed(0)
        critic = StopCritic(cfg.obs_dim, pol.layout, int(hidden))
        t0 = time.perf_counter()
        stats = fs.fit_stop(critic, first(paths, int(n)), val, seed=0, batch=int(batch), lr=float(lr),
                            iterations=int(rounds))
        pred = fs._predict(critic, test.obs, "cpu")
        margin = float(critic.margin)
        gate, gate0 = fs.gate_value(test, pred > margin), fs.gate_value(test, pred > 0)
        d = gate - stop1
        closed = (gate.mean() - stop1.mean()) / (clair.mean() - stop1.mean())
        print(f"{spec}: R² {stats['fitted/heldout_r2']:.3f}  gate {gate.mean():.4f} (margin 0: {gate0.mean():.4f})  "
              f"− stop after 1 {d.mean():+.4f} ± {Z975_ROUNDED * d.std() / np.sqrt(len(d)):.4f}  gap closed {closed:.0%}  "
              f"continues {(pred > margin)[test.legal].mean():.1%}  fit {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
