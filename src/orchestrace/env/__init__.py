"""Orchestration environments (gymnasium): O1–O5 decisions, simulated workers, replay.

Importing this package registers the versioned ids (see :data:`ENV_IDS`)::

    orchestrace/Orchestrate-v0             the default configuration (the main job trains on it)
    orchestrace/Orchestrate-small-v0       a tiny configuration for tests
    orchestrace/Orchestrate-industrial-v0  the industrial envelope (≈1,000 sub-agents, 20,000+ steps)
    orchestrace/Orchestrate-v1             v1: shared misconceptions, a price per episode, the evidence
                                           observation — the world the main claim is made in
    orchestrace/Orchestrate-small-v1       v1 at test size
    orchestrace/Orchestrate-industrial-v1  v1 industrial (price scaled so tokens do not swamp the return)

v0 ids stay reproducible byte for byte; v1 changes are listed in ``docs/env-v1.md``.

The world model is documented in :mod:`orchestrace.env.world` (the simulation) and
:mod:`orchestrace.env.observe` (what a policy sees); the learner contract is
:mod:`orchestrace.env.layout` (names, heads, the typed :class:`~orchestrace.env.layout.Layout`)
and :class:`BatchedEnv` (the three verbs every batched env offers a learner); see ``docs/seam.md``.

>>> import gymnasium as gym
>>> import orchestrace.env
>>> env = gym.make("orchestrace/Orchestrate-small-v0")
>>> obs, info = env.reset(seed=0)
>>> obs["obs"].shape
(46,)
"""

from __future__ import annotations

from ..errors import require

require("gymnasium", extra="env")

from .baselines import BASELINES, Policy, evaluate, make_baseline  # noqa: E402
from .batch import BatchedEnv, BatchEnv, EnvMaker, local_batch_env  # noqa: E402
from .config import EnvConfig, WorkerProfile  # noqa: E402
from .env import OrchestrationEnv  # noqa: E402
from .oracle import OraclePolicy  # noqa: E402
from .replay import (  # noqa: E402
    ChangeDelegation,
    DropMessage,
    EpisodeResult,
    RemoveAgent,
    StopAt,
    SwapAggregation,
    agent_value_function,
    message_value_function,
    replay,
    replay_many,
    stop_values,
)
from .workers import SimulatedWorkers, WorkerBackend, WorkerResult  # noqa: E402

__all__ = [
    "BASELINES",
    "ENV_IDS",
    "BatchEnv",
    "BatchedEnv",
    "ChangeDelegation",
    "DropMessage",
    "EnvConfig",
    "EnvMaker",
    "EpisodeResult",
    "OraclePolicy",
    "OrchestrationEnv",
    "Policy",
    "RemoveAgent",
    "SimulatedWorkers",
    "StopAt",
    "SwapAggregation",
    "WorkerBackend",
    "WorkerProfile",
    "WorkerResult",
    "agent_value_function",
    "config_for",
    "evaluate",
    "local_batch_env",
    "make_baseline",
    "message_value_function",
    "replay",
    "replay_many",
    "stop_values",
]

#: Versioned environment ids and their configurations.
ENV_IDS: dict[str, str] = {
    "orchestrace/Orchestrate-v0": "default",
    "orchestrace/Orchestrate-small-v0": "small",
    "orchestrace/Orchestrate-industrial-v0": "industrial",
    "orchestrace/Orchestrate-v1": "default_v1",
    "orchestrace/Orchestrate-small-v1": "small_v1",
    "orchestrace/Orchestrate-industrial-v1": "industrial_v1",
}


def config_for(env_id: str) -> EnvConfig:
    """The :class:`EnvConfig` of a registered id.

    >>> config_for("orchestrace/Orchestrate-small-v0").name
    'small'
    """
    from ..errors import ConfigError

    if env_id not in ENV_IDS:
        from ..errors import did_you_mean

        hint = did_you_mean(env_id, list(ENV_IDS), prefix="; ")
        raise ConfigError(f"unknown environment id {env_id!r}{hint} (known: {', '.join(ENV_IDS)})")
    return getattr(EnvConfig, ENV_IDS[env_id])()


def _make(env_id: str, **kwargs):  # gymnasium entry point
    cfg = kwargs.pop("config", None) or config_for(env_id)
    return OrchestrationEnv(cfg, env_id=env_id, **kwargs)


def _register() -> None:
    import functools

    import gymnasium as gym

    for env_id in ENV_IDS:
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=functools.partial(_make, env_id), nondeterministic=False)


_register()
