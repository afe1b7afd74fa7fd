"""The anchors against plain references on random vote sequences (Hypothesis), and the fitted rule."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.policies.anchors import (
    FITTED_FEATURES,
    BetaRule,
    CheckState,
    DirichletRule,
    EscRule,
    VoteShareRule,
    beta_confidence,
    continuation_values,
    dirichlet_confidence,
    esc_agrees,
    fit_rule,
    vote_share,
)

K = 4  # answers per question (the simulator's n_wrong + 1)
votes = st.lists(st.integers(0, K - 1), min_size=1, max_size=12)


def _counts(seq: list[int]) -> np.ndarray:
    return np.bincount(np.array(seq, np.int64), minlength=K)[None, :]


def _top_two(seq: list[int]) -> tuple[int, int]:
    c = sorted(Counter(seq).values(), reverse=True) + [0]
    return c[0], c[1]


@settings(max_examples=100, deadline=None)
@given(votes)
def test_beta_criterion_is_the_beta_tail_of_the_two_largest_counts(seq: list[int]) -> None:
    from scipy.stats import beta

    v1, v2 = _top_two(seq)
    assert beta_confidence(_counts(seq))[0] == pytest.approx(beta.sf(0.5, v1 + 1, v2 + 1), abs=1e-12)


def _dirichlet_reference(seq: list[int]) -> float:
    """The published criterion, by an independent route: with fewer than three answers seen, the Beta tail
    of the top two (scipy); else P(the most voted answer has the largest share) under Dirichlet(counts + 1)
    over the five most voted answers, by numerical integration of the gamma form."""
    from scipy import integrate
    from scipy.stats import beta, gamma

    c = sorted(Counter(seq).values(), reverse=True)[:5]
    if len(c) < 3:
        return float(beta.sf(0.5, c[0] + 1, (c[1] if len(c) > 1 else 0) + 1))
    a, rest = c[0] + 1, [x + 1 for x in c[1:]]

    def f(x: float) -> float:
        return float(gamma.pdf(x, a) * np.prod([gamma.cdf(x, b) for b in rest]))

    return integrate.quad(f, 0, np.inf, epsabs=1e-12, epsrel=1e-10, limit=200)[0]


@settings(max_examples=40, deadline=None)
@given(votes)
def test_dirichlet_criterion_matches_numerical_integration(seq: list[int]) -> None:
    assert dirichlet_confidence(_counts(seq))[0] == pytest.approx(_dirichlet_reference(seq), abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=12))
def test_dirichlet_with_two_answers_seen_is_the_beta_criterion(seq: list[int]) -> None:
    c = _counts(seq)
    assert dirichlet_confidence(c)[0] == pytest.approx(beta_confidence(c)[0], abs=1e-9)


def test_dirichlet_by_sampling() -> None:
    # a third route: Monte Carlo draws of the Dirichlet itself
    rng = np.random.default_rng(0)
    for c in ([3, 2, 1, 1], [2, 2, 1, 0], [5, 1, 1, 0], [4, 2, 1, 1, 1, 1]):
        alpha = np.array([x + 1 for x in c if x > 0][:5], float)  # the five most voted answers (as published)
        mc = float((rng.dirichlet(alpha, 200_000).argmax(1) == 0).mean())
        assert dirichlet_confidence(np.array([c]))[0] == pytest.approx(mc, abs=6e-3)


@settings(max_examples=100, deadline=None)
@given(votes, st.integers(1, 5))
def test_esc_is_the_last_complete_window_all_agreeing(seq: list[int], w: int) -> None:
    order = np.full((1, 12), -1, np.int64)
    order[0, :len(seq)] = seq
    assert bool(esc_agrees(order, w)[0]) == _esc_plain(seq, w)


def _esc_plain(seq: list[int], w: int) -> bool:
    """ESC as published: samples in non-overlapping windows of w; the last complete window unanimous."""
    windows = [seq[i:i + w] for i in range(0, len(seq) - w + 1, w)]
    return bool(windows) and len(set(windows[-1])) == 1


@settings(max_examples=100, deadline=None)
@given(votes)
def test_vote_share_is_the_top_answers_share(seq: list[int]) -> None:
    assert vote_share(_counts(seq))[0] == pytest.approx(max(Counter(seq).values()) / len(seq))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(votes, min_size=1, max_size=4), min_size=1, max_size=6), st.data())
def test_an_episode_stops_when_every_subtask_meets_the_criterion(episodes: list[list[list[int]]], data) -> None:
    B, N, A = len(episodes), 4, 12
    counts = np.zeros((B, N, K), np.int64)
    order = np.full((B, N, A), -1, np.int64)
    valid = np.zeros((B, N), bool)
    for b, subs in enumerate(episodes):
        for i, seq in enumerate(subs):
            counts[b, i] = _counts(seq)[0]
            order[b, i, :len(seq)] = seq
            valid[b, i] = True
    state = CheckState(summary=np.zeros((B, 3), np.float32), counts=counts, order=order, valid=valid,
                       price=np.ones(B), round=np.zeros(B, np.int64), rounds_left=np.ones(B, np.int64))
    c = data.draw(st.sampled_from([0.8, 0.9, 0.95]))
    w = data.draw(st.integers(1, 4))
    s = data.draw(st.sampled_from([0.6, 0.75, 1.0]))
    from scipy.stats import beta

    def plain(crit) -> list[bool]:
        return [all(crit(seq) for seq in subs) for subs in episodes]

    assert BetaRule(c).stop(state).tolist() == plain(lambda q: beta.sf(0.5, _top_two(q)[0] + 1, _top_two(q)[1] + 1) >= c)
    assert DirichletRule(c).stop(state).tolist() == plain(lambda q: dirichlet_confidence(_counts(q))[0] >= c)
    assert EscRule(w).stop(state).tolist() == plain(lambda q: _esc_plain(q, w))
    assert VoteShareRule(s).stop(state).tolist() == plain(lambda q: max(Counter(q).values()) / len(q) >= s - 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_continuation_values_match_the_fitted_stops_plain_loop(E: int, R: int, seed: int) -> None:
    from orchestrace.trainers.fitted_stop import StopPaths, continuation_targets

    rng = np.random.default_rng(seed)
    n = rng.integers(1, R + 1, E)  # checks per episode
    pay = rng.normal(size=(E, R))
    legal = np.arange(R)[None, :] < (n - 1)[:, None]
    cont = rng.random((E, R)) < 0.5
    for e in range(E):  # after the last check: the last payoff (as exact.collect fills it)
        pay[e, n[e]:] = pay[e, n[e] - 1]
    rows = [(e, k) for e in range(E) for k in range(n[e])]
    ep, kk = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    paths = StopPaths(obs=np.zeros((len(rows), 1), np.float32), legal=legal[ep, kk], ep=ep, k=kk, payoff=pay[ep, kk],
                      final=pay[np.arange(E), n - 1], seeds=np.arange(E))
    # the plain loop: U_k = V_{k+1}, V_j = payoff_j where the rule stops at j (or j is the last check), else V_{j+1}
    plain = np.empty((E, R))
    for e in range(E):
        v = pay[e, R - 1]
        for k in range(R - 1, -1, -1):
            plain[e, k] = v
            v = v if (cont[e, k] and legal[e, k]) else pay[e, k]
    legal_rows = legal[ep, kk]
    np.testing.assert_allclose(continuation_values(pay, legal, cont)[ep, kk][legal_rows], plain[ep, kk][legal_rows])
    np.testing.assert_allclose(continuation_targets(paths, cont[ep, kk])[legal_rows], plain[ep, kk][legal_rows])


def test_the_fitted_rule_recovers_a_price_dependent_stop() -> None:
    # continuing pays +0.1 on cheap episodes and costs 0.1 on dear ones (the price column decides)
    from orchestrace.env import EnvConfig
    from orchestrace.env.layout import S, obs_layout

    cfg = EnvConfig.small_v1()
    lay = obs_layout(cfg.replace(obs_mode="summary"))
    rng = np.random.default_rng(0)
    E, R = 1500, 3
    summary = rng.random((E, R, lay.dim)).astype(np.float32)
    logp = rng.uniform(-1, 1, E)
    summary[:, :, lay.index(S.LOG_PRICE)] = logp[:, None]
    step = np.where(logp < 0, 0.1, -0.1)[:, None] + rng.normal(0, 0.05, (E, R))
    pay = np.cumsum(step, 1)
    legal = np.ones((E, R), bool)
    legal[:, -1] = False
    for quadratic in (False, True):
        rule = fit_rule(cfg, summary, pay, legal, quadratic=quadratic)
        cont = rule.score(summary[:, 0]) > 0
        assert (cont == (logp < 0)).mean() > 0.95, quadratic
    assert len(FITTED_FEATURES) == 16 + 3
