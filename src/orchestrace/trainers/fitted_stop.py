"""Regression-based optimal stopping for the O5 gate (Longstaff–Schwartz / fitted Q with replay).

``TrainConfig(stop_update="fitted")``. The O1–O4 heads are behaviour-cloned (``warm_start``)
and then **fixed**; only the stop decision is learned, by a dedicated network
(:class:`~orchestrace.policies.neural.StopCritic`) that never moves the heads. Read top to bottom:

1. **Paths.** With the heads greedy (as the protocol evaluates them) the episode after a
   CONTINUE does not depend on where the gate stops later, so one *always-continue* path
   per task seed holds every stopping time's outcome: at each O5 check k the environment's
   replay counterfactual gives P_k, the return of stopping there
   (prefix reward + ``BatchEnv.stop_values()``), and the path's end gives the return when
   every check continues. ``steps × episodes_per_step`` training task seeds
   (:func:`~orchestrace.trainers.rollout.train_seeds`) are collected (:func:`collect_paths`).
2. **Targets under the current gate** (:func:`continuation_targets`): for check k,
   U_k = the return of following the gate from check k+1 on (the first later check where it
   stops, else the path's end); the regression target is the advantage of continuing
   y_k = U_k − P_k (common randomness cancels in the difference).
3. **Fit** Â(s) ≈ E[y | s] by least squares on the evidence observation (price, remaining
   budget and rounds are in it) to convergence: Adam, minibatches, early stopping on a held-out
   20 % of the episodes (:func:`fit_advantage`).
4. **Policy iteration**: the gate becomes "continue iff Â(s) > 0"; targets are recomputed
   under it and the network refitted (``FIT_ITERATIONS`` rounds; the first round's gate stops at
   the next check, i.e. one-step look-ahead).
5. **Margin on validation seeds only**: the gate continues iff Â(s) > m, with m from
   :data:`MARGINS` chosen by the exact value of the gate on paths of
   ``8 × eval_episodes`` validation seeds (:func:`gate_value`, :func:`choose_margin`: m ≠ 0
   only when it beats m = 0 by a paired 95 % interval) — a block disjoint from training,
   checkpoint selection and the protocol's tuning and test seeds.
6. Write a normal checkpoint: ``orchestrace eval`` evaluates it with the fair protocol unchanged.

>>> import numpy as np
>>> paths = StopPaths(obs=np.zeros((3, 1), np.float32), legal=np.array([True, True, False]), ep=np.array([0, 0, 0]),
...                   k=np.array([0, 1, 2]), payoff=np.array([0.2, 0.5, 0.4]), final=np.array([0.4]), seeds=np.array([7]))
>>> continuation_targets(paths, np.array([True, False, False])).tolist()   # continue at 0, stop at 1
[0.5, 0.4, 0.4]
>>> gate_value(paths, np.array([True, False, False])).tolist(), clairvoyant_value(paths).tolist()
([0.5], [0.5])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._stats import Z975_ROUNDED
from .rollout import VALIDATION_BASE, train_seeds

__all__ = [
    "FIT_EPOCHS",
    "FIT_ITERATIONS",
    "MARGINS",
    "StopPaths",
    "choose_margin",
    "clairvoyant_value",
    "collect_paths",
    "continuation_targets",
    "fit_advantage",
    "fit_stop",
    "gate_value",
    "train",
]

#: Collect → fit rounds of policy iteration.
FIT_ITERATIONS = 3
#: Most epochs of one fit (early stopping on the held-out episodes usually ends it sooner).
FIT_EPOCHS = 60
#: Candidate margins (return units) of "continue iff Â(s) > m", chosen on validation seeds.
MARGINS = (-0.02, -0.01, -0.005, 0.0, 0.005, 0.01, 0.02)
#: Validation block of the margin choice (disjoint from checkpoint selection, VALIDATION_BASE + i,
#: and from the protocol's tuning seeds, VALIDATION_BASE + 50,000,000 + i).
MARGIN_BASE = VALIDATION_BASE + 20_000_000
#: Validation paths of the margin choice per ``eval_episodes`` (2,048 with the default 256).
MARGIN_EPISODES_PER_EVAL = 8


@dataclass
class StopPaths:
    """The O5 checks (M rows, in (episode, check) order) of E always-continue paths."""

    obs: np.ndarray  # (M, D) float32 observation at the check
    legal: np.ndarray  # (M,) bool: CONTINUE is legal (else the check must stop)
    ep: np.ndarray  # (M,) episode index 0..E-1
    k: np.ndarray  # (M,) check index inside the episode
    payoff: np.ndarray  # (M,) episode return when stopping at this check
    final: np.ndarray  # (E,) episode return when every check continues
    seeds: np.ndarray  # (E,) task seeds

    @property
    def n_episodes(self) -> int:
        return len(self.seeds)


def _first_stop(paths: StopPaths, cont: np.ndarray) -> np.ndarray:
    """(E,) value of the gate ``cont`` (M,) on each path: the payoff of its first stop, else the end."""
    stop = ~(np.asarray(cont, bool) & paths.legal)
    val = paths.final.astype(np.float64).copy()
    rows = np.flatnonzero(stop)
    eps, first = np.unique(paths.ep[rows], return_index=True)
    val[eps] = paths.payoff[rows[first]]
    return val


def gate_value(paths: StopPaths, cont: np.ndarray) -> np.ndarray:
    """Exact episode returns (E,) of the stop rule "continue where ``cont``" (M,) on the paths."""
    return _first_stop(paths, cont)


def clairvoyant_value(paths: StopPaths) -> np.ndarray:
    """(E,) the best stopping time of each path in hindsight (max over its checks and its end)."""
    best = paths.final.astype(np.float64).copy()
    np.maximum.at(best, paths.ep, paths.payoff)
    return best


def continuation_targets(paths: StopPaths, cont: np.ndarray) -> np.ndarray:
    """U_k (M,): the return of continuing at check k and following ``cont`` from check k+1 on.

    The one backward pass (:func:`orchestrace.logged.value.continuation_values`) on the ragged
    paths laid out as (E, most checks + 1): an episode's columns after its last check hold its
    final return and always stop."""
    from ..logged.value import continuation_values

    E = paths.n_episodes
    n = np.bincount(paths.ep, minlength=E)
    width = int(n.max()) + 1 if len(n) else 1
    pay = np.repeat(paths.final.astype(np.float64)[:, None], width, 1)
    go = np.zeros((E, width), bool)
    pay[paths.ep, paths.k] = paths.payoff
    go[paths.ep, paths.k] = np.asarray(cont, bool) & paths.legal
    return continuation_values(pay, go, go)[paths.ep, paths.k]


@torch.no_grad()
def collect_paths(env: Any, policy: Any, seeds: np.ndarray, *, device: Any = "cpu", batch: int = 512,
                  advance: Any = None) -> StopPaths:
    """Play each task seed with the policy's greedy O1–O4 heads, continuing at every O5 check where
    CONTINUE is legal, and record each check's observation and stop payoff (see the module docstring).

    ``env`` is the run's batched env (a :class:`~orchestrace.env.batch.BatchedEnv`, local or on
    Ray: it is reset with ``batch`` seeds at a time) or an EnvConfig (a local one is made).
    ``advance(n)`` (optional) is called with the number of paths finished after each batch."""
    from ..env.batch import local_batch_env
    from ..env.config import EnvConfig
    from ..env.layout import O5, due_phase

    benv = local_batch_env(env, batch) if isinstance(env, EnvConfig) else env
    lay = benv.config.layout
    stop_at, cont_at = lay.heads.stop, lay.heads.cont
    if int(policy.stop_index) != stop_at:
        raise ValueError(f"the policy's STOP action {policy.stop_index} is not the env's ({stop_at})")
    obs_l: list[np.ndarray] = []
    cols: dict[str, list[np.ndarray]] = {"legal": [], "ep": [], "k": [], "payoff": []}
    final = np.zeros(len(seeds))
    seeds = np.asarray(seeds, np.int64)
    for lo in range(0, len(seeds), batch):
        chunk = seeds[lo:lo + batch]
        obs, mask = benv.reset(seeds=chunk)
        cum = np.zeros(len(chunk))
        nk = np.zeros(len(chunk), np.int64)
        alive = np.ones(len(chunk), bool)
        while alive.any():
            a, _, _ = policy.act(torch.as_tensor(obs, device=device), torch.as_tensor(mask, device=device), greedy=True)
            a = a.cpu().numpy().astype(np.int64)
            at5 = alive & (due_phase(obs) == O5)
            if at5.any():
                rows = np.flatnonzero(at5)
                sv = benv.stop_values()
                legal = mask[rows, cont_at]
                obs_l.append(np.asarray(obs[rows], np.float32))
                cols["legal"].append(legal)
                cols["ep"].append(lo + rows)
                cols["k"].append(nk[rows].copy())
                cols["payoff"].append(cum[rows] + sv[rows])
                nk[rows] += 1
                a[rows] = np.where(legal, cont_at, stop_at)
            obs, mask, r, done, _ = benv.step(a)
            cum += np.where(alive, r, 0.0)
            fin = alive & done
            final[lo + np.flatnonzero(fin)] = cum[fin]
            alive &= ~done
        if advance is not None:
            advance(len(chunk))
    ep = np.concatenate(cols["ep"]) if cols["ep"] else np.zeros(0, np.int64)
    k = np.concatenate(cols["k"]) if cols["k"] else np.zeros(0, np.int64)
    order = np.lexsort((k, ep))
    d = int(lay.obs.dim)
    return StopPaths(obs=(np.concatenate(obs_l) if obs_l else np.zeros((0, d), np.float32))[order],
                     legal=(np.concatenate(cols["legal"]) if obs_l else np.zeros(0, bool))[order],
                     ep=ep[order], k=k[order],
                     payoff=(np.concatenate(cols["payoff"]) if obs_l else np.zeros(0))[order],
                     final=final, seeds=seeds)


def fit_advantage(critic: Any, obs: np.ndarray, y: np.ndarray, groups: np.ndarray, *, seed: int, lr: float = 1e-3,
                  batch: int = 256, max_epochs: int = 60, patience: int = 6, holdout: float = 0.2,
                  device: Any = "cpu", advance: Any = None) -> dict[str, float]:
    """Least-squares fit of ``critic(obs) ≈ y`` with early stopping on a held-out share of the
    ``groups`` (episodes: checks of one episode never straddle the split). The critic keeps the
    weights of its best held-out epoch. Returns the fit's statistics. ``advance(1)`` (optional)
    is called after each epoch.

    >>> import torch; from orchestrace.policies.neural import StopCritic
    >>> _ = torch.manual_seed(0); x = np.random.default_rng(0).normal(size=(600, 3)).astype(np.float32)
    >>> c = StopCritic(3, None, hidden=16)
    >>> st = fit_advantage(c, x, 0.1 * x[:, 0], np.arange(600), seed=0, max_epochs=40)
    >>> st["heldout_r2"] > 0.8
    True
    """
    gen = np.random.default_rng([int(seed), 11])
    uniq = np.unique(groups)
    held = set(gen.choice(uniq, max(1, int(round(holdout * len(uniq)))), replace=False).tolist()) if len(uniq) > 1 else set()
    is_held = np.array([g in held for g in groups], bool)
    tr, te = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    if te.size == 0:
        te = tr
    x = torch.as_tensor(np.asarray(obs, np.float32), device=device)
    scale = float(np.std(y[tr])) or 1.0
    critic.y_scale.fill_(scale)
    critic.update_norm(x[torch.as_tensor(tr, device=device)])
    t = torch.as_tensor(np.asarray(y, np.float32) / scale, device=device)
    params = [p for n, p in critic.named_parameters()]
    opt = torch.optim.Adam(params, lr=lr)
    tgen = torch.Generator().manual_seed(int(seed))

    def heldout_mse() -> float:
        with torch.no_grad():
            return float(((critic(x[te]) / scale - t[te]) ** 2).mean())

    best, best_state, bad, epochs = heldout_mse(), {k: v.clone() for k, v in critic.state_dict().items()}, 0, 0
    tr_t = torch.as_tensor(tr)
    for epoch in range(max_epochs):
        perm = tr_t[torch.randperm(len(tr_t), generator=tgen)]
        for i in range(0, len(perm), batch):
            idx = perm[i:i + batch].to(device)
            loss = ((critic(x[idx]) / scale - t[idx]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epochs = epoch + 1
        if advance is not None:
            advance(1)
        mse = heldout_mse()
        if mse < best - 1e-5:
            best, best_state, bad = mse, {k: v.clone() for k, v in critic.state_dict().items()}, 0
        else:
            bad += 1
            if bad >= patience:
                break
    critic.load_state_dict(best_state)
    var = float(t[te].var(unbiased=False)) or 1.0
    return {"heldout_mse": best * scale * scale, "heldout_r2": 1.0 - best / var, "epochs": float(epochs),
            "train_rows": float(tr.size), "heldout_rows": float(te.size)}


def _predict(critic: Any, obs: np.ndarray, device: Any) -> np.ndarray:
    with torch.no_grad():
        return critic(torch.as_tensor(obs, device=device)).cpu().numpy().astype(np.float64)


def choose_margin(per_episode: dict[float, np.ndarray]) -> float:
    """The margin whose validation returns (E,) are best, among 0 and the margins that beat 0 by a
    paired 95 % interval (a margin is a calibration, not a free knob: noise must not pick it).

    >>> rng = np.random.default_rng(0); base = rng.normal(size=500)
    >>> choose_margin({0.0: base, 0.01: base + 0.001 * rng.normal(size=500)})
    0.0
    >>> choose_margin({0.0: base, 0.01: base + 0.1 + 0.01 * rng.normal(size=500)})
    0.01
    """
    zero = per_episode[0.0]
    ok = [0.0]
    for m, v in per_episode.items():
        d = v - zero
        if m != 0.0 and len(d) > 1 and d.mean() - Z975_ROUNDED * d.std(ddof=1) / np.sqrt(len(d)) > 0:
            ok.append(m)
    return float(max(ok, key=lambda m: float(per_episode[m].mean())))


def fit_stop(critic: Any, train_paths: StopPaths, val_paths: StopPaths, *, seed: int, iterations: int = FIT_ITERATIONS,
             lr: float = 1e-3, batch: int = 256, device: Any = "cpu", log: Any = None,
             advance: Any = None) -> dict[str, float]:
    """Policy iteration of the stop critic on ``train_paths``; the margin chosen on ``val_paths``.

    Sets ``critic.margin``; returns the statistics of the last fit and the validation values.
    ``advance(n, **fields)`` (optional) counts the epochs, :data:`FIT_EPOCHS` per iteration (an
    iteration that stops early advances by the epochs it skipped).
    """
    legal = train_paths.legal
    cont = np.zeros(len(legal), bool)  # round 0: stop at the next check (one-step look-ahead)
    stats: dict[str, float] = {}
    for it in range(iterations):
        u = continuation_targets(train_paths, cont)
        y = u - train_paths.payoff
        rows = np.flatnonzero(legal)
        stats = fit_advantage(critic, train_paths.obs[rows], y[rows], train_paths.ep[rows], seed=seed + it,
                              lr=lr, batch=batch, device=device, max_epochs=FIT_EPOCHS,
                              advance=None if advance is None else (lambda n=1: advance(n)))
        if advance is not None:
            advance(FIT_EPOCHS - int(stats["epochs"]), iteration=it + 1, r2=stats["heldout_r2"])
        cont = _predict(critic, train_paths.obs, device) > 0.0
        if log is not None:
            log(it + 1, {f"fitted/{k}": v for k, v in stats.items()}
                | {"fitted/train_gate_return": float(gate_value(train_paths, cont).mean()),
                   "fitted/train_continue_rate": float(cont[legal].mean()) if legal.any() else 0.0})
    pred = _predict(critic, val_paths.obs, device)
    per = {m: gate_value(val_paths, pred > m) for m in MARGINS}
    values = {m: float(v.mean()) for m, v in per.items()}
    margin = choose_margin(per)
    critic.margin.fill_(margin)
    first = np.zeros(len(val_paths.legal), bool)
    out = {**{f"fitted/{k}": v for k, v in stats.items()}, "fitted/margin": margin,
           "fitted/val_gate_return": values[margin], "fitted/val_gate_return_m0": values[0.0],
           "fitted/val_stop_first_return": float(gate_value(val_paths, first).mean()),
           "fitted/val_clairvoyant_return": float(clairvoyant_value(val_paths).mean()),
           "fitted/val_checks_continued": float((pred > margin)[val_paths.legal].mean()) if val_paths.legal.any() else 0.0}
    return out


def train(cfg: Any, out: str | Path, *, resume: bool = False, progress: bool = True, envs: Any = None) -> Any:
    """Train the stop gate by regression (``cfg.stop_update == "fitted"``) into the run directory ``out``.

    ``steps × episodes_per_step`` training task seeds are collected (one always-continue path
    each) in the run's batched env (``envs`` makes it: ``train --ray N`` steps them on Ray),
    then the stop critic is fitted; ``--resume`` re-collects (the heads are fixed and the seeds
    stateless, so it reproduces the same data) and refits. Each phase has its own progress bar,
    named after what runs: the warm start, path collection, the regression fit, margin selection.
    """
    from ._run import Run

    run = Run.start(cfg, out, resume=resume, progress=progress, envs=envs)
    policy, device = run.policy, run.device
    policy.eval()
    assert policy.stop_critic is not None
    parts: list[StopPaths] = []
    n_train = cfg.steps * cfg.episodes_per_step
    with run.progress("fitted stop: collect always-continue paths", n_train) as advance:
        for update in range(cfg.steps):
            seeds = train_seeds(cfg.seed, update, cfg.episodes_per_step)
            p = collect_paths(run.benv, policy, seeds, device=device)
            parts.append(p)
            advance(len(seeds), always_continue=float(p.final.mean()))
    paths = _concat(parts)
    n_val = MARGIN_EPISODES_PER_EVAL * cfg.eval_episodes
    with run.progress("fitted stop: margin selection — validation paths", n_val) as advance:
        val = collect_paths(run.benv, policy, np.arange(MARGIN_BASE, MARGIN_BASE + n_val, dtype=np.int64),
                            device=device, advance=advance)
    assert run.logger is not None
    logger = run.logger
    torch.manual_seed(cfg.seed)
    with run.progress(f"fitted stop: regression fit ({FIT_ITERATIONS} iterations, epochs)",
                      FIT_ITERATIONS * FIT_EPOCHS) as advance:
        stats = fit_stop(policy.stop_critic, paths, val, seed=cfg.seed, lr=cfg.lr, device=device,
                         log=lambda i, s: logger.log(i, s), advance=advance)
    stats.update({"fitted/paths": float(paths.n_episodes), "fitted/checks": float(len(paths.ep)),
                  "charts/always_continue_return": float(paths.final.mean()),
                  "charts/stop_first_return": float(gate_value(paths, np.zeros(len(paths.ep), bool)).mean()),
                  "charts/episodic_return": float(gate_value(paths, _predict(policy.stop_critic, paths.obs, device)
                                                             > float(policy.stop_critic.margin)).mean())})
    v = run.validate(cfg.steps - 1)  # the greedy policy in the environment (also best.pt)
    stats.update({"charts/success": v["val/success"], "charts/tokens": v["val/tokens"], **v})
    run.start_update = cfg.steps - 1
    run.end_update(cfg.steps - 1, stats)  # logs (the validation above counts) and writes the checkpoint
    return run.finish()


def _concat(parts: list[StopPaths]) -> StopPaths:
    off = np.cumsum([0] + [p.n_episodes for p in parts])
    return StopPaths(obs=np.concatenate([p.obs for p in parts]), legal=np.concatenate([p.legal for p in parts]),
                     ep=np.concatenate([p.ep + o for p, o in zip(parts, off, strict=False)]),
                     k=np.concatenate([p.k for p in parts]), payoff=np.concatenate([p.payoff for p in parts]),
                     final=np.concatenate([p.final for p in parts]), seeds=np.concatenate([p.seeds for p in parts]))
