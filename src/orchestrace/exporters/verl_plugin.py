"""verl plugin: read orchestrace's precomputed rewards and advantages back inside verl.

Reward hook — point verl's ``custom_reward_function`` at this file; ``compute_score`` gives
each response its turn's credit (``extra_info["reward"]``), ``compute_advantage`` its
precomputed (possibly normalised) advantage (``extra_info["advantage"]``)::

    custom_reward_function.path=<site-packages>/orchestrace/exporters/verl_plugin.py
    custom_reward_function.name=compute_advantage
    algorithm.adv_estimator=orchestrace

Advantage hook — the estimator ``orchestrace`` (:func:`precomputed_advantage`, registered in
verl's advantage-estimator registry by :func:`register`, and automatically when verl loads
this file as its reward function) puts each response's score, which the reward manager
placed on its last token, on every one of its response tokens — no group normalisation,
since the credit is already per turn::

    A[b, t] = (Σ_t' token_level_rewards[b, t']) · response_mask[b, t]

:func:`token_level_advantages` does the same from the rows' ``extra_info`` directly (numpy
arrays or torch tensors), for custom trainers.

>>> import numpy as np
>>> compute_score("orchestrace", "…", "", {"reward": 0.5})
0.5
>>> compute_advantage("orchestrace", "…", "", {"reward": 0.5, "advantage": -1.25})
-1.25
>>> token_level_advantages([{"advantage": 2.0}, {"advantage": -1.0}], np.array([[1, 1, 0], [1, 0, 0]])).tolist()
[[2.0, 2.0, 0.0], [-1.0, -0.0, -0.0]]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ESTIMATOR", "compute_advantage", "compute_score", "precomputed_advantage", "register",
           "token_level_advantages"]

#: Name of the advantage estimator in verl's registry (``algorithm.adv_estimator``).
ESTIMATOR = "orchestrace"


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None,
                  **_: Any) -> float:
    """verl's ``custom_reward_function`` signature: the row's precomputed ``extra_info["reward"]``."""
    return float((extra_info or {}).get("reward", 0.0))


def compute_advantage(data_source: str, solution_str: str, ground_truth: Any,
                      extra_info: Mapping[str, Any] | None = None, **_: Any) -> float:
    """Like :func:`compute_score`, with the row's ``extra_info["advantage"]`` (for the ``orchestrace`` estimator)."""
    return float((extra_info or {}).get("advantage", 0.0))


def precomputed_advantage(token_level_rewards: Any, response_mask: Any, config: Any = None, index: Any = None,
                          **_: Any) -> tuple[Any, Any]:
    """verl advantage estimator: ``(advantages, returns)``, both ``score_b · mask[b, t]`` of shape ``(B, T)``.

    ``token_level_rewards`` is ``(B, T)`` with the response's score on its last token (verl's
    reward managers put it there); ``index`` (the prompt group) is not used.
    """
    score = token_level_rewards.sum(-1, keepdims=True) if isinstance(token_level_rewards, np.ndarray) \
        else token_level_rewards.sum(dim=-1, keepdim=True)  # (B, 1)
    adv = score * response_mask  # (B, T)
    return adv, adv


def register(name: str = ESTIMATOR) -> Any:
    """Add :func:`precomputed_advantage` to verl's advantage-estimator registry (needs verl); returns it."""
    from ..errors import require

    core_algos = require("verl.trainer.ppo.core_algos", extra="verl")
    if core_algos.ADV_ESTIMATOR_REGISTRY.get(name) is not precomputed_advantage:
        core_algos.register_adv_est(name)(precomputed_advantage)
    return precomputed_advantage


def token_level_advantages(extra_info: Sequence[Mapping[str, Any]], response_mask: Any) -> Any:
    """``A[b, t] = advantage_b · mask[b, t]`` — the turn's advantage on each of its response tokens."""
    adv = np.asarray([float(x.get("advantage", 0.0)) for x in extra_info], dtype=np.float64)  # (B,)
    if hasattr(response_mask, "new_tensor"):  # torch: keep device and dtype
        return response_mask.new_tensor(adv).unsqueeze(-1) * response_mask
    return adv[:, None] * np.asarray(response_mask, dtype=np.float64)  # (B, T)


if "verl.trainer.ppo.core_algos" in sys.modules:  # loaded inside a verl process (custom_reward_function.path)
    register()
