"""Determinism: same (config, seed) → byte-identical traces; single ≡ batched ≡ scalar reference."""

from __future__ import annotations

import numpy as np

from orchestrace.core.io import dumps
from orchestrace.env import BatchEnv, EnvConfig, OrchestrationEnv, SimulatedWorkers, make_baseline


def _episode(env, policy, seed):
    obs, info = env.reset(seed=seed)
    acts, done = [], False
    while not done:
        a = policy.act(obs, info)
        acts.append(a)
        obs, _, done, _, info = env.step(a)
    return acts, info


def test_same_seed_byte_identical_traces():
    cfg = EnvConfig.default()
    for name in ("random", "threshold"):
        a = _episode(OrchestrationEnv(cfg, record_trace=True), make_baseline(name, cfg), 11)[1]["trace"]
        b = _episode(OrchestrationEnv(cfg, record_trace=True), make_baseline(name, cfg), 11)[1]["trace"]
        assert dumps(a) == dumps(b)
    c = _episode(OrchestrationEnv(cfg, record_trace=True), make_baseline("random", cfg), 12)[1]["trace"]
    assert dumps(c) != dumps(a)


def test_batch_matches_single_env_decision_for_decision():
    """The batched fast path against the single env (the plain reference) on random policies."""
    cfg = EnvConfig.default()
    B = 16
    be = BatchEnv(cfg, B, seed=100)
    obs, mask = be.reset()
    rng = np.random.default_rng(0)
    logs = {b: [] for b in range(B)}
    finished = {}
    while len(finished) < B:
        a = (rng.random(mask.shape) * mask).argmax(1)
        seeds = be.episode_seed.copy()
        obs2, mask2, r, done, info = be.step(a)
        for b in range(B):
            s = int(seeds[b])
            if s in finished:
                continue
            logs[b].append((int(a[b]), float(r[b])))
            if done[b]:
                finished[s] = (logs[b], float(info["return"][b]), bool(info["success"][b]), float(info["tokens"][b]))
                logs[b] = []
        _obs, mask = obs2, mask2
    env = OrchestrationEnv(cfg, record_trace=False)
    for s, (steps, ret, succ, tok) in finished.items():
        o, info = env.reset(seed=s)
        total = 0.0
        for a, r in steps:
            o, r1, done, _, info = env.step(a)
            assert abs(r1 - r) < 1e-6
            total += r1
        assert done and info["success"] == succ and abs(info["tokens"] - tok) < 1e-6
        assert abs(info["return"] - ret) < 1e-6


def test_batch_env_seed_stream_deterministic():
    cfg = EnvConfig.small()
    runs = []
    for _ in range(2):
        be = BatchEnv(cfg, 8, seed=5)
        obs, mask = be.reset()
        pol = make_baseline("threshold", cfg)
        out = []
        for _ in range(60):
            obs, mask, r, done, info = be.step(pol.act_batch(obs, mask))
            out.append((r.copy(), done.copy(), info["seed"].copy()))
        runs.append(out)
    for (r1, d1, s1), (r2, d2, s2) in zip(*runs, strict=False):
        assert np.array_equal(r1, r2) and np.array_equal(d1, d2) and np.array_equal(s1, s2)


def test_scalar_reference_workers_give_the_same_episode():
    cfg = EnvConfig.default()
    for seed in range(6):
        pol = make_baseline("random", cfg, seed=seed)
        acts, info = _episode(OrchestrationEnv(cfg, record_trace=True), pol, seed)
        env = OrchestrationEnv(cfg, workers=SimulatedWorkers(cfg), record_trace=True)
        obs, _ = env.reset(seed=seed)
        for a in acts:
            obs, _, done, _, info2 = env.step(a)
        assert dumps(info2["trace"]) == dumps(info["trace"])
