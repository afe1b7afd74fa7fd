"""Credit schemes for a GRPO group of multi-decision episodes, and the bias test that tells them apart.

1. The vectorised :func:`group_advantages` equals a plain per-decision reference (loops over
   episodes and turns, the formulas of the module docstring) on random ragged groups, for every
   scheme and both scales.
2. The stopping problem's exact quantities are right: ``Q`` by enumeration matches a Monte Carlo
   estimate, the policy gradient from ``Q`` matches finite differences of ``J``, and ``J*`` is
   the best of a grid of threshold rules or better.
3. The bias test separates: per-turn-index normalisation is biased under policy-controlled
   stopping, exact per-decision credit is not (seeded, margins several times the seed spread).
4. Learning: exact credit improves the policy; per-turn credit drives it to always-stop.
"""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace.credit.schemes import (
    CreditScheme,
    DecisionEpisode,
    group_advantages,
    parse_scheme,
    scheme_advantages,
)
from orchestrace.credit.stopping_problem import StoppingProblem, estimator_bias, train_tabular
from orchestrace.errors import ConfigError

EPS = 1e-6


def _reference(scheme: str, eps: list[dict], scale: str) -> list[list[float]]:
    """The schemes written decision by decision (no arrays), for one group."""
    std = scale == "std"
    G = [e["start"] + sum(e["r"]) for e in eps]
    if scheme == "broadcast":
        mu = sum(G) / len(G)
        sd = (sum((g - mu) ** 2 for g in G) / len(G)) ** 0.5
        return [[(g - mu) / (sd + EPS) if std else g - mu for _ in e["r"]] for g, e in zip(G, eps, strict=True)]
    if scheme == "per-turn":
        norm = [[0.0] * len(e["r"]) for e in eps]
        for j in range(max(len(e["r"]) for e in eps)):
            at = [(i, e["r"][j]) for i, e in enumerate(eps) if len(e["r"]) > j]
            mu = sum(r for _, r in at) / len(at)
            sd = (sum((r - mu) ** 2 for _, r in at) / len(at)) ** 0.5
            for i, r in at:
                norm[i][j] = (r - mu) / (sd + EPS) if std else r - mu
        return [[sum(row[k:]) for k in range(len(row))] for row in norm]
    if scheme == "per-agent":
        pool: dict[str, list[float]] = {}
        for g, e in zip(G, eps, strict=True):
            for a in e["agents"]:
                pool.setdefault(a, []).append(g)
        stats = {}
        for a, vals in pool.items():
            mu = sum(vals) / len(vals)
            sd = (sum((v - mu) ** 2 for v in vals) / len(vals)) ** 0.5
            stats[a] = (0.0, 1.0) if len(vals) == 1 else (mu, (sd + EPS) if std else 1.0)
        return [[(g - stats[a][0]) / stats[a][1] for a in e["agents"]] for g, e in zip(G, eps, strict=True)]
    adv = [[q - v for q, v in zip(e["q"], e["v"], strict=True)] for e in eps]
    flat = [x for row in adv for x in row]
    if std and flat:
        mu = sum(flat) / len(flat)
        sd = (sum((x - mu) ** 2 for x in flat) / len(flat)) ** 0.5
        if sd > EPS:
            adv = [[x / sd for x in row] for row in adv]
    return adv


def _random_group(rng: np.random.Generator) -> list[dict]:
    out = []
    for _ in range(int(rng.integers(1, 7))):
        t = int(rng.integers(1, 6))
        out.append({"r": rng.normal(size=t).round(2).tolist(), "q": rng.normal(size=t).tolist(),
                    "v": rng.normal(size=t).tolist(), "agents": [str(a) for a in rng.integers(0, 3, size=t)],
                    "start": float(rng.normal())})
    return out


@pytest.mark.parametrize("scale", ["none", "std"])
@pytest.mark.parametrize("scheme", [s.value for s in CreditScheme])
def test_vectorised_schemes_equal_the_plain_reference(scheme: str, scale: str) -> None:
    rng = np.random.default_rng([list(CreditScheme).index(CreditScheme(scheme)), len(scale)])
    for _ in range(60):
        g = _random_group(rng)
        eps = [DecisionEpisode(tuple(e["r"]), tuple(e["agents"]), tuple(e["q"]), tuple(e["v"]), e["start"]) for e in g]
        got = scheme_advantages(eps, scheme, scale=scale, eps=EPS)
        want = _reference(scheme, g, scale)
        assert [len(x) for x in got] == [len(e["r"]) for e in g]
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_many_groups_at_once_equal_one_group_at_a_time() -> None:
    rng = np.random.default_rng(5)
    B, n, T = 7, 5, 4
    r = rng.normal(size=(B, n, T))
    ln = rng.integers(0, T + 1, size=(B, n))
    ag = rng.integers(0, 3, size=(B, n, T))
    q, v = rng.normal(size=(B, n, T)), rng.normal(size=(B, n, T))
    for s in CreditScheme:
        whole = group_advantages(s, r, ln, agents=ag, q=q, v=v)
        for b in range(B):
            one = group_advantages(s, r[b:b + 1], ln[b:b + 1], agents=ag[b:b + 1], q=q[b:b + 1], v=v[b:b + 1])
            np.testing.assert_allclose(whole[b], one[0], atol=1e-12)
        assert (whole[np.arange(T) >= ln[..., None]] == 0).all()  # nothing past an episode's end


def test_bad_input_is_a_located_error() -> None:
    with pytest.raises(ConfigError, match="did you mean 'per-turn'"):
        parse_scheme("per-trn")
    assert parse_scheme("dr_mas") is CreditScheme.PER_AGENT
    with pytest.raises(ConfigError, match="scheme exact needs q"):
        scheme_advantages([DecisionEpisode((1.0,))], "exact")
    with pytest.raises(ConfigError, match="episode 0: agents has 1 entries but there are 2"):
        scheme_advantages([DecisionEpisode((1.0, 0.0), agents=("a",))], "per-agent")
    with pytest.raises(ConfigError, match="lengths must be integers"):
        group_advantages("broadcast", np.zeros((1, 2, 3)), np.array([[4, 1]]))
    with pytest.raises(ConfigError, match="must be finite"):
        group_advantages("per-turn", np.full((1, 1, 1), np.nan), np.array([[1]]))
    with pytest.raises(ConfigError, match="scale"):
        scheme_advantages([DecisionEpisode((1.0,))], "broadcast", scale="max")
    with pytest.raises(ConfigError, match="at least one episode"):
        scheme_advantages([], "broadcast")


# ----------------------------------------------------------------------------- the stopping problem
def test_exact_q_matches_monte_carlo_and_its_gradient_matches_finite_differences() -> None:
    p = StoppingProblem(horizon=6)
    S = len(p.states)
    theta = np.random.default_rng(0).normal(size=S)
    A, Q, d, J = p.true_values(theta)
    pi = 1 / (1 + np.exp(-theta))
    np.testing.assert_allclose((1 - pi) * A[:, 0] + pi * A[:, 1], 0, atol=1e-12)  # Σ_a π A = 0
    grad = d * pi * (1 - pi) * (Q[:, 1] - Q[:, 0])  # the policy-gradient theorem, logistic policy
    h = 1e-6
    fd = [(p.true_values(theta + h * e)[3] - p.true_values(theta - h * e)[3]) / (2 * h) for e in np.eye(S)]
    np.testing.assert_allclose(grad, fd, atol=1e-8)
    # J by simulation of plain episodes (no credit code involved)
    rng = np.random.default_rng(1)
    X = p.sample_logs(40_000, rng)
    dec, stop_r = p.paths(X)
    total = np.zeros(len(X))
    alive = np.ones(len(X), bool)
    for k in range(p.horizon - 1):
        cont = rng.random(len(X)) < pi[dec[:, k]]
        stop_now = alive & ~cont
        total[stop_now] += stop_r[stop_now, k]
        total[alive & cont] -= p.cost
        alive &= cont
    total[alive] += stop_r[alive, -1]
    assert abs(total.mean() - J) < 4 * total.std() / np.sqrt(len(X))


def test_optimal_return_beats_every_threshold_rule() -> None:
    p = StoppingProblem(horizon=6)
    best = max(p.true_values(np.array([50.0 if d < t else -50.0 for _, d in p.states]))[3] for t in range(7))
    assert p.optimal_return() >= best - 1e-9
    assert p.optimal_return() > p.true_values(np.zeros(len(p.states)))[3]


def test_bias_test_separates_biased_from_unbiased_estimators() -> None:
    p = StoppingProblem()
    theta = np.zeros(len(p.states))
    runs = [estimator_bias(p, theta, tasks=30_000, seed=s) for s in range(3)]
    by = {r.scheme: [run[j] for run in runs] for j, r in enumerate(runs[0])}
    exact, turn = by["exact"], by["per-turn"]
    # per-turn: anti-correlated with the truth, prefers the wrong action in most visited states
    assert all(r.rel_bias > 0.9 and r.sign < 0.6 and r.corr < 0 for r in turn)
    # exact: proportional to the truth up to Monte Carlo noise, the right action everywhere it matters
    assert all(r.rel_bias < 0.3 and r.sign > 0.95 and r.corr > 0.95 for r in exact)
    assert all(r.mae < 0.02 for r in exact) and all(r.mae > 0.15 for r in turn)
    # broadcast is unbiased up to a scale and a state offset (it is noisier, not wrong)
    assert all(r.corr > 0.9 for r in by["broadcast"])


def test_exact_credit_learns_and_per_turn_credit_collapses_to_always_stop() -> None:
    p = StoppingProblem()
    S = len(p.states)
    start = p.true_values(np.zeros(S))[3]
    always_stop = p.true_values(np.full(S, -50.0))[3]
    J_exact = train_tabular(p, "exact", updates=120, seed=0)
    J_turn = train_tabular(p, "per-turn", updates=120, seed=0)
    assert J_exact[-20:].mean() > start + 0.03
    assert abs(J_turn[-20:].mean() - always_stop) < 0.002 < start - always_stop


def test_exact_credit_is_unbiased_exactly_over_all_logs() -> None:
    """No sampling: the visit-weighted mean of the per-task exact advantage at each (s, a) is A(s, a)."""
    p = StoppingProblem(horizon=7)
    theta = np.random.default_rng(3).normal(size=len(p.states))
    A, _, _, _ = p.true_values(theta)
    X, P = p.all_logs()
    dec, Qx, _ = p.task_values(theta, X)
    pc = 1 / (1 + np.exp(-theta[dec]))
    reach = np.concatenate([np.ones((len(X), 1)), np.cumprod(pc, axis=1)[:, :-1]], axis=1)
    Vx = pc * Qx[..., 1] + (1 - pc) * Qx[..., 0]
    for s in range(len(p.states)):
        w = P[:, None] * reach * (dec == s)
        for a in (0, 1):
            assert (w * (Qx[..., a] - Vx)).sum() / w.sum() == pytest.approx(A[s, a], abs=1e-12)


def test_reply_advantages_group_by_prompt_and_take_the_first_decision() -> None:
    from orchestrace.credit.schemes import reply_advantages

    rng = np.random.default_rng(9)
    eps = [DecisionEpisode(tuple(rng.normal(size=int(rng.integers(1, 4))).tolist()), start=float(rng.normal()))
           for _ in range(12)]
    keys = [i % 3 for i in range(12)]
    for s in CreditScheme:
        if s is CreditScheme.EXACT:
            continue
        got = reply_advantages(eps, keys, s)
        for k in range(3):
            rows = [i for i in range(12) if keys[i] == k]
            want = [a[0] for a in scheme_advantages([eps[i] for i in rows], s, scale="none")]
            np.testing.assert_allclose(got[rows], want)
    with pytest.raises(ConfigError, match="groups has 2 entries"):
        reply_advantages(eps, [0, 1], "broadcast")
