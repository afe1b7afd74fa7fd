"""Baselines a reviewer would write for a team corpus, one definition each (docs/team2-preregistration.md).

Every one is valued exactly on the log with :class:`~orchestrace.policies.team.TeamArrays` (prices
charged), over the same joint action space as the fitted policy: a round-0 member subset, then stop
with an aggregation, or a round-1 subset and stop. :func:`all_paths` values every such path of a
two-round corpus at once; the per-task **oracle** is its row maximum.

- :func:`fit_cascade` — the confidence cascade (FrugalGPT-style): per task cell, call one member; if
  its score (the mean token log-prob of its answer; no answer = −∞) is below τ, call the next *dearer*
  member (:func:`escalations`: the first in price order whose price is higher; without prices, the next
  column) and answer with it. The first member and τ (−∞, the deciles of the observed scores, +∞) are
  chosen per cell on the selection rows.
- :func:`fit_knn_router` — the nearest-neighbour router on round-1 features: per cell a first subset
  S0; after it, the k nearest fitting tasks of the same cell (the joint policy's standardised features
  after S0) each vote for their own best continuation in hindsight; the plurality wins (ties: the
  continuation listed first: the stops before the calls). S0 and k ∈ (5, 11, 21, 41) per cell on the
  selection rows.
- :func:`fit_learnstop` — a LearnStop-style multi-feature threshold: after a first subset S0, a logistic
  model on the joint policy's features predicts whether the aggregate is right; stop when P ≥ τ, else
  call every member once more and answer with the same aggregation. The model is fitted on the fitting
  rows for every (S0, aggregation); S0, the aggregation and τ per cell on the selection rows.
- :func:`fit_fitted_rules` — baseline 6, the fitted ridge / logistic rules on the joint policy's features:
  per cell, whichever of two fitted rules has the higher validation return: the fitted-Q joint policy restricted
  to the linear class (ridge over its α grid, :func:`~orchestrace.trainers.team_fitted_q.fit_team_policy`) or
  the logistic stop rule (:func:`fit_logistic_stop`: call a team S; stop with the aggregation of highest
  P(right) when that P ≥ τ, else call S once more and answer with a fixed aggregation; S, that aggregation
  and τ per cell on the selection rows, the models fitted on the fitting rows).

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> runs = make_synthetic_team(40, 2, seed=0, members=("cold", "hot", "calc"))
>>> arr = TeamArrays.build(runs, np.full(40, 0.1), 300.0)
>>> ret, names = all_paths(arr, np.arange(40))
>>> ret.shape, names[0]
((40, 336), ((0,), None, 'majority'))
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.runs import LoggedRuns
from ..policies.team import TeamArrays, TeamState, rollout, team_features
from ..policies.team_policy import TeamPolicy
from ..trainers.team_fitted_q import fit_team_policy, greedy

__all__ = ["Cascade", "FittedRules", "KnnRouter", "LearnStop", "LogisticStop", "all_paths", "check_constants",
           "escalations", "fit_cascade", "fit_fitted_rules", "fit_knn_router", "fit_learnstop", "fit_logistic_stop",
           "logistic_fit", "path_table", "policy_outcome", "price_order"]

Path = tuple[tuple[int, ...], tuple[int, ...] | None, str]


def _subsets(W: int) -> list[tuple[int, ...]]:  # noqa: N803
    return [tuple(c for c in range(W) if b >> c & 1) for b in range(1, 2 ** W)]


def _mask(arr: TeamArrays, n: int, cols: tuple[int, ...]) -> np.ndarray:
    m = np.zeros((n, arr.shape[2]), bool)
    m[:, list(cols)] = True
    return m


def path_table(arr: TeamArrays, idx: np.ndarray) -> tuple[dict[str, np.ndarray], list[Path]]:
    """Every path's exact outcome on the tasks ``idx``: ``return``, ``correct``, ``calls``, ``tokens`` (billed),
    each (N, P), and the P paths ``(S0, S1 or None, aggregation)``.

    Needs a corpus of exactly two rounds and no reviser (every subset callable in every round).
    """
    T, R, W = arr.shape
    if R != 2 or any(arr.sees):
        raise ConfigError(f"all_paths values two-round teams without a reviser; this corpus has {R} rounds"
                          f"{' and a reviser' if any(arr.sees) else ''}")
    idx = np.asarray(idx, np.int64)
    subs = _subsets(W)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("return", "correct", "calls", "tokens")}
    names: list[Path] = []
    start = arr.start(idx)

    def add(st: TeamState, path: Path) -> None:
        ok = arr.correct(st, path[2])
        cols["return"].append(ok - arr.cost(st))
        cols["correct"].append(ok.astype(np.float64))
        cols["calls"].append(st.drawn.astype(np.float64))
        cols["tokens"].append(st.tokens.astype(np.float64))
        names.append(path)

    for s0 in subs:
        st0 = arr.step(start, _mask(arr, len(idx), s0))
        for g in arr.aggs:
            add(st0, (s0, None, g))
        for s1 in subs:
            st1 = arr.step(st0, _mask(arr, len(idx), s1))
            for g in arr.aggs:
                add(st1, (s0, s1, g))
    return {k: np.stack(v, 1) for k, v in cols.items()}, names


def all_paths(arr: TeamArrays, idx: np.ndarray) -> tuple[np.ndarray, list[Path]]:
    """(N, P) exact return of every path on the tasks ``idx`` and the P paths ``(S0, S1 or None, aggregation)``
    (:func:`path_table`'s ``return``)."""
    table, names = path_table(arr, idx)
    return table["return"], names


def price_order(arr: TeamArrays, prices: dict[str, list[float]] | None) -> tuple[int, ...]:
    """Member columns from cheapest to dearest (input price, then output price, then column); column order
    when the corpus has no prices."""
    p = prices or {}
    return tuple(sorted(range(arr.shape[2]), key=lambda c: (*p.get(arr.members[c], (0.0, 0.0)), c)))


def escalations(arr: TeamArrays, prices: dict[str, list[float]] | None) -> dict[int, int | None]:
    """Per member column, whom a cascade escalates to: the first column in price order with a higher price
    (input, then output); None for the dearest. Without prices: the next column (None for the last).

    >>> from orchestrace.logged.team_synth import make_synthetic_team
    >>> arr = TeamArrays.build(make_synthetic_team(4, 2, seed=0, members=("cold", "calc", "hot")), np.ones(4), 1.0)
    >>> escalations(arr, {"cold": [0.15, 0.6], "calc": [0.15, 0.6], "hot": [2.5, 10]})
    {0: 2, 1: 2, 2: None}
    """
    W = arr.shape[2]
    if not prices:
        return {c: (c + 1 if c + 1 < W else None) for c in range(W)}
    key = {c: tuple(prices.get(arr.members[c], (0.0, 0.0))) for c in range(W)}
    order = price_order(arr, prices)
    return {c: next((d for d in order if key[d] > key[c]), None) for c in range(W)}


def _cells(arr: TeamArrays, rows: np.ndarray) -> dict[int, np.ndarray]:
    return {int(c): rows[arr.cell[rows] == c] for c in np.unique(arr.cell[rows])}


def _fitted_cells(arr: TeamArrays, rows: np.ndarray, fitted: Any, what: str) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per task cell of ``rows``: (cell, its rows, their mask in ``rows``); a cell the baseline was not fitted on is a
    located :class:`ConfigError` naming ``what``."""
    for c, sub in _cells(arr, rows).items():
        if c not in fitted:
            raise ConfigError(f"the {what} was not fitted on cell {arr.cells[c] if c >= 0 else c!r}")
        yield c, sub, np.isin(rows, sub)


@dataclass(frozen=True)
class Cascade:
    """Per task cell: the first member column, the threshold τ (escalate when the score is below it)."""

    up: dict[int, int | None]  # column → the column it escalates to (:func:`escalations`)
    first: dict[int, int]
    tau: dict[int, float]

    def paths(self, arr: TeamArrays, rows: np.ndarray, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(score, return if it stops, return if it escalates) of starting with column ``first`` on ``rows``."""
        n = len(rows)
        st0 = arr.step(arr.start(rows), _mask(arr, n, (first,)))
        m0 = arr.members[first]
        stop = arr.correct(st0, f"latest:{m0}") - arr.cost(st0)
        score = np.where(arr.codes[rows, 0, first] >= 0, arr.lp[rows, 0, first], -np.inf)
        nxt = self.up.get(first)
        if nxt is None:
            return score, stop, stop
        st1 = arr.step(st0, _mask(arr, n, (nxt,)))
        esc = arr.correct(st1, f"latest:{arr.members[nxt]}") - arr.cost(st1)
        return score, stop, esc

    def choose(self, arr: TeamArrays, rows: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) the index into ``names`` (:func:`all_paths`) of the path the cascade takes on each task."""
        rows = np.asarray(rows, np.int64)
        index = {n: i for i, n in enumerate(names)}
        out = np.zeros(len(rows), np.int64)
        for c, sub, at in _fitted_cells(arr, rows, self.first, "cascade"):
            f = self.first[c]
            score = np.where(arr.codes[sub, 0, f] >= 0, arr.lp[sub, 0, f], -np.inf)
            stop = index[((f,), None, f"latest:{arr.members[f]}")]
            nxt = self.up.get(f)
            esc = stop if nxt is None else index[((f,), (nxt,), f"latest:{arr.members[nxt]}")]
            out[at] = np.where(score < self.tau[c], esc, stop)
        return out

    def value(self, arr: TeamArrays, rows: np.ndarray) -> np.ndarray:
        """(len(rows),) the cascade's exact return per task (a cell it was not fitted on: ConfigError)."""
        rows = np.asarray(rows, np.int64)
        out = np.zeros(len(rows))
        for c, sub, at in _fitted_cells(arr, rows, self.first, "cascade"):
            score, stop, esc = self.paths(arr, sub, self.first[c])
            out[at] = np.where(score < self.tau[c], esc, stop)
        return out


def fit_cascade(arr: TeamArrays, sel_rows: np.ndarray, up: dict[int, int | None]) -> Cascade:
    """Choose the first member and τ per cell on ``sel_rows`` (highest mean return; ties: fewer escalations);
    ``up``: :func:`escalations`."""
    base = Cascade(up, {}, {})
    first: dict[int, int] = {}
    tau: dict[int, float] = {}
    for c, sub in _cells(arr, np.asarray(sel_rows, np.int64)).items():
        best = (-np.inf, 0, -np.inf)
        for f in range(arr.shape[2]):
            score, stop, esc = base.paths(arr, sub, f)
            fin = score[np.isfinite(score)]
            grid = [-np.inf, *(np.unique(np.percentile(fin, np.arange(10, 100, 10))) if len(fin) else []), np.inf]
            for t in grid:
                v = float(np.where(score < t, esc, stop).mean())
                if v > best[0] + 1e-12:
                    best = (v, f, float(t))
        first[c], tau[c] = best[1], best[2]
    return Cascade(up, first, tau)


@dataclass(frozen=True)
class KnnRouter:
    """Per task cell: the first subset (a path index block) and k; the fitting rows' features and hindsight."""

    first: dict[int, tuple[int, ...]]
    k: dict[int, int]
    fit_rows: np.ndarray

    def choose(self, arr: TeamArrays, rows: np.ndarray, ret: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) the index into ``names`` of the path the router takes on each task; ``ret``/``names``:
        :func:`all_paths` on **every** task (row = task)."""
        rows = np.asarray(rows, np.int64)
        out = np.zeros(len(rows), np.int64)
        for c, sub, at in _fitted_cells(arr, rows, self.first, "router"):
            fit = self.fit_rows[arr.cell[self.fit_rows] == c]
            out[at] = _route(arr, fit, sub, self.first[c], self.k[c], ret, names)
        return out

    def value(self, arr: TeamArrays, rows: np.ndarray, ret: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) exact return per task; ``ret``/``names``: :func:`all_paths` on **every** task (row = task)."""
        rows = np.asarray(rows, np.int64)
        return ret[rows, self.choose(arr, rows, ret, names)]


def _route(arr: TeamArrays, fit: np.ndarray, rows: np.ndarray, s0: tuple[int, ...], k: int,
           ret: np.ndarray, names: list[Path]) -> np.ndarray:
    """The router's path (an index into ``names``) on ``rows`` after calling ``s0``, its neighbours among ``fit``."""
    cont = np.array([i for i, (a, _, _) in enumerate(names) if a == s0])  # this S0's continuations
    feats = [team_features(arr, arr.step(arr.start(r), _mask(arr, len(r), s0)), arr.shape[1]) for r in (fit, rows)]
    mu, sd = feats[0].mean(0), feats[0].std(0)
    sd = np.where(sd > 1e-12, sd, 1.0)
    a, b = (feats[0] - mu) / sd, (feats[1] - mu) / sd
    d = ((b[:, None, :] - a[None, :, :]) ** 2).sum(2)  # (n_rows, n_fit)
    near = np.argsort(d, axis=1, kind="stable")[:, :min(k, len(fit))]
    vote = ret[fit][:, cont].argmax(1)  # each fitting task's best continuation in hindsight
    counts = np.zeros((len(rows), len(cont)))
    np.add.at(counts, (np.repeat(np.arange(len(rows)), near.shape[1]), vote[near].ravel()), 1.0)
    pick = counts.argmax(1)  # ties: the continuation listed first
    return cont[pick]


def fit_knn_router(arr: TeamArrays, fit_rows: np.ndarray, sel_rows: np.ndarray, ret: np.ndarray,
                   names: list[Path], ks: tuple[int, ...] = (5, 11, 21, 41)) -> KnnRouter:
    """Choose the first subset and k per cell on ``sel_rows``; neighbours come from ``fit_rows``."""
    fit_rows = np.asarray(fit_rows, np.int64)
    first: dict[int, tuple[int, ...]] = {}
    kk: dict[int, int] = {}
    fit_cells = _cells(arr, fit_rows)
    for c, sub in _cells(arr, np.asarray(sel_rows, np.int64)).items():
        fit = fit_cells.get(c)
        if fit is None or not len(fit):
            raise ConfigError(f"cell {arr.cells[c]!r}: no fitting tasks for the router's neighbours")
        best: tuple[float, tuple[int, ...], int] = (-np.inf, (0,), ks[0])
        for s0 in _subsets(arr.shape[2]):
            for k in ks:
                v = float(ret[sub, _route(arr, fit, sub, s0, k, ret, names)].mean())
                if v > best[0] + 1e-12:
                    best = (v, s0, k)
        first[c], kk[c] = best[1], best[2]
    return KnnRouter(first, kk, fit_rows)


def logistic_fit(X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50) -> np.ndarray:  # noqa: N803
    """L2-penalised logistic regression by Newton's method (IRLS); returns (F + 1,) weights, the intercept last
    (not penalised). ``X`` (N, F), ``y`` (N,) in {0, 1}.

    >>> w = logistic_fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1]), l2=0.1)
    >>> bool(w[0] > 0)
    True
    """
    A = np.hstack([X, np.ones((len(X), 1))])  # noqa: N806
    w = np.zeros(A.shape[1])
    pen = np.full(A.shape[1], l2)
    pen[-1] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(A @ w, -30, 30)))
        g = A.T @ (p - y) + pen * w
        H = (A * (p * (1 - p))[:, None]).T @ A + np.diag(pen) + 1e-9 * np.eye(A.shape[1])  # noqa: N806
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


@dataclass(frozen=True)
class LearnStop:
    """Per task cell: the first subset, the aggregation and τ; per (subset, aggregation) the fitted model."""

    first: dict[int, tuple[tuple[int, ...], str, float]]
    models: dict[tuple[tuple[int, ...], str], tuple[np.ndarray, np.ndarray, np.ndarray]]  # mean, sd, weights

    def prob(self, arr: TeamArrays, rows: np.ndarray, s0: tuple[int, ...], agg: str) -> np.ndarray:
        """P(the aggregate after ``s0`` is right) on ``rows``."""
        mu, sd, w = self.models[(s0, agg)]
        x = (team_features(arr, arr.step(arr.start(rows), _mask(arr, len(rows), s0)), arr.shape[1]) - mu) / sd
        return 1.0 / (1.0 + np.exp(-np.clip(x @ w[:-1] + w[-1], -30, 30)))

    def choose(self, arr: TeamArrays, rows: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) the index into ``names`` (:func:`all_paths`) of the path the rule takes on each task."""
        rows = np.asarray(rows, np.int64)
        index = {n: i for i, n in enumerate(names)}
        out = np.zeros(len(rows), np.int64)
        for c, sub, at in _fitted_cells(arr, rows, self.first, "LearnStop rule"):
            s0, g, tau = self.first[c]
            stop, go = index[(s0, None, g)], index[(s0, tuple(range(arr.shape[2])), g)]
            out[at] = np.where(self.prob(arr, sub, s0, g) >= tau, stop, go)
        return out

    def value(self, arr: TeamArrays, rows: np.ndarray, ret: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) exact return per task; ``ret``/``names``: :func:`all_paths` on every task (row = task)."""
        rows = np.asarray(rows, np.int64)
        return ret[rows, self.choose(arr, rows, names)]


def _stop_go(ret: np.ndarray, names: list[Path], rows: np.ndarray, s0: tuple[int, ...], g: str,
             W: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: N803
    index = {n: i for i, n in enumerate(names)}
    return ret[rows, index[(s0, None, g)]], ret[rows, index[(s0, tuple(range(W)), g)]]


def fit_learnstop(arr: TeamArrays, fit_rows: np.ndarray, sel_rows: np.ndarray, ret: np.ndarray,
                  names: list[Path], l2: float = 1.0) -> LearnStop:
    """Fit the model of every (first subset, aggregation) on ``fit_rows``; choose them and τ per cell on
    ``sel_rows`` (τ: 0 = always stop, the deciles of P, 1.01 = never stop)."""
    fit_rows, sel_rows = np.asarray(fit_rows, np.int64), np.asarray(sel_rows, np.int64)
    models: dict[tuple[tuple[int, ...], str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for s0 in _subsets(arr.shape[2]):
        x = team_features(arr, arr.step(arr.start(fit_rows), _mask(arr, len(fit_rows), s0)), arr.shape[1])
        mu, sd = x.mean(0), x.std(0)
        sd = np.where(sd > 1e-12, sd, 1.0)
        st = arr.step(arr.start(fit_rows), _mask(arr, len(fit_rows), s0))
        for g in arr.aggs:
            models[(s0, g)] = (mu, sd, logistic_fit((x - mu) / sd, arr.correct(st, g).astype(float), l2))
    rule = LearnStop({}, models)
    first: dict[int, tuple[tuple[int, ...], str, float]] = {}
    for c, sub in _cells(arr, sel_rows).items():
        best: tuple[float, tuple[int, ...], str, float] = (-np.inf, (0,), arr.aggs[0], 0.0)
        for (s0, g) in models:
            p = rule.prob(arr, sub, s0, g)
            stop, go = _stop_go(ret, names, sub, s0, g, arr.shape[2])
            for tau in (0.0, *np.unique(np.percentile(p, np.arange(10, 100, 10))), 1.01):
                v = float(np.where(p >= tau, stop, go).mean())
                if v > best[0] + 1e-12:
                    best = (v, s0, g, float(tau))
        first[c] = best[1:]
    return LearnStop(first, models)


# ----------------------------------------------------------------------------- baseline 6: fitted linear rules
def _aggs_of(arr: TeamArrays, s: tuple[int, ...]) -> tuple[str, ...]:
    """The aggregations over the columns ``s`` (``latest:<m>`` only for a member m of s)."""
    return tuple(g for g in arr.aggs if not g.startswith("latest:") or arr.members.index(g.split(":", 1)[1]) in s)


@dataclass(frozen=True)
class LogisticStop:
    """Baseline 6b, per task cell: a team S, the aggregation ``g_end`` of the continuation and τ; per team S the
    logistic models (one per aggregation over S) of "that aggregate is right" on the joint policy's features.

    Call S; P_g = the model's probability that aggregation g is right; stop with g* = argmax P_g when
    P_g* ≥ τ, else call S once more and answer with ``g_end``.
    """

    team: dict[int, tuple[tuple[int, ...], str, float]]  # cell → (S, g_end, τ)
    models: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray]]  # S → mean, sd, aggs, (G, F + 1)

    def probs(self, arr: TeamArrays, rows: np.ndarray, s: tuple[int, ...]) -> np.ndarray:
        """(len(rows), G) P(aggregation g over S is right) after one call of S, G = the models' aggregations."""
        mu, sd, _, w = self.models[s]
        x = (team_features(arr, arr.step(arr.start(rows), _mask(arr, len(rows), s)), arr.shape[1]) - mu) / sd
        return 1.0 / (1.0 + np.exp(-np.clip(x @ w[:, :-1].T + w[:, -1], -30, 30)))

    def _choose(self, arr: TeamArrays, rows: np.ndarray, s: tuple[int, ...], g_end: str, tau: float,
                index: dict[Path, int]) -> np.ndarray:
        aggs = self.models[s][2]
        p = self.probs(arr, rows, s)
        stop_at = np.array([index[(s, None, g)] for g in aggs])[p.argmax(1)]
        return np.where(p.max(1) >= tau, stop_at, index[(s, s, g_end)])

    def choose(self, arr: TeamArrays, rows: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) the index into ``names`` (:func:`all_paths`) of the path the rule takes on each task."""
        rows = np.asarray(rows, np.int64)
        index = {n: i for i, n in enumerate(names)}
        out = np.zeros(len(rows), np.int64)
        for c, sub, at in _fitted_cells(arr, rows, self.team, "logistic stop rule"):
            out[at] = self._choose(arr, sub, *self.team[c], index)
        return out

    def value(self, arr: TeamArrays, rows: np.ndarray, ret: np.ndarray, names: list[Path]) -> np.ndarray:
        """(len(rows),) exact return per task; ``ret``/``names``: :func:`all_paths` on every task (row = task)."""
        rows = np.asarray(rows, np.int64)
        return ret[rows, self.choose(arr, rows, names)]


def fit_logistic_stop(arr: TeamArrays, fit_rows: np.ndarray, sel_rows: np.ndarray, ret: np.ndarray,
                      names: list[Path], l2: float = 1.0) -> LogisticStop:
    """Fit every team's models on ``fit_rows``; choose S, ``g_end`` and τ per cell on ``sel_rows`` (highest mean
    return, ties: the first in subset, aggregation, τ order; τ: 0 = always stop, the deciles of max P, 1.01 = never
    stop)."""
    fit_rows, sel_rows = np.asarray(fit_rows, np.int64), np.asarray(sel_rows, np.int64)
    models: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray]] = {}
    for s in _subsets(arr.shape[2]):
        st = arr.step(arr.start(fit_rows), _mask(arr, len(fit_rows), s))
        x = team_features(arr, st, arr.shape[1])
        mu, sd = x.mean(0), x.std(0)
        sd = np.where(sd > 1e-12, sd, 1.0)
        aggs = _aggs_of(arr, s)
        w = np.stack([logistic_fit((x - mu) / sd, arr.correct(st, g).astype(float), l2) for g in aggs])
        models[s] = (mu, sd, aggs, w)
    rule = LogisticStop({}, models)
    index = {n: i for i, n in enumerate(names)}
    team: dict[int, tuple[tuple[int, ...], str, float]] = {}
    for c, sub in _cells(arr, sel_rows).items():
        best: tuple[float, tuple[int, ...], str, float] = (-np.inf, (0,), arr.aggs[0], 0.0)
        for s, (_, _, aggs, _) in models.items():
            pmax = rule.probs(arr, sub, s).max(1)
            for g_end in aggs:
                for tau in (0.0, *np.unique(np.percentile(pmax, np.arange(10, 100, 10))), 1.01):
                    v = float(ret[sub, rule._choose(arr, sub, s, g_end, float(tau), index)].mean())
                    if v > best[0] + 1e-12:
                        best = (v, s, g_end, float(tau))
        team[c] = best[1:]
    return LogisticStop(team, models)


def check_constants(arr: TeamArrays, pol: TeamPolicy, where: str = "the policy") -> None:
    """Refuse arrays not built with the policy's training constants (token scale, fills, cells, members),
    naming each difference: the policy was fitted on other data than the corpus it is valued against."""
    diff = [f"{k} {getattr(arr, k)!r} vs the policy's {getattr(pol, k)!r}" for k in ("token_scale", "lp_fill", "cf_fill")
            if abs(getattr(arr, k) - getattr(pol, k)) > 1e-9 * max(1.0, abs(getattr(pol, k)))]
    if list(arr.cells) != list(pol.cells) or list(arr.members) != list(pol.members):
        diff.append(f"cells/members {list(arr.cells)}/{list(arr.members)} vs {pol.cells}/{pol.members}")
    if diff:
        raise ConfigError(f"{where} was fitted on other training data than this corpus's (its constants differ: "
                          + "; ".join(diff) + "); value a policy against the corpus it was fitted on")


def policy_outcome(arr: TeamArrays, pol: TeamPolicy, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The fitted joint policy's exact outcome per task on ``rows`` (:func:`~orchestrace.policies.team.rollout`:
    ``return``, ``correct``, ``tokens``, ``calls``…); ``arr`` must be built with the policy's constants
    (:func:`~orchestrace.trainers.team_fitted_q.arrays_for` on the corpus it was fitted on; :func:`check_constants`)."""
    check_constants(arr, pol)
    subs = [tuple(s) for s in pol.subsets]
    return rollout(arr, greedy(arr, pol.model_class, pol.models, subs, len(pol.aggregations)), subs,
                   tuple(pol.aggregations), idx=np.asarray(rows, np.int64))


@dataclass(frozen=True)
class FittedRules:
    """Baseline 6, the fitted ridge / logistic rules on the joint policy's features: per task cell, the one of
    its two members chosen on validation — ``linear``, the fitted-Q joint policy restricted to the linear class
    (ridge, its α grid), or ``logistic``, the :class:`LogisticStop` rule."""

    linear: TeamPolicy
    logistic: LogisticStop
    pick: dict[int, str]  # cell → "linear" | "logistic"

    def returns(self, arr: TeamArrays, rows: np.ndarray, ret: np.ndarray, names: list[Path]) -> dict[str, np.ndarray]:
        """(len(rows),) exact returns per task of ``linear``, ``logistic`` and ``chosen`` (baseline 6 itself)."""
        rows = np.asarray(rows, np.int64)
        lin = policy_outcome(arr, self.linear, rows)["return"]
        lo = self.logistic.value(arr, rows, ret, names)
        cell = arr.cell[rows]
        if not np.isin(cell, list(self.pick)).all():
            raise ConfigError(f"baseline 6 was not fitted on cell(s) {sorted(set(cell.tolist()) - set(self.pick))}")
        use_lin = np.array([self.pick[int(c)] == "linear" for c in cell], bool)
        return {"linear": lin, "logistic": lo, "chosen": np.where(use_lin, lin, lo)}


def fit_fitted_rules(runs: LoggedRuns, arr: TeamArrays, ret: np.ndarray, names: list[Path], *, seed: int = 0,
                     price_seed: int = 0, l2: float = 1.0) -> FittedRules:
    """Baseline 6 on a corpus: the linear fitted-Q policy (:func:`~orchestrace.trainers.team_fitted_q.fit_team_policy`
    with ``classes=("linear",)``: fitted on train, α chosen on validation, fitting seed ``seed``), the logistic
    stop rule (models fitted on train, settings chosen on validation), and per cell the one of higher validation
    mean return (ties: linear). ``arr``: ``arrays_for(runs, team_scales(train), price_seed)``; ``ret``/``names``:
    :func:`all_paths` on it, every task."""
    train, val = np.flatnonzero(runs.split == "train"), np.flatnonzero(runs.split == "validation")
    pol, _ = fit_team_policy(runs, classes=("linear",), seed=seed, price_seed=price_seed)
    lo = fit_logistic_stop(arr, train, val, ret, names, l2)
    lin = policy_outcome(arr, pol, val)["return"]
    lg = lo.value(arr, val, ret, names)
    pick = {c: ("linear" if lin[arr.cell[val] == c].mean() >= lg[arr.cell[val] == c].mean() - 1e-12 else "logistic")
            for c in np.unique(arr.cell[val]).tolist()}
    return FittedRules(pol, lo, pick)
