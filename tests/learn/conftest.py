"""Shared fixtures of the learn tests: one thread, tiny configs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")
torch.set_num_threads(1)


def tiny(**kw):
    """A tiny GRPO config on the small env (≈ 0.2 s per update)."""
    from orchestrace.learn import TrainConfig

    base = dict(env="small", algo="grpo", steps=4, episodes_per_step=16, group_size=4, checkpoint_every=2,
                warm_start_episodes=32, warm_start_steps=20, hidden=32)
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture
def tiny_config():
    return tiny
