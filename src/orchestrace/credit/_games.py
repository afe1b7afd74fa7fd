"""Cooperative-game credit: Shapley (exact / sampled), Owen, leave-one-out.

A game is ``n`` players and a value function ``v`` over coalitions (see
:mod:`orchestrace.credit._value` for the accepted shapes). Formulas:

* **Shapley** ``φ_i = Σ_{S⊆N∖{i}} |S|!(n−|S|−1)!/n! · [v(S∪{i}) − v(S)]``. Exact: all
  ``2^n`` coalitions are enumerated as integer bit masks, valued in one batched call and
  combined by two matrix–vector products,
  ``φ = Mᵀ(w₁∘v) − (¬M)ᵀ(w₀∘v)`` with ``w₁(s) = (s−1)!(n−s)!/n!`` for coalitions of size
  ``s`` that contain the player and ``w₀(s) = s!(n−s−1)!/n!`` for those that do not.
* **Permutation sampling** (large ``n``): for a random order π the marginal contribution of
  each player to the players before it is an unbiased sample of ``φ``; orders are drawn in
  **antithetic pairs** (π and its reverse), and a pair's mean is one i.i.d. sample ``Y``.
  If every marginal contribution lies in an interval of width ``r``, Hoeffding and a union
  bound over the ``n`` players give ``P(max_i |φ̂_i − φ_i| ≥ ε) ≤ δ`` once
  ``m ≥ r²·ln(2n/δ)/(2ε²)`` pairs were drawn; the achieved
  ``ε = r·sqrt(ln(2n/δ)/(2m))`` is reported. ``r`` is ``value_range`` when given, else
  the observed range of marginal contributions (then ε is an estimate, said in the notes).
  Every sampled estimate is exactly efficient (``Σφ̂ = v(N) − v(∅)``).
* **Owen** (coalition structure ``N = B_1 ∪ … ∪ B_m``, e.g. roles over agents):
  ``φ_i = Σ_{T⊆M∖{k}} Σ_{S⊆B_k∖{i}} |T|!(m−|T|−1)!/m! · |S|!(b_k−|S|−1)!/b_k! ·
  [v(Q_T∪S∪{i}) − v(Q_T∪S)]`` — the Shapley value of the quotient game between groups,
  then shared inside the group by a Shapley value. Sampled with group-respecting orders.
* **Leave-one-out / difference rewards** ``D_i = v(N) − v(N∖{i})`` (``n+1`` evaluations).

>>> from orchestrace.credit import batched
>>> v = batched(lambda m: (m @ np.array([1.0, 2.0, 3.0])))       # additive game
>>> shapley(v, 3).values.round(12).tolist()
[1.0, 2.0, 3.0]
>>> glove = lambda s: float(min(len(s & {0}), len(s & {1, 2})))   # 1 left, 2 right gloves
>>> shapley(glove, 3).values.round(4).tolist()
[0.6667, 0.1667, 0.1667]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._value import Evaluator

__all__ = [
    "GameResult",
    "hoeffding_epsilon",
    "hoeffding_samples",
    "leave_one_out",
    "owen",
    "shapley",
]

#: Largest ``n`` (or Owen exponent) enumerated exactly unless told otherwise.
EXACT_MAX = 20
_ROW_BUDGET = 1 << 24  # bools per evaluation chunk (~16 MB)


@dataclass(frozen=True)
class GameResult:
    """Per-player values of a game and how they were obtained.

    ``values`` ``(n,)``; ``stderr`` ``(n,)`` standard errors when sampled (else None);
    ``epsilon`` the Hoeffding half-width reached at confidence ``1 − delta``;
    ``permutations`` the number of orders drawn; ``evaluations`` the coalitions valued.
    """

    values: np.ndarray
    exact: bool
    stderr: np.ndarray | None = None
    epsilon: float | None = None
    delta: float | None = None
    permutations: int = 0
    evaluations: int = 0
    value_range: float | None = None
    notes: tuple[str, ...] = field(default=())


def hoeffding_samples(n: int, *, epsilon: float, delta: float, value_range: float) -> int:
    """Pairs ``m ≥ r²·ln(2n/δ)/(2ε²)`` so that all ``n`` estimates are within ε w.p. 1−δ.

    >>> hoeffding_samples(1000, epsilon=0.01, delta=0.05, value_range=0.1)
    530
    """
    _check_eps_delta(epsilon, delta)
    return max(1, math.ceil(value_range**2 * math.log(2 * n / delta) / (2 * epsilon**2)))


def hoeffding_epsilon(n: int, *, samples: int, delta: float, value_range: float) -> float:
    """Achieved ``ε = r·sqrt(ln(2n/δ)/(2m))`` after ``m`` i.i.d. samples.

    >>> round(hoeffding_epsilon(1000, samples=530, delta=0.05, value_range=0.1), 4)
    0.01
    """
    _check_eps_delta(None, delta)
    return value_range * math.sqrt(math.log(2 * n / delta) / (2 * max(samples, 1)))


def _check_eps_delta(epsilon: float | None, delta: float) -> None:
    if epsilon is not None and not (epsilon > 0 and math.isfinite(epsilon)):
        raise ConfigError(f"epsilon must be a positive number, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must be in (0, 1), got {delta!r} (e.g. 0.05 for 95% confidence)")


def _weights(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``w1[s]`` for size-``s`` coalitions containing i, ``w0[s]`` for those without."""
    # s!(n−s−1)!/n! = 1/(n·C(n−1, s)), exact integers before the one division
    w0 = np.array([1.0 / (n * math.comb(n - 1, s)) for s in range(n)] + [0.0])
    w1 = np.concatenate([[0.0], w0[:n]])  # (s−1)!(n−s)!/n! = w0(s − 1)
    return w1, w0


def _all_masks(n: int) -> np.ndarray:
    """All ``2^n`` coalitions as a ``(2^n, n)`` bool array (row r = bits of r), n ≤ 32."""
    ints = np.arange(1 << n, dtype=np.uint32)
    bits = np.unpackbits(ints.view(np.uint8).reshape(-1, 4), axis=1, bitorder="little")
    return np.ascontiguousarray(bits[:, :n]).view(bool)


def _popcounts(n: int) -> np.ndarray:
    """``|S|`` for every coalition bit mask ``0 … 2^n − 1`` (doubling recurrence)."""
    size = np.zeros(1 << n, dtype=np.int64)
    for i in range(n):
        size[1 << i : 2 << i] = size[: 1 << i] + 1
    return size


def _shapley_matrix(n: int) -> np.ndarray:
    """``W`` (2^n, n) with ``φ = valsᵀ W``: ``w1(|S|)`` where i∈S, ``−w0(|S|)`` elsewhere."""
    masks = _all_masks(n)
    size = masks.sum(axis=1)
    w1, w0 = _weights(n)
    return np.where(masks, w1[size][:, None], -w0[size][:, None])


def _evaluator(v: Any, n: int, players: Sequence[Hashable] | None, is_batched: bool | None) -> Evaluator:
    if isinstance(v, Evaluator):
        return v
    if n < 1:
        raise ConfigError("a game needs at least one player")
    if players is not None and len(players) != n:
        raise ConfigError(f"players has {len(players)} labels but n={n}")
    return Evaluator(v, n=n, labels=players, batched=is_batched)


def shapley(
    v: Callable[..., Any],
    n: int,
    *,
    players: Sequence[Hashable] | None = None,
    samples: int | None = None,
    epsilon: float | None = None,
    delta: float = 0.05,
    value_range: float | None = None,
    seed: int = 0,
    exact_max: int = EXACT_MAX,
    antithetic: bool = True,
    batched: bool | None = None,
) -> GameResult:
    """Shapley values of the ``n``-player game ``v``: exact, or sampled when asked or large.

    Exact when ``n ≤ exact_max`` and neither ``samples`` nor ``epsilon`` is given. Sampling
    draws antithetic pairs until the Hoeffding rule for ``epsilon`` is met (at most
    ``samples`` orders when both are given) or exactly ``samples`` orders.

    >>> from orchestrace.credit import batched
    >>> maj = batched(lambda m: (m @ np.array([3, 2, 1, 1]) >= 4).astype(float))
    >>> (shapley(maj, 4).values * 12).round().tolist()     # [4; 3,2,1,1] → 1/2, 1/6, 1/6, 1/6
    [6.0, 2.0, 2.0, 2.0]
    """
    ev = _evaluator(v, n, players, batched)
    if samples is None and epsilon is None:
        if n > exact_max:
            raise ConfigError(
                f"exact Shapley needs 2^{n} coalitions; n={n} > exact_max={exact_max}: pass "
                f"samples=… or epsilon=… for permutation sampling, or raise exact_max"
            )
        return _shapley_exact(ev, n)
    return _sample(ev, n, None, samples=samples, epsilon=epsilon, delta=delta,
                   value_range=value_range, seed=seed, antithetic=antithetic)


def _shapley_exact(ev: Evaluator, n: int) -> GameResult:
    vals = ev(_all_masks(n), distinct=True)  # (2^n,) indexed by bit mask
    size = _popcounts(n)
    w1, w0 = _weights(n)
    # φ_i = Σ_{S∋i} (w1 + w0)(|S|)·v(S) − Σ_S w0(|S|)·v(S); "S ∋ i" is a strided half of the array
    a = vals * (w1[size] + w0[size])
    b = float((vals * w0[size]).sum())
    phi = np.array([a.reshape(-1, 2, 1 << i)[:, 1, :].sum() for i in range(n)]) - b
    return GameResult(values=phi, exact=True, evaluations=ev.evaluations)


def leave_one_out(
    v: Callable[..., Any],
    n: int,
    *,
    players: Sequence[Hashable] | None = None,
    batched: bool | None = None,
) -> GameResult:
    """Difference rewards ``D_i = v(N) − v(N∖{i})`` (``n + 1`` evaluations, one batch).

    >>> leave_one_out(lambda s: float(len(s) ** 2), 3).values.tolist()   # 9 − 4
    [5.0, 5.0, 5.0]
    """
    ev = _evaluator(v, n, players, batched)
    out = np.empty(n)
    chunk = max(1, _ROW_BUDGET // max(n, 1))
    full = ev(np.ones((1, n), dtype=bool))[0]
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        masks = np.ones((hi - lo, n), dtype=bool)
        masks[np.arange(hi - lo), np.arange(lo, hi)] = False
        out[lo:hi] = full - ev(masks)
    return GameResult(values=out, exact=True, evaluations=ev.evaluations)


def owen(
    v: Callable[..., Any],
    groups: Sequence[Sequence[int]],
    *,
    n: int | None = None,
    players: Sequence[Hashable] | None = None,
    samples: int | None = None,
    epsilon: float | None = None,
    delta: float = 0.05,
    value_range: float | None = None,
    seed: int = 0,
    exact_max: int = EXACT_MAX,
    antithetic: bool = True,
    batched: bool | None = None,
) -> GameResult:
    """Owen values of ``v`` for the coalition structure ``groups`` (a partition of players).

    Exact when every group ``k`` needs at most ``2^exact_max`` coalitions
    (``m − 1 + |B_k| ≤ exact_max``) and no sampling was asked for; otherwise orders that
    keep each group contiguous are sampled (antithetic pairs, Hoeffding rule as
    :func:`shapley`).

    >>> from orchestrace.credit import batched
    >>> v = batched(lambda m: (m[:, 0] & (m[:, 1] | m[:, 2])).astype(float))
    >>> owen(v, [[0], [1, 2]]).values.round(4).tolist()   # quotient game: ½, ½
    [0.5, 0.25, 0.25]
    """
    n_players = sum(len(g) for g in groups) if n is None else n
    group_of = _check_partition(groups, n_players)
    ev = _evaluator(v, n_players, players, batched)
    m = len(groups)
    biggest = max(m - 1 + len(g) for g in groups)
    if samples is None and epsilon is None:
        if biggest > exact_max:
            raise ConfigError(
                f"exact Owen values need 2^{biggest} coalitions for the largest group; "
                f"pass samples=… or epsilon=… for sampling, or raise exact_max"
            )
        return _owen_exact(ev, [list(g) for g in groups], n_players)
    return _sample(ev, n_players, group_of, samples=samples, epsilon=epsilon, delta=delta,
                   value_range=value_range, seed=seed, antithetic=antithetic)


def _check_partition(groups: Sequence[Sequence[int]], n: int) -> np.ndarray:
    group_of = np.full(n, -1, dtype=np.int64)
    for k, g in enumerate(groups):
        if len(g) == 0:
            raise ConfigError(f"group {k} is empty; every group of the coalition structure needs a player")
        for i in g:
            if not 0 <= int(i) < n:
                raise ConfigError(f"group {k} names player {i}, outside 0..{n - 1}")
            if group_of[int(i)] != -1:
                raise ConfigError(f"player {i} is in groups {group_of[int(i)]} and {k}; groups must be disjoint")
            group_of[int(i)] = k
    missing = np.flatnonzero(group_of < 0)
    if missing.size:
        raise ConfigError(f"players {missing[:5].tolist()} are in no group; groups must cover all {n} players")
    return group_of


def _owen_exact(ev: Evaluator, groups: list[list[int]], n: int) -> GameResult:
    m = len(groups)
    gmask = np.zeros((m, n), dtype=bool)
    for k, g in enumerate(groups):
        gmask[k, g] = True
    phi = np.zeros(n)
    wt1, wt0 = _weights(m)
    for k, g in enumerate(groups):
        others = [j for j in range(m) if j != k]
        tbits = _all_masks(m - 1)  # (2^(m-1), m-1)
        tplayers = (tbits.astype(np.int64) @ gmask[others].astype(np.int64)) > 0 if others else np.zeros((1, n), bool)
        b = len(g)
        sbits = _all_masks(b)  # (2^b, b)
        splayers = np.zeros((1 << b, n), dtype=bool)
        splayers[:, g] = sbits
        full = (tplayers[:, None, :] | splayers[None, :, :]).reshape(-1, n)
        vals = ev(full).reshape(tplayers.shape[0], 1 << b)  # (2^(m-1), 2^b)
        inner = vals @ _shapley_matrix(b)  # (2^(m-1), b): Shapley inside the group, per T
        wT = wt0[tbits.sum(axis=1)]  # |T|!(m−|T|−1)!/m!
        phi[g] = wT @ inner
    return GameResult(values=phi, exact=True, evaluations=ev.evaluations)


def _ranks(rng: np.random.Generator, p: int, n: int, group_of: np.ndarray | None) -> np.ndarray:
    """``(p, n)`` positions of each player in ``p`` random orders (group-contiguous if asked)."""
    keys = rng.random((p, n))
    if group_of is not None:
        m = int(group_of.max()) + 1
        gpos = rng.random((p, m)).argsort(axis=1).argsort(axis=1)  # position of each group
        keys = gpos[:, group_of] + keys
    return keys.argsort(axis=1).argsort(axis=1)


def _marginals(ev: Evaluator, ranks: np.ndarray, v_empty: float, v_full: float) -> np.ndarray:
    """Marginal contribution of every player in each order: ``(p, n)``."""
    p, n = ranks.shape
    k = np.arange(1, n)  # interior prefixes; ∅ and N are shared by every order
    masks = (ranks[:, None, :] < k[None, :, None]).reshape(-1, n)  # (p·(n−1), n)
    vals = np.empty((p, n + 1))
    vals[:, 0], vals[:, n] = v_empty, v_full
    if n > 1:
        vals[:, 1:n] = ev(masks, distinct=True).reshape(p, n - 1)
    diff = np.diff(vals, axis=1)  # (p, n): contribution of the player at position j
    return np.take_along_axis(diff, ranks, axis=1)


def _sample(
    ev: Evaluator,
    n: int,
    group_of: np.ndarray | None,
    *,
    samples: int | None,
    epsilon: float | None,
    delta: float,
    value_range: float | None,
    seed: int,
    antithetic: bool,
) -> GameResult:
    _check_eps_delta(epsilon, delta)
    if samples is not None and samples < 2:
        raise ConfigError(f"samples must be ≥ 2 permutations, got {samples}")
    if value_range is not None and not (value_range >= 0 and math.isfinite(value_range)):
        raise ConfigError(f"value_range must be a finite number ≥ 0, got {value_range!r}")
    rng = np.random.default_rng(seed)
    per = 2 if antithetic else 1
    max_draws = None if samples is None else max(1, samples // per)  # i.i.d. draws (pairs)
    ends = ev(np.array([np.zeros(n, bool), np.ones(n, bool)]))
    v_empty, v_full = float(ends[0]), float(ends[1])
    chunk = max(1, _ROW_BUDGET // max(n * max(n - 1, 1) * per, 1))
    total = np.zeros(n)
    total_sq = np.zeros(n)
    lo, hi = math.inf, -math.inf
    m = 0

    def draw(p: int) -> None:
        nonlocal lo, hi, m, total, total_sq
        ranks = _ranks(rng, p, n, group_of)
        y = _marginals(ev, ranks, v_empty, v_full)
        lo, hi = min(lo, float(y.min())), max(hi, float(y.max()))
        if antithetic:  # the reversed order: a negatively correlated twin
            y2 = _marginals(ev, n - 1 - ranks, v_empty, v_full)
            lo, hi = min(lo, float(y2.min())), max(hi, float(y2.max()))
            y = 0.5 * (y + y2)
        total += y.sum(axis=0)
        total_sq += (y * y).sum(axis=0)
        m += p

    if epsilon is None:
        assert max_draws is not None
        while m < max_draws:
            draw(min(chunk, max_draws - m))
    else:
        draw(min(chunk, 2 if max_draws is None else min(2, max_draws)))  # pilot
        while True:
            r = value_range if value_range is not None else hi - lo
            need = hoeffding_samples(n, epsilon=epsilon, delta=delta, value_range=r) if r > 0 else m
            if max_draws is not None:
                need = min(need, max_draws)
            if m >= need:
                break
            p = need - m
            if value_range is None:  # the observed range can still grow: grow geometrically
                p = min(p, max(m, 1))
            draw(min(p, chunk))
    mean = total / m
    var = np.maximum(total_sq / m - mean**2, 0.0) * (m / max(m - 1, 1))
    stderr = np.sqrt(var / m)
    notes: list[str] = []
    if value_range is None:
        r = max(hi - lo, 0.0)
        notes.append(
            f"ε uses the observed range of marginal contributions r={r:.6g} "
            f"(pass value_range for a guaranteed bound)"
        )
    else:
        r = value_range
    eps = hoeffding_epsilon(n, samples=m, delta=delta, value_range=r)
    kind = "Owen" if group_of is not None else "Shapley"
    notes.append(
        f"{kind} by {'antithetic ' if antithetic else ''}permutation sampling: {m * per} orders, "
        f"max error ≤ {eps:.4g} with probability ≥ {1 - delta:g} (Hoeffding)"
    )
    return GameResult(values=mean, exact=False, stderr=stderr, epsilon=eps, delta=delta,
                      permutations=m * per, evaluations=ev.evaluations, value_range=r, notes=tuple(notes))

