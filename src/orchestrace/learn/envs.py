"""The learner's view of :mod:`orchestrace.env`: which world, its heads, one batched env.

- ``env_config_for(env_id, overrides)`` — the :class:`~orchestrace.env.EnvConfig` of a
  registered id (short names ``small``/``default``/``industrial``/``default-v1``… accepted)
  with ``FIELD=VALUE`` overrides (the CLI's ``--set``);
- ``env_heads(cfg)`` — ``(obs_dim, heads)``: each decision's ``[start, stop)`` range in the
  flat action space, from :mod:`orchestrace.env.layout`'s head order;
- ``make_batch_env(cfg, B)`` — the environment's own :class:`~orchestrace.env.BatchEnv`
  with ``auto_reset=False`` (one whole episode per slot), whose ``stop_values()`` is the
  replay counterfactual "stop at this decision" — or, inside ``with batch_envs_from(f):``,
  ``f(cfg, B)`` (``train --ray N`` passes Ray-sharded rows this way; the run's config and
  checkpoint do not know where the rows were stepped).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["batch_envs_from", "env_config_for", "env_heads", "make_batch_env"]

_FACTORY: contextvars.ContextVar[Callable[[Any, int], Any] | None] = contextvars.ContextVar(
    "orchestrace_batch_env_factory", default=None)


@contextlib.contextmanager
def batch_envs_from(factory: Callable[[Any, int], Any]) -> Iterator[None]:
    """Within the block, :func:`make_batch_env` returns ``factory(env_config, batch_size)``.

    >>> with batch_envs_from(lambda cfg, b: ("mine", b)):
    ...     make_batch_env("small", 4)[0]
    ('mine', 4)
    """
    token = _FACTORY.set(factory)
    try:
        yield
    finally:
        _FACTORY.reset(token)


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
    from ..vocab import Decision

    cfg = env_config_for(cfg)
    o = np.cumsum((0,) + tuple(cfg.head_sizes))
    order = (Decision.O1, Decision.O2, Decision.O3, Decision.O4, Decision.O5)
    return int(cfg.obs_dim), {d: (int(o[h]), int(o[h + 1])) for h, d in enumerate(order)}


def make_batch_env(cfg: Any, batch_size: int) -> tuple[Any, Any]:
    """``(BatchEnv, EnvConfig)``: one whole episode per slot (no auto-reset)."""
    from ..env import BatchEnv

    cfg = env_config_for(cfg)
    factory = _FACTORY.get()
    if factory is not None:
        return factory(cfg, batch_size), cfg
    return BatchEnv(cfg, batch_size, auto_reset=False), cfg
