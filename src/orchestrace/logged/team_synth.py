"""A synthetic heterogeneous team corpus for tests and benchmarks: :func:`make_synthetic_team`.

Each round calls every member kind once (always-continue, all members), as the team collector
does. Member kinds differ in accuracy per task cell so that **no single kind is best
everywhere** (:data:`TEAM_ACCURACY`): ``cold`` is the all-rounder, ``calc`` (a tool member)
is near-exact on arithmetic and useless on look-ups, ``hot`` is a noisy sampler and the
``reviser`` is shown every other member's answers so far (rounds 0..r, same round included)
and mostly repeats their majority. Tasks share a latent difficulty (members are correlated),
wrong answers are drawn from a small per-task set (so wrong answers can win a vote), and the
mean token log-prob and the DeepConf-style confidence carry noisy evidence of correctness.

>>> r = make_synthetic_team(50, 3, seed=0)
>>> r.members, r.sees[-1], r.answers.shape, r.confidence.shape
(('cold', 'hot', 'calc', 'reviser'), (0, 1, 2), (50, 3, 4), (50, 3, 4))
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .runs import LoggedRuns, _recode, logged_from_codes

__all__ = ["TEAM_ACCURACY", "TEAM_CELLS", "make_synthetic_team"]

#: Task cells (suite, difficulty) of the synthetic team corpus.
TEAM_CELLS: tuple[tuple[str, int], ...] = (("add", 1), ("add", 2), ("mentor", 1), ("mentor", 2))
#: P(correct) of one call of each independent member kind per cell (the reviser copies, see above).
TEAM_ACCURACY: dict[str, tuple[float, ...]] = {
    "cold": (0.68, 0.14, 0.71, 0.49),
    "hot": (0.40, 0.10, 0.45, 0.30),
    "calc": (0.92, 0.70, 0.08, 0.05),
}
_TOKENS = {"cold": (70, 5), "hot": (70, 6), "calc": (85, 14), "reviser": (140, 5)}


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def make_synthetic_team(T: int, R: int = 3, *, seed: int = 0, members: tuple[str, ...] = ("cold", "hot", "calc",  # noqa: N803
                        "reviser"), copy: float = 0.8, confidence: bool = True) -> LoggedRuns:
    """T tasks × R rounds × one column per member kind (``cold``, ``hot``, ``calc``, ``reviser``; any subset,
    in any order; the reviser sees every other column). ``copy``: how often the reviser repeats the others'
    majority so far instead of answering alone (with ``cold``'s accuracy)."""
    unknown = [m for m in members if m not in (*TEAM_ACCURACY, "reviser")]
    if unknown:
        raise ValueError(f"member kind(s) {unknown}: the synthetic team knows cold, hot, calc, reviser")
    rng = np.random.default_rng(seed)
    W = len(members)  # noqa: N806
    cell = np.arange(T) % len(TEAM_CELLS)
    z = rng.normal(0.0, 1.0, T)  # the task's latent ease, shared by every member
    n_wrong = rng.integers(1, 4, T)
    raw = np.full((T, R, W), -1, np.int64)
    others = [c for c, m in enumerate(members) if m != "reviser"]
    for r in range(R):
        for c, m in enumerate(members):
            if m == "reviser":
                continue
            p = 1 / (1 + np.exp(-(_logit(np.asarray(TEAM_ACCURACY[m]))[cell] + z)))
            ok = rng.uniform(size=T) < p
            wrong = 1 + (rng.uniform(size=T) * n_wrong).astype(np.int64)
            raw[:, r, c] = np.where(ok, 0, wrong)
        for c, m in enumerate(members):
            if m != "reviser":
                continue
            seen = raw[:, : r + 1, others].reshape(T, -1)  # the others' answers so far, this round included
            k = 4
            votes = ((seen[:, :, None] == np.arange(k)) & (seen[:, :, None] >= 0)).sum(1)
            maj = np.where(votes.max(1) > 0, votes.argmax(1), -1)
            p = 1 / (1 + np.exp(-(_logit(np.asarray(TEAM_ACCURACY["cold"]))[cell] + z)))
            alone = np.where(rng.uniform(size=T) < p, 0, 1 + (rng.uniform(size=T) * n_wrong).astype(np.int64))
            raw[:, r, c] = np.where((rng.uniform(size=T) < copy) & (maj >= 0), maj, alone)
    raw = np.where(rng.uniform(size=(T, R, W)) < 0.04, -1, raw)
    answers, cc = _recode(raw, np.zeros(T, dtype=np.int64))
    right = answers == cc[:, None, None]
    lp = np.minimum(np.where(right, -0.45, -1.0) + rng.normal(0, 0.45, (T, R, W)), 0.0)  # a log-prob is <= 0
    conf = np.where(right, 2.9, 2.4) + rng.normal(0, 0.6, (T, R, W))
    pt = np.array([_TOKENS[m][0] for m in members], np.int32)
    ct = np.array([_TOKENS[m][1] for m in members], np.int32)
    ids = [f"team-{TEAM_CELLS[cell[i]][0]}-s{TEAM_CELLS[cell[i]][1]}-{seed}-{i:06d}" for i in range(T)]
    runs = logged_from_codes(
        ids, [TEAM_CELLS[i][0] for i in cell], [TEAM_CELLS[i][1] for i in cell], answers, cc,
        prompt_tokens=np.broadcast_to(pt, (T, R, W)).copy(),
        completion_tokens=(ct[None, None, :] + rng.integers(0, 4, (T, R, W))).astype(np.int32),
        logprob_mean=lp.astype(np.float32),
        meta={"source": "synthetic-team", "seed": seed, "rounds": R, "width": W, "members": list(members)})
    sees = tuple(tuple(others) if m == "reviser" else () for m in members)
    return dataclasses.replace(runs, members=tuple(members), sees=sees,
                               confidence=conf.astype(np.float32) if confidence else None)
