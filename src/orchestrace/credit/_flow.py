"""Credit that flows over the trace graph: broadcast, causal shares, discounting, graph GAE.

Every reward :class:`~orchestrace.Signal` is *anchored* at one event, the event that earned
it: a ``team`` signal at the final output (:attr:`TraceGraph.output`), an ``agent`` or
``role`` signal at that agent's / role's latest event, an event-unit signal (``turn``,
``message``, ``tool_call``, ``orchestrator``, ``token``) at its event. Its *scope* is the
set of events it is about: all events, the agent's, the role's, or the one event.

* **broadcast** — every unit that has an event in the signal's scope gets the full value
  (the team reward reaches every unit: the baseline of agent frameworks).
* **causal** — the value is shared among the anchor's ancestors-or-self that belong to a
  unit, in proportion to their work ``w_e`` (duration, tokens or 1 — see ``weight``);
  units add up their events' shares, so Σ credit = Σ rewards, and work that is not an
  ancestor of a rewarded event (wasted work) gets 0. A **negative** value (a run below its
  baseline) is shared instead among the *causes* of the failure, when the trace flags
  errors: the events where the errors that reached the anchor began (:func:`error_origins`);
  so blame lands on the agent whose error the run failed of, not on everyone who worked.
* **discounted** — the return on the graph, backwards along dependency edges:
  ``G_e = r_e + max_{e→c} γ·γ_s^{t_c − t_e}·G_c`` (``γ`` per hop, ``γ_s`` per second;
  ``r_e`` = the signals anchored at ``e``). For one rewarded event this is
  ``R·γ^{hops}·γ_s^{Δt}`` along the shortest path; on a chain it is the usual discounted
  return. A unit takes the largest return reaching one of its events (``reduce="max"``;
  the default ``"auto"`` takes the most negative one when the credited total is negative —
  a failure below its baseline — so a unit's value is always that of its event nearest the
  outcome; ``"min"``, ``"sum"`` and ``"mean"`` are available).
* **GAE over the graph** (``lam`` given) — along each event's best successor ``c*(e)``
  (the argmax above): ``δ_e = r_e + γ_e·V(c*) − V(e)``, ``A_e = δ_e + γ_e·λ·A_{c*}``
  with ``γ_e = γ·γ_s^{t_{c*} − t_e}`` and ``V`` a critic's event values (0 if none, so that
  ``λ = 1`` gives ``A = G``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError, did_you_mean
from ..vocab import CreditUnit, EventType

if TYPE_CHECKING:
    from ..analysis.graph import TraceGraph
    from ..analysis.units import UnitIndex
    from ..core.trace import Signal

__all__ = ["Anchors", "anchor_signals", "broadcast", "causal", "error_origins", "event_weights", "graph_returns",
           "sharers"]

SCOPE_TEAM, SCOPE_AGENT, SCOPE_ROLE, SCOPE_EVENT = 0, 1, 2, 3


@dataclass(frozen=True)
class Anchors:
    """Signals resolved against a graph: ``event`` (anchor index), ``value``, ``scope``
    (0 team, 1 agent, 2 role, 3 event) and ``code`` (agent code, role code or event index)."""

    event: np.ndarray
    value: np.ndarray
    scope: np.ndarray
    code: np.ndarray

    @property
    def total(self) -> float:
        return float(self.value.sum())


def _latest_per(keys: np.ndarray, t: np.ndarray, size: int) -> np.ndarray:
    """For each key 0..size−1, the index of its latest event (ties: later index), or −1."""
    out = np.full(size, -1, dtype=np.int64)
    if keys.size == 0:
        return out
    order = np.lexsort((np.arange(keys.size), t))[::-1]  # latest first
    k, first = np.unique(keys[order], return_index=True)
    out[k[k >= 0]] = order[first][k >= 0]
    return out


def anchor_signals(g: TraceGraph, ui: UnitIndex, signals: Sequence[Signal]) -> Anchors:
    """Anchor each signal at the event that earned it (see the module docstring).

    Raises :class:`~orchestrace.errors.ConfigError` naming a signal whose unit id is not in
    the trace.
    """
    s = len(signals)
    ev = np.empty(s, np.int64)
    val = np.empty(s)
    scope = np.empty(s, np.int8)
    code = np.empty(s, np.int64)
    role_code = {r: i for i, r in enumerate(ui.role_names)}
    spawn_of: dict[str, int] | None = None
    for j, sig in enumerate(signals):
        val[j] = sig.value
        u = CreditUnit(sig.unit)
        if u is CreditUnit.TEAM:
            if g.output < 0:
                raise ConfigError("the trace has no events, so a team signal has nowhere to land")
            ev[j], scope[j], code[j] = g.output, SCOPE_TEAM, 0
        elif u is CreditUnit.AGENT:
            a = g.agent_index.get(sig.id)
            if a is None:
                raise _unknown(j, sig, "agent", g.agents)
            e = int(g.derived(("credit", "last_agent"), lambda: _latest_per(g.agent.astype(np.int64), g.t, len(g.agents)))[a])
            if e < 0:  # spawned, never acted: the spawn that made it earned it
                if spawn_of is None:
                    spawn_of = {g.trace.events[i].to: i for i in np.flatnonzero(g.is_type(EventType.SPAWN)).tolist()}  # type: ignore[misc]
                e = spawn_of.get(sig.id, -1)
                if e < 0:
                    raise _unknown(j, sig, "agent", g.agents)
            ev[j], scope[j], code[j] = e, SCOPE_AGENT, a
        elif u is CreditUnit.ROLE:
            r = role_code.get(sig.id)
            last_role = g.derived(("credit", "last_role"), lambda: _latest_per(ui.event_role, g.t, len(ui.role_names)))
            if r is None or last_role[r] < 0:
                raise _unknown(j, sig, "role", list(ui.role_names))
            ev[j], scope[j], code[j] = last_role[r], SCOPE_ROLE, r
        else:
            eid = sig.id.split("[", 1)[0] if u is CreditUnit.TOKEN else sig.id
            hit = g.index.get(eid)
            if hit is None:
                raise _unknown(j, sig, "event", g.ids)
            ev[j], scope[j], code[j] = hit, SCOPE_EVENT, hit
    return Anchors(ev, val, scope, code)


def _unknown(j: int, sig: Signal, what: str, known: Sequence[str]) -> ConfigError:
    tip = did_you_mean(sig.id, list(known)[:5000], prefix="; ")
    return ConfigError(
        f"signals[{j}] ({CreditUnit(sig.unit).value} {sig.id!r}{', ' + sig.name if sig.name else ''}) names a {what} "
        f"this trace lacks{tip}"
    )


def event_weights(g: TraceGraph, weight: str = "auto") -> tuple[np.ndarray, str]:
    """Work per event for causal shares: ``duration`` | ``tokens`` | ``events`` | ``auto``.

    ``auto`` = duration when every event has an end time and some duration is positive,
    else tokens when the trace reports tokens, else 1 per event.
    """
    if weight == "auto":
        if g.end_known.all() and g.duration.sum() > 0:
            weight = "duration"
        elif g.tokens_known:
            weight = "tokens"
        else:
            weight = "events"
    if weight == "duration":
        return g.duration.astype(float), "duration (s)"
    if weight == "tokens":
        return g.tokens_in + g.tokens_out, "tokens"
    if weight == "events":
        return np.ones(g.n), "one per event"
    raise ConfigError(f"weight must be auto, duration, tokens or events, got {weight!r}")


def broadcast(g: TraceGraph, ui: UnitIndex, an: Anchors) -> tuple[np.ndarray, int]:
    """Every unit with an event in a signal's scope gets its full value.

    Returns per-unit values and the number of signals that reached no unit.
    """
    n_units = len(ui)
    out = np.zeros(n_units)
    eu = ui.event_unit
    has = eu >= 0
    team = an.scope == SCOPE_TEAM
    out += an.value[team].sum()
    missed = 0
    for scope, key in ((SCOPE_AGENT, g.agent.astype(np.int64)), (SCOPE_ROLE, ui.event_role)):
        sel = an.scope == scope
        if not sel.any():
            continue
        size = len(g.agents) if scope == SCOPE_AGENT else len(ui.role_names)
        per_key = np.bincount(an.code[sel], weights=an.value[sel], minlength=size)
        pairs = np.unique(np.stack([key[has], eu[has]], axis=1), axis=0) if has.any() else np.zeros((0, 2), np.int64)
        pairs = pairs[pairs[:, 0] >= 0]
        if scope == SCOPE_AGENT and ui.unit is CreditUnit.AGENT:  # idle agents still own themselves
            pairs = np.unique(np.concatenate([pairs, np.stack([np.arange(size)] * 2, axis=1)]), axis=0)
        np.add.at(out, pairs[:, 1], per_key[pairs[:, 0]])
        reached = np.zeros(size, bool)
        reached[pairs[:, 0]] = True
        missed += int((~reached[an.code[sel]]).sum())
    sel = an.scope == SCOPE_EVENT
    if sel.any():
        u = eu[an.event[sel]]
        ok = u >= 0
        np.add.at(out, u[ok], an.value[sel][ok])
        missed += int((~ok).sum())
    return out, missed


def causal(g: TraceGraph, ui: UnitIndex, an: Anchors, w: np.ndarray) -> tuple[np.ndarray, int, int, int]:
    """Shares of each signal among its anchor's ancestors-or-self, ∝ work, summed per unit; a
    negative value among the *causes* of the anchor's failure (:func:`sharers`).

    Returns per-unit values, the number of signals with no unit among the ancestors, the
    number of negative values placed on causes, and the number that found no cause (shared
    by work instead).
    """
    out = np.zeros(len(ui))
    eu = ui.event_unit
    uniq, inv = np.unique(an.event, return_inverse=True)
    per_anchor = np.bincount(inv, weights=an.value, minlength=uniq.size)
    missed = caused = uncaused = 0
    for a, value in zip(uniq.tolist(), per_anchor.tolist(), strict=False):
        idx, share, blamed = sharers(g, ui, a, value, w)
        if not idx.size:
            missed += 1
            continue
        caused += blamed
        uncaused += value < 0 and not blamed
        out += np.bincount(eu[idx], weights=value * share, minlength=len(ui))
    return out, missed, caused, uncaused


def sharers(g: TraceGraph, ui: UnitIndex, anchor: int, value: float, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The unit events that share the value anchored at ``anchor``, their shares (Σ = 1) and
    whether they are the causes of a failure.

    A value ≥ 0 is shared by the anchor's ancestors-or-self, ∝ work ``w``. A negative value
    (a run below its baseline) is shared by the **causes** of the failure when the trace
    flags them: the origins of the errors that reached the anchor (:func:`error_origins`);
    an origin that is no unit event (a failed ``tool_result`` for the ``turn`` unit) passes
    its blame to the unit events of the same agent it directly depends on (the call); if
    that finds none, every unit event on the error paths shares. Without flagged causes it
    is shared like a positive value (``blamed`` False).
    """
    player = ui.event_unit >= 0
    idx = np.zeros(0, np.int64)
    blamed = False
    if value < 0:
        origins, chain = error_origins(g, anchor)
        cause = origins & player
        for o in np.flatnonzero(origins & ~player).tolist():  # e.g. a failed tool_result: blame its call
            pred = g.pred_idx[g.pred_ptr[o]:g.pred_ptr[o + 1]]
            cause[pred[player[pred] & (g.agent[pred] == g.agent[o])]] = True
        for cand in (cause, chain & player):
            if cand.any():
                idx, blamed = np.flatnonzero(cand), True
                break
    if not blamed:
        idx = np.flatnonzero(ancestors_of(g, anchor) & player)
    if not idx.size:
        return idx, np.zeros(0), blamed
    wa = w[idx]
    tot = wa.sum()
    return idx, (wa / tot if tot > 0 else np.full(idx.size, 1.0 / idx.size)), blamed


def error_origins(g: TraceGraph, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the errors that reached ``anchor`` began: ``(origins, chain)`` bool masks.

    ``chain`` = the events reached from ``anchor`` backwards along dependency edges through
    events flagged ``error: true`` only (the anchor included, when it is flagged); ``origins``
    = the chain's events with no flagged predecessor in the chain — where each error run
    started. Both are empty when the anchor is not flagged.

    >>> from orchestrace.core.builder import TraceBuilder
    >>> from orchestrace.analysis.graph import TraceGraph
    >>> b = TraceBuilder("e"); a = b.add("tool_call", "w", t=0); c = b.add("tool_call", "w", t=1, after=a, error=True)
    >>> d = b.add("return", "w", t=2, after=c, error=True); o = b.add("aggregate", "m", t=3, after=d, error=True)
    >>> origins, chain = error_origins(TraceGraph.from_trace(b.build()), 3)
    >>> np.flatnonzero(origins).tolist(), np.flatnonzero(chain).tolist()
    ([1], [1, 2, 3])
    """
    def run() -> tuple[np.ndarray, np.ndarray]:
        flagged = g.error
        chain = np.zeros(g.n, dtype=bool)
        if not flagged[anchor]:
            return chain, chain
        chain[anchor] = True
        frontier = np.array([anchor], dtype=np.int64)
        while frontier.size:
            starts = g.pred_ptr[frontier]
            counts = g.pred_ptr[frontier + 1] - starts
            pos = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
            preds = g.pred_idx[pos].astype(np.int64)
            preds = np.unique(preds[flagged[preds] & ~chain[preds]])
            chain[preds] = True
            frontier = preds
        has_pred = np.zeros(g.n, dtype=bool)
        inside = chain[g.dep_src] & chain[g.dep_dst]
        has_pred[g.dep_dst[inside]] = True
        return chain & ~has_pred, chain
    return g.derived(("credit", ("error_origins", anchor)), run)


def ancestors_of(g: TraceGraph, event: int) -> np.ndarray:
    """Bool mask of the ancestors-or-self of one event (cached on the graph)."""
    return g.derived(("credit", ("anc", event)), lambda: g.ancestor_mask([event], inclusive=True))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Levels:
    """Dependency edges sorted by (source level ↓, source, edge order); per level the edge
    slice ``[lo, hi)`` and the segment slice ``[slo, shi)`` (one segment per source)."""

    src: np.ndarray
    dst: np.ndarray
    seg_start: np.ndarray  # first edge of each segment
    seg_len: np.ndarray
    seg_src: np.ndarray
    edge_seg: np.ndarray  # segment of each edge
    levels: list[tuple[int, int, int, int]]


def _level_edges(g: TraceGraph) -> _Levels:
    return g.derived(("credit", "level_edges"), lambda: _sort_level_edges(g))  # type: ignore[no-any-return]


def _sort_level_edges(g: TraceGraph) -> _Levels:
    src, dst = g.dep_src.astype(np.int64), g.dep_dst.astype(np.int64)
    if not src.size:
        e = np.zeros(0, np.int64)
        return _Levels(src, dst, e, e, e, e, [])
    lv = g.level[src].astype(np.int64)
    order = np.lexsort((np.arange(src.size), src, -lv))
    src, dst, lv = src[order], dst[order], lv[order]
    new = np.ones(src.size, dtype=bool)
    new[1:] = (src[1:] != src[:-1]) | (lv[1:] != lv[:-1])
    seg_start = np.flatnonzero(new)
    seg_len = np.diff(np.r_[seg_start, src.size])
    edge_seg = np.cumsum(new) - 1
    lv_cut = np.flatnonzero(np.diff(lv)) + 1
    lo = np.r_[0, lv_cut]
    hi = np.r_[lv_cut, src.size]
    slo = edge_seg[lo]
    shi = np.r_[slo[1:], seg_start.size]
    levels = list(zip(lo.tolist(), hi.tolist(), slo.tolist(), shi.tolist(), strict=True))
    return _Levels(src, dst, seg_start, seg_len, src[seg_start], edge_seg, levels)


def graph_returns(
    g: TraceGraph,
    rewards: np.ndarray,
    *,
    gamma: float = 0.95,
    gamma_s: float = 1.0,
    lam: float | None = None,
    values: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Discounted return ``G`` per event and, with ``lam``, graph GAE advantages ``A``.

    ``rewards`` ``(n,)`` per event; ``values`` ``(n,)`` critic values (0 if None).

    >>> from orchestrace.core.builder import TraceBuilder
    >>> from orchestrace.analysis.graph import TraceGraph
    >>> b = TraceBuilder("c"); a = b.add("message", "x", t=0); c = b.add("message", "x", t=1, after=a)
    >>> d = b.add("message", "x", t=2, after=c); g = TraceGraph.from_trace(b.build())
    >>> G, A = graph_returns(g, np.array([0.0, 0.0, 1.0]), gamma=0.5, lam=1.0)
    >>> G.tolist(), A.tolist()
    ([0.25, 0.5, 1.0], [0.25, 0.5, 1.0])
    """
    for name, x in (("gamma", gamma), ("gamma_s", gamma_s)):
        if not 0.0 <= x <= 1.0:
            raise ConfigError(f"{name} must be in [0, 1], got {x!r}")
    if lam is not None and not 0.0 <= lam <= 1.0:
        raise ConfigError(f"lam (GAE λ) must be in [0, 1], got {lam!r}")
    L = _level_edges(g)
    src, dst = L.src, L.dst
    rewards = np.asarray(rewards, dtype=float)
    disc = gamma * np.power(gamma_s, np.maximum(g.t[dst] - g.t[src], 0.0)) if src.size else np.zeros(0)
    G = rewards.copy()
    nxt = np.full(g.n, -1, dtype=np.int64)  # best successor c*(e)
    dnext = np.zeros(g.n)  # γ·γ_s^{Δt} to c*(e)
    for lo, hi, slo, shi in L.levels:  # sources by descending level: successors are final
        d, f = dst[lo:hi], disc[lo:hi]
        cand = f * G[d]
        mx = np.maximum.reduceat(cand, L.seg_start[slo:shi] - lo)
        us = L.seg_src[slo:shi]
        pos = np.flatnonzero(cand == np.repeat(mx, L.seg_len[slo:shi]))
        seg = L.edge_seg[lo:hi][pos]
        first = pos[np.r_[True, seg[1:] != seg[:-1]]]  # first best edge of each source
        nxt[us] = d[first]
        dnext[us] = f[first]
        G[us] = rewards[us] + mx
    if lam is None:
        return G, None
    V = np.zeros(g.n) if values is None else np.asarray(values, dtype=float)
    has = nxt >= 0
    delta = rewards - V
    delta[has] += dnext[has] * V[nxt[has]]
    A = delta.copy()
    for _, _, slo, shi in L.levels:
        us = L.seg_src[slo:shi]
        A[us] = delta[us] + dnext[us] * lam * A[nxt[us]]
    return G, A


def values_array(g: TraceGraph, values: Mapping[str, float] | np.ndarray | Sequence[float] | None) -> np.ndarray | None:
    """Critic values as an ``(n,)`` array from an array or an ``{event id: value}`` mapping."""
    if values is None:
        return None
    if isinstance(values, Mapping):
        out = np.zeros(g.n)
        for k, v in values.items():
            i = g.index.get(k)
            if i is None:
                raise ConfigError(f"values names event {k!r}, which this trace lacks")
            out[i] = float(v)
        return out
    arr = np.asarray(values, dtype=float)
    if arr.shape != (g.n,):
        raise ConfigError(f"values must have one entry per event ({g.n}), got shape {arr.shape}")
    return arr


def reduce_units(event_value: np.ndarray, ui: UnitIndex, how: str = "max") -> np.ndarray:
    """Per-unit ``max``/``min``/``sum``/``mean`` of per-event values over the unit's events."""
    eu = ui.event_unit
    has = eu >= 0
    k = len(ui)
    if how == "sum":
        return np.bincount(eu[has], weights=event_value[has], minlength=k)
    if how == "mean":
        cnt = np.bincount(eu[has], minlength=k)
        return np.bincount(eu[has], weights=event_value[has], minlength=k) / np.maximum(cnt, 1)
    if how in ("max", "min"):
        out = np.full(k, -np.inf if how == "max" else np.inf)
        (np.maximum if how == "max" else np.minimum).at(out, eu[has], event_value[has])
        out[~np.isfinite(out)] = 0.0
        return out
    raise ConfigError(f"reduce must be auto, max, min, sum or mean, got {how!r}")
