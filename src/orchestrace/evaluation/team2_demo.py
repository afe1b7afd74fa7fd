"""The demo's two-family team section: issue 42's pre-registered analysis, computed live from package data.

Three things ship with the package (``orchestrace/data/corpora/``): the development corpus ``team2-v1``
(1,600 tasks; members ``s-cold``, ``s-calc`` — SmolLM2-135M — and ``g-cold``, ``g-hot`` — Gemma 3 270M —
at their own prices), its fresh set ``team2-fresh-v1`` (1,200 tasks collected after every fit) and the joint
policies fitted on the corpus before the fresh set existed (``team2-v1-runs/seedS``). :func:`team2_section`
runs :func:`~orchestrace.evaluation.team_analysis.analyse_team` on them — the fresh set, the policy of fitting
seed 0, baselines 1–6 fitted and chosen on the corpus — and returns Markdown whose first line is a headline:

- the per-task oracle (the best path in hindsight), the rule chosen per task family (baseline 1), the best of
  baselines 2–6 on these tasks, and the joint policy;
- the share of the per-family-rule → oracle gap each closes, the joint policy's with its paired task-bootstrap
  95 % interval, and the joint policy's paired difference against every baseline;
- the pre-registered decision rule, in words (the joint policy does not close the gap: the section says so).

The numbers are seed 0's of ``benchmarks/team2_fresh_results.json`` (docs/team2.md), recomputed here, not
read from it. ``prompt_of`` (a task id → its prompt) finds the fresh tasks that repeat a corpus prompt; the demo
passes the task generator's (:func:`orchestrace.collection.team2_demo.team2_demo_section`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["POLICY_NAME", "TEAM2_CORPUS", "TEAM2_FRESH", "TEAM2_POLICY", "render_team2", "team2_claims",
           "team2_section"]

_CORPORA = Path(__file__).resolve().parent.parent / "data" / "corpora"
#: The two-family team's development corpus, its fresh set, and the joint policy fitted with seed 0.
TEAM2_CORPUS = _CORPORA / "team2-v1"
TEAM2_FRESH = _CORPORA / "team2-fresh-v1"
TEAM2_POLICY = _CORPORA / "team2-v1-runs" / "seed0"
#: The joint policy's name in the results (the benchmark's name for seed 0).
POLICY_NAME = "joint_seed0"
_LABELS = {"oracle": "per-task oracle (best path in hindsight)", "1_rule_per_family": "1 rule chosen per task family",
           "2_rule_fixed_team": "2 one rule × fixed team", "3_knn_router": "3 nearest-neighbour router",
           "4_cascade": "4 confidence cascade", "5_learnstop": "5 LearnStop-style threshold",
           "6_fitted_rules": "6 fitted ridge / logistic rules", "6a_linear_fitted_q": "6a linear fitted Q (part of 6)",
           "6b_logistic_stop": "6b logistic stop rule (part of 6)"}


def _ci(d: dict[str, float], digits: int = 3) -> str:
    return f"{d['mean']:+.{digits}f} [{d['lo']:+.{digits}f}, {d['hi']:+.{digits}f}]"


def _gap(res: dict[str, Any], key: str) -> float:
    """The share of the baseline-1 → oracle gap that ``key`` closes (ratio of means)."""
    s = res["summary"]
    r1 = s["1_rule_per_family"]["return"]
    return (s[key]["return"] - r1) / (s["oracle"]["return"] - r1)


def _best_other(res: dict[str, Any]) -> str:
    """The best of the pre-registered baselines 2–6 on the claim tasks (in hindsight: a report, not a choice)."""
    from .team_analysis import BASELINES

    return max(BASELINES[1:], key=lambda b: res["summary"][b]["return"])


def team2_claims(res: dict[str, Any], name: str = POLICY_NAME) -> str:
    """The section's result in one sentence, from :func:`analyse_team`'s result (plus ``members``)."""
    s, p = res["summary"], res["policies"][name]
    g, best = p["gap_closed"], _best_other(res)
    lo, hi = g["ci95"]
    verdict = ("it meets the pre-registered decision rule" if p["decision"]["succeeds"] else
               "it does not close the gap (the pre-registered decision rule — ≥ 25 % of the gap, above every "
               "baseline, cheaper than the cascade — is not met)")
    return (f"({', '.join(res.get('members', []))}; {res['tasks']:,} fresh tasks of {res['where']}): return — "
            f"per-task oracle {s['oracle']['return']:.3f}, rule chosen per task family {s['1_rule_per_family']['return']:.3f}, "
            f"best other baseline ({_LABELS[best][2:]}) {s[best]['return']:.3f}, joint policy learned from the logs "
            f"(fitting seed {p.get('fit_seed', 0)}) {s[name]['return']:.3f}; the joint policy closes "
            f"{g['fraction']:+.2f} [{lo:+.2f}, {hi:+.2f}] of the gap between the per-family rule and the oracle "
            f"(paired 95 % CI); return vs the per-family rule {_ci(p['vs']['1_rule_per_family'])}: {verdict}.")


def render_team2(res: dict[str, Any], name: str = POLICY_NAME) -> str:
    """The section's table: every policy's return, accuracy, calls, dollars and share of the gap closed, with the
    joint policy's paired difference against each (Markdown)."""
    p = res["policies"][name]
    lines = [f"## A two-family team on fresh tasks: the joint policy vs the oracle gap ({res['where']})", "",
             f"{res['tasks']:,} fresh tasks (collected after every fit; exclusions below). Prices charged; "
             f"cost unit: {res.get('cost_unit', '?')}. Baselines fitted and chosen on the development corpus only. Share of the "
             "gap = (return − per-family rule's) / (oracle's − per-family rule's); 95 % intervals from a paired task "
             f"bootstrap ({res['bootstrap']['resamples']:,} resamples, seed {res['bootstrap']['seed']}).", "",
             "| policy | return | accuracy | calls | $ per task | share of the gap closed | joint − this (95 % CI) |",
             "|---|---|---|---|---|---|---|"]
    for k, s in res["summary"].items():
        label = "**joint policy** (fitting seed {})".format(p.get("fit_seed", 0)) if k == name else _LABELS.get(k, k)
        gap = "" if k in ("oracle", "1_rule_per_family") else f"{_gap(res, k):+.2f}"
        if k == name:
            gap += f" [{p['gap_closed']['ci95'][0]:+.2f}, {p['gap_closed']['ci95'][1]:+.2f}]"
        usd = "—" if s["cost_usd"] is None else f"{s['cost_usd']:.2e}"
        vs = "" if k == name else _ci(p["vs"][k])
        lines.append(f"| {label} | {s['return']:.3f} | {s['accuracy']:.3f} | {s['calls']:.2f} | {usd} | {gap} | {vs} |")
    d = p["decision"]
    above = [b for b, ok in d["ci_above_0_vs"].items() if ok]
    lines += ["", f"Decision rule (pre-registered, docs/team2-preregistration.md): closes ≥ 25 % of the gap — "
              f"{'yes' if d['closes_25pct_of_gap'] else 'no'}; paired interval above 0 against "
              f"{', '.join(above) if above else 'no baseline'}; beats the cascade at equal or lower cost — "
              f"{'yes' if d['beats_cascade_at_equal_or_lower_cost'] else 'no'}. **"
              f"{'Met' if d['succeeds'] else 'Not met: the learned joint policy does not close the oracle gap'}.**",
              "", "Exclusions: " + "; ".join(res["exclusions"]) + ".", "",
              "The other fitting seeds (1, 2) and the test split: docs/team2.md and benchmarks/team2_fresh_results.json."]
    return "\n".join(lines) + "\n"


def team2_section(out: str | Path, *, prompt_of: Callable[[str], str] | None, corpus: str | Path = TEAM2_CORPUS,
                  fresh: str | Path = TEAM2_FRESH, policy: str | Path = TEAM2_POLICY, reps: int = 2000,
                  log: Callable[[str], None] = lambda s: None) -> str:
    """Run the pre-registered analysis of the two-family team on its fresh set (module docstring); write
    ``OUT/real-team2/`` (results.json, summary.md); return Markdown whose first line is the headline.

    >>> from orchestrace.evaluation.team2_demo import TEAM2_CORPUS, TEAM2_FRESH, TEAM2_POLICY
    >>> all((p / f).is_file() for p, f in ((TEAM2_CORPUS, "manifest.json"), (TEAM2_FRESH, "manifest.json"),
    ...                                    (TEAM2_POLICY, "team_policy.json")))
    True
    """
    from ..core.io import atomic_write
    from ..errors import ConfigError
    from ..logged.runs import load_logged_runs
    from ..policies.team_policy import TeamPolicy
    from .team_analysis import analyse_team

    for what, p in (("corpus", corpus), ("fresh set", fresh), ("joint policy", policy)):
        if not Path(p).exists():
            raise ConfigError(f"{p}: the two-family team's {what} is missing from this installation")
    runs = load_logged_runs(corpus, exclude=True)
    fr = load_logged_runs(fresh, exclude=True)
    pol = TeamPolicy.load(policy)
    res = analyse_team(runs, [pol], [POLICY_NAME], fresh=fr, fresh_name=Path(fresh).name, prompt_of=prompt_of,
                       reps=reps, crosscheck=False, log=log)
    res["members"] = list(runs.members)
    res["corpus"], res["fresh"], res["runs"] = Path(corpus).name, Path(fresh).name, [str(Path(policy).name)]
    text = render_team2(res)
    where = Path(out) / "real-team2"
    where.mkdir(parents=True, exist_ok=True)
    atomic_write(where / "results.json", (json.dumps(res, indent=1, default=float) + "\n").encode())
    atomic_write(where / "summary.md", text.encode())
    head = "**A two-family team, orchestrated from its logs** " + team2_claims(res)
    return head + "\n\n" + text + "\nFiles: `real-team2/` (results.json, summary.md).\n"
