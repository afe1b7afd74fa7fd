"""The fitted-Q regressors of the logged-runs policies: one module for the stop gate and the team policy.

A vote corpus is a team of W identical members, so its stop gate and the joint team policy fit the
same three model classes, in the same few operations:

==============  ============================================================  ==========================
class           fit                                                           predict
==============  ============================================================  ==========================
``linear``      :func:`ridge` on the standardised features                   ``Z @ w.T + b``
``quadratic``   :func:`ridge` on :func:`quad` (the features and the pairwise  ``quad(Z) @ w.T + b``
                products of the first ``core`` of them; all when None)
``mlp``         :func:`fit_mlp`: one hidden layer of tanh units, Adam with    ``tanh(Z W1ᵀ + b1) W2ᵀ + b2``
                weight decay, early stopping on a 20 % hold-out (torch,
                imported lazily, one thread — the only seeded part)
==============  ============================================================  ==========================

A model with one output (the gate: the advantage of continuing) holds ``w`` (F,) and a scalar
``b``; a model with one output per action (the team policy) holds ``w`` (A, F) and ``b`` (A,).
The same formula predicts both (``w.T`` of a vector is the vector). :func:`predict` reads any
mapping or object with the weight names (``w``, ``b``, ``W1``, ``b1``, ``W2``, ``b2``).

>>> Z = np.array([[1.0, 2.0], [0.0, 1.0]])
>>> coef = ridge(np.concatenate([Z, np.ones((2, 1))], 1), np.array([1.0, 0.0]), 0.0, jitter=1e-9)
>>> m = {"w": coef[:-1].tolist(), "b": float(coef[-1])}
>>> np.round(predict("linear", m, Z), 6).tolist()
[1.0, 0.0]
>>> quad(np.array([[1.0, 2.0, 3.0]]), core=2).tolist()   # the features, then x0², x0·x1, x1²
[[1.0, 2.0, 3.0, 1.0, 2.0, 4.0]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ConfigError

__all__ = ["CLASSES", "fit_mlp", "predict", "quad", "ridge"]

#: The model classes, simplest first.
CLASSES = ("linear", "quadratic", "mlp")


def quad(Z: np.ndarray, core: int | None = None) -> np.ndarray:
    """The quadratic class's inputs (N, F + c(c+1)/2): the features and the pairwise products of the
    first ``core`` of them (all of them when None)."""
    c = Z if core is None else Z[:, :core]
    n, f = Z.shape
    k = c.shape[1]
    out = np.empty((n, f + k * (k + 1) // 2), dtype=np.result_type(Z, c))
    out[:, :f] = Z
    at = f
    for a in range(k):  # the products c_a · c_b, b ≥ a, in np.triu_indices order, written in place (no temporaries)
        np.multiply(c[:, a:a + 1], c[:, a:], out=out[:, at:at + k - a])
        at += k - a
    return out


def _get(m: Any, key: str) -> Any:
    if isinstance(m, Mapping):
        return m[key]
    v = getattr(m, key)
    if v is None:
        raise KeyError(key)
    return v


def predict(cls: str, m: Any, Z: np.ndarray, core: int | None = None) -> np.ndarray:
    """The fitted values for standardised features ``Z`` (N, F): (N,) for a one-output model, (N, A) for
    one with an output per action. ``core``: the quadratic class's product block (:func:`quad`).

    >>> predict("linear", {"w": [1.0, -1.0], "b": 0.5}, np.array([[1.0, 2.0]])).tolist()
    [-0.5]
    >>> predict("linear", {"w": [[2.0], [-1.0]], "b": [0.0, 1.0]}, np.array([[1.0]])).tolist()
    [[2.0, 0.0]]
    """
    Z = np.asarray(Z, np.float64)
    if cls == "linear":
        return Z @ np.asarray(_get(m, "w"), np.float64).T + np.asarray(_get(m, "b"), np.float64)
    if cls == "quadratic":
        return quad(Z, core) @ np.asarray(_get(m, "w"), np.float64).T + np.asarray(_get(m, "b"), np.float64)
    if cls == "mlp":
        h = np.tanh(Z @ np.asarray(_get(m, "W1"), np.float64).T + np.asarray(_get(m, "b1"), np.float64))
        return h @ np.asarray(_get(m, "W2"), np.float64).T + np.asarray(_get(m, "b2"), np.float64)
    raise ConfigError(f"model class {cls!r}: expected one of {', '.join(CLASSES)}")


def ridge(Za: np.ndarray, Y: np.ndarray, alpha: float, *, jitter: float = 0.0) -> np.ndarray:
    """Ridge coefficients (P,) or (P, K) of ``Y`` (N,) or (N, K) on ``Za`` (N, P) whose last column is the
    intercept's (not penalised); ``jitter`` × I is added to the normal matrix when > 0."""
    P = Za.shape[1]
    reg = alpha * np.eye(P)
    reg[-1, -1] = 0.0  # the intercept is not penalised
    G = Za.T @ Za + reg
    if jitter > 0:
        G = G + jitter * np.eye(P)
    return np.linalg.solve(G, Za.T @ Y)


def fit_mlp(Z: np.ndarray, Y: np.ndarray, wd: float, seed: int, *, ok: np.ndarray | None = None, steps: int = 400,
            patience: int = 30, hidden: int = 32) -> dict[str, Any]:
    """One hidden layer of ``hidden`` tanh units fitted to ``Y`` (N,) or (N, A) on standardised ``Z`` (N, F).

    ``ok`` (N, A): which targets exist (the loss is masked to them, the output bias starts at their
    mean). Adam (lr 1e-2, weight decay ``wd``), at most ``steps`` steps, stopped after ``patience``
    steps without a better loss on a 20 % hold-out; the best weights. Returns ``W1``, ``b1``, ``W2``,
    ``b2`` as lists (``W2`` (hidden,) and ``b2`` a float for a one-output ``Y``).
    """
    from ..errors import require

    torch = require("torch", extra="learn")
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(seed)
    one = Y.ndim == 1
    n = len(Z)
    perm = torch.randperm(n, generator=g)
    hold, fit = perm[: max(1, n // 5)], perm[max(1, n // 5):]
    Zt = torch.as_tensor(Z, dtype=torch.float32)
    Yt = torch.as_tensor(Y if ok is None else np.where(ok, Y, 0.0), dtype=torch.float32)
    Mt = None if ok is None else torch.as_tensor(ok, dtype=torch.float32)
    l1, l2 = torch.nn.Linear(Z.shape[1], hidden), torch.nn.Linear(hidden, 1 if one else Y.shape[1])
    with torch.no_grad():
        for lin in (l1, l2):
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=g) / math.sqrt(lin.weight.shape[1]))
            lin.bias.zero_()
        if ok is not None:  # the output bias starts at the mean target of each action
            mean_y = (np.where(ok, Y, 0.0).sum(0) / np.maximum(ok.sum(0), 1)).astype(np.float32)
            l2.bias.copy_(torch.as_tensor(mean_y))
    params = [*l1.parameters(), *l2.parameters()]
    opt = torch.optim.Adam(params, lr=1e-2, weight_decay=wd)

    def loss(ix: Any) -> Any:
        out = l2(torch.tanh(l1(Zt[ix])))
        if Mt is None:
            return (((out.squeeze(-1) if one else out) - Yt[ix]) ** 2).mean()
        return ((out - Yt[ix]) ** 2 * Mt[ix]).sum() / Mt[ix].sum().clamp(min=1.0)

    best, best_state, bad = float("inf"), [p.detach().clone() for p in params], 0
    for _ in range(steps):
        opt.zero_grad()
        lo = loss(fit)
        lo.backward()
        opt.step()
        with torch.no_grad():
            h = float(loss(hold))
        if h < best - 1e-7:
            best, bad, best_state = h, 0, [p.detach().clone() for p in params]
        else:
            bad += 1
            if bad >= patience:
                break
    W1, b1, W2, b2 = (p.numpy().astype(np.float64) for p in best_state)
    if one:
        return {"W1": W1.tolist(), "b1": b1.tolist(), "W2": W2[0].tolist(), "b2": float(b2[0])}
    return {"W1": W1.tolist(), "b1": b1.tolist(), "W2": W2.tolist(), "b2": b2.tolist()}
