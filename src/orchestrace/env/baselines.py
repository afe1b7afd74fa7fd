"""Baseline orchestrators with the learner's interface, an oracle, and a batched evaluator.

Every policy has ``act(obs_dict, info) -> int`` (single env) and
``act_batch(obs (B, D), mask (B, A), world=None) -> (B,) int64``. All but ``random``,
``fixed-fanout`` and ``greedy`` share one *base heuristic* for O1–O4 and differ only in
the stop (O5), so that comparing them isolates the stopping rule:

* O1 — round 0: one sub-agent per subtask; later rounds: one more when the subtask's
  aggregate leads by < 2 votes, else none;
* O2 — the specialist for the subtask's type (``spec_<type>``; else ``strong``);
* O3 — ``summary``; O4 — ``majority``.

Policies (``BASELINES``): ``random`` (uniform over legal actions), ``fixed-fanout``
(fan-out ``fanout`` specialists per subtask, majority, stop after one round), ``greedy``
(cheapest capable profile at the hinted difficulty, no sharing, stop after one round),
``fixed-budget`` (stop after ``rounds`` rounds, or once ``decisions`` / ``tokens`` are spent),
``threshold`` (stop once every aggregate's confidence ≥ ``threshold``), ``always-continue``,
``oracle`` (looks ahead with replay: for each candidate action, clones the world, rolls out
the base heuristic to the end and takes the best stopping point on the way — clairvoyant
about the realised randomness, the upper reference for learned stopping), and
``adaptive`` (a hand-written evidence rule; the learnability check — not a contract name).

>>> from orchestrace.env.config import EnvConfig
>>> res = evaluate(EnvConfig.small(), make_baseline("fixed-budget", EnvConfig.small(), rounds=1), range(8))
>>> sorted(res)[:4], int(res["rounds"].max())
(['critical_steps', 'decisions', 'difficulty', 'return'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..errors import ConfigError
from ._policy import (
    _ACC,
    _HINT,
    _MINCONF,
    _MINMARG,
    _PF,
    _REJ,
    _RND,
    _SEC,
    _SETTLED,
    _TOP,
    _TYPE,
    BudgetPolicy,
    Policy,
)
from .config import EnvConfig
from .layout import DONE, O1, O2, O3, O4, O5, Agg, Comm
from .world import World

__all__ = ["BASELINES", "Policy", "evaluate", "make_baseline"]

BASELINES: tuple[str, ...] = ("random", "fixed-fanout", "greedy", "fixed-budget", "threshold", "always-continue", "oracle")

class RandomPolicy(Policy):
    """Uniform over the legal actions (seeded)."""

    name = "random"

    def __init__(self, config: EnvConfig, seed: int = 0) -> None:
        super().__init__(config)
        self.seed = int(seed)
        self.rng = np.random.default_rng(seed)

    def start_episode(self, seed: int) -> None:
        """Draw this episode's actions from a stream of (policy seed, episode seed) alone."""
        self.rng = np.random.default_rng([self.seed, int(seed)])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        g = self.rng.random(mask.shape) * mask
        return g.argmax(1)


class AdaptivePolicy(BudgetPolicy):
    """Hand-written evidence rule (the learnability check; not a contract baseline).

    O1/O2 after round 0: a subtask whose aggregate leads by 1 vote and has no verifier
    accept gets one ``verifier``; a contested one (lead < 1, or a reject) gets two solvers;
    a settled one nothing. O4: ``verifier``. O5: stop when every subtask is settled
    (lead ≥ 2 or accepts > rejects), or when every aggregate leads and its confidence is
    ≥ ``conf_easy`` on tasks hinted easy (``h < easy_below``), ≥ ``conf_hard`` otherwise.
    """

    name = "adaptive"

    def __init__(self, config: EnvConfig, *, easy_below: float = 0.5, conf_easy: float = 0.6, conf_hard: float = 0.9) -> None:
        super().__init__(config, name="adaptive")
        self.easy_below, self.conf_easy, self.conf_hard = easy_below, conf_easy, conf_hard
        names = [p.name for p in config.profiles]
        self.verifier = names.index("verifier") if "verifier" in names else None

    def stop_now(self, obs: np.ndarray) -> np.ndarray:
        easy = obs[:, _HINT] < self.easy_below
        all_settled = obs[:, _SETTLED] >= 1.0 - 1e-6
        leads = np.rint(obs[:, _MINMARG] * 3) >= 1
        bar = np.where(easy, self.conf_easy, self.conf_hard)
        return all_settled | (leads & (obs[:, _MINCONF] >= bar))

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        obs = self.features(obs, world)
        h, ph = self.action_heads, self._phase(obs)
        a = self.base(obs, mask)
        if self.verifier is None:
            return self._with_stop(obs, mask, a)
        rnd0 = obs[:, _RND] == 0
        margin = np.rint((obs[:, _TOP] - obs[:, _SEC]) * 3)
        acc, rej = obs[:, _ACC], obs[:, _REJ]
        settled = (margin >= 2) | (acc > rej)
        verify = (margin == 1) & (acc == 0) & (rej == 0)
        f = np.where(rnd0, 1, np.where(settled, 0, np.where(verify, 1, 2)))
        a = np.where(ph == O1, self._legal_or(mask, h.action(O1, f), h.action(O1)), a)
        # O2: the verifier when the subtask only needs a check (same rule, seen from O2)
        want_v = (ph == O2) & ~rnd0 & verify & (obs[:, _PF] * self.cfg.max_fanout <= 1.5)
        a = np.where(want_v, self._legal_or(mask, np.full(len(a), h.action(O2, self.verifier)), a), a)
        a = np.where(ph == O4, h.action(O4, Agg.VERIFIER), a)
        return self._with_stop(obs, mask, a)


class FanoutPolicy(Policy):
    """Fan out ``fanout`` specialists per subtask in one round, vote, stop."""

    name = "fixed-fanout"

    def __init__(self, config: EnvConfig, fanout: int = 3) -> None:
        super().__init__(config)
        if not 1 <= fanout <= config.max_fanout:
            raise ConfigError(f"fanout={fanout} is invalid; use 1..max_fanout={config.max_fanout}")
        self.fanout = fanout

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        obs = self.features(obs, world)
        a = self.base(obs, mask)
        ph = self._phase(obs)
        a = np.where(ph == O1, self._legal_or(mask, np.full(len(a), self.action_heads.action(O1, self.fanout)), a), a)
        return np.where(ph == O5, self.action_heads.stop, a)


class GreedyPolicy(Policy):
    """Cheapest capable delegation: the cheapest profile with ``p(success) ≥ capable`` at the
    hinted difficulty (else the most capable), no sharing, majority, stop after one round."""

    name = "greedy"

    def __init__(self, config: EnvConfig, capable: float = 0.7) -> None:
        super().__init__(config)
        self.capable = capable
        prof = [p for p in config.profiles]
        self.cost = np.array([p.tokens_in + p.tokens_out for p in prof])
        self.skill = np.array([p.skill for p in prof])
        self.solver = np.array([not p.verifier for p in prof])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        c = self.cfg
        obs = self.features(obs, world)
        a = self.base(obs, mask)
        ph = self._phase(obs)
        typ = obs[:, _TYPE:_TYPE + 3].argmax(1)
        h = obs[:, _HINT]
        p = 1 / (1 + np.exp(-(self.skill[:, typ].T - c.difficulty_scale * (h[:, None] - c.difficulty_offset))))  # (B, P)
        ok = (p >= self.capable) & self.solver[None, :]
        cost = np.where(ok, self.cost[None, :], np.inf)
        pick = np.where(ok.any(1), cost.argmin(1), np.where(self.solver[None, :], p, -1).argmax(1))
        a = np.where(ph == O2, self.action_heads.action(O2) + pick, a)
        a = np.where(ph == O3, self.action_heads.action(O3, Comm.NONE), a)
        return np.where(ph == O5, self.action_heads.stop, a)


class AlwaysContinue(BudgetPolicy):
    """Continue until the last round."""

    def __init__(self, config: EnvConfig) -> None:
        super().__init__(config, name="always-continue")


def make_baseline(name: str, config: EnvConfig | None = None, **params: Any) -> Policy:
    """A baseline policy by name (``BASELINES``, plus ``adaptive``); ``params`` go to its constructor.

    >>> make_baseline("threshold", EnvConfig.small(), threshold=0.8).threshold
    0.8
    """
    from .oracle import OraclePolicy

    cfg = config if config is not None else EnvConfig.default()
    if name == "fixed-budget" and not params:
        params = {"rounds": 2}
    if name == "threshold" and not params:
        params = {"threshold": 0.8}
    table: dict[str, Any] = {
        "random": RandomPolicy,
        "fixed-fanout": FanoutPolicy,
        "greedy": GreedyPolicy,
        "fixed-budget": lambda c, **kw: BudgetPolicy(c, name="fixed-budget", **kw),
        "threshold": lambda c, **kw: BudgetPolicy(c, name="threshold", **kw),
        "always-continue": AlwaysContinue,
        "oracle": OraclePolicy,
        "adaptive": AdaptivePolicy,
    }
    _check_params(name, params)
    if name not in table:
        from ..errors import did_you_mean

        hint = did_you_mean(name, list(table), prefix="; ")
        raise ConfigError(f"unknown baseline {name!r}{hint} (known: {', '.join(table)})")
    try:
        return table[name](cfg, **params)
    except TypeError as exc:
        raise ConfigError(f"bad parameters for baseline {name!r}: {exc}") from None


#: Parameters a baseline accepts on the command line: (type, lowest, highest).
_PARAMS: dict[str, tuple[type, float, float]] = {
    "rounds": (int, 1, 1e9), "decisions": (int, 1, 1e12), "tokens": (float, 0.0, float("inf")),
    "threshold": (float, 0.0, 1.0), "fanout": (int, 1, 1e9), "capable": (float, 0.0, 1.0), "seed": (int, 0, 2**63 - 1),
    "easy_below": (float, 0.0, 1.0), "conf_easy": (float, 0.0, 1.0), "conf_hard": (float, 0.0, 1.0),
}


def _check_params(name: str, params: dict[str, Any]) -> None:
    """Type- and range-check baseline parameters (they often come from ``--param k=v``)."""
    for k, v in params.items():
        spec = _PARAMS.get(k)
        if spec is None:
            if k == "heads":
                continue
            continue  # unknown names are reported by the constructor (TypeError → ConfigError below)
        typ, lo, hi = spec
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and (typ is float or float(v).is_integer())
        if not ok or not lo <= float(v) <= hi:
            kind = "an integer" if typ is int else "a number"
            raise ConfigError(f"baseline {name!r}: {k}={v!r} is invalid; use {kind} in [{lo:g}, {hi:g}]")
        params[k] = typ(v)


def evaluate(config: EnvConfig, policy: Policy, seeds: Iterable[int], *, chunk: int = 1024) -> dict[str, np.ndarray]:
    """Run ``policy`` on each seed (batched, lock-step) and return per-episode arrays.

    Keys: success, tokens, critical_steps, wall_clock_s, decisions, rounds, return, difficulty,
    safety_events, seed. Same (config, seeds, policy) → same numbers.

    >>> cfg = EnvConfig.small()
    >>> r = evaluate(cfg, make_baseline("threshold", cfg), range(32))
    >>> r["success"].shape, bool(np.isfinite(r["return"]).all())
    ((32,), True)
    """
    seeds_arr = np.fromiter((int(s) for s in seeds), dtype=np.int64)
    parts = []
    for lo in range(0, len(seeds_arr), chunk):
        s = seeds_arr[lo:lo + chunk]
        w = World(config, len(s))
        w.reset_rows(np.arange(len(s)), s.astype(np.uint64))
        while (w.phase < DONE).any():
            obs, mask = w.obs(), w.mask()
            a = policy.act_batch(obs, mask, w)
            live = w.phase < DONE
            a = np.where(live, a, 0)
            w.step(a)
        parts.append({**w.episode_summary(), "seed": s})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]} if parts else {}


_ = (O2, O3, O4)
