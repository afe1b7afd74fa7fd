"""Exact valuation and fitting of the whole team family on a large synthetic team corpus: time and memory.

Measures, on ``make_synthetic_team(T, R)`` (four member kinds, the reviser sees the others):

- ``fit``: the joint policy (:func:`~orchestrace.offline.fit_team_policy`, every model class of
  ``--classes``, their regularisation grids, chosen on validation by exact valuation);
- ``family``: every fixed configuration (member subset × aggregation) × every stop rule of the
  family, tuned on validation and valued exactly with the baselines and the policy on the test
  split (:func:`~orchestrace.offline.evaluate_team`, including the fitted stop-only baseline).

Medians over ``--repeats`` runs of the wall-clock time and of the process's CPU time (user +
system: on a machine shared with other jobs the wall clock measures the load, the CPU time the
work); peak resident memory of the process. BLAS is pinned to one thread (on a shared 2-core
machine more threads only add contention)::

    nice -n 5 python benchmarks/team_scale.py --tasks 100000 --repeats 3

``benchmarks/team_scale_results.json`` holds the last measured run (``--json``), with the load average
before and after it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from orchestrace.evaluation.logged_team import evaluate_team  # noqa: E402
from orchestrace.logged.team_synth import make_synthetic_team  # noqa: E402
from orchestrace.trainers.team_fitted_q import fit_team_policy  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--classes", default="linear,quadratic,mlp")
    ap.add_argument("--json", default=None, help="write the numbers here")
    a = ap.parse_args()
    classes = tuple(a.classes.split(","))
    load_start = os.getloadavg()
    t = time.perf_counter()
    runs = make_synthetic_team(a.tasks, a.rounds, seed=0)
    gen = time.perf_counter() - t
    fit_s, fam_s, fit_cpu, fam_cpu = [], [], [], []
    for rep in range(a.repeats):
        t, c = time.perf_counter(), time.process_time()
        pol, rep_ = fit_team_policy(runs, classes=classes, seed=rep)
        fit_s.append(time.perf_counter() - t)
        fit_cpu.append(time.process_time() - c)
        t, c = time.perf_counter(), time.process_time()
        res = evaluate_team(runs, [pol], names=[f"seed{rep}"])
        fam_s.append(time.perf_counter() - t)
        fam_cpu.append(time.process_time() - c)
        print(f"repeat {rep}: fit {fit_s[-1]:.1f} s wall / {fit_cpu[-1]:.1f} s CPU ({rep_['chosen']['class']}), "
              f"family + baselines + test {fam_s[-1]:.1f} s wall / {fam_cpu[-1]:.1f} s CPU ({res['settings']} "
              f"settings)", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"tasks": a.tasks, "rounds": a.rounds, "members": list(runs.members), "classes": list(classes),
           "generate_s": gen, "fit_s_median": statistics.median(fit_s), "family_s_median": statistics.median(fam_s),
           "total_s_median": statistics.median(f + g for f, g in zip(fit_s, fam_s, strict=True)),
           "fit_cpu_s_median": statistics.median(fit_cpu), "family_cpu_s_median": statistics.median(fam_cpu),
           "total_cpu_s_median": statistics.median(f + g for f, g in zip(fit_cpu, fam_cpu, strict=True)),
           "peak_rss_mb": peak, "fit_s": fit_s, "family_s": fam_s, "fit_cpu_s": fit_cpu, "family_cpu_s": fam_cpu,
           "load_average_start": load_start, "load_average": os.getloadavg()}
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
