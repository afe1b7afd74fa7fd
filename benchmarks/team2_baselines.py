"""The oracle gap of the pre-registered baselines on a two-round team corpus (docs/team2-preregistration.md).

    python benchmarks/team2_baselines.py CORPUS [--fresh FRESH] [--json OUT]

Reads the corpus (prices charged), values every path exactly (``all_paths``), and on the corpus's
test split — or on FRESH, a later collection of the same team — reports the mean return of:

- the per-task oracle (best path in hindsight);
- the per-family best fixed path, chosen on train + validation (a path-level stand-in for the
  pre-registration's baseline 1, which is the library's rule family: ``orchestrace eval --traces``);
- the confidence cascade (first member and τ per family on validation);
- the nearest-neighbour router (neighbours from train; first subset and k per family on validation);
- the LearnStop-style threshold (logistic models fitted on train; first subset, aggregation, τ on validation);

and, for each, the fraction of the fixed-path → oracle gap it closes with a paired task-bootstrap 95 %
interval (2,000 resamples, seed 0). The learned joint policy is valued by ``orchestrace eval``.

The pre-registered analysis (baselines 1-6 as pre-registered, every joint-policy seed, the decision rule)
is ``benchmarks/team2_analysis.py``; this script is the earlier quick look, kept for its fixed-path view.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def frac_ci(p: np.ndarray, base: np.ndarray, orc: np.ndarray, n: int = 2000, seed: int = 0) -> dict:
    """Fraction of the base → oracle gap closed by ``p`` (ratio of means) and its paired bootstrap interval."""
    rng = np.random.default_rng(seed)

    def f(i: np.ndarray) -> float:
        gap = orc[i].mean() - base[i].mean()
        return float((p[i].mean() - base[i].mean()) / gap) if gap > 1e-12 else float("nan")

    boots = [f(rng.integers(0, len(p), len(p))) for _ in range(n)]
    boots = [b for b in boots if np.isfinite(b)]
    lo, hi = (np.percentile(boots, [2.5, 97.5]).tolist() if boots else [float("nan")] * 2)
    return {"fraction": f(np.arange(len(p))), "ci95": [lo, hi]}


def prompt_of(task_id: str) -> str:
    """The prompt of a built-in vote task, regenerated from its id (the library's one definition)."""
    from orchestrace.llm.tasks import vote_task_prompt

    return vote_task_prompt(task_id)


def repeats(ids: np.ndarray, seen: set[str]) -> np.ndarray:
    """(N,) bool: the task's prompt is among ``seen`` (prompts of another set)."""
    return np.array([prompt_of(t) in seen for t in ids.tolist()], bool)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--fresh", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()

    from orchestrace.evaluation.team_baselines import (
        all_paths,
        escalations,
        fit_cascade,
        fit_knn_router,
        fit_learnstop,
    )
    from orchestrace.logged.runs import load_logged_runs
    from orchestrace.logged.value import task_prices
    from orchestrace.policies.team import TeamArrays

    runs = load_logged_runs(a.corpus, exclude=True)
    tok = runs.prompt_tokens.astype(float) + runs.completion_tokens
    train = np.flatnonzero(runs.split == "train")
    val = np.flatnonzero(runs.split == "validation")
    scale = float(tok[train].sum(2).mean())
    arr = TeamArrays.build(runs, task_prices(runs.task_ids, 0), scale)
    ret, names = all_paths(arr, np.arange(len(runs.task_ids)))
    if a.fresh:
        fr = load_logged_runs(a.fresh, exclude=True)
        if fr.members != runs.members:
            print(f"error: {a.fresh}: members {fr.members} differ from the corpus's {runs.members}", file=sys.stderr)
            return 2
        farr = TeamArrays.build(fr, task_prices(fr.task_ids, 0), scale, lp_fill=arr.lp_fill, cf_fill=arr.cf_fill,
                                cells=arr.cells)
        fret, _ = all_paths(farr, np.arange(len(fr.task_ids)))
        ev_arr, ev_ret, ev_rows, where = farr, fret, np.arange(len(fr.task_ids)), a.fresh
    else:
        ev_arr, ev_ret, ev_rows, where = arr, ret, np.flatnonzero(runs.split == "test"), "test split"
    fit_prompts = {prompt_of(t) for t in runs.task_ids[np.concatenate([train, val])].tolist()}
    dup = repeats((fr.task_ids if a.fresh else runs.task_ids)[ev_rows], fit_prompts)
    notes = [f"{int(dup.sum())} of {len(ev_rows)} {where} task(s) repeat a train/validation prompt: excluded"]
    ev_rows = ev_rows[~dup]
    sel = np.concatenate([train, val])
    fixed = np.zeros(len(ev_rows))
    for c in range(len(arr.cells)):  # per family: the best path on train + validation
        best = int(ret[sel[arr.cell[sel] == c]].mean(0).argmax())
        m = ev_arr.cell[ev_rows] == c
        fixed[m] = ev_ret[ev_rows[m], best]
    oracle = ev_ret[ev_rows].max(1)
    cas = fit_cascade(arr, val, escalations(arr, runs.meta.get("billing", {}).get("prices")))
    router = fit_knn_router(arr, train, val, ret, names)
    ls = fit_learnstop(arr, train, val, ret, names)
    if a.fresh:  # the router's neighbours are the corpus's training tasks: value fresh tasks against them
        both = np.concatenate([ret, ev_ret])
        import dataclasses

        joined = dataclasses.replace(ev_arr, **{k: np.concatenate([getattr(arr, k), getattr(ev_arr, k)])
                                                for k in ("codes", "wlp", "wcf", "lp", "cf", "tok", "correct_code",
                                                          "price", "cell")}, K=max(arr.K, ev_arr.K))
        knn = router.value(joined, ev_rows + len(runs.task_ids), both, names)
        lst = ls.value(ev_arr, ev_rows, ev_ret, names)
    else:
        knn = router.value(arr, ev_rows, ret, names)
        lst = ls.value(arr, ev_rows, ret, names)
    res = {"where": where, "tasks": len(ev_rows), "notes": notes, "load": open("/proc/loadavg").read().split()[:3],  # noqa: SIM115
           "mean_return": {"oracle": float(oracle.mean()), "fixed_per_family": float(fixed.mean()),
                           "cascade": float(cas.value(ev_arr, ev_rows).mean()), "knn_router": float(knn.mean()),
                           "learnstop": float(lst.mean())},
           "gap_closed": {"cascade": frac_ci(cas.value(ev_arr, ev_rows), fixed, oracle),
                          "knn_router": frac_ci(knn, fixed, oracle), "learnstop": frac_ci(lst, fixed, oracle)},
           "cascade": {arr.cells[c]: [arr.members[f], cas.tau[c] if np.isfinite(cas.tau[c]) else str(cas.tau[c])]
                       for c, f in cas.first.items()},
           "router": {arr.cells[c]: [[arr.members[i] for i in s], router.k[c]] for c, s in router.first.items()}}
    text = json.dumps(res, indent=1)
    if a.json:
        from orchestrace.core.io import atomic_write

        atomic_write(a.json, (text + "\n").encode())  # a reader never sees half a file
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
