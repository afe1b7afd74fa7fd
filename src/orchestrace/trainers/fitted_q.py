"""Fitting stop rules from logged paths only: Longstaff–Schwartz backward induction, model classes.

The learned gate (:func:`fit_gate`), read top to bottom:

1. **Paths.** Every training task's logged run is a path: at check k the payoff of stopping is
   P_k (:mod:`._value`), the features x_k what the trace holds then (:data:`FEATURES`).
2. **Backward induction** (Longstaff–Schwartz): U = P_{R−1} (the last check must stop); for
   k = R−2 … 0 regress y = U − P_k (the advantage of continuing, realised cash flows) on x_k,
   continue where the fit f_k(x_k) > 0, and set U = P_k where the gate stops at k.
3. **Model classes** for f_k: ``linear`` (ridge), ``quadratic`` (ridge on the features and
   their pairwise products), ``mlp`` (one hidden layer of 32 tanh units, torch on 1 thread,
   Adam with weight decay, early stopping on a 20 % hold-out of the training tasks — the only
   seeded part); each with a small grid of regularisation strengths.
4. **Validation only chooses**: the width and aggregation (by the linear gate's exact value
   on the validation tasks), then the class and its regularisation (same criterion).

The price-aware logistic rule (:func:`fit_price_logistic`) is one logistic model on the vote
summary + price + rounds left (:data:`~orchestrace.policies.rules.VOTE_SUMMARY`), pooled over
checks, fitted on the training tasks by the same regression-based stopping (policy iteration:
labels "continuing beats stopping" weighted by |U − P|, three rounds), its probability margin
chosen on validation.

>>> from orchestrace.offline import make_synthetic_logged
>>> runs = make_synthetic_logged(T=300, R=4, W=3, seed=0)
>>> gate, report = fit_gate(runs, classes=("linear",), seed=0)
>>> gate.model_class, len(gate.checks) == 3
('linear', True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.corpus import fit_splits
from ..logged.runs import LoggedRuns
from ..logged.value import (
    AGGREGATIONS,
    Valuation,
    continuation_values,
    corpus_scales,
    first_stop,
    task_prices,
    valuation,
)
from ..policies.features import FEATURES, check_features, vote_states
from ..policies.gate import StopGate, predict
from ..policies.policy_file import QModel, as_model
from ..policies.regressors import fit_mlp, quad, ridge
from ..policies.rules import VOTE_SUMMARY, PriceLogistic, vote_summary
from .fit_steps import FitReport, choose, fit_classes

__all__ = ["CLASSES", "corpus_scales", "fit_gate", "fit_price_logistic", "ls_fit"]

#: Model classes of the gate, simplest first, with their regularisation grids.
CLASSES: dict[str, tuple[float, ...]] = {"linear": (1.0, 10.0, 100.0), "quadratic": (10.0, 100.0, 1000.0),
                                         "mlp": (1e-3, 1e-2)}
PRICE_SEED = 0


# ----------------------------------------------------------------------------- regressors (policies.regressors)
def _ridge(X: np.ndarray, y: np.ndarray, alpha: float) -> dict[str, Any]:
    coef = ridge(np.concatenate([X, np.ones((len(X), 1))], 1), y, alpha)
    return {"w": coef[:-1].tolist(), "b": float(coef[-1])}


def _fitter(cls: str, reg: float, seed: int) -> Callable[[np.ndarray, np.ndarray], dict[str, Any]]:
    if cls == "linear":
        return lambda X, y: _ridge(X, y, reg)
    if cls == "quadratic":
        return lambda X, y: _ridge(quad(X), y, reg)
    if cls == "mlp":
        return lambda X, y: fit_mlp(X, y, reg, seed)
    raise ConfigError(f"model class {cls!r}: use one of {', '.join(CLASSES)}")


# ----------------------------------------------------------------------------- backward induction
def ls_fit(X: np.ndarray, payoff: np.ndarray, fit: Callable[[np.ndarray, np.ndarray], dict[str, Any]],
           cls: str) -> list[QModel]:
    """Longstaff–Schwartz on paths: ``X`` (T, R, F) standardised features, ``payoff`` (T, R).

    Returns one fitted model per check 0..R−2 (the last check always stops).

    >>> X = np.zeros((4, 2, 1)); pay = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> m = ls_fit(X, pay, lambda X, y: _ridge(X, y, 1.0), "linear")
    >>> round(m[0].b, 2)   # the mean advantage of continuing at check 0: (1 + 1 + 1 − 1) / 4
    0.5
    """
    T, R, _ = X.shape
    models: list[QModel] = [QModel()] * (R - 1)
    legal = np.ones((T, R), bool)
    legal[:, -1] = False
    cont = np.zeros((T, R), bool)  # the fitted decisions so far (checks k+1 … R−2)
    for k in range(R - 2, -1, -1):
        y = continuation_values(payoff, legal, cont)[:, k] - payoff[:, k]  # the one backward pass
        models[k] = as_model(fit(X[:, k], y))
        cont[:, k] = predict(cls, models[k], X[:, k]) > 0
    return models


def _gate_stops(cls: str, models: list[QModel], X: np.ndarray) -> np.ndarray:
    T, R, _ = X.shape
    stop = np.ones((T, R), bool)
    for k in range(R - 1):
        stop[:, k] = predict(cls, models[k], X[:, k]) <= 0
    return stop


def fit_gate(runs: LoggedRuns, *, classes: Sequence[str] = tuple(CLASSES), seed: int = 0,
             widths: Sequence[int] | None = None, price_seed: int = PRICE_SEED,
             log: Callable[[str], None] = lambda s: None) -> tuple[StopGate, FitReport]:
    """Fit the stop gate on the corpus's train tasks, choose on its validation tasks (module docstring; the steps
    shared with the team policy's fit are :mod:`.fit_steps`').

    Returns the gate and a report: every candidate's validation mean return, the chosen one.
    """
    classes = fit_classes(classes, CLASSES, log)
    train, val = fit_splits(runs)
    T, R, W = runs.answers.shape
    if R < 2:
        raise ConfigError(f"the corpus has {R} round(s) per task; learning when to stop needs at least 2")
    sc = corpus_scales(train)
    p_tr, p_va = task_prices(train.task_ids, price_seed), task_prices(val.task_ids, price_seed)
    widths = list(widths) if widths is not None else list(range(1, W + 1))
    candidates: list[dict[str, Any]] = []

    def feats(r: LoggedRuns, w: int, p: np.ndarray) -> np.ndarray:
        return check_features(r, w, p, sc["token_scale"], sc["lp_fill"], sc["len_scale"])

    prepared: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    for w in widths:
        Xtr, Xva = feats(train, w, p_tr), feats(val, w, p_va)
        mu = Xtr.reshape(-1, Xtr.shape[2]).mean(0)
        sd = np.maximum(Xtr.reshape(-1, Xtr.shape[2]).std(0), 1e-6)
        prepared[w] = ((Xtr - mu) / sd, (Xva - mu) / sd, mu, sd)

    def value(cls: str, reg: float, w: int, agg: str) -> tuple[float, list[QModel]]:
        Xtr, Xva, _, _ = prepared[w]
        v_tr = valuation(train, w, agg, p_tr, sc["token_scale"])
        v_va = valuation(val, w, agg, p_va, sc["token_scale"])
        models = ls_fit(Xtr, v_tr.payoff, _fitter(cls, reg, seed), cls)
        got = v_va.at(first_stop(_gate_stops(cls, models, Xva)))["return"].mean()
        return float(got), models

    # 4a. width and aggregation by the linear gate
    best_wa, best_v = (W, "majority"), -np.inf
    for w in widths:
        for agg in AGGREGATIONS:
            v, _ = value("linear", CLASSES["linear"][1], w, agg)
            candidates.append({"class": "linear", "reg": CLASSES["linear"][1], "width": w, "aggregation": agg,
                               "validation_return": v, "stage": "width/aggregation"})
            if v > best_v + 1e-12:
                best_v, best_wa = v, (w, agg)
    w, agg = best_wa
    log(f"width {w}, aggregation {agg} (linear gate, validation return {best_v:.4f})")

    def at_width(cls: str, reg: float) -> tuple[float, list[QModel], dict[str, Any], str]:
        v, models = value(cls, reg, w, agg)
        return v, models, {"width": w, "aggregation": agg, "validation_return": v, "stage": "class"}, ""

    # 4b. class and regularisation at that width/aggregation (the choice both fitters make, fit_steps.choose)
    (v, cls, reg, models), class_candidates, per_class = choose(classes, CLASSES, at_width, log)
    candidates += class_candidates
    _, _, mu, sd = prepared[w]
    gate = StopGate(
        model_class=cls, checks=models, mean=mu.tolist(), std=sd.tolist(), features=list(FEATURES), width=w,
        aggregation=agg, max_rounds=R, logged_width=W, token_scale=sc["token_scale"], lp_fill=sc["lp_fill"],
        len_scale=sc["len_scale"], attempt_tokens=sc["attempt_tokens"], price_seed=price_seed,
        meta={"fit_seed": seed, "reg": reg, "validation_return": v, "validation_by_class": per_class,
              "suites": sorted(set(runs.suite.tolist())), "corpus": dict(runs.meta),
              "tasks": {"train": len(train.task_ids), "validation": len(val.task_ids)}})
    return gate, {"chosen": {"class": cls, "reg": reg, "width": w, "aggregation": agg, "validation_return": v},
                  "by_class": per_class, "candidates": candidates}


# ----------------------------------------------------------------------------- the price-aware logistic rule
def _logistic(X: np.ndarray, y: np.ndarray, wt: np.ndarray, l2: float = 1e-2, iters: int = 30) -> np.ndarray:
    """Weighted L2 logistic regression by Newton steps; returns (F+1,) coefficients, the intercept last."""
    Xa = np.concatenate([X, np.ones((len(X), 1))], 1)
    beta = np.zeros(Xa.shape[1])
    wt = wt / max(wt.mean(), 1e-12)
    pen = l2 * len(X) * np.eye(Xa.shape[1])
    pen[-1, -1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(Xa @ beta, -50, 50)))
        grad = Xa.T @ (wt * (p - y)) + pen @ beta
        H = (Xa * (wt * p * (1 - p))[:, None]).T @ Xa + pen + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(H, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


LOGISTIC_MARGINS = (-0.2, -0.1, 0.0, 0.1, 0.2)


def fit_price_logistic(train: LoggedRuns, val: LoggedRuns, v_tr: Valuation, v_va: Valuation,
                       iterations: int = 3) -> tuple[PriceLogistic, float]:
    """The price-aware logistic rule at ``v_tr``'s width: fitted on ``train``, margin chosen on ``val``.

    Returns the rule and its validation mean return.
    """
    w = v_tr.width
    st_tr = vote_states(train, w, v_tr.price)
    st_va = vote_states(val, w, v_va.price)
    Z = np.stack([vote_summary(s) for s in st_tr], 1)  # (T, R, F)
    Zv = np.stack([vote_summary(s) for s in st_va], 1)
    T, R, F = Z.shape
    mu = Z.reshape(-1, F).mean(0)
    sd = np.maximum(Z.reshape(-1, F).std(0), 1e-6)
    Xs, Xv = (Z - mu) / sd, (Zv - mu) / sd
    pay = v_tr.payoff
    stop = np.zeros((T, R), bool)
    legal = np.ones((T, R), bool)
    legal[:, -1] = False
    stop[:, 1:] = True  # round 0 of policy iteration: stop at the next check (one-step look-ahead)
    beta = np.zeros(F + 1)
    for _ in range(iterations):
        # U_k: the return of continuing at k and following `stop` from k+1 on
        U = continuation_values(pay, legal, ~stop)
        y = (U[:, :-1] - pay[:, :-1]).reshape(-1)
        X = Xs[:, :-1].reshape(-1, F)
        beta = _logistic(X, (y > 0).astype(np.float64), np.abs(y) + 1e-6)
        z = Xs @ beta[:-1] + beta[-1]
        stop = z <= 0
        stop[:, -1] = True
    rule = PriceLogistic(coef=tuple(beta[:-1].tolist()), intercept=float(beta[-1]), mean=tuple(mu.tolist()),
                         std=tuple(sd.tolist()))
    best_m, best_v = 0.0, -np.inf
    for m in LOGISTIC_MARGINS:
        z = Xv @ beta[:-1] + beta[-1]
        s = 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50))) <= 0.5 + m
        v = float(v_va.at(first_stop(s))["return"].mean())
        if v > best_v + 1e-12:
            best_m, best_v = m, v
    assert len(VOTE_SUMMARY) == F
    return PriceLogistic(rule.coef, rule.intercept, rule.mean, rule.std, margin=best_m,
                         label=f"price-logistic@{best_m:+g}"), best_v
