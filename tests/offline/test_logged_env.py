"""The environment over logged runs: exact returns (against the offline valuation), validity, check_env, Q."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from orchestrace.errors import ConfigError  # noqa: E402
from orchestrace.logged.logged_env import (  # noqa: E402
    OBS_FEATURES,
    FixedRule,
    GateContinuation,
    LoggedDecisions,
    LoggedRunsEnv,
    StopNext,
    rollout,
)
from orchestrace.offline import fit_gate, load_logged_runs, make_synthetic_logged, valuation  # noqa: E402

TINY = Path(__file__).resolve().parents[1] / "data" / "vote-corpus-tiny"
TEAM = ("cold", "hot", "calc", "reviser")


@pytest.fixture(scope="module")
def tiny():
    return load_logged_runs(TINY)


def _stop_at(dec, k, call, stop):
    return lambda d, s: call if s.t <= k else stop


@pytest.mark.parametrize("agg", ["majority", "logprob"])
def test_returns_equal_the_offline_valuation(tiny, agg) -> None:
    """Stopping after round k in the env returns exactly valuation(...).payoff[:, k], at every width."""
    T, R, W = tiny.shape
    dec = LoggedDecisions(tiny, widths=tuple(range(1, W + 1)), aggregations=("majority", "logprob"))
    stop = dec.aggregations.index(agg)
    for w in range(1, W + 1):
        v = valuation(tiny, w, agg, dec.price, dec.token_scale)
        call = dec.actions.index(f"continue-{w}") if W > 1 else dec.actions.index("continue")
        for k in range(R):
            got = np.array([rollout(dec, i, _stop_at(dec, k, call, stop))[0] for i in range(T)])
            np.testing.assert_allclose(got, v.payoff[:, k], rtol=0, atol=1e-12)


def test_vote_corpus_first_decision_is_after_round_0(tiny) -> None:
    dec = LoggedDecisions(tiny)
    s = dec.start(0)
    assert (s.t, dec.actions) == (1, ("stop", "continue"))
    assert dec.valid(s).tolist() == [True, True]


def test_check_env_vote_and_team(tiny) -> None:
    check_env(LoggedRunsEnv(LoggedDecisions(tiny, aggregations=("majority", "logprob")), split=None),
              skip_render_check=True)
    team = make_synthetic_logged(60, 3, 4, seed=1, members=TEAM)
    env = LoggedRunsEnv(LoggedDecisions(team))
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["obs"].shape == (len(OBS_FEATURES) + 4,) and env.observation_space.contains(obs)


def test_team_options_respect_what_the_reviser_sees() -> None:
    team = make_synthetic_logged(30, 3, 4, seed=2, members=TEAM)
    dec = LoggedDecisions(team)
    with_rev = [n for n, cols in dec.options if 3 in cols]
    assert with_rev == ["cold+hot+calc+reviser"]  # the reviser is exact only with all it was shown
    assert len(dec.options) == 8  # 7 subsets of the three plain kinds + the full team
    s = dec.start(0)
    assert s.t == 0 and not dec.valid(s)[0]  # nothing to stop on before a round
    s1, _ = dec.step(s, dec.actions.index("cold"))
    m = dec.valid(s1)
    assert m[0] and not m[dec.actions.index("cold+hot+calc+reviser")]  # round 0 lacked hot and calc
    with pytest.raises(ConfigError, match="not valid"):
        dec.step(s1, dec.actions.index("cold+hot+calc+reviser"))


def test_team_return_is_cost_plus_graded_majority() -> None:
    team = make_synthetic_logged(30, 3, 4, seed=3, members=TEAM)
    dec = LoggedDecisions(team)
    for i in range(30):
        s = dec.start(i)
        s1, r1 = dec.step(s, dec.actions.index("cold+calc"))
        cost = dec.price[i] * (dec.tokens[i, 0, 0] + dec.tokens[i, 0, 2]) / dec.token_scale
        assert r1 == pytest.approx(-cost, abs=1e-12)
        _, r2 = dec.step(s1, 0)
        a = team.answers[i, 0, [0, 2]]
        votes = [x for x in a if x >= 0]
        want = bool(votes) and max(votes, key=lambda x: (votes.count(x), -votes.index(x))) == team.correct_code[i]
        assert r2 == float(want)


def test_q_value_is_the_return_to_go_of_the_continuation(tiny) -> None:
    dec = LoggedDecisions(tiny)
    T, R, _ = tiny.shape
    for i in range(T):
        s = dec.start(i)
        q = dec.q_values(s, StopNext())
        # stop now: the graded aggregate after round 0; continue then stop: payoff of check 1 minus check 0's cost
        assert q[0] == float(dec.correct(s))
        v = valuation(tiny, tiny.shape[2], "majority", dec.price, dec.token_scale)
        assert q[1] == pytest.approx(v.payoff[i, 1] - (v.payoff[i, 0] - float(v.correct[i, 0])), abs=1e-12)
        full = FixedRule("continue", R)
        assert dec.q_value(s, 1, full) == pytest.approx(v.payoff[i, R - 1] - (v.payoff[i, 0] - v.correct[i, 0]))


def test_gate_continuation_matches_the_gate_rollout() -> None:
    runs = make_synthetic_logged(400, 4, 2, seed=0)
    gate, _ = fit_gate(runs, classes=("linear",), widths=[2])
    dec = LoggedDecisions(runs, aggregations=("majority", "logprob"))
    g = GateContinuation(gate, dec)
    from orchestrace.logged.value import first_stop
    from orchestrace.policies.features import check_features

    X = check_features(runs, 2, dec.price, gate.token_scale, gate.lp_fill, gate.len_scale)
    v = valuation(runs, 2, gate.aggregation, dec.price, dec.token_scale)
    want = v.at(first_stop(gate.stops(X)))["return"]
    got = np.array([rollout(dec, i, g)[0] for i in range(len(runs.task_ids))])
    np.testing.assert_allclose(got, want, atol=1e-9)
    with pytest.raises(ConfigError, match="width"):
        GateContinuation(gate, LoggedDecisions(runs, widths=(1,)))


def test_env_replaces_an_invalid_action_and_says_so() -> None:
    team = make_synthetic_logged(10, 2, 4, seed=4, members=TEAM)
    env = LoggedRunsEnv(LoggedDecisions(team), split=None)
    env.reset(seed=0, options={"task": 0})
    _, _, done, _, info = env.step(0)  # stop before any round: invalid
    assert info["invalid_action"] and not done


def test_bad_configuration_is_a_located_error(tiny) -> None:
    with pytest.raises(ConfigError, match="widths"):
        LoggedDecisions(tiny, widths=(3,))
    with pytest.raises(ConfigError, match="aggregations"):
        LoggedDecisions(tiny, aggregations=("median",))
    team = make_synthetic_logged(10, 2, 4, seed=4, members=TEAM)
    with pytest.raises(ConfigError, match="member subsets, not widths"):
        LoggedDecisions(team, widths=(1,))
    with pytest.raises(ConfigError, match="split"):
        LoggedRunsEnv(LoggedDecisions(tiny), split="nope")


def test_text_is_short(tiny) -> None:
    dec = LoggedDecisions(make_synthetic_logged(20, 3, 4, seed=5, members=TEAM))
    s, _ = dec.step(dec.start(0), len(dec.actions) - 1)
    words = dec.text(s).split()
    assert len(words) < 45 and "Actions:" in words
