"""Pluggable worker backends: who actually performs a sub-agent's attempt.

The environment asks a backend for one attempt at a time::

    class WorkerBackend(Protocol):
        def run(self, subtask: SubtaskSpec, profile: WorkerProfile,
                context: WorkerContext, rng: int) -> WorkerResult: ...
        # optional: async def arun(...same...) -> WorkerResult   (used concurrently when present)

``SubtaskSpec`` says what to solve (type, difficulty — hidden from real models — parents and an
optional prompt/answer key for verifiable tasks); ``WorkerContext`` what the orchestrator
shared (O3 mode, whether a parent's current aggregate is wrong / carries an injection) and the
attempt's address (``seed``, ``slot``); ``rng`` is a 63-bit integer derived from that address,
so a backend that samples is reproducible. The result's ``success``/``answer`` feed the
aggregation (equal wrong answers agree: a string answer is hashed into ``1..n_wrong``),
``confidence`` is the self-report, ``tokens_in``/``tokens_out``/``latency`` the cost,
``untrusted``/``injected`` the trust labels of what the worker read. A real backend may also
fill ``cause`` (why the attempt failed: a short label such as ``"timeout"``, never a message
with a URL or a key) and ``t_start``/``t_end`` (its real interval on the clock of the backend's
optional ``now()``); the trace then has the cause on the attempt's return event (``error=True``,
``attrs["cause"]``) and, when the backend has ``now()``, real times (see
:mod:`orchestrace.env.world`).

:class:`SimulatedWorkers` is the plain, one-attempt-at-a-time reference of the vectorised
simulator (same formulas, same addressed randomness): plugging it in gives the same episode
bit for bit, which the tests check. An LLM backend (OpenAI-compatible endpoint) implements
``run`` by prompting the model and grading its answer against ``subtask.answer_key``; the
environment does not change.

>>> from orchestrace.env.config import EnvConfig
>>> from orchestrace.env.env import OrchestrationEnv
>>> cfg = EnvConfig.small()
>>> a, b = OrchestrationEnv(cfg, record_trace=True), OrchestrationEnv(cfg, workers=SimulatedWorkers(cfg), record_trace=True)
>>> _ = a.reset(seed=4), b.reset(seed=4)
>>> [a.step(x)[1] == b.step(x)[1] for x in (1, 6)]
[True, True]
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._rng import normal, uniform
from .config import SUBTASK_TYPES, EnvConfig, WorkerProfile

__all__ = ["BackendAdapter", "SimulatedWorkers", "SubtaskSpec", "WorkerBackend", "WorkerContext", "WorkerResult"]


@dataclass(frozen=True)
class SubtaskSpec:
    """What one attempt works on."""

    index: int
    type: str
    difficulty: float
    parents: tuple[int, ...] = ()
    prompt: str | None = None
    answer_key: str | None = None


@dataclass(frozen=True)
class WorkerContext:
    """What the orchestrator shared with the attempt, and the attempt's address."""

    comm: str  # "none" | "summary" | "full"
    parent_wrong: bool
    parent_injected: bool
    seed: int
    slot: int
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkerResult:
    """One attempt's result (see the module docstring)."""

    success: bool
    answer: int | str
    tokens_in: float
    tokens_out: float
    latency: float
    confidence: float
    error: bool = False
    untrusted: bool = False
    injected: bool = False
    cause: str | None = None
    t_start: float | None = None
    t_end: float | None = None


@runtime_checkable
class WorkerBackend(Protocol):
    """Performs one attempt (see the module docstring)."""

    def run(self, subtask: SubtaskSpec, profile: WorkerProfile, context: WorkerContext, rng: int) -> WorkerResult: ...


class SimulatedWorkers:
    """Scalar reference implementation of the simulated worker model (same numbers as the world)."""

    def __init__(self, config: EnvConfig) -> None:
        self.cfg = config

    def run(self, subtask: SubtaskSpec, profile: WorkerProfile, context: WorkerContext, rng: int) -> WorkerResult:
        """One attempt, computed scalar by scalar (formulas in :mod:`orchestrace.env.world`)."""
        from . import world as W

        c = self.cfg
        s = np.array([context.seed], np.uint64)
        i, j = subtask.index, context.slot

        def u(f: int) -> float:
            return float(uniform(s, i, j, f)[0])

        def z(f: int) -> float:
            return float(normal(s, i, j, f)[0])

        d, ty = subtask.difficulty, SUBTASK_TYPES.index(subtask.type)
        cc = ("none", "summary", "full").index(context.comm)
        npar = len(subtask.parents)
        tin = profile.tokens_in + c.comm_tokens[cc] * npar * (1.0 + d)
        over = tin > profile.context_limit
        logit = profile.skill[ty] - c.difficulty_scale * (d - c.difficulty_offset) + c.comm_bonus[cc] * (npar > 0) - c.context_penalty * over
        p = 1.0 / (1.0 + np.exp(-logit))
        if context.parent_wrong and not (u(W._F_CATCH) < profile.catch):
            p = p * (1.0 - c.p_propagate)
        correct = u(W._F_CORR) < p
        Wn = c.n_wrong
        q = 1.0 / Wn + c.plausible_wrong * d * (1.0 - 1.0 / Wn)
        other = 2 + min(int(u(W._F_ANS2) * max(Wn - 1, 1)), max(Wn - 2, 0))
        wrong = 1 if (u(W._F_ANS) < q or Wn == 1) else other
        ans = 0 if correct else wrong
        fooled = ans == 1 and u(W._F_FOOL) < c.fooled_conf * d
        sign = 1.0 if (correct or fooled) else -1.0
        conf = 1.0 / (1.0 + np.exp(-(profile.conf_bias + profile.conf_kappa * (1.0 - 0.5 * d) * sign + c.conf_noise * z(W._F_CONF))))
        lat = profile.latency_s * np.exp(0.35 * z(W._F_LAT)) * (1.0 + 0.5 * d)
        tout = profile.tokens_out * np.exp(0.3 * z(W._F_TOK)) * (1.0 + d)
        untrusted = ty == 0 and u(W._F_UNTR) < c.p_untrusted
        injected = untrusted and u(W._F_INJ) < c.p_inject
        return WorkerResult(success=bool(correct), answer=int(ans), tokens_in=float(tin), tokens_out=float(tout),
                            latency=float(lat), confidence=float(conf), error=not correct,
                            untrusted=bool(untrusted), injected=bool(injected))


class BackendAdapter:
    """Connects a :class:`WorkerBackend` to the vectorised world (single env only)."""

    def __init__(self, backend: Any, config: EnvConfig) -> None:
        if not hasattr(backend, "run") and not hasattr(backend, "arun"):
            from ..errors import ConfigError

            raise ConfigError(f"workers={backend!r} has no run(subtask, profile, context, rng) method; see orchestrace.env.workers")
        self.backend, self.cfg = backend, config
        self._last: list[WorkerResult] = []
        if callable(getattr(backend, "now", None)):
            self.now = backend.now  # the world's optional real-time extension

    def timings(self, w: Any, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Real ``(t_start, t_end)`` of the last override's attempts, when every result has them."""
        res = self._last
        if len(res) != rr.size or any(r.t_start is None or r.t_end is None for r in res):
            return None
        return np.array([r.t_start for r in res], float), np.array([r.t_end for r in res], float)

    def causes(self, w: Any, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> list[str | None] | None:
        """The failure causes of the last override's attempts (None when no result has one)."""
        res = self._last
        if len(res) != rr.size or all(r.cause is None for r in res):
            return None
        return [r.cause for r in res]

    def _answer_id(self, r: WorkerResult) -> int:
        if r.success:
            return 0
        if isinstance(r.answer, (int, np.integer)) and 1 <= int(r.answer) <= self.cfg.n_wrong:
            return int(r.answer)
        return 1 + zlib.crc32(str(r.answer).encode()) % self.cfg.n_wrong

    def override(self, w: Any, rr: np.ndarray, ii: np.ndarray, kk: np.ndarray, cc: np.ndarray, slot: np.ndarray,
                 ans: np.ndarray, conf: np.ndarray, tin: np.ndarray, tout: np.ndarray, lat: np.ndarray,
                 untrusted: np.ndarray, injected: np.ndarray) -> tuple[np.ndarray, ...]:
        calls = []
        for m in range(rr.size):
            b, i = int(rr[m]), int(ii[m])
            pars = tuple(int(p) for p in w.par[b, i] if p >= 0)
            spec = SubtaskSpec(index=i, type=SUBTASK_TYPES[int(w.typ[b, i])], difficulty=float(w.d[b, i]), parents=pars)
            ctx = WorkerContext(comm=("none", "summary", "full")[int(cc[m])],
                                parent_wrong=any(w.agg[b, p] != 0 for p in pars),
                                parent_injected=any(bool(w.inj[b, p]) for p in pars),
                                seed=int(w.seed[b]), slot=int(slot[m]))
            rng = int(uniform(np.array([w.seed[b]], np.uint64), i, int(slot[m]), 99)[0] * 2**62)
            calls.append((spec, self.cfg.profiles[int(kk[m])], ctx, rng))
        if hasattr(self.backend, "arun"):
            async def gather() -> list[WorkerResult]:
                return list(await asyncio.gather(*(self.backend.arun(*a) for a in calls)))
            results = asyncio.run(gather())
        else:
            results = [self.backend.run(*a) for a in calls]
        self._last = list(results)
        ans, conf, tin, tout, lat = ans.copy(), conf.copy(), tin.copy(), tout.copy(), lat.copy()
        untrusted, injected = untrusted.copy(), injected.copy()
        for m, r in enumerate(results):
            ans[m] = self._answer_id(r)
            conf[m], tin[m], tout[m], lat[m] = r.confidence, r.tokens_in, r.tokens_out, r.latency
            untrusted[m], injected[m] = r.untrusted, r.injected
        return ans, conf, tin, tout, lat, untrusted, injected
