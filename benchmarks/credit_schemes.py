"""Credit schemes side by side on a stopping problem with known true advantages (issue 40 item 3).

    python benchmarks/credit_schemes.py [--quick] [--out benchmarks/credit_schemes_results.json]
                                        [--picture docs/credit-schemes.png]

The problem is :class:`orchestrace.credit.stopping_problem.StoppingProblem` (defaults: 8 answers,
cost 0.01 per extra answer, hidden worker accuracy 0.55 / 0.65 / 0.8): the policy decides when
to stop, so episode lengths depend on it (O5), and ``A(s, a)`` is exact.

1. **Bias.** For two fixed policies (uniform; "shaped": continue while the vote is close,
   ``θ_s = 1.5 − d``), each seed runs ``--tasks`` GRPO groups (8 episodes of one task) and
   compares the Monte Carlo mean advantage per ``(s, a)`` with ``A(s, a)``
   (:func:`~orchestrace.credit.stopping_problem.estimator_bias`): raw mean abs error, relative
   bias of the state-centred mean after the best positive scale, sign agreement, correlation;
   mean and 95 % t-interval over seeds. Scale ``none`` (mean baselines) is the main table;
   ``std`` (GRPO's division by the group std) is reported beside it. Then the uniform policy at
   25k, 100k and 400k groups (3 seeds): an unbiased estimator's error falls like 1/√N, a
   biased one's stays.
2. **Learning speed.** A tabular policy from θ = 0, the same updates for every scheme
   (8 tasks × 8 episodes per update; lr 10, 20, 40 with scale none, and lr 0.5 with GRPO's std
   scale), every seed; ``J`` exact after each update. Target: exact credit reaches the best other
   scheme's final return (mean ``J`` of its last 10 % of updates) in ≤ ½ of the updates.

Writes a JSON of every number and a picture (matplotlib, imported only here). Machine load is
recorded before and after (``/proc/loadavg``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from orchestrace._stats import t_interval
from orchestrace.credit.schemes import CreditScheme
from orchestrace.credit.stopping_problem import StoppingProblem, estimator_bias, train_tabular

SCHEMES = tuple(s.value for s in CreditScheme)
METRICS = ("mae", "rel_bias", "sign", "corr")
#: (learning rate, advantage scale) of each learning run; the first is the main one (the picture).
RUNS = ((10.0, "none"), (20.0, "none"), (40.0, "none"), (0.5, "std"))
MAIN = "lr10_none"


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown"


def bias_study(problem: StoppingProblem, seeds: int, tasks: int) -> dict:
    policies = {"uniform": np.zeros(len(problem.states)),
                "shaped": np.array([1.5 - d for _, d in problem.states], float)}
    out: dict = {}
    for name, theta in policies.items():
        out[name] = {"J": problem.true_values(theta)[3]}
        for scale in ("none", "std"):
            per_seed = [estimator_bias(problem, theta, SCHEMES, tasks=tasks, seed=s, scale=scale)
                        for s in range(seeds)]
            table = {}
            for j, sch in enumerate(SCHEMES):
                rows = [r[j] for r in per_seed]
                table[sch] = {m: {"seeds": [getattr(r, m) for r in rows], **t_interval([getattr(r, m) for r in rows])}
                              for m in METRICS}
                table[sch]["cells"] = [r.cells for r in rows]
            out[name][scale] = table
    return out


def convergence_study(problem: StoppingProblem, sizes: tuple[int, ...], seeds: int) -> dict:
    """Relative bias against the number of groups (uniform policy): noise shrinks like 1/√N, bias stays."""
    theta = np.zeros(len(problem.states))
    out: dict = {"tasks": list(sizes)}
    runs = [[estimator_bias(problem, theta, SCHEMES, tasks=n, seed=100 + s) for s in range(seeds)] for n in sizes]
    for j, sch in enumerate(SCHEMES):
        out[sch] = [{"seeds": [r[j].rel_bias for r in per], **t_interval([r[j].rel_bias for r in per])}
                    for per in runs]
    return out


def learning_study(problem: StoppingProblem, seeds: int, updates: int, lr: float, scale: str) -> dict:
    curves = {sch: [train_tabular(problem, sch, updates=updates, seed=s, lr=lr, scale=scale).tolist()
                    for s in range(seeds)] for sch in SCHEMES}
    tail = max(updates // 10, 1)
    final = {sch: [float(np.mean(c[-tail:])) for c in cs] for sch, cs in curves.items()}
    per_seed = []
    for s in range(seeds):
        others = {sch: final[sch][s] for sch in SCHEMES if sch != "exact"}
        best = max(others, key=others.get)
        target = others[best]
        curve = np.asarray(curves["exact"][s])
        hit = np.flatnonzero(curve >= target)
        reach = int(hit[0]) if hit.size else None
        improved = target > curve[0]  # else there is no learning to match (met: None)
        per_seed.append({"seed": s, "best_other": best, "target": target, "start": float(curve[0]),
                         "exact_updates_to_target": reach if improved else None,
                         "ratio": None if reach is None or not improved else reach / updates,
                         "met": (reach is not None and reach <= updates / 2) if improved else None})
    every = 5  # the JSON keeps every 5th update of each curve (the numbers above use all of them)
    kept = list(range(0, updates + 1, every)) + ([updates] if updates % every else [])
    return {"lr": lr, "scale": scale, "curve_updates": kept,
            "curves": {k: [[round(c[u], 5) for u in kept] for c in cs] for k, cs in curves.items()},
            "final": {k: {"seeds": v, **t_interval(v)} for k, v in final.items()},
            "per_seed": per_seed, "target_met_every_seed": all(p["met"] is True for p in per_seed)}


def picture(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a0, a2, a1) = plt.subplots(1, 3, figsize=(16, 4.4))
    x = np.arange(len(SCHEMES))
    for k, (pol, off) in enumerate((("uniform", -0.18), ("shaped", 0.18))):
        t = res["bias"][pol]["none"]
        m = [t[s]["rel_bias"]["mean"] for s in SCHEMES]
        err = [[t[s]["rel_bias"]["mean"] - t[s]["rel_bias"]["lo"] for s in SCHEMES],
               [t[s]["rel_bias"]["hi"] - t[s]["rel_bias"]["mean"] for s in SCHEMES]]
        a0.bar(x + off, m, 0.36, yerr=err, capsize=3, label=f"policy: {pol}", color=("C0", "C1")[k])
        for xi, sch in zip(x, SCHEMES, strict=True):
            a0.text(xi + off, t[sch]["rel_bias"]["hi"] + 0.01, f"r={t[sch]['corr']['mean']:.2f}", ha="center",
                    fontsize=7)
    a0.set_xticks(x, SCHEMES)
    a0.set_ylabel("relative bias vs true A(s,a)  (0 = unbiased)")
    a0.set_title("bias vs true A(s,a) (95% CI, 5 seeds; r = correlation)", fontsize=10)
    a0.legend()
    conv = res["convergence"]
    for k, sch in enumerate(SCHEMES):
        m = np.array([c["mean"] for c in conv[sch]])
        lo = np.maximum([c["lo"] for c in conv[sch]], m / 3)  # a log axis: clip an interval reaching 0
        a2.errorbar(conv["tasks"], m, yerr=[m - lo, [c["hi"] for c in conv[sch]] - m],
                    marker="o", color=f"C{k}", label=sch, capsize=3)
    a2.set_xscale("log")
    a2.set_yscale("log")
    a2.set_xticks(conv["tasks"], [f"{n // 1000}k" for n in conv["tasks"]])
    a2.minorticks_off()
    a2.set_xlabel("GRPO groups (8 episodes of one task), uniform policy")
    a2.set_ylabel("relative bias (log)")
    a2.set_title("noise shrinks with samples, bias stays")
    a2.legend(fontsize=8)
    for k, sch in enumerate(SCHEMES):
        cs = np.asarray(res["learning"][MAIN]["curves"][sch])
        u = res["learning"][MAIN]["curve_updates"]
        for c in cs:
            a1.plot(u, c, color=f"C{k}", alpha=0.25, lw=0.7)
        a1.plot(u, cs.mean(0), color=f"C{k}", lw=2, label=sch)
    a1.axhline(res["problem"]["J_optimal"], color="k", ls="--", lw=1, label="optimal J*")
    a1.set_xlabel("update (8 tasks x 8 episodes)")
    a1.set_ylabel("expected return J (exact)")
    a1.set_title("tabular policy gradient, same updates per scheme (lr 10)")
    a1.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few seeds and tasks (a smoke run)")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("credit_schemes_results.json"))
    ap.add_argument("--picture", type=Path, default=Path(__file__).parents[1] / "docs" / "credit-schemes.png")
    ap.add_argument("--picture-only", action="store_true", help="redraw the picture from --out, run nothing")
    args = ap.parse_args()
    if args.picture_only:
        picture(json.loads(args.out.read_text()), args.picture)
        return
    seeds, tasks, updates = (3, 5_000, 60) if args.quick else (5, 100_000, 400)
    problem = StoppingProblem()
    res: dict = {"load_before": loadavg(), "cpus": os.cpu_count(),
                 "config": {"seeds": seeds, "tasks_per_seed": tasks, "group": 8, "updates": updates,
                            "tasks_per_update": 8, "learning_runs": [list(r) for r in RUNS]},
                 "problem": {"horizon": problem.horizon, "cost": problem.cost,
                             "accuracies": list(problem.accuracies), "states": len(problem.states),
                             "J_optimal": problem.optimal_return(),
                             "J_always_stop": problem.true_values(np.full(len(problem.states), -50.0))[3]}}
    t0 = time.perf_counter()
    res["bias"] = bias_study(problem, seeds, tasks)
    sizes = (2_000, 8_000, 32_000) if args.quick else (25_000, 100_000, 400_000)
    res["convergence"] = convergence_study(problem, sizes, 3)
    res["bias_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res["learning"] = {f"lr{lr:g}_{scale}": learning_study(problem, seeds, updates, lr, scale) for lr, scale in RUNS}
    res["learning_seconds"] = time.perf_counter() - t0
    res["load_after"] = loadavg()
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    picture(res, args.picture)
    for pol in ("uniform", "shaped"):
        for scale in ("none", "std"):
            print(f"bias, policy {pol}, scale {scale}:")
            for sch in SCHEMES:
                t = res["bias"][pol][scale][sch]
                print(f"  {sch:>9}  " + "  ".join(f"{m} {t[m]['mean']:.3f} [{t[m]['lo']:.3f}, {t[m]['hi']:.3f}]"
                                                   for m in METRICS))
    print("relative bias against the number of groups (uniform policy, 3 seeds):")
    for sch in SCHEMES:
        print(f"  {sch:>9}  " + "  ".join(f"{n}: {c['mean']:.4f} [{c['lo']:.4f}, {c['hi']:.4f}]"
                                         for n, c in zip(res["convergence"]["tasks"], res["convergence"][sch],
                                                         strict=True)))
    for key, run in res["learning"].items():
        print(f"learning {key}: final J per seed (mean of the last 10 % of updates)")
        for sch in SCHEMES:
            print(f"  {sch:>9}  " + " ".join(f"{v:.4f}" for v in run["final"][sch]["seeds"]))
        for p in run["per_seed"]:
            print(f"  seed {p['seed']}: target {p['target']:.4f} ({p['best_other']}); exact reaches it at update "
                  f"{p['exact_updates_to_target']} of {updates} -> met {p['met']}")
    print(f"J* {res['problem']['J_optimal']:.4f}; load before {res['load_before']}; after {res['load_after']}")


if __name__ == "__main__":
    main()
