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

from ..trainers import train
from ..trainers.config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..policies.checkpoint import LearnedPolicy

__all__ = ["TrainConfig", "evaluate", "load_policy", "run_demo", "train"]


def load_policy(path: str | Path, *, device: str = "cpu", greedy: bool = True) -> LearnedPolicy:
    """Load a trained policy (run directory or ``policy.pt``) for acting in an environment.

    The result has ``.act(obs_dict, info) -> int`` and ``.act_batch(obs, mask) -> actions``
    like the environment's baselines. A corrupted or mismatched file raises
    :class:`~orchestrace.errors.CheckpointError`.
    """
    from ..policies.checkpoint import load_policy as _load

    return _load(path, device=device, greedy=greedy)


def evaluate(*args: Any, **kwargs: Any) -> Any:
    """Compare a learned policy with every baseline and the oracle (see :func:`orchestrace.evaluation.simulated.evaluate`)."""
    from ..evaluation.simulated import evaluate as _evaluate

    return _evaluate(*args, **kwargs)


def run_demo(*args: Any, **kwargs: Any) -> Any:
    """The main job: train, evaluate on held-out seeds, write a results folder (see :mod:`orchestrace.evaluation.demo`)."""
    from ..evaluation.demo import run_demo as _run

    return _run(*args, **kwargs)
