"""verl plugin: read orchestrace's precomputed rewards and advantages back inside verl.

Reward manager hook — point verl's ``custom_reward_function`` at this file::

    custom_reward_function:
      path: <site-packages>/orchestrace/exporters/verl_plugin.py
      name: compute_score

Advantage hook — inside a custom advantage estimator, spread each row's per-turn
advantage over its response tokens (``response_mask`` is ``(B, T)``; works on numpy
arrays and torch tensors alike)::

    adv = token_level_advantages(batch.non_tensor_batch["extra_info"], batch.batch["response_mask"])

>>> import numpy as np
>>> compute_score("orchestrace", "…", "", {"reward": 0.5})
0.5
>>> token_level_advantages([{"advantage": 2.0}, {"advantage": -1.0}], np.array([[1, 1, 0], [1, 0, 0]])).tolist()
[[2.0, 2.0, 0.0], [-1.0, -0.0, -0.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["compute_score", "token_level_advantages"]


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None,
                  **_: Any) -> float:
    """verl's ``custom_reward_function`` signature: the row's precomputed ``extra_info["reward"]``."""
    return float((extra_info or {}).get("reward", 0.0))


def token_level_advantages(extra_info: Sequence[Mapping[str, Any]], response_mask: Any) -> Any:
    """``A[b, t] = advantage_b · mask[b, t]`` — the turn's advantage on each of its response tokens."""
    adv = np.asarray([float(x.get("advantage", 0.0)) for x in extra_info], dtype=np.float64)  # (B,)
    if hasattr(response_mask, "new_tensor"):  # torch: keep device and dtype
        return response_mask.new_tensor(adv).unsqueeze(-1) * response_mask
    return adv[:, None] * np.asarray(response_mask, dtype=np.float64)  # (B, T)
