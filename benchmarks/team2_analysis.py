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

from team2_baselines import prompt_of  # noqa: E402  (the one prompt regeneration of the team2 scripts)


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
    a = ap.parse_args()

    from orchestrace.errors import OrchestraceError
    from orchestrace.evaluation.team_analysis import analyse_team
    from orchestrace.logged.runs import load_logged_runs
    from orchestrace.policies.team_policy import TeamPolicy

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
    res["corpus"], res["fresh"], res["runs"] = a.corpus, a.fresh or None, a.runs
    res["seconds"] = time.perf_counter() - t0
    res["load"] = {"before": load0, "after": open("/proc/loadavg").read().split()[:3]}  # noqa: SIM115
    from orchestrace.core.io import atomic_write

    atomic_write(a.json, (json.dumps(res, indent=1, default=float) + "\n").encode())
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
