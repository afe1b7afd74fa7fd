"""The pre-registered analysis of the two-family team (docs/team2-preregistration.md) in one command.

    python benchmarks/team2_analysis.py CORPUS [--fresh FRESH] --runs RUN [RUN …] --json OUT

Baselines 1–6, the joint policy runs (one per fitting seed, each reported) and the oracle, valued
exactly (prices charged) on CORPUS's test split, or on FRESH (a later collection of the same team);
duplicate prompts excluded and counted; per policy mean return, accuracy, calls, dollar cost; the
fraction of the per-family-rule → oracle gap closed and the paired difference against every baseline
with paired task-bootstrap 95 % intervals (2,000 resamples, seed 0); the decision rule per seed.
The library does the work (:func:`orchestrace.evaluation.team_analysis.analyse_team`); the joint
policies' returns are cross-checked against ``evaluate_team`` (``--no-crosscheck`` skips it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from team2_baselines import prompt_of  # noqa: E402  (the one prompt regeneration of the team2 scripts)
from team2_pilot_analysis import auc, auc_ci, draw, overlaps  # noqa: E402  (the pilot's matrix and AUC)


def observables(runs, task_ids: list[str]) -> dict:  # noqa: ANN001
    """On the claim tasks: the member × family accuracy matrix and error overlaps (round 0), and the AUC of the
    cheapest member's round-0 observables (mean log-prob, DeepConf confidence, share of the other members that
    agree with it) for "the cheapest member is right" (1 − AUC for "it is wrong"), with bootstrap intervals."""
    m_all = np.isin(runs.task_ids, task_ids)
    mem = list(runs.members)
    prices = (runs.meta.get("billing") or {}).get("prices") or {}
    cheap = min(range(len(mem)), key=lambda c: (*prices.get(mem[c], (0.0, 0.0)), c))
    c0 = runs.correct[:, 0, :]
    a0 = runs.answers[:, 0, :]
    lp = runs.logprob_mean[:, 0, cheap].astype(float)
    cf = (np.full(len(lp), np.nan) if runs.confidence is None else runs.confidence[:, 0, cheap].astype(float))
    others = [c for c in range(len(mem)) if c != cheap]
    agree = np.where(a0[:, cheap] >= 0, (a0[:, others] == a0[:, [cheap]]).mean(1), np.nan)
    cell = np.array([f"{x}:{d}" for x, d in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)])
    out: dict = {"tasks": int(m_all.sum()), "members": mem, "cheapest": mem[cheap], "cells": {}}
    for c in [*sorted(set(cell[m_all].tolist())), None]:
        m = m_all & (cell == c) if c is not None else m_all
        acc, ov = overlaps(c0, m, mem)
        right = c0[m, cheap]
        aucs = {k: {"auc": auc(v[m], right), "ci95": auc_ci(v[m], right)} for k, v in
                (("logprob", lp), ("confidence", cf), ("agreement", agree))}
        entry = {"n": int(m.sum()), "accuracy_round0": acc, "overlap": ov, f"auc_for_{mem[cheap]}_right": aucs}
        if c is None:
            out["all_families"] = entry
        else:
            out["cells"][c] = entry
    return out


def table(res: dict) -> str:
    """The summary as a markdown table (policy, return, accuracy, calls, dollars, share of the gap)."""
    lines = [f"{res['where']}: {res['tasks']} tasks", "", "| policy | return | accuracy | calls | $ per task | "
             "gap closed [95 % CI] |", "|---|---|---|---|---|---|"]
    for k, s in res["summary"].items():
        g = res["policies"].get(k, {}).get("gap_closed")
        gap = f"{g['fraction']:+.2f} [{g['ci95'][0]:+.2f}, {g['ci95'][1]:+.2f}]" if g else ""
        usd = f"{s['cost_usd']:.2e}" if s["cost_usd"] is not None else "—"
        lines.append(f"| {k} | {s['return']:.3f} | {s['accuracy']:.3f} | {s['calls']:.2f} | {usd} | {gap} |")
    lines.append("")
    for n, p in res["policies"].items():
        d = p["decision"]
        lines.append(f"{n}: {'SUCCEEDS' if d['succeeds'] else 'does not succeed'} (≥25 % of gap: "
                     f"{d['closes_25pct_of_gap']}; CI above 0 vs "
                     f"{sorted(b for b, ok in d['ci_above_0_vs'].items() if ok)}; beats the cascade at ≤ cost: "
                     f"{d['beats_cascade_at_equal_or_lower_cost']})")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--fresh", default="")
    ap.add_argument("--runs", nargs="+", required=True, help="run directories of the joint policy (one per seed)")
    ap.add_argument("--json", required=True)
    ap.add_argument("--no-crosscheck", action="store_true")
    ap.add_argument("--png", default="", help="draw the claim set's accuracy and error-overlap matrices here")
    a = ap.parse_args()

    from orchestrace.errors import OrchestraceError
    from orchestrace.evaluation.team_analysis import analyse_team
    from orchestrace.logged.runs import load_logged_runs
    from orchestrace.policies.team_policy import TeamPolicy

    if not Path(a.json).resolve().parent.is_dir():
        print(f"error: --json {a.json}: its folder does not exist", file=sys.stderr)
        return 2
    try:
        load0 = open("/proc/loadavg").read().split()[:3]  # noqa: SIM115
        t0 = time.perf_counter()
        runs = load_logged_runs(a.corpus, exclude=True)
        fresh = load_logged_runs(a.fresh, exclude=True) if a.fresh else None
        pols = [TeamPolicy.load(r) for r in a.runs]
        names = [f"joint_seed{p.meta.get('fit_seed', i)}" for i, p in enumerate(pols)]
        if len(set(names)) < len(names):
            names = [f"joint_{Path(r).name}" for r in a.runs]
        res = analyse_team(runs, pols, names, fresh=fresh, fresh_name=Path(a.fresh).name if a.fresh else "fresh",
                           prompt_of=prompt_of, crosscheck=not a.no_crosscheck,
                           log=lambda s: print(s, file=sys.stderr))
    except OrchestraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res["observables"] = observables(fresh if fresh is not None else runs, res["task_ids"])
    if a.png:
        draw(res["observables"], a.png, Path(a.fresh or a.corpus).name,
             f"{res['where']}: the claim tasks, duplicates excluded; round 0")
    res["corpus"], res["fresh"], res["runs"] = a.corpus, a.fresh or None, a.runs
    res["seconds"] = time.perf_counter() - t0
    res["load"] = {"before": load0, "after": open("/proc/loadavg").read().split()[:3]}  # noqa: SIM115
    from orchestrace.core.io import atomic_write

    atomic_write(a.json, (json.dumps(res, indent=1, default=float) + "\n").encode())
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
