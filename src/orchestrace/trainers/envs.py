"""The learner's view of :mod:`orchestrace.env`: which world, its heads, one batched env.

- ``env_config_for(env_id, overrides)`` — the :class:`~orchestrace.env.EnvConfig` of a
  registered id (short names ``small``/``default``/``industrial``/``default-v1``… accepted)
  with ``FIELD=VALUE`` overrides (the CLI's ``--set``);
- ``env_heads(cfg)`` — ``(obs_dim, heads)``: each decision's ``[start, stop)`` range in the
  flat action space, read from the configuration's layout (``EnvConfig.layout.heads``);
- ``make_batch_env(cfg, B, envs)`` — the run's batched env
  (:class:`~orchestrace.env.batch.BatchedEnv`): ``envs(cfg, B)`` when the run was given an
  :data:`~orchestrace.env.batch.EnvMaker` (``train --ray N`` passes Ray-sharded rows this way;
  the run's config and checkpoint do not know where the rows were stepped), else the
  environment's own :class:`~orchestrace.env.BatchEnv` with ``auto_reset=False`` (one whole
  episode per slot), whose ``stop_values()`` is the replay counterfactual "stop at this decision".
"""

from __future__ import annotations

from typing import Any

__all__ = ["env_config_for", "env_heads", "make_batch_env"]


def env_config_for(env_id: Any, overrides: tuple[str, ...] | list[str] = ()) -> Any:
    """The EnvConfig of a registered id (or an EnvConfig, returned as is) with ``overrides``.

    >>> env_config_for("small", ["max_rounds=2"]).max_rounds
    2
    """
    from ..env import EnvConfig, config_for
    from .config import resolve_env_id

    cfg = env_id if isinstance(env_id, EnvConfig) else config_for(resolve_env_id(env_id))
    return cfg.with_overrides(list(overrides))


def env_heads(cfg: Any) -> tuple[int, dict[Any, tuple[int, int]]]:
    """``(obs_dim, heads)`` of an environment configuration (or registered id).

    >>> od, heads = env_heads("small"); od, heads[max(heads)]
    (46, (17, 19))
    """
    cfg = env_config_for(cfg)
    return int(cfg.obs_dim), cfg.layout.heads.by_decision()


def make_batch_env(cfg: Any, batch_size: int, envs: Any = None) -> tuple[Any, Any]:
    """``(batched env, EnvConfig)``: ``envs(cfg, batch_size)`` or a local BatchEnv (no auto-reset).

    >>> benv, cfg = make_batch_env("small", 4); type(benv).__name__, cfg.name
    ('BatchEnv', 'small')
    """
    from ..env.batch import local_batch_env

    cfg = env_config_for(cfg)
    return (envs or local_batch_env)(cfg, batch_size), cfg
