r"""The observation writer: what a policy sees of a :class:`~orchestrace.env.world.World`.

The world (:mod:`orchestrace.env.world`) simulates; this module turns its state into the
observation of :mod:`orchestrace.env.layout`, writing every feature by its name there — the
same names every reader uses. Two writers, one per ``obs_mode``:

* :func:`summary_obs` — the hand-summarised features (:class:`~orchestrace.env.layout.S`):
  ``[0:5]`` one-hot of the due decision; hint, round/R, tokens/token_scale,
  clock/time_scale, n/N, progress cur/n, the share of *settled* subtasks (aggregate leads by
  ≥ 2 votes, or has more verifier accepts than rejects), min margin (top − second votes)/3,
  mean and min aggregate confidence, rejects/n, share with an accept, safety events/3,
  decisions/(12·R), share untrusted; the focus subtask's type one-hot and its features (has
  parents, parents' min margin/3, parents untrusted, attempts/A, top/3, second/3, aggregate
  confidence, accepts/2, rejects/2, attempted this round) — the focus is the current subtask
  during O1–O3 and the *weakest* subtask (lowest margin) during O4–O5; pending fan-out/F,
  pending profile one-hot, the aggregation method one-hot, last-round flag, the share of
  subtasks that can take more attempts; with ``show_price`` log₂(price)/2, the budget left
  and the rounds left.
* :func:`evidence_obs` — the header (:class:`~orchestrace.env.layout.G` globals, pending
  fan-out and profile, method), one row per subtask (:class:`~orchestrace.env.layout.Sub`) and
  one per attempt slot (:class:`~orchestrace.env.layout.Att`), relative to the subtask's
  current aggregate, never the answer's label.

Both are pure functions of the world's state (plus its per-version cache of subtask
statistics); a finished row is all zeros.

>>> import numpy as np
>>> from orchestrace.env.config import EnvConfig
>>> from orchestrace.env.layout import S
>>> from orchestrace.env.world import World
>>> cfg = EnvConfig.small(); w = World(cfg, 2)
>>> w.reset_rows(np.arange(2), np.array([1, 2], dtype=np.uint64))
>>> o = summary_obs(w); o.shape, float(o[0, cfg.layout.summary.index(S.ROUND)])
((2, 46), 0.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import DECISION, DONE, O3, Att, G, ObsLayout, S, Sub

#: a :class:`~orchestrace.env.world.World` (not imported: the world imports this writer)
World = Any

__all__ = ["evidence_obs", "observe", "subtask_stats", "summary_obs"]


def observe(w: World) -> np.ndarray:
    """(B, obs_dim) float32: the observation in the configuration's mode."""
    lay = w.layout
    return summary_obs(w) if lay.mode == "summary" else evidence_obs(w)


def subtask_stats(w: World) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Per-subtask margins (B, N), the subtask-level summary features by name ((B,) each) and
    the weakest subtask (B,). Cached on the world until something changes a subtask."""
    if w._cache is not None and w._cache[0] == w._ver:
        return w._cache[1]
    c, N = w.cfg, w.N
    valid = np.arange(N)[None, :] < w.n[:, None]
    nv = np.maximum(w.n, 1)
    attempted = (w.nsol > 0) & valid
    margin = np.where(attempted, w.top - w.sec, -1)
    settled = (margin >= 2) | ((w.nsol > 0) & (w.aacc > w.arej))
    f = {
        "settled": (settled & valid).sum(1) / nv,
        "min_margin": np.minimum(np.maximum(np.where(valid, margin, 99).min(1), -3), 3) / 3.0,
        "mean_conf": np.where(valid, w.aggc, 0).sum(1) / nv,
        "min_conf": np.where(valid, w.aggc, 1.0).min(1),
        "rejects": np.where(valid, w.arej, 0).sum(1) / nv,
        "accept_share": ((w.aacc > 0) & valid).sum(1) / nv,
        "untrusted": (w.untr & valid).sum(1) / nv,
        "room": ((w.natt < c.max_attempts) & valid).sum(1) / nv,
    }
    weakest = np.where(valid, margin * 10.0 + w.aggc, 1e9).argmin(1)
    res = (margin, f, weakest)
    w._cache = (w._ver, res)
    return res


def _price_feats(w: World) -> tuple[np.ndarray, np.ndarray]:
    c = w.cfg
    logp = np.log2(w.price) / 2.0
    left = np.clip(1.0 - w.tokens / c.token_budget, 0.0, 1.0) if c.token_budget > 0 else np.ones(w.B)
    return logp, left


def _decision(out: np.ndarray, w: World) -> np.ndarray:
    """Write the due decision's one-hot; returns the live rows."""
    ph = w.phase
    live = ph < DONE
    out[np.arange(w.B)[live], DECISION.start + ph[live]] = 1.0
    return live


def summary_obs(w: World, lay: ObsLayout | None = None) -> np.ndarray:
    """(B, D_summary) float32: the hand-summarised observation (``summary`` mode, named by
    :class:`~orchestrace.env.layout.S`). Hand-written rules read it whatever the mode."""
    c, B, N = w.cfg, w.B, w.N
    lay = lay if lay is not None else c.layout.summary
    col = lay.index
    ar = np.arange(B)
    out = np.zeros((B, lay.dim), np.float32)
    live = _decision(out, w)
    ph = w.phase
    nv = np.maximum(w.n, 1)
    margin, f, weakest = subtask_stats(w)
    out[:, col(S.HINT)] = w.hint if c.show_hint else 0.0
    out[:, col(S.ROUND)] = w.rnd / c.max_rounds
    out[:, col(S.TOKENS)] = w.tokens / c.token_scale
    out[:, col(S.CLOCK)] = w.clock / c.time_scale
    out[:, col(S.N_SUBTASKS)] = w.n / N
    out[:, col(S.PROGRESS)] = np.minimum(w.cur, w.n) / nv
    for feat in (S.SETTLED, S.MIN_MARGIN, S.MEAN_CONF, S.MIN_CONF, S.REJECTS, S.ACCEPT_SHARE, S.UNTRUSTED):
        out[:, col(feat)] = f[feat.name.lower()]
    out[:, col(S.SAFETY)] = np.minimum(w.safety, 3) / 3.0
    out[:, col(S.DECISIONS)] = w.ndec / (12.0 * c.max_rounds)
    # focus subtask: current during O1–O3, weakest during O4–O5
    foc = np.where(ph <= O3, np.minimum(w.cur, N - 1), weakest)
    out[ar, col(S.FOCUS_TYPE) + w.typ[ar, foc]] = 1.0
    p = w.par[ar, foc]  # (B, 2)
    hp = p >= 0
    pc = np.maximum(p, 0)
    out[:, col(S.FOCUS_HAS_PARENTS)] = hp.any(1)
    pm = np.where(hp, margin[ar[:, None], pc], 99).min(1)
    out[:, col(S.PARENTS_MIN_MARGIN)] = np.where(hp.any(1), np.minimum(np.maximum(pm, -3), 3) / 3.0, 0.0)
    out[:, col(S.PARENTS_UNTRUSTED)] = (hp & w.untr[ar[:, None], pc]).any(1)
    out[:, col(S.FOCUS_ATTEMPTS)] = w.natt[ar, foc] / c.max_attempts
    out[:, col(S.FOCUS_TOP)] = w.top[ar, foc] / 3.0
    out[:, col(S.FOCUS_SECOND)] = w.sec[ar, foc] / 3.0
    out[:, col(S.FOCUS_CONF)] = w.aggc[ar, foc]
    out[:, col(S.FOCUS_ACCEPTS)] = w.aacc[ar, foc] / 2.0
    out[:, col(S.FOCUS_REJECTS)] = w.arej[ar, foc] / 2.0
    out[:, col(S.FOCUS_THIS_ROUND)] = w.rnd_att[ar, foc] == w.rnd
    out[:, col(S.PENDING_FANOUT)] = w.pf / c.max_fanout
    p3 = ph == O3
    out[ar[p3], col(S.PENDING_PROFILE) + w.pk[p3]] = 1.0
    out[ar, col(S.METHOD) + w.method] = 1.0
    out[:, col(S.LAST_ROUND)] = w.rnd == c.max_rounds - 1
    out[:, col(S.ROOM)] = f["room"]
    if lay.price:
        logp, left = _price_feats(w)
        out[:, col(S.LOG_PRICE)] = logp
        out[:, col(S.BUDGET_LEFT)] = left
        out[:, col(S.ROUNDS_LEFT)] = (c.max_rounds - 1 - w.rnd) / c.max_rounds
    out[~live] = 0.0
    return out


def evidence_obs(w: World) -> np.ndarray:
    """(B, D) float32: the ``evidence`` observation — header, subtask rows, attempt rows."""
    c, B, N, lay = w.cfg, w.B, w.N, w.layout
    A, P = c.max_attempts, w.P
    ar = np.arange(B)
    out = np.zeros((B, lay.dim), np.float32)
    live = _decision(out, w)
    ph = w.phase
    nv = np.maximum(w.n, 1)
    logp, left = _price_feats(w)
    g = lay.global_col
    out[:, g(G.ROUND)] = w.rnd / c.max_rounds
    out[:, g(G.TOKENS)] = w.tokens / c.token_scale
    out[:, g(G.CLOCK)] = w.clock / c.time_scale
    out[:, g(G.N_SUBTASKS)] = w.n / N
    out[:, g(G.PROGRESS)] = np.minimum(w.cur, w.n) / nv
    out[:, g(G.DECISIONS)] = w.ndec / (12.0 * c.max_rounds)
    out[:, g(G.SAFETY)] = np.minimum(w.safety, 3) / 3.0
    out[:, g(G.LAST_ROUND)] = w.rnd == c.max_rounds - 1
    out[:, g(G.LOG_PRICE)] = logp
    out[:, g(G.BUDGET_LEFT)] = left
    out[:, lay.pending] = w.pf / c.max_fanout
    p3 = ph == O3
    out[ar[p3], lay.pending_profiles.start + w.pk[p3]] = 1.0
    out[ar, lay.methods.start + w.method] = 1.0
    # subtask rows (N, Fs)
    valid = np.arange(N)[None, :] < w.n[:, None]
    sub = np.zeros((B, N, lay.subtask_shape[1]), np.float32)
    sub[..., Sub.VALID] = valid
    staffing = ph <= O3  # the subtask being staffed (O1–O3); none at O4/O5
    sub[ar[staffing], np.minimum(w.cur, N - 1)[staffing], Sub.FOCUS] = 1.0
    sub[..., Sub.TYPE:Sub.TYPE + 3] = (w.typ[..., None] == np.arange(3)) & valid[..., None]
    sub[..., Sub.HAS_PARENTS] = (w.par >= 0).any(2) & valid
    sub[..., Sub.UNTRUSTED] = w.untr & valid
    sub[..., Sub.ATTEMPTS] = w.natt / A
    sub[..., Sub.THIS_ROUND] = (w.rnd_att == w.rnd[:, None]) & valid
    out[:, lay.subtask] = sub.reshape(B, -1)
    # attempt rows (N, A, Fa): relative to the current aggregate, never the answer's label
    present = w.att_ans >= 0
    att = np.zeros((B, N, A, lay.attempt_shape[2]), np.float32)
    att[..., Att.PRESENT] = present
    att[..., Att.SOLVER] = present & ~w.att_ver
    att[..., Att.AGREES] = present & (w.att_ans == w.agg[..., None])
    att[..., Att.CONFIDENCE] = np.where(present & ~w.att_ver, w.att_conf, 0.0)
    att[..., Att.VOTE] = np.where(present & w.att_ver, np.where(w.att_acc, 1.0, -1.0), 0.0)
    att[..., Att.THIS_ROUND] = present & (w.att_rnd == w.rnd[:, None, None])
    att[..., Att.PROFILE:] = (w.att_prof[..., None] == np.arange(P)) & present[..., None]
    out[:, lay.attempt] = att.reshape(B, -1)
    out[~live] = 0.0
    return out
