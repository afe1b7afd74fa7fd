"""Evaluate a learned orchestrator against every baseline and the oracle on held-out seeds.

Every policy plays the **same** held-out task seeds (common random numbers: the world's
randomness is addressed by seed, so differences between policies are paired). Reported
per policy, with 95 % confidence intervals:

- E1 success (Wilson interval), tokens, critical steps, wall-clock (simulated s), return,
  decisions (mean ± 1.96·s/√n), and decisions on easy (δ < 0.3) versus hard (δ ≥ 0.7) tasks;
- on a traced sample of episodes: wasted work (``waste/*``) and E2–E4 from
  :mod:`orchestrace.measures`;
- a success-versus-tokens **Pareto** table (a point is dominated when another policy has
  success ≥ and tokens ≤, one of them strictly);
- the **ablation**: the learned O1–O4 heads with the stop head replaced by each fixed round
  budget (``learned+stop@r``);
- the **evidence** checks of the main job (see :func:`evidence`).

Results go to ``results.json``; the traces of the sample to ``traces/<policy>.jsonl``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .rollout import held_out_seeds

__all__ = ["StopAblation", "ci_mean", "evaluate", "evidence", "pareto", "wilson"]

EASY_BELOW, HARD_FROM = 0.3, 0.7
_TRACE_MEASURES = ("waste", "e2", "e3", "e4")


def ci_mean(x: np.ndarray) -> dict[str, float]:
    """Mean with a normal-approximation 95 % interval.

    >>> ci_mean(np.array([1.0, 2.0, 3.0]))["mean"]
    2.0
    """
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    m = float(x.mean())
    h = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else float("nan")
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(x.size)}


def wilson(k: int, n: int, z: float = 1.96) -> dict[str, float]:
    """Wilson score interval of a success rate k/n.

    >>> r = wilson(45, 50); round(r["lo"], 3), round(r["hi"], 3)
    (0.786, 0.957)
    """
    if n == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return {"mean": p, "lo": c - h, "hi": c + h, "n": n}


class StopAblation:
    """A learned policy whose stop head is replaced by "stop after ``rounds`` rounds"."""

    def __init__(self, learned: Any, env_config: Any, rounds: int) -> None:
        from ..env.baselines import make_baseline

        self.learned, self.rounds = learned, rounds
        self.budget = make_baseline("fixed-budget", env_config, rounds=rounds)
        self.name = f"learned+stop@{rounds}"

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: Any = None) -> np.ndarray:
        a = self.learned.act_batch(obs, mask, world)
        at5 = obs[:, 4] > 0.5
        if at5.any():
            b = self.budget.act_batch(obs, mask, world)
            a = np.where(at5, b, a)
        return a

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        return int(self.act_batch(obs["obs"][None, :], obs["action_mask"][None, :].astype(bool))[0])


def _summary(res: dict[str, np.ndarray]) -> dict[str, Any]:
    d = res["difficulty"]
    easy, hard = d < EASY_BELOW, d >= HARD_FROM
    out: dict[str, Any] = {"success": wilson(int(res["success"].sum()), len(res["success"]))}
    for k in ("tokens", "critical_steps", "wall_clock_s", "return", "decisions", "safety_events"):
        if k in res:
            out[k] = ci_mean(res[k])
    out["decisions_easy"] = ci_mean(res["decisions"][easy])
    out["decisions_hard"] = ci_mean(res["decisions"][hard])
    out["success_easy"] = wilson(int(res["success"][easy].sum()), int(easy.sum()))
    out["success_hard"] = wilson(int(res["success"][hard].sum()), int(hard.sum()))
    return out


def _paired(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    return ci_mean(np.asarray(a, np.float64) - np.asarray(b, np.float64))


def _welch(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    m = float(a.mean() - b.mean())
    h = 1.96 * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return {"mean": m, "lo": m - h, "hi": m + h}


def pareto(points: dict[str, tuple[float, float]]) -> dict[str, bool]:
    """Which (success, tokens) points are on the front (not dominated).

    >>> pareto({"a": (0.9, 100.0), "b": (0.8, 200.0), "c": (0.95, 300.0)})
    {'a': True, 'b': False, 'c': True}
    """
    front = {}
    for n, (s, t) in points.items():
        dom = any((s2 >= s and t2 <= t) and (s2 > s or t2 < t) for m, (s2, t2) in points.items() if m != n)
        front[n] = not dom
    return front


def evidence(raw: dict[str, dict[str, np.ndarray]], learned: str = "learned") -> dict[str, Any]:
    """The main job's evidence checks, from per-episode arrays (same seeds for every policy).

    1. ``vs_best_fixed_budget``: the fixed-budget policy with the highest success; the learned
       policy *reaches* its success when the paired success difference's 95 % interval reaches
       0 or above, and must use ≥ 25 % fewer tokens (or have higher success at ≤ its tokens);
    2. ``vs_oracle``: return within 5 % of the oracle's;
    3. ``adapts``: mean decisions on hard minus easy tasks, 95 % interval excludes 0;
    4. ``vs_threshold``: return above the best confidence-threshold heuristic (paired interval > 0);
    5. ``vs_stop_ablation`` (informative): against the best ``learned+stop@r`` — the same O1–O4
       heads with a fixed round budget — so the stop head's own contribution is visible.
    """
    L = raw[learned]
    ev: dict[str, Any] = {}
    fb = {k: v for k, v in raw.items() if k.startswith("fixed-budget")}
    if fb:
        best = max(fb, key=lambda k: (fb[k]["success"].mean(), -fb[k]["tokens"].mean()))
        B = fb[best]
        ds = _paired(L["success"], B["success"])
        saving = 1.0 - L["tokens"].mean() / B["tokens"].mean()
        reaches = ds["hi"] >= 0.0
        higher_at_equal = ds["mean"] > 0 and L["tokens"].mean() <= B["tokens"].mean()
        ev["vs_best_fixed_budget"] = {
            "baseline": best, "success_learned": float(L["success"].mean()), "success_baseline": float(B["success"].mean()),
            "success_diff": ds, "tokens_learned": float(L["tokens"].mean()), "tokens_baseline": float(B["tokens"].mean()),
            "token_saving": float(saving), "reaches_success": bool(reaches),
            "met": bool((reaches and saving >= 0.25) or higher_at_equal),
        }
    if "oracle" in raw:
        ro, rl = float(raw["oracle"]["return"].mean()), float(L["return"].mean())
        gap = (ro - rl) / abs(ro) if ro else float("nan")
        ev["vs_oracle"] = {"return_learned": rl, "return_oracle": ro, "gap": gap,
                           "return_diff": _paired(L["return"], raw["oracle"]["return"]), "met": bool(gap <= 0.05)}
    d = L["difficulty"]
    easy, hard = d < EASY_BELOW, d >= HARD_FROM
    if easy.sum() > 1 and hard.sum() > 1:
        w = _welch(L["decisions"][hard], L["decisions"][easy])
        ev["adapts"] = {"decisions_easy": float(L["decisions"][easy].mean()), "decisions_hard": float(L["decisions"][hard].mean()),
                        "hard_minus_easy": w, "met": bool(w["lo"] > 0 or w["hi"] < 0)}
    th = {k: v for k, v in raw.items() if k.startswith("threshold")}
    if th:
        best = max(th, key=lambda k: th[k]["return"].mean())
        dr = _paired(L["return"], th[best]["return"])
        ev["vs_threshold"] = {"baseline": best, "return_learned": float(L["return"].mean()),
                              "return_baseline": float(th[best]["return"].mean()), "return_diff": dr,
                              "success_learned": float(L["success"].mean()), "success_baseline": float(th[best]["success"].mean()),
                              "met": bool(dr["lo"] > 0)}
    ab = {k: v for k, v in raw.items() if k.startswith("learned+stop@")}
    if ab:  # informative, not a target: the stop head against fixed budgets on the *same* O1–O4 heads
        best = max(ab, key=lambda k: ab[k]["return"].mean())
        A = ab[best]
        ev["vs_stop_ablation"] = {
            "baseline": best, "return_diff": _paired(L["return"], A["return"]),
            "success_diff": _paired(L["success"], A["success"]),
            "token_saving": float(1.0 - L["tokens"].mean() / A["tokens"].mean()),
            "met": bool(_paired(L["return"], A["return"])["hi"] >= 0),
        }
    return ev


def _policies(learned: Any, env_config: Any) -> list[tuple[str, Any]]:
    from ..env.baselines import make_baseline

    R = int(env_config.max_rounds)
    pols: list[tuple[str, Any]] = [("learned", learned)]
    pols += [(n, make_baseline(n, env_config)) for n in ("random", "fixed-fanout", "greedy", "always-continue")]
    pols += [(f"fixed-budget@{r}", make_baseline("fixed-budget", env_config, rounds=r)) for r in range(1, R + 1)]
    pols += [(f"threshold@{c:g}", make_baseline("threshold", env_config, threshold=c)) for c in (0.5, 0.6, 0.7, 0.8, 0.9)]
    pols += [("adaptive", make_baseline("adaptive", env_config)), ("oracle", make_baseline("oracle", env_config))]
    pols += [(f"learned+stop@{r}", StopAblation(learned, env_config, r)) for r in range(1, R + 1)]
    return pols


def _traces(env_config: Any, env_id: str, name: str, policy: Any, seeds: np.ndarray) -> list[Any]:
    from ..env import OrchestrationEnv

    env = OrchestrationEnv(env_config, env_id=env_id, policy_name=name)
    if hasattr(policy, "bind"):
        policy.bind(env)
    out = []
    for s in seeds:
        obs, info = env.reset(seed=int(s))
        done = False
        while not done:
            if hasattr(policy, "act_with_logprob"):  # record the behaviour log-prob in the decision event
                a, logp = policy.act_with_logprob(obs)
                env.set_behaviour_logprob(logp)
            else:
                a = policy.act(obs, info)
            obs, _, done, _, info = env.step(a)
        out.append(info["trace"])
    return out


def _trace_measures(traces: list[Any]) -> dict[str, Any]:
    try:
        from ..measures import compute
    except ImportError:
        return {}
    per: dict[str, list[float]] = {}
    for tr in traces:
        m = compute(tr, list(_TRACE_MEASURES), validate=False).metrics
        for k, v in m.items():
            if v is not None:
                per.setdefault(k, []).append(float(v))
    return {k: ci_mean(np.array(v)) for k, v in sorted(per.items())}


def evaluate(policy: Any, *, env: str = "default", episodes: int = 500, seed_offset: int = 0,
             out: str | Path | None = None, sample_traces: int = 20, traced_policies: tuple[str, ...] | None = None,
             progress: bool = True, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Evaluate ``policy`` (a run directory, a ``.pt`` file or a loaded policy) on held-out seeds.

    Returns the report dict (also written to ``out/results.json`` when ``out`` is given).
    """
    from ._common import progress_bar, require_learn
    from .checkpoint import load_policy
    from .config import resolve_env_id
    from .envs import env_config_for

    require_learn()
    from ..env.baselines import evaluate as run_batch

    learned = load_policy(policy) if isinstance(policy, (str, Path)) else policy
    env_id = resolve_env_id(env)
    cfg = env_config_for(env_id)
    seeds = held_out_seeds(episodes, seed_offset)
    pols = _policies(learned, cfg)
    raw: dict[str, dict[str, np.ndarray]] = {}
    timing: dict[str, float] = {}
    with progress_bar(len(pols), "evaluate", enabled=progress) as advance:
        for name, pol in pols:
            t = time.perf_counter()
            raw[name] = run_batch(cfg, pol, seeds)
            timing[name] = time.perf_counter() - t
            advance(1, policy=name)
    summary = {n: _summary(r) for n, r in raw.items()}
    front = pareto({n: (s["success"]["mean"], s["tokens"]["mean"]) for n, s in summary.items()})
    report: dict[str, Any] = {
        "env": env_id, "episodes": episodes, "seeds": [int(seeds[0]), int(seeds[-1])],
        "policies": summary, "pareto": front, "evidence": evidence(raw), "eval_seconds": timing,
    }
    # traced sample: wasted work and E2–E4 from the traces
    if sample_traces > 0:
        ev = report["evidence"]
        names = traced_policies or tuple(dict.fromkeys(
            ["learned", ev.get("vs_best_fixed_budget", {}).get("baseline", "fixed-budget@2"),
             ev.get("vs_threshold", {}).get("baseline", "threshold@0.7"), "oracle", "always-continue"]))
        table = dict(pols)
        tdir = Path(out) / "traces" if out is not None else None
        if tdir is not None:
            tdir.mkdir(parents=True, exist_ok=True)
        sample = seeds[:sample_traces]
        with progress_bar(len(names), "traces", enabled=progress) as advance:
            for n in names:
                trs = _traces(cfg, env_id, n, table[n], sample)
                report["policies"][n]["trace_sample"] = _trace_measures(trs)
                if tdir is not None:
                    from ..io import dumps

                    with (tdir / f"{n.replace('@', '_at_')}.jsonl").open("wb") as fh:
                        for tr in trs:
                            fh.write(dumps(tr, format="jsonl"))
                advance(1, policy=n)
    if out is not None:
        o = Path(out)
        o.mkdir(parents=True, exist_ok=True)
        (o / "results.json").write_text(json.dumps(report, indent=1, default=float) + "\n", encoding="utf-8")
        arrays: dict[str, Any] = {f"{n}/{k}": v for n, r in raw.items() for k, v in r.items()}
        np.savez_compressed(o / "episodes.npz", **arrays)
    if log is not None:
        log(f"evaluated {len(pols)} policies × {episodes} held-out episodes")
    report["_raw"] = raw
    return report
