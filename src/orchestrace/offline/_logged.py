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


def _majority_correct(answers: np.ndarray, correct_code: np.ndarray) -> np.ndarray:
    """(T, R) majority over rounds 0..r (ties → the earliest answer), graded against ``correct_code``."""
    T, R, W = answers.shape
    K = int(answers.max()) + 1 if answers.size and answers.max() >= 0 else 1
    flat = answers.reshape(T, R * W)
    counts = np.zeros((T, K), np.int64)
    first = np.full((T, K), R * W, np.int64)
    out = np.zeros((T, R), bool)
    for j in range(R * W):
        a = flat[:, j]
        ok = a >= 0
        counts[ok, a[ok]] += 1
        first[ok, a[ok]] = np.minimum(first[ok, a[ok]], j)
        if (j + 1) % W == 0:
            key = counts * (R * W + 1) - first  # more votes first, then the earliest appearance
            top = np.where(counts.max(1) > 0, key.argmax(1), -1)
            out[:, j // W] = (top >= 0) & (top == correct_code)
    return out


def make_synthetic_logged(T: int = 600, R: int = 5, W: int = 4, seed: int = 0) -> LoggedRuns:
    """Synthetic logged runs with the structure of real ones (see the module docstring).

    Each task has a latent accuracy p (lower for harder tasks), a strong distractor taking a
    share of the wrong answers, a long tail of other wrong answers, a 10 % unparsed rate;
    correct attempts have a higher mean log-prob on average. Split 60/20/20 by task.

    >>> r = make_synthetic_logged(T=50, R=3, W=2, seed=1)
    >>> bool((r.correct == (r.answers == r.correct_code[:, None, None]) & (r.answers >= 0)).all())
    True
    """
    rng = np.random.default_rng(seed)
    difficulty = rng.integers(1, 6, T)
    p = np.clip(rng.beta(2.0, 2.0, T) * (1.25 - 0.18 * difficulty), 0.02, 0.95)
    distract = rng.beta(2.0, 3.0, T)  # share of wrong answers that go to the main distractor
    raw = np.empty((T, R, W), np.int64)  # 0 right, 1 distractor, 2+ tail, -1 unparsed
    u = rng.random((T, R, W))
    v = rng.random((T, R, W))
    right = u < p[:, None, None]
    raw[:] = np.where(right, 0, np.where(v < distract[:, None, None], 1, 2 + rng.integers(0, 12, (T, R, W))))
    raw[rng.random((T, R, W)) < 0.10] = -1
    # codes in order of first appearance, per task
    answers = np.full((T, R, W), -1, np.int32)
    correct_code = np.full(T, -1, np.int32)
    for t in range(T):
        seen: dict[int, int] = {}
        for j, a in enumerate(raw[t].reshape(-1)):
            if a < 0:
                continue
            code = seen.setdefault(int(a), len(seen))
            answers[t].reshape(-1)[j] = code
        correct_code[t] = seen.get(0, -1)
    correct = (answers >= 0) & (answers == correct_code[:, None, None])
    prompt = np.broadcast_to((40 + 25 * difficulty)[:, None, None], (T, R, W)).astype(np.int32)
    completion = np.clip(rng.normal(60 + 20 * difficulty[:, None, None], 25, (T, R, W)), 5, 400).astype(np.int32)
    lp = rng.normal(-0.9, 0.25, (T, R, W)) + 0.25 * right + 0.1 * (raw == 1)
    splits = np.array(["train", "validation", "test"])[np.searchsorted([0.6, 0.8], rng.random(T), side="right")]
    return LoggedRuns(
        task_ids=np.array([f"synth-s{d}-{i:06d}" for i, d in enumerate(difficulty)]),
        suite=np.full(T, "synth"), difficulty=difficulty.astype(np.int64), split=splits,
        answers=answers, correct=correct, correct_code=correct_code, prompt_tokens=prompt.copy(),
        completion_tokens=completion, logprob_mean=lp.astype(np.float32),
        round_correct=_majority_correct(answers, correct_code),
        meta={"model": "synthetic", "seed": seed, "rounds": R, "width": W, "suites": ["synth"]},
    )
