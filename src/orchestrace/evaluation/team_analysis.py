"""The pre-registered analysis of a two-round team corpus in one place (docs/team2-preregistration.md).

:func:`analyse_team`, read top to bottom:

1. **Sets.** The corpus is read with the library's checks (``check_team_runs``); the claim set is the
   corpus's test split, or a fresh collection of the same team (``fresh_sets``: same loop, no shared task).
   Tasks whose prompt repeats are excluded and counted: test tasks repeating a train/validation prompt;
   fresh tasks repeating any prompt of the development corpus (the pre-registration's rule; the count
   against train + validation alone is reported beside it).
2. **Exact valuation** (prices charged): every path of the joint action space (:func:`.team_baselines.path_table`);
   the oracle is its best path per task.
3. **Baselines 1–6**, one definition each, fitted and chosen on the development corpus only:
   1 the rule family's (member subset × stop rule × aggregation) chosen per task family on train + validation and
   2 one such setting for every family, both through :mod:`.logged_team`'s own tuning and valuation; 3 the
   nearest-neighbour router, 4 the cascade, 5 the LearnStop-style threshold, 6 the fitted ridge / logistic rules
   (:mod:`.team_baselines`). The joint policies (one per fitting seed) are valued by the library's rollout.
4. **Statistics**: per policy mean return, accuracy, calls, dollar cost; the fraction of the baseline-1 → oracle
   gap closed (ratio of means) and the paired difference against every baseline, each with a paired task
   bootstrap 95 % interval (one set of ``reps`` resamples, ``seed``).
5. **The decision rule, per seed**: it closes ≥ 25 % of the gap, every paired interval against baselines 1–6
   lies above 0, and its mean dollar cost is at most the cascade's.

The joint policies' mean returns are cross-checked against :func:`.logged_team.evaluate_team` on the same tasks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.corpus import check_team_runs, held
from ..logged.runs import LoggedRuns
from ..policies.team import TeamArrays, subsets
from ..policies.team_policy import TeamPolicy
from ..trainers.team_fitted_q import arrays_for, team_scales
from .logged import fresh_sets
from .logged_team import _cell_of, _tune, _Tuned, evaluate_team
from .team_baselines import (
    check_constants,
    escalations,
    fit_cascade,
    fit_fitted_rules,
    fit_knn_router,
    fit_learnstop,
    path_table,
    policy_outcome,
)

__all__ = ["BASELINES", "GAP_TARGET", "analyse_team", "bootstrap", "decide"]

#: The pre-registered baselines, in the order of the pre-registration.
BASELINES = ("1_rule_per_family", "2_rule_fixed_team", "3_knn_router", "4_cascade", "5_learnstop", "6_fitted_rules")
#: The share of the baseline-1 → oracle gap the joint policy must close (the decision rule).
GAP_TARGET = 0.25
Outcome = dict[str, np.ndarray]


def bootstrap(out: dict[str, Outcome], policies: Sequence[str], base: str = BASELINES[0], oracle: str = "oracle",
              reps: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per policy: the fraction of the ``base`` → ``oracle`` gap closed and the paired return difference against
    every other entry of ``out``, each with a paired task-bootstrap 95 % interval (the same ``reps`` resamples).

    >>> o = {"oracle": {"return": np.ones(4)}, "b": {"return": np.zeros(4)}, "p": {"return": np.full(4, 0.5)}}
    >>> r = bootstrap(o, ["p"], base="b")
    >>> r["p"]["gap_closed"]["fraction"], r["p"]["vs"]["b"]["mean"]
    (0.5, 0.5)
    """
    n = len(out[oracle]["return"])
    idx = np.random.default_rng(seed).integers(0, n, (reps, n))  # (reps, n) resampled tasks
    ret = {k: o["return"] for k, o in out.items()}
    gap = ret[oracle][idx].mean(1) - ret[base][idx].mean(1)  # (reps,)
    res: dict[str, Any] = {}
    for p in policies:
        g0 = ret[oracle].mean() - ret[base].mean()
        frac = float((ret[p].mean() - ret[base].mean()) / g0) if g0 > 1e-12 else float("nan")
        ok = gap > 1e-12
        boots = (ret[p][idx].mean(1) - ret[base][idx].mean(1))[ok] / gap[ok]
        lo, hi = np.percentile(boots, [2.5, 97.5]).tolist() if len(boots) else [float("nan")] * 2
        vs = {}
        for b in out:
            if b == p:
                continue
            d = ret[p] - ret[b]
            blo, bhi = np.percentile(d[idx].mean(1), [2.5, 97.5]).tolist()
            vs[b] = {"mean": float(d.mean()), "lo": blo, "hi": bhi}
        res[p] = {"gap_closed": {"fraction": frac, "ci95": [lo, hi], "resamples_with_a_gap": int(ok.sum())}, "vs": vs}
    return res


def decide(stats: dict[str, Any], summary: dict[str, dict[str, float]], policy: str) -> dict[str, Any]:
    """The pre-registered decision rule for one policy (module docstring, step 5)."""
    frac = stats["gap_closed"]["fraction"]
    above = {b: bool(stats["vs"][b]["lo"] > 0) for b in BASELINES}
    cost_p, cost_c = summary[policy]["cost_usd"], summary[BASELINES[3]]["cost_usd"]
    cheaper = bool(cost_p <= cost_c + 1e-15) if cost_p is not None and cost_c is not None else \
        bool(summary[policy]["tokens"] <= summary[BASELINES[3]]["tokens"] + 1e-9)
    parts = {"closes_25pct_of_gap": bool(np.isfinite(frac) and frac >= GAP_TARGET), "ci_above_0_vs": above,
             "beats_cascade_at_equal_or_lower_cost": bool(above[BASELINES[3]] and cheaper)}
    return {**parts, "succeeds": bool(parts["closes_25pct_of_gap"] and all(above.values())
                                      and parts["beats_cascade_at_equal_or_lower_cost"])}


def _repeats(ids: np.ndarray, seen: set[str], prompt_of: Callable[[str], str]) -> np.ndarray:
    return np.array([prompt_of(t) in seen for t in ids.tolist()], bool)


def _claim_set(runs: LoggedRuns, fresh: LoggedRuns | None, prompt_of: Callable[[str], str] | None,
               notes: list[str]) -> tuple[np.ndarray, LoggedRuns | None]:
    """Step 1: the claim rows (test split rows, or the kept fresh tasks) and the fresh runs kept."""
    fitsel = np.isin(runs.split, ("train", "validation"))
    if prompt_of is None:
        notes.append("duplicate prompts not checked (no prompt_of given)")
        seen_fit: set[str] = set()
    else:
        seen_fit = {prompt_of(t) for t in runs.task_ids[fitsel].tolist()}
    if fresh is None:
        rows = np.flatnonzero(runs.split == "test")
        dup = _repeats(runs.task_ids[rows], seen_fit, prompt_of) if prompt_of else np.zeros(len(rows), bool)
        notes.append(f"{int(dup.sum())} of {len(rows)} test task(s) repeat a train/validation prompt: excluded")
        return rows[~dup], None
    if prompt_of is None:
        return np.arange(len(fresh.task_ids)), fresh
    seen_all = {prompt_of(t) for t in runs.task_ids.tolist()}
    dup = _repeats(fresh.task_ids, seen_all, prompt_of)
    dup_fit = _repeats(fresh.task_ids, seen_fit, prompt_of)
    notes.append(f"{int(dup.sum())} of {len(dup)} fresh task(s) repeat a prompt of the development corpus: excluded "
                 f"({int(dup_fit.sum())} of them repeat a train/validation prompt)")
    if dup.all():
        raise ConfigError("every fresh task repeats a prompt of the development corpus: nothing left to value")
    kept = fresh.subset(~dup)
    return np.arange(len(kept.task_ids)), kept


def _joined(a: TeamArrays, b: TeamArrays) -> TeamArrays:
    """The corpus's and a fresh set's arrays as one (the router's neighbours are corpus tasks)."""
    keys = ("codes", "wlp", "wcf", "lp", "cf", "tok", "correct_code", "price", "cell")
    joined: dict[str, Any] = {k: np.concatenate([getattr(a, k), getattr(b, k)]) for k in keys}
    return dataclasses.replace(b, **joined, K=max(a.K, b.K))


def _take(table: dict[str, np.ndarray], rows: np.ndarray, cols: np.ndarray) -> Outcome:
    return {k: v[rows, cols] for k, v in table.items()}


def _rules_1_2(runs: LoggedRuns, arr: TeamArrays, ev: tuple[str, TeamArrays, np.ndarray, LoggedRuns],
               sel: np.ndarray) -> tuple[Outcome, Outcome, dict[str, Any]]:
    """Baselines 1 and 2 through :mod:`.logged_team`'s tuning (every rule × configuration), chosen on ``sel``."""
    R = runs.answers.shape[1]
    sn, earr, rows, eruns = ev
    sets = [("test", arr, np.flatnonzero(runs.split == "test"))] + ([] if sn == "test" else [(sn, earr, rows)])
    sel_cell = _cell_of(runs)[sel]
    masks = {c: sel_cell == c for c in sorted(set(sel_cell.tolist()))}
    cands, paths = _tune(arr, sets, [] if sn == "test" else [sn], sel, subsets(runs), list(arr.members), masks, R)
    best = max(cands, key=lambda c: c["val_return"])
    route = {c: max(cands, key=lambda x: x["val_cells"].get(c, float("-inf"))) for c in masks}
    tuned = _Tuned(paths, best, route, {"test": runs, sn: eruns})
    names = {"1_rule_per_family": {c: x["name"] for c, x in route.items()}, "2_rule_fixed_team": best["name"]}
    return tuned.routed(sn, rows), tuned.value(best, sn, rows), names


def _baselines_3_6(runs: LoggedRuns, arr: TeamArrays, table: dict[str, np.ndarray], names: list,
                   ev: tuple[str, TeamArrays, np.ndarray, LoggedRuns], etable: dict[str, np.ndarray], seed: int,
                   price_seed: int) -> tuple[dict[str, Outcome], dict[str, Any]]:
    """Baselines 3–6 fitted on train, chosen on validation; their exact outcomes on the claim rows."""
    sn, earr, rows, _ = ev
    train, val = np.flatnonzero(runs.split == "train"), np.flatnonzero(runs.split == "validation")
    ret = table["return"]
    cas = fit_cascade(arr, val, escalations(arr, runs.meta.get("billing", {}).get("prices")))
    router = fit_knn_router(arr, train, val, ret, names)
    ls = fit_learnstop(arr, train, val, ret, names)
    b6 = fit_fitted_rules(runs, arr, ret, names, seed=seed, price_seed=price_seed)
    if sn == "test":
        r_arr, r_rows, r_ret = arr, rows, ret
    else:  # the router's neighbours are the corpus's training tasks: value fresh tasks against them
        r_arr, r_rows, r_ret = _joined(arr, earr), rows + len(runs.task_ids), np.concatenate([ret, etable["return"]])
    out = {"3_knn_router": _take(etable, rows, router.choose(r_arr, r_rows, r_ret, names)),
           "4_cascade": _take(etable, rows, cas.choose(earr, rows, names)),
           "5_learnstop": _take(etable, rows, ls.choose(earr, rows, names))}
    lin = policy_outcome(earr, b6.linear, rows)
    lo = _take(etable, rows, b6.logistic.choose(earr, rows, names))
    use = np.array([b6.pick[int(c)] == "linear" for c in earr.cell[rows]], bool)
    keys = ("return", "correct", "calls", "tokens")
    out["6_fitted_rules"] = {k: np.where(use, lin[k], lo[k]) for k in keys}
    out["6a_linear_fitted_q"] = {k: lin[k] for k in keys}
    out["6b_logistic_stop"] = lo
    cell = arr.cells
    settings = {"4_cascade": {cell[c]: [arr.members[f], cas.tau[c] if np.isfinite(cas.tau[c]) else str(cas.tau[c])]
                              for c, f in cas.first.items()},
                "3_knn_router": {cell[c]: [[arr.members[i] for i in s], router.k[c]] for c, s in router.first.items()},
                "5_learnstop": {cell[c]: [[arr.members[i] for i in s], g, t] for c, (s, g, t) in ls.first.items()},
                "6_fitted_rules": {cell[c]: p for c, p in b6.pick.items()},
                "6a_linear_fitted_q": {"alpha": b6.linear.meta["reg"], "fit_seed": seed},
                "6b_logistic_stop": {cell[c]: [[arr.members[i] for i in s], g, t]
                                     for c, (s, g, t) in b6.logistic.team.items()}}
    return out, settings


def _summary(o: Outcome, dollars: float | None) -> dict[str, Any]:
    return {"return": float(o["return"].mean()), "accuracy": float(o["correct"].mean()),
            "calls": float(o["calls"].mean()), "tokens": float(o["tokens"].mean()),
            "cost_usd": None if dollars is None else float(o["tokens"].mean() * dollars)}


def analyse_team(runs: LoggedRuns, policies: Sequence[TeamPolicy], names: Sequence[str], *,
                 fresh: LoggedRuns | None = None, fresh_name: str = "fresh",
                 prompt_of: Callable[[str], str] | None = None, price_seed: int = 0, baseline_seed: int = 0,
                 reps: int = 2000, seed: int = 0, crosscheck: bool = True,
                 log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """The pre-registered analysis (module docstring) of ``policies`` (one per fitting seed, named ``names``) on
    the corpus's test split or on ``fresh``; ``prompt_of`` maps a task id to its prompt (duplicate checks)."""
    runs, notes = check_team_runs(runs, where=str(runs.meta.get("path", "corpus")), allow_vote=True)
    if fresh is not None:
        (_, fresh, fnotes), = fresh_sets(runs, [(fresh_name, fresh)],
                                         lambda r, n: held(r, where=n, splits=False, team=True))
        notes += [f"{fresh_name}: {x}" for x in fnotes]
    rows, kept = _claim_set(runs, fresh, prompt_of, notes)
    for n, p in zip(names, policies, strict=True):
        p.check_team(runs.members, runs.sees, runs.answers.shape[1], where=f"{n} on the corpus")
        if p.price_seed != price_seed:
            raise ConfigError(f"{n}: fitted with task prices of seed {p.price_seed}, the analysis charges seed "
                              f"{price_seed}; pass price_seed={p.price_seed} or refit")
    sc = team_scales(runs.subset(runs.split == "train"))
    arr = arrays_for(runs, sc, price_seed)
    for n, p in zip(names, policies, strict=True):
        check_constants(arr, p, n)
    table, pnames = path_table(arr, np.arange(len(runs.task_ids)))
    if kept is None:
        ev = ("test", arr, rows, runs)
        etable = table
    else:
        unknown = sorted(set(_cell_of(kept).tolist()) - set(sc["cells"]))
        if unknown:
            raise ConfigError(f"{fresh_name}: task cell(s) {unknown} are not in the corpus ({list(sc['cells'])})")
        earr = arrays_for(kept, sc, price_seed)
        etable, _ = path_table(earr, np.arange(len(kept.task_ids)))
        ev = (fresh_name, earr, rows, kept)
    log(f"{len(rows)} claim task(s) on {ev[0]}; {len(pnames)} paths valued")
    sel = np.flatnonzero(np.isin(runs.split, ("train", "validation")))
    out: dict[str, Outcome] = {"oracle": _take(etable, rows, etable["return"][rows].argmax(1))}
    b1, b2, settings = _rules_1_2(runs, arr, ev, sel)
    out[BASELINES[0]], out[BASELINES[1]] = b1, b2
    b36, s36 = _baselines_3_6(runs, arr, table, pnames, ev, etable, baseline_seed, price_seed)
    out.update(b36)
    settings.update(s36)
    for n, p in zip(names, policies, strict=True):
        out[n] = {k: v for k, v in policy_outcome(ev[1], p, rows).items() if k in ("return", "correct", "calls",
                                                                                     "tokens")}
    log("baselines and policies valued")
    bill = runs.meta.get("billing") or {}
    dollars = float(bill["ref_price"]) / 1e6 if "ref_price" in bill else None
    summary = {k: _summary(o, dollars) for k, o in out.items()}
    stats = bootstrap({k: o for k, o in out.items()}, list(names), reps=reps, seed=seed)
    res: dict[str, Any] = {
        "where": ev[0], "tasks": int(len(rows)), "task_ids": ev[3].task_ids[rows].tolist(), "exclusions": notes, "summary": summary, "settings": settings,
        "policies": {n: {**stats[n], "decision": decide(stats[n], summary, n),
                         "model_class": p.model_class, "fit_seed": p.meta.get("fit_seed")}
                     for n, p in zip(names, policies, strict=True)},
        "bootstrap": {"resamples": reps, "seed": seed, "unit": "task"},
        "cost_unit": bill.get("unit", "logged tokens (the corpus has no prices)")}
    res["succeeds_in_every_seed"] = bool(policies) and all(v["decision"]["succeeds"] for v in res["policies"].values())
    if crosscheck and policies:
        res["crosscheck"] = _crosscheck(runs, kept, fresh_name, policies, names, price_seed, summary)
    return res


def _crosscheck(runs: LoggedRuns, kept: LoggedRuns | None, fresh_name: str, policies: Sequence[TeamPolicy],
                names: Sequence[str], price_seed: int, summary: dict[str, Any]) -> dict[str, Any]:
    """The joint policies' mean return by :func:`.logged_team.evaluate_team` on the same tasks (test split: all its
    tasks, so the policy is re-valued here on all of them too)."""
    tests = [] if kept is None else [(fresh_name, kept)]
    ref = evaluate_team(runs, policies, names=list(names), tests=tests, price_seed=price_seed, stop_only=False)
    sn = "test" if kept is None else fresh_name
    ent = ref["sets"][sn]
    res: dict[str, Any] = {"evaluate_team_best_rule_per_cell (chosen on validation only)":
                           ent["baselines"]["best_rule_per_cell"]["return"]["mean"]}
    sc = team_scales(runs.subset(runs.split == "train"))
    for n, p in zip(names, policies, strict=True):
        if kept is None:
            arr = arrays_for(runs, sc, price_seed)
            here = float(policy_outcome(arr, p, np.flatnonzero(runs.split == "test"))["return"].mean())
        else:
            here = summary[n]["return"]
        theirs = ent["policies"][n]["summary"]["return"]["mean"]
        res[n] = {"evaluate_team": theirs, "here": here, "agree": bool(abs(theirs - here) < 1e-9)}
    return res
