"""The gymnasium environment: the agent is the orchestrator; one step is one O1–O5 decision.

The world model, observation layout and reward are documented in
:mod:`orchestrace.env.world`. The return of an episode is

    G = success_reward·success − token_cost·tokens − time_cost·wall_clock − safety_cost·safety_events

paid as per-step costs (each step's tokens, simulated seconds and safety events) plus the
success reward on the final (stop) step, so ``Σ_t r_t = G`` exactly.

>>> env = OrchestrationEnv(EnvConfig.small(), record_trace=True)
>>> obs, info = env.reset(seed=3)
>>> obs["obs"].shape, info["decision"].code
((46,), 'O1')
>>> done = False
>>> while not done:
...     legal = np.flatnonzero(obs["action_mask"])
...     obs, r, done, trunc, info = env.step(int(legal[-1]) if info["decision"].code != "O5" else int(legal[0]))
>>> sorted(k for k in ("success", "tokens", "trace", "return") if k in info)
['return', 'success', 'tokens', 'trace']
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core.trace import Trace
from ..errors import IllegalActionError
from ..vocab import Decision
from ._trace import DECISION_KINDS, action_labels, build_trace
from .config import EnvConfig
from .layout import DONE
from .world import World

__all__ = ["OrchestrationEnv"]


#: Observations are clipped to [OBS_LOW, OBS_HIGH] (never reached by the world's own features:
#: the bound makes the observation space a bounded Box, as Gymnasium's checker asks).
OBS_LOW, OBS_HIGH = -1.0, 1000.0


class OrchestrationEnv(gym.Env):
    """Gymnasium env over one :class:`~orchestrace.env.world.World` row, with a trace per episode.

    ``workers`` plugs a :class:`~orchestrace.env.workers.WorkerBackend` (e.g. LLM workers)
    in place of the simulated ones. ``record_trace=True`` builds the episode's trace
    (``info["trace"]`` at the end, :meth:`trace`); it is off by default (opt-in: building a
    trace costs more than the episode).

    The action space is a plain ``Discrete(n_actions)``; the legal actions are
    ``obs["action_mask"]`` (``MultiBinary``), so ``env.action_space.sample(mask=obs["action_mask"])``
    draws a legal one, the Gymnasium way. A masked action: ``illegal_action="resample"``
    (default, so that any action of the space is accepted, as Gymnasium's checker requires)
    replaces it by a legal action drawn from ``np_random``, warns once, and reports it in
    ``info["illegal_action"]``; ``"raise"`` raises :class:`IllegalActionError` naming the legal ones.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        config: EnvConfig | None = None,
        *,
        workers: Any = None,
        record_trace: bool = False,
        env_id: str = "orchestrace/Orchestrate-v0",
        policy_name: str | None = None,
        illegal_action: str = "resample",
        env_set: tuple[str, ...] | list[str] = (),
    ) -> None:
        if illegal_action not in ("raise", "resample"):
            from ..errors import ConfigError

            raise ConfigError(f"illegal_action={illegal_action!r} is invalid; use 'raise' or 'resample'")
        self.illegal_action = illegal_action
        #: the ``--set`` overrides this config carries (recorded in every trace's ``meta``)
        self.env_set = tuple(env_set)
        self.config = cfg = config if config is not None else EnvConfig.default()
        self.world = World(cfg, 1)
        self.record_trace = record_trace
        self.env_id = env_id
        self.policy_name = policy_name
        if workers is not None:
            from .workers import BackendAdapter

            # a backend that answers the world's per-attempt override directly (e.g. the LLM
            # backend, which batches a fan-out's attempts concurrently) plugs in as is
            self.world.backend = workers if hasattr(workers, "override") else BackendAdapter(workers, cfg)
        self.labels = action_labels(cfg)
        self.observation_space = spaces.Dict({
            "obs": spaces.Box(OBS_LOW, OBS_HIGH, (cfg.obs_dim,), np.float32),
            "action_mask": spaces.MultiBinary(cfg.n_actions),
        })
        self.action_space = spaces.Discrete(cfg.n_actions)
        self._warned = False
        self.heads: dict[Decision, tuple[int, int]] = cfg.layout.heads.by_decision()
        self._seed = 0
        self._pending_logprob: float | None = None
        self._logprobs: list[float | None] = []
        self._alts: list[tuple[str, ...]] = []
        self._mask = np.zeros(cfg.n_actions, bool)

    # -- helpers -------------------------------------------------------------------------
    def set_behaviour_logprob(self, logprob: float | None) -> None:
        """Record the behaviour log-probability of the *next* action in its decision event."""
        self._pending_logprob = None if logprob is None else float(logprob)

    def legal_actions(self) -> list[int]:
        """Indices of the legal actions now."""
        return [int(i) for i in np.flatnonzero(self._mask)]

    @property
    def decision(self) -> Decision | None:
        """The sub-decision due now (None when the episode is over)."""
        ph = int(self.world.phase[0])
        return None if ph == DONE else DECISION_KINDS[ph]

    def _observe(self) -> dict[str, np.ndarray]:
        self._mask = self.world.mask()[0]
        return {"obs": np.clip(self.world.obs()[0], OBS_LOW, OBS_HIGH), "action_mask": self._mask.astype(np.int8)}

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a task; ``seed`` fixes it (same seed, same task and same worker outcomes)."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, 2**62))
        self._seed = int(seed)
        self.world.reset_rows(np.zeros(1, np.int64), np.array([self._seed], dtype=np.uint64))
        self.world.log = [] if self.record_trace else None
        self._logprobs, self._alts = [], []
        self._pending_logprob = None
        obs = self._observe()
        return obs, {"decision": self.decision, "seed": self._seed}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Take one decision. Raises :class:`IllegalActionError` for a masked action."""
        w = self.world
        if w.phase[0] == DONE:
            raise IllegalActionError("the episode is over; call reset() before step()")
        a = int(action)
        replaced = None
        if self.illegal_action == "resample" and not (0 <= a < self.config.n_actions and self._mask[a]):
            replaced, a = a, int(self.np_random.choice(np.flatnonzero(self._mask)))
            if not self._warned:
                import warnings

                self._warned = True
                warnings.warn(f"action {replaced} is not legal here; a legal action was drawn instead (reported in "
                              "info['illegal_action']; pass illegal_action='raise' to make this an error, or sample "
                              "with action_space.sample(mask=obs['action_mask']))", UserWarning, stacklevel=2)
        if not (0 <= a < self.config.n_actions) or not self._mask[a]:
            legal = ", ".join(f"{i}={self.labels[i]}" for i in self.legal_actions())
            shown = self.labels[a] if 0 <= a < len(self.labels) else "out of range"
            dec = self.decision
            assert dec is not None  # the phase is not DONE (checked above)
            raise IllegalActionError(
                f"action {a} ({shown}) is not legal at this {dec.code} "
                f"({dec.value}) decision; legal actions: {legal}"
            )
        if self.record_trace:
            self._alts.append(tuple(self.labels[i] for i in self.legal_actions()))
            self._logprobs.append(self._pending_logprob)
        self._pending_logprob = None
        r = float(w.step(np.array([a], np.int64))[0])
        obs = self._observe()
        done = bool(w.phase[0] == DONE)
        info: dict[str, Any] = {"decision": self.decision}
        if replaced is not None:
            info["illegal_action"] = replaced
        if done:
            info.update(self.summary())
            if self.record_trace:
                info["trace"] = self.trace()
        return obs, r, done, False, info

    def summary(self) -> dict[str, Any]:
        """End-of-episode numbers: success, tokens, critical_steps, wall_clock_s, decisions, …"""
        out: dict[str, Any] = {k: v[0].item() for k, v in self.world.episode_summary().items()}
        out["critical_steps"] = float(out["critical_steps"])
        out["seed"] = self._seed
        return out

    def trace(self) -> Trace:
        """The trace of the finished (or running) episode."""
        w = self.world
        if w.log is None:
            raise IllegalActionError("this env was built with record_trace=False; no trace is kept")
        n = int(w.n[0])
        return build_trace(
            self.config, w.log, seed=self._seed, n=n, types=w.typ[0, :n], parents=w.par[0, :n],
            success=bool(w.success[0]), summary=self.summary(), env_id=self.env_id, policy=self.policy_name,
            logprobs=self._logprobs, alternatives=self._alts, env_set=self.env_set,
            price=float(w.price[0]) if self.config.price_max > self.config.price_min else None,
        )
