"""Combine the LLM-orchestrator runs made in parallel on one GPU (``benchmarks/gpu_llm_runs.sh``, one
process per seed and credit scheme, each ``OUT/orch-CREDIT-SEED/results.json``) into one results file
and one picture: per run the updates done, the validation probes, the distinct actions per GRPO group,
the greedy first decision per task cell before and after GRPO, and the paired comparisons on the test
split and the fresh tasks.

    python benchmarks/llm_orchestrator_gpu_merge.py RUN_DIR [RUN_DIR ...] \
        --out benchmarks/llm_orchestrator_team_gpu_results.json --picture docs/llm-orchestrator-team-gpu.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(d: dict) -> dict:
    """The summary of one process's results (one seed, one credit scheme)."""
    r = d["runs"][0]
    tag = f"{r['credit']}/s{r['seed']}"
    fd = d["first_decisions"]
    out = {"seed": r["seed"], "credit": r["credit"], "device": d["args"]["device"], "args": d["args"],
           "throughput": r["throughput"], "probes": r["probes"],
           "distinct_actions": [c.get("distinct_actions") for c in r["curve"]],
           "first_decision_start": {c: max(v, key=v.get) for c, v in fd[f"format/s{r['seed']}"].items()},
           "first_decision_trained": {c: max(v, key=v.get) for c, v in fd[tag].items()},
           "baselines": d["baselines"], "validation_baselines": d["validation_baselines"]}
    for split in ("test", "fresh"):
        c = d["comparisons"][split]
        out[split] = {"trained": c[r["credit"]]["per_seed"][tag],
                      "start": c["format"]["per_seed"][f"format/s{r['seed']}"],
                      "trained_minus_start": c[f"{r['credit']}_minus_format"][tag],
                      "trained_minus_joint_policy": c[f"{r['credit']}_minus_gate"][tag],
                      "trained_minus_per_cell_rule": c[f"{r['credit']}_minus_best_rule_per_cell"][tag],
                      "trained_minus_best_budget_rule": c[f"{r['credit']}_minus_best_rule"][tag],
                      "untrained": c["untrained"], "joint_policy": c["gate"], "per_cell_rule": c["best_rule_per_cell"],
                      "best_budget_rule": c["best_rule"]}
    return out


def picture(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = {"exact": "tab:blue", "broadcast": "tab:orange"}
    for r in runs:
        c = colours.get(r["credit"], "k")
        p = r["probes"]
        axes[0].plot([x["update"] for x in p], [x["val_return"] for x in p], "o-", color=c, alpha=0.8,
                     label=f"{r['credit']} seed {r['seed']}")
        da = [x for x in r["distinct_actions"] if x is not None]
        axes[1].plot(range(1, len(da) + 1), da, color=c, alpha=0.6, label=f"{r['credit']} seed {r['seed']}")
    v = runs[0]["validation_baselines"]
    axes[0].axhline(v["gate"], ls="--", color="k", lw=1, label="fitted joint policy")
    axes[0].axhline(v["best_rule"], ls=":", color="grey", lw=1, label="best budget rule")
    axes[0].set(title="greedy validation return (probes)", xlabel="GRPO update", ylabel="return")
    axes[1].set(title="distinct parsed actions per group of replies", xlabel="GRPO update", ylabel="actions")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle("LLM orchestrator (SmolLM2-135M, LoRA) trained with GRPO on the team corpus — GPU (H200)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="OUT/orch-CREDIT-SEED folders (each holds results.json)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "llm_orchestrator_team_gpu_results.json"))
    ap.add_argument("--picture", default=str(ROOT / "docs" / "llm-orchestrator-team-gpu.png"))
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.core.io import atomic_write

    runs = []
    for folder in a.runs:
        f = Path(folder) / "results.json"
        if not f.is_file():
            print(f"error: {f}: no results.json (did the run finish?)", file=sys.stderr)
            return 2
        try:
            runs.append(one(json.loads(f.read_text(encoding="utf-8"))))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            print(f"error: {f}: not a finished llm_orchestrator.py results file ({type(exc).__name__}: {exc})",
                  file=sys.stderr)
            return 2
    runs.sort(key=lambda r: (r["credit"], r["seed"]))
    atomic_write(Path(a.out), json.dumps({"runs": runs}, indent=1, default=float).encode())
    picture(runs, Path(a.picture))
    for r in runs:
        f = r["fresh"]
        print(f"{r['credit']:9s} s{r['seed']} {r['throughput']['updates']:4d} updates: fresh {f['trained']['mean']:+.3f} "
              f"start {f['start']['mean']:+.3f} trained-start {f['trained_minus_start']['mean']:+.3f} "
              f"[{f['trained_minus_start']['lo']:+.3f}, {f['trained_minus_start']['hi']:+.3f}] "
              f"−joint {f['trained_minus_joint_policy']['mean']:+.3f}; first call {sorted(set(r['first_decision_trained'].values()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
