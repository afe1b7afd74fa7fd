"""TrainConfig: validation messages name the field and the fix; the CLI is generated from it."""

from __future__ import annotations

import dataclasses

import pytest

from orchestrace.errors import ConfigError
from orchestrace.trainers.config import TrainConfig, cli_fields, resolve_env_id


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"algo": "sac"}, "algo='sac' is invalid; use one of reinforce, grpo, ppo"),
        ({"lr": 0.0}, "lr=0.0 is invalid; it must be > 0"),
        ({"gamma": 1.5}, "gamma=1.5 is invalid; it must lie in [0, 1]"),
        ({"algo": "grpo", "episodes_per_step": 30, "group_size": 8}, "use episodes_per_step=32 or group_size=6"),
        ({"algo": "grpo", "group_size": 1, "episodes_per_step": 8}, "use group_size >= 2"),
        ({"algo": "ppo", "normalize": "group"}, "normalize='group' needs algo='grpo'"),
        ({"algo": "ppo", "minibatches": 9, "episodes_per_step": 8}, "use minibatches <= episodes_per_step"),
        ({"warm_start": "teacher"}, "warm_start='teacher' is invalid"),
        ({"stop_credit": "oracle"}, "use one of counterfactual, critic, return"),
    ],
)
def test_bad_fields_are_rejected_with_the_fix(kw: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        TrainConfig(**kw)
    assert needle in str(err.value)


def test_every_field_has_help_and_the_cli_lists_them_all() -> None:
    fields = cli_fields()
    assert [n for n, *_ in fields] == [f.name for f in dataclasses.fields(TrainConfig)]
    assert all(len(h.strip()) > 10 for *_, h in fields)


def test_from_dict_round_trip_and_did_you_mean() -> None:
    cfg = TrainConfig(algo="ppo", steps=7, lr=1e-3)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="did you mean 'steps'"):
        TrainConfig.from_dict({"stpes": 3})
    with pytest.raises(ConfigError, match="is not a valid int"):
        TrainConfig.from_dict({"steps": "many"})


def test_frozen_and_env_aliases() -> None:
    cfg = TrainConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lr = 1.0  # type: ignore[misc]
    assert resolve_env_id("default") == "orchestrace/Orchestrate-v0" == TrainConfig().env_id
