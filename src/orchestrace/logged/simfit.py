"""Sim-to-real: simulate logged vote runs from the simulator's worker model, and fit it to a real corpus.

:func:`simulate_logged_runs` draws always-continue vote runs (T tasks × R rounds × W attempts,
one subtask per task) from an :class:`~orchestrace.env.config.EnvConfig` with the world's
attempt model (the formulas of :class:`~orchestrace.env.workers.SimulatedWorkers`, with the
world's shared misconceptions, on the world's addressed random numbers) and returns
:class:`~orchestrace.logged.runs.LoggedRuns` in the same format as a real corpus:

* task difficulty ``δ``: easy ``U(0, .3)`` w.p. ``p_easy``, hard ``U(.7, 1)`` w.p. ``p_hard``,
  else medium; ``d = clip(δ + subtask_jitter·z)``;
* ``p = sigmoid(skill[type] − difficulty_scale·(d − difficulty_offset))`` (no parents, no
  context overflow), × ``(1 − misconception_strength)`` under a misconception (w.p.
  ``p_misconception·d``, which also pulls every wrong answer to the plausible one);
* a wrong answer is the plausible one w.p. ``1/n_wrong + plausible_wrong·d·(1 − 1/n_wrong)``;
* confidence ``c`` as in the world; the logged ``logprob_mean`` is ``log c``; completion
  tokens ``tokens_out·exp(0.3 z)·(1 + d)``, prompt tokens ``tokens_in``.

:func:`fit_simulator` fits the settable fields (``difficulty_offset``, ``difficulty_scale``,
``p_easy``, ``p_hard``, ``n_wrong``, ``plausible_wrong``, ``p_misconception``,
``misconception_strength``, ``conf_noise``) by random search on the corpus moments (the
histogram of per-task solve counts, majority accuracy after the first and the last round,
agreement among wrong answers, confidence of right and wrong attempts) and the profile's
tokens and confidence bias/slope (not settable from the CLI: carried in the fit file and
applied by :func:`load_fitted_env`).

>>> from orchestrace.env.config import EnvConfig
>>> sim = simulate_logged_runs(EnvConfig.default(), 50, 3, 2, seed=0)
>>> sim.answers.shape, bool((sim.answers >= 0).all()), sim.meta["source"]
((50, 3, 2), True, 'simulator')
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from .runs import LoggedRuns, _recode, logged_from_codes

__all__ = ["corpus_moments", "fit_simulator", "load_fitted_env", "simulate_logged_runs"]

#: EnvConfig fields the fit sets (all accepted by ``--set``).
FIT_FIELDS: tuple[str, ...] = ("difficulty_offset", "difficulty_scale", "p_easy", "p_hard", "n_wrong",
                               "plausible_wrong", "p_misconception", "misconception_strength", "conf_noise")


def _sig(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def simulate_logged_runs(
    env_config: Any, n_tasks: int, rounds: int, width: int, seed: int = 0, *,
    profile: str | None = None, subtask_type: str = "reason",
) -> LoggedRuns:
    """Always-continue vote runs drawn from the simulator's attempt model, as :class:`LoggedRuns`.

    ``profile`` names the worker profile (default: the config's first solver); the subtask
    ``type`` picks its skill. Task ``t`` uses episode seed ``seed·1,000,003 + t``.

    >>> from orchestrace.env.config import EnvConfig
    >>> a = simulate_logged_runs(EnvConfig.small(), 30, 2, 3, seed=1)
    >>> b = simulate_logged_runs(EnvConfig.small(), 30, 2, 3, seed=1)
    >>> bool((a.answers == b.answers).all()), a.correct.shape
    (True, (30, 2, 3))
    """
    from ..env import world as W
    from ..env.config import SUBTASK_TYPES
    from ..env.world import normal, uniform  # the world's counter-based draws (env._rng)

    c = env_config
    if n_tasks < 1 or rounds < 1 or width < 1:
        raise ConfigError(f"n_tasks, rounds and width must be >= 1, got {n_tasks}, {rounds}, {width}")
    if subtask_type not in SUBTASK_TYPES:
        raise ConfigError(f"subtask_type {subtask_type!r} is not one of {SUBTASK_TYPES}")
    solvers = [p for p in c.profiles if not p.verifier]
    prof = solvers[0] if profile is None else next((p for p in solvers if p.name == profile), None)
    if prof is None:
        raise ConfigError(f"profile {profile!r} is not a solver profile of the config ({[p.name for p in solvers]})")
    ty = SUBTASK_TYPES.index(subtask_type)
    s = (np.uint64(seed) * np.uint64(1_000_003) + np.arange(n_tasks, dtype=np.uint64))  # (T,)
    u_cls, u_d = uniform(s, 0, 0, W._F_CLS), uniform(s, 0, 0, W._F_DIFF)
    dt = np.where(u_cls < c.p_easy, 0.3 * u_d, np.where(u_cls >= 1.0 - c.p_hard, 0.7 + 0.3 * u_d, 0.3 + 0.4 * u_d))
    d = np.clip(dt + c.subtask_jitter * normal(s, 0, 0, W._F_SUBD), 0.0, 1.0)  # (T,)
    mis = (uniform(s, 0, 0, W._F_MIS) < c.p_misconception * d) if c.p_misconception > 0 else np.zeros(n_tasks, bool)
    n = rounds * width
    sc, slot, dd, mm = s[:, None], np.arange(n)[None, :], d[:, None], mis[:, None]  # attempt slot j = r·W + w

    def u(f: int) -> np.ndarray:
        return uniform(sc, 0, slot, f)

    p = _sig(prof.skill[ty] - c.difficulty_scale * (dd - c.difficulty_offset))
    p = np.where(mm, p * (1.0 - c.misconception_strength), p)
    correct = u(W._F_CORR) < p  # (T, n)
    wn = c.n_wrong
    q = 1.0 / wn + c.plausible_wrong * dd * (1.0 - 1.0 / wn)
    other = 2 + np.minimum((u(W._F_ANS2) * max(wn - 1, 1)).astype(np.int64), max(wn - 2, 0))
    wrong = np.where((u(W._F_ANS) < q) | (wn == 1) | mm, 1, other)
    ans = np.where(correct, 0, wrong)
    fooled = (ans == 1) & (u(W._F_FOOL) < np.where(mm, c.misconception_conf, c.fooled_conf * dd))
    sign = np.where(correct | fooled, 1.0, -1.0)
    conf = _sig(prof.conf_bias + prof.conf_kappa * (1.0 - 0.5 * dd) * sign + c.conf_noise * normal(sc, 0, slot, W._F_CONF))
    tout = prof.tokens_out * np.exp(0.3 * normal(sc, 0, slot, W._F_TOK)) * (1.0 + dd)
    shape = (n_tasks, rounds, width)
    answers, cc = _recode(ans.reshape(shape), np.zeros(n_tasks, dtype=np.int64))
    size = 1 + np.minimum((d * 3).astype(np.int64), 2)  # difficulty knob 1..3 from d (thirds)
    return logged_from_codes(
        [f"sim-s{k}-{t:06d}" for t, k in enumerate(size)], ["sim"] * n_tasks, size, answers, cc,
        prompt_tokens=np.full(shape, round(prof.tokens_in), dtype=np.int32),
        completion_tokens=np.maximum(1, np.round(tout)).astype(np.int32).reshape(shape),
        logprob_mean=np.log(np.clip(conf, 1e-6, 1.0)).astype(np.float32).reshape(shape),
        meta={"source": "simulator", "seed": seed, "rounds": rounds, "width": width, "profile": prof.name,
              "subtask_type": subtask_type, "config": c.name, "d": d.tolist(), "misconception": mis.tolist()},
    )


def corpus_moments(runs: LoggedRuns) -> dict[str, Any]:
    """The statistics the fit matches (and ``docs/corpus-real.md`` reports).

    ``solve_hist``: share of tasks with k = 0..R·W right attempts; ``acc``: per-attempt
    accuracy; ``maj_first`` / ``maj_last``: graded majority after the first / last round;
    ``wrong_agree``: among pairs of parsed wrong answers of one task, the share that agree;
    ``conf_right`` / ``conf_wrong``: mean and std of ``logit(exp(logprob_mean))`` of right /
    wrong attempts; ``tokens_out`` / ``tokens_in``: mean completion / prompt tokens.

    >>> from orchestrace.logged.runs import make_synthetic_logged
    >>> m = corpus_moments(make_synthetic_logged(40, 2, 2, seed=0))
    >>> len(m["solve_hist"]), 0 <= m["acc"] <= 1
    (5, True)
    """
    t, r, w = runs.shape
    n = r * w
    k = runs.correct.reshape(t, n).sum(1)
    hist = np.bincount(k, minlength=n + 1) / t
    a = runs.answers.reshape(t, n)
    wrong = (a >= 0) & ~runs.correct.reshape(t, n)
    same = pairs = 0
    for i in np.flatnonzero(wrong.sum(1) >= 2):
        v = a[i][wrong[i]]
        cnt = np.bincount(v)
        same += int((cnt * (cnt - 1) // 2).sum())
        pairs += len(v) * (len(v) - 1) // 2
    conf = np.clip(np.exp(runs.logprob_mean.reshape(t, n).astype(np.float64)), 1e-6, 1 - 1e-6)
    logit = np.log(conf / (1 - conf))
    cr, cw = runs.correct.reshape(t, n), wrong

    def ms(x: np.ndarray) -> list[float]:
        x = x[np.isfinite(x)]
        return [float(x.mean()), float(x.std())] if x.size else [math.nan, math.nan]

    return {
        "tasks": int(t), "solve_hist": [float(x) for x in hist], "acc": float(runs.correct.mean()),
        "maj_first": float(runs.round_correct[:, 0].mean()), "maj_last": float(runs.round_correct[:, -1].mean()),
        "wrong_agree": float(same / pairs) if pairs else math.nan, "unparsed": float((a < 0).mean()),
        "conf_right": ms(logit[cr]), "conf_wrong": ms(logit[cw]),
        "tokens_out": float(runs.completion_tokens.mean()), "tokens_in": float(runs.prompt_tokens.mean()),
    }


def _loss(m: dict[str, Any], target: dict[str, Any]) -> float:
    h = np.abs(np.array(m["solve_hist"]) - np.array(target["solve_hist"])).sum()
    x = abs(m["maj_first"] - target["maj_first"]) + abs(m["maj_last"] - target["maj_last"])
    wa = 0.0 if math.isnan(target["wrong_agree"]) else abs(m["wrong_agree"] - target["wrong_agree"])
    return float(h + x + 2.0 * abs(m["acc"] - target["acc"]) + 0.5 * wa)


def fit_simulator(runs: LoggedRuns, *, base: Any = None, n_sim: int = 1500, n_search: int = 300, seed: int = 0,
                  subtask_type: str = "reason") -> dict[str, Any]:
    """Fit the simulator to ``runs``; returns ``{"set": [FIELD=VALUE…], "profile": {…}, "moments": {…}, …}``.

    Random search (``n_search`` candidates, then as many around the best) on the moments of
    :func:`corpus_moments`, each candidate valued on ``n_sim`` simulated tasks with the
    corpus's R and W; then the confidence bias/slope/noise and the profile's tokens.

    >>> from orchestrace.logged.runs import make_synthetic_logged
    >>> fit = fit_simulator(make_synthetic_logged(60, 2, 2, seed=0), n_sim=200, n_search=20)
    >>> sorted(fit)[:3], fit["set"][0].split("=")[0]
    (['base', 'loss', 'moments'], 'difficulty_offset')
    """
    from ..env.config import EnvConfig

    base = base or EnvConfig.default()
    _, r, w = runs.shape
    target = corpus_moments(runs)
    rng = np.random.default_rng(seed)
    solver = next(p for p in base.profiles if not p.verifier)

    def draw(center: dict[str, float] | None, scale: float) -> dict[str, Any]:
        def pick(lo: float, hi: float, key: str) -> float:
            if center is None:
                return float(rng.uniform(lo, hi))
            return float(np.clip(center[key] + rng.normal(0, scale * (hi - lo)), lo, hi))

        pe = pick(0.0, 1.0, "p_easy")
        ph = pick(0.0, 1.0, "p_hard") * (1 - pe) if center is None else min(pick(0.0, 1.0, "p_hard"), 1 - pe)
        return {
            "difficulty_offset": pick(-1.0, 1.5, "difficulty_offset"), "difficulty_scale": pick(0.5, 12.0, "difficulty_scale"),
            "p_easy": pe, "p_hard": ph,
            "n_wrong": int(rng.integers(1, 9)) if center is None or rng.uniform() < 0.3 else int(center["n_wrong"]),
            "plausible_wrong": pick(0.0, 1.0, "plausible_wrong"), "p_misconception": pick(0.0, 1.0, "p_misconception"),
            "misconception_strength": pick(0.0, 1.0, "misconception_strength"),
        }

    def value(par: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        cfg = base.replace(**par)
        m = corpus_moments(simulate_logged_runs(cfg, n_sim, r, w, seed=seed + 1, subtask_type=subtask_type))
        return _loss(m, target), m

    best_p = draw(None, 1.0)
    best_l, _ = value(best_p)
    for it in range(2 * n_search):
        cand = draw(None if it < n_search else best_p, 0.08)
        loss, _ = value(cand)
        if loss < best_l:
            best_l, best_p = loss, cand
    # confidence: match mean/std of logit(conf) of right and wrong attempts (profile bias/slope + conf_noise)
    cr, cw = target["conf_right"], target["conf_wrong"]
    prof = solver
    if all(np.isfinite(cr + cw)):
        cfg0 = base.replace(**best_p)
        d_mean = float(np.mean(simulate_logged_runs(cfg0, n_sim, r, w, seed=seed + 1).meta["d"]))
        slope = max(1.0 - 0.5 * d_mean, 1e-3)
        bias, kappa = (cr[0] + cw[0]) / 2, max((cr[0] - cw[0]) / (2 * slope), 0.0)
        noise = float(np.sqrt(max((cr[1] ** 2 + cw[1] ** 2) / 2, 1e-4)))
        prof = dataclasses.replace(prof, conf_bias=float(bias), conf_kappa=float(kappa))
        best_p["conf_noise"] = noise
    fitted_cfg = base.replace(**best_p)
    d_sim = np.asarray(simulate_logged_runs(fitted_cfg, n_sim, r, w, seed=seed + 1).meta["d"])
    prof = dataclasses.replace(prof, tokens_in=max(target["tokens_in"], 1.0),
                               tokens_out=max(target["tokens_out"] / float(np.mean(np.exp(0.045) * (1 + d_sim))), 1.0))
    fitted_cfg = _with_profile(fitted_cfg.replace(name="fitted"), prof)
    final = corpus_moments(simulate_logged_runs(fitted_cfg, max(n_sim, 2000), r, w, seed=seed + 2,
                                                subtask_type=subtask_type))
    sets = [f"{k}={_fmt(best_p[k])}" for k in FIT_FIELDS if k in best_p]
    return {
        "set": sets, "profile": {"name": prof.name, **{k: getattr(prof, k) for k in
                                                        ("skill", "tokens_in", "tokens_out", "conf_bias", "conf_kappa")}},
        "subtask_type": subtask_type, "base": base.name, "loss": best_l,
        "moments": {"real": target, "simulated": final}, "rounds": r, "width": w, "n_sim": n_sim,
        "n_search": n_search, "seed": seed,
    }


def _fmt(v: Any) -> str:
    return str(int(v)) if isinstance(v, (int, np.integer)) else f"{float(v):.4g}"


def _with_profile(cfg: Any, prof: Any) -> Any:
    profiles = tuple(prof if p.name == prof.name else p for p in cfg.profiles)
    return cfg.replace(profiles=profiles)


def load_fitted_env(path: str | os.PathLike[str], *, with_profile: bool = True) -> Any:
    """The fitted :class:`~orchestrace.env.config.EnvConfig` of a fit file (``collect fit-sim -o``).

    ``with_profile=False`` gives what the CLI's ``--set`` items alone give (default profiles).

    >>> import tempfile, json, os
    >>> p = os.path.join(tempfile.mkdtemp(), "fit.json")
    >>> _ = open(p, "w").write(json.dumps({"set": ["difficulty_scale=3"], "base": "default",
    ...     "profile": {"name": "cheap", "skill": [1, 1, 1], "tokens_in": 80, "tokens_out": 8,
    ...                 "conf_bias": 1.0, "conf_kappa": 0.5}}))
    >>> cfg = load_fitted_env(p)
    >>> cfg.difficulty_scale, cfg.profiles[0].tokens_out
    (3.0, 8.0)
    """
    from ..env.config import EnvConfig

    try:
        fit = json.loads(Path(path).read_text())
        sets, base = list(fit["set"]), str(fit.get("base", "default"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a fit file written by `orchestrace collect fit-sim` ({exc})") from None
    factory = getattr(EnvConfig, base, None)
    if not callable(factory):
        raise ConfigError(f"{path}: base config {base!r} is not an EnvConfig preset")
    cfg = factory().with_overrides(sets).replace(name="fitted")
    if with_profile and fit.get("profile"):
        pr = fit["profile"]
        old = next((p for p in cfg.profiles if p.name == pr["name"]), None)
        if old is None:
            raise ConfigError(f"{path}: profile {pr['name']!r} is not in the base config's profiles")
        new = dataclasses.replace(old, skill=tuple(float(x) for x in pr["skill"]),
                                  **{k: float(pr[k]) for k in ("tokens_in", "tokens_out", "conf_bias", "conf_kappa")})
        cfg = _with_profile(cfg, new)
    return cfg
