"""Reading a corpus of logged runs for fitting and evaluation, with its checks and stated exclusions.

:func:`read_corpus` takes a native-trace corpus directory (through the corpus helper's
:func:`~orchestrace.offline.load_logged_runs`) or an ``.npz`` written by :func:`save_runs`;
:func:`check_runs` holds the arrays to the contract and returns the runs it keeps with a
list of stated exclusions:

- shapes that disagree, an unknown split, a missing train/validation/test split → ConfigError;
- tasks whose logged aggregate grade (``round_correct``) disagrees with the grade recomputed
  from their attempts are excluded and counted (more than 5 % of the tasks → ConfigError: the
  corpus's grading or answer codes are not what the valuation assumes);
- a team corpus (member kinds per column; a vote corpus is the team of W identical members) is
  held to the team's rules instead (:mod:`.team_check`: member columns, who sees whom, calls
  missing from the log excluded and counted).

A corpus is checked once per call: :class:`CheckedRuns` carries runs already held to the contract with their
notes, and :func:`held` checks only what is not yet checked (the evaluation takes either).

>>> from orchestrace.offline import make_synthetic_logged
>>> runs, notes = check_runs(make_synthetic_logged(T=20, R=3, W=2, seed=0))
>>> len(runs.task_ids), notes
(20, [])
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._prices import billed_prices
from .runs import LoggedRuns, load_logged_runs
from .team_check import loader_notes, team_rules
from .value import valuation

__all__ = ["MIN_TASKS", "SPLITS", "CheckedRuns", "SmallCorpusError", "billed_prices", "check_runs", "check_team_runs",
           "fit_splits", "held", "read_corpus", "require_tasks", "save_runs", "split_of"]

SPLITS = ("train", "validation", "test")
_TEAM = ("members", "sees", "confidence")  # optional: a team corpus's columns and DeepConf confidences
_ARRAYS = [f.name for f in dataclasses.fields(LoggedRuns) if f.name not in ("meta", *_TEAM)]
_SHARE = {"train": 0.6, "validation": 0.2, "test": 0.2}
#: Fewest tasks per split: to fit a stop (train fits, validation chooses) and to evaluate with
#: intervals (validation tunes the rules, test values them).
MIN_TASKS: dict[str, dict[str, int]] = {"fit": {"train": 20, "validation": 10},
                                        "evaluate": {"validation": 10, "test": 10}}


class SmallCorpusError(ConfigError):
    """Too few tasks in a split for a fit or for intervals; the message says how many are needed."""


def _need(purpose: str) -> str:
    return " / ".join(f"{n} {s}" for s, n in MIN_TASKS[purpose].items())


def _total(purposes: tuple[str, ...] = ("fit", "evaluate")) -> int:
    """About how many tasks give every split its minimum (60/20/20, with a margin for the hash split)."""
    t = max(math.ceil(n / _SHARE[s]) for p in purposes for s, n in MIN_TASKS[p].items())
    return int(math.ceil(t * 1.2 / 10) * 10)


def require_tasks(runs: LoggedRuns, purpose: str, *, where: str = "corpus") -> None:
    """Refuse (:class:`SmallCorpusError`) a corpus with fewer tasks per split than :data:`MIN_TASKS` asks.

    >>> from orchestrace.offline import make_synthetic_logged
    >>> try:
    ...     require_tasks(make_synthetic_logged(T=8, R=2, W=2, seed=0), "fit")
    ... except SmallCorpusError as e:
    ...     print(str(e).split(";")[0])
    corpus: too few tasks to fit a stop: 6 train / 1 validation
    """
    need = MIN_TASKS[purpose]
    have = {s: int((runs.split == s).sum()) for s in SPLITS}
    if all(have[s] >= n for s, n in need.items()):
        return
    total = _total((purpose,))
    what = {"fit": "fit a stop", "evaluate": "evaluate with 95 % intervals"}[purpose]
    raise SmallCorpusError(
        f"{where}: too few tasks to {what}: {' / '.join(f'{have[s]} {s}' for s in need)}; it needs at least "
        f"{_need(purpose)} tasks (the {len(runs.task_ids)} tasks are split "
        f"60/20/20 by a hash of their id: about {total} tasks in all). Grow the corpus: `orchestrace collect run "
        f"DIR -n {total} --resume` with the same options, or import more logs")
def _split_mask(runs: LoggedRuns, name: str) -> np.ndarray:
    m = runs.split == name
    if not m.any():
        raise ConfigError(f"the corpus has no {name!r} tasks (splits present: {sorted(set(runs.split.tolist()))}); "
                          "fitting needs train and validation tasks")
    return m


def split_of(runs: LoggedRuns, name: str) -> LoggedRuns:
    """The tasks of split ``name``; a ConfigError naming the splits present when there are none."""
    return runs.subset(_split_mask(runs, name))


def fit_splits(runs: LoggedRuns) -> tuple[LoggedRuns, LoggedRuns]:
    """The train and validation tasks of ``runs``: a ConfigError when either split is absent, a
    :class:`SmallCorpusError` when either is too small to fit on and choose with."""
    train, val = _split_mask(runs, "train"), _split_mask(runs, "validation")
    require_tasks(runs, "fit")
    return runs.subset(train), runs.subset(val)


MAX_GRADE_MISMATCH = 0.05


def save_runs(runs: LoggedRuns, path: str | os.PathLike[str]) -> Path:
    """Write the arrays and the manifest to one compressed ``.npz`` (no pickle)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    arrays = {n: np.asarray(getattr(runs, n)) for n in _ARRAYS}
    for n in ("task_ids", "suite", "split"):
        arrays[n] = arrays[n].astype(str)
    payload: dict[str, Any] = {**arrays, "meta": np.array(json.dumps(runs.meta, default=str)),
                               "team": np.array(json.dumps({"members": list(runs.members),
                                                            "sees": [list(x) for x in runs.sees]}))}
    if runs.confidence is not None:
        payload["confidence"] = np.asarray(runs.confidence, np.float32)
    np.savez_compressed(p, **payload)
    return p


def read_corpus(path: str | os.PathLike[str]) -> LoggedRuns:
    """Logged runs from ``path``: an ``.npz`` (:func:`save_runs`) or a native-trace corpus directory."""
    p = Path(path)
    if not (p.exists() or p.is_symlink()):
        raise ConfigError(f"{p}: no such corpus (a directory of logged traces with manifest.json, or an .npz)")
    if p.is_dir() and (p / "logged.npz").is_file():
        p = p / "logged.npz"
    if p.suffix != ".npz":
        return load_logged_runs(p)
    from .readers import read_npz

    arrays, meta = read_npz(p, _ARRAYS)  # regular file, capped sizes, dtypes, shapes, bounds, answer codes
    kw: dict[str, Any] = dict(arrays)
    try:  # a team corpus's columns and confidences (the file passed read_npz's size and type checks)
        with np.load(p, allow_pickle=False) as z:
            team = json.loads(str(z["team"])) if "team" in z.files else {}
            kw["members"] = tuple(str(m) for m in team.get("members", ()))
            kw["sees"] = tuple(tuple(int(c) for c in x) for x in team.get("sees", ()))
            conf = z["confidence"] if "confidence" in z.files else None
    except (OSError, ValueError, TypeError, AttributeError, EOFError, zipfile.BadZipFile) as exc:
        raise ConfigError(f"{p}: unreadable team fields ({type(exc).__name__}: {exc})") from None
    if conf is not None and (conf.shape != kw["answers"].shape or conf.dtype.kind != "f"):
        raise ConfigError(f"{p}: confidence must be a float array shaped like answers {kw['answers'].shape}")
    kw["confidence"] = conf
    return LoggedRuns(**kw, meta=meta)


def check_runs(runs: LoggedRuns, *, where: str = "corpus", splits: bool = True, team: bool | None = None
               ) -> tuple[LoggedRuns, list[str]]:
    """Hold ``runs`` to the contract; return the runs kept and the stated exclusions (module docstring).

    One check for both kinds of corpus — a vote corpus is a team of W identical members. A corpus with member
    kinds per column (or any, with ``team=True``) is held to the team's rules
    (:func:`~orchestrace.logged.team_check.team_rules`: member columns, ``sees``, missing calls excluded); one
    without to the vote's (grades recomputed from the majority). Either way the corpus's fingerprint
    (``meta["fingerprint"]``) is recorded: a fitted policy keeps it, and evaluation warns on another corpus.
    ``splits=False``: a fresh collection valued on all its tasks, which need not hold every split."""
    from .readers import corpus_fingerprint

    if runs.answers.ndim != 3:
        raise ConfigError(f"{where}: answers must be (T, R, W), got shape {runs.answers.shape}")
    if len(runs.answers) == 0:
        raise ConfigError(f"{where}: no tasks")
    if team if team is not None else bool(runs.members):
        runs, notes = team_rules(runs, where, splits)
    else:
        runs, notes = _vote_rules(runs, where, splits)
    runs.meta["fingerprint"] = corpus_fingerprint(runs)  # a fitted policy records it; eval warns on another corpus
    return runs, notes


@dataclasses.dataclass(frozen=True)
class CheckedRuns:
    """Logged runs that :func:`check_runs` already held to the contract, and the exclusions it stated.

    Pass it where a function would check the corpus again: :func:`held` takes it as it is.
    """

    runs: LoggedRuns
    notes: tuple[str, ...] = ()


def held(runs: LoggedRuns | CheckedRuns, *, where: str = "corpus", splits: bool = True, team: bool | None = None
         ) -> tuple[LoggedRuns, list[str]]:
    """``runs`` held to the contract once: a :class:`CheckedRuns` as it is, anything else through :func:`check_runs`.

    >>> from orchestrace.offline import make_synthetic_logged
    >>> runs, notes = check_runs(make_synthetic_logged(T=20, R=3, W=2, seed=0))
    >>> once = CheckedRuns(runs, tuple(notes))
    >>> held(once)[0] is runs
    True
    """
    if isinstance(runs, CheckedRuns):
        return runs.runs, list(runs.notes)
    return check_runs(runs, where=where, splits=splits, team=team)


def check_team_runs(runs: LoggedRuns, *, where: str = "corpus", need_splits: bool = True, allow_vote: bool = False
                    ) -> tuple[LoggedRuns, list[str]]:
    """:func:`~orchestrace.logged.corpus.check_runs` with the team's rules (the module docstring), kept for its
    callers. ``allow_vote``: accept a homogeneous vote corpus (``members`` empty) as the one-kind team."""
    if not runs.members and not allow_vote and runs.answers.ndim == 3 and len(runs.answers):
        raise ConfigError(f"{where}: $.members is empty: not a team corpus (a homogeneous vote corpus goes through "
                          "the stop gate)")
    return check_runs(runs, where=where, splits=need_splits, team=True)


def _vote_rules(runs: LoggedRuns, where: str, splits: bool) -> tuple[LoggedRuns, list[str]]:
    """The vote's rules of :func:`check_runs` (the module docstring)."""
    T, R, W = runs.answers.shape  # noqa: N806
    for n in _ARRAYS:
        a = np.asarray(getattr(runs, n))
        want = {"round_correct": (T, R)}.get(n, (T, R, W) if a.ndim == 3 else (T,))
        if a.shape != want:
            raise ConfigError(f"{where}: {n} has shape {a.shape}, expected {want} (every task needs R = {R} rounds "
                              f"of W = {W} attempts; a truncated run must be excluded by the loader)")
    if runs.confidence is not None and np.shape(runs.confidence) != (T, R, W):
        raise ConfigError(f"{where}: confidence has shape {np.shape(runs.confidence)}, expected {(T, R, W)}")
    if runs.sees and (len(runs.sees) != W or any(not 0 <= c < W for x in runs.sees for c in x)):
        raise ConfigError(f"{where}: sees must list, for each of the {W} columns, columns in 0..{W - 1}; got "
                          f"{runs.sees}")
    bad = sorted(set(runs.split.tolist()) - set(SPLITS))
    if bad:
        raise ConfigError(f"{where}: unknown split(s) {bad}; expected {', '.join(SPLITS)}")
    for s in SPLITS if splits else ():
        if not (runs.split == s).any():
            have = " / ".join(f"{int((runs.split == x).sum())} {x}" for x in SPLITS)
            raise SmallCorpusError(
                f"{where}: no {s!r} tasks; the corpus must be split by task into {', '.join(SPLITS)} ({have}). "
                f"Fitting a stop needs at least {_need('fit')} tasks, evaluating at least {_need('evaluate')} (the "
                f"split is 60/20/20 by a hash of the task id: about {_total()} tasks in all). Grow the corpus: "
                f"`orchestrace collect run DIR -n {_total()} --resume` with the same options, or import more logs")
    if (runs.answers < -1).any() or ((runs.correct_code < -1).any()):
        raise ConfigError(f"{where}: answer codes below −1")
    tokens = runs.prompt_tokens.astype(np.int64) + runs.completion_tokens.astype(np.int64)
    if (runs.prompt_tokens < 0).any() or (runs.completion_tokens < 0).any():
        raise ConfigError(f"{where}: negative token counts (task {runs.task_ids[(tokens < 0).any((1, 2))][0]})")
    if not tokens.any():
        raise ConfigError(f"{where}: every attempt has 0 tokens (tokens_in / tokens_out); the price of a round "
                          "(token_scale) is measured in tokens and must be > 0")
    notes = loader_notes(runs)  # the loader's counted exclusions: reason → task ids
    lost = runs.meta.get("lost_runs")
    if isinstance(lost, int) and lost > 0:
        notes.append(f"{lost} run(s) the manifest records could not be read (unreadable data)")
    recomputed = valuation(runs, W, "majority", np.zeros(T), 1.0).correct
    mismatch = (recomputed != runs.round_correct.astype(bool)).any(1)
    if mismatch.any():
        ids = runs.task_ids[mismatch][:5].tolist()
        msg = (f"{int(mismatch.sum())} of {T} task(s) excluded: their logged aggregate grades disagree with the "
               f"majority recomputed from their attempts (first: {', '.join(map(str, ids))})")
        if mismatch.mean() > MAX_GRADE_MISMATCH:
            raise ConfigError(f"{where}: {msg}; more than {MAX_GRADE_MISMATCH:.0%} — the grades or answer codes are "
                              "not consistent")
        notes.append(msg)
        runs = runs.subset(~mismatch)
    return runs, notes
