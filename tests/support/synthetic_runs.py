"""Synthetic logged runs with the structure of real ones, for the offline learner's tests and docs.

Per task a latent accuracy p (lower for harder tasks), a strong distractor taking a share of the
wrong answers, a long tail of other wrong answers, a 10 % unparsed rate, token counts growing with
difficulty, and mean log-probs that are higher for correct attempts (informative but noisy) — so
that stopping, width and log-prob weighting all matter. Split 60/20/20 by task.

It returns the fields of :class:`~orchestrace.offline.LoggedRuns` as a dict (this module imports
only the one majority vote from the package): ``LoggedRuns(**structured_runs(T, R, W, seed))``.

>>> d = structured_runs(T=12, R=4, W=3, seed=0)
>>> d["answers"].shape, d["round_correct"].shape
((12, 4, 3), (12, 4))
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["structured_runs"]


def _majority_correct(answers: np.ndarray, correct_code: np.ndarray) -> np.ndarray:
    """(T, R) majority over rounds 0..r (ties → the earliest answer: codes are in order of appearance),
    graded against ``correct_code`` — the one majority vote, :func:`~orchestrace.policies.rules.top_answer`."""
    from orchestrace.policies.rules import top_answer

    T, R, W = answers.shape
    K = int(answers.max()) + 1 if answers.size and answers.max() >= 0 else 1
    counts = np.cumsum(((answers[..., None] == np.arange(K)) & (answers >= 0)[..., None]).sum(2), 1)
    top = top_answer(counts)
    return (top >= 0) & (top == correct_code[:, None])


def structured_runs(T: int = 600, R: int = 5, W: int = 4, seed: int = 0) -> dict[str, Any]:  # noqa: N803
    """Synthetic logged runs with the structure of real ones (see the module docstring).

    Each task has a latent accuracy p (lower for harder tasks), a strong distractor taking a
    share of the wrong answers, a long tail of other wrong answers, a 10 % unparsed rate;
    correct attempts have a higher mean log-prob on average. Split 60/20/20 by task.

    >>> r = structured_runs(T=50, R=3, W=2, seed=1)
    >>> bool((r["correct"] == (r["answers"] == r["correct_code"][:, None, None]) & (r["answers"] >= 0)).all())
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
    return dict(
        task_ids=np.array([f"synth-s{d}-{i:06d}" for i, d in enumerate(difficulty)]),
        suite=np.full(T, "synth"), difficulty=difficulty.astype(np.int64), split=splits,
        answers=answers, correct=correct, correct_code=correct_code, prompt_tokens=prompt.copy(),
        completion_tokens=completion, logprob_mean=np.minimum(lp, 0.0).astype(np.float32),
        round_correct=_majority_correct(answers, correct_code),
        meta={"model": "synthetic", "seed": seed, "rounds": R, "width": W, "suites": ["synth"]},
    )
