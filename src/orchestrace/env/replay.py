"""Deterministic replay with interventions, and value functions for counterfactual credit.

``replay(config, seed, actions)`` re-runs an episode bit-exactly (randomness is addressed by
(seed, subtask, attempt slot), see :mod:`orchestrace.env._rng`). Interventions change what
happened and return the counterfactual outcome:

* :class:`RemoveAgent` ``(subtask, slot)`` — that sub-agent never works (no result, no cost);
* :class:`DropMessage` ``(subtask, slot)`` — that sub-agent gets no shared parent results (O3 → none);
* :class:`ChangeDelegation` ``(step, profile)`` — the O2 decision at ``step`` picks another profile;
* :class:`StopAt` ``(step)`` — stop at the first O5 at or after decision ``step``;
* :class:`SwapAggregation` ``(method, step=None)`` — O4 decisions (all, or the one at ``step``) use ``method``.

Every other attempt reads the same random numbers, so an intervention changes only what
flows from it. When an intervention makes a recorded action illegal (e.g. a verifier before any
solver), or the episode outlives the recorded actions, the shared base heuristic of
:mod:`orchestrace.env.baselines` decides; those steps are listed in ``EpisodeResult.replaced``.

>>> from orchestrace.env.config import EnvConfig
>>> cfg = EnvConfig.small()
>>> r = replay(cfg, 5, [])                     # no actions: the base heuristic plays
>>> r2 = replay(cfg, 5, r.actions)             # replays bit-exactly
>>> r2.return_ == r.return_, r2.replaced
(True, ())
>>> r.agents[0]
(0, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.trace import Trace
from ..errors import ConfigError, ValueFunctionError
from ._trace import action_labels, build_trace
from .baselines import BudgetPolicy
from .config import AGG_METHODS, EnvConfig
from .layout import DONE, O2, O4, O5
from .world import World

__all__ = [
    "ChangeDelegation",
    "DropMessage",
    "EpisodeResult",
    "RemoveAgent",
    "StopAt",
    "SwapAggregation",
    "agent_value_function",
    "message_value_function",
    "replay",
    "replay_many",
    "rollout_after",
    "stop_values",
]


@dataclass(frozen=True)
class RemoveAgent:
    """The sub-agent of attempt ``slot`` on ``subtask`` is removed (never works, never costs)."""

    subtask: int
    slot: int


@dataclass(frozen=True)
class DropMessage:
    """The shared-results message to the sub-agent of attempt ``slot`` on ``subtask`` is dropped."""

    subtask: int
    slot: int


@dataclass(frozen=True)
class ChangeDelegation:
    """The O2 decision at decision index ``step`` delegates to ``profile`` (index or name)."""

    step: int
    profile: int | str


@dataclass(frozen=True)
class StopAt:
    """Stop at the first O5 decision at or after decision index ``step``."""

    step: int


@dataclass(frozen=True)
class SwapAggregation:
    """O4 decisions use ``method`` (index or name); only the one at ``step`` if given."""

    method: int | str
    step: int | None = None


Intervention = RemoveAgent | DropMessage | ChangeDelegation | StopAt | SwapAggregation


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one (counterfactual) episode."""

    seed: int
    actions: tuple[int, ...]
    success: bool
    return_: float
    tokens: float
    critical_steps: float
    wall_clock_s: float
    decisions: int
    safety_events: int
    agents: tuple[tuple[int, int], ...]  # (subtask, slot) of every sub-agent that worked
    messages: tuple[tuple[int, int], ...]  # (subtask, slot) of every attempt that received shared results
    replaced: tuple[int, ...] = ()
    trace: Trace | None = field(default=None, repr=False, compare=False)


def _resolve(cfg: EnvConfig, interventions: Sequence[Intervention]) -> dict[str, Any]:
    names = [p.name for p in cfg.profiles]
    out: dict[str, Any] = {"drop": [], "nocomm": [], "deleg": {}, "stop": None, "agg_all": None, "agg": {}}
    for iv in interventions:
        if isinstance(iv, RemoveAgent):
            out["drop"].append((iv.subtask, iv.slot))
        elif isinstance(iv, DropMessage):
            out["nocomm"].append((iv.subtask, iv.slot))
        elif isinstance(iv, ChangeDelegation):
            k = names.index(iv.profile) if isinstance(iv.profile, str) and iv.profile in names else iv.profile
            if not isinstance(k, int) or not 0 <= k < len(names):
                raise ConfigError(f"ChangeDelegation.profile={iv.profile!r} is unknown; use one of {names}")
            out["deleg"][iv.step] = k
        elif isinstance(iv, StopAt):
            out["stop"] = iv.step if out["stop"] is None else min(out["stop"], iv.step)
        elif isinstance(iv, SwapAggregation):
            m = AGG_METHODS.index(iv.method) if isinstance(iv.method, str) and iv.method in AGG_METHODS else iv.method
            if not isinstance(m, int) or not 0 <= m < len(AGG_METHODS):
                raise ConfigError(f"SwapAggregation.method={iv.method!r} is unknown; use one of {AGG_METHODS}")
            if iv.step is None:
                out["agg_all"] = m
            else:
                out["agg"][iv.step] = m
        else:
            raise ConfigError(f"unknown intervention {iv!r}; use RemoveAgent, DropMessage, ChangeDelegation, StopAt or SwapAggregation")
    return out


def replay_many(config: EnvConfig, seed: int, actions: Sequence[int],
                interventions: Sequence[Sequence[Intervention]]) -> list[EpisodeResult]:
    """Replay one episode under several intervention sets at once (one batched world, no traces).

    >>> from orchestrace.env.config import EnvConfig
    >>> cfg = EnvConfig.small(); acts = replay(cfg, 1, []).actions
    >>> a, b = replay_many(cfg, 1, acts, [[], [RemoveAgent(0, 0)]])
    >>> (0, 0) in a.agents, (0, 0) in b.agents, b.tokens < a.tokens
    (True, False, True)
    """
    return _run(config, seed, actions, interventions, record=False)


def replay(config: EnvConfig, seed: int, actions: Sequence[int], interventions: Sequence[Intervention] = (),
           *, record_trace: bool = True) -> EpisodeResult:
    """Replay ``actions`` on task ``seed`` with ``interventions``; the counterfactual outcome (+ trace)."""
    return _run(config, seed, actions, [interventions], record=record_trace)[0]


def _run(cfg: EnvConfig, seed: int, actions: Sequence[int], ivs: Sequence[Sequence[Intervention]], *, record: bool) -> list[EpisodeResult]:
    B = len(ivs)
    w = World(cfg, B)
    w.reset_rows(np.arange(B), np.full(B, seed, dtype=np.uint64))
    res = [_resolve(cfg, iv) for iv in ivs]
    A = cfg.max_attempts
    if any(r["drop"] or r["nocomm"] for r in res):
        w.drop = np.zeros((B, w.N, A), bool)
        w.nocomm = np.zeros((B, w.N, A), bool)
        for b, r in enumerate(res):
            for i, s in r["drop"]:
                if 0 <= i < w.N and 0 <= s < A:
                    w.drop[b, i, s] = True
            for i, s in r["nocomm"]:
                if 0 <= i < w.N and 0 <= s < A:
                    w.nocomm[b, i, s] = True
    if record:
        w.log = []
    base = BudgetPolicy(cfg, name="replay-base")
    h = w.heads
    acts = np.asarray(list(actions), np.int64)
    taken: list[list[int]] = [[] for _ in range(B)]
    replaced: list[list[int]] = [[] for _ in range(B)]
    labels = action_labels(cfg)
    alts: list[tuple[str, ...]] = []
    t = 0
    while (w.phase < DONE).any():
        mask = w.mask()
        live = w.phase < DONE
        fb = base.base(w.summary_obs(), mask)
        a = np.full(B, -1, np.int64) if t >= len(acts) else np.full(B, acts[t])
        for b, r in enumerate(res):
            if not live[b]:
                continue
            ph = w.phase[b]
            if ph == O2 and t in r["deleg"]:
                a[b] = h.action(O2, r["deleg"][t])
            if ph == O4 and (t in r["agg"] or r["agg_all"] is not None):
                a[b] = h.action(O4, r["agg"].get(t, r["agg_all"]))
            if ph == O5 and r["stop"] is not None:
                a[b] = h.stop if t >= r["stop"] else (h.cont if mask[b, h.cont] else h.stop)
            if a[b] < 0 or a[b] >= w.A or not mask[b, a[b]]:
                if t < len(acts):
                    replaced[b].append(t)
                a[b] = fb[b]
            taken[b].append(int(a[b]))
        if record:
            alts.append(tuple(labels[i] for i in np.flatnonzero(mask[0])))
        w.step(np.where(live, a, 0))
        t += 1
    out = []
    for b in range(B):
        n = int(w.n[b])
        agents = tuple((i, s) for i in range(n) for s in range(int(w.natt[b, i]))
                       if w.drop is None or not w.drop[b, i, s])
        msgs = tuple((i, s) for (i, s) in agents if w.commlog[b, i, s] > 0)
        summary = {"tokens": float(w.tokens[b]), "wall_clock_s": float(w.clock[b]), "critical_steps": float(w.crit[b]),
                   "safety_events": int(w.safety[b]), "return": float(w.ret[b]), "difficulty": float(w.dtask[b])}
        trace = None
        if record and b == 0 and w.log is not None:  # w.log is set whenever record is
            trace = build_trace(cfg, w.log, seed=int(seed), n=n, types=w.typ[0, :n], parents=w.par[0, :n],
                                success=bool(w.success[0]), summary=summary, env_id=f"orchestrace/{cfg.name}",
                                policy="replay", logprobs=[None] * len(w.log), alternatives=alts)
        out.append(EpisodeResult(
            seed=int(seed), actions=tuple(taken[b]), success=bool(w.success[b]), return_=float(w.ret[b]),
            tokens=float(w.tokens[b]), critical_steps=float(w.crit[b]), wall_clock_s=float(w.clock[b]),
            decisions=int(w.ndec[b]), safety_events=int(w.safety[b]), agents=agents, messages=msgs,
            replaced=tuple(replaced[b]), trace=trace))
    return out


class _ValueFunction:
    """``v(coalition) -> float`` with ``.players`` and a batched ``.many(coalitions)``; cached."""

    def __init__(self, players: Sequence[Any], evaluate: Callable[[list[frozenset]], np.ndarray]) -> None:
        self.players = tuple(players)
        self._eval = evaluate
        self._cache: dict[frozenset, float] = {}

    def many(self, coalitions: Iterable[Iterable[Any]]) -> np.ndarray:
        cs = [frozenset(c) for c in coalitions]
        for c in cs:
            bad = c - set(self.players)
            if bad:
                raise ValueFunctionError(f"unknown players {sorted(bad)[:3]} in coalition; players are {list(self.players)[:8]}…")
        todo = [c for c in dict.fromkeys(cs) if c not in self._cache]
        if todo:
            vals = self._eval(todo)
            for c, v in zip(todo, vals, strict=False):
                if not np.isfinite(v):
                    raise ValueFunctionError(f"replay returned a non-finite value for coalition {sorted(c)}")
                self._cache[c] = float(v)
        return np.array([self._cache[c] for c in cs])

    def __call__(self, coalition: Iterable[Any]) -> float:
        return float(self.many([coalition])[0])


def agent_value_function(config: EnvConfig, seed: int, actions: Sequence[int], *, outcome: str = "return") -> _ValueFunction:
    """``v(S)`` = the episode's ``outcome`` ("return" or "success") when only the sub-agents in
    ``S`` (``(subtask, slot)`` tuples; ``v.players``) do their work — for Shapley / leave-one-out.

    >>> from orchestrace.env.config import EnvConfig
    >>> v = agent_value_function(EnvConfig.small(), 5, replay(EnvConfig.small(), 5, []).actions)
    >>> len(v.players) > 0, v(v.players) == replay(EnvConfig.small(), 5, replay(EnvConfig.small(), 5, []).actions).return_
    (True, True)
    """
    base = replay(config, seed, actions, record_trace=False)
    players = base.agents

    def ev(coalitions: list[frozenset]) -> np.ndarray:
        ivs = [[RemoveAgent(i, s) for (i, s) in players if (i, s) not in c] for c in coalitions]
        rs = replay_many(config, seed, base.actions, ivs)
        return np.array([r.return_ if outcome == "return" else float(r.success) for r in rs])

    return _ValueFunction(players, ev)


def message_value_function(config: EnvConfig, seed: int, actions: Sequence[int], *, outcome: str = "return") -> _ValueFunction:
    """``v(S)`` = the outcome when only the O3 messages in ``S`` (``(subtask, slot)`` of the receiving
    attempt; ``v.players``) are delivered — message leave-one-out is ``v(all) − v(all − {m})``.

    >>> from orchestrace.env.config import EnvConfig
    >>> cfg = EnvConfig.default(); acts = replay(cfg, 4, []).actions
    >>> m = message_value_function(cfg, 4, acts)
    >>> loo = {p: m(m.players) - m(set(m.players) - {p}) for p in m.players}
    >>> all(np.isfinite(list(loo.values())))
    True
    """
    base = replay(config, seed, actions, record_trace=False)
    players = base.messages

    def ev(coalitions: list[frozenset]) -> np.ndarray:
        ivs = [[DropMessage(i, s) for (i, s) in players if (i, s) not in c] for c in coalitions]
        rs = replay_many(config, seed, base.actions, ivs)
        return np.array([r.return_ if outcome == "return" else float(r.success) for r in rs])

    return _ValueFunction(players, ev)


def rollout_after(config: EnvConfig, seeds: np.ndarray, prefixes: np.ndarray, at: np.ndarray, action: np.ndarray,
                  act: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Counterfactual reward-to-go of many episodes at once, (F,): episode ``f`` (task
    ``seeds[f]``) replays ``prefixes[f, :at[f]]``, takes ``action[f]`` at decision ``at[f]``, then
    follows ``act(obs (F, D), mask (F, A)) -> (F,) actions`` to the end; the value is the sum of
    rewards from decision ``at[f]`` on. All episodes run in one lock-step batch.

    >>> from orchestrace.env.config import EnvConfig
    >>> cfg = EnvConfig.small(); r = replay(cfg, 4, [])      # the base heuristic plays task 4
    >>> base = BudgetPolicy(cfg, name="b")
    >>> v = rollout_after(cfg, np.array([4, 4]), np.array([r.actions, r.actions]), np.array([0, 0]),
    ...                   np.array([r.actions[0], r.actions[0]]), base.base)
    >>> bool(np.allclose(v, r.return_))                      # from decision 0 on: the whole episode
    True
    """
    F = len(seeds)
    prefixes = np.asarray(prefixes, np.int64).reshape(F, -1)
    at, action = np.asarray(at, np.int64), np.asarray(action, np.int64)
    w = World(config, F)
    w.reset_rows(np.arange(F), np.asarray(seeds).astype(np.uint64))
    value = np.zeros(F)
    width = prefixes.shape[1]
    j = 0
    while (w.phase < DONE).any():
        live = w.phase < DONE
        obs, mask = w.obs(), w.mask()
        a = act(obs, mask) if j > int(at.min()) else np.zeros(F, np.int64)
        a = np.where(j < at, prefixes[:, min(j, width - 1)], a)
        a = np.where(j == at, action, a)
        r = w.step(np.where(live, a, 0))
        value += np.where(j >= at, r, 0.0)
        j += 1
    return value


def stop_values(config: EnvConfig, seed: int, actions: Sequence[int]) -> np.ndarray:
    """Return of stopping at each O5 decision of the episode (NaN at other decisions); the last
    entry equals the realised return when the episode ended by its own stop.

    >>> from orchestrace.env.config import EnvConfig
    >>> cfg = EnvConfig.small(); r = replay(cfg, 2, [])
    >>> v = stop_values(cfg, 2, r.actions)
    >>> len(v) == r.decisions, bool(np.isclose(v[-1], r.return_))
    (True, True)
    """
    r = replay(config, seed, actions, record_trace=False)
    o5 = [t for t, a in enumerate(r.actions) if a >= config.n_actions - 2]
    if not o5:
        return np.full(r.decisions, np.nan)
    rs = replay_many(config, seed, r.actions, [[StopAt(t)] for t in o5])
    out = np.full(r.decisions, np.nan)
    for t, x in zip(o5, rs, strict=False):
        out[t] = x.return_
    return out
