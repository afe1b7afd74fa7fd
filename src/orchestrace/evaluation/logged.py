"""``orchestrace eval --traces CORPUS [RUN …] [--test FRESH …]``: every rule and gate valued exactly.

1. **The family** (:mod:`._family`): every stop rule — fixed budgets, vote share, Adaptive-
   Consistency Beta / Dirichlet, ESC, CISC, DeepConf, the price-aware logistic rule and the
   fitted same-feature rules (ridge / logistic on the gate's own features) — at every fixed
   configuration (width, or team member subset) and every aggregation (majority, log-prob
   weighted, confidence weighted where logged; budgets included).
2. **Tuning on validation tasks only**: per family the (rule, configuration, aggregation) with the
   best validation mean return; the best rule is the best of that whole product.
3. **Test tasks** (never used in fitting or tuning) value every chosen rule and every gate
   exactly (:mod:`._value`); all comparisons are paired over the same tasks. Each **fresh
   collection** (``tests``: separately collected tasks under the corpus's settings) is valued the
   same way on all its tasks, with everything fitted and tuned on the corpus alone; a collection
   whose settings differ from the corpus's is refused with the difference named.
4. **Claims** (:data:`CLAIM_RULES`, printed beside PASS/MISS), per gate run; several runs
   (fitting seeds) are aggregated: k/n runs pass, and mean ± 95 % t-interval across runs.

>>> from orchestrace.offline import make_synthetic_logged
>>> from orchestrace.trainers.fitted_q import fit_gate
>>> runs = make_synthetic_logged(T=400, R=4, W=3, seed=0)
>>> gate, _ = fit_gate(runs, classes=("linear",))
>>> res = evaluate_traces(runs, [gate], names=["g"])
>>> sorted(res["gates"]["g"]["claims"])
['beats_best_rule', 'fewer_calls_at_equal_accuracy', 'gap_to_clairvoyant']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._stats import ci_mean, t_interval
from ..errors import ConfigError
from ..logged.corpus import CheckedRuns, billed_prices, held, require_tasks
from ..logged.runs import LoggedRuns
from ..logged.value import (
    PRICE_HI,
    PRICE_LO,
    Scales,
    confidence_of,
    corpus_scales,
    first_stop,
    task_prices,
    valuation,
)
from ..policies.features import check_features
from ..policies.gate import StopGate
from ..trainers.fitted_q import PRICE_SEED
from .family import (
    FAMILIES,
    Candidate,
    columns_of,
    config_name,
    configs,
    family_candidates,
    rule_aggregations,
    rule_grid,
    value_candidates,
)

__all__ = ["CLAIM_RULES", "FAMILIES", "evaluate_traces", "fresh_mismatch", "fresh_sets", "rule_grid"]

CLAIM_RULES: dict[str, str] = {
    "beats_best_rule": "paired return difference vs the validation-chosen best of the whole family × fixed "
                       "configuration × aggregation (budgets, vote shares, Adaptive-Consistency Beta/Dirichlet, ESC, "
                       "CISC, DeepConf, price-aware logistic, fitted ridge/logistic on the gate's features) on the "
                       "evaluation tasks: 95 % CI above 0",
    "fewer_calls_at_equal_accuracy": "vs the cheapest fixed budget (any configuration, any aggregation — the same "
                                     "aggregations the gate may use) whose validation accuracy is at least the gate's: "
                                     "LLM-call saving CI (paired bootstrap) lower bound ≥ 40 % and accuracy-difference "
                                     "CI not below 0",
    "gap_to_clairvoyant": "reference, not a target: return gap to the best stopping time in hindsight at the gate's "
                          "width and aggregation",
}


# ----------------------------------------------------------------------------- statistics
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
#: Settings a fresh collection must share with the corpus (manifest ``config`` keys; the model).
FRESH_SETTINGS = ("rounds", "width", "temperature", "max_tokens", "stop", "logprobs")


def fresh_mismatch(corpus: LoggedRuns, fresh: LoggedRuns) -> list[str]:
    """The settings in which ``fresh`` differs from ``corpus`` (empty: it may be valued as fresh tasks).

    Compared: rounds, width, member kinds (and what each saw), suites, the model (name; the model
    file's sha256 where both manifests give it), the manifest's sampling settings (temperature, max
    tokens, stop, log-probs) where both list them, and shared task ids.

    >>> from orchestrace.offline import make_synthetic_logged
    >>> fresh_mismatch(make_synthetic_logged(10, 3, 2, seed=0), make_synthetic_logged(10, 4, 2, seed=1))[0]
    'rounds: corpus 3, fresh 4'
    """
    out: list[str] = []
    (_, R, W), (_, Rf, Wf) = corpus.answers.shape, fresh.answers.shape
    if Rf != R:
        out.append(f"rounds: corpus {R}, fresh {Rf}")
    if Wf != W:
        out.append(f"width: corpus {W}, fresh {Wf}")
    if tuple(corpus.members) != tuple(fresh.members):
        out.append(f"members: corpus {list(corpus.members) or 'one sampler'}, fresh {list(fresh.members) or 'one sampler'}")
    if tuple(corpus.sees) != tuple(fresh.sees):
        out.append(f"sees: corpus {corpus.sees}, fresh {fresh.sees}")
    sc, sf = sorted(set(corpus.suite.tolist())), sorted(set(fresh.suite.tolist()))
    if sc != sf:
        out.append(f"suites: corpus {sc}, fresh {sf}")
    mc, mf = corpus.meta.get("model"), fresh.meta.get("model")
    if mc != mf:
        out.append(f"model: corpus {mc!r}, fresh {mf!r}")
    hc, hf = ((m.get("server") or {}).get("model_sha256") if isinstance(m.get("server"), dict) else None
              for m in (corpus.meta, fresh.meta))
    if hc and hf and hc != hf:
        out.append(f"model file sha256: corpus {hc[:12]}…, fresh {hf[:12]}…")
    cc, cf = corpus.meta.get("config") or {}, fresh.meta.get("config") or {}
    if isinstance(cc, dict) and isinstance(cf, dict):
        for k in FRESH_SETTINGS[2:]:
            if k in cc and k in cf and cc[k] != cf[k]:
                out.append(f"{k}: corpus {cc[k]!r}, fresh {cf[k]!r}")
    pc, pf = billed_prices(corpus.meta), billed_prices(fresh.meta)
    if pc != pf:
        out.append(f"member prices: corpus {pc or 'none'}, fresh {pf or 'none'}")
    shared = np.intersect1d(corpus.task_ids, fresh.task_ids)
    if len(shared):
        out.append(f"{len(shared)} task id(s) are in the corpus too (first: {shared[0]}); fresh tasks must be new")
    return out


def fill_notes(runs: LoggedRuns, where: str) -> list[str]:
    """Stated, not silent: replies without a log-prob (or, where confidences were logged, without one)
    get the corpus mean (the log-prob vote, CISC, the features; DeepConf's confidence).

    >>> from orchestrace.offline import make_synthetic_logged
    >>> fill_notes(make_synthetic_logged(5, 2, 2, seed=0), "c")
    []
    """
    out = []
    n = runs.logprob_mean.size
    miss = int((~np.isfinite(runs.logprob_mean)).sum())
    if miss:
        out.append(f"{where}: {miss} of {n} replies without a log-prob: the corpus mean stands in (log-prob vote, "
                   "CISC, gate features)")
    if runs.confidence is not None and np.isfinite(runs.confidence).any():
        miss = int((~np.isfinite(runs.confidence)).sum())
        if miss:
            out.append(f"{where}: {miss} of {n} replies without a DeepConf confidence (no top-k log-probs): the "
                       "corpus mean stands in")
    return out


def _gate_outcome(g: StopGate, runs: LoggedRuns, price: np.ndarray, token_scale: float
                  ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The gate's per-task outcome on ``runs`` and the clairvoyant return at its width and aggregation."""
    X = check_features(runs, g.width, price, g.token_scale, g.lp_fill, g.len_scale)
    v = valuation(runs, g.width, g.aggregation, price, token_scale)
    return v.at(first_stop(g.stops(X))), v.payoff.max(1)


def _judge(gt: dict[str, np.ndarray], gv: dict[str, np.ndarray], clair: np.ndarray, best: dict[str, Any],
           budgets: list[dict[str, Any]], chosen: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    """The claims of one gate on one set of evaluation tasks (``key``: the candidates' outcome there)."""
    acc_ok = [c for c in budgets if c["val"]["correct"].mean() >= gv["correct"].mean() - 1e-12]
    eq = (min(acc_ok, key=lambda c: (c["val"]["calls"].mean(), -c["val"]["correct"].mean())) if acc_ok
          else max(budgets, key=lambda c: c["val"]["correct"].mean()))
    d = ci_mean(gt["return"] - best[key]["return"])
    sv = saving_ci(gt["calls"], eq[key]["calls"])
    da = ci_mean(gt["correct"] - eq[key]["correct"])
    claims = {
        "beats_best_rule": {"baseline": best["name"], "return_diff": d, "met": bool(d["lo"] > 0)},
        "fewer_calls_at_equal_accuracy": {"baseline": eq["name"], "call_saving": sv, "accuracy_diff": da,
                                          "met": bool(sv["lo"] >= 0.40 and da["hi"] >= 0)},
        "gap_to_clairvoyant": {"baseline": "clairvoyant", "gap": ci_mean(clair - gt["return"]), "met": None},
    }
    for k, v in claims.items():
        v["rule"] = CLAIM_RULES[k]
    return {"summary": _summary(gt), "claims": claims,
            "vs_family_best": {fam: ci_mean(gt["return"] - c[key]["return"]) for fam, c in chosen.items()}}


def evaluate_traces(runs: LoggedRuns | CheckedRuns, gates: Sequence[StopGate], *, names: Sequence[str] | None = None,
                    price_seed: int = PRICE_SEED, log: Callable[[str], None] = lambda s: None,
                    tests: Sequence[tuple[str, LoggedRuns | CheckedRuns]] = ()) -> dict[str, Any]:
    """Tune the whole family on validation, value it and every gate on the test tasks and on every fresh collection
    of ``tests`` ((name, runs) pairs; all their tasks), decide the claims. Runs are checked once (``held``)."""
    t0 = time.perf_counter()
    runs, notes = held(runs)
    notes += fill_notes(runs, "corpus")
    require_tasks(runs, "evaluate")
    T, R, W = runs.answers.shape
    names = list(names) if names is not None else [f"gate{i}" for i in range(len(gates))]
    suites = sorted(set(runs.suite.tolist()))
    notes += _check_gates(names, gates, R, W, suites, price_seed)
    fresh = fresh_sets(runs, tests, lambda tr, tn: held(tr, where=tn, splits=False))
    fresh = [(tn, tr, tnotes + fill_notes(tr, tn)) for tn, tr, tnotes in fresh]
    train = runs.subset(runs.split == "train")
    sc = corpus_scales(train)
    price = task_prices(runs.task_ids, price_seed)
    itr, iv, it = (np.flatnonzero(runs.split == s) for s in ("train", "validation", "test"))
    # 1–2. every rule × configuration × aggregation, fitted on train, valued on every task
    cands: list[Candidate] = []
    for cols in configs(runs):
        cands += family_candidates(columns_of(runs, cols), itr, iv, price, sc, cols, config=config_name(runs, cols))
    outs = value_candidates(runs, cands, price, sc, keep=np.concatenate([iv, it]))  # validation, then test
    nv = len(iv)
    log(f"{len(cands)} rule settings valued on {len(iv)} validation / {len(it)} test tasks")
    rows: list[dict[str, Any]] = [{"family": c.family, "name": c.name, "cand": c, "val": {k: v[:nv] for k, v in o.items()},
                                   "test": {k: v[nv:] for k, v in o.items()}} for c, o in zip(cands, outs, strict=True)]
    del outs
    chosen = {fam: max((c for c in rows if c["family"] == fam), key=lambda c: c["val"]["return"].mean())
              for fam in FAMILIES}
    best = max(chosen.values(), key=lambda c: c["val"]["return"].mean())
    budgets = [c for c in rows if c["family"] == "budget"]
    full = tuple(range(W))
    always = next(c for c in budgets if c["cand"].rule.rounds == R and c["cand"].columns == full
                  and c["cand"].aggregation == "majority")
    # 3. gates on the test split
    out_gates: dict[str, Any] = {}
    gate_val: dict[str, dict[str, np.ndarray]] = {}
    for n, g in zip(names, gates, strict=True):
        o, clair = _gate_outcome(g, runs, price, sc["token_scale"])
        gv, gt = ({k: v[ix] for k, v in o.items()} for ix in (iv, it))
        gate_val[n] = gv
        out_gates[n] = {**_judge(gt, gv, clair[it], best, budgets, chosen, "test"),
                        "validation_return": float(gv["return"].mean()), "model_class": g.model_class,
                        "width": g.width, "aggregation": g.aggregation, "fit_seed": g.meta.get("fit_seed")}
    _, conf_source = confidence_of(runs)
    report: dict[str, Any] = {
        "corpus": {"tasks": {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")},
                   "rounds": R, "width": W, "members": list(runs.members), "suites": suites, "meta": runs.meta},
        "exclusions": notes,
        "price": {"distribution": "log-uniform", "lo": PRICE_LO, "hi": PRICE_HI, "seed": price_seed,
                  "token_scale": sc["token_scale"], "unit": "correct answers per full-width round of tokens"},
        "confidence_source": conf_source,
        "candidates": len(cands),
        "chosen": {fam: {"name": c["name"], "validation_return": float(c["val"]["return"].mean()),
                         "test": _summary(c["test"])} for fam, c in chosen.items()},
        "best_rule": best["name"],
        "always_continue": {"name": always["name"], "test": _summary(always["test"])},
        "budgets": {c["name"]: {"validation_accuracy": float(c["val"]["correct"].mean()), "test": _summary(c["test"])}
                    for c in budgets},
        "clairvoyant": ci_mean(np.max([valuation(columns_of(runs, cols), len(cols), a, price, sc["token_scale"])
                                       .payoff[it].max(1) for cols in configs(runs) for a in rule_aggregations(runs)],
                                      axis=0)),
        "gates": out_gates,
        "points": {c["name"]: {"family": c["family"], "accuracy": float(c["test"]["correct"].mean()),
                               "calls": float(c["test"]["calls"].mean()), "return": float(c["test"]["return"].mean())}
                   for c in rows if c["family"] in ("budget", "share", "ac-beta", "esc") or c in chosen.values()},
    }
    if len(gates) > 1:
        report["aggregate"] = aggregate(out_gates)
    # 4. fresh collections: everything fitted and chosen above, valued on all their tasks
    keep = {id(c): c for c in [*chosen.values(), best, always, *budgets]}
    report["fresh"] = {}
    for tn, tr, tnotes in fresh:
        report["fresh"][tn] = _fresh_entry(tr, tnotes, list(keep.values()), names, gates, gate_val, chosen, best,
                                           always, budgets, price_seed, sc)
        log(f"{tn}: {len(tr.task_ids)} fresh tasks valued")
    report["eval_seconds"] = time.perf_counter() - t0
    return report


def _check_gates(names: Sequence[str], gates: Sequence[StopGate], R: int, W: int, suites: list[str],  # noqa: N803
                 price_seed: int) -> list[str]:
    """Refuse a gate fitted for another loop (round limit, width, suites); note a different price seed."""
    notes = []
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
    return notes


def fresh_sets(runs: LoggedRuns, tests: Sequence[tuple[str, LoggedRuns | CheckedRuns]],
               check: Callable[[LoggedRuns | CheckedRuns, str], tuple[LoggedRuns, list[str]]]
               ) -> list[tuple[str, LoggedRuns, list[str]]]:
    """The fresh collections, checked to be fresh tasks of the corpus's loop (:func:`fresh_mismatch`: rounds,
    width, members and what each saw, suites, model, sampling, no shared task) and held to the contract by
    ``check(runs, where)`` (:func:`~orchestrace.logged.corpus.held`: once), with their exclusion notes."""
    fresh: list[tuple[str, LoggedRuns, list[str]]] = []
    for tn, tr in tests:
        diff = fresh_mismatch(runs, tr.runs if isinstance(tr, CheckedRuns) else tr)
        if diff:
            raise ConfigError(f"--test {tn}: its settings differ from the corpus's, so its tasks are not fresh tasks "
                              f"of the same loop: {'; '.join(diff)}")
        tr, tnotes = check(tr, tn)
        fresh.append((tn, tr, tnotes))
    return fresh


def _fresh_entry(tr: LoggedRuns, tnotes: list[str], kept: list[dict[str, Any]], names: Sequence[str],
                 gates: Sequence[StopGate], gate_val: dict[str, dict[str, np.ndarray]], chosen: dict[str, Any],
                 best: dict[str, Any], always: dict[str, Any], budgets: list[dict[str, Any]], price_seed: int,
                 sc: Scales) -> dict[str, Any]:
    """Step 4 for one fresh collection: the rules and gates fitted and chosen on the corpus, valued on all its tasks."""
    pf = task_prices(tr.task_ids, price_seed)
    fo = value_candidates(tr, [c["cand"] for c in kept], pf, sc)
    for c, o in zip(kept, fo, strict=True):
        c["fresh"] = o
    fg: dict[str, Any] = {}
    for n, g in zip(names, gates, strict=True):
        o, clair = _gate_outcome(g, tr, pf, sc["token_scale"])
        fg[n] = {**_judge(o, gate_val[n], clair, best, budgets, chosen, "fresh"), "model_class": g.model_class,
                 "width": g.width, "aggregation": g.aggregation, "fit_seed": g.meta.get("fit_seed")}
    entry: dict[str, Any] = {
        "tasks": int(len(tr.task_ids)), "exclusions": tnotes, "meta": tr.meta,
        "chosen": {fam: {"name": c["name"], "test": _summary(c["fresh"])} for fam, c in chosen.items()},
        "best_rule": best["name"],
        "always_continue": {"name": always["name"], "test": _summary(always["fresh"])},
        "budgets": {c["name"]: {"test": _summary(c["fresh"])} for c in budgets},
        "gates": fg}
    if len(gates) > 1:
        entry["aggregate"] = aggregate(fg)
    return entry


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
