"""Evidence for the learned stop: the fair protocol across training seeds, starts and shifted worlds.

    python benchmarks/evidence.py [--seeds 5] [--steps 100] [--jobs 2] [--quick] [--out evidence-out]

1. trains every variant × seed (``--jobs`` processes, one torch thread each):

   - ``base-clone`` — the GRPO recipe (``orchestrace.evaluation.demo.GRPO_CONFIG``): O1–O4
     behaviour-cloned from the environment's *base* heuristic (no stop rule in it), the
     stop head learned from counterfactual replay credit;
   - ``scratch`` — the same, with no warm start at all;
   - ``no-replay`` — the same as ``base-clone`` with ``stop_credit=critic``: the stop head's
     credit comes from returns and its learned Q_stop/Q_continue, never from replay;
   - ``fitted`` — the main job's recipe (``orchestrace.evaluation.demo.DEMO_CONFIG``): O1–O4 cloned
     from the base heuristic and then fixed; the stop gate by regression-based optimal
     stopping (``stop_update=fitted``, :mod:`orchestrace.trainers.fitted_stop`) on replayed
     always-continue paths of ``steps × episodes_per_step`` training tasks;

2. evaluates each variant's runs with :func:`orchestrace.evaluation.simulated.evaluate_runs` on the
   nominal world (5,000 test seeds, 2,000 validation seeds and 4,096 fitting seeds per run; every
   stop rule of the family — budgets, thresholds, Adaptive-Consistency, ESC, vote share, the
   price-aware fitted rules — valued exactly on always-continue paths), and the main variant in
   every world of the ``shift`` suite;
3. prints the tables (claims as k/n runs, numbers as mean ± 95 % t-interval across runs) and
   writes ``OUT/evidence.json`` and ``OUT/evidence.md``; last, the wall-clock times.

Same seeds for every policy; budgets and thresholds tuned on validation seeds only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ENV = "default-v1"
VARIANTS: dict[str, dict[str, Any]] = {  # TrainConfig fields on top of GRPO_CONFIG; the first is the main variant
    "fitted": {"stop_update": "fitted", "episodes_per_step": 256},  # = DEMO_CONFIG: 60 × 256 = 15,360 training paths
    "base-clone": {},
    "scratch": {"warm_start": "none"},
    "no-replay": {"stop_credit": "critic"},
}


def _train(args: tuple[str, dict[str, Any], int, int, str]) -> tuple[str, float]:
    variant, extra, seed, steps, out = args
    import torch

    torch.set_num_threads(1)
    from orchestrace.evaluation.demo import GRPO_CONFIG
    from orchestrace.learn import TrainConfig, train

    run = Path(out) / "runs" / f"{variant}-s{seed}"
    if (run / "policy.pt").exists() and json.loads((run / "config.json").read_text())["steps"] == steps:
        return str(run), 0.0  # already trained (the benchmark resumes where it stopped)
    if run.exists():
        import shutil

        shutil.rmtree(run)
    cfg = TrainConfig(**{**GRPO_CONFIG, "env": ENV, "seed": seed, "steps": steps, **extra})
    t = time.perf_counter()
    train(cfg, run, progress=False)
    return str(run), time.perf_counter() - t


def _eval(args: tuple[str, list[str], tuple[str, ...], bool, int, int, int, str]) -> tuple[str, dict[str, Any], float]:
    key, runs, overrides, oracle_all, episodes, validation, fit_episodes, out = args
    import torch

    torch.set_num_threads(1)
    from orchestrace.evaluation.simulated import evaluate_runs

    done = Path(out) / "eval" / key / "aggregate.json"
    if done.exists():  # evaluated in an earlier (interrupted) run of the benchmark
        return key, json.loads(done.read_text())["aggregate"], 0.0
    t = time.perf_counter()
    res = evaluate_runs(runs, env_set=overrides, episodes=episodes, validation=validation, fit_episodes=fit_episodes,
                        out=Path(out) / "eval" / key, oracle_all=oracle_all, progress=False)
    return key, res["aggregate"], time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=None, help="training updates (default: the demo recipe's)")
    ap.add_argument("--episodes", type=int, default=5000)
    ap.add_argument("--validation", type=int, default=2000)
    ap.add_argument("--fit-episodes", type=int, default=4096, help="fitting seeds of the price-aware fitted rules")
    ap.add_argument("--shift-episodes", type=int, default=2000, help="test episodes per run in each shifted world")
    ap.add_argument("--shift-validation", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--no-shifts", action="store_true")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 seeds, 3 updates, 40 episodes")
    ap.add_argument("--out", default="evidence-out")
    a = ap.parse_args()
    from orchestrace.evaluation.demo import DEMO_CONFIG, render_aggregate, render_suite
    from orchestrace.evaluation.simulated import SUITES

    if a.quick:
        a.seeds, a.steps, a.episodes, a.validation, a.fit_episodes = 2, 3, 40, 24, 64
    steps = a.steps or int(DEMO_CONFIG["steps"])
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    t0 = time.perf_counter()
    train_jobs = [(v, VARIANTS[v], s, steps, a.out) for v in variants for s in range(a.seeds)]
    print(f"training {len(train_jobs)} runs ({', '.join(variants)} × {a.seeds} seeds, {steps} updates) on {a.jobs} processes",
          flush=True)
    runs: dict[str, list[str]] = {v: [] for v in variants}
    train_s: list[float] = []
    with ProcessPoolExecutor(a.jobs) as pool:
        for (v, *_), (run, sec) in zip(train_jobs, pool.map(_train, train_jobs), strict=True):
            runs[v].append(run)
            train_s.append(sec)
            print(f"  trained {run} in {sec:.0f} s", flush=True)
    t_train = time.perf_counter() - t0
    shifts = {} if a.no_shifts else {n: o for n, o in SUITES["shift"].items() if n != "nominal"}
    # the all-heads oracle (the costliest reference) on the main variant only
    eval_jobs = [(f"{v}/nominal", runs[v], (), v == variants[0], a.episodes, a.validation, a.fit_episodes, a.out)
                 for v in variants]
    main_v = variants[0]
    if a.quick:
        a.shift_episodes, a.shift_validation = a.episodes, a.validation
    eval_jobs += [(f"{main_v}/{n}", runs[main_v], o, False, a.shift_episodes, a.shift_validation, a.fit_episodes, a.out)
                  for n, o in shifts.items()]
    print(f"evaluating {len(eval_jobs)} (variant, world) pairs", flush=True)
    aggs: dict[str, dict[str, Any]] = {}
    eval_s: dict[str, float] = {}
    with ProcessPoolExecutor(a.jobs) as pool:
        for key, agg, sec in pool.map(_eval, eval_jobs):
            aggs[key] = agg
            eval_s[key] = sec
            print(f"  evaluated {key} in {sec:.0f} s", flush=True)
    md = [f"# Evidence: `{ENV}`, {a.seeds} training seeds × {a.episodes} test episodes, {steps} updates", ""]
    for v in variants:
        md.append(render_aggregate(aggs[f"{v}/nominal"], title=f"`{v}` on the nominal world"))
    if shifts:
        suite = {"suite": "shift-v1", "shifts": {"nominal": {"overrides": [], **aggs[f"{main_v}/nominal"]},
                                                 **{n: {"overrides": list(o), **aggs[f"{main_v}/{n}"]} for n, o in shifts.items()}}}
        md.append(render_suite(suite))
    rets = {v: aggs[f"{v}/nominal"]["learned_return"]["mean"] for v in variants}
    if "scratch" in rets:
        best = max(v for v in rets if v != "scratch") if len(rets) > 1 else "scratch"
        best = max((v for v in rets if v != "scratch"), key=lambda v: rets[v], default="scratch")
        md.append(f"From scratch: return {rets['scratch']:.3f} = {100 * rets['scratch'] / rets[best]:.1f} % of the best start "
                  f"(`{best}`, {rets[best]:.3f}); target ≥ 97 %.\n")
    text = "\n".join(md)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "evidence.md").write_text(text, encoding="utf-8")
    (Path(a.out) / "evidence.json").write_text(json.dumps({"aggregates": aggs, "runs": runs, "train_s": train_s,
                                                           "eval_s": eval_s, "steps": steps, "seeds": a.seeds},
                                                          indent=1, default=float) + "\n", encoding="utf-8")
    print(text)
    total = time.perf_counter() - t0
    print(f"wall clock: training {t_train / 60:.1f} min (median run {sorted(train_s)[len(train_s) // 2]:.0f} s), "
          f"evaluation {(total - t_train) / 60:.1f} min, total {total / 60:.1f} min (target ≤ 60 min on 2 cores)")
    sys.exit(0)


if __name__ == "__main__":
    main()
