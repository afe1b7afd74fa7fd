"""The claims of the fair protocol: the rule that decides each, and how it is decided from test arrays.

:func:`claims` turns per-episode test arrays (the same seeds for every policy) and what validation chose
into every claim of :mod:`orchestrace.evaluation.simulated`, each decided by a paired 95 % interval with
its rule (:data:`CLAIM_RULES`) written beside it; :func:`_summary` is one policy's row of the results
(success as a Wilson interval, the rest as means with intervals, easy and hard tasks apart);
:func:`pareto` marks the (success, tokens) front.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._stats import ci_mean, paired_ci, welch_interval, wilson

#: Difficulty bands: easy tasks below δ = 0.3, hard ones from δ = 0.7.
EASY_BELOW, HARD_FROM = 0.3, 0.7
#: The whole family, in words (the rule texts say "best rule" = the best of all of it).
FAMILY = ("fixed budgets, confidence and vote-share thresholds, the adaptive heuristic's stop, Adaptive-Consistency "
          "(Beta, Dirichlet), ESC windows and the price-aware fitted logistic / quadratic rule")

#: The rule that decides each claim (printed beside PASS/MISS).
CLAIM_RULES: dict[str, str] = {
    "beats_best_rule_same_heads": "paired return difference vs the validation-chosen best stop rule of the whole family "
                                  f"({FAMILY}) on the learned heads: 95 % CI above 0",
    "beats_fitted_rule_same_heads": "paired return difference vs the validation-chosen price-aware fitted rule "
                                    "(logistic or quadratic on the 16 summary statistics + price, remaining budget, "
                                    "rounds left; fitted on validation paths) on the learned heads: 95 % CI above 0",
    "beats_published_rules_same_heads": "paired return difference vs the validation-chosen best published rule "
                                        "(Adaptive-Consistency Beta / Dirichlet, ESC) on the learned heads: 95 % CI above 0",
    "beats_best_threshold_same_heads": "paired return difference vs the validation-chosen confidence threshold on the "
                                       "learned heads: 95 % CI above 0",
    "near_clairvoyant_same_heads": "mean return gap to the clairvoyant stop on the learned heads ≤ 2.5 % of its return",
    "beats_adaptive": "paired return difference vs the adaptive heuristic (its own heads and stop): 95 % CI above 0",
    "fewer_tokens_at_equal_success": "vs the validation-chosen most successful fixed budget on the base heads: "
                                     "token-difference CI below 0 and success-difference CI not below 0",
    "adapts_to_difficulty": "decisions on hard (δ ≥ 0.7) minus easy (δ < 0.3) tasks: 95 % CI above 0",
    "vs_all_heads_oracle": "reference, not a target: return gap to the all-heads oracle (on its test seeds)",
    "threshold_gap_base_heads": "world diagnostic, not a target: return gap of the best single-feature threshold "
                                "to the clairvoyant stop on the base heads (large = one feature does not solve the stop)",
}


# ----------------------------------------------------------------------------- statistics
def pareto(points: dict[str, tuple[float, float]]) -> dict[str, bool]:
    """Which (success, tokens) points are on the front (not dominated).

    >>> pareto({"a": (0.9, 100.0), "b": (0.8, 200.0), "c": (0.95, 300.0)})
    {'a': True, 'b': False, 'c': True}
    """
    front = {}
    for n, (s, t) in points.items():
        dom = any((s2 >= s and t2 <= t) and (s2 > s or t2 < t) for m, (s2, t2) in points.items() if m != n)
        front[n] = not dom
    return front


def _summary(res: dict[str, np.ndarray]) -> dict[str, Any]:
    d = res["difficulty"]
    easy, hard = d < EASY_BELOW, d >= HARD_FROM
    out: dict[str, Any] = {"success": wilson(int(res["success"].sum()), len(res["success"]))}
    for k in ("tokens", "critical_steps", "wall_clock_s", "return", "decisions", "safety_events"):
        if k in res:
            out[k] = ci_mean(res[k])
    out["decisions_easy"] = ci_mean(res["decisions"][easy])
    out["decisions_hard"] = ci_mean(res["decisions"][hard])
    out["success_easy"] = wilson(int(res["success"][easy].sum()), int(easy.sum()))
    out["success_hard"] = wilson(int(res["success"][hard].sum()), int(hard.sum()))
    return out


# ----------------------------------------------------------------------------- claims
def _gap(a: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """(ref − a)/|mean ref| with a paired CI (scaled difference)."""
    scale = abs(float(np.mean(ref))) or 1.0
    d = paired_ci(ref, a)
    return {k: (v / scale if k != "n" else v) for k, v in d.items()}


def claims(raw: dict[str, dict[str, np.ndarray]], chosen: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Every claim of the protocol from per-episode test arrays (same seeds for every policy).

    ``chosen[heads]`` names the validation-chosen rules (``best_rule``, ``budget``,
    ``threshold``, ``budget_by_success`` and, when present, ``fitted`` and ``published``) for
    ``heads`` ∈ ``learned``, ``base``.
    """
    L = raw["learned"]
    out: dict[str, Any] = {}
    best = f"learned+{chosen['learned']['best_rule']}"
    d = paired_ci(L["return"], raw[best]["return"])
    out["beats_best_rule_same_heads"] = {"baseline": best, "return_diff": d, "met": bool(d["lo"] > 0)}
    for key, pick in (("beats_fitted_rule_same_heads", "fitted"), ("beats_published_rules_same_heads", "published")):
        if pick in chosen["learned"]:
            name = f"learned+{chosen['learned'][pick]}"
            d = paired_ci(L["return"], raw[name]["return"])
            out[key] = {"baseline": name, "return_diff": d, "met": bool(d["lo"] > 0)}
    th_l = f"learned+{chosen['learned']['threshold']}"
    d = paired_ci(L["return"], raw[th_l]["return"])
    out["beats_best_threshold_same_heads"] = {"baseline": th_l, "return_diff": d, "met": bool(d["lo"] > 0)}
    g = _gap(L["return"], raw["learned+clairvoyant"]["return"])
    out["near_clairvoyant_same_heads"] = {"baseline": "learned+clairvoyant", "gap": g, "met": bool(g["mean"] <= 0.025)}
    if "adaptive" in raw:
        d = paired_ci(L["return"], raw["adaptive"]["return"])
        out["beats_adaptive"] = {"baseline": "adaptive", "return_diff": d, "met": bool(d["lo"] > 0)}
    fb = f"base+{chosen['base']['budget_by_success']}"
    dt, ds = paired_ci(L["tokens"], raw[fb]["tokens"]), paired_ci(L["success"], raw[fb]["success"])
    out["fewer_tokens_at_equal_success"] = {
        "baseline": fb, "tokens_diff": dt, "success_diff": ds,
        "token_saving": float(1.0 - L["tokens"].mean() / max(raw[fb]["tokens"].mean(), 1e-12)),
        "met": bool(dt["hi"] < 0 and ds["hi"] >= 0)}
    diff = L["difficulty"]
    easy, hard = diff < EASY_BELOW, diff >= HARD_FROM
    if easy.sum() > 1 and hard.sum() > 1:
        w = welch_interval(L["decisions"][hard], L["decisions"][easy])
        out["adapts_to_difficulty"] = {"decisions_easy": float(L["decisions"][easy].mean()),
                                       "decisions_hard": float(L["decisions"][hard].mean()),
                                       "hard_minus_easy": w, "met": bool(w["lo"] > 0)}
    if "oracle-all" in raw:  # played on the first test seeds only (the costliest reference)
        n_or = len(raw["oracle-all"]["return"])
        out["vs_all_heads_oracle"] = {"baseline": "oracle-all", "episodes": n_or,
                                      "gap": _gap(L["return"][:n_or], raw["oracle-all"]["return"]), "met": None}
    th = f"base+{chosen['base']['threshold']}"
    out["threshold_gap_base_heads"] = {"baseline": th, "reference": "base+clairvoyant",
                                       "gap": _gap(raw[th]["return"], raw["base+clairvoyant"]["return"]), "met": None}
    for k, v in out.items():
        v["rule"] = CLAIM_RULES[k]
    return out
