"""Exact, cheap valuation of every stop rule: one always-continue path per task seed.

With deterministic (greedy) O1–O4 heads, what happens after a CONTINUE does not depend on
where the stop will later be: the world's randomness is a pure function of (seed, subtask,
slot, round). So one path per seed that **continues at every O5 check** holds the outcome
of every stopping time — the fitted stop's own trick (:mod:`orchestrace.trainers.fitted_stop`),
here with the whole episode summary of each stop, not only its return:

1. :func:`collect` plays the seeds with the heads, and at every O5 check k copies the world,
   takes STOP in the copy and records the finished episode's numbers (return, success,
   tokens, decisions, …), the :class:`~orchestrace.policies.anchors.CheckState` the rules read,
   whether CONTINUE is legal and, for a learned policy, its own gate's decision there;
2. :meth:`Paths.value` gives any rule's per-episode results exactly: the outcome at its first
   stop (or at the first check where CONTINUE is illegal);
3. :meth:`Paths.clairvoyant` is the best check of each path in hindsight.

A rule evaluated this way equals the rule played in the environment episode by episode
(``tests/learn/test_learn_exact.py`` checks it against :class:`~orchestrace.evaluation.simulated.SameHeads`).

>>> from orchestrace.env import EnvConfig
>>> from orchestrace.policies.anchors import BetaRule
>>> cfg = EnvConfig.small()
>>> p = collect(cfg, None, np.arange(64))
>>> p.n_episodes, p.n_checks
(64, 3)
>>> res = p.value(p.stops(BetaRule(0.9)))
>>> bool((res["return"] <= p.clairvoyant()["return"] + 1e-12).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..policies.anchors import CheckState

__all__ = ["OUTCOMES", "Paths", "collect"]

#: The per-episode numbers recorded for every stopping time (the batched evaluator's keys).
OUTCOMES: tuple[str, ...] = ("return", "success", "tokens", "decisions", "rounds", "critical_steps", "wall_clock_s",
                             "safety_events")


@dataclass
class Paths:
    """E always-continue paths × R checks (dense; row ``e·R + k`` of ``state`` is check k of episode e)."""

    seeds: np.ndarray  # (E,) task seeds
    present: np.ndarray  # (E, R) bool: the path reached check k
    legal: np.ndarray  # (E, R) bool: CONTINUE was legal at check k (False at the path's last check and after)
    outcome: dict[str, np.ndarray]  # OUTCOMES → (E, R): the finished episode when stopping at check k
    difficulty: np.ndarray  # (E,) the task's hidden difficulty
    state: CheckState  # (E·R rows) what the rules read at each check
    own_stop: np.ndarray  # (E, R) bool: the heads' own greedy O5 decision was STOP

    @property
    def n_episodes(self) -> int:
        return int(self.present.shape[0])

    @property
    def n_checks(self) -> int:
        return int(self.present.shape[1])

    @property
    def payoff(self) -> np.ndarray:
        """(E, R) the return of stopping at each check."""
        return self.outcome["return"]

    def stops(self, rule: Any) -> np.ndarray:
        """(E, R) bool: ``rule.stop`` at every check."""
        return np.asarray(rule.stop(self.state), bool).reshape(self.present.shape)

    def first_stop(self, stop: np.ndarray) -> np.ndarray:
        """(E,) the check where the rule "stop where ``stop`` (E, R)" ends each episode."""
        return (np.asarray(stop, bool) | ~self.legal).argmax(1)

    def value(self, stop: np.ndarray) -> dict[str, np.ndarray]:
        """Per-episode results (the batched evaluator's keys) of "stop where ``stop`` (E, R)"."""
        return self.at(self.first_stop(stop))

    def at(self, k: np.ndarray) -> dict[str, np.ndarray]:
        """Per-episode results when episode e stops at check ``k[e]``."""
        ar = np.arange(self.n_episodes)
        out = {key: v[ar, k].copy() for key, v in self.outcome.items()}
        out["difficulty"] = self.difficulty.copy()
        out["seed"] = self.seeds.copy()
        return out

    def clairvoyant(self) -> dict[str, np.ndarray]:
        """The best check of each path in hindsight (the earliest among equals)."""
        pay = np.where(self.present, self.payoff, -np.inf)
        return self.at(pay.argmax(1))


def _heads_fn(cfg: Any, heads: Any) -> Any:
    if heads is None:
        from ..env.baselines import BudgetPolicy

        base = BudgetPolicy(cfg, name="base")
        return lambda obs, mask, w: base.base(w.summary_obs(), mask)
    return lambda obs, mask, w: np.asarray(heads.act_batch(obs, mask, w), dtype=np.int64)


def collect(cfg: Any, heads: Any, seeds: np.ndarray, *, chunk: int = 1024) -> Paths:
    """Play ``seeds`` with the O1–O4 ``heads`` (a policy with ``act_batch(obs, mask, world)``, greedy;
    ``None`` = the environment's base heuristic), continuing at every O5 check where CONTINUE is
    legal, and record every stopping time's outcome (see the module docstring)."""
    from ..env.layout import CONTINUE, STOP, Phase
    from ..env.world import World

    seeds = np.asarray(seeds, np.int64).reshape(-1)
    E, R = len(seeds), int(cfg.max_rounds)
    act = _heads_fn(cfg, heads)
    o5 = cfg.layout.heads.starts[Phase.O5]  # the flat index of the O5 head (STOP; CONTINUE = +1)
    present = np.zeros((E, R), bool)
    legal = np.zeros((E, R), bool)
    own = np.zeros((E, R), bool)
    outcome = {k: np.zeros((E, R)) for k in OUTCOMES}
    difficulty = np.zeros(E)
    states: dict[str, np.ndarray] = {}
    for lo in range(0, E, chunk):
        s = seeds[lo:lo + chunk]
        w = World(cfg, len(s))
        w.reset_rows(np.arange(len(s)), s.astype(np.uint64))
        difficulty[lo:lo + len(s)] = w.dtask
        while (w.phase < Phase.DONE).any():
            obs, mask = w.obs(), w.mask()
            a = act(obs, mask, w)
            rows = np.flatnonzero(w.phase == Phase.O5)
            if rows.size:
                e, k = lo + rows, np.asarray(w.rnd[rows], np.int64)
                copy = w.take(rows)
                st = CheckState.from_world(copy)
                if not states:
                    states = {f: np.zeros((E, R) + getattr(st, f).shape[1:], getattr(st, f).dtype)
                              for f in CheckState.__dataclass_fields__}
                for f in CheckState.__dataclass_fields__:
                    states[f][e, k] = getattr(st, f)
                copy.step(np.full(rows.size, o5 + STOP, np.int64))
                done = copy.episode_summary()
                for key in OUTCOMES:
                    outcome[key][e, k] = done[key]
                present[e, k] = True
                own[e, k] = a[rows] == o5 + STOP
                legal[e, k] = mask[rows, o5 + CONTINUE]
                a[rows] = np.where(legal[e, k], o5 + CONTINUE, o5 + STOP)
            w.step(np.where(w.phase < Phase.DONE, a, 0))
    # after a path's last check: the same outcome, CONTINUE illegal (first_stop never passes it)
    last = present.sum(1) - 1
    ar = np.arange(E)
    for kk in range(R):
        after = kk > last
        if after.any():
            for key in OUTCOMES:
                outcome[key][after, kk] = outcome[key][ar[after], last[after]]
    flat = {f: v.reshape((E * R,) + v.shape[2:]) for f, v in states.items()}
    return Paths(seeds=seeds, present=present, legal=legal & present, outcome=outcome, difficulty=difficulty,
                 state=CheckState(**flat), own_stop=own)
