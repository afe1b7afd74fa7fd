"""Permutation sampling of a game's values, in i.i.d. blocks: the orders, the marginals, the stopping rule.

What :func:`~orchestrace.credit.shapley` and :func:`~orchestrace.credit.owen` use when they sample (see
:mod:`orchestrace.credit._games` for the formulas and the bounds): random orders as position arrays
(:func:`_ranks`, group-contiguous for Owen, rotated for position strata), every player's marginal
contribution along them (:func:`_marginals`), the running block sums with the error bound
(:class:`_Blocks`), the rule that draws until the target, the sample count or the time limit
(:func:`_draw_until`), and what a sampled result says of itself (:func:`_sampling_notes`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import ConfigError
from ._bounds import MIN_BLOCKS, _check_eps_delta, hoeffding_epsilon, hoeffding_samples, t_quantile
from ._value import Evaluator


def _ranks(rng: np.random.Generator, p: int, n: int, group_of: np.ndarray | None, strata: int = 1) -> np.ndarray:
    """``(p·strata, n)`` positions of each player in random orders (group-contiguous if asked).

    With ``strata = L > 1`` every base order's keys ``u`` come with ``L − 1`` rotations
    ``(u + t/L) mod 1``: each order is still uniformly random, and across the ``L`` orders of a
    block every player's position visits each ``1/L``-th of the order once (stratified by
    position). Rows ``[b·L, (b+1)·L)`` form block ``b``.
    """
    keys = rng.random((p, n))
    if strata > 1:
        shift = (np.arange(strata) / strata)[None, :, None]
        keys = ((keys[:, None, :] + shift) % 1.0).reshape(p * strata, n)
    if group_of is not None:
        m = int(group_of.max()) + 1
        gpos = rng.random((keys.shape[0], m)).argsort(axis=1).argsort(axis=1)  # position of each group
        keys = gpos[:, group_of] + keys
    return keys.argsort(axis=1).argsort(axis=1)


def _marginals(ev: Evaluator, ranks: np.ndarray, v_empty: float, v_full: float,
               act: np.ndarray | None = None) -> np.ndarray:
    """Marginal contribution of every (active) player in each order: ``(p, n')``.

    ``ranks`` ``(p, n')`` are positions among the active players ``act`` (all when None);
    the other players (null players) are absent from every coalition valued.
    """
    p, n = ranks.shape
    incremental = getattr(ev.v, "marginals", None)
    if incremental is not None and getattr(ev.v, "batched", False):
        full = ranks
        if act is not None:  # null players join last: they add nothing, wherever they stand
            full = np.empty((p, ev.n), dtype=np.int64)
            rest = np.setdiff1d(np.arange(ev.n), act)
            full[:, act] = ranks
            full[:, rest] = n + np.arange(rest.size)[None, :]
        ev.evaluations += p * max(n - 1, 0)
        y = np.asarray(incremental(full), dtype=float)
        return y if act is None else y[:, act]
    k = np.arange(1, n)  # interior prefixes; ∅ and N are shared by every order
    vals = np.empty((p, n + 1))
    vals[:, 0], vals[:, n] = v_empty, v_full
    if n > 1:
        r32, k32 = ranks.astype(np.int32), k.astype(np.int32)  # int32 compares vectorise ~5× better
        masks = (r32[:, None, :] < k32[None, :, None]).reshape(-1, n)  # (p·(n−1), n')
        if act is not None:
            wide = np.zeros((masks.shape[0], ev.n), dtype=bool)
            wide[:, act] = masks
            masks = wide
        vals[:, 1:n] = ev(masks, distinct=True, owned=True).reshape(p, n - 1)
    diff = np.diff(vals, axis=1)  # (p, n): contribution of the player at position j
    return np.take_along_axis(diff, ranks, axis=1)


def _check_sampling(samples: int | None, epsilon: float | None, delta: float, value_range: float | None,
                    antithetic: bool, rel_tol: float | None, time_limit: float | None, strata: int | None) -> int:
    """Refuse bad sampling settings (each message says what is expected); returns the position strata."""
    _check_eps_delta(epsilon, delta)
    if rel_tol is not None and not (rel_tol > 0 and math.isfinite(rel_tol)):
        raise ConfigError(f"rel_tol must be a positive number, got {rel_tol!r} (e.g. 0.1 for 10% of the mean |credit|)")
    if samples is not None and samples < 2:
        raise ConfigError(f"samples must be ≥ 2 permutations, got {samples}")
    if value_range is not None and not (value_range >= 0 and math.isfinite(value_range)):
        raise ConfigError(f"value_range must be a finite number ≥ 0, got {value_range!r}")
    if time_limit is not None and not (time_limit > 0):
        raise ConfigError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if strata is None:  # position strata pay off with the variance-aware bound (2: measured best)
        strata = 1 if value_range is not None or (samples is not None and samples < 4 * (1 + antithetic)) else 2
    if not (isinstance(strata, (int, np.integer)) and strata >= 1):
        raise ConfigError(f"strata must be an integer ≥ 1, got {strata!r}")
    return int(strata)


def _classes_of(labels: np.ndarray | None, act: np.ndarray, gsub: np.ndarray | None) -> np.ndarray:
    """The estimate each non-null player feeds: one per class of interchangeable players (within one group
    for Owen), else one per player."""
    n2 = int(act.size)
    if labels is not None:
        key = labels[act] if gsub is None else labels[act] * (int(gsub.max()) + 1) + gsub
        cls = np.unique(key, return_inverse=True)[1].reshape(-1)
    else:
        cls = np.arange(n2)
    if int(cls.max()) + 1 >= n2:  # every player its own class: estimates stay in player order
        cls = np.arange(n2)
    return cls


class _Blocks:
    """The running sums of the i.i.d. blocks' mean marginal contributions, one estimate per class."""

    def __init__(self, ev: Evaluator, rng: np.random.Generator, n: int, act: np.ndarray, gsub: np.ndarray | None,
                 strata: int, antithetic: bool, v_empty: float, v_full: float, cls: np.ndarray) -> None:
        self.ev, self.rng, self.n, self.act, self.gsub = ev, rng, n, act, gsub
        self.n2 = int(act.size)
        self.strata, self.antithetic, self.v_empty, self.v_full = strata, antithetic, v_empty, v_full
        self.cls = cls
        self.n_cls = int(cls.max()) + 1
        self.pooled = self.n_cls < self.n2
        self.by_cls = np.argsort(cls, kind="stable")
        self.starts = np.flatnonzero(np.r_[True, np.diff(cls[self.by_cls]) != 0])
        self.size = np.bincount(cls, minlength=self.n_cls).astype(float)
        self.per = (2 if antithetic else 1) * strata  # orders per block
        self.total = np.zeros(self.n_cls)
        self.total_sq = np.zeros(self.n_cls)
        self.m = 0

    def draw(self, p: int) -> None:
        """``p`` more blocks."""
        n2, sub = self.n2, (self.act if self.n2 < self.n else None)
        ranks = _ranks(self.rng, p, n2, self.gsub, self.strata)
        y = _marginals(self.ev, ranks, self.v_empty, self.v_full, sub)
        if self.antithetic:  # the reversed orders: negatively correlated twins
            y = y + _marginals(self.ev, n2 - 1 - ranks, self.v_empty, self.v_full, sub)
        y = y.reshape(p, self.strata, n2).sum(axis=1) / self.per  # block means (p, n2)
        if self.pooled:
            y = np.add.reduceat(y[:, self.by_cls], self.starts, axis=1) / self.size
        self.total[:] += y.sum(axis=0)
        self.total_sq[:] += (y * y).sum(axis=0)
        self.m += p

    def bound(self, delta: float, value_range: float | None) -> tuple[float, np.ndarray, np.ndarray]:
        """The bound on the largest error, the estimates and their standard errors."""
        m, n_cls = self.m, self.n_cls
        mean = self.total / m
        var = np.maximum(self.total_sq / m - mean**2, 0.0) * (m / max(m - 1, 1))
        se = np.sqrt(var / m)
        if value_range is not None:
            return hoeffding_epsilon(n_cls, samples=m, delta=delta, value_range=value_range), mean, se
        if m < 2:  # one block: no variance estimate, so no bound
            return math.inf, mean, np.full(n_cls, math.inf)
        q = t_quantile(1 - delta / (2 * n_cls), max(m - 1, 1))
        return q * float(se.max()), mean, se

    def target(self, mean: np.ndarray, epsilon: float | None, rel_tol: float | None) -> float:
        """The error to reach: ``epsilon``, or ``rel_tol`` × the mean |value| over all n players."""
        if epsilon is not None:
            return epsilon
        assert rel_tol is not None
        return rel_tol * float(np.abs(mean * self.size).sum()) / self.n


def _draw_until(b: _Blocks, *, epsilon: float | None, rel_tol: float | None, delta: float,
                value_range: float | None, max_blocks: int | None, chunk: int, time_limit: float | None,
                t_start: float) -> str:
    """Draw blocks until the target, the sample count or the time limit; returns which one stopped it."""
    if epsilon is None and rel_tol is None:
        assert max_blocks is not None
        while b.m < max_blocks:
            b.draw(min(chunk, max_blocks - b.m))
        return "samples"
    first = MIN_BLOCKS if value_range is None else 2
    b.draw(min(chunk, first if max_blocks is None else min(first, max_blocks)))
    while True:
        m = b.m
        eps, mean, _ = b.bound(delta, value_range)
        goal = b.target(mean, epsilon, rel_tol)
        if eps <= goal and (value_range is not None or m >= MIN_BLOCKS):
            return "target"
        if max_blocks is not None and m >= max_blocks:
            return "samples"
        elapsed = time.perf_counter() - t_start
        if time_limit is not None and elapsed >= time_limit:
            return "time"
        if goal <= 0:
            need = 2 * m
        elif value_range is not None:  # Hoeffding: the count is known in advance
            need = hoeffding_samples(b.n_cls, epsilon=goal, delta=delta, value_range=value_range)
            need = need if epsilon is not None else min(need, 4 * m)  # a relative goal moves: re-check
        else:  # CLT: the bound shrinks like 1/√m
            need = min(math.ceil(m * (eps / goal) ** 2 * 1.2), 4 * m)
        need = max(need, m + 1)
        if max_blocks is not None:
            need = min(need, max_blocks)
        if time_limit is not None:
            need = min(need, m + max(1, int((time_limit - elapsed) / max(elapsed / m, 1e-9))))
        b.draw(min(need - m, chunk))


def _sampling_notes(kind: str, b: _Blocks, eps: float, values: np.ndarray, stop: str, *, delta: float,
                    value_range: float | None, epsilon: float | None, rel_tol: float | None,
                    time_limit: float | None) -> list[str]:
    """What the sampled result says of itself: orders drawn, the bound and how it was computed, and why
    sampling stopped short of its target, if it did."""
    m, per, n = b.m, b.per, b.n
    notes = []
    how = ("Hoeffding, range " + f"{value_range:.6g}") if value_range is not None else (
        "CLT: Student-t quantile × the blocks' sample standard error, union bound over "
        f"{b.n_cls} estimates; asymptotic, not a guarantee — pass value_range for Hoeffding's")
    mean_abs = float(np.abs(values).sum()) / n
    rel = eps / mean_abs if mean_abs > 0 else math.inf
    blocks = f"{m} blocks of {per} orders ({'antithetic' if b.antithetic else 'plain'}"
    blocks += f", {b.strata} position strata)" if b.strata > 1 else ")"
    notes.append(
        f"{kind} by permutation sampling: {m * per} orders in {blocks}; max error ≤ {eps:.4g} with "
        f"probability ≥ {1 - delta:g} ({how}); that is {rel:.3g} × the mean |value| {mean_abs:.4g}; "
        f"Σ values = v(N) − v(∅) exactly (every order telescopes; rounding drift put back)"
    )
    if value_range is None and 2 <= m < MIN_BLOCKS:
        notes.append(f"only {m} blocks: the CLT bound needs about {MIN_BLOCKS} to be trusted (draw at least "
                     f"{MIN_BLOCKS * per} orders, or pass value_range for Hoeffding's)")
    if not math.isfinite(eps):
        notes.append(f"a single block of {per} orders gives no variance estimate, hence no error bound: draw at "
                     f"least {2 * per} orders (samples) or pass value_range")
    if epsilon is not None or rel_tol is not None:
        goal = epsilon if epsilon is not None else (rel_tol or 0.0) * mean_abs
        if stop == "time" and eps > goal:
            notes.append(f"stopped at the time limit ({time_limit:g} s) before the target {goal:.4g}: the bound "
                         f"{eps:.4g} is {eps / goal if goal > 0 else math.inf:.3g}× it (raise time_limit or samples)")
        elif stop == "samples" and eps > goal:
            notes.append(f"stopped at {m * per} orders (samples) before the target {goal:.4g}")
    return notes
