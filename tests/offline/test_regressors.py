"""``policies.regressors``: the one fitted-Q module of the gate and the team policy, checked against plain
references on random inputs (ridge against its objective's normal equations solved by lstsq on an
augmented system, the quadratic expansion against explicit loops, one-output and per-action predictions
against per-row sums), and the typed model of ``policies.policy_file`` (a mapping converts, a bad one is
located)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace.errors import ConfigError
from orchestrace.policies.policy_file import QModel, as_model, model_doc
from orchestrace.policies.regressors import predict, quad, ridge


@settings(max_examples=40, deadline=None)
@given(n=st.integers(8, 40), f=st.integers(1, 5), k=st.integers(1, 3), alpha=st.floats(0.01, 100.0),
       seed=st.integers(0, 2**16))
def test_ridge_minimises_its_objective(n: int, f: int, k: int, alpha: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    Xa = np.concatenate([rng.normal(size=(n, f)), np.ones((n, 1))], 1)
    Y = rng.normal(size=(n, k))
    got = ridge(Xa, Y, alpha)
    # reference: min |Xa c − y|² + alpha |c[:-1]|² as one least-squares problem on rows [Xa; sqrt(alpha) I_f 0]
    pen = np.concatenate([np.sqrt(alpha) * np.eye(f), np.zeros((f, 1))], 1)
    ref = np.linalg.lstsq(np.concatenate([Xa, pen]), np.concatenate([Y, np.zeros((f, k))]), rcond=None)[0]
    assert np.allclose(got, ref, atol=1e-8)
    assert np.allclose(ridge(Xa, Y[:, 0], alpha), ref[:, 0], atol=1e-8)  # one output: the same coefficients


@pytest.mark.parametrize("core", [None, 2])
def test_quad_is_the_features_and_their_pairwise_products(core: int | None) -> None:
    Z = np.random.default_rng(0).normal(size=(5, 4))
    c = Z.shape[1] if core is None else core
    ref = [list(z) + [z[i] * z[j] for i in range(c) for j in range(i, c)] for z in Z]
    assert np.allclose(quad(Z, core), ref)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 30), f=st.integers(1, 9), core=st.one_of(st.none(), st.integers(0, 9)), seed=st.integers(0, 2**16),
       f32=st.booleans())
def test_quad_in_place_is_bit_equal_to_the_index_expansion(n: int, f: int, core: int | None, seed: int,
                                                           f32: bool) -> None:
    Z = np.random.default_rng(seed).normal(size=(n, f)).astype(np.float32 if f32 else np.float64)
    core = None if core is None else min(core, f)
    c = Z if core is None else Z[:, :core]
    i, j = np.triu_indices(c.shape[1])
    ref = np.concatenate([Z, c[:, i] * c[:, j]], 1)  # the plain expansion the in-place one replaces
    got = quad(Z, core)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert np.array_equal(got, ref)


def test_predict_one_output_and_per_action_against_row_sums() -> None:
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(6, 3))
    w1, b1 = rng.normal(size=3), 0.7
    assert np.allclose(predict("linear", {"w": w1.tolist(), "b": b1}, Z), [sum(z * w1) + b1 for z in Z])
    W, B = rng.normal(size=(4, 3)), rng.normal(size=4)
    m = as_model({"w": W.tolist(), "b": B.tolist()})
    assert np.allclose(predict("linear", m, Z), [[sum(z * W[a]) + B[a] for a in range(4)] for z in Z])
    H1, c1, H2, c2 = rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=(4, 5)), rng.normal(size=4)
    mlp = as_model({"W1": H1.tolist(), "b1": c1.tolist(), "W2": H2.tolist(), "b2": c2.tolist()})
    ref = [[sum(np.tanh(H1 @ z + c1) * H2[a]) + c2[a] for a in range(4)] for z in Z]
    assert np.allclose(predict("mlp", mlp, Z), ref)
    with pytest.raises(ConfigError, match="model class 'tree'"):
        predict("tree", m, Z)


def test_a_model_is_typed_and_its_document_keeps_only_its_weights() -> None:
    m = as_model({"mean": [0.0], "std": [1.0], "w": [[1.0]], "b": [0.5]})
    assert isinstance(m, QModel) and list(model_doc(m)) == ["mean", "std", "w", "b"]
    with pytest.raises(ConfigError, match=r"\$\.models\[3\]: not a fitted model: .*`\$\.w\[0\]`"):
        as_model({"w": [float("nan")], "b": 0.0}, "$.models[3]")
    with pytest.raises(ConfigError, match="unknown field `bias`"):
        as_model({"w": [1.0], "bias": 0.0})
