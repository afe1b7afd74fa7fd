"""The base of every hand-written orchestrator: :class:`Policy` (the shared O1–O4 base
heuristic, the legal-action fallback, the summary features the rules read) and
:class:`BudgetPolicy` (the base heuristic plus a stopping rule on rounds, decisions, tokens or
aggregate confidence). The baselines (:mod:`orchestrace.env.baselines`) and the oracle
(:mod:`orchestrace.env.oracle`) both build on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ConfigError
from .config import EnvConfig
from .layout import O1, O2, O3, O4, O5, Agg, Comm, S, due_phase
from .world import World

__all__ = ["BudgetPolicy", "Policy"]

# summary-observation features the rules read (named in orchestrace.env.layout)
_HINT, _RND, _TOK, _DEC, _MINMARG, _MINCONF = S.HINT, S.ROUND, S.TOKENS, S.DECISIONS, S.MIN_MARGIN, S.MIN_CONF
_TYPE, _TOP, _SEC, _ACC, _REJ, _PF, _SETTLED = (S.FOCUS_TYPE, S.FOCUS_TOP, S.FOCUS_SECOND, S.FOCUS_ACCEPTS,
                                                S.FOCUS_REJECTS, S.PENDING_FANOUT, S.SETTLED)


class Policy:
    """Base class: subclasses implement :meth:`act_batch`."""

    name = "policy"

    def __init__(self, config: EnvConfig) -> None:
        self.cfg = config
        #: the layout's action heads (``action_heads.action(O2, k)``, ``.stop``, ``.cont``)
        self.action_heads = config.layout.heads
        names = [p.name for p in config.profiles]
        strong = names.index("strong") if "strong" in names else 0
        self.spec = np.array([names.index(f"spec_{t}") if f"spec_{t}" in names else strong
                              for t in ("retrieve", "reason", "code")])
        self._env: Any = None
        self.rng = np.random.default_rng(0)
        self._summary_dim = config.layout.summary.dim

    def bind(self, env: Any) -> Policy:
        """Attach a single env (policies that look at the world, like the oracle, need it)."""
        self._env = env.unwrapped if hasattr(env, "unwrapped") else env
        return self

    def start_episode(self, seed: int) -> None:
        """Called before the episode with this task seed by runners that want every episode to
        depend on its seed alone (``orchestrace env run``, sharded or not); a no-op for the
        deterministic rules, a re-seed for ``random``."""

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        """One action for a single env's observation dict."""
        world = self._env.world if self._env is not None else None
        a = self.act_batch(obs["obs"][None, :], obs["action_mask"][None, :].astype(bool), world)
        return int(a[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        raise NotImplementedError

    # -- shared pieces ------------------------------------------------------------------------
    def features(self, obs: np.ndarray, world: World | None) -> np.ndarray:
        """The summary features the rules read: from the world when given (any observation mode),
        else ``obs`` itself, which must then be a summary observation."""
        if world is not None:
            return world.summary_obs()
        if obs.shape[1] != self._summary_dim:
            raise ConfigError(f"{self.name}: a hand-written rule reads the summary statistics, but this "
                              f"{obs.shape[1]}-wide observation is not a summary one; pass the world "
                              "(act_batch(obs, mask, world)) or bind(env) first")
        return obs

    def _phase(self, obs: np.ndarray) -> np.ndarray:
        return due_phase(obs)

    def _legal_or(self, mask: np.ndarray, want: np.ndarray, fallback: np.ndarray) -> np.ndarray:
        ar = np.arange(mask.shape[0])
        ok = mask[ar, np.clip(want, 0, mask.shape[1] - 1)]
        fb_ok = mask[ar, np.clip(fallback, 0, mask.shape[1] - 1)]
        first = mask.argmax(1)
        return np.where(ok, want, np.where(fb_ok, fallback, first))

    def base(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The base heuristic for O1–O4 (O5 → continue when legal); (B,) actions."""
        h, ph = self.action_heads, self._phase(obs)
        rnd0 = obs[:, _RND] == 0
        margin = np.rint((obs[:, _TOP] - obs[:, _SEC]) * 3)
        f = np.where(rnd0, 1, np.where(margin < 1, 2, np.where(margin < 2, 1, 0)))
        typ = obs[:, _TYPE:_TYPE + 3].argmax(1)
        B = len(ph)
        ar = np.arange(B)
        want = np.stack([h.action(O1) + f, h.action(O2) + self.spec[typ], np.full(B, h.action(O3, Comm.SUMMARY)),
                         np.full(B, h.action(O4, Agg.MAJORITY)), np.full(B, h.cont)])[np.minimum(ph, O5), ar]
        fallback = np.where(ph == O1, h.action(O1), np.where(ph == O5, h.stop, want))
        return self._legal_or(mask, want, fallback)

    def stop_now(self, obs: np.ndarray) -> np.ndarray:
        """(B,) bool: does this policy stop at an O5 decision?"""
        return np.zeros(obs.shape[0], bool)

    def _with_stop(self, obs: np.ndarray, mask: np.ndarray, a: np.ndarray) -> np.ndarray:
        ph = self._phase(obs)
        stop = (ph == O5) & (self.stop_now(obs) | ~mask[:, self.action_heads.cont])
        return np.where(stop, self.action_heads.stop, a)


class BudgetPolicy(Policy):
    """Base heuristic + a stopping rule on rounds, decisions, tokens or aggregate confidence."""

    def __init__(self, config: EnvConfig, *, rounds: int | None = None, decisions: int | None = None,
                 tokens: float | None = None, threshold: float | None = None, name: str = "fixed-budget") -> None:
        super().__init__(config)
        self.rounds, self.decisions, self.tokens, self.threshold = rounds, decisions, tokens, threshold
        self.name = name

    def stop_now(self, obs: np.ndarray) -> np.ndarray:
        c = self.cfg
        s = np.zeros(obs.shape[0], bool)
        if self.rounds is not None:
            s |= np.rint(obs[:, _RND] * c.max_rounds) + 1 >= self.rounds
        if self.decisions is not None:
            s |= obs[:, _DEC] * 12.0 * c.max_rounds >= self.decisions - 1e-6
        if self.tokens is not None:
            s |= obs[:, _TOK] * c.token_scale >= self.tokens
        if self.threshold is not None:
            s |= obs[:, _MINCONF] >= self.threshold
        return s

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: World | None = None) -> np.ndarray:
        f = self.features(obs, world)
        return self._with_stop(f, mask, self.base(f, mask))
