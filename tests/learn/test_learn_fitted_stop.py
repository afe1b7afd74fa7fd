"""The stop gate fitted by regression (``stop_update="fitted"``): the fitting step, its exactness, CI budget."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from orchestrace.learn import fitted_stop as fs
from orchestrace.policies.neural import StopCritic


def _synthetic(n: int, seed: int) -> tuple[fs.StopPaths, np.ndarray]:
    """A stopping problem with a known optimal rule. Each episode has two checks: at check 0 the
    observation is x ~ U(−1, 1) and stopping pays 0.1; continuing reaches a forced check whose
    payoff is 0.1 + x − 0.2 + noise (zero mean). So Q_continue − Q_stop = x − 0.2 and the
    optimal rule continues iff x > 0.2."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    later = 0.1 + x - 0.2 + rng.normal(0, 0.3, n)
    obs = np.zeros((2 * n, 2), np.float32)
    obs[0::2, 0], obs[1::2, 0], obs[1::2, 1] = x, x, 1.0
    payoff = np.empty(2 * n)
    payoff[0::2], payoff[1::2] = 0.1, later
    legal = np.tile([True, False], n)
    paths = fs.StopPaths(obs=obs, legal=legal, ep=np.repeat(np.arange(n), 2), k=np.tile([0, 1], n), payoff=payoff,
                         final=later.copy(), seeds=np.arange(n))
    return paths, x


def test_fitted_gate_recovers_the_optimal_rule_of_a_synthetic_stopping_problem() -> None:
    torch.manual_seed(0)
    train, _ = _synthetic(4000, 0)
    val, _ = _synthetic(1000, 1)
    test, x = _synthetic(2000, 2)
    critic = StopCritic(2, None, hidden=16)
    fs.fit_stop(critic, train, val, seed=0, iterations=2)
    with torch.no_grad():
        pred = critic(torch.as_tensor(test.obs[0::2])).numpy()
    cont = pred > float(critic.margin)
    optimal = x > 0.2
    assert (cont == optimal).mean() > 0.95  # errors only near the boundary
    # the exact value of the fitted rule on the paths is within a hair of the optimal rule's
    rows = np.repeat(cont, 2)
    opt_rows = np.repeat(optimal, 2)
    got, best = fs.gate_value(test, rows).mean(), fs.gate_value(test, opt_rows).mean()
    stop_now = fs.gate_value(test, np.zeros(len(test.ep), bool)).mean()
    assert best - got < 0.01 * (best - stop_now) + 2e-3
    assert fs.clairvoyant_value(test).mean() >= best


def test_gate_value_and_targets_match_a_plain_loop_on_random_paths() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        n_ep = int(rng.integers(1, 6))
        ks = rng.integers(0, 5, n_ep)  # checks per episode (0: the episode ended without one)
        ep = np.repeat(np.arange(n_ep), ks)
        k = np.concatenate([np.arange(c) for c in ks]) if ks.sum() else np.zeros(0, np.int64)
        m = len(ep)
        paths = fs.StopPaths(obs=np.zeros((m, 1), np.float32), legal=rng.random(m) < 0.8, ep=ep, k=k,
                             payoff=rng.normal(size=m), final=rng.normal(size=n_ep), seeds=np.arange(n_ep))
        cont = rng.random(m) < 0.6
        want_v, want_u, want_c = np.empty(n_ep), np.empty(m), np.empty(n_ep)
        for e in range(n_ep):
            rows = np.flatnonzero(ep == e)
            stops = [i for i in rows if not (cont[i] and paths.legal[i])]
            want_v[e] = paths.payoff[stops[0]] if stops else paths.final[e]
            want_c[e] = max([paths.final[e], *paths.payoff[rows]])
            for i in rows:
                later = [j for j in stops if j > i]
                want_u[i] = paths.payoff[later[0]] if later else paths.final[e]
        assert np.allclose(fs.gate_value(paths, cont), want_v)
        assert np.allclose(fs.continuation_targets(paths, cont), want_u)
        assert np.allclose(fs.clairvoyant_value(paths), want_c)


def _tiny(**kw):
    from orchestrace.learn import TrainConfig

    return TrainConfig(**{"env": "small-v1", "stop_update": "fitted", "steps": 2, "episodes_per_step": 24,
                          "group_size": 4, "hidden": 16, "warm_start_episodes": 16, "warm_start_steps": 5,
                          "eval_every": 0, "eval_episodes": 16, **kw})


def test_fitted_stop_trains_a_tiny_budget_and_evaluates_through_the_protocol(tmp_path: Path) -> None:
    from orchestrace.evaluation.simulated import evaluate
    from orchestrace.learn import train

    res = train(_tiny(), tmp_path / "run", progress=False)
    assert res.last_row["fitted/paths"] == 48 and np.isfinite(res.last_row["fitted/heldout_mse"])
    assert res.last_row["fitted/margin"] in fs.MARGINS
    rep = evaluate(tmp_path / "run", episodes=12, validation=8, sample_traces=0, oracle_all=False, progress=False)
    assert rep["env"] == "orchestrace/Orchestrate-small-v1" and rep["policies"]["learned"]["success"]["n"] == 12
    assert rep["claims"]["beats_best_rule_same_heads"]["met"] in (True, False)


def test_path_values_are_what_the_policy_earns_in_the_environment(tmp_path: Path) -> None:
    # the exactness the method rests on: the gate's value computed on always-continue paths equals
    # the return of the same policy played in the environment, episode by episode
    from orchestrace.env import evaluate as play
    from orchestrace.learn import load_policy, train

    train(_tiny(), tmp_path / "run", progress=False)
    lp = load_policy(tmp_path / "run")
    critic = lp.policy.stop_critic
    assert critic is not None
    from orchestrace.trainers.envs import env_config_for

    world = env_config_for("small-v1")
    seeds = np.arange(5000, 5040)
    paths = fs.collect_paths(world, lp.policy, seeds)
    with torch.no_grad():
        cont = critic(torch.as_tensor(paths.obs)).numpy() > float(critic.margin)
    got = play(world, lp, seeds)["return"]
    assert np.allclose(fs.gate_value(paths, cont), got, atol=1e-9)
    assert (fs.clairvoyant_value(paths) >= got - 1e-9).all()


def test_same_seed_gives_the_same_checkpoint_and_the_heads_stay_the_warm_start(tmp_path: Path) -> None:
    from orchestrace.learn import train

    for name in ("a", "b"):
        train(_tiny(), tmp_path / name, progress=False)
    a = torch.load(tmp_path / "a" / "policy.pt", weights_only=True)["policy"]
    b = torch.load(tmp_path / "b" / "policy.pt", weights_only=True)["policy"]
    assert a.keys() == b.keys() and any(k.startswith("stop_critic.") for k in a)
    assert all(torch.equal(a[k], b[k]) for k in a)
    # everything but the stop critic is exactly the warm start's: fitting the stop never moves the heads
    from orchestrace.trainers._run import Run

    warm = Run.start(_tiny(), tmp_path / "c", progress=False).policy.state_dict()
    rest = [k for k in a if not k.startswith("stop_critic.")]
    assert rest and all(torch.equal(a[k], warm[k]) for k in rest)


@pytest.mark.parametrize("field,value", [("stop_update", "fit")])
def test_bad_stop_update_is_a_located_config_error(field: str, value: str) -> None:
    from orchestrace.errors import ConfigError

    with pytest.raises(ConfigError, match="pg, regret or fitted"):
        _tiny(**{field: value})
