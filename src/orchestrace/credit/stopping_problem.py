"""A stopping problem whose true per-decision advantages are known: the bias test for credit schemes.

A vote with policy-controlled stopping (O5), small enough to solve exactly. A task has a hidden
worker accuracy ``p`` (uniform over ``accuracies``); its always-continue log is ``horizon``
answers, each correct with probability ``p``. After ``k`` answers (``1 ≤ k < horizon``) the
orchestrator sees ``s = (k, d)``, ``d`` = |votes for one answer − votes for the other| (a
sufficient statistic, so the belief MDP over ``s`` is Markov), and decides:

- ``stop`` (action 0): reward 1 if the leading answer is correct, ½ on a tie, else 0;
- ``continue`` (action 1): reward ``−cost``; after the last decision the vote stops by itself
  and that decision also receives the stop reward at ``k = horizon``.

Episode lengths therefore depend on the policy. A tabular policy is one logit per state,
``π(continue | s) = σ(θ_s)``. Everything is exact:

- per task, along its fixed log: ``Q_x(s_k, a)`` and ``V_x(s_k) = Σ_a π(a|s_k) Q_x(s_k, a)`` by
  backward induction (the ``exact`` scheme's input — what an always-continue log gives);
- the true advantage ``A(s, a) = Q(s, a) − V(s)`` with
  ``Q(s, a) = Σ_x P(x) ρ_x(s) Q_x(s, a) / Σ_x P(x) ρ_x(s)`` over all ``2^horizon`` logs,
  ``ρ_x(s)`` the probability that ``π`` reaches ``s`` on log ``x``;
- the return ``J(π)`` and the optimal return ``J*`` (backward induction on the belief MDP).

:func:`estimator_bias` runs GRPO groups (``group`` episodes of one task) under a policy, applies a
credit scheme (:mod:`orchestrace.credit.schemes`) and compares the Monte Carlo mean of each
``(s, a)``'s advantage with ``A(s, a)``. :func:`train_tabular` runs the same policy-gradient
updates under each scheme and records ``J`` after every update.

>>> p = StoppingProblem()
>>> len(p.states), round(p.optimal_return(), 4) > round(p.true_values(np.zeros(len(p.states)))[3], 4)
(19, True)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from .schemes import CreditScheme, group_advantages, parse_scheme

__all__ = ["BiasReport", "StoppingProblem", "estimator_bias", "train_tabular"]

STOP, CONTINUE = 0, 1


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class StoppingProblem:
    """The vote-stopping problem (module docstring); ``states[i] = (k, d)``."""

    horizon: int = 8
    cost: float = 0.01
    accuracies: tuple[float, ...] = (0.55, 0.65, 0.8)
    states: tuple[tuple[int, int], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.horizon, int) and 2 <= self.horizon <= 14):
            raise ConfigError(f"horizon {self.horizon}: must be an integer in [2, 14]")
        if not (np.isfinite(self.cost) and self.cost >= 0):
            raise ConfigError(f"cost {self.cost}: must be finite and ≥ 0")
        if not self.accuracies or not all(0.0 <= a <= 1.0 for a in self.accuracies):
            raise ConfigError(f"accuracies {self.accuracies}: each must be in [0, 1]")
        st = tuple((k, d) for k in range(1, self.horizon) for d in range(k % 2, k + 1, 2))
        object.__setattr__(self, "states", st)

    # ------------------------------------------------------------------ logs and their paths
    def all_logs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every log ``(2^H, H)`` (1 = a correct answer) and its probability ``(2^H,)``."""
        X = np.array(list(itertools.product((0, 1), repeat=self.horizon)), dtype=np.int8)
        c = X.sum(1)
        P = np.mean([a**c * (1 - a) ** (self.horizon - c) for a in self.accuracies], axis=0)
        return X, P

    def sample_logs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` logs ``(n, H)`` drawn from the task distribution."""
        p = rng.choice(np.asarray(self.accuracies), size=n)
        return (rng.random((n, self.horizon)) < p[:, None]).astype(np.int8)

    def paths(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """State index of each decision ``(N, H−1)`` and the stop reward after ``k`` answers ``(N, H)``."""
        c = np.cumsum(X, axis=1)  # (N, H) correct answers among the first k
        k = np.arange(1, self.horizon + 1)
        lead = 2 * c - k
        stop_r = np.where(lead > 0, 1.0, np.where(lead == 0, 0.5, 0.0))
        index = {s: i for i, s in enumerate(self.states)}
        table = np.full((self.horizon, self.horizon + 1), -1, np.int64)
        for (kk, d), i in index.items():
            table[kk, d] = i
        dec = table[k[:-1], np.abs(lead[:, :-1])]  # (N, H−1)
        return dec, stop_r

    def task_values(self, theta: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per log: states ``(N, T)``, exact ``Q_x`` ``(N, T, 2)`` under ``π_θ`` and the stop rewards ``(N, H)``."""
        dec, stop_r = self.paths(X)
        pc = _sigmoid(np.asarray(theta, float))[dec]  # (N, T) π(continue)
        T = self.horizon - 1
        Q = np.zeros((len(X), T, 2))
        v = stop_r[:, -1]
        for k in range(T - 1, -1, -1):
            Q[:, k, STOP], Q[:, k, CONTINUE] = stop_r[:, k], -self.cost + v
            v = pc[:, k] * Q[:, k, CONTINUE] + (1 - pc[:, k]) * Q[:, k, STOP]
        return dec, Q, stop_r

    # ------------------------------------------------------------------ exact quantities
    def true_values(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(A (S, 2), Q (S, 2), visitation d (S,), J)`` of ``π_θ``, exactly over all logs."""
        X, P = self.all_logs()
        dec, Qx, _ = self.task_values(theta, X)
        pc = _sigmoid(np.asarray(theta, float))[dec]
        reach = np.concatenate([np.ones((len(X), 1)), np.cumprod(pc, axis=1)[:, :-1]], axis=1)  # (N, T)
        w = (P[:, None] * reach).ravel()
        S = len(self.states)
        d = np.bincount(dec.ravel(), weights=w, minlength=S)
        Q = np.stack([np.bincount(dec.ravel(), weights=w * Qx[..., a].ravel(), minlength=S)
                      for a in (STOP, CONTINUE)], axis=1) / np.maximum(d, 1e-300)[:, None]
        pi = _sigmoid(np.asarray(theta, float))
        V = (1 - pi) * Q[:, STOP] + pi * Q[:, CONTINUE]
        J = float(P @ ((1 - pc[:, 0]) * Qx[:, 0, STOP] + pc[:, 0] * Qx[:, 0, CONTINUE]))
        return Q - V[:, None], Q, d, J

    def optimal_return(self) -> float:
        """``J*``: backward induction on the belief MDP over ``(k, d)``."""
        X, P = self.all_logs()
        dec, stop_r = self.paths(X)
        S, T = len(self.states), self.horizon - 1
        mass = np.bincount(dec.ravel(), weights=np.repeat(P, T), minlength=S)
        stop_v = np.bincount(dec.ravel(), weights=(P[:, None] * stop_r[:, :T]).ravel(), minlength=S) / mass
        V = np.zeros(S)
        for k in range(T - 1, -1, -1):
            nxt = stop_r[:, k + 1] if k == T - 1 else V[dec[:, k + 1]]
            for s in np.unique(dec[:, k]):
                sel = dec[:, k] == s
                cont = -self.cost + float(P[sel] @ nxt[sel]) / float(P[sel].sum())
                V[s] = max(stop_v[s], cont)
        return float(P @ V[dec[:, 0]])


def _groups(problem: StoppingProblem, theta: np.ndarray, X: np.ndarray, n: int,
            rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` episodes on each log of ``X`` ``(B, H)``: states, actions, rewards, lengths, exact Q and V."""
    dec, Qx, stop_r = problem.task_values(theta, X)
    B, T = dec.shape
    pc = _sigmoid(np.asarray(theta, float))[dec]  # (B, T)
    cont = rng.random((B, n, T)) < pc[:, None, :]  # (B, n, T) the action if the decision is reached
    stopped = np.cumsum(~cont, axis=2) > 0
    lengths = np.where(stopped.any(2), np.argmax(stopped, axis=2) + 1, T)  # (B, n)
    k = np.arange(T)
    r_cont = -problem.cost + np.where(k == T - 1, stop_r[:, -1:], 0.0)  # (B, T)
    rewards = np.where(cont, r_cont[:, None, :], stop_r[:, None, :T])
    act = cont.astype(np.int64)
    q = np.take_along_axis(np.broadcast_to(Qx[:, None], (B, n, T, 2)), act[..., None], axis=3).squeeze(axis=3)
    v = (pc * Qx[..., CONTINUE] + (1 - pc) * Qx[..., STOP])[:, None, :].repeat(n, 1)
    return {"states": np.broadcast_to(dec[:, None, :], (B, n, T)), "actions": act, "rewards": rewards,
            "lengths": lengths, "q": q, "v": v}


@dataclass(frozen=True)
class BiasReport:
    """How far the Monte Carlo mean advantage of a scheme is from ``A(s, a)`` (weights ``d(s)π(a|s)``).

    ``mae`` compares the raw mean with ``A``; the others compare the mean *centred at each state*
    (``Ē(s,a) − Σ_a' π(a'|s) Ē(s,a')`` — a state-only offset does not bias a policy gradient) with
    ``A``: ``rel_bias`` = ``‖c·Ē_c − A‖ / ‖A‖`` after the best scale ``c ≥ 0`` (0: proportional to
    the truth; 1: no better than 0), ``sign`` = weighted share of states where the preferred action
    agrees, ``corr`` = weighted correlation. ``cells`` = ``(s, a)`` pairs with enough visits.
    """

    scheme: str
    mae: float
    rel_bias: float
    sign: float
    corr: float
    cells: int


def _compare(scheme: str, mean: np.ndarray, ok: np.ndarray, A: np.ndarray, d: np.ndarray,
             pi: np.ndarray) -> BiasReport:
    s_ok = ok.all(1)  # (S,) both actions visited enough
    P = np.stack([1 - pi, pi], axis=1)
    w = (d[:, None] * P)[s_ok].ravel()
    w = w / w.sum()
    E, At = mean[s_ok], A[s_ok]
    Ec = (E - (P[s_ok] * E).sum(1, keepdims=True)).ravel()
    Af = At.ravel()
    c = max(float(w @ (Ec * Af)) / max(float(w @ (Ec * Ec)), 1e-300), 0.0)
    rel = float(np.sqrt((w @ (c * Ec - Af) ** 2) / max(float(w @ Af**2), 1e-300)))
    sgn_w = d[s_ok] / d[s_ok].sum()
    agree = np.sign(E[:, CONTINUE] - E[:, STOP]) == np.sign(At[:, CONTINUE] - At[:, STOP])
    mc, ma = w @ Ec, w @ Af
    cov = w @ ((Ec - mc) * (Af - ma))
    corr = float(cov / np.sqrt(max(float(w @ (Ec - mc) ** 2) * float(w @ (Af - ma) ** 2), 1e-300)))
    return BiasReport(scheme, float(w @ np.abs(E.ravel() - Af)), rel, float(sgn_w @ agree), corr,
                      int(2 * s_ok.sum()))


def estimator_bias(problem: StoppingProblem, theta: np.ndarray, schemes: tuple[str, ...] = tuple(CreditScheme), *,
                   tasks: int = 20_000, group: int = 8, seed: int = 0, scale: str = "none",
                   min_visits: int = 100, chunk: int = 4096) -> list[BiasReport]:
    """The bias of each scheme's advantages under ``π_θ`` (``tasks`` groups of ``group`` episodes).

    >>> p = StoppingProblem()
    >>> r = estimator_bias(p, np.zeros(len(p.states)), ("exact", "per-turn"), tasks=20_000, seed=1)
    >>> r[0].rel_bias < 0.5 < r[1].rel_bias, r[0].sign > 0.95 > r[1].sign
    (True, True)
    """
    sch = [parse_scheme(s) for s in schemes]
    if tasks < 1 or group < 1:
        raise ConfigError(f"tasks {tasks} and group {group}: each must be ≥ 1")
    theta = np.asarray(theta, float)
    S = len(problem.states)
    if theta.shape != (S,) or not np.isfinite(theta).all():
        raise ConfigError(f"theta has shape {theta.shape}; the problem has {S} states (finite logits)")
    rng = np.random.default_rng(seed)
    sums = np.zeros((len(sch), S * 2))
    cnt = np.zeros(S * 2)
    for start in range(0, tasks, chunk):
        g = _groups(problem, theta, problem.sample_logs(min(chunk, tasks - start), rng), group, rng)
        m = np.arange(g["rewards"].shape[2]) < g["lengths"][..., None]
        key = (g["states"] * 2 + g["actions"])[m]
        cnt += np.bincount(key, minlength=S * 2)
        for j, s in enumerate(sch):
            adv = group_advantages(s, g["rewards"], g["lengths"], q=g["q"], v=g["v"], scale=scale)
            sums[j] += np.bincount(key, weights=adv[m], minlength=S * 2)
    A, _, d, _ = problem.true_values(theta)
    ok = (cnt >= min_visits).reshape(S, 2)
    if not ok.all(1).any():
        raise ConfigError(f"no state had both actions visited {min_visits} times; raise tasks")
    pi = _sigmoid(theta)
    return [_compare(s.value, (sums[j] / np.maximum(cnt, 1)).reshape(S, 2), ok, A, d, pi)
            for j, s in enumerate(sch)]


def train_tabular(problem: StoppingProblem, scheme: str, *, updates: int = 300, tasks: int = 8,
                  group: int = 8, lr: float = 10.0, seed: int = 0, scale: str = "none",
                  init: float = 0.0) -> np.ndarray:
    """Policy-gradient training of a tabular policy (every ``θ_s = init`` to start); ``J`` after each update ``(updates + 1,)``.

    Each update samples ``tasks`` logs with ``group`` episodes each, credits every decision with
    ``scheme`` and steps ``θ += lr · Σ Â ∇log π(a|s) / (tasks · group)`` (``∇_θs log π`` =
    ``a − π(continue|s)`` at the decision's state). Tasks and actions draw from separate streams of
    ``seed``, so every scheme trained with one seed sees the same tasks in the same order.

    >>> J = train_tabular(StoppingProblem(), "exact", updates=30, seed=0)
    >>> bool(J[-1] > J[0])
    True
    """
    sch = parse_scheme(scheme)
    if updates < 1 or tasks < 1 or group < 1 or not (np.isfinite(lr) and lr > 0):
        raise ConfigError("updates, tasks and group must be ≥ 1 and lr > 0")
    S = len(problem.states)
    theta = np.full(S, float(init))
    rng_tasks, rng = np.random.default_rng([seed, 0]), np.random.default_rng([seed, 1])
    J = np.empty(updates + 1)
    J[0] = problem.true_values(theta)[3]
    for u in range(updates):
        g = _groups(problem, theta, problem.sample_logs(tasks, rng_tasks), group, rng)
        adv = group_advantages(sch, g["rewards"], g["lengths"], q=g["q"], v=g["v"], scale=scale)
        m = np.arange(adv.shape[2]) < g["lengths"][..., None]
        st = g["states"][m]
        score = g["actions"][m] - _sigmoid(theta)[st]  # ∂ log π(a|s) / ∂θ_s
        theta = theta + lr * np.bincount(st, weights=adv[m] * score, minlength=S) / (tasks * group)
        J[u + 1] = problem.true_values(theta)[3]
    return J
