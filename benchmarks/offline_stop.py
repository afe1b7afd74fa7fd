"""The stop learned from logged real runs against the enlarged rule family, on the committed test split and
on fresh collections (issues 25, 30).

    python benchmarks/offline_stop.py                                   # the committed SmolLM2 corpus
    python benchmarks/offline_stop.py --test /work/fresh/vote-fresh     # + a fresh collection (repeatable)
    python benchmarks/offline_stop.py --corpus runs/corpus.npz --seeds 0 1 2 --out runs/offline-stop
    python benchmarks/offline_stop.py --synthetic                       # the synthetic generator (no corpus needed)

Gates: the ``linear`` gate (deterministic: one fit) and, per fitting seed, the gate of the
validation-chosen class (linear / quadratic / MLP; ``seed-N``). ``evaluate_traces`` tunes every
rule × fixed configuration × aggregation of the family (budgets, vote share, Adaptive-Consistency
Beta/Dirichlet, ESC, CISC, DeepConf, price-aware logistic, fitted ridge/logistic on the gate's
features) on the corpus's validation tasks and values rules and gates exactly on the test split
and on every ``--test`` collection (all its tasks; fitted and tuned on the corpus only; paired
95 % CIs, per gate, ties written as ties). Writes OUT/…/gate.json, OUT/results.json,
OUT/summary.md, OUT/pareto.png and prints the tables. Fitting is CPU, one thread.
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


def table(res: dict, where: str = "test") -> str:
    """Every family's validation-chosen rule and every gate on the test split (or one fresh collection)."""
    rows = [f"| stop rule (chosen on validation) | {where} return [95 % CI] | accuracy | LLM calls / task |",
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


def claims(gates: dict) -> str:
    """Per gate: vs the best rule of the whole product, and the call saving vs the equal-accuracy budget."""
    from orchestrace.evaluation.summary import verdict

    out = []
    for n, g in gates.items():
        b, f = g["claims"]["beats_best_rule"], g["claims"]["fewer_calls_at_equal_accuracy"]
        out.append(f"- {n}: vs best rule `{b['baseline']}`: {_ci(b['return_diff'], '{:+.4f}')} → "
                   f"{verdict(b['return_diff'])}; vs `{f['baseline']}`: call saving {_ci(f['call_saving'], '{:.1%}')}, "
                   f"accuracy diff {_ci(f['accuracy_diff'], '{:+.3f}')} → {'PASS' if f['met'] else 'MISS'}")
    return "\n".join(out)


def across_seeds(gates: dict) -> str:
    """k/n fitting seeds meeting each claim and the claim's number ± t-interval, over the ``seed-N`` gates only."""
    from orchestrace.evaluation.logged import aggregate

    seeds = {n: g for n, g in gates.items() if n.startswith("seed-")}
    if len(seeds) < 2:
        return ""
    a = aggregate(seeds)
    return "\n".join(f"across {a['runs']} fitting seeds: {k}: {v['number']} {_ci(v['across_runs'], '{:+.4f}')} (t), "
                     f"met {v['met']}" for k, v in a["claims"].items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus directory or .npz")
    ap.add_argument("--synthetic", action="store_true", help="use make_synthetic_logged(1200, 4, 2) instead")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, default=Path("runs/offline-stop"))
    ap.add_argument("--no-logprobs", action="store_true", help="ablation: forget the logged log-probs (the "
                    "log-prob vote becomes the majority, the log-prob features constant) for rules and gate alike")
    ap.add_argument("--price-seed", type=int, default=0, help="seed of the per-task prices (a robustness check)")
    ap.add_argument("--test", type=Path, action="append", default=[], metavar="FRESH",
                    help="a fresh collection (corpus layout, same settings, new tasks); repeatable")
    ap.add_argument("--no-linear", action="store_true", help="skip the separate linear gate")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from orchestrace.evaluation.summary import render, write_pareto
    from orchestrace.offline import (
        LoggedRuns,
        check_runs,
        evaluate_traces,
        fit_gate,
        load_logged_runs,
        read_corpus,
    )
    sys.path.insert(0, str(ROOT / "tests" / "support"))  # the test-only generator
    from synthetic_runs import structured_runs

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
    if not args.no_linear:
        t = time.perf_counter()
        gate, rep = fit_gate(runs, classes=("linear",), price_seed=args.price_seed)
        gate.save(args.out / "linear")
        gates.append(gate)
        names.append("linear")
        fits["linear"] = {"chosen": rep["chosen"], "fit_seconds": time.perf_counter() - t}
        print(f"linear: w{rep['chosen']['width']}, {rep['chosen']['aggregation']}, reg {rep['chosen']['reg']:g}; "
              f"{time.perf_counter() - t:.0f} s", flush=True)
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
    fresh = []
    for p in args.test:  # a collection still being written: its torn last run is excluded, counted and stated
        fr = load_logged_runs(p, exclude=True) if p.is_dir() else read_corpus(p)
        fr, fnotes = check_runs(fr, where=str(p), splits=False)
        fresh.append((str(p), fr))
        print(f"fresh: {p} — {len(fr.task_ids)} tasks; exclusions: {fnotes or 'none'}", flush=True)
    res = evaluate_traces(runs, gates, names=names, price_seed=args.price_seed, tests=fresh)
    res["fits"] = fits
    res["benchmark_seconds"] = time.perf_counter() - t0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(res, indent=1, default=float), encoding="utf-8")
    (args.out / "summary.md").write_text(render(res), encoding="utf-8")
    write_pareto(res, args.out / "pareto.png")
    from orchestrace.evaluation.summary import vs_table

    print(f"{res['candidates']} rule settings; confidence: {res['confidence_source']}\n")
    print("### Committed test split\n")
    print(table(res))
    print()
    print(claims(res["gates"]))
    print()
    print("\n".join(vs_table(res["gates"], {f: v["name"] for f, v in res["chosen"].items()})))
    print(across_seeds(res["gates"]))
    for name, f in res["fresh"].items():
        print(f"\n### Fresh collection {name} ({f['tasks']} tasks; exclusions: {f['exclusions'] or 'none'})\n")
        print(table(f, "fresh"))
        print()
        print(claims(f["gates"]))
        print()
        print("\n".join(vs_table(f["gates"], {k: v["name"] for k, v in f["chosen"].items()})))
        print(across_seeds(f["gates"]))
    print(f"wrote {args.out}/ in {res['benchmark_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
