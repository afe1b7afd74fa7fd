"""Cooperative-game credit: Shapley (exact / sampled), Owen, leave-one-out.

A game is ``n`` players and a value function ``v`` over coalitions (see
:mod:`orchestrace.credit._value` for the accepted shapes). Formulas:

* **Shapley** ``φ_i = Σ_{S⊆N∖{i}} |S|!(n−|S|−1)!/n! · [v(S∪{i}) − v(S)]``. Exact: all
  ``2^n`` coalitions are enumerated as integer bit masks, valued in one batched call and
  combined by two matrix–vector products,
  ``φ = Mᵀ(w₁∘v) − (¬M)ᵀ(w₀∘v)`` with ``w₁(s) = (s−1)!(n−s)!/n!`` for coalitions of size
  ``s`` that contain the player and ``w₀(s) = s!(n−s−1)!/n!`` for those that do not.
* **Harsanyi dividends**: a value function that is a sum of unanimity games
  ``v = Σ_k c_k u_{D_k}`` and says so (``v.dividends()``, e.g. the trace-only game) gets
  exact values at any ``n``: ``φ_i = Σ_{k ∋ i} c_k/|D_k|`` (Owen: ``c_k/(T_k·|D_k ∩ B|)``).
* **Null players** (``v(S ∪ {i}) = v(S)`` for all ``S``; given, or ``v.null_players``) get
  exactly 0 and are removed: in a uniformly random order of ``N`` the non-null players
  before ``j`` are distributed as in a uniformly random order of ``N ∖ Z``, and ``v`` does
  not see ``Z``, so the others' values are unchanged (and ``2^{n'}`` coalitions suffice
  for exact values). **Interchangeable players** (``classes``) get equal shares and pool
  their samples.
* **Permutation sampling** (large ``n``): for a random order π the marginal contribution of
  each player to the players before it is an unbiased sample of ``φ``. Orders come in
  i.i.d. **blocks**: an order, its rotations by ``t/L`` of the random keys (``strata = L``:
  each player's position visits every ``1/L``-th of the order once) and the reverses of all
  (**antithetic**); a block's mean is one sample ``Y``. Two bounds on the largest error:
  with ``value_range = r`` (every marginal in an interval of width ``r``), Hoeffding and a
  union bound over the ``n`` players give ``P(max_i |φ̂_i − φ_i| ≥ ε) ≤ δ`` once
  ``m ≥ r²·ln(2n/δ)/(2ε²)`` blocks were drawn; without it, the variance-aware CLT bound
  ``ε = t_{1−δ/(2n), m−1} · max_i se_i`` (``se_i`` from the blocks' sample variance;
  asymptotic, said in the notes). Sampling stops at ``epsilon`` or at ``rel_tol × mean_i
  |φ̂_i|``, or at a sample / time cap (noted). Value functions with ``v.marginals(ranks)``
  are evaluated incrementally along each order. Every sampled estimate is efficient
  (``Σφ̂ = v(N) − v(∅)``: each order telescopes; rounding drift is put back).
* **Owen** (coalition structure ``N = B_1 ∪ … ∪ B_m``, e.g. roles over agents):
  ``φ_i = Σ_{T⊆M∖{k}} Σ_{S⊆B_k∖{i}} |T|!(m−|T|−1)!/m! · |S|!(b_k−|S|−1)!/b_k! ·
  [v(Q_T∪S∪{i}) − v(Q_T∪S)]`` — the Shapley value of the quotient game between groups,
  then shared inside the group by a Shapley value. Sampled with group-respecting orders.
* **Leave-one-out / difference rewards** ``D_i = v(N) − v(N∖{i})`` (``n+1`` evaluations).

The sampler itself (orders, marginals, block sums, the stopping rule) is in
:mod:`orchestrace.credit._permutations`; this module decides exact or sampled and assembles the result.

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
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._bounds import hoeffding_epsilon, hoeffding_samples, t_quantile
from ._permutations import _Blocks, _check_sampling, _classes_of, _draw_until, _sampling_notes
from ._value import Evaluator

__all__ = [
    "GameResult",
    "hoeffding_epsilon",
    "hoeffding_samples",
    "leave_one_out",
    "owen",
    "shapley",
    "t_quantile",
]

#: Largest ``n`` (or Owen exponent) enumerated exactly unless told otherwise.
EXACT_MAX = 20
_ROW_BUDGET = 1 << 24  # bools per evaluation chunk (~16 MB)


@dataclass(frozen=True)
class GameResult:
    """Per-player values of a game and how they were obtained.

    ``values`` ``(n,)``; ``stderr`` ``(n,)`` standard errors when sampled (else None);
    ``epsilon`` the bound on the largest error reached at confidence ``1 − delta``
    (Hoeffding's with ``value_range``, else the CLT one; the notes say which);
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
    rel_tol: float | None = None,
    time_limit: float | None = None,
    null_players: Any = None,
    classes: Any = None,
    strata: int | None = None,
) -> GameResult:
    """Shapley values of the ``n``-player game ``v``: exact, or sampled when asked or large.

    Exact when none of ``samples``, ``epsilon``, ``rel_tol`` is given and either ``v``
    exposes Harsanyi dividends (``v.dividends() -> (ptr, idx, c)``, a sum of unanimity
    games: ``φ_i = Σ_{k ∋ i} c_k/|D_k|`` at any ``n``) or at most ``exact_max`` players are
    not null. Null players (``null_players``: a mask or indices, else ``v.null_players``)
    get 0 and are removed from the game; ``classes`` (else ``v.classes``) labels
    interchangeable players, whose samples are pooled.

    Sampling draws i.i.d. blocks (an order and its reverse when ``antithetic``; ``strata``
    rotations of it, see :func:`_ranks` — 2 by default, 1 with ``value_range``) until the bound on the largest error reaches
    ``epsilon`` or ``rel_tol × mean |φ̂|`` (mean over all ``n`` players), at most
    ``samples`` orders and ``time_limit`` seconds (60 by default when only a target is
    given), or exactly ``samples`` orders. The bound (``GameResult.epsilon``) is
    Hoeffding's ``r·sqrt(ln(2n/δ)/(2m))`` when ``value_range`` ``r`` bounds the marginal
    contributions, else the CLT half-width ``t_{1−δ/(2n)} · max_i se_i`` from the blocks'
    sample variance; value functions with ``v.marginals(ranks)`` are evaluated
    incrementally along each order.

    >>> from orchestrace.credit import batched
    >>> maj = batched(lambda m: (m @ np.array([3, 2, 1, 1]) >= 4).astype(float))
    >>> (shapley(maj, 4).values * 12).round().tolist()     # [4; 3,2,1,1] → 1/2, 1/6, 1/6, 1/6
    [6.0, 2.0, 2.0, 2.0]
    """
    ev = _evaluator(v, n, players, batched)
    if samples is None and epsilon is None and rel_tol is None:
        div = _dividends(ev)
        if div is not None:
            vals = _shapley_dividends(div, n)
            return GameResult(values=vals, exact=True, evaluations=ev.evaluations, notes=(
                f"exact Shapley values from the game's {div[2].size} Harsanyi dividends "
                f"(φ_i = Σ_{{D ∋ i}} c_D/|D|; no sampling, no error)",))
        null, _, src = _structure(ev, n, null_players, None)
        n2 = int((~null).sum())
        if n2 > exact_max:
            raise ConfigError(
                f"exact Shapley needs 2^{n2} coalitions; n={n2} > exact_max={exact_max}: pass "
                f"samples=…, epsilon=… or rel_tol=… for permutation sampling, or raise exact_max"
            )
        return _shapley_exact(ev, n, None if n2 == n else np.flatnonzero(~null), src)
    return _sample(ev, n, None, samples=samples, epsilon=epsilon, delta=delta,
                   value_range=value_range, seed=seed, antithetic=antithetic, rel_tol=rel_tol,
                   time_limit=time_limit, null_players=null_players, classes=classes, strata=strata)


def _dividends(ev: Evaluator) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    fn = getattr(ev.v, "dividends", None)
    return fn() if callable(fn) else None


def _shapley_dividends(div: tuple[np.ndarray, np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """``φ_i = Σ_{k: i ∈ D_k} c_k/|D_k|`` (the Shapley value of a unanimity game, by linearity)."""
    ptr, idx, c = div
    size = np.diff(ptr)
    return np.bincount(idx, weights=np.repeat(c / np.maximum(size, 1), size), minlength=n)[:n]


def _owen_dividends(div: tuple[np.ndarray, np.ndarray, np.ndarray], n: int, group_of: np.ndarray) -> np.ndarray:
    """Owen value of ``Σ c_k u_{D_k}``: member ``i ∈ D_k`` in group ``B`` gets ``c_k / (T_k · |D_k ∩ B|)``.

    ``T_k`` is the number of groups ``D_k`` meets: the quotient game of ``u_{D_k}`` is the
    unanimity game of those groups (``1/T_k`` each), and inside a group the game is again
    unanimous among its members of ``D_k``.
    """
    ptr, idx, c = div
    size = np.diff(ptr)
    k = np.repeat(np.arange(size.size), size)
    m = int(group_of.max()) + 1
    key = k * m + group_of[idx]
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    touched = np.bincount(uniq // m, minlength=size.size)
    w = c[k] / (touched[k] * cnt[inv.reshape(-1)])
    return np.bincount(idx, weights=w, minlength=n)[:n]


def _shapley_exact(ev: Evaluator, n: int, act: np.ndarray | None = None, src: str | None = None) -> GameResult:
    """All ``2^n`` coalitions, or ``2^{n'}`` over the non-null players ``act`` (nulls get 0)."""
    if act is not None:
        masks = _all_masks(int(act.size))
        wide = np.zeros((masks.shape[0], n), dtype=bool)
        wide[:, act] = masks
        vals = ev(wide, distinct=True)
        phi = np.zeros(n)
        phi[act] = _exact_from_values(vals, int(act.size))
        return GameResult(values=phi, exact=True, evaluations=ev.evaluations, notes=(
            f"{n - act.size} null players ({src}) get exactly 0 and were removed: "
            f"2^{act.size} coalitions valued instead of 2^{n}",))
    vals = ev(_all_masks(n), distinct=True)  # (2^n,) indexed by bit mask
    return GameResult(values=_exact_from_values(vals, n), exact=True, evaluations=ev.evaluations)


def _exact_from_values(vals: np.ndarray, n: int) -> np.ndarray:
    size = _popcounts(n)
    w1, w0 = _weights(n)
    # φ_i = Σ_{S∋i} (w1 + w0)(|S|)·v(S) − Σ_S w0(|S|)·v(S); "S ∋ i" is a strided half of the array
    a = vals * (w1[size] + w0[size])
    b = float((vals * w0[size]).sum())
    return np.array([a.reshape(-1, 2, 1 << i)[:, 1, :].sum() for i in range(n)]) - b


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
    rel_tol: float | None = None,
    time_limit: float | None = None,
    null_players: Any = None,
    classes: Any = None,
) -> GameResult:
    """Owen values of ``v`` for the coalition structure ``groups`` (a partition of players).

    Exact when no sampling was asked for and either ``v`` exposes Harsanyi dividends (any
    size) or every group ``k`` needs at most ``2^exact_max`` coalitions
    (``m − 1 + |B_k| ≤ exact_max``); otherwise orders that keep each group contiguous are
    sampled (antithetic pairs, null players removed, stopping rules and bounds as
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
    if samples is None and epsilon is None and rel_tol is None:
        div = _dividends(ev)
        if div is not None:
            return GameResult(values=_owen_dividends(div, n_players, group_of), exact=True,
                              evaluations=ev.evaluations, notes=(
                                  f"exact Owen values from the game's {div[2].size} Harsanyi dividends "
                                  f"(no sampling, no error)",))
        if biggest > exact_max:
            raise ConfigError(
                f"exact Owen values need 2^{biggest} coalitions for the largest group; "
                f"pass samples=… or epsilon=… for sampling, or raise exact_max"
            )
        return _owen_exact(ev, [list(g) for g in groups], n_players)
    return _sample(ev, n_players, group_of, samples=samples, epsilon=epsilon, delta=delta,
                   value_range=value_range, seed=seed, antithetic=antithetic, rel_tol=rel_tol,
                   time_limit=time_limit, null_players=null_players, classes=classes)


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


def _structure(ev: Evaluator, n: int, null_players: Any, classes: Any) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """Null-player mask and class labels: given, else declared by the value function."""
    src = None
    null = null_players if null_players is not None else getattr(ev.v, "null_players", None)
    if null is None:
        null_mask = np.zeros(n, dtype=bool)
    else:
        arr = np.asarray(null)
        if arr.dtype == bool:
            if arr.shape != (n,):
                raise ConfigError(f"null_players as a mask needs {n} booleans, got shape {arr.shape}")
            null_mask = arr.copy()
        else:
            idx = arr.astype(np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ConfigError(f"null_players names a player outside 0..{n - 1}")
            null_mask = np.zeros(n, dtype=bool)
            null_mask[idx] = True
        src = "given" if null_players is not None else "declared by the value function"
    cls = classes if classes is not None else getattr(ev.v, "classes", None)
    labels = None
    if cls is not None:
        labels = np.asarray(cls).reshape(-1)
        if labels.shape != (n,):
            raise ConfigError(f"classes needs one label per player ({n}), got {labels.shape[0]}")
        labels = np.unique(labels, return_inverse=True)[1].reshape(-1)
    return null_mask, labels, src


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
    rel_tol: float | None = None,
    time_limit: float | None = None,
    null_players: Any = None,
    classes: Any = None,
    strata: int | None = None,
) -> GameResult:
    """Permutation sampling in i.i.d. blocks (an order, its reverse, its rotations).

    Null players are removed (value 0), interchangeable players pool their samples, and
    sampling stops when the bound on the largest error reaches ``epsilon`` (or
    ``rel_tol × mean |φ̂|``), ``samples`` orders were drawn, or ``time_limit`` passed.
    The bound is Hoeffding's when ``value_range`` is given (guaranteed), else a CLT bound
    from the blocks' sample variance (Student-t quantile, union over the estimates).
    """
    strata = _check_sampling(samples, epsilon, delta, value_range, antithetic, rel_tol, time_limit, strata)
    t_start = time.perf_counter()
    kind = "Owen" if group_of is not None else "Shapley"
    notes: list[str] = []
    null, labels, null_src = _structure(ev, n, null_players, classes)
    act = np.flatnonzero(~null)
    n2 = int(act.size)
    ends = ev(np.array([np.zeros(n, bool), np.ones(n, bool)]))
    v_empty, v_full = float(ends[0]), float(ends[1])
    if null.any():
        notes.append(f"{int(null.sum())} null players ({null_src}: v(S ∪ {{i}}) = v(S) for every S) get exactly 0 "
                     f"and were removed from the game; the other {n2} players' values are unchanged by it")
    values = np.zeros(n)
    if n2 <= 1:  # nothing left to sample: the lone player takes v(N) − v(∅) (efficiency)
        values[act] = v_full - v_empty
        notes.append(f"{kind} values exact: {n2} non-null player(s) left")
        return GameResult(values=values, exact=True, evaluations=ev.evaluations, notes=tuple(notes))
    gsub = None
    if group_of is not None:
        gsub = np.unique(group_of[act], return_inverse=True)[1].reshape(-1)
        strata = 1  # rotations would break group-contiguity
    blocks = _Blocks(ev, np.random.default_rng(seed), n, act, gsub, strata, antithetic, v_empty, v_full,
                     _classes_of(labels, act, gsub))
    if blocks.pooled:
        notes.append(f"{n2} players in {blocks.n_cls} classes of interchangeable players: equal shares, samples "
                     "pooled per class")
    per = blocks.per
    max_blocks = None if samples is None else max(1, samples // per)
    if max_blocks is None and time_limit is None and (epsilon is not None or rel_tol is not None):
        time_limit = 60.0
    chunk = max(1, _ROW_BUDGET // max(n * max(n2 - 1, 1) * per, 1))
    if getattr(ev.v, "marginals", None) is not None:
        chunk = max(chunk, 4096 // per)
    stop = _draw_until(blocks, epsilon=epsilon, rel_tol=rel_tol, delta=delta, value_range=value_range,
                       max_blocks=max_blocks, chunk=chunk, time_limit=time_limit, t_start=t_start)
    eps, mean, se = blocks.bound(delta, value_range)
    values[act] = mean[blocks.cls]
    stderr = np.zeros(n)
    stderr[act] = se[blocks.cls]
    # every order telescopes to v(N) − v(∅); enforce it against floating-point drift
    # (rounding only): put it where the estimates are uncertain, never on an exactly known one
    drift = (v_full - v_empty) - float(values.sum())
    if n2 and abs(drift) > 0:
        spread = stderr[act] / stderr[act].sum() if stderr[act].sum() > 0 else np.full(n2, 1.0 / n2)
        values[act] += drift * spread
    notes += _sampling_notes(kind, blocks, eps, values, stop, delta=delta, value_range=value_range, epsilon=epsilon,
                             rel_tol=rel_tol, time_limit=time_limit)
    m = blocks.m
    return GameResult(values=values, exact=False, stderr=stderr, epsilon=eps, delta=delta,
                      permutations=m * per, evaluations=ev.evaluations, value_range=value_range, notes=tuple(notes))


