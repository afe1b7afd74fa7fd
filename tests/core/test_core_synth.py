"""``synth``: realistic defaults — about 70 % of runs succeed, few events are erroneous, and a
failed run has a culprit — so every step of the README tour shows something.

Before issue 15 every synthetic trace failed (10 seeds, several sizes) with 73–90 % of its
events flagged erroneous, so ``credit --method shapley`` printed only zeros.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from orchestrace import iter_traces, synth, validate
from orchestrace.analysis.measures import compute
from orchestrace.credit import assign
from orchestrace.errors import ConfigError


def _share(tr) -> float:  # type: ignore[no-untyped-def]
    return float(np.mean([bool(e.error) for e in tr.events]))


@pytest.mark.parametrize(("events", "agents"), [(300, 4), (2000, 20)])
def test_default_success_rate_and_bounded_errors(events: int, agents: int) -> None:
    runs = [synth(events=events, agents=agents, seed=s) for s in range(60)]
    rate = np.mean([r.outcome.success for r in runs])
    assert 0.55 <= rate <= 0.85  # success ~ Binomial(60, 0.7)
    shares = [_share(r) for r in runs]
    assert np.mean(shares) < 0.04 and max(shares) < 0.10  # expected ≈ p_error / (1 − propagate) = 2 %
    for r in runs:
        assert r.rewards["team"] == float(r.outcome.success)
        agg = next(e for e in r.events if e.type.value == "aggregate")
        assert agg.error is (not r.outcome.success)  # a clean aggregate is a catcher (E4)


def test_readme_tour_run_succeeds_with_nontrivial_credit() -> None:
    tr = synth(events=20000, agents=50, seed=0)
    assert tr.outcome.success and _share(tr) < 0.03
    r = assign(tr, unit="agent", method="shapley", samples=50)
    assert r.values.sum() == pytest.approx(1.0) and (r.values > 0).all() and r.values.std() > 0


def test_outcome_does_not_depend_on_size() -> None:
    for seed in range(10):
        assert len({synth(events=n, agents=k, seed=seed).outcome.success for n, k in ((60, 3), (500, 8))}) == 1
    assert synth(events=100, agents=3, seed=0).outcome.success and not synth(events=100, agents=3, seed=2).outcome.success


def test_options() -> None:
    assert all(synth(events=200, agents=3, seed=s, success=1.0).outcome.success for s in range(10))
    assert not any(synth(events=200, agents=3, seed=s, success=0.0).outcome.success for s in range(10))
    clean = synth(events=500, agents=4, seed=1, p_error=0.0, success=1.0)
    assert _share(clean) == 0.0 and compute(clean).metrics["e4/erroneous_events"] == 0
    m0 = compute(synth(events=3000, agents=6, seed=1, p_error=0.05, propagate=0.0)).metrics
    m9 = compute(synth(events=3000, agents=6, seed=1, p_error=0.05, propagate=0.9)).metrics
    assert m9["e4/erroneous_events"] > 3 * m0["e4/erroneous_events"]  # errors spread further
    assert m9["e4/amplification"] > m0["e4/amplification"]
    with pytest.raises(ConfigError, match="success"):
        synth(success=1.5)
    with pytest.raises(ConfigError, match="propagate"):
        synth(propagate=1.0)


def test_a_failed_run_has_one_culprit_that_credit_finds() -> None:
    tr = synth(events=600, agents=6, seed=2)
    assert not tr.outcome.success and validate(tr).valid
    for method in ("causal", "shapley", "owen", "leave-one-out"):
        r = assign(tr, unit="agent", method=method, baseline=0.7)
        blamed = [u for u, v in r.as_dict().items() if v < 0]
        assert len(blamed) == 1 and r[blamed[0]] == pytest.approx(-0.7), method


def test_cli_runs_make_a_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "g.jsonl"
    r = subprocess.run([sys.executable, "-m", "orchestrace", "synth", "--events", "200", "--agents", "3", "--runs", "5",
                        "--success", "0.5", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    trs = list(iter_traces(out))
    assert len(trs) == 5 and {t.task_id for t in trs} == {"synth-task-0"}
    assert [t.meta["seed"] for t in trs] == [0, 1, 2, 3, 4]
