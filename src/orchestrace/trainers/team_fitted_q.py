"""Fitting the joint team policy from logged runs only: backward induction over the per-round joint action.

:func:`fit_team_policy`, read top to bottom:

1. **Action space** (:mod:`._team`): before round d the policy calls one of the valid member
   subsets, or (d ≥ 1) stops with one of the aggregations; after the last round it must stop.
   A homogeneous vote corpus is the special case whose subsets are the first k columns.
2. **Roll-in states.** Every training task is walked along ``histories`` member-call histories
   (the first: all members every round; then alternately one random subset kept every round and
   a random valid subset each round — drawn from the fitting seed), so the states at each
   decision cover what policies reach. By default as many histories as fit in ``max_rows`` rows
   (3 to 12 per task: a small corpus gets more).
3. **Targets, exact from the log, backward** (d = R … 0): for every state and every action the
   realised return-to-go — stop with g: the aggregate's correctness; call S: −price × tokens(S) /
   token_scale plus the exact return of following the already-fitted greedy policy from the next
   state on (Longstaff–Schwartz's realised cash flows, generalised to a joint action: every
   action's outcome is in the log, so each state gets a target for every action).
4. **Model classes**: ``linear`` (ridge, one output per action), ``quadratic`` (ridge on the
   features plus the pairwise products of the vote block), ``mlp`` (one hidden layer of 32 tanh
   units, all actions as outputs, torch on 1 thread, early stopping on a 20 % hold-out; torch
   imported lazily); each with a small regularisation grid.
5. **Validation only chooses** the class and its regularisation, by the greedy policy's exact
   mean return on the validation tasks (:func:`~orchestrace.policies.team.rollout`).

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> pol, rep = fit_team_policy(make_synthetic_team(500, 3, seed=1), classes=("linear",), seed=0)
>>> pol.model_class, len(pol.models), rep["chosen"]["class"]
('linear', 4, 'linear')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.corpus import billed_prices, fit_splits
from ..logged.corpus import split_of as _split  # noqa: F401  (its old name here, for scripts that import it)
from ..logged.runs import LoggedRuns
from ..logged.value import Scales, corpus_scales, task_prices
from ..policies.policy_file import QModel, as_model
from ..policies.regressors import fit_mlp, quad, ridge
from ..policies.team import (
    TeamArrays,
    TeamState,
    aggregations,
    available_actions,
    feature_names,
    rollout,
    subset_masks,
    subsets,
    team_features,
    valid_subsets,
)
from ..policies.team_policy import QUAD_CORE, TeamPolicy, predict_q
from .fit_steps import FitReport, choose, fit_classes

__all__ = ["TEAM_CLASSES", "fit_team_policy", "team_scales", "greedy"]

#: Model classes of the joint policy, simplest first, with their regularisation grids.
TEAM_CLASSES: dict[str, tuple[float, ...]] = {"linear": (1.0, 100.0), "quadratic": (10.0, 1000.0), "mlp": (1e-4,)}


#: The constants of the joint policy's valuation and features: the one :func:`~orchestrace.logged.value.corpus_scales`.
team_scales = corpus_scales


def arrays_for(runs: LoggedRuns, sc: Scales, price_seed: int) -> TeamArrays:
    """``runs`` prepared with the training constants ``sc`` and the per-task prices."""
    return TeamArrays.build(runs, task_prices(runs.task_ids, price_seed), sc["token_scale"], lp_fill=sc["lp_fill"],
                            cf_fill=sc["cf_fill"], cells=sc["cells"])


# ----------------------------------------------------------------------------- the greedy policy of fitted models
def greedy(arr: TeamArrays, cls: str, models: Sequence[QModel], subs: list[tuple[int, ...]],
           n_agg: int) -> Callable[[int, TeamState], np.ndarray]:
    """The policy that takes the available action of highest fitted value (a :func:`rollout` policy)."""
    R = arr.shape[1]

    def pol(d: int, st: TeamState) -> np.ndarray:
        q = predict_q(cls, models[d], team_features(arr, st, R))
        return np.where(available_actions(arr, st, subs, n_agg), q, -np.inf).argmax(1)

    return pol


# ----------------------------------------------------------------------------- regressors (policies.regressors)
def _ridge(Z: np.ndarray, Y: np.ndarray, ok: np.ndarray, alpha: float) -> np.ndarray:
    """(A, P) ridge coefficients of every action on ``Z`` (N, P, the intercept's column last), each fitted on
    the rows where the action is available (actions with the same rows share one solve)."""
    coef = np.zeros((Y.shape[1], Z.shape[1]))
    patterns: dict[bytes, list[int]] = {}
    for j in range(Y.shape[1]):
        patterns.setdefault(np.packbits(ok[:, j]).tobytes(), []).append(j)
    for cols in patterns.values():
        rows = ok[:, cols[0]]
        if rows.any():
            coef[cols] = ridge(Z[rows], Y[rows][:, cols], alpha, jitter=1e-9).T
    return coef


def _fit(cls: str, reg: float, seed: int, X: np.ndarray, Y: np.ndarray, ok: np.ndarray) -> QModel:
    if cls not in TEAM_CLASSES:
        raise ConfigError(f"model class {cls!r}: use one of {', '.join(TEAM_CLASSES)}")
    mu = X.mean(0)
    sd = np.maximum(X.std(0), 1e-6)
    Z = (X - mu) / sd
    scale = {"mean": mu.tolist(), "std": sd.tolist()}
    if cls == "mlp":
        return as_model({**scale, **fit_mlp(Z, Y, reg, seed, ok=ok, steps=200, patience=10)})
    Z = quad(Z, QUAD_CORE) if cls == "quadratic" else Z
    coef = _ridge(np.concatenate([Z, np.ones((len(Z), 1))], 1), Y, ok, reg)
    return as_model({**scale, "w": coef[:, :-1].tolist(), "b": coef[:, -1].tolist()})


# ----------------------------------------------------------------------------- roll-in and backward induction
def roll_in(arr: TeamArrays, idx: np.ndarray, subs: list[tuple[int, ...]], histories: int, seed: int,
            max_rows: int) -> list[TeamState]:
    """The states at decisions 0..R of ``histories`` member-call histories per task (step 2 of the docstring)."""
    T, R, W = arr.shape
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.asarray(idx, np.int64), histories)
    kind = np.tile(np.where(np.arange(histories) == 0, 0, 1 + np.arange(histories) % 2), len(idx))
    if len(rows) > max_rows:
        pick = np.sort(rng.choice(len(rows), max_rows, replace=False))
        rows, kind = rows[pick], kind[pick]
    masks = subset_masks(subs, W)
    full = int(np.argmax(masks.sum(1)))
    const = rng.integers(0, len(subs), len(rows))
    st = arr.start(rows)
    out = [st]
    for _ in range(R):
        valid = valid_subsets(st, subs, arr.sees)
        u = rng.uniform(size=valid.shape) * valid
        rand = u.argmax(1)
        a = np.where(kind == 0, full, np.where(kind == 1, const, rand))
        a = np.where(valid[np.arange(len(a)), a], a, rand)
        st = arr.step(st, masks[a])
        out.append(st)
    return out


def backward(arr: TeamArrays, states: list[TeamState], cls: str, reg: float, seed: int, subs: list[tuple[int, ...]],
             aggs: Sequence[str]) -> list[QModel]:
    """One fitted Q-model per decision 0..R by backward induction on the roll-in ``states`` (steps 3–4)."""
    T, R, W = arr.shape
    nS, nG = len(subs), len(aggs)
    masks = subset_masks(subs, W)
    models: list[QModel] = [QModel() for _ in range(R + 1)]
    for d in range(R, -1, -1):
        st = states[d]
        N = len(st.idx)
        X = team_features(arr, st, R)
        Y = np.zeros((N, nS + nG))
        ok = available_actions(arr, st, subs, nG)
        if d >= 1:
            for g, agg in enumerate(aggs):
                Y[:, nS + g] = arr.correct(st, agg)
        if d < R:
            pol = greedy(arr, cls, models, subs, nG)
            for j in range(nS):
                rows = np.flatnonzero(ok[:, j])
                if not len(rows):
                    continue
                s0 = st.take(rows)
                s1 = arr.step(s0, masks[j])
                cost = arr.price[s0.idx] * (s1.tokens - s0.tokens) / arr.token_scale
                Y[rows, j] = rollout(arr, pol, subs, aggs, start=s1)["return"] - cost  # the return-to-go
        models[d] = _fit(cls, reg, seed + d, X, Y, ok)
    return models


def fit_team_policy(runs: LoggedRuns, *, classes: Sequence[str] = tuple(TEAM_CLASSES), seed: int = 0,
                    price_seed: int = 0, histories: int | None = None, max_rows: int = 24_000,
                    only: tuple[tuple[int, ...], str] | None = None,
                    log: Callable[[str], None] = lambda s: None) -> tuple[TeamPolicy, FitReport]:
    """Fit the joint policy on the train tasks, choose class and regularisation on validation (docstring).

    ``only`` = (subset, aggregation) restricts the action space to calling that one subset or stopping
    with that one aggregation: the fitted *stop-only* policy of a fixed team (a baseline).
    Returns the policy and a report (every candidate's validation return, the chosen one).
    """
    classes = fit_classes(classes, TEAM_CLASSES, log)
    train, val = fit_splits(runs)
    T, R, W = runs.answers.shape
    sc = corpus_scales(train)
    a_tr, a_va = arrays_for(train, sc, price_seed), arrays_for(val, sc, price_seed)
    subs, aggs = subsets(runs), aggregations(runs)
    if only is not None:
        if tuple(only[0]) not in subs or only[1] not in aggs:
            raise ConfigError(f"only={only}: not a subset / aggregation of this corpus")
        subs, aggs = [tuple(only[0])], (only[1],)
    n_tr = len(train.task_ids)
    if histories is None:
        histories = int(min(12, max(3, max_rows // max(n_tr, 1))))
    states = roll_in(a_tr, np.arange(n_tr), subs, histories, seed, max_rows)

    def value(cls: str, reg: float) -> tuple[float, list[QModel], dict[str, Any], str]:
        models = backward(a_tr, states, cls, reg, seed, subs, aggs)
        o = rollout(a_va, greedy(a_va, cls, models, subs, len(aggs)), subs, aggs)
        v = float(o["return"].mean())
        return v, models, {"validation_return": v, "validation_accuracy": float(o["correct"].mean()),
                           "validation_calls": float(o["calls"].mean())}, (
            f", accuracy {o['correct'].mean():.3f}, calls {o['calls'].mean():.2f}")

    (v, cls, reg, models), cands, by_class = choose(classes, TEAM_CLASSES, value, log)
    names = list(a_tr.members)
    pol = TeamPolicy(
        model_class=cls, models=models, members=names, sees=[list(s) for s in a_tr.sees],
        subsets=[list(s) for s in subs], aggregations=list(aggs), cells=list(sc["cells"]),
        features=feature_names(a_tr), max_rounds=R, token_scale=sc["token_scale"], lp_fill=sc["lp_fill"],
        cf_fill=sc["cf_fill"], member_tokens=[float(x) for x in sc["member_tokens"]], price_seed=price_seed,
        meta={"fit_seed": seed, "reg": reg, "validation_return": v, "validation_by_class": by_class,
              "histories": histories, "stop_only": None if only is None else [list(only[0]), only[1]],
              "tasks": {"train": len(train.task_ids), "validation": len(val.task_ids)},
              "corpus": {k: runs.meta.get(k) for k in ("name", "path", "model", "source") if k in runs.meta}},
        prices=billed_prices(runs.meta))
    return pol, {"chosen": {"class": cls, "reg": reg, "validation_return": v}, "by_class": by_class,
                 "candidates": cands}
