"""Sim-to-real as a number (issue 25, item 5): a stop gate learned in the fitted simulator, scored
on the real test tasks beside the gate learned from the real traces.

1. The simulator fitted to the corpus's train split (``orchestrace collect fit-sim``; the committed
   ``sim-fit.json``) generates always-continue vote runs of the same shape (R rounds × W attempts).
2. The same recipe (``fit_gate``: Longstaff–Schwartz, linear → MLP, chosen on validation) learns a
   gate on the simulated runs only (their own train / validation split).
3. ``evaluate_traces`` values both gates and the whole rule family exactly on the real test tasks
   (rules tuned on the real validation tasks), paired 95 % CIs.

    python benchmarks/sim_to_real.py [--corpus DIR] [--sim-tasks 3000] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from orchestrace.evaluation.logged import ci_mean, evaluate_traces
from orchestrace.evaluation.logged_demo import DEFAULT_CORPUS
from orchestrace.logged.simfit import load_fitted_env, simulate_logged_runs
from orchestrace.offline import check_runs, fit_gate, read_corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--fit", type=Path, default=None, help="fit file (default: CORPUS/sim-fit.json)")
    ap.add_argument("--sim-tasks", type=int, default=3000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    t0 = time.perf_counter()
    real, _ = check_runs(read_corpus(a.corpus), where=str(a.corpus))
    T, R, W = real.answers.shape
    cfg = load_fitted_env(a.fit or a.corpus / "sim-fit.json")
    suites = sorted(set(real.suite.tolist()))
    rows = []
    for seed in a.seeds:
        sim = simulate_logged_runs(cfg, a.sim_tasks, R, W, seed=1000 + seed)
        g_sim, rep_sim = fit_gate(sim, seed=seed)
        # the simulated gate is scored on the real suites it was never fitted on: say so, do not refuse
        g_sim = dataclasses.replace(g_sim, meta={**g_sim.meta, "suites": suites, "fitted_on": "simulator"})
        g_real, _ = fit_gate(real, seed=seed)
        res = evaluate_traces(real, [g_real, g_sim], names=["real", "sim"])
        gr, gs = res["gates"]["real"], res["gates"]["sim"]
        rows.append({"seed": seed, "real": gr["summary"]["return"], "sim": gs["summary"]["return"],
                     "real_vs_best": gr["claims"]["beats_best_rule"]["return_diff"],
                     "sim_vs_best": gs["claims"]["beats_best_rule"]["return_diff"],
                     "best_rule": res["best_rule"], "sim_class": gs["model_class"], "sim_width": gs["width"],
                     "real_class": gr["model_class"], "calls": {"real": gr["summary"]["calls"]["mean"],
                                                                "sim": gs["summary"]["calls"]["mean"]}})
        print(f"seed {seed}: real-trace gate {gr['summary']['return']['mean']:.4f}, simulator gate "
              f"{gs['summary']['return']['mean']:.4f} ({gs['model_class']}, w{gs['width']}); vs best rule "
              f"{res['best_rule']}: real {gr['claims']['beats_best_rule']['return_diff']['mean']:+.4f}, "
              f"sim {gs['claims']['beats_best_rule']['return_diff']['mean']:+.4f} "
              f"[{gs['claims']['beats_best_rule']['return_diff']['lo']:+.4f}, "
              f"{gs['claims']['beats_best_rule']['return_diff']['hi']:+.4f}]", flush=True)
    gap = ci_mean(np.array([r["real"]["mean"] - r["sim"]["mean"] for r in rows]))
    print(f"\nsim-to-real gap (real-trace gate − simulator gate, mean over {len(rows)} seeds): "
          f"{gap['mean']:+.4f}; {time.perf_counter() - t0:.0f} s")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "gap": gap}, indent=1, default=float))


if __name__ == "__main__":
    main()
