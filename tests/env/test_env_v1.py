"""The v1 world: shared misconceptions, a price per episode, a token budget, the evidence observation, --set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.env import EnvConfig, evaluate, make_baseline
from orchestrace.env.config import parse_overrides
from orchestrace.env.layout import ATTEMPT_FEATURES, SUBTASK_FEATURES, obs_layout
from orchestrace.env.world import DONE, World
from orchestrace.errors import ConfigError


def _run(cfg: EnvConfig, seeds, policy=None) -> World:
    w = World(cfg, len(seeds))
    w.reset_rows(np.arange(len(seeds)), np.asarray(seeds, dtype=np.uint64))
    pol = policy or make_baseline("fixed-budget", cfg, rounds=cfg.max_rounds)
    while (w.phase < DONE).any():
        live = w.phase < DONE
        w.step(np.where(live, pol.act_batch(w.obs(), w.mask(), w), 0))
    return w


def test_a_full_misconception_makes_every_solver_agree_on_the_same_wrong_answer() -> None:
    cfg = EnvConfig.small_v1().replace(p_misconception=1.0, misconception_strength=1.0, subtask_jitter=0.0)
    w = _run(cfg, range(60))
    mis = w.mis & (w.att_ans >= 0).any(2)
    solver = (w.att_ans >= 0) & ~w.att_ver
    assert mis.any()
    for b, i in zip(*np.nonzero(mis), strict=True):
        answers = w.att_ans[b, i][solver[b, i]]
        assert (answers == 1).all(), answers  # the plausible wrong answer, every time
    assert not w.success[mis.any(1)].any()


def test_misconceptions_are_more_likely_on_harder_subtasks() -> None:
    cfg = EnvConfig.default_v1()
    w = World(cfg, 4000)
    w.reset_rows(np.arange(4000), np.arange(4000, dtype=np.uint64))
    valid = np.arange(w.N)[None, :] < w.n[:, None]
    hard, easy = valid & (w.d > 0.7), valid & (w.d < 0.3)
    assert w.mis[hard].mean() > 3 * w.mis[easy].mean() > 0


def test_the_price_is_per_episode_in_range_and_charged_in_the_return() -> None:
    cfg = EnvConfig.small_v1()
    w = _run(cfg, range(200), make_baseline("threshold", cfg, threshold=0.7))
    assert (w.price >= cfg.price_min).all() and (w.price <= cfg.price_max).all()
    assert np.log(w.price).std() > 0.5  # log-uniform over a 16× range
    want = (cfg.success_reward * w.success - cfg.token_cost * w.price * w.tokens - cfg.time_cost * w.clock
            - cfg.safety_cost * w.safety)
    np.testing.assert_allclose(w.ret, want, rtol=0, atol=1e-9)


def test_v0_has_price_one_and_no_misconceptions() -> None:
    w = _run(EnvConfig.small(), range(50))
    assert (w.price == 1.0).all() and not w.mis.any()


def test_token_budget_forbids_continue_once_spent() -> None:
    cfg = EnvConfig.small_v1().replace(token_budget=500.0)
    res = evaluate(cfg, make_baseline("always-continue", cfg), range(40))
    assert (res["rounds"] == 1).all()  # one round already costs more than 500 tokens


def test_evidence_observation_layout_and_masks() -> None:
    cfg = EnvConfig.default_v1()
    lay = obs_layout(cfg)
    w = _run(cfg, range(20), make_baseline("fixed-budget", cfg, rounds=2))
    w2 = World(cfg, 20)
    w2.reset_rows(np.arange(20), np.arange(20, dtype=np.uint64))
    obs = w2.obs()
    assert obs.shape == (20, lay.dim) and lay.dim == cfg.obs_dim
    att = obs[:, lay.attempt].reshape(20, *lay.attempt_shape)
    assert (att == 0).all()  # nothing attempted yet
    sub = obs[:, lay.subtask].reshape(20, *lay.subtask_shape)
    np.testing.assert_array_equal(sub[..., SUBTASK_FEATURES.index("valid")].sum(1), w2.n)
    assert lay.subtask_shape[1] == len(SUBTASK_FEATURES) and lay.attempt_shape[2] == len(ATTEMPT_FEATURES) + cfg.n_profiles
    assert w.summary_obs().shape == (20, obs_layout(cfg.replace(obs_mode="summary")).dim)


def test_evidence_observation_never_shows_the_answer_label() -> None:
    # relabel answers 0 <-> 2 everywhere (attempts and aggregates): the observation must not change
    cfg = EnvConfig.small_v1()
    w = World(cfg, 16)
    w.reset_rows(np.arange(16), np.arange(16, dtype=np.uint64))
    pol = make_baseline("fixed-budget", cfg, rounds=2)
    for _ in range(12):
        live = w.phase < DONE
        w.step(np.where(live, pol.act_batch(w.obs(), w.mask(), w), 0))
    before = w.obs()
    swap = np.array([2, 1, 0] + list(range(3, cfg.n_wrong + 1)))
    w.att_ans = np.where(w.att_ans >= 0, swap[np.maximum(w.att_ans, 0)], -1)
    w.agg = np.where(w.agg >= 0, swap[np.maximum(w.agg, 0)], -1)
    np.testing.assert_array_equal(w.obs(), before)


def test_hint_hidden_in_v1_summary() -> None:
    cfg = EnvConfig.default_v1().replace(obs_mode="summary")
    w = World(cfg, 8)
    w.reset_rows(np.arange(8), np.arange(8, dtype=np.uint64))
    assert (w.obs()[:, 5] == 0).all() and (w.hint > 0).any()


def test_registered_v1_ids() -> None:
    import gymnasium as gym

    import orchestrace.env  # noqa: F401

    env = gym.make("orchestrace/Orchestrate-small-v1")
    obs, info = env.reset(seed=1)
    assert obs["obs"].shape == (env.unwrapped.config.obs_dim,)


@pytest.mark.parametrize(("item", "needle"), [
    ("max_round=2", "did you mean 'max_rounds'"), ("token_cost", "FIELD=VALUE"), ("max_rounds=2.5", "expected a int"),
    ("p_hard=1.5", "must be a probability"), ("show_hint=maybe", "expected true or false"),
    ("comm_bonus=1,2", "3 comma-separated"), ("profiles=x", "cannot be set from the command line"),
    ("token_cost=nan", "NaN"), ("price_min=0", "price_min"),
])
def test_set_rejects_bad_items_with_a_located_message(item: str, needle: str) -> None:
    with pytest.raises(ConfigError, match="--set") as exc:
        EnvConfig.small().with_overrides([item])
    assert needle in str(exc.value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=3))
def test_set_never_crashes(items: list[str]) -> None:
    try:
        cfg = EnvConfig.small().with_overrides(items)
    except ConfigError:
        return
    assert isinstance(cfg, EnvConfig)


def test_set_types_every_kind_of_field() -> None:
    got = parse_overrides(["max_rounds=3", "token_cost=1e-4", "obs_mode=evidence", "show_price=yes", "comm_tokens=0,1,2"])
    assert got == {"max_rounds": 3, "token_cost": 1e-4, "obs_mode": "evidence", "show_price": True,
                   "comm_tokens": (0.0, 1.0, 2.0)}
