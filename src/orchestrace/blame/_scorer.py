"""The learned blame scorer: a conditional logit over a run's candidate turns, numpy only.

``P(turn j | run) = softmax_j(w · x_j / T)`` over the candidates of :func:`~._features.candidates`.
The culprit step is the most probable turn; the culprit agent the agent with the most
probability summed over its turns. Fitting (:func:`fit`) maximises the log-likelihood of the
labelled turn plus that of the labelled agent, with an L2 penalty, by gradient descent with
momentum; :func:`cross_validate` gives every run a prediction from a model fitted on the other
folds only (folds by run); each fold chooses its L2 strength and the temperature ``T`` by an
inner cross-validation on its own training runs (nested), and fits on the same inner out-of-fold
predictions the **Platt maps** that turn the top agent's and the top turn's probability into a
calibrated confidence (:func:`fit_platt`, held near the identity by a penalty), so the reported
accuracy and the calibration of the confidence are out of sample. Each run family (a transcript
with a progress ledger, Magentic-One style, or not) has its own weights. The loss is evaluated
on all runs at once (padded arrays, :class:`_Batch`).

The shipped weights (``orchestrace/data/blame_scorer.json``) were fitted on the Who&When
development split (``python benchmarks/whowhen.py --fit``); :func:`load_scorer` reads them.

>>> rng = np.random.default_rng(0)
>>> w_true = np.array([2.0, -1.0])
>>> runs = []
>>> for _ in range(60):
...     x = rng.normal(size=(6, 2))
...     runs.append(Example(x, int(np.argmax(x @ w_true + rng.gumbel(size=6))), ["a", "b", "a", "b", "c", "c"]))
>>> s = fit(runs, ("f1", "f2"), l2=0.1)
>>> bool(s.weights["chat"][0] > 0 > s.weights["chat"][1])
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Example", "Scorer", "agent_probs", "brier", "cross_validate", "fit", "fit_families", "fit_platt",
           "load_scorer", "platt", "reliability", "select"]

#: Where the shipped weights live.
WEIGHTS = Path(__file__).resolve().parents[1] / "data" / "blame_scorer.json"


@dataclass(frozen=True)
class Example:
    """One run for fitting: candidate features ``x`` (n, F), the labelled turn's row ``y`` (-1: not a
    candidate, so only the agent term counts), and the candidates' ``agents``; ``label_agent`` the labelled
    agent when it may differ from ``agents[y]`` (None: ``agents[y]``)."""

    x: np.ndarray
    y: int
    agents: Sequence[str]
    label_agent: str | None = None

    def agent(self) -> str | None:
        return self.label_agent if self.label_agent is not None else (self.agents[self.y] if self.y >= 0 else None)


@dataclass(frozen=True)
class Scorer:
    """Weights over :data:`~._features.FEATURES` (by name) and a temperature, per run family
    (:data:`~._features.FAMILIES`), with the L2 strength each family was fitted with."""

    features: tuple[str, ...]
    weights: dict[str, np.ndarray]
    temperature: dict[str, float]
    l2: dict[str, float]
    trained_on: str = ""
    #: Platt maps ``(a, b)`` per family for the agent and the step confidence: ``sigmoid(a·logit(p) + b)``,
    #: fitted on out-of-fold predictions (identity when absent).
    platt: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    def calibrated(self, p: float, family: str = "chat", what: str = "agent") -> float:
        """The calibrated probability of a raw agent (``what="agent"``) or turn (``"step"``) probability."""
        ab = self.platt.get(family if family in self.platt else next(iter(self.platt), ""), None)
        if ab is None:
            return p
        a, b = ab[:2] if what == "agent" else ab[2:]
        return platt(p, a, b)

    def probs(self, x: np.ndarray, family: str = "chat") -> np.ndarray:
        """``P(turn)`` over the rows of ``x`` (n, F) → (n,)."""
        if x.shape[0] == 0:
            return np.zeros(0)
        fam = family if family in self.weights else next(iter(self.weights))
        z = x @ self.weights[fam] / self.temperature.get(fam, 1.0)
        z = np.exp(z - z.max())
        return z / z.sum()

    def to_json(self) -> dict[str, object]:
        return {"features": list(self.features), "trained_on": self.trained_on,
                "families": {f: {"weights": [round(float(v), 6) for v in w], "temperature": self.temperature[f],
                                 "l2": self.l2[f], **({"platt": [round(float(v), 6) for v in self.platt[f]]}
                                                      if f in self.platt else {})}
                             for f, w in self.weights.items()}}


def agent_probs(p: np.ndarray, agents: Sequence[str]) -> dict[str, float]:
    """Turn probabilities summed per agent."""
    out: dict[str, float] = {}
    for a, v in zip(agents, p.tolist(), strict=True):
        out[a] = out.get(a, 0.0) + v
    return out


@dataclass(frozen=True)
class _Batch:
    """Runs padded to one array: features ``x`` (R, N, F), candidate mask ``m`` (R, N), labelled row ``y``
    (R,; -1 none) and the labelled agent's rows ``a`` (R, N)."""

    x: np.ndarray  # (R, N, F)
    m: np.ndarray  # (R, N) bool
    y: np.ndarray  # (R,) int
    a: np.ndarray  # (R, N) bool

    @classmethod
    def of(cls, runs: Sequence[Example], n_features: int) -> _Batch:
        r_n, n_max = len(runs), max([r.x.shape[0] for r in runs] + [1])
        x = np.zeros((r_n, n_max, n_features))
        m = np.zeros((r_n, n_max), dtype=bool)
        a = np.zeros((r_n, n_max), dtype=bool)
        for k, r in enumerate(runs):
            n = r.x.shape[0]
            x[k, :n], m[k, :n] = r.x, True
            who = r.agent()
            a[k, :n] = [g == who for g in r.agents]
        return cls(x, m, np.array([r.y for r in runs], dtype=int), a)

    def take(self, idx: Sequence[int]) -> _Batch:
        i = np.asarray(idx, dtype=int)
        return _Batch(self.x[i], self.m[i], self.y[i], self.a[i])


def _loss_grad(w: np.ndarray, b: _Batch, l2: float, agent_weight: float,
               prior: np.ndarray) -> tuple[float, np.ndarray]:
    """Penalised negative log-likelihood of the labelled turns and agents, and its gradient (vectorised)."""
    d = w - prior
    loss = 0.5 * l2 * float(d @ d)
    grad = l2 * d
    z = np.where(b.m, b.x @ w, -np.inf)  # (R, N)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    has = b.y >= 0
    if has.any():
        rows = np.flatnonzero(has)
        loss -= float(np.log(p[rows, b.y[rows]] + 1e-300).sum())
        g = p[rows].copy()
        g[np.arange(rows.size), b.y[rows]] -= 1.0
        grad = grad + np.einsum("rn,rnf->f", g, b.x[rows])
    if agent_weight:
        ok = b.a.any(axis=1)
        if ok.any():
            pa = np.where(b.a[ok], p[ok], 0.0)
            s = pa.sum(axis=1, keepdims=True)
            loss -= agent_weight * float(np.log(s + 1e-300).sum())
            q = pa / np.maximum(s, 1e-300)
            grad = grad + agent_weight * np.einsum("rn,rnf->f", p[ok] - q, b.x[ok])
    return loss, grad


#: The prior mean of the weights: the fixed rule's pick (``rule_pick``) is where the penalty pulls.
PRIOR = {"rule_pick": 2.0}
#: L2 strengths tried (chosen by inner cross-validation in :func:`cross_validate`).
L2_GRID = (1.0, 3.0, 10.0)


def _fit_w(runs: Sequence[Example] | _Batch, features: Sequence[str], l2: float, agent_weight: float, steps: int,
           prior: dict[str, float] | None) -> np.ndarray:
    f = len(features)
    b = runs if isinstance(runs, _Batch) else _Batch.of(runs, f)
    w0 = np.array([(PRIOR if prior is None else prior).get(n, 0.0) for n in features])
    w = w0.copy()
    v = np.zeros(f)
    lr = 0.5 / max(1, b.y.size)
    for _ in range(steps):
        _, g = _loss_grad(w + 0.9 * v, b, l2, agent_weight, w0)
        v = 0.9 * v - lr * g
        w = w + v
    return w


def fit(runs: Sequence[Example], features: Sequence[str], *, l2: float = 3.0, agent_weight: float = 1.0,
        steps: int = 300, prior: dict[str, float] | None = None, family: str = "chat") -> Scorer:
    """Maximum penalised likelihood (see the module docstring; the L2 penalty pulls towards ``prior``,
    default :data:`PRIOR`: with a strong penalty the scorer is the fixed rule); temperature 1, one family."""
    w = _fit_w(runs, features, l2, agent_weight, steps, prior)
    return Scorer(tuple(features), {family: w}, {family: 1.0}, {family: l2})


def _nll_at(t: float, logits: Sequence[np.ndarray], ys: Sequence[int]) -> float:
    out = 0.0
    for z, y in zip(logits, ys, strict=True):
        if y < 0:
            continue
        s = z / t
        s = s - s.max()
        out -= float(s[y] - np.log(np.exp(s).sum()))
    return out


def fit_temperature(logits: Sequence[np.ndarray], ys: Sequence[int]) -> float:
    """The temperature that minimises the held-out negative log-likelihood (a grid search)."""
    grid = np.exp(np.linspace(np.log(0.25), np.log(8.0), 41))
    return float(min(grid, key=lambda t: _nll_at(float(t), logits, ys)))


def _logit(p: np.ndarray | float) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), 1e-4, 1 - 1e-4)
    return np.log(q / (1 - q))


def platt(p: float, a: float, b: float) -> float:
    """``sigmoid(a·logit(p) + b)``: a probability through a Platt map (``a=1, b=0`` is the identity).

    >>> round(platt(0.8, 1.0, 0.0), 6), round(platt(0.8, 0.5, 0.0), 3)
    (0.8, 0.667)
    """
    return float(1 / (1 + np.exp(-(a * float(_logit(p)) + b))))


def fit_platt(conf: Sequence[float], hit: Sequence[float], l2: float = 2.0) -> tuple[float, float]:
    """Platt scaling ``(a, b)``: logistic regression of ``hit`` on ``logit(conf)`` by Newton's method, with an L2
    penalty ``l2`` pulling towards the identity map (``a=1, b=0``), so a handful of runs cannot bend it far.

    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(0.05, 0.95, 4000)
    >>> a, b = fit_platt(c, (rng.uniform(size=4000) < c).astype(float))  # already calibrated: ≈ identity
    >>> abs(a - 1) < 0.15 and abs(b) < 0.15
    True
    >>> a, b = fit_platt(c, (rng.uniform(size=4000) < c / 2).astype(float))  # over-confident: pulled down
    >>> platt(0.8, a, b) < 0.6
    True
    """
    x = _logit(np.asarray(conf, dtype=float))
    y = np.asarray(hit, dtype=float)
    if x.size == 0:
        return 1.0, 0.0
    th = np.array([1.0, 0.0])
    prior = th.copy()
    xs = np.stack([x, np.ones_like(x)], axis=1)  # (n, 2)
    for _ in range(50):
        q = 1 / (1 + np.exp(-(xs @ th)))
        g = xs.T @ (q - y) + l2 * (th - prior)
        h = xs.T @ (xs * (q * (1 - q))[:, None]) + l2 * np.eye(2)
        step = np.linalg.solve(h, g)
        th = th - step
        if float(np.abs(step).max()) < 1e-10:
            break
    return float(th[0]), float(th[1])


def _tops(logits: Sequence[np.ndarray], runs: Sequence[Example], t: float) -> tuple[list[float], ...]:
    """Per run with candidates, at temperature ``t``: the top agent's probability and hit, the top turn's and hit."""
    ca, ha, cs, hs = [], [], [], []
    for z, r in zip(logits, runs, strict=True):
        if z.size == 0:
            continue
        p = np.exp((z - z.max()) / t)
        p /= p.sum()
        ap = agent_probs(p, r.agents)
        a = max(ap, key=ap.__getitem__)
        row = max((k for k, g in enumerate(r.agents) if g == a), key=lambda k: p[k])
        ca.append(ap[a])
        ha.append(float(a == r.agent()))
        cs.append(float(p[row]))
        hs.append(float(row == r.y))
    return ca, ha, cs, hs


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    idx = np.random.default_rng(seed).permutation(n)
    return [idx[i::k] for i in range(k)]


def _oof(runs: Sequence[Example], features: Sequence[str], k: int, seed: int, l2: float,
         agent_weight: float) -> list[np.ndarray]:
    """Out-of-fold logits (temperature 1) at a fixed L2."""
    out: list[np.ndarray] = [np.zeros(0)] * len(runs)
    for test in _folds(len(runs), min(k, len(runs)), seed):
        held = set(test.tolist())
        w = _fit_w([runs[i] for i in range(len(runs)) if i not in held], features, l2, agent_weight, 300, None)
        for i in held:
            out[i] = runs[i].x @ w
    return out


def _score(logits: Sequence[np.ndarray], runs: Sequence[Example]) -> float:
    """Agent + step hits of the argmax picks (the selection criterion)."""
    hits = 0.0
    for z, r in zip(logits, runs, strict=True):
        if z.size == 0:
            continue
        p = np.exp(z - z.max())
        ap = agent_probs(p, r.agents)
        hits += float(max(ap, key=ap.__getitem__) == r.agent()) + float(int(np.argmax(z)) == r.y)
    return hits


def select(runs: Sequence[Example], features: Sequence[str], *, k: int = 5, seed: int = 1,
           agent_weight: float = 1.0) -> tuple[float, float, tuple[float, float, float, float]]:
    """``(l2, temperature, platt)`` for ``runs``: the L2 of :data:`L2_GRID` with the most out-of-fold hits, the
    temperature that minimises those predictions' negative log-likelihood, and the Platt maps of the agent
    and the step confidence fitted on the same out-of-fold predictions (:func:`fit_platt`)."""
    best: tuple[float, float, list[np.ndarray]] | None = None
    for l2 in L2_GRID:
        z = _oof(runs, features, k, seed, l2, agent_weight)
        sc = _score(z, runs)
        if best is None or sc > best[1]:
            best = (l2, sc, z)
    assert best is not None
    t = fit_temperature(best[2], [r.y for r in runs])
    ca, ha, cs, hs = _tops(best[2], runs, t)
    return best[0], t, (*fit_platt(ca, ha), *fit_platt(cs, hs))


def cross_validate(runs: Sequence[Example], features: Sequence[str], *, k: int = 10, seed: int = 0,
                   agent_weight: float = 1.0) -> tuple[list[np.ndarray], list[float],
                                                       list[tuple[float, float, float, float]]]:
    """Out-of-fold turn probabilities per run (folds by run), the L2 chosen per run's fold and that fold's
    Platt maps (agent a, b, step a, b). Each outer fold chooses its L2, temperature and Platt maps by an
    inner cross-validation on its own training runs only (:func:`select`), so nothing about a run is used
    to predict it or to calibrate its confidence."""
    out: list[np.ndarray] = [np.zeros(0)] * len(runs)
    chosen = [0.0] * len(runs)
    maps: list[tuple[float, float, float, float]] = [(1.0, 0.0, 1.0, 0.0)] * len(runs)
    for test in _folds(len(runs), min(k, len(runs)), seed):
        held = set(test.tolist())
        train = [runs[i] for i in range(len(runs)) if i not in held]
        l2, t, pm = select(train, features, k=min(5, len(train)), agent_weight=agent_weight)
        w = _fit_w(train, features, l2, agent_weight, 300, None)
        for i in held:
            z = runs[i].x @ w / t
            p = np.exp(z - z.max()) if z.size else z
            out[i] = p / p.sum() if z.size else p
            chosen[i] = l2
            maps[i] = pm
    return out, chosen, maps


def fit_families(runs: Sequence[Example], families: Sequence[str], features: Sequence[str], *,
                 trained_on: str = "", agent_weight: float = 1.0, with_platt: bool = False) -> Scorer:
    """One weight vector per family, its L2 and temperature chosen by :func:`select` on that family's runs;
    ``with_platt`` also keeps the Platt maps (off by default: on the Who&When development split they made the
    cross-validated calibration worse than the temperature alone, docs/blame.md §4)."""
    w, t, lam, pm = {}, {}, {}, {}
    for fam in dict.fromkeys(families):
        rs = [r for r, f in zip(runs, families, strict=True) if f == fam]
        lam[fam], t[fam], pm[fam] = select(rs, features, k=min(5, len(rs)), agent_weight=agent_weight)
        w[fam] = _fit_w(rs, features, lam[fam], agent_weight, 300, None)
    return Scorer(tuple(features), w, t, lam, trained_on, pm if with_platt else {})


def reliability(conf: Sequence[float], hit: Sequence[float], bins: int = 10) -> tuple[float, list[tuple[float, float, int]]]:
    """Expected calibration error and the bins ``(mean confidence, accuracy, count)`` (equal width).

    >>> ece, rows = reliability([0.9, 0.9, 0.1, 0.1], [1, 1, 0, 0])
    >>> round(ece, 3), rows[-1]
    (0.1, (0.9, 1.0, 2))
    """
    c = np.asarray(conf, dtype=float)
    h = np.asarray(hit, dtype=float)
    edges = np.linspace(0, 1, bins + 1)
    k = np.clip(np.digitize(c, edges[1:-1]), 0, bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        m = k == b
        if m.any():
            rows.append((float(c[m].mean()), float(h[m].mean()), int(m.sum())))
            ece += m.sum() / len(c) * abs(c[m].mean() - h[m].mean())
    return float(ece), rows


def brier(conf: Sequence[float], hit: Sequence[float]) -> float:
    """Brier score: the mean squared difference between confidence and outcome (0 best; 0.25 = always 0.5).

    >>> brier([0.9, 0.2], [1, 0])
    0.025
    """
    c = np.asarray(conf, dtype=float)
    return round(float(((c - np.asarray(hit, dtype=float)) ** 2).mean()), 12) if c.size else float("nan")


def load_scorer(path: str | Path | None = None) -> Scorer:
    """The shipped scorer (or one written by ``benchmarks/whowhen.py --fit``); a located error when unreadable.

    >>> sorted(load_scorer().weights)
    ['chat', 'ledger']
    """
    from ..errors import ConfigError

    p = Path(path) if path is not None else WEIGHTS
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        feats = tuple(str(x) for x in d["features"])
        w, t, lam, pm = {}, {}, {}, {}
        for fam, v in d["families"].items():
            w[fam] = np.asarray(v["weights"], dtype=float)
            if w[fam].shape != (len(feats),):
                raise ValueError(f"family {fam!r}: {len(feats)} features but {w[fam].shape} weights")
            t[fam], lam[fam] = float(v.get("temperature", 1.0)), float(v.get("l2", 1.0))
            if "platt" in v:
                a1, b1, a2, b2 = (float(x) for x in v["platt"])
                pm[fam] = (a1, b1, a2, b2)
        if not w:
            raise ValueError("no family")
        return Scorer(feats, w, t, lam, str(d.get("trained_on", "")), pm)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{p}: not a blame scorer file ({exc}); refit with python benchmarks/whowhen.py --fit") from None
