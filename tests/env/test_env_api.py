"""API-level checks of the orchestration environment (gymnasium contract, masks, errors)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

from orchestrace.env import ENV_IDS, BatchEnv, EnvConfig, OrchestrationEnv, make_baseline
from orchestrace.errors import ConfigError, IllegalActionError
from orchestrace.vocab import Decision


def _play(env, policy, seed):
    obs, info = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        obs, r, done, trunc, info = env.step(policy.act(obs, info))
        assert trunc is False
        rewards.append(r)
    return rewards, info


@pytest.mark.parametrize("env_id", ["orchestrace/Orchestrate-small-v0", "orchestrace/Orchestrate-v0",
                                    "orchestrace/Orchestrate-small-v1", "orchestrace/Orchestrate-v1",
                                    "orchestrace/Orchestrate-industrial-v0"])
def test_gymnasium_check_env_passes_in_the_default_mode(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id).unwrapped  # the default mode: no option changed
    assert isinstance(env.action_space, gym.spaces.Discrete)
    assert isinstance(env.observation_space["action_mask"], gym.spaces.MultiBinary)
    box = env.observation_space["obs"]
    assert np.isfinite(box.low).all() and np.isfinite(box.high).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the once-per-env "illegal action resampled" notice
        check_env(env, skip_render_check=True)


def test_default_info_carries_no_trace_and_obs_stay_in_bounds() -> None:
    env = OrchestrationEnv(EnvConfig.small_v1())
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        assert env.observation_space.contains(obs)
        obs, _, done, _, info = env.step(env.action_space.sample(mask=obs["action_mask"]))
    assert "trace" not in info and "return" in info


def test_registered_ids_make_envs():
    for env_id in ENV_IDS:
        if "industrial" in env_id:
            continue
        env = gym.make(env_id)
        obs, info = env.reset(seed=0)
        assert obs["obs"].shape == (env.unwrapped.config.obs_dim,)
        assert obs["obs"].dtype == np.float32 and obs["action_mask"].dtype == np.int8


def test_heads_contiguous_and_mask_inside_due_head():
    env = OrchestrationEnv(EnvConfig.small(), record_trace=True)
    heads = env.heads
    order = [Decision.O1, Decision.O2, Decision.O3, Decision.O4, Decision.O5]
    assert [heads[k][0] for k in order][0] == 0
    for a, b in zip(order, order[1:], strict=False):
        assert heads[a][1] == heads[b][0]
    assert heads[Decision.O5][1] - heads[Decision.O5][0] == 2
    assert heads[Decision.O5][1] == env.config.n_actions
    pol = make_baseline("random", env.config)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            due = obs["obs"][:5]
            assert due.sum() == 1
            k = order[int(due.argmax())]
            assert k is info["decision"]
            lo, hi = heads[k]
            legal = np.flatnonzero(obs["action_mask"])
            assert len(legal) >= 1 and legal.min() >= lo and legal.max() < hi
            assert np.all(np.abs(obs["obs"]) <= 10)
            obs, _, done, _, info = env.step(pol.act(obs, info))


def test_action_space_sample_with_the_mask_is_legal_and_illegal_actions_are_resampled_with_a_warning():
    env = OrchestrationEnv(EnvConfig.small())
    obs, _ = env.reset(seed=1)
    for _ in range(20):
        a = env.action_space.sample(mask=obs["action_mask"])
        assert obs["action_mask"][a]
        obs, _, done, _, _ = env.step(a)
        if done:
            obs, _ = env.reset(seed=2)
    obs, _ = env.reset(seed=3)
    with pytest.warns(UserWarning, match="not legal"):
        _, _, _, _, info = env.step(0)  # spawn:0 is illegal in round 0
    assert info["illegal_action"] == 0


def test_rewards_sum_to_return_and_info_keys():
    cfg = EnvConfig.small()
    env = OrchestrationEnv(cfg, record_trace=True)
    for name in ("random", "threshold", "fixed-budget"):
        rewards, info = _play(env, make_baseline(name, cfg), 3)
        assert abs(sum(rewards) - info["return"]) < 1e-9
        for k in ("trace", "success", "tokens", "critical_steps", "wall_clock_s", "decisions", "difficulty", "return"):
            assert k in info
        expected = (cfg.success_reward * info["success"] - cfg.token_cost * info["tokens"]
                    - cfg.time_cost * info["wall_clock_s"] - cfg.safety_cost * info["safety_events"])
        assert abs(expected - info["return"]) < 1e-9
        assert info["decisions"] == len(rewards)


def test_illegal_action_names_the_legal_ones():
    env = OrchestrationEnv(EnvConfig.small(), illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"legal actions: 1=spawn:1, 2=spawn:2, 3=spawn:3"):
        env.step(0)  # spawn:0 is illegal in round 0
    with pytest.raises(IllegalActionError, match="O1"):
        env.step(env.config.n_actions - 1)
    with pytest.raises(IllegalActionError):
        env.step(10_000)


def test_batch_illegal_action_raises():
    be = BatchEnv(EnvConfig.small(), 3)
    _, mask = be.reset()
    a = mask.argmax(1)
    a[1] = 0
    with pytest.raises(IllegalActionError, match="row 1"):
        be.step(a)


@pytest.mark.parametrize("field,value,needle", [
    ("max_rounds", 0, "max_rounds"),
    ("n_subtasks_max", 1, "n_subtasks_max"),
    ("p_easy", 1.5, "p_easy"),
    ("token_cost", float("nan"), "token_cost"),
    ("max_attempts", 2, "max_attempts"),
])
def test_bad_config_names_field_and_fix(field, value, needle):
    with pytest.raises(ConfigError, match=needle) as ei:
        EnvConfig.default().replace(**{field: value})
    assert ";" in str(ei.value)  # "…is invalid: why; how to fix"


def test_unknown_config_field_and_baseline():
    with pytest.raises(ConfigError, match="no field"):
        EnvConfig.default().replace(max_round=3)
    with pytest.raises(ConfigError, match="did you mean 'oracle'"):
        make_baseline("orakle", EnvConfig.small())


def test_config_fields_have_help():
    import dataclasses

    for f in dataclasses.fields(EnvConfig):
        assert f.metadata.get("help"), f.name


def test_import_orchestrace_does_not_import_gymnasium():
    code = "import sys, orchestrace, orchestrace.cli; print('gymnasium' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_logprob_recorded_in_trace():
    env = OrchestrationEnv(EnvConfig.small(), policy_name="learned", record_trace=True)
    obs, info = env.reset(seed=0)
    done, k = False, 0
    pol = make_baseline("fixed-budget", env.config, rounds=1)
    while not done:
        env.unwrapped.set_behaviour_logprob(-0.5 - k)
        obs, _, done, _, info = env.step(pol.act(obs, info))
        k += 1
    decs = [e.decision for e in info["trace"].events if e.decision is not None]
    assert [d.logprob for d in decs] == [-0.5 - i for i in range(k)]
    assert all(d.policy == "learned" and d.alternatives for d in decs)
