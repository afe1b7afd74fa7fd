"""The trace-only value function used by counterfactual credit on a bare trace.

Without an environment to replay, removing a unit is modelled on the trace itself:
**a unit's removal deletes its events and everything that causally depends on them**.
An event survives a coalition ``S`` iff every unit among its ancestors-or-self is in ``S``
(``U(e) ⊆ S``). The value of ``S`` is the share of each rewarded event's ancestral work
that survives, times the reward::

    v(S) = Σ_signals r_s · Σ_{e ∈ anc*(a_s), e a unit event, U(e) ⊆ S} w_e
                         / Σ_{e ∈ anc*(a_s), e a unit event} w_e

with ``a_s`` the signal's anchor event and ``w_e`` the event's work (duration, tokens or
1). So ``v(∅) = 0``, ``v(N) = Σ r_s``, an orchestrator whose decision every worker depends
on is essential to everyone's work, and a worker whose output feeds nothing rewarded is a
dummy. The game is additive exactly when no unit's events depend on another unit's.

A **negative** value (a run below its baseline: ``credit --baseline``) is spread not over
the anchor's ancestral work but over the *causes* of the failure when the trace flags
errors — the events where the errors that reached the anchor began
(:func:`~orchestrace.credit._flow.sharers`) — and a cause is its own unit's alone: the
failure happens in a coalition iff the erring unit is in it (the units it depended on, such
as the orchestrator that spawned it, enabled the work but did not make the error). This part
of the game is additive, so Shapley, Owen, leave-one-out, C3, COMA and ``causal`` agree
on the blame: each erring unit answers for its share of the failure, nobody else does.

Evaluation is vectorised: events are grouped by their dependency set ``U(e)`` (``K``
distinct sets, as a ``(K, n)`` bool matrix ``D``) with summed coefficients ``c``; then
``v(masks) = [(¬masks) · Dᵀ = 0] · c`` — one matrix product per batch.

**Structure the Shapley machinery exploits.** ``v = Σ_k c_k · u_{D_k}`` is a sum of
unanimity games (``u_D(S) = 1`` iff ``D ⊆ S``): the ``c_k`` are its Harsanyi dividends.
Hence

* **exact Shapley values in closed form** — ``φ_i = Σ_{k: i ∈ D_k} c_k / |D_k|`` (each
  unanimity game splits its dividend equally among its members; Shapley is linear), and
  Owen values alike (:meth:`TraceValue.dividends`);
* **null players** — a unit in no ``D_k`` (no event of it is a causal ancestor of a rewarded
  event, or of the failure's cause) changes no indicator ``[D_k ⊆ S]``: ``D_k ⊆ S ∪ {i}`` ⟺
  ``D_k ⊆ S`` when ``i ∉ D_k``. So ``v(S ∪ {i}) = v(S)`` for every ``S``, ``φ_i = 0`` and
  the unit can be dropped from the game without changing anyone else's value
  (:attr:`TraceValue.null_players`);
* **interchangeable units** — two units that belong to exactly the same ``D_k`` are
  symmetric (swapping them maps every ``D_k`` to itself) and get equal shares
  (:attr:`TraceValue.classes`);
* **incremental evaluation along an order** — ``u_{D_k}`` switches on when the last member of
  ``D_k`` joins, so the marginal contribution of the unit at position ``j`` is the sum of the
  ``c_k`` completed at ``j``: ``O(Σ|D_k|)`` per order instead of ``n`` valuations
  (:meth:`TraceValue.marginals`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._flow import ancestors_of, sharers

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..analysis.units import UnitIndex
    from ._flow import Anchors

__all__ = ["TraceValue"]

DESCRIPTION = (
    "trace-only value function used (no environment to replay): v(S) = Σ r · share of the "
    "rewarded event's ancestral work ({weight}) whose whole causal history lies in S — removing "
    "a unit removes its events and everything that depends on them"
)


class TraceValue:
    """Batched value function over the units of ``ui`` (see the module docstring).

    Call with a ``(B, n)`` boolean mask array; returns ``(B,)`` floats.
    """

    batched = True

    def __init__(self, g: TraceGraph, ui: UnitIndex, an: Anchors, w: np.ndarray) -> None:
        n = len(ui)
        eu = ui.event_unit
        uniq, inv = np.unique(an.event, return_inverse=True)
        per_anchor = np.bincount(inv, weights=an.value, minlength=uniq.size)
        coef = np.zeros(g.n)  # Σ_s r_s w_e / W_s per event
        blame = np.zeros(g.n)  # the same for failures' causes: their own unit alone answers for them
        relevant = np.zeros(g.n, dtype=bool)
        self.caused = 0  # negative values placed on the causes of a failure
        self.uncaused = 0  # negative values with no flagged cause (shared by work instead)
        for a, r in zip(uniq.tolist(), per_anchor.tolist(), strict=False):
            relevant |= ancestors_of(g, a)
            pl, share, blamed = sharers(g, ui, a, r, w)
            self.caused += blamed
            self.uncaused += r < 0 and not blamed
            if pl.size:
                (blame if blamed else coef)[pl] += r * share
        # dependency sets U(e) as Python-int bit sets, in topological order
        order = g.topo_order()
        order = order[relevant[order]].tolist()
        ptr, idx = g.pred_ptr.tolist(), g.pred_idx.tolist()
        eul = eu.tolist()
        bits = [0] * g.n
        groups: dict[int, float] = {}
        coefl = coef.tolist()
        for e in order:
            m = 1 << eul[e] if eul[e] >= 0 else 0
            for p in idx[ptr[e]:ptr[e + 1]]:
                m |= bits[p]
            bits[e] = m
            if coefl[e] != 0.0:
                groups[m] = groups.get(m, 0.0) + coefl[e]
        for e in np.flatnonzero(blame).tolist():  # a cause of failure is its own unit's (additive part)
            m = 1 << eul[e]
            groups[m] = groups.get(m, 0.0) + float(blame[e])
        self.n = n
        self.k = len(groups)
        nbytes = (n + 7) // 8
        packed = np.frombuffer(b"".join(m.to_bytes(nbytes, "little") for m in groups), dtype=np.uint8)
        self._dep = np.unpackbits(packed.reshape(self.k, nbytes), axis=1, bitorder="little", count=n).view(bool)
        self._dep_t: np.ndarray | None = None
        self._classes: np.ndarray | None = None
        self.coef = np.fromiter(groups.values(), dtype=float, count=self.k)  # (K,)
        rows, cols = np.nonzero(self._dep)  # row-major: members of D_0, then D_1, …
        size = np.bincount(rows, minlength=self.k)
        #: the non-empty dependency sets as CSR (``set_ptr``, ``set_idx``) with their dividends
        keep = size > 0
        self.set_ptr = np.concatenate([[0], np.cumsum(size[keep])]).astype(np.int64)
        self.set_idx = cols.astype(np.int64)
        self.set_coef = self.coef[keep]
        #: units in no dependency set: null players (value 0, removable from the game)
        self.null_players = np.bincount(self.set_idx, minlength=n)[:n] == 0

    @property
    def dep_t(self) -> np.ndarray:
        """``(n, K)`` float32 membership matrix (built on first use: only black-box valuation needs it)."""
        if self._dep_t is None:
            self._dep_t = self._dep.T.astype(np.float32)
        return self._dep_t

    @property
    def classes(self) -> np.ndarray:
        """Class label per unit; equal labels = the same dependency sets = interchangeable units."""
        if self._classes is None:
            self._classes = (np.unique(np.packbits(self._dep, axis=0).T, axis=0, return_inverse=True)[1].reshape(-1)
                             if self.k else np.zeros(self.n, dtype=np.int64))
        return self._classes

    def dividends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The game as Harsanyi dividends: ``(ptr, idx, c)`` — set ``k`` is ``idx[ptr[k]:ptr[k+1]]``.

        ``v(S) = v(∅) + Σ_k c_k [D_k ⊆ S]`` over these non-empty sets (an empty ``D_k`` only
        adds to ``v(∅)``, which no credit depends on).
        """
        return self.set_ptr, self.set_idx, self.set_coef

    def marginals(self, ranks: np.ndarray) -> np.ndarray:
        """Marginal contribution of every unit in each order: ``(p, n)`` from positions ``(p, n)``.

        ``ranks[t, i]`` is unit ``i``'s position in order ``t`` (a permutation of
        ``0 … n − 1``). Set ``k`` completes at ``max_{i ∈ D_k} ranks[t, i]``; the unit at that
        position adds ``c_k`` — the same numbers as differencing ``v`` along the order.
        """
        p, n = ranks.shape
        out = np.zeros((p, n))
        if self.set_coef.size == 0 or p == 0:
            return out
        step = max(1, (1 << 22) // max(self.set_idx.size, 1))
        for lo in range(0, p, step):
            r = ranks[lo:lo + step]
            b = r.shape[0]
            done = np.maximum.reduceat(r[:, self.set_idx], self.set_ptr[:-1], axis=1)  # (b, K)
            flat = (done + (np.arange(b) * n)[:, None]).reshape(-1)
            by_pos = np.bincount(flat, weights=np.broadcast_to(self.set_coef, done.shape).reshape(-1),
                                 minlength=b * n).reshape(b, n)
            out[lo:lo + b] = np.take_along_axis(by_pos, r, axis=1)
        return out

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        """``(B, n)`` bool coalitions → ``(B,)`` values."""
        if self.k == 0:
            return np.zeros(masks.shape[0])
        out = np.empty(masks.shape[0])
        step = max(1, (1 << 22) // max(self.k, 1))
        for lo in range(0, masks.shape[0], step):
            missing = (~masks[lo:lo + step]).astype(np.float32) @ self.dep_t  # (b, K)
            out[lo:lo + step] = (missing == 0) @ self.coef
        return out
