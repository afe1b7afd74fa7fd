"""Training: REINFORCE / GRPO / PPO run, resume bit-exactly, stop on NaN, guard checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from orchestrace.errors import CheckpointError, ConfigError, TrainingError
from orchestrace.learn import load_policy, train
from orchestrace.policies.checkpoint import load_checkpoint


def _log(run: Path) -> list[dict]:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]


@pytest.mark.parametrize("algo", ["reinforce", "grpo", "ppo"])
def test_resume_is_bit_exact(algo: str, tmp_path: Path, tiny_config) -> None:
    cfg = tiny_config(algo=algo, steps=4, checkpoint_every=2, minibatches=2, ppo_epochs=2)
    train(cfg, tmp_path / "one", progress=False)
    train(cfg.replace(steps=2), tmp_path / "two", progress=False)
    train(cfg, tmp_path / "two", resume=True, progress=False)
    a, b = load_checkpoint(tmp_path / "one"), load_checkpoint(tmp_path / "two")
    assert a["update"] == b["update"] == 4
    for k in a["policy"]:
        assert torch.equal(a["policy"][k], b["policy"][k]), k
    assert a["rng"]["python"] == b["rng"]["python"] and torch.equal(a["rng"]["torch"], b["rng"]["torch"])
    la, lb = _log(tmp_path / "one"), _log(tmp_path / "two")
    assert la == lb and len(la) == 5  # warm-start row + 4 updates
    assert {"charts/episodic_return", "charts/success", "charts/tokens", "losses/policy", "losses/value",
            "losses/entropy", "losses/approx_kl", "stop/mean_decisions", "stop/expected_decisions"} <= set(la[-1])
    assert (tmp_path / "one" / "metrics.csv").read_text().splitlines()[0].startswith("step,")


def test_resume_rejects_a_changed_config_and_reuse_of_a_run(tmp_path: Path, tiny_config) -> None:
    cfg = tiny_config(steps=2)
    train(cfg, tmp_path / "r", progress=False)
    with pytest.raises(ConfigError, match="lr: run has"):
        train(cfg.replace(lr=0.1, steps=4), tmp_path / "r", resume=True, progress=False)
    with pytest.raises(ConfigError, match="pass --resume"):
        train(cfg, tmp_path / "r", progress=False)


def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(tmp_path: Path, tiny_config, monkeypatch) -> None:
    from orchestrace.learn import grpo

    real = grpo.policy_value_loss
    calls = {"n": 0}

    def poisoned(*args, **kwargs):
        loss, parts = real(*args, **kwargs)
        calls["n"] += 1
        return (loss * float("nan") if calls["n"] == 3 else loss), parts

    monkeypatch.setattr(grpo, "policy_value_loss", poisoned)
    with pytest.raises(TrainingError, match="not finite.*last good checkpoint"):
        train(tiny_config(steps=5, checkpoint_every=1), tmp_path / "r", progress=False)
    ck = load_checkpoint(tmp_path / "r")
    assert ck["update"] == 2
    assert all(torch.isfinite(v).all() for v in ck["policy"].values() if v.is_floating_point())


@pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")
def test_corrupted_and_mismatched_checkpoints_fail_clearly(tmp_path: Path, tiny_config) -> None:
    run = tmp_path / "r"
    train(tiny_config(steps=2), run, progress=False)
    data = (run / "checkpoint.pt").read_bytes()
    (run / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupted, truncated"):
        load_checkpoint(run)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="junk.pt"):
        load_policy(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(3)}, tmp_path / "foreign.pt")
    with pytest.raises(CheckpointError, match="not an orchestrace checkpoint"):
        load_policy(tmp_path / "foreign.pt")
    # a policy file whose weights do not fit the architecture it claims
    pol = torch.load(run / "policy.pt", weights_only=True)
    pol["spec"] = pol["spec"].replace('"hidden": 32', '"hidden": 48')
    torch.save(pol, tmp_path / "mismatch.pt")
    with pytest.raises(CheckpointError, match="do not match the architecture"):
        load_policy(tmp_path / "mismatch.pt")
    # a pickled arbitrary object is refused (weights_only)
    import pickle

    (tmp_path / "evil.pt").write_bytes(pickle.dumps(object()))
    with pytest.raises(CheckpointError):
        load_policy(tmp_path / "evil.pt")


def test_loaded_policy_acts_in_single_and_batched_env(tmp_path: Path, tiny_config) -> None:
    from orchestrace.env import EnvConfig, OrchestrationEnv
    from orchestrace.env.baselines import evaluate

    train(tiny_config(steps=2), tmp_path / "r", progress=False)
    pol = load_policy(tmp_path / "r")
    res = evaluate(EnvConfig.small(), pol, range(10))
    env = OrchestrationEnv(EnvConfig.small(), record_trace=True)
    for s in range(3):  # the single env gives the same episodes (greedy policy, addressed randomness)
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            obs, _, done, _, info = env.step(pol.act(obs, info))
        assert info["decisions"] == res["decisions"][s]
        assert info["return"] == pytest.approx(res["return"][s])
        assert info["trace"].stop_event is not None


def test_stop_counterfactuals_are_exact_replays(tiny_config) -> None:
    """cf_stop equals the realised reward where the policy did stop; cf_cont is a real continuation."""
    from orchestrace.policies.neural import OrchestrationPolicy
    from orchestrace.trainers.envs import env_heads, make_batch_env
    from orchestrace.trainers.rollout import collect, continue_values, discounted_returns

    torch.manual_seed(0)
    benv, cfg = make_batch_env("small", 32)
    od, heads = env_heads("small")
    pol = OrchestrationPolicy(od, heads, 16, 1)
    ro = collect(benv, pol, np.arange(32), device="cpu", stop_counterfactual=True)
    stop = pol.ranges[4][0]
    g = discounted_returns(ro.reward, ro.ep, 1.0)
    stopped = ro.is_stop & (ro.action.numpy() == stop)
    np.testing.assert_allclose(ro.cf_stop[stopped], g[stopped], atol=1e-6)
    assert np.isnan(ro.cf_stop[~ro.is_stop]).all()
    cc = continue_values(cfg, pol, ro, stop, device="cpu")
    free = stopped & (ro.mask.numpy().sum(1) == 2)
    assert free.any() and np.isfinite(cc[free]).all() and np.isnan(cc[~free]).all()


def test_stop_counterfactual_agrees_with_the_env_replay() -> None:
    """cf_stop (batched "stop now" on a copy of the world) = env.replay(..., [StopAt(k)]) return − return so far."""
    from orchestrace.env.replay import StopAt, replay
    from orchestrace.policies.neural import OrchestrationPolicy
    from orchestrace.trainers.envs import env_heads, make_batch_env
    from orchestrace.trainers.rollout import collect

    torch.manual_seed(1)
    benv, cfg = make_batch_env("small", 8)
    od, heads = env_heads("small")
    pol = OrchestrationPolicy(od, heads, 16, 1)
    ro = collect(benv, pol, np.arange(100, 108), device="cpu", stop_counterfactual=True)
    act = ro.action.numpy()
    checked = 0
    for e in range(8):
        rows = np.flatnonzero(ro.ep == e)
        for i in rows[ro.is_stop[rows]]:
            t = int(ro.t[i])
            so_far = float(ro.reward[rows[:t]].sum())
            cf = replay(cfg, int(ro.seeds[e]), act[rows].tolist(), [StopAt(t)], record_trace=False)
            assert so_far + ro.cf_stop[i] == pytest.approx(cf.return_, abs=1e-9)
            checked += 1
    assert checked >= 8
