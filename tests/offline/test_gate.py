"""The learned gate: backward induction on known paths, the deploy path equals the training path,
the gate file round-trips and rejects bad files with a location."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_runs import structured_runs

from orchestrace.errors import ConfigError
from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.offline import (
    StopGate,
    first_stop,
    fit_gate,
    task_prices,
    valuation,
)
from orchestrace.policies.features import check_features
from orchestrace.trainers.fitted_q import _ridge, ls_fit


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


@pytest.fixture(scope="module")
def fitted() -> tuple:
    runs = structured(T=500, R=4, W=3, seed=11)
    gate, report = fit_gate(runs, classes=("linear", "quadratic"), seed=0)
    return runs, gate, report


def test_backward_induction_learns_a_feature_dependent_stop() -> None:
    # continuing pays +1 at the last check when x > 0 and −1 when x < 0; stopping at 0 pays 0
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    X = np.zeros((400, 2, 1))
    X[:, :, 0] = x[:, None]
    pay = np.stack([np.zeros(400), np.sign(x)], 1)
    (m,) = ls_fit(X, pay, lambda A, y: _ridge(A, y, 1.0), "linear")
    assert m.w[0] > 0  # continue iff x is large enough
    cont = X[:, 0, 0] * m.w[0] + m.b > 0
    assert (cont == (x > 0)).mean() > 0.95


def test_the_gate_beats_the_trivial_stops_on_test_tasks(fitted) -> None:
    runs, gate, report = fitted
    test = runs.subset(runs.split == "test")
    price = task_prices(test.task_ids)
    v = valuation(test, gate.width, gate.aggregation, price, gate.token_scale)
    X = check_features(test, gate.width, price, gate.token_scale, gate.lp_fill, gate.len_scale)
    got = v.at(first_stop(gate.stops(X)))["return"].mean()
    assert got > v.payoff[:, 0].mean() and got > v.payoff[:, -1].mean()
    assert report["chosen"]["class"] in ("linear", "quadratic")
    assert set(report["by_class"]) == {"linear", "quadratic"}


def test_should_stop_reads_what_training_read(fitted) -> None:
    runs, gate, _ = fitted
    w = gate.width
    price = task_prices(runs.task_ids)
    X = check_features(runs, w, price, gate.token_scale, gate.lp_fill, gate.len_scale)
    stops = gate.stops(X)
    for t in range(0, 500, 25):
        rounds, lps, comp, prompt = [], [], [], []
        for k in range(runs.answers.shape[1]):
            rounds.append([None if a < 0 else f"ans{a}" for a in runs.answers[t, k, :w].tolist()])
            lps.append(runs.logprob_mean[t, k, :w].tolist())
            comp.append(runs.completion_tokens[t, k, :w].tolist())
            prompt.append(runs.prompt_tokens[t, k, :w].tolist())
            d = gate.decide(rounds, price=float(price[t]), logprobs=lps, completion_tokens=comp, prompt_tokens=prompt)
            assert d.stop == bool(stops[t, k]), (t, k, d.reason)
            if d.stop:
                break


def test_gate_file_round_trip(fitted, tmp_path: Path) -> None:
    runs, gate, _ = fitted
    path = gate.save(tmp_path / "run")
    assert path.name == "gate.json" and "pickle" not in path.read_text()
    again = StopGate.load(tmp_path / "run")
    X = check_features(runs, gate.width, task_prices(runs.task_ids), gate.token_scale, gate.lp_fill, gate.len_scale)
    assert np.array_equal(again.stops(X), gate.stops(X))


def test_bad_gate_files_are_located(fitted, tmp_path: Path) -> None:
    _, gate, _ = fitted
    doc = json.loads(gate.save(tmp_path / "g.json").read_text())
    bad = dict(doc, format="something-else")
    (tmp_path / "b1.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match=r"\$\.format"):
        StopGate.load(tmp_path / "b1.json")
    bad = dict(doc, checks=[{"w": [1.0]}] + doc["checks"][1:])
    (tmp_path / "b2.json").write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match=r"\$\.checks\[0\]"):
        StopGate.load(tmp_path / "b2.json")
    with pytest.raises(ConfigError, match="no gate file"):
        StopGate.load(tmp_path / "nope")


_HYP_DIR: dict[str, Path] = {}


@settings(max_examples=60, deadline=None)
@given(doc=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=6),
                        max_leaves=20),
       keep=st.booleans())
def test_any_json_either_loads_or_is_a_config_error(tmp_path_factory, doc, keep) -> None:
    if keep and isinstance(doc, dict):
        doc = {"format": "orchestrace-stop-gate/1", **doc}
    p = _HYP_DIR.setdefault("d", tmp_path_factory.mktemp("g")) / "gate.json"
    p.write_text(json.dumps(doc))
    try:
        g = StopGate.load(p)
    except ConfigError as exc:
        assert str(p) in str(exc)  # located: the file, and the JSON path where there is one
    else:
        assert isinstance(g, StopGate) and len(g.checks) == g.max_rounds - 1


def test_live_loop_inputs_are_checked(fitted) -> None:
    _, gate, _ = fitted
    with pytest.raises(ConfigError, match="empty"):
        gate.should_stop([], price=0.1)
    with pytest.raises(ConfigError, match="price"):
        gate.should_stop([["1"] * gate.width], price=float("nan"))
    with pytest.raises(ConfigError, match=r"answers_so_far\[1\]"):
        gate.should_stop([["1"] * gate.width, ["1"] * (gate.width + 1)], price=0.1)
    assert gate.should_stop([["1"] * gate.width] * gate.max_rounds, price=0.0)  # the round limit always stops
    assert gate.aggregate([[None] * gate.width]) is None


def test_mlp_class_fits_and_is_seeded() -> None:
    pytest.importorskip("torch")
    runs = structured(T=120, R=2, W=2, seed=5)
    g1, r1 = fit_gate(runs, classes=("mlp",), seed=3, widths=[2])
    g2, _ = fit_gate(runs, classes=("mlp",), seed=3, widths=[2])
    assert g1.model_class == "mlp" and g1.checks == g2.checks
    assert all(np.isfinite(c["validation_return"]) for c in r1["candidates"])


def test_without_torch_the_default_fit_skips_the_mlp_and_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import importlib.util

    from orchestrace.offline import fit_gate, make_synthetic_logged

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    said: list[str] = []
    gate, report = fit_gate(make_synthetic_logged(T=200, R=3, W=2, seed=0), log=said.append)
    assert "mlp" not in report["by_class"] and gate.model_class in ("linear", "quadratic")
    assert any("mlp skipped" in s for s in said)
