"""The state of ``B`` episodes of the world: its arrays, a fresh episode's random draws, row copies.

:class:`~orchestrace.env.world.World` is these arrays plus the dynamics (masks, steps, attempts,
aggregation). Here: what one episode *is* — every state array, allocated once for ``B`` rows
(``_Episodes.__init__``); how a fresh episode is drawn from its seed (``reset_rows``: the task's
size, difficulty class, subtask difficulties, types, dependencies, misconceptions and token price,
each from its own numbered random field, so episodes are reproducible row by row); and how rows
are copied into a new world (``take``: oracle look-ahead, replay).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from ._rng import normal, uniform
from .config import EnvConfig
from .layout import DONE, O1

# random-field ids (never reuse: changing a field id changes every episode)
_F_N, _F_CLS, _F_DIFF, _F_SUBD, _F_TYPE, _F_P1, _F_P1U, _F_P2, _F_P2U, _F_HINT = range(10)
_F_CORR, _F_ANS, _F_ANS2, _F_CONF, _F_LAT, _F_TOK, _F_UNTR, _F_INJ, _F_LEAK, _F_FOLLOW, _F_CATCH, _F_FOOL = range(20, 32)
_F_VOTE, _F_MERGE = 40, 41
_F_MIS, _F_PRICE = 50, 51

# the per-row state arrays (``take`` copies these; the rest is configuration, shared)
_STATE = ["seed", "n", "typ", "par", "d", "dtask", "hint", "phase", "cur", "rnd", "ndec", "rdec", "pf", "pk", "clock", "tokens", "safety", "method", "natt", "nsol", "cnt", "csum", "cmax", "acc", "rej", "fin", "chain", "rnd_att", "untr", "inj", "agg", "top", "sec", "aggc", "aacc", "arej", "crit", "success", "ret", "commlog", "price",
          "mis", "att_ans", "att_conf", "att_prof", "att_ver", "att_acc", "att_rnd"]

_E = TypeVar("_E", bound="_Episodes")


class _Episodes:
    """``B`` episodes' state arrays (see the module docstring); :class:`~orchestrace.env.world.World` steps them."""

    # state arrays created in loops in ``__init__`` (declared here for type checkers)
    cur: np.ndarray
    rnd: np.ndarray
    ndec: np.ndarray
    rdec: np.ndarray
    pf: np.ndarray
    pk: np.ndarray
    safety: np.ndarray
    method: np.ndarray
    clock: np.ndarray
    tokens: np.ndarray
    crit: np.ndarray
    ret: np.ndarray
    cnt: np.ndarray
    acc: np.ndarray
    rej: np.ndarray
    top: np.ndarray
    sec: np.ndarray
    aacc: np.ndarray
    arej: np.ndarray
    #: the record of the current step (only while ``log`` is not None)
    _rec: dict[str, Any]

    def __init__(self, config: EnvConfig, batch_size: int) -> None:
        self.cfg = c = config
        self.B = B = int(batch_size)
        N, W1 = c.n_subtasks_max, c.n_wrong + 1
        self.N, self.W1 = N, W1
        P = c.n_profiles
        self.heads = c.layout.heads
        self.offsets = np.array(self.heads.starts)  # (5,) first flat action of each head
        self.A = c.n_actions
        prof = c.profiles
        self.SK = np.array([p.skill for p in prof], dtype=np.float64)  # (P, 3)
        self.TIN = np.array([p.tokens_in for p in prof])
        self.TOUT = np.array([p.tokens_out for p in prof])
        self.LAT = np.array([p.latency_s for p in prof])
        self.CTX = np.array([p.context_limit for p in prof])
        self.CB = np.array([p.conf_bias for p in prof])
        self.CK = np.array([p.conf_kappa for p in prof])
        self.CATCH = np.array([p.catch for p in prof])
        self.FOLLOW = np.array([p.follow_injection for p in prof])
        self.VER = np.array([p.verifier for p in prof])
        self.CBON = np.array(c.comm_bonus, dtype=np.float64)
        self.CTOK = np.array(c.comm_tokens, dtype=np.float64)
        self.P = P
        self.seed = np.zeros(B, np.uint64)
        self.n = np.ones(B, np.int64)
        self.typ = np.zeros((B, N), np.int64)
        self.par = np.full((B, N, 2), -1, np.int64)
        self.d = np.zeros((B, N))
        self.dtask = np.zeros(B)
        self.hint = np.zeros(B)
        self.phase = np.full(B, DONE, np.int64)
        for name in ("cur", "rnd", "ndec", "rdec", "pf", "pk", "safety", "method"):
            setattr(self, name, np.zeros(B, np.int64))
        for name in ("clock", "tokens", "crit", "ret"):
            setattr(self, name, np.zeros(B))
        self.success = np.zeros(B, bool)
        self.natt = np.zeros((B, N), np.int64)
        self.nsol = np.zeros((B, N), np.int64)
        for name in ("cnt", "acc", "rej"):
            setattr(self, name, np.zeros((B, N, W1), np.int64))
        self.csum = np.zeros((B, N, W1))
        self.cmax = np.zeros((B, N, W1))
        self.fin = np.zeros((B, N))
        self.chain = np.zeros((B, N), np.int64)
        self.rnd_att = np.full((B, N), -1, np.int64)
        self.untr = np.zeros((B, N), bool)
        self.inj = np.zeros((B, N), bool)
        self.agg = np.full((B, N), -1, np.int64)
        for name in ("top", "sec", "aacc", "arej"):
            setattr(self, name, np.zeros((B, N), np.int64))
        self.aggc = np.zeros((B, N))
        self.commlog = np.zeros((B, N, c.max_attempts), np.int8)  # O3 mode each solver attempt received
        # v1: token price multiplier per episode, shared misconception per subtask, per-attempt evidence
        self.price = np.ones(B)
        self.mis = np.zeros((B, N), bool)
        A = c.max_attempts
        self.att_ans = np.full((B, N, A), -1, np.int64)  # answer (solver) or the voted-on answer (verifier)
        self.att_conf = np.zeros((B, N, A))
        self.att_prof = np.zeros((B, N, A), np.int64)
        self.att_ver = np.zeros((B, N, A), bool)
        self.att_acc = np.zeros((B, N, A), bool)
        self.att_rnd = np.zeros((B, N, A), np.int64)
        self.layout = c.layout.obs
        #: when not None (B = 1 only): a list that receives one record per step (trace building)
        self.log: list[dict[str, Any]] | None = None
        #: an optional per-attempt override (LLM workers); see :mod:`orchestrace.env.workers`
        self.backend: Any = None
        #: optional (B, N, max_attempts) bool arrays for counterfactual replay: attempts whose
        #: agent is removed (no work, no cost, no result) and attempts whose O3 message is dropped
        self.drop: np.ndarray | None = None
        self.nocomm: np.ndarray | None = None
        self._ver = 0
        self._cache: Any = None

    # -- state copies (oracle look-ahead, replay) ---------------------------------------
    def take(self: _E, idx: np.ndarray) -> _E:
        """A new world made of rows ``idx`` (copies; rows may repeat)."""
        w = object.__new__(type(self))
        w.__dict__.update({k: v for k, v in self.__dict__.items() if k not in _STATE})
        for k in _STATE:
            setattr(w, k, getattr(self, k)[idx].copy())
        w.B = len(idx)
        w.log = None
        w._cache = None
        w.drop = None if self.drop is None else self.drop[idx].copy()
        w.nocomm = None if self.nocomm is None else self.nocomm[idx].copy()
        return w

    # -- reset ---------------------------------------------------------------------------
    def reset_rows(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        """Start fresh episodes with ``seeds`` in ``rows`` (vectorised, no per-row loop)."""
        c, N = self.cfg, self.N
        rows = np.asarray(rows, np.int64)
        self._ver += 1
        s = np.asarray(seeds, dtype=np.uint64)
        self.seed[rows] = s
        span = c.n_subtasks_max - c.n_subtasks_min + 1
        n = c.n_subtasks_min + np.minimum((uniform(s, 0, 0, _F_N) * span).astype(np.int64), span - 1)
        self.n[rows] = n
        u_cls = uniform(s, 0, 0, _F_CLS)
        u_d = uniform(s, 0, 0, _F_DIFF)
        dt = np.where(u_cls < c.p_easy, 0.3 * u_d, np.where(u_cls >= 1.0 - c.p_hard, 0.7 + 0.3 * u_d, 0.3 + 0.4 * u_d))
        self.dtask[rows] = dt
        self.hint[rows] = np.clip(dt + c.hint_noise * normal(s, 0, 0, _F_HINT), 0.0, 1.0)
        ii = np.arange(N)[None, :]
        sc = s[:, None]
        self.d[rows] = np.clip(dt[:, None] + c.subtask_jitter * normal(sc, ii, 0, _F_SUBD), 0.0, 1.0)
        self.typ[rows] = np.minimum((uniform(sc, ii, 0, _F_TYPE) * 3).astype(np.int64), 2)
        p1 = np.floor(uniform(sc, ii, 0, _F_P1) * ii).astype(np.int64)
        p1 = np.where((ii >= 1) & (uniform(sc, ii, 0, _F_P1U) < c.p_dep), p1, -1)
        p2 = np.floor(uniform(sc, ii, 0, _F_P2) * ii).astype(np.int64)
        p2 = np.where((ii >= 2) & (uniform(sc, ii, 0, _F_P2U) < c.p_dep2) & (p2 != p1), p2, -1)
        valid = ii < n[:, None]
        if c.p_misconception > 0.0:
            self.mis[rows] = valid & (uniform(sc, ii, 0, _F_MIS) < c.p_misconception * self.d[rows])
        else:
            self.mis[rows] = False
        if c.price_max > c.price_min:
            lo, hi = np.log(c.price_min), np.log(c.price_max)
            self.price[rows] = np.exp(lo + (hi - lo) * uniform(s, 0, 0, _F_PRICE))
        else:
            self.price[rows] = c.price_min
        self.par[rows, :, 0] = np.where(valid, p1, -1)
        self.par[rows, :, 1] = np.where(valid, p2, -1)
        self.phase[rows] = O1
        for name in ("cur", "rnd", "ndec", "rdec", "pf", "pk", "safety", "method"):
            getattr(self, name)[rows] = 0
        for name in ("clock", "tokens", "crit", "ret"):
            getattr(self, name)[rows] = 0.0
        self.success[rows] = False
        for name in ("natt", "nsol", "cnt", "acc", "rej", "csum", "cmax", "fin", "chain", "top", "sec",
                     "aacc", "arej", "aggc", "commlog"):
            getattr(self, name)[rows] = 0
        self.untr[rows] = False
        self.inj[rows] = False
        self.agg[rows] = -1
        self.rnd_att[rows] = -1
        self.att_ans[rows] = -1
        for name in ("att_conf", "att_prof", "att_ver", "att_acc", "att_rnd"):
            getattr(self, name)[rows] = 0
