"""Plug LLM workers into the simulated orchestration environment (:mod:`orchestrace.env`).

The environment's world calls ``backend.override(world, rows, subtasks, profiles, comm,
slots, ans, conf, tin, tout, lat, untrusted, injected)`` for each solver attempt and uses
what it returns instead of the simulated outcome. :class:`LLMEnvBackend` answers with a real
LLM call:

* the episode's task DAG (``world.par``) becomes a verifiable task of the chosen suite
  (:func:`~orchestrace.llm.tasks.task_for_dag`, seeded by the episode seed), so subtask
  ``i`` of the environment is subtask ``s{i}`` of the LLM task;
* a dependency's answer is the one its current aggregate stands for (O3 ``none`` spells the
  dependency out instead), the profile (O2) picks the call settings
  (:class:`~orchestrace.llm.workers.LLMProfile`);
* the parsed answer is encoded as the world's answer code: ``0`` = exactly right, wrong
  answers get codes ``1..n_wrong`` in order of first appearance (agreeing wrong answers
  share a code, so majority votes behave), unparseable replies and failed calls the last
  code; confidence = ``exp(mean token log-prob)``; tokens = the server's usage; latency =
  the real latency;
* **all ``f`` sub-agents of one O1/O2/O3 launch run concurrently**: the world asks for
  attempts one at a time, so on the first attempt of a launch the backend starts all
  ``world.pf`` pending attempts at once and serves the later ones from its cache.

Verifier votes, untrusted tool output and injections stay simulated (the world does not
route them through the backend). Every real call is kept in :attr:`LLMEnvBackend.records`.

The backend also implements the world's optional real-time extension (see
:mod:`orchestrace.env.world`): ``now()`` is ``time.time()``, the clock of
:attr:`AttemptResult.t_start <orchestrace.llm.workers.AttemptResult>`; ``timings`` gives each
answered attempt's real ``(t_start, t_end)`` and ``causes`` its failure cause (the result's
``error`` label: ``timeout``, ``http_429``, ``empty_completion`` …, never a message, a URL or a
key), so the environment's trace is laid out in real time and a failed call's return event
has ``error=True`` and ``attrs["cause"]``.

>>> from orchestrace.llm.envbackend import encode_answer
>>> codes = {}
>>> encode_answer("7", "7", codes, 3), encode_answer("5", "7", codes, 3), encode_answer("5", "7", codes, 3)
(0, 1, 1)
>>> encode_answer(None, "7", codes, 3)
3
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from .tasks import SUITES, Task, task_for_dag
from .workers import AttemptRequest, AttemptResult, LLMWorkers

__all__ = ["AttemptRecord", "LLMEnvBackend", "encode_answer", "make_llm_workers"]

_COMM = ("none", "summary", "full")


def encode_answer(answer: str | None, truth: str, codes: dict[str, int], n_wrong: int) -> int:
    """World answer code of ``answer``: 0 if right, else a stable wrong code in ``1..n_wrong``."""
    if answer is not None and answer == truth:
        return 0
    if answer is None:
        return n_wrong
    if answer not in codes:
        codes[answer] = min(len(codes) + 1, n_wrong)
    return codes[answer]


@dataclass(frozen=True)
class AttemptRecord:
    """One real attempt made for the environment: where (row, subtask, slot) and what came back."""

    seed: int
    subtask: int
    slot: int
    profile: str
    comm: str
    code: int
    result: AttemptResult


class LLMEnvBackend:
    """The world's per-attempt override, answered by :class:`~orchestrace.llm.workers.LLMWorkers`.

    ``suite`` is one of :data:`~orchestrace.llm.tasks.SUITES`. Attach with
    ``env.unwrapped.world.backend = LLMEnvBackend(workers, suite, env.unwrapped.config)``
    (or through the environment's ``workers=`` argument once it accepts this object).
    """

    def __init__(self, workers: LLMWorkers, suite: str = "arith", config: Any = None) -> None:
        if suite not in SUITES:
            raise ConfigError(f"unknown task suite {suite!r}; choose one of {', '.join(SUITES)}")
        self.workers = workers
        self.suite = suite
        self.config = config
        self.records: list[AttemptRecord] = []
        self._tasks: dict[int, Task] = {}
        self._codes: dict[tuple[int, int], dict[str, int]] = {}
        self._cache: dict[tuple[int, int, int], AttemptResult] = {}
        self._answered: dict[tuple[int, int, int], AttemptResult] = {}  # the last override's attempts

    # -- task mapping ------------------------------------------------------------------------
    def task_of(self, world: Any, row: int) -> Task:
        """The LLM task of the episode in ``row`` (built from its dependency DAG, cached by seed)."""
        seed = int(world.seed[row])
        task = self._tasks.get(seed)
        if task is None:
            n = int(world.n[row])
            parents = [[int(p) for p in world.par[row, i] if p >= 0] for i in range(n)]
            task = task_for_dag(self.suite, parents, seed=seed)
            if len(self._tasks) > 256:
                self._tasks.clear()
                self._codes.clear()
                self._cache.clear()
            self._tasks[seed] = task
        return task

    def decode(self, world: Any, row: int, i: int, code: int) -> str | None:
        """The answer string a world answer code stands for (None: no aggregate yet)."""
        if code < 0:
            return None
        task = self.task_of(world, row)
        if code == 0:
            return task.subtask(f"s{i}").answer
        codes = self._codes.get((int(world.seed[row]), i), {})
        for ans, c in codes.items():
            if c == code:
                return ans
        return None

    # -- the world's hook --------------------------------------------------------------------
    def override(self, world: Any, rr: np.ndarray, ii: np.ndarray, kk: np.ndarray, cc: np.ndarray,
                 slot: np.ndarray, ans: np.ndarray, conf: np.ndarray, tin: np.ndarray, tout: np.ndarray,
                 lat: np.ndarray, untrusted: np.ndarray, injected: np.ndarray) -> tuple[np.ndarray, ...]:
        """Replace the simulated outcome of attempts ``(rr, ii, slot)`` by real LLM attempts."""
        ans, conf = ans.copy(), conf.copy()
        tin, tout, lat = np.asarray(tin, float).copy(), np.asarray(tout, float).copy(), np.asarray(lat, float).copy()
        missing: list[tuple[int, int, int, int, int]] = []
        for m in range(len(rr)):
            row, i, s = int(rr[m]), int(ii[m]), int(slot[m])
            key = (int(world.seed[row]), i, s)
            if key not in self._cache:
                fan = max(1, int(world.pf[row]))
                for j in range(fan):  # the whole launch at once (its later attempts hit the cache)
                    k2 = (key[0], i, s + j)
                    if k2 not in self._cache:
                        missing.append((row, i, s + j, int(kk[m]), int(cc[m])))
        if missing:
            self._launch(world, missing)
        W = int(world.W1) - 1
        self._answered.clear()
        for m in range(len(rr)):
            row, i, s = int(rr[m]), int(ii[m]), int(slot[m])
            seed = int(world.seed[row])
            r = self._cache.pop((seed, i, s))
            self._answered[(seed, i, s)] = r
            task = self.task_of(world, row)
            codes = self._codes.setdefault((seed, i), {})
            code = encode_answer(r.answer, task.subtask(f"s{i}").answer, codes, W)
            ans[m] = code
            conf[m] = r.confidence
            tin[m] = r.tokens_in
            tout[m] = r.tokens_out
            lat[m] = max(r.latency_s, 1e-6)
            prof = self._profile_name(world, int(kk[m]))
            self.records.append(AttemptRecord(seed, i, s, prof, _COMM[int(cc[m])], code, r))
        return ans, conf, tin, tout, lat, untrusted, injected

    # -- the world's optional real-time extension ----------------------------------------
    def now(self) -> float:
        """The backend's clock: wall-clock ``time.time()`` seconds (the clock of the attempts' times)."""
        return time.time()

    def _answered_of(self, world: Any, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> list[AttemptResult] | None:
        out = []
        for row, i, s in zip(rr.tolist(), ii.tolist(), slot.tolist(), strict=True):
            r = self._answered.get((int(world.seed[row]), int(i), int(s)))
            if r is None:
                return None
            out.append(r)
        return out

    def timings(self, world: Any, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Real ``(t_start, t_end)`` (``now()`` clock) of the attempts the last ``override`` answered."""
        res = self._answered_of(world, rr, ii, slot)
        if res is None:
            return None
        return np.array([r.t_start for r in res]), np.array([r.t_end for r in res])

    def causes(self, world: Any, rr: np.ndarray, ii: np.ndarray, slot: np.ndarray) -> list[str | None] | None:
        """The failure cause of each attempt the last ``override`` answered (None: it answered)."""
        res = self._answered_of(world, rr, ii, slot)
        return None if res is None else [r.error for r in res]

    def _profile_name(self, world: Any, k: int) -> str:
        cfg = self.config if self.config is not None else world.cfg
        return str(cfg.profiles[k].name)

    def _launch(self, world: Any, missing: Sequence[tuple[int, int, int, int, int]]) -> None:
        reqs: list[AttemptRequest] = []
        for row, i, _s, k, c in missing:
            task = self.task_of(world, row)
            st = task.subtask(f"s{i}")
            deps = {d: self.decode(world, row, int(d[1:]), int(world.agg[row, int(d[1:])])) for d in st.deps}
            reqs.append(AttemptRequest(task, st.id, deps, _COMM[c], self._profile_name(world, k)))
        results = self.workers.attempt_many(reqs)
        for (row, i, s, _k, _c), r in zip(missing, results, strict=True):
            self._cache[(int(world.seed[row]), i, s)] = r

    # -- summaries ---------------------------------------------------------------------------
    @property
    def tokens(self) -> int:
        """Tokens of every real call so far (the servers' usage reports)."""
        return sum(rec.result.tokens for rec in self.records)

    def failures(self) -> dict[str, int]:
        """Count of failed attempts by cause (``connect``, ``timeout``, ``empty_completion`` …).

        >>> LLMEnvBackend.__new__(LLMEnvBackend).__class__.__name__
        'LLMEnvBackend'
        """
        out: dict[str, int] = {}
        for rec in self.records:
            if rec.result.error is not None:
                out[rec.result.error] = out.get(rec.result.error, 0) + 1
        return out

    def all_failed(self) -> bool:
        """True when calls were made and every one failed (a dead endpoint, a wrong model name …).

        A run in this state has produced no model output at all: callers should exit
        non-zero with :meth:`failures` rather than report its success rate.
        """
        return bool(self.records) and all(rec.result.error is not None and not rec.result.text
                                          for rec in self.records)

    def reset_records(self) -> None:
        """Forget the attempt records (e.g. between episodes)."""
        self.records.clear()


def make_llm_workers(
    base_url: str,
    model: str,
    *,
    suite: str = "arith",
    config: Any = None,
    api_key_env: str | None = None,
    max_concurrency: int = 4,
    timeout: float = 60.0,
    max_retries: int = 3,
    max_tokens: int | None = None,
) -> Any:
    """The environment backend for ``--workers llm``: :class:`~orchestrace.llm.envbackend.LLMEnvBackend`.

    Attach it with ``env.unwrapped.world.backend = make_llm_workers(...)``; call
    ``backend.workers.close()`` when done. Raises MissingExtraError without httpx and
    ConfigError for bad values (both are OrchestraceError: print them, exit 2).
    """
    from ..errors import require

    require("httpx", extra="llm")
    workers = LLMWorkers(base_url, model, api_key_env=api_key_env, max_concurrency=max_concurrency,
                         timeout=timeout, max_retries=max_retries, max_tokens=max_tokens)
    return LLMEnvBackend(workers, suite, config)
