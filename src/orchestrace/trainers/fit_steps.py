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
lives once, read in the order a fit runs:

1. :func:`fit_classes` — the model classes asked for, the mlp left out (said) when torch is missing;
2. :func:`~orchestrace.logged.corpus.fit_splits` — the train and validation tasks, enough of each (beside the
   corpus's other split rules);
3. :func:`~orchestrace.logged.value.corpus_scales` — the constants of the valuation and the features, from the
   training tasks only (the evaluation measures them the same way);
4. :func:`choose` (here) — every class × regularisation valued on validation, the best kept (ties: the first).

>>> from orchestrace.logged.corpus import fit_splits
>>> from orchestrace.logged.value import corpus_scales
>>> from orchestrace.offline import make_synthetic_logged
>>> train, val = fit_splits(make_synthetic_logged(T=200, R=3, W=2, seed=0))
>>> sc = corpus_scales(train)
>>> sc["token_scale"] > 0, sorted(set(train.split.tolist())), sc["cells"][:1]
(True, ['train'], ('synth:1',))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from ..errors import ConfigError
from ..logged.runs import LoggedRuns
from ..policies.policy_file import QModel

if TYPE_CHECKING:
    from ..policies.gate import StopGate
    from ..policies.team_policy import TeamPolicy

__all__ = ["FitReport", "LoggedFitter", "Valued", "choose", "fit_classes"]


class FitReport(TypedDict):
    """What a fit reports (``fit.json``): the chosen setting, the best validation return of each class, every
    candidate valued."""

    chosen: dict[str, Any]
    by_class: dict[str, float]
    candidates: list[dict[str, Any]]


class LoggedFitter(Protocol):
    """The one interface of the fitters of logged runs (the module docstring)."""

    def __call__(self, runs: LoggedRuns, *, seed: int = 0, log: Callable[[str], None] = ...
                 ) -> tuple[StopGate | TeamPolicy, FitReport]: ...


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


#: What :func:`choose` asks of a fitter for one setting: (validation return, the fitted models, the rest of
#: the candidate's record after its class and regularisation, the end of its progress line).
Valued = tuple[float, list[QModel], dict[str, Any], str]


def choose(classes: Sequence[str], grid: dict[str, tuple[float, ...]], value: Callable[[str, float], Valued],
           log: Callable[[str], None]) -> tuple[tuple[float, str, float, list[QModel]], list[dict[str, Any]],
                                                dict[str, float]]:
    """Value every class × regularisation of ``grid`` on validation (``value(cls, reg)``) and keep the best (a
    later one must beat it by more than 1e-12). Returns (return, class, regularisation, models) of the best,
    every candidate's record, and each class's best validation return.

    >>> best, cands, by = choose(["a", "b"], {"a": (1.0,), "b": (1.0, 2.0)},
    ...                          lambda c, r: (r if c == "b" else 1.5, [], {}, ""), log=lambda s: None)
    >>> best[:3], by
    ((2.0, 'b', 2.0), {'a': 1.5, 'b': 2.0})
    """
    best: tuple[float, str, float, list[QModel]] | None = None
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
