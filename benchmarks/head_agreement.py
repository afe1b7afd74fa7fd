"""How often the cloned O1–O4 heads take the base heuristic's action, per round (docs/fitted-stop.md).

    python benchmarks/head_agreement.py RUN [RUN …] [--episodes 2000]

Each run's greedy policy plays held-out test seeds continuing at every O5 check (the paths
the protocol values); at every O1–O4 decision its action is compared with the environment's
base heuristic's action in the same state. Printed per run and round: decisions, the share
where they agree (Wilson 95 % interval), and per head (O1 fan-out, O2 profile, O3, O4).
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def agreement(run: str, episodes: int) -> dict[str, dict[str, list[float]]]:
    """{round: {head: [agree, total]}} over ``episodes`` held-out seeds."""
    import torch

    torch.set_num_threads(1)
    from orchestrace.env.baselines import BudgetPolicy
    from orchestrace.env.layout import CONTINUE, STOP, Phase
    from orchestrace.env.world import World
    from orchestrace.evaluation.simulated import _world
    from orchestrace.learn import load_policy
    from orchestrace.trainers.rollout import held_out_seeds

    pol = load_policy(run)
    _, _, cfg = _world(pol, None, ())
    base = BudgetPolicy(cfg, name="base")
    o5 = int(np.cumsum((0,) + tuple(cfg.head_sizes))[Phase.O5])
    seeds = held_out_seeds(episodes)
    table: dict[str, dict[str, list[float]]] = {}
    for lo in range(0, len(seeds), 1024):
        s = seeds[lo:lo + 1024]
        w = World(cfg, len(s))
        w.reset_rows(np.arange(len(s)), s.astype(np.uint64))
        while (w.phase < Phase.DONE).any():
            obs, mask = w.obs(), w.mask()
            a = pol.act_batch(obs, mask, w)
            b = base.base(w.summary_obs(), mask)
            live = w.phase < Phase.DONE
            for ph in (Phase.O1, Phase.O2, Phase.O3, Phase.O4):
                rows = live & (w.phase == ph)
                for r in np.unique(w.rnd[rows]):
                    sel = rows & (w.rnd == r)
                    cell = table.setdefault(str(int(r)), {}).setdefault(ph.name, [0.0, 0.0])
                    cell[0] += float((a[sel] == b[sel]).sum())
                    cell[1] += float(sel.sum())
            at5 = live & (w.phase == Phase.O5)
            a = np.where(at5, np.where(mask[:, o5 + CONTINUE], o5 + CONTINUE, o5 + STOP), a)
            w.step(np.where(live, a, 0))
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--episodes", type=int, default=2000)
    a = ap.parse_args()
    from orchestrace.evaluation.simulated import wilson

    out = {}
    for run in a.runs:
        t = agreement(run, a.episodes)
        out[run] = t
        print(f"{run} ({a.episodes} held-out seeds, always-continue paths)")
        print("| round | decisions | agree (95 % CI) | O1 | O2 | O3 | O4 |")
        print("|---|---|---|---|---|---|---|")
        for r in sorted(t, key=int):
            k = sum(v[0] for v in t[r].values())
            n = sum(v[1] for v in t[r].values())
            ci = wilson(int(k), int(n))
            heads = " | ".join(f"{100 * t[r][h][0] / t[r][h][1]:.1f} %" if h in t[r] and t[r][h][1] else "–"
                               for h in ("O1", "O2", "O3", "O4"))
            print(f"| {int(r) + 1} | {int(n):,} | {100 * ci['mean']:.1f} % [{100 * ci['lo']:.1f}, {100 * ci['hi']:.1f}] | {heads} |")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
