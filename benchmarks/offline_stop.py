"""The stop learned from logged real runs against the published rules, on the committed corpus (issue 25).

    python benchmarks/offline_stop.py                                   # the committed SmolLM2 corpus
    python benchmarks/offline_stop.py --corpus runs/corpus.npz --seeds 0 1 2 --out runs/offline-stop
    python benchmarks/offline_stop.py --synthetic                       # the synthetic generator (no corpus needed)

For each fitting seed: ``fit_gate`` (Longstaff–Schwartz on the train tasks; width, aggregation,
model class linear / quadratic / MLP and regularisation chosen on the validation tasks) → a gate
file; then ``evaluate_traces`` tunes every rule of the family on the validation tasks and values
the rules and the gates exactly on the test tasks (paired 95 % CIs over test tasks; claims per
seed and k/n across seeds). Writes OUT/seed-N/gate.json, OUT/results.json, OUT/summary.md,
OUT/pareto.png and prints the README table. Fitting is CPU, one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "src" / "orchestrace" / "data" / "corpora" / "smollm2-v1"


def _ci(d: dict, f: str = "{:.3f}") -> str:
    return f"{f.format(d['mean'])} [{f.format(d['lo'])}, {f.format(d['hi'])}]"


def table(res: dict) -> str:
    """The README table: every family's validation-chosen rule and every gate on the test tasks."""
    rows = ["| stop rule (chosen on validation) | test return [95 % CI] | accuracy | LLM calls / task |",
            "|---|---|---|---|"]
    for fam, v in res["chosen"].items():
        s = v["test"]
        rows.append(f"| {fam}: `{v['name']}` | {_ci(s['return'])} | {s['accuracy']['mean']:.3f} | "
                    f"{s['calls']['mean']:.2f} |")
    a = res["always_continue"]
    rows.append(f"| always continue: `{a['name']}` | {_ci(a['test']['return'])} | {a['test']['accuracy']['mean']:.3f} | "
                f"{a['test']['calls']['mean']:.2f} |")
    for n, g in res["gates"].items():
        s = g["summary"]
        rows.append(f"| **learned gate** {n} ({g['model_class']}, w{g['width']}, {g['aggregation']}) | "
                    f"{_ci(s['return'])} | {s['accuracy']['mean']:.3f} | {s['calls']['mean']:.2f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus directory or .npz")
    ap.add_argument("--synthetic", action="store_true", help="use make_synthetic_logged(1200, 4, 2) instead")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=Path("runs/offline-stop"))
    ap.add_argument("--no-logprobs", action="store_true", help="ablation: forget the logged log-probs (the "
                    "log-prob vote becomes the majority, the log-prob features constant) for rules and gate alike")
    ap.add_argument("--price-seed", type=int, default=0, help="seed of the per-task prices (a robustness check)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from orchestrace.offline import LoggedRuns, check_runs, evaluate_traces, fit_gate, read_corpus
    from orchestrace.offline._report import render, write_pareto
    from orchestrace.offline._synthetic import structured_runs

    t0 = time.perf_counter()
    runs = (LoggedRuns(**structured_runs(T=1200, R=4, W=2, seed=0)) if args.synthetic else read_corpus(args.corpus))
    if args.no_logprobs:
        import dataclasses

        import numpy as np

        runs = dataclasses.replace(runs, logprob_mean=np.full(runs.logprob_mean.shape, np.nan, np.float32))
    runs, notes = check_runs(runs, where=str(args.corpus))
    T, R, W = runs.answers.shape
    print(f"corpus: {'synthetic' if args.synthetic else args.corpus} — {T} tasks × {R} rounds × {W} attempts; "
          f"exclusions: {notes or 'none'}", flush=True)
    gates, names, fits = [], [], {}
    for seed in args.seeds:
        t = time.perf_counter()
        gate, rep = fit_gate(runs, seed=seed, price_seed=args.price_seed)
        gate.save(args.out / f"seed-{seed}")
        gates.append(gate)
        names.append(f"seed-{seed}")
        fits[f"seed-{seed}"] = {"chosen": rep["chosen"], "by_class": rep["by_class"],
                                "fit_seconds": time.perf_counter() - t}
        print(f"seed {seed}: won {rep['chosen']['class']} (w{rep['chosen']['width']}, {rep['chosen']['aggregation']}); "
              f"validation return by class {json.dumps({k: round(v, 4) for k, v in rep['by_class'].items()})}; "
              f"{time.perf_counter() - t:.0f} s", flush=True)
    res = evaluate_traces(runs, gates, names=names, price_seed=args.price_seed)
    res["fits"] = fits
    res["benchmark_seconds"] = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    (args.out / "summary.md").write_text(render(res), encoding="utf-8")
    write_pareto(res, args.out / "pareto.png")
    print(table(res))
    print()
    for n, g in res["gates"].items():
        c = g["claims"]
        b, f = c["beats_best_rule"], c["fewer_calls_at_equal_accuracy"]
        print(f"{n}: vs best rule {b['baseline']}: {_ci(b['return_diff'], '{:+.4f}')} → {'PASS' if b['met'] else 'MISS'}; "
              f"vs {f['baseline']}: call saving {_ci(f['call_saving'], '{:.1%}')}, accuracy diff "
              f"{_ci(f['accuracy_diff'], '{:+.3f}')} → {'PASS' if f['met'] else 'MISS'}")
    if "aggregate" in res:
        for k, v in res["aggregate"]["claims"].items():
            print(f"across seeds: {k}: {v['number']} {_ci(v['across_runs'], '{:+.4f}')} (t), met {v['met']}")
    print(f"wrote {args.out}/ in {res['benchmark_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
