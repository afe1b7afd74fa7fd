"""Learning to orchestrate with an explicit learned stop (O5): policy, trainers, evaluation, demo.

Needs the ``learn`` extra (torch, gymnasium); torch is imported only when a function that
needs it is called, so ``import orchestrace.learn`` stays light.

============================  ===============================================================
:class:`TrainConfig`          hyper-parameters (frozen dataclass; drives the CLI too)
:func:`train`                 run REINFORCE / GRPO / PPO (``cfg.algo``) into a run directory
:func:`evaluate`              learned policy vs every baseline and the oracle, held-out seeds
:func:`load_policy`           a trained policy from a run directory or ``.pt`` file
:func:`run_demo`              the main job: train on the default env, evaluate, write results
============================  ===============================================================

>>> from orchestrace.learn import TrainConfig
>>> TrainConfig(algo="reinforce", steps=2).algo
'reinforce'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from .checkpoint import LearnedPolicy

__all__ = ["TrainConfig", "evaluate", "load_policy", "run_demo", "train"]


def load_policy(path: str | Path, *, device: str = "cpu", greedy: bool = True) -> LearnedPolicy:
    """Load a trained policy (run directory or ``policy.pt``) for acting in an environment.

    The result has ``.act(obs_dict, info) -> int`` and ``.act_batch(obs, mask) -> actions``
    like the environment's baselines. A corrupted or mismatched file raises
    :class:`~orchestrace.errors.CheckpointError`.
    """
    from .checkpoint import load_policy as _load

    return _load(path, device=device, greedy=greedy)


def train(cfg: TrainConfig, out: str | Path, *, resume: bool = False, progress: bool = True, envs: Any = None) -> Any:
    """Train ``cfg.algo`` on ``cfg.env`` and write the run into ``out``; returns a RunResult.

    The algorithms live in :mod:`.reinforce`, :mod:`.grpo` and :mod:`.ppo` (and the fitted stop
    in :mod:`.fitted_stop`); ``resume`` continues the run in ``out`` bit-exactly (``cfg.steps``
    is the new total). ``envs`` (an :data:`orchestrace.env.batch.EnvMaker`, e.g.
    :class:`orchestrace.scale.RayEnvs`) makes the run's batched env — every algorithm and the
    fitted stop step what it makes; the default is the local ``BatchEnv``.

    >>> import tempfile, torch; torch.set_num_threads(1)
    >>> cfg = TrainConfig(env="small", steps=2, episodes_per_step=8, group_size=4,
    ...                   warm_start_episodes=16, warm_start_steps=5, eval_every=0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     res = train(cfg, d, progress=False)
    ...     pol = load_policy(d)
    >>> res.updates, "charts/episodic_return" in res.last_row, pol.name
    (2, True, 'learned')
    """
    from ._common import require_learn

    require_learn()
    from . import grpo, ppo, reinforce

    if cfg.stop_update == "fitted":  # the stop gate by regression, the heads fixed (any algo)
        from . import fitted_stop

        return fitted_stop.train(cfg, out, resume=resume, progress=progress, envs=envs)
    module = {"reinforce": reinforce, "grpo": grpo, "ppo": ppo}[cfg.algo]
    return module.train(cfg, out, resume=resume, progress=progress, envs=envs)


def evaluate(*args: Any, **kwargs: Any) -> Any:
    """Compare a learned policy with every baseline and the oracle (see :func:`.evaluate.evaluate`)."""
    from .evaluate import evaluate as _evaluate

    return _evaluate(*args, **kwargs)


def run_demo(*args: Any, **kwargs: Any) -> Any:
    """The main job: train, evaluate on held-out seeds, write a results folder (see :mod:`.demo`)."""
    from .demo import run_demo as _run

    return _run(*args, **kwargs)
