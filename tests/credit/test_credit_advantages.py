"""GRPO, Dr. MAS agent-wise and per-role normalisation, token placement vs plain references."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrace.credit.advantages import (
    agentwise_advantages,
    grpo_advantages,
    role_advantages,
    token_credit,
)
from orchestrace.errors import ConfigError


def ref_group_norm(r, keys, eps, singleton_identity):
    out = []
    for i, k in enumerate(keys):
        members = [r[j] for j in range(len(r)) if keys[j] == k]
        if len(members) == 1 and singleton_identity:
            out.append(r[i])  # mean 0, std 1
            continue
        mean = sum(members) / len(members)
        std = (sum((x - mean) ** 2 for x in members) / len(members)) ** 0.5
        out.append((r[i] - mean) / (std + eps))
    return np.array(out)


@pytest.mark.parametrize("seed", range(20))
def test_grpo_and_dr_mas_match_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    r = rng.normal(size=n).tolist()
    prompts = rng.integers(0, 3, size=n).tolist()
    agents = [f"a{x}" for x in rng.integers(0, 4, size=n)]
    np.testing.assert_allclose(grpo_advantages(r, groups=prompts), ref_group_norm(r, prompts, 1e-6, False), atol=1e-9)
    keys = list(zip(prompts, agents, strict=True))
    np.testing.assert_allclose(agentwise_advantages(r, prompts=prompts, agents=agents),
                               ref_group_norm(r, keys, 1e-6, True), atol=1e-9)
    np.testing.assert_allclose(role_advantages(r, prompts=np.array(prompts), roles=agents),
                               ref_group_norm(r, keys, 1e-6, True), atol=1e-9)


def test_singletons_and_errors():
    assert agentwise_advantages([5.0], prompts=["p"], agents=["a"]).tolist() == [5.0]
    assert grpo_advantages([5.0], groups=["p"]).tolist() == [0.0]
    with pytest.raises(ConfigError, match="2 entries"):
        grpo_advantages([1.0, 2.0, 3.0], groups=["p", "q"])
    with pytest.raises(ConfigError, match="finite"):
        grpo_advantages([1.0, float("nan")], groups=["p", "p"])


def ref_tokens(c, lens, placement, gamma, R):
    out = []
    n = len(c)
    for i, (ci, li) in enumerate(zip(c, lens, strict=True)):
        for k in range(li):
            last = k == li - 1
            if placement == "last":
                out.append(ci if last else 0.0)
            elif placement == "uniform":
                out.append(ci)
            else:
                out.append(R * gamma ** (n - 1 - i) if last else 0.0)
    return np.array(out)


@pytest.mark.parametrize("placement", ["last", "uniform", "discounted"])
def test_token_placement_matches_reference(placement):
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(1, 8))
        c = rng.normal(size=n)
        lens = rng.integers(0, 5, size=n)
        vals, off = token_credit(c, lens, placement=placement, gamma=0.9, team_reward=2.0)
        np.testing.assert_allclose(vals, ref_tokens(c.tolist(), lens.tolist(), placement, 0.9, 2.0))
        assert off[-1] == lens.sum()
    with pytest.raises(ConfigError, match="placement"):
        token_credit([1.0], [1], placement="first")
