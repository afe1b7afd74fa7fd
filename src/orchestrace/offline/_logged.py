"""Logged always-continue runs of a vote loop, as arrays (the corpus ↔ offline contract, issue 25).

TEMPORARY COPY on the ``offline`` branch: the corpus helper owns this module (its
:func:`load_logged_runs` reads native traces); this copy has exactly the contract's API so
the offline learner can be built and tested first. :func:`make_synthetic_logged` makes
runs with the structure of real ones (per-task latent accuracy, answer clusters with a
strong distractor, unparsable answers, token counts, log-probs that are informative but
noisy) for tests.

>>> runs = make_synthetic_logged(T=12, R=4, W=3, seed=0)
>>> runs.answers.shape, runs.round_correct.shape, sorted(set(runs.split.tolist())) <= ["test", "train", "validation"]
((12, 4, 3), (12, 4), True)
>>> runs.subset(runs.split == "test").answers.shape[0] == int((runs.split == "test").sum())
True
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = ["LoggedRuns", "load_logged_runs", "make_synthetic_logged"]


@dataclass(frozen=True)
class LoggedRuns:
    """Always-continue logged runs of a vote loop: T tasks x R rounds x W attempts per round."""

    task_ids: np.ndarray  # (T,) str   stable task id, e.g. "arith-s2-000123"
    suite: np.ndarray  # (T,) str   task suite name
    difficulty: np.ndarray  # (T,) int   the generator's size/difficulty knob
    split: np.ndarray  # (T,) str   "train" | "validation" | "test" (split by task)
    answers: np.ndarray  # (T, R, W) int32 per-task answer code (0..k-1 in order of first appearance); -1 unparsed
    correct: np.ndarray  # (T, R, W) bool  the attempt's parsed answer is the right one
    correct_code: np.ndarray  # (T,) int32  code of the right answer, -1 if no attempt produced it
    prompt_tokens: np.ndarray  # (T, R, W) int32
    completion_tokens: np.ndarray  # (T, R, W) int32
    logprob_mean: np.ndarray  # (T, R, W) float32 mean token log-prob of the completion (NaN if absent)
    round_correct: np.ndarray  # (T, R) bool  graded majority-vote aggregate after round r, AS LOGGED
    meta: dict[str, Any]  # manifest: model file sha256, server flags, seeds, suites, sizes, wall time

    def subset(self, mask: np.ndarray) -> LoggedRuns:
        """The runs of the tasks where ``mask`` (T,) bool (or an index array) selects."""
        kw: dict[str, Any] = {f.name: (getattr(self, f.name)[mask] if f.name != "meta" else dict(self.meta))
                              for f in dataclasses.fields(self)}
        return LoggedRuns(**kw)


def load_logged_runs(path: str | os.PathLike[str], *, exclude: bool = False, rounds: int | None = None,
                     width: int | None = None) -> LoggedRuns:
    """Read a corpus of native traces (the corpus helper's loader; not on this branch).

    >>> load_logged_runs("/nonexistent")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    orchestrace.errors.ConfigError: ...
    """
    raise ConfigError(f"{os.fspath(path)}: reading native-trace corpora needs the corpus helper's loader "
                      "(not on this branch yet); use an .npz corpus written by orchestrace.offline.save_runs")


def make_synthetic_logged(T: int = 600, R: int = 5, W: int = 4, seed: int = 0) -> LoggedRuns:  # noqa: N803
    """Synthetic logged runs for tests: :func:`~orchestrace.offline._synthetic.structured_runs`."""
    from ._synthetic import structured_runs

    return LoggedRuns(**structured_runs(T, R, W, seed))
