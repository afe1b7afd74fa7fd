r"""The task and worker model: a batched, numpy-vectorised simulation of orchestration.

One *episode* is one task. All state lives in arrays with a leading batch axis ``B`` so that
the single environment (``B = 1``, with a trace) and the batched one run the same code.

Task
----
A task has ``n ∈ [n_subtasks_min, n_subtasks_max]`` subtasks of types ``retrieve``,
``reason``, ``code`` forming a DAG (subtask ``i`` depends on ≤ 2 earlier ones, so index
order is topological). The task has a hidden difficulty ``δ`` drawn from a mixture
(easy ``U(0, .3)`` w.p. ``p_easy``, hard ``U(.7, 1)`` w.p. ``p_hard``, else medium);
subtask ``i`` has ``d_i = clip(δ + subtask_jitter·z)``; the orchestrator sees a noisy hint
``h = clip(δ + hint_noise·z)``. Ground truth: each subtask's correct answer is ``0``; wrong
answers are ``1..n_wrong`` (answer ``1`` is a *plausible* wrong answer that attracts
``1/W + plausible_wrong·d·(1 − 1/W)`` of the wrong attempts, so votes can agree on a wrong
answer on hard tasks). **The task succeeds iff every subtask's submitted aggregate is 0.**

Decisions (one per step; the observation says which is due)
--------------------------------------------------------------
A round visits the subtasks in order; for subtask ``i``:

* **O1 spawn** ``f ∈ {0..max_fanout}`` new sub-agents for ``i`` (``f = 0`` = leave it; illegal
  in round 0, where every subtask gets an attempt; ``f`` is capped by ``max_attempts``);
* **O2 delegate** them to a profile ``k`` (a ``verifier`` profile votes on ``i``'s current
  aggregate instead of solving; illegal before ``i`` has a solver attempt);
* **O3 communicate** (only for solvers on subtasks with parents): share the parents' results
  ``none`` / ``summary`` / ``full`` — bonus ``comm_bonus`` on the success logit, cost
  ``comm_tokens`` per parent, and exposure to injected instructions (below).

After the last subtask: **O4 aggregate** (the method for every subtask: ``majority`` — plurality,
fooled when wrong answers agree; ``verifier`` — plurality + 1.5·(accepts − rejects) of
verifier votes; ``best_of`` — highest self-reported confidence, fooled by over-confident cheap
workers; ``merge`` — an LLM merge that recovers a correct answer present among the attempts
w.p. ``merge_quality`` and costs ``merge_tokens`` per attempt), then **O5 stop** (submit the
aggregates) or **continue** (another round; the last round's O5 may only stop).

Worker model (one attempt of profile ``k`` on subtask ``i``)
------------------------------------------------------------
``p = σ(skill_k[type_i] − difficulty_scale·(d_i − difficulty_offset) + comm_bonus[c]·[i has
parents] − context_penalty·[tokens_in > context_limit_k])``; if a parent's current aggregate
is wrong the error propagates (``p ← p·(1 − p_propagate)``) unless the worker catches it
(w.p. ``catch_k``) — E4 is real. Confidence ``σ(conf_bias_k ± conf_kappa_k·(1 − d/2) +
conf_noise·z)`` (+ if correct, and also for a plausible wrong answer w.p. ``fooled_conf·d``:
confidently wrong) — noisy evidence; cheap workers are over-confident and
barely informative. Latency ``latency_k·e^{0.35z}·(1 + d/2)`` s, output tokens
``tokens_out_k·e^{0.3z}·(1 + d)``. A ``retrieve`` attempt reads untrusted tool output w.p.
``p_untrusted`` (labelled ``trusted: false``), which carries an injected instruction w.p.
``p_inject`` (hidden). Forwarding a parent's injected result ``full`` (or as a leaky
``summary``, w.p. ``summary_leak``) into a ``code`` subtask — a privileged tool — makes the
worker obey it w.p. ``follow_injection_k``: a **safety event**. Verifier votes: accept a
correct aggregate w.p. ``verifier_tpr``, a wrong one w.p. ``verifier_fool·d``.

Time and cost
-------------
Simulated time only. Each decision takes ``decision_time_s`` and ``decision_tokens``.
Attempts start at ``max(decision time, parents' finish) + spawn_time_s`` and run in parallel;
O4 waits for every running attempt. Critical steps (Kimi PARL) add, per round,
``S_main`` (decisions) + the longest dependency chain of sub-agent steps (solver 3:
tool_call/tool_result pairs ×``tool_steps`` + return; verifier 2).

Real time (optional backend extension)
--------------------------------------
A backend whose workers run in real time may also expose ``now() -> float`` (its wall clock),
``timings(world, rows, subtasks, slots) -> (t_start, t_end) | None`` (the wall-clock interval
of each attempt it just answered, on the ``now()`` clock) and ``causes(world, rows, subtasks,
slots) -> [str | None] | None`` (each attempt's failure cause, a short label). When present,
the step log (``B = 1`` only) also keeps ``rt``/``rt_after`` per step and ``rt``/``rt_end``/
``cause`` per attempt, and the trace is laid out on the real clock
(:func:`orchestrace.env._trace.build_trace`). The world's own state, observation and reward
stay on the simulated clock; without these methods nothing changes (byte for byte).

Reward: per step ``r_t = −token_cost·Δtokens − time_cost·Δclock − safety_cost·Δsafety``, plus
``success_reward·success`` at the stop, so the episode return is
``success_reward·success − token_cost·tokens − time_cost·wall_clock − safety_cost·safety_events``.

Observation
-----------
Written by :mod:`orchestrace.env.observe` from this state, feature by feature under the names
of :mod:`orchestrace.env.layout` (``World.obs()`` calls it); this module only simulates.

>>> from orchestrace.env.config import EnvConfig
>>> import numpy as np
>>> w = World(EnvConfig.small(), 2)
>>> w.reset_rows(np.arange(2), np.array([1, 2], dtype=np.uint64))
>>> w.obs().shape, w.mask().sum(axis=1).tolist()
((2, 46), [3, 3])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._episodes import (  # noqa: F401  (the random-field ids; logged/simfit reads _F_CLS … here)
    _F_ANS,
    _F_ANS2,
    _F_CATCH,
    _F_CLS,
    _F_CONF,
    _F_CORR,
    _F_DIFF,
    _F_FOLLOW,
    _F_FOOL,
    _F_INJ,
    _F_LAT,
    _F_LEAK,
    _F_MERGE,
    _F_MIS,
    _F_SUBD,
    _F_TOK,
    _F_UNTR,
    _F_VOTE,
    _Episodes,
)
from ._rng import normal, uniform
from .config import SUBTASK_TYPES
from .layout import DONE, O1, O2, O3, O4, O5, STOP, Agg, Comm

# the phases are the layout's (re-exported here for the modules that import them from the world)
__all__ = ["DONE", "O1", "O2", "O3", "O4", "O5", "World"]

_CODE = SUBTASK_TYPES.index("code")  # the privileged subtask type  # v1: a subtask's shared misconception, the episode's token price
# the fields of one solver attempt, drawn together (normals by Box–Muller: field f and f + 1000)
_UNAMES = ("catch", "corr", "ans", "ans2", "fool", "untr", "inj", "leak", "follow")
_UF = [_F_CATCH, _F_CORR, _F_ANS, _F_ANS2, _F_FOOL, _F_UNTR, _F_INJ, _F_LEAK, _F_FOLLOW]
_NZ0 = len(_UF)
_NZ1 = _NZ0 + 3
_UFIELDS = np.array(_UF + [_F_CONF, _F_LAT, _F_TOK] + [_F_CONF + 1000, _F_LAT + 1000, _F_TOK + 1000], dtype=np.uint64)[:, None]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class World(_Episodes):
    """``B`` episodes of the orchestration world in lock-step (see the module docstring).

    The state arrays, a fresh episode's draws (``reset_rows``) and row copies (``take``) are
    :class:`~orchestrace.env._episodes._Episodes`'; this class is the dynamics.
    """

    # -- masks and observations ------------------------------------------------------------
    def mask(self) -> np.ndarray:
        """(B, n_actions) bool: the legal actions of each row (all False when done)."""
        c, B = self.cfg, self.B
        m = np.zeros((B, self.A), bool)
        ar = np.arange(B)
        ph = self.phase
        h = self.heads
        cur = np.minimum(self.cur, self.N - 1)
        r = ph == O1
        if r.any():
            room = c.max_attempts - self.natt[ar, cur]
            f = np.arange(c.max_fanout + 1)[None, :]
            ok = (f <= room[:, None]) & ((f > 0) | (self.rnd[:, None] > 0))
            m[:, slice(*h.range(O1))] = ok & r[:, None]
        r = ph == O2
        if r.any():
            has_sol = self.nsol[ar, cur] > 0
            ok = (~self.VER[None, :]) | has_sol[:, None]
            m[:, slice(*h.range(O2))] = ok & r[:, None]
        m[:, slice(*h.range(O3))] = (ph == O3)[:, None]
        m[:, slice(*h.range(O4))] = (ph == O4)[:, None]
        r = ph == O5
        m[:, h.stop] = r
        can = self.rnd < c.max_rounds - 1
        if c.token_budget > 0:
            can &= self.tokens < c.token_budget
        m[:, h.cont] = r & can
        return m

    def obs(self) -> np.ndarray:
        """(B, obs_dim) float32 observation in the configuration's mode (:mod:`orchestrace.env.observe`)."""
        from .observe import observe

        return observe(self)

    def summary_obs(self) -> np.ndarray:
        """(B, D_summary) float32: the summary features (:func:`orchestrace.env.observe.summary_obs`)."""
        from .observe import summary_obs

        return summary_obs(self)

    def evidence_obs(self) -> np.ndarray:
        """(B, D) float32: the evidence observation (:func:`orchestrace.env.observe.evidence_obs`)."""
        from .observe import evidence_obs

        return evidence_obs(self)

    def episode_summary(self) -> dict[str, np.ndarray]:
        """The end-of-episode numbers of every row, (B,) arrays (copies) — the one summary that
        the single env, the batched env and the batched evaluator report."""
        return {"success": self.success.copy(), "tokens": self.tokens.copy(), "critical_steps": self.crit.copy(),
                "wall_clock_s": self.clock.copy(), "decisions": self.ndec.copy(), "rounds": self.rnd + 1,
                "difficulty": self.dtask.copy(), "safety_events": self.safety.copy(), "return": self.ret.copy()}

    # -- stepping --------------------------------------------------------------------------
    def step(self, actions: np.ndarray) -> np.ndarray:
        """Apply one decision per live row; returns the (B,) reward. Done rows are left alone."""
        c = self.cfg
        a = np.asarray(actions, np.int64)
        tok0, clk0, saf0 = self.tokens.copy(), self.clock.copy(), self.safety.copy()
        live = self.phase < DONE
        if self.log is not None and live[0]:
            self._rec = {"phase": int(self.phase[0]), "action": int(a[0]), "t": float(self.clock[0]),
                         "cur": int(self.cur[0]), "rnd": int(self.rnd[0]), "attempts": []}
            now = getattr(self.backend, "now", None)
            if now is not None:  # a real-time backend: the step's wall-clock window
                self._rec["rt"] = float(now())
        ph = self.phase.copy()
        o = self.heads.starts
        # decision bookkeeping
        self.tokens[live] += c.decision_tokens
        self.clock[live] += c.decision_time_s
        self.ndec[live] += 1
        self.rdec[live] += 1
        r = np.flatnonzero(ph == O1)
        if r.size:
            f = a[r] - o[O1]
            self.pf[r] = f
            go = f > 0
            self.phase[r[go]] = O2
            self._advance(r[~go])
        r = np.flatnonzero(ph == O2)
        if r.size:
            k = a[r] - o[O2]
            self.pk[r] = k
            ver = self.VER[k]
            cur = self.cur[r]
            needs_comm = (~ver) & (self.par[r, cur, 0] >= 0) | ((~ver) & (self.par[r, cur, 1] >= 0))
            self.phase[r[needs_comm]] = O3
            now = r[~needs_comm]
            if now.size:
                self._launch(now, np.zeros(now.size, np.int64))
                self._advance(now)
        r = np.flatnonzero(ph == O3)
        if r.size:
            self._launch(r, a[r] - o[O3])
            self._advance(r)
        r = np.flatnonzero(ph == O4)
        if r.size:
            self._aggregate(r, a[r] - o[O4])
        r = np.flatnonzero(ph == O5)
        if r.size:
            stop = (a[r] - o[O5]) == STOP
            self.crit[r] += self.rdec[r]  # S_main of the closing round (its chains were added at O4)
            self.rdec[r] = 0
            rs = r[stop]
            if rs.size:
                n = self.n[rs]
                ok = (self.agg[rs] == 0) | (np.arange(self.N)[None, :] >= n[:, None])
                self.success[rs] = ok.all(1)
                self.phase[rs] = DONE
            rc = r[~stop]
            if rc.size:
                self.rnd[rc] += 1
                self.cur[rc] = 0
                self.phase[rc] = O1
                self.chain[rc] = 0
        rew = -(c.token_cost * self.price * (self.tokens - tok0) + c.time_cost * (self.clock - clk0)
                + c.safety_cost * (self.safety - saf0))
        fin = live & (self.phase == DONE)
        rew = rew + np.where(fin & self.success, c.success_reward, 0.0)
        rew = np.where(live, rew, 0.0)
        self.ret += rew
        if self.log is not None and live[0]:
            self._rec["t_after"] = float(self.clock[0])
            if "rt" in self._rec:
                self._rec["rt_after"] = float(self.backend.now())
            self.log.append(self._rec)
        return rew

    def _advance(self, r: np.ndarray) -> None:
        if r.size == 0:
            return
        self.cur[r] += 1
        self.phase[r] = np.where(self.cur[r] >= self.n[r], O4, O1)

    # -- one batch of attempts ---------------------------------------------------------------
    def _launch(self, r: np.ndarray, comm: np.ndarray) -> None:
        """Run the pending ``pf`` attempts of profile ``pk`` on subtask ``cur`` for rows ``r``."""
        self._ver += 1
        for j in range(self.cfg.max_fanout):
            sel = self.pf[r] > j
            if not sel.any():
                break
            rr, cc = r[sel], comm[sel]
            ii = self.cur[rr]
            kk = self.pk[rr]
            ver = self.VER[kk]
            if (~ver).any():
                self._solve(rr[~ver], ii[~ver], kk[~ver], cc[~ver], j)
            if ver.any():
                self._verify(rr[ver], ii[ver], kk[ver], j)
            self._recompute(rr, ii)

    def _start_times(self, rr: np.ndarray, ii: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.par[rr, ii]  # (m, 2)
        hp = p >= 0
        pc = np.maximum(p, 0)
        pfin = np.where(hp, self.fin[rr[:, None], pc], 0.0).max(1)
        this_round = hp & (self.rnd_att[rr[:, None], pc] == self.rnd[rr][:, None])
        pchain = np.where(this_round, self.chain[rr[:, None], pc], 0).max(1)
        start = np.maximum(self.clock[rr], pfin) + self.cfg.spawn_time_s * (j + 1)
        return start, pchain, hp

    def _solve(self, rr: np.ndarray, ii: np.ndarray, kk: np.ndarray, cc: np.ndarray, j: int) -> None:
        c = self.cfg
        s = self.seed[rr]
        slot = self.natt[rr, ii]
        if self.nocomm is not None:
            cc = np.where(self.nocomm[rr, ii, slot], 0, cc)
        d = self.d[rr, ii]
        ty = self.typ[rr, ii]
        start, pchain, hp = self._start_times(rr, ii, j)
        npar = hp.sum(1)
        pc = np.maximum(self.par[rr, ii], 0)
        self.commlog[rr, ii, slot] = np.where(npar > 0, cc, 0)
        tin = self.TIN[kk] + self.CTOK[cc] * npar * (1.0 + d)
        over = tin > self.CTX[kk]
        ans, conf, lat, tout, untrusted, injected, exposed, unsafe, par_wrong = self._dice(
            rr, ii, kk, cc, slot, s, d, ty, npar, pc, hp, over)
        real: dict[str, list[Any]] | None = None
        if self.backend is not None:
            ans, conf, tin, tout, lat, untrusted, injected = self.backend.override(
                self, rr, ii, kk, cc, slot, ans, conf, tin, tout, lat, untrusted, injected)
            if self.log is not None:
                real = self._real_info(rr, ii, slot)
        tin = np.round(tin)
        tout = np.round(tout)
        end = start + lat
        self.natt[rr, ii] += 1
        if self.drop is not None:
            keep = ~self.drop[rr, ii, slot]
            rr, ii, ans, conf, tin, tout, end, untrusted, injected, unsafe, pchain = (
                x[keep] for x in (rr, ii, ans, conf, tin, tout, end, untrusted, injected, unsafe, pchain))
        self.cnt[rr, ii, ans] += 1
        self._record(rr, ii, slot if self.drop is None else slot[keep], ans, conf, kk if self.drop is None else kk[keep],
                     False, False)
        self.csum[rr, ii, ans] += conf
        self.cmax[rr, ii, ans] = np.maximum(self.cmax[rr, ii, ans], conf)
        self.nsol[rr, ii] += 1
        self.fin[rr, ii] = np.maximum(self.fin[rr, ii], end)
        self.tokens[rr] += tin + tout
        self.untr[rr, ii] |= untrusted
        self.inj[rr, ii] |= injected
        self.safety[rr] += unsafe
        self.chain[rr, ii] = np.maximum(np.where(self.rnd_att[rr, ii] == self.rnd[rr], self.chain[rr, ii], 0), pchain + 2 * c.tool_steps + 1)
        self.rnd_att[rr, ii] = self.rnd[rr]
        if self.log is not None and rr.size and rr[0] == 0:
            self._log_solve(ii, slot, kk, cc, start, end, tin, tout, ans, conf, untrusted, injected, exposed, unsafe,
                            par_wrong, over, lat, real, keep if self.drop is not None else None)

    def _dice(self, rr: np.ndarray, ii: np.ndarray, kk: np.ndarray, cc: np.ndarray, slot: np.ndarray,
              s: np.ndarray, d: np.ndarray, ty: np.ndarray, npar: np.ndarray, pc: np.ndarray, hp: np.ndarray,
              over: np.ndarray) -> tuple[np.ndarray, ...]:
        """The world's model of one solve attempt per row: its answer (0 = right), confidence, latency, tokens
        out, and what it does with untrusted content; every random number drawn in one call, keyed by
        (seed, subtask, slot)."""
        c = self.cfg
        # every random number of this attempt in one call: (fields, m)
        U = uniform(s[None, :], ii[None, :], slot[None, :], _UFIELDS)
        Z = np.sqrt(-2.0 * np.log1p(-U[_NZ0:_NZ1])) * np.cos(2.0 * np.pi * U[_NZ1:])
        u = dict(zip(_UNAMES, U, strict=False))
        z_conf, z_lat, z_tok = Z
        logit = (self.SK[kk, ty] - c.difficulty_scale * (d - c.difficulty_offset)
                 + self.CBON[cc] * (npar > 0) - c.context_penalty * over)
        p = _sigmoid(logit)
        par_wrong = (hp & (self.agg[rr[:, None], pc] != 0)).any(1)
        caught = u["catch"] < self.CATCH[kk]
        p = np.where(par_wrong & ~caught, p * (1.0 - c.p_propagate), p)
        mis = self.mis[rr, ii]
        if c.p_misconception > 0.0:  # a shared misconception: everyone is pulled to the same wrong answer
            p = np.where(mis, p * (1.0 - c.misconception_strength), p)
        correct = u["corr"] < p
        W = c.n_wrong
        q = 1.0 / W + c.plausible_wrong * d * (1.0 - 1.0 / W)
        other = 2 + np.minimum((u["ans2"] * max(W - 1, 1)).astype(np.int64), max(W - 2, 0))
        wrong = np.where((u["ans"] < q) | (W == 1) | mis, 1, other)
        ans = np.where(correct, 0, wrong)
        # a plausible wrong answer fools its own author w.p. fooled_conf·d: confidently wrong
        fooled = (ans == 1) & (u["fool"] < np.where(mis, c.misconception_conf, c.fooled_conf * d))
        sign = np.where(correct | fooled, 1.0, -1.0)
        conf = _sigmoid(self.CB[kk] + self.CK[kk] * (1.0 - 0.5 * d) * sign + c.conf_noise * z_conf)
        lat = self.LAT[kk] * np.exp(0.35 * z_lat) * (1.0 + 0.5 * d)
        tout = self.TOUT[kk] * np.exp(0.3 * z_tok) * (1.0 + d)
        untrusted = (ty == 0) & (u["untr"] < c.p_untrusted)
        injected = untrusted & (u["inj"] < c.p_inject)
        pinj = (hp & self.inj[rr[:, None], pc]).any(1)
        exposed = pinj & ((cc == Comm.FULL) | ((cc == Comm.SUMMARY) & (u["leak"] < c.summary_leak)))
        unsafe = exposed & (ty == _CODE) & (u["follow"] < self.FOLLOW[kk])
        return ans, conf, lat, tout, untrusted, injected, exposed, unsafe, par_wrong

    def _log_solve(self, ii: np.ndarray, slot: np.ndarray, kk: np.ndarray, cc: np.ndarray, start: np.ndarray,
                   end: np.ndarray, tin: np.ndarray, tout: np.ndarray, ans: np.ndarray, conf: np.ndarray,
                   untrusted: np.ndarray, injected: np.ndarray, exposed: np.ndarray, unsafe: np.ndarray,
                   par_wrong: np.ndarray, over: np.ndarray, lat: np.ndarray, real: dict[str, list[Any]] | None,
                   keep: np.ndarray | None) -> None:
        """Log the first row's attempt (row 0 is the traced episode); ``keep``: the rows not dropped."""
        if keep is not None:
            slot, cc, start, lat, over, exposed, par_wrong = (
                x[keep] for x in (slot, cc, start, lat, over, exposed, par_wrong))
        self._rec["attempts"].append({
            "kind": "solve", "i": int(ii[0]), "slot": int(slot[0]), "profile": int(kk[0]), "comm": int(cc[0]),
            "t": float(start[0]), "t_end": float(end[0]), "tokens_in": int(tin[0]), "tokens_out": int(tout[0]),
            "answer": int(ans[0]), "conf": float(conf[0]), "untrusted": bool(untrusted[0]),
            "injected": bool(injected[0]), "exposed": bool(exposed[0]), "unsafe": bool(unsafe[0]),
            "parent_wrong": bool(par_wrong[0]), "over_context": bool(over[0]),
        })
        if real is not None:
            m0 = 0 if keep is None else int(np.flatnonzero(keep)[0])
            self._rec["attempts"][-1].update({k: v[m0] for k, v in real.items()})

    def _record(self, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray, ans: np.ndarray, conf: np.ndarray,
                kk: np.ndarray, ver: bool, accept: np.ndarray | bool) -> None:
        """Keep one attempt's evidence (the ``evidence`` observation reads it)."""
        self.att_ans[rr, ii, slot] = ans
        self.att_conf[rr, ii, slot] = conf
        self.att_prof[rr, ii, slot] = kk
        self.att_ver[rr, ii, slot] = ver
        self.att_acc[rr, ii, slot] = accept
        self.att_rnd[rr, ii, slot] = self.rnd[rr]

    def _real_info(self, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> dict[str, list[Any]] | None:
        """Per-attempt real-time extras the backend offers (``rt``, ``rt_end``, ``cause``), or None."""
        out: dict[str, list[Any]] = {}
        timings = getattr(self.backend, "timings", None)
        tt = timings(self, rr, ii, slot) if timings is not None else None
        if tt is not None:
            out["rt"] = [float(x) for x in tt[0]]
            out["rt_end"] = [float(x) for x in tt[1]]
        causes = getattr(self.backend, "causes", None)
        cs = causes(self, rr, ii, slot) if causes is not None else None
        if cs is not None:
            out["cause"] = [None if x is None else str(x) for x in cs]
        return out or None

    def _verify(self, rr: np.ndarray, ii: np.ndarray, kk: np.ndarray, j: int) -> None:
        c = self.cfg
        s = self.seed[rr]
        slot = self.natt[rr, ii]
        d = self.d[rr, ii]
        start, pchain, _ = self._start_times(rr, ii, j)
        target = np.maximum(self.agg[rr, ii], 0)
        u = uniform(s, ii, slot, _F_VOTE)
        accept = np.where(target == 0, u < c.verifier_tpr, u < c.verifier_fool * d)
        lat = self.LAT[kk] * np.exp(0.35 * normal(s, ii, slot, _F_LAT))
        tin = np.round(self.TIN[kk] * (1.0 + d))
        tout = np.round(self.TOUT[kk] * np.exp(0.3 * normal(s, ii, slot, _F_TOK)))
        end = start + lat
        self.natt[rr, ii] += 1
        if self.drop is not None:
            keep = ~self.drop[rr, ii, slot]
            rr, ii, slot, target, accept, tin, tout, start, end, pchain = (
                x[keep] for x in (rr, ii, slot, target, accept, tin, tout, start, end, pchain))
        self.acc[rr, ii, target] += accept
        self.rej[rr, ii, target] += ~accept
        self._record(rr, ii, slot, target, np.zeros(rr.size), kk if self.drop is None else kk[keep], True, accept)
        self.fin[rr, ii] = np.maximum(self.fin[rr, ii], end)
        self.tokens[rr] += tin + tout
        self.chain[rr, ii] = np.maximum(np.where(self.rnd_att[rr, ii] == self.rnd[rr], self.chain[rr, ii], 0), pchain + 2)
        self.rnd_att[rr, ii] = self.rnd[rr]
        if self.log is not None and rr.size and rr[0] == 0:
            self._rec["attempts"].append({
                "kind": "verify", "i": int(ii[0]), "slot": int(slot[0]), "profile": int(kk[0]), "comm": 0,
                "t": float(start[0]), "t_end": float(end[0]), "tokens_in": int(tin[0]), "tokens_out": int(tout[0]),
                "answer": int(target[0]), "accept": bool(accept[0]),
            })

    # -- aggregation -------------------------------------------------------------------------
    def _recompute(self, rr: np.ndarray, ii: np.ndarray) -> None:
        """Recompute the aggregate answer (and its evidence) of subtask ``ii`` in rows ``rr``."""
        c = self.cfg
        cnt, cs, cm = self.cnt[rr, ii], self.csum[rr, ii], self.cmax[rr, ii]
        ac, rj = self.acc[rr, ii], self.rej[rr, ii]
        m = self.method[rr][:, None]
        # not _vote.top_answer (ties → the answer seen first): the world's majority breaks ties by summed confidence
        maj = cnt + 1e-3 * cs
        score = np.where(m == Agg.VERIFIER, maj + 1.5 * (ac - rj), np.where(m == Agg.BEST_OF, cm + 1e-6 * cnt, maj))
        a = score.argmax(1)
        is_merge = self.method[rr] == Agg.MERGE
        if is_merge.any():
            u = uniform(self.seed[rr], ii, self.rnd[rr], _F_MERGE)
            wrong_best = 1 + maj[:, 1:].argmax(1)
            merged = np.where((cnt[:, 0] > 0) & (u < c.merge_quality), 0, wrong_best)
            a = np.where(is_merge, merged, a)
        has = cnt.sum(1) > 0
        k = np.arange(rr.size)
        top = cnt[k, a]
        others = cnt.copy()
        others[k, a] = -1
        self.agg[rr, ii] = np.where(has, a, -1)
        self.top[rr, ii] = np.where(has, top, 0)
        self.sec[rr, ii] = np.where(has, np.maximum(others.max(1), 0), 0)
        self.aggc[rr, ii] = np.where(has, cs[k, a] / np.maximum(top, 1), 0.0)
        self.aacc[rr, ii] = ac[k, a]
        self.arej[rr, ii] = rj[k, a]

    def _aggregate(self, r: np.ndarray, method: np.ndarray) -> None:
        c, N = self.cfg, self.N
        self._ver += 1
        self.method[r] = method
        rr = np.repeat(r, N)
        ii = np.tile(np.arange(N), r.size)
        keep = ii < self.n[rr]
        self._recompute(rr[keep], ii[keep])
        is_merge = method == Agg.MERGE
        if is_merge.any():
            rm = r[is_merge]
            self.tokens[rm] += c.merge_tokens * self.nsol[rm].sum(1)
        valid = np.arange(N)[None, :] < self.n[r][:, None]
        self.clock[r] = np.maximum(self.clock[r], np.where(valid, self.fin[r], 0.0).max(1))
        this_round = valid & (self.rnd_att[r] == self.rnd[r][:, None])
        self.crit[r] += np.where(this_round, self.chain[r], 0).max(1)
        self.phase[r] = O5
        if self.log is not None and r[0] == 0:
            n = int(self.n[0])
            self._rec["agg"] = self.agg[0, :n].tolist()
            self._rec["t_agg"] = float(self.clock[0])
