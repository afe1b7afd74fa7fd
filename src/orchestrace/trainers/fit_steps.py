"""The one fitter interface for logged runs, and the steps both of its fitters share.

A vote corpus is a team of W identical members whose choices are "call again" and "stop"; a team corpus
adds *whom* to call. Both are fitted from the log alone by regression-based backward induction, behind one
interface (:class:`LoggedFitter`: ``fit(runs, *, classes, seed, price_seed, log, **options) → (policy,
report)``, the report a :class:`FitReport`):

- :func:`~orchestrace.trainers.fitted_q.fit_gate` — the stop gate (Longstaff–Schwartz: one regression per
  check of the advantage of continuing; width and aggregation chosen first);
- :func:`~orchestrace.trainers.team_fitted_q.fit_team_policy` — the joint team policy (fitted Q-iteration: one
  output per joint action, states from roll-in histories).

They stay two estimators: fitting the gate as the team policy of W identical members would fit another model
and move the vote corpus's fitted numbers (``tests/test_golden_logged.py`` pins them). What both do alike
lives here, once, read in the order a fit runs:

1. :func:`fit_classes` — the model classes asked for, the mlp left out (said) when torch is missing;
2. :func:`fit_splits` — the train and validation tasks, enough of each (:func:`~orchestrace.logged.corpus.require_tasks`);
3. :func:`corpus_scales` — the constants of the valuation and the features, from the training tasks only;
4. :func:`choose` — every class × regularisation valued on validation, the best kept (ties: the first).

>>> from orchestrace.offline import make_synthetic_logged
>>> train, val = fit_splits(make_synthetic_logged(T=200, R=3, W=2, seed=0))
>>> sc = corpus_scales(train)
>>> sc["token_scale"] > 0, sorted(set(train.split.tolist())), sc["cells"][:1]
(True, ['train'], ('synth:1',))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypedDict

import numpy as np

from ..errors import ConfigError
from ..logged.corpus import require_tasks
from ..logged.runs import LoggedRuns

__all__ = ["FitReport", "LoggedFitter", "Scales", "Valued", "choose", "corpus_scales",
           "fit_classes", "fit_splits", "split_of"]


class Scales(TypedDict):
    """Constants of the valuation and the features, measured on the training tasks (:func:`corpus_scales`)."""

    token_scale: float  # mean tokens of one full-width round (every member once)
    lp_fill: float  # mean token log-prob (stands in for a missing one)
    len_scale: float  # mean completion tokens of an attempt (≥ 1)
    attempt_tokens: float  # mean tokens of one attempt
    prompt_tokens: float  # mean prompt tokens of one attempt
    cf_fill: float  # mean DeepConf confidence (1.0 when none was logged)
    member_tokens: list[float]  # mean tokens of each member column
    cells: tuple[str, ...]  # the training tasks' ``suite:difficulty`` cells, sorted


class FitReport(TypedDict):
    """What a fit reports (``fit.json``): the chosen setting, the best validation return of each class, every
    candidate valued."""

    chosen: dict[str, Any]
    by_class: dict[str, float]
    candidates: list[dict[str, Any]]


class LoggedFitter(Protocol):
    """The one interface of the fitters of logged runs (the module docstring)."""

    def __call__(self, runs: LoggedRuns, *, seed: int = 0, log: Callable[[str], None] = ...
                 ) -> tuple[Any, FitReport]: ...


def fit_classes(classes: Sequence[str], grid: dict[str, tuple[float, ...]], log: Callable[[str], None]
                ) -> tuple[str, ...]:
    """The model classes to fit: each must be in ``grid`` (a ConfigError names the others); the default set
    (all of ``grid``) leaves out the mlp, saying so, when torch is not installed."""
    for c in classes:
        if c not in grid:
            raise ConfigError(f"model class {c!r}: use one of {', '.join(grid)}")
    if tuple(classes) == tuple(grid) and "mlp" in classes:
        import importlib.util

        if importlib.util.find_spec("torch") is None:  # the default set: fit what this install can
            log("mlp skipped: torch is not installed (pip install 'orchestrace[learn]' to include it)")
            return tuple(c for c in classes if c != "mlp")
    return tuple(classes)


def split_of(runs: LoggedRuns, name: str) -> LoggedRuns:
    """The tasks of split ``name``; a ConfigError naming the splits present when there are none."""
    m = runs.split == name
    if not m.any():
        raise ConfigError(f"the corpus has no {name!r} tasks (splits present: {sorted(set(runs.split.tolist()))}); "
                          "fitting needs train and validation tasks")
    return runs.subset(m)


def fit_splits(runs: LoggedRuns) -> tuple[LoggedRuns, LoggedRuns]:
    """The train and validation tasks of ``runs``, refused (:class:`~orchestrace.logged.corpus.SmallCorpusError`)
    when either is too small to fit on and choose with."""
    train, val = split_of(runs, "train"), split_of(runs, "validation")
    require_tasks(runs, "fit")
    return train, val


def corpus_scales(train: LoggedRuns) -> Scales:
    """Constants of the valuation and the features, from the training tasks only (:class:`Scales`).

    A ConfigError when the training tasks logged no tokens at all (the price of a round is measured in them).
    """
    tok = train.prompt_tokens.astype(np.float64) + train.completion_tokens
    lp = train.logprob_mean.astype(np.float64)
    cf = None if train.confidence is None else train.confidence.astype(np.float64)
    token_scale = float(tok.sum(2).mean())
    if not token_scale > 0:
        raise ConfigError("the training tasks logged 0 tokens (tokens_in / tokens_out); the price of a round is "
                          "measured in tokens")
    return {"token_scale": token_scale,
            "lp_fill": float(np.nanmean(lp)) if np.isfinite(lp).any() else 0.0,
            "len_scale": float(max(train.completion_tokens.mean(), 1.0)),
            "attempt_tokens": float(tok.mean()), "prompt_tokens": float(train.prompt_tokens.mean()),
            "cf_fill": float(np.nanmean(cf)) if cf is not None and np.isfinite(cf).any() else 1.0,
            "member_tokens": tok.mean((0, 1)).tolist(),
            "cells": tuple(sorted({f"{s}:{d}" for s, d in zip(train.suite.tolist(), train.difficulty.tolist(),
                                                               strict=True)}))}


#: What :func:`choose` asks of a fitter for one setting: (validation return, the fitted models, the rest of
#: the candidate's record after its class and regularisation, the end of its progress line).
Valued = tuple[float, Any, dict[str, Any], str]


def choose(classes: Sequence[str], grid: dict[str, tuple[float, ...]], value: Callable[[str, float], Valued],
           log: Callable[[str], None]) -> tuple[tuple[float, str, float, Any], list[dict[str, Any]],
                                                dict[str, float]]:
    """Value every class × regularisation of ``grid`` on validation (``value(cls, reg)``) and keep the best (a
    later one must beat it by more than 1e-12). Returns (return, class, regularisation, models) of the best,
    every candidate's record, and each class's best validation return.

    >>> best, cands, by = choose(["a", "b"], {"a": (1.0,), "b": (1.0, 2.0)},
    ...                          lambda c, r: (r if c == "b" else 1.5, None, {}, ""), log=lambda s: None)
    >>> best[:3], by
    ((2.0, 'b', 2.0), {'a': 1.5, 'b': 2.0})
    """
    best: tuple[float, str, float, Any] | None = None
    cands: list[dict[str, Any]] = []
    returns: dict[str, list[float]] = {c: [] for c in classes}
    for cls in classes:
        for reg in grid[cls]:
            v, models, record, line = value(cls, reg)
            cands.append({"class": cls, "reg": reg, **record})
            returns[cls].append(v)
            log(f"  {cls:9s} reg {reg:g}: validation return {v:.4f}{line}")
            if best is None or v > best[0] + 1e-12:
                best = (v, cls, reg, models)
    if best is None:
        raise ConfigError("no model class to fit: name at least one")
    return best, cands, {c: max(vs) for c, vs in returns.items()}
