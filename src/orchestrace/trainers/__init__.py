"""Trainers: REINFORCE / GRPO / PPO on the simulator (cleanrl-style, one file each), the fitted stop,
and the fitted-Q fits of the gate and the team policy from logged runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from .config import TrainConfig

__all__ = ["train"]


def train(cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True, envs: Any = None) -> Any:
    """Train ``cfg.algo`` on ``cfg.env`` and write the run into ``out``; returns a RunResult.

    The algorithms live in :mod:`.reinforce`, :mod:`.grpo` and :mod:`.ppo` (and the fitted stop
    in :mod:`.fitted_stop`; ``orchestrace.learn.train`` is this function); ``resume`` continues the run
    in ``out`` bit-exactly (``cfg.steps`` is the new total). ``envs`` (an :data:`orchestrace.env.batch.EnvMaker`, e.g.
    :class:`orchestrace.scale.RayEnvs`) makes the run's batched env — every algorithm and the
    fitted stop step what it makes; the default is the local ``BatchEnv``.

    >>> import tempfile, torch; torch.set_num_threads(1)
    >>> from orchestrace.learn import TrainConfig, load_policy
    >>> cfg = TrainConfig(env="small", steps=2, episodes_per_step=8, group_size=4,
    ...                   warm_start_episodes=16, warm_start_steps=5, eval_every=0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     res = train(cfg, d, progress=False)
    ...     pol = load_policy(d)
    >>> res.updates, "charts/episodic_return" in res.last_row, pol.name
    (2, True, 'learned')
    """
    from .common import require_learn

    require_learn()
    from . import grpo, ppo, reinforce

    if cfg.stop_update == "fitted":  # the stop gate by regression, the heads fixed (any algo)
        from . import fitted_stop

        return fitted_stop.train(cfg, out, resume=resume, progress=progress, envs=envs)
    module = {"reinforce": reinforce, "grpo": grpo, "ppo": ppo}[cfg.algo]
    return module.train(cfg, out, resume=resume, progress=progress, envs=envs)
