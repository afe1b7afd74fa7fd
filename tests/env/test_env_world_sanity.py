"""World sanity on the default configuration over 600 fixed seeds (batched, a few seconds)."""

from __future__ import annotations

import numpy as np

from orchestrace.env import EnvConfig, evaluate, make_baseline

SEEDS = range(50_000, 50_600)


def test_oracle_beats_every_fixed_budget_and_best_budget_depends_on_difficulty():
    cfg = EnvConfig.default()
    fixed = {b: evaluate(cfg, make_baseline("fixed-budget", cfg, rounds=b), SEEDS) for b in range(1, cfg.max_rounds + 1)}
    oracle = evaluate(cfg, make_baseline("oracle", cfg), SEEDS)
    for b, r in fixed.items():
        assert oracle["return"].mean() > r["return"].mean(), b
        assert np.all(oracle["return"] >= r["return"] - 1e-9)  # it can always stop where the budget does
    d = oracle["difficulty"]
    easy, hard = d < 0.3, d >= 0.7
    assert easy.sum() > 150 and hard.sum() > 60
    best_easy = max(fixed, key=lambda b: fixed[b]["return"][easy].mean())
    best_hard = max(fixed, key=lambda b: fixed[b]["return"][hard].mean())
    assert best_easy < best_hard


def test_adaptive_rule_shows_learnable_stop():
    """A hand-written rule on the observation: near the oracle, fewer tokens than the best budget."""
    cfg = EnvConfig.default()
    fixed = {b: evaluate(cfg, make_baseline("fixed-budget", cfg, rounds=b), SEEDS) for b in range(1, cfg.max_rounds + 1)}
    best = max(fixed.values(), key=lambda r: r["return"].mean())
    ad = evaluate(cfg, make_baseline("adaptive", cfg), SEEDS)
    oracle = evaluate(cfg, make_baseline("oracle", cfg), SEEDS)
    thr = evaluate(cfg, make_baseline("threshold", cfg, threshold=0.7), SEEDS)
    assert ad["return"].mean() >= 0.93 * oracle["return"].mean()
    assert ad["success"].mean() >= best["success"].mean() - 0.02
    assert ad["tokens"].mean() <= 0.8 * best["tokens"].mean()
    assert ad["return"].mean() > thr["return"].mean() - 0.01
    d = ad["difficulty"]
    assert ad["decisions"][d >= 0.7].mean() > ad["decisions"][d < 0.3].mean() + 3
