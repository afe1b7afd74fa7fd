"""``orchestrace eval --traces CORPUS [RUN …]``: every stop rule valued exactly on the test tasks.

1. **The family** (:func:`rule_grid`): fixed self-consistency budgets ``budget@k``, vote-share
   thresholds ``share@c``, Adaptive-Consistency ``ac-beta@c`` / ``ac-dirichlet@c``, ESC
   ``esc@w`` and the price-aware logistic rule (fitted on the training tasks, its margin on
   validation), each at every width 1..W and both aggregations.
2. **Tuning on validation tasks only**: per family the (parameter, width, aggregation) with the
   best validation mean return; the best rule of the whole family is the best of those.
3. **Test tasks** (never used in fitting or tuning) value every chosen rule and every gate
   exactly (:mod:`._value`); all comparisons are paired over the same test tasks.
4. **Claims** (:data:`CLAIM_RULES`, printed beside PASS/MISS), per gate run; several runs
   (fitting seeds) are aggregated: k/n runs pass, and mean ± 95 % t-interval across runs.

>>> from orchestrace.offline import make_synthetic_logged
>>> from orchestrace.offline._fit import fit_gate
>>> runs = make_synthetic_logged(T=400, R=4, W=3, seed=0)
>>> gate, _ = fit_gate(runs, classes=("linear",))
>>> res = evaluate_traces(runs, [gate], names=["g"])
>>> sorted(res["gates"]["g"]["claims"])
['beats_best_rule', 'fewer_calls_at_equal_accuracy', 'gap_to_clairvoyant']
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._features import check_features, vote_states
from ._fit import PRICE_SEED, corpus_scales, fit_price_logistic
from ._io import check_runs, require_tasks
from ._logged import LoggedRuns
from ._value import AGGREGATIONS, PRICE_HI, PRICE_LO, first_stop, task_prices, valuation
from .gate import StopGate
from .rules import ESC, AdaptiveBeta, AdaptiveDirichlet, FixedBudget, StopRule, VoteShare

__all__ = ["CLAIM_RULES", "FAMILIES", "evaluate_traces", "rule_grid"]

FAMILIES = ("budget", "share", "ac-beta", "ac-dirichlet", "esc", "price-logistic")
CLAIM_RULES: dict[str, str] = {
    "beats_best_rule": "paired return difference vs the validation-chosen best rule of the whole family (budgets, "
                       "vote shares, Adaptive-Consistency Beta/Dirichlet, ESC, price-aware logistic) on the test "
                       "tasks: 95 % CI above 0",
    "fewer_calls_at_equal_accuracy": "vs the cheapest fixed self-consistency budget whose validation accuracy is at "
                                     "least the gate's: LLM-call saving CI (paired bootstrap) lower bound ≥ 40 % and "
                                     "accuracy-difference CI not below 0",
    "gap_to_clairvoyant": "reference, not a target: return gap to the best stopping time in hindsight at the gate's "
                          "width and aggregation",
}


def rule_grid(R: int, W: int) -> dict[str, list[StopRule]]:
    """The parameter grids of the hand-written families (the logistic rule is fitted, not gridded)."""
    return {
        "budget": [FixedBudget(k) for k in range(1, R + 1)],
        "share": [VoteShare(c) for c in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)],
        "ac-beta": [AdaptiveBeta(c) for c in (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)],
        "ac-dirichlet": [AdaptiveDirichlet(c) for c in (0.6, 0.7, 0.8, 0.9, 0.95, 0.99)],
        "esc": [ESC(w) for w in sorted({2, 3, 4, 5, 6, 8, W} - {1}) if w <= R * W],
    }


# ----------------------------------------------------------------------------- statistics
def ci_mean(x: np.ndarray) -> dict[str, float]:
    """Mean with a normal-approximation 95 % interval (over tasks: paired when ``x`` is a difference).

    >>> ci_mean(np.array([1.0, 2.0, 3.0]))["mean"]
    2.0
    """
    x = np.asarray(x, np.float64)
    m = float(x.mean())
    h = 1.96 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(len(x))}


_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def t_interval(x: Sequence[float]) -> dict[str, float]:
    """Mean ± Student-t 95 % interval across a few runs (1.96 beyond 10)."""
    a = np.asarray(x, np.float64)
    m = float(a.mean())
    if len(a) < 2:
        return {"mean": m, "lo": float("nan"), "hi": float("nan"), "n": int(len(a))}
    h = _T975.get(len(a) - 1, 1.96) * float(a.std(ddof=1)) / math.sqrt(len(a))
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(len(a))}


def saving_ci(calls: np.ndarray, base_calls: np.ndarray, reps: int = 2000, seed: int = 0) -> dict[str, float]:
    """1 − mean(calls)/mean(base_calls) with a paired bootstrap 95 % interval over tasks (fixed seed).

    >>> saving_ci(np.array([1.0, 1.0]), np.array([2.0, 2.0]))["mean"]
    0.5
    """
    rng = np.random.default_rng(seed)
    n = len(calls)
    idx = rng.integers(0, n, (reps, n))
    boot = 1.0 - calls[idx].mean(1) / np.maximum(base_calls[idx].mean(1), 1e-12)
    m = float(1.0 - calls.mean() / max(base_calls.mean(), 1e-12))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return {"mean": m, "lo": float(lo), "hi": float(hi), "n": int(n)}


def _summary(o: dict[str, np.ndarray]) -> dict[str, Any]:
    return {"return": ci_mean(o["return"]), "accuracy": ci_mean(o["correct"]), "calls": ci_mean(o["calls"]),
            "tokens": float(o["tokens"].mean()), "rounds": float(o["rounds"].mean())}


# ----------------------------------------------------------------------------- evaluation
def evaluate_traces(runs: LoggedRuns, gates: Sequence[StopGate], *, names: Sequence[str] | None = None,
                    price_seed: int = PRICE_SEED, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Tune the whole family on validation, value it and every gate on the test tasks, decide the claims."""
    from ..errors import ConfigError

    t0 = time.perf_counter()
    runs, notes = check_runs(runs)
    require_tasks(runs, "evaluate")
    T, R, W = runs.answers.shape
    names = list(names) if names is not None else [f"gate{i}" for i in range(len(gates))]
    suites = sorted(set(runs.suite.tolist()))
    for n, g in zip(names, gates, strict=True):
        if g.max_rounds != R:
            raise ConfigError(f"{n}: the gate was fitted for a round limit of {g.max_rounds}, the corpus has {R} "
                              "rounds; refit it on this corpus")
        if g.width > W:
            raise ConfigError(f"{n}: the gate samples {g.width} attempts per round, the corpus logged only {W}")
        gs = g.meta.get("suites")
        if gs is not None and sorted(gs) != suites:
            raise ConfigError(f"{n}: the gate was fitted on suites {gs}, the corpus has {suites}; evaluate it on "
                              "tasks of the suites it was fitted on")
        if g.price_seed != price_seed:
            notes.append(f"{n}: fitted with price seed {g.price_seed}, evaluated with {price_seed}")
    train, val, test = (runs.subset(runs.split == s) for s in ("train", "validation", "test"))
    sc = corpus_scales(train)
    price = task_prices(runs.task_ids, price_seed)
    itr, iv, it = (np.flatnonzero(runs.split == s) for s in ("train", "validation", "test"))
    vals = {(w, a): valuation(runs, w, a, price, sc["token_scale"]) for w in range(1, W + 1) for a in AGGREGATIONS}
    # 1–2. every hand-written rule at every width: decisions once, valued under both aggregations
    grid = rule_grid(R, W)
    cands: list[dict[str, Any]] = []
    for w in range(1, W + 1):
        states = vote_states(runs, w, price)
        for fam, rules in grid.items():
            for rule in rules:
                stop = first_stop(np.stack([rule.stop_now(s) for s in states], 1))
                for a in AGGREGATIONS:
                    if fam == "budget" and a != "majority":
                        continue  # self-consistency is the plain majority vote
                    cands.append({"family": fam, "rule": rule.name, "width": w, "aggregation": a, "stop": stop})
        for a in AGGREGATIONS:
            rule, _ = fit_price_logistic(train, val, valuation(train, w, a, price[itr], sc["token_scale"]),
                                         valuation(val, w, a, price[iv], sc["token_scale"]))
            stop = first_stop(np.stack([rule.stop_now(s) for s in states], 1))
            cands.append({"family": "price-logistic", "rule": rule.name, "width": w, "aggregation": a, "stop": stop})
    log(f"{len(cands)} rule settings valued on {len(iv)} validation / {len(it)} test tasks")
    for c in cands:
        out = vals[(c["width"], c["aggregation"])].at(c["stop"])
        c["val"] = {k: v[iv] for k, v in out.items()}
        c["test"] = {k: v[it] for k, v in out.items()}
        c["name"] = f"{c['rule']}/w{c['width']}/{c['aggregation']}"
    chosen = {fam: max((c for c in cands if c["family"] == fam), key=lambda c: c["val"]["return"].mean())
              for fam in FAMILIES}
    best = max(chosen.values(), key=lambda c: c["val"]["return"].mean())
    budgets = [c for c in cands if c["family"] == "budget"]
    always = next(c for c in budgets if c["rule"] == f"budget@{R}" and c["width"] == W)
    # 3. gates
    out_gates: dict[str, Any] = {}
    for n, g in zip(names, gates, strict=True):
        X = check_features(runs, g.width, price, g.token_scale, g.lp_fill, g.len_scale)
        o = vals[(g.width, g.aggregation)].at(first_stop(g.stops(X)))
        gv, gt = ({k: v[ix] for k, v in o.items()} for ix in (iv, it))
        clair = vals[(g.width, g.aggregation)].payoff[it].max(1)
        # the cheapest budget at least as accurate as the gate on validation (else the most accurate)
        acc_ok = [c for c in budgets if c["val"]["correct"].mean() >= gv["correct"].mean() - 1e-12]
        eq = (min(acc_ok, key=lambda c: (c["val"]["calls"].mean(), -c["val"]["correct"].mean())) if acc_ok
              else max(budgets, key=lambda c: c["val"]["correct"].mean()))
        d = ci_mean(gt["return"] - best["test"]["return"])
        sv = saving_ci(gt["calls"], eq["test"]["calls"])
        da = ci_mean(gt["correct"] - eq["test"]["correct"])
        gap = ci_mean(clair - gt["return"])
        claims = {
            "beats_best_rule": {"baseline": best["name"], "return_diff": d, "met": bool(d["lo"] > 0)},
            "fewer_calls_at_equal_accuracy": {"baseline": eq["name"], "call_saving": sv, "accuracy_diff": da,
                                              "met": bool(sv["lo"] >= 0.40 and da["hi"] >= 0)},
            "gap_to_clairvoyant": {"baseline": "clairvoyant", "gap": gap, "met": None},
        }
        for k, v in claims.items():
            v["rule"] = CLAIM_RULES[k]
        vs_family = {fam: ci_mean(gt["return"] - c["test"]["return"]) for fam, c in chosen.items()}
        out_gates[n] = {"summary": _summary(gt), "validation_return": float(gv["return"].mean()),
                        "model_class": g.model_class, "width": g.width, "aggregation": g.aggregation,
                        "fit_seed": g.meta.get("fit_seed"), "claims": claims, "vs_family_best": vs_family}
    report: dict[str, Any] = {
        "corpus": {"tasks": {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")},
                   "rounds": R, "width": W, "suites": suites, "meta": runs.meta},
        "exclusions": notes,
        "price": {"distribution": "log-uniform", "lo": PRICE_LO, "hi": PRICE_HI, "seed": price_seed,
                  "token_scale": sc["token_scale"], "unit": "correct answers per full-width round of tokens"},
        "chosen": {fam: {"name": c["name"], "validation_return": float(c["val"]["return"].mean()),
                         "test": _summary(c["test"])} for fam, c in chosen.items()},
        "best_rule": best["name"],
        "always_continue": {"name": always["name"], "test": _summary(always["test"])},
        "budgets": {c["name"]: {"validation_accuracy": float(c["val"]["correct"].mean()), "test": _summary(c["test"])}
                    for c in budgets},
        "clairvoyant": ci_mean(np.max([v.payoff[it].max(1) for v in vals.values()], axis=0)),
        "gates": out_gates,
        "points": {c["name"]: {"family": c["family"], "accuracy": float(c["test"]["correct"].mean()),
                               "calls": float(c["test"]["calls"].mean()), "return": float(c["test"]["return"].mean())}
                   for c in cands},
        "eval_seconds": time.perf_counter() - t0,
    }
    if len(gates) > 1:
        report["aggregate"] = aggregate(out_gates)
    return report


def aggregate(gates: dict[str, Any]) -> dict[str, Any]:
    """Across gate runs (fitting seeds): k/n runs meeting each claim, and the claim's number ± t-interval."""
    out: dict[str, Any] = {"runs": len(gates), "claims": {}}
    number = {"beats_best_rule": ("return_diff", "mean"), "fewer_calls_at_equal_accuracy": ("call_saving", "mean"),
              "gap_to_clairvoyant": ("gap", "mean")}
    for k, (field, sub) in number.items():
        vals = [g["claims"][k][field][sub] for g in gates.values()]
        met = [g["claims"][k]["met"] for g in gates.values()]
        out["claims"][k] = {"rule": CLAIM_RULES[k], "number": field, "across_runs": t_interval(vals),
                            "met": None if met[0] is None else f"{sum(bool(m) for m in met)}/{len(met)}"}
    out["return"] = t_interval([g["summary"]["return"]["mean"] for g in gates.values()])
    out["accuracy"] = t_interval([g["summary"]["accuracy"]["mean"] for g in gates.values()])
    out["calls"] = t_interval([g["summary"]["calls"]["mean"] for g in gates.values()])
    return out
