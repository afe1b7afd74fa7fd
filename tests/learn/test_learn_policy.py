"""The policy: masking, the explicit stop gate, PonderNet's halting distribution, the normaliser."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.policies.neural import (
    OrchestrationPolicy,
    RunningNorm,
    expected_decisions,
    halting_distribution,
)
from orchestrace.vocab import Decision

HEADS = {Decision.O1: (0, 4), Decision.O2: (4, 10), Decision.O3: (10, 13), Decision.O4: (13, 17), Decision.O5: (17, 19)}


def _batch(rng: np.random.Generator, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    head = rng.integers(0, 5, b)
    obs = rng.normal(size=(b, 46)).astype(np.float32)
    obs[:, :5] = 0
    obs[np.arange(b), head] = 1
    mask = np.zeros((b, 19), bool)
    for i, h in enumerate(head):
        a, e = HEADS[list(HEADS)[h]]
        legal = rng.random(e - a) < 0.7
        legal[rng.integers(0, e - a)] = True
        mask[i, a:e] = legal
    return torch.as_tensor(obs), torch.as_tensor(mask)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_sampled_actions_are_always_legal(seed: int, greedy: bool) -> None:
    torch.manual_seed(seed % 1000)
    pol = OrchestrationPolicy(46, HEADS, hidden=16, layers=1)
    obs, mask = _batch(np.random.default_rng(seed), 64)
    a, logp, out = pol.act(obs, mask, greedy=greedy)
    assert bool(mask[torch.arange(64), a].all())
    assert torch.isfinite(logp).all() and (logp <= 0).all()
    probs = out.logits.softmax(-1)
    assert float(probs[~mask].max()) == 0.0


def test_stop_head_is_a_bernoulli_gate() -> None:
    torch.manual_seed(0)
    pol = OrchestrationPolicy(46, HEADS, hidden=16, layers=2)
    obs = torch.randn(8, 46)
    obs[:, :5] = 0
    obs[:, 4] = 1
    mask = torch.zeros(8, 19, dtype=torch.bool)
    mask[:, 17:19] = True
    out = pol(obs, mask)
    p = out.logits.softmax(-1)
    torch.testing.assert_close(p[:, 17], out.stop_prob)
    torch.testing.assert_close(p[:, 18], 1 - out.stop_prob)
    mask[:, 18] = False  # CONTINUE illegal (last round): STOP is certain
    assert torch.allclose(pol(obs, mask).logits.softmax(-1)[:, 17], torch.ones(8))


def test_sampling_matches_the_distribution() -> None:
    torch.manual_seed(1)
    pol = OrchestrationPolicy(46, HEADS, hidden=16, layers=1)
    obs, mask = _batch(np.random.default_rng(3), 1)
    obs, mask = obs.repeat(20000, 1), mask.repeat(20000, 1)
    a, _, out = pol.act(obs, mask)
    freq = torch.bincount(a, minlength=19).double() / len(a)
    assert float((freq - out.logits.softmax(-1)[0].double()).abs().max()) < 0.02


def _halting_reference(lams: list[float]) -> list[float]:
    out, surv = [], 1.0
    for lam in lams:
        out.append(lam * surv)
        surv *= 1 - lam
    return out + [surv]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8))
def test_halting_distribution_matches_reference(lams: list[float]) -> None:
    p = halting_distribution(torch.tensor(lams, dtype=torch.float64))
    np.testing.assert_allclose(p.numpy(), _halting_reference(lams), atol=1e-12)
    assert abs(float(p.sum()) - 1.0) < 1e-9
    checks = torch.arange(1, len(lams) + 1) * 3
    e = expected_decisions(torch.tensor(lams, dtype=torch.float64), checks, 3 * len(lams) + 2)
    ref = sum(q * d for q, d in zip(_halting_reference(lams), [*checks.tolist(), 3 * len(lams) + 2], strict=True))
    assert abs(e - ref) < 1e-9


def test_running_norm_matches_numpy_on_chunks() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(1000, 5))
    n = RunningNorm(5)
    for chunk in np.array_split(x, 7):
        n.update(torch.as_tensor(chunk))
    np.testing.assert_allclose(n.mean.numpy(), x.mean(0), rtol=1e-10)
    np.testing.assert_allclose(n.var.numpy(), x.var(0), rtol=1e-10)


def test_spec_round_trip() -> None:
    pol = OrchestrationPolicy(46, HEADS, hidden=16, layers=3)
    again = OrchestrationPolicy.from_spec(pol.spec())
    assert again.spec() == pol.spec()
    assert {k: v.shape for k, v in again.state_dict().items()} == {k: v.shape for k, v in pol.state_dict().items()}
