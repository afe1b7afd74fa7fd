"""The fair evaluation protocol: stop rules on the same heads, tuned on validation, decided by intervals.

A learned stop (O5) is only evidence when it is compared like with like. For one learned
policy, :func:`evaluate`

1. builds every **stop rule on the same heads** — the learned policy's own O1–O4 heads with its
   stop replaced by each rule of the whole family (:mod:`orchestrace.policies.anchors`): fixed
   budgets (``budget@r``), confidence thresholds (``threshold@c``), the ``adaptive`` heuristic's
   stop (``adaptive-stop``), **Adaptive-Consistency** (``ac-beta@C``, ``ac-dirichlet@C``),
   **ESC** (``esc@w``), vote-share thresholds (``vote-share@s``), the **price-aware fitted
   rule** (``fitted-logistic``, ``fitted-quadratic``: fitted on a validation block of their
   own) and a **clairvoyant stop** (the best check in hindsight; ``clairvoyant``) — and the
   same rules on the environment's *base* O1–O4 heuristic; plus the full ``adaptive``
   heuristic, the **all-heads oracle** (look-ahead on every decision, ``oracle-all``, on the
   first ``oracle_episodes`` test seeds) and the simple baselines;
2. values every stop rule **exactly** on one always-continue path per seed
   (:mod:`orchestrace.evaluation.exact`: with greedy heads the path holds every stopping time's
   outcome), so thousands of test episodes cost seconds;
3. **tunes on validation seeds** (disjoint from training and test): the best rule of the whole
   family, the best budget, threshold, published rule (Adaptive-Consistency / ESC) and fitted
   rule (by mean return), and the budget with the highest success (for the token claim), on
   each set of heads;
4. values everything on the same held-out **test seeds** (paired: common random numbers), and
5. decides each **claim** by a paired 95 % interval with the rule written beside it
   (:data:`CLAIM_RULES`; decided in :mod:`orchestrace.evaluation._claims`).

Policy names in ``results.json``: ``learned``; ``learned+RULE`` and ``base+RULE`` for the
stop rules on the learned and the base heads; ``adaptive``, ``oracle-all``, ``random``,
``fixed-fanout``, ``greedy``, ``always-continue``. The ``same_heads`` section holds, per heads
(``learned``, ``base``), the rule summaries, what validation chose (``chosen``) and the
validation means.

:func:`evaluate_runs` evaluates several training runs (seeds) of the same world and
aggregates: per claim how many runs pass (k/n), and mean ± 95 % t-interval across runs of
the claim's number. :func:`evaluate_suite` does so in each world of a named shift suite
(:data:`SUITES`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._stats import ci_mean, t_interval, wilson
from ..policies.anchors import PUBLISHED
from ..trainers.rollout import VALIDATION_BASE, held_out_seeds
from ._claims import CLAIM_RULES, _summary, claims, pareto

__all__ = [
    "CLAIM_RULES",
    "SUITES",
    "SameHeads",
    "ci_mean",
    "claims",
    "evaluate",
    "evaluate_runs",
    "evaluate_suite",
    "pareto",
    "t_interval",
    "wilson",
]

_TRACE_MEASURES = ("waste", "e2", "e3", "e4")
#: Tuning seeds: a block of the validation range that training's checkpoint selection
#: (the first ``eval_episodes`` validation seeds) does not use.
TUNING_BASE = VALIDATION_BASE + 50_000_000
#: Fitting seeds of the price-aware fitted rule: another validation block (disjoint from the
#: tuning block, checkpoint selection and the fitted stop's margin block at +20,000,000).
FIT_BASE = VALIDATION_BASE + 40_000_000

#: Named, versioned shift suites: each world is the evaluated world with these overrides.
SUITES: dict[str, dict[str, tuple[str, ...]]] = {
    "shift": {  # shift-v1
        "nominal": (),
        "harder-mix": ("p_easy=0.2", "p_hard=0.5"),
        "easier-mix": ("p_easy=0.8", "p_hard=0.05"),
        "weaker-workers": ("difficulty_offset=0.05",),
        "noisier-confidence": ("conf_noise=1.2",),
        "4-7-subtasks": ("n_subtasks_min=4", "n_subtasks_max=7"),
        "price-x4": ("price_min=4", "price_max=4"),
        "price-x0.25": ("price_min=0.25", "price_max=0.25"),
        "small-world": ("n_subtasks_max=3", "max_rounds=3"),
    },
}


# ----------------------------------------------------------------------------- stop rules on given heads
class SameHeads:
    """O1–O4 from ``heads`` (a learned policy, or ``None`` for the environment's base heuristic),
    O5 from ``rule`` — a hand-written rule's ``stop_now`` on the summary statistics, or a
    clairvoyant look-ahead (``rule="clairvoyant"``) that rolls the same heads forward.

    >>> from orchestrace.env import EnvConfig, evaluate as play, make_baseline
    >>> cfg = EnvConfig.small()
    >>> a = play(cfg, SameHeads(cfg, None, make_baseline("fixed-budget", cfg, rounds=2)), range(16))
    >>> b = play(cfg, make_baseline("fixed-budget", cfg, rounds=2), range(16))
    >>> bool((a["return"] == b["return"]).all())
    True
    """

    def __init__(self, cfg: Any, heads: Any, rule: Any, name: str = "") -> None:
        from ..env.baselines import BudgetPolicy
        from ..env.oracle import OraclePolicy

        self.cfg, self.heads, self.name = cfg, heads, name
        self._base = BudgetPolicy(cfg, name="base")
        self.clairvoyant = rule == "clairvoyant"
        if self.clairvoyant:
            self.rule: Any = OraclePolicy(cfg, heads="stop", head_policy=heads)
        else:
            self.rule = rule
        self.o5 = cfg.layout.heads.stop  # the O5 head's first action (STOP; CONTINUE is o5 + 1)
        self._env: Any = None

    def bind(self, env: Any) -> SameHeads:
        self._env = env.unwrapped if hasattr(env, "unwrapped") else env
        return self

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any] | None = None) -> int:
        world = self._env.world if self._env is not None else None
        return int(self.act_batch(obs["obs"][None, :], obs["action_mask"][None, :].astype(bool), world)[0])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, world: Any = None) -> np.ndarray:
        from ..env.layout import CONTINUE, STOP, Phase

        if world is None:
            raise ValueError(f"{self.name}: stop rules read the world; pass world= (or bind(env))")
        if self.clairvoyant:
            return self.rule.act_batch(obs, mask, world)
        a = (self._base.base(world.summary_obs(), mask) if self.heads is None
             else np.asarray(self.heads.act_batch(obs, mask, world), dtype=np.int64))
        at5 = world.phase == Phase.O5
        if not at5.any():
            return a
        if hasattr(self.rule, "stop"):  # a rule of orchestrace.policies.anchors (vote counts, price, round)
            from ..policies.anchors import CheckState

            rule_stop = np.asarray(self.rule.stop(CheckState.from_world(world)), bool)
        else:  # an environment rule on the summary statistics
            rule_stop = self.rule.stop_now(world.summary_obs())
        stop = rule_stop | ~mask[:, self.o5 + CONTINUE]
        return np.where(at5, np.where(stop, self.o5 + STOP, self.o5 + CONTINUE), a)


def _rules(cfg: Any) -> dict[str, Any]:
    """The hand-written family by name (:func:`orchestrace.policies.anchors.family`) and ``clairvoyant``."""
    from ..policies.anchors import family

    return {**family(cfg), "clairvoyant": "clairvoyant"}


# ----------------------------------------------------------------------------- one run
#: ``eval --ray N`` plays the seeds elsewhere: a ``play(cfg, policy, seeds)`` returning what
#: :func:`orchestrace.env.baselines.evaluate` returns (set with :func:`players`)
_PLAYER: contextvars.ContextVar[Callable[[Any, Any, np.ndarray], dict[str, np.ndarray]] | None] = \
    contextvars.ContextVar("orchestrace_eval_player", default=None)


@contextlib.contextmanager
def players(play: Callable[[Any, Any, np.ndarray], dict[str, np.ndarray]]) -> Iterator[None]:
    """Within the block the evaluation's episodes are played by ``play(cfg, policy, seeds)``
    (the same per-episode arrays as the batched evaluator, e.g. computed on Ray)."""
    token = _PLAYER.set(play)
    try:
        yield
    finally:
        _PLAYER.reset(token)


def _play(cfg: Any, policy: Any, seeds: np.ndarray) -> dict[str, np.ndarray]:
    from ..env.baselines import evaluate as run_batch

    play = _PLAYER.get()
    if play is not None:
        return play(cfg, policy, seeds)
    return run_batch(cfg, policy, seeds)


def _traces(env_config: Any, env_id: str, name: str, policy: Any, seeds: np.ndarray) -> list[Any]:
    from ..env import OrchestrationEnv

    env = OrchestrationEnv(env_config, env_id=env_id, policy_name=name, record_trace=True)
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
    from ..analysis.measures import compute

    per: dict[str, list[float]] = {}
    for tr in traces:
        m = compute(tr, list(_TRACE_MEASURES), validate=False).metrics
        for k, v in m.items():
            if v is not None:
                per.setdefault(k, []).append(float(v))
    return {k: ci_mean(np.array(v)) for k, v in sorted(per.items())}


def _world(policy: Any, env: str | None, env_set: tuple[str, ...] | list[str]) -> tuple[str, tuple[str, ...], Any]:
    """The evaluated world: the policy's own (id + overrides) unless ``env`` is given; ``env_set`` on top."""
    from ..trainers.config import resolve_env_id
    from ..trainers.envs import env_config_for

    base_id = resolve_env_id(env) if env else (getattr(policy, "env_id", "") or "orchestrace/Orchestrate-v0")
    sets = (tuple(getattr(policy, "env_set", ())) if not env else ()) + tuple(env_set)
    return base_id, sets, env_config_for(base_id, sets)


#: Most fitting episodes of the price-aware fitted rules, per heads (the FIT_BASE validation block);
#: by default 8 × the validation episodes up to this.
FIT_EPISODES = 4096
#: Test seeds of the all-heads oracle (look-ahead at every decision: ~40 ms per episode).
ORACLE_EPISODES = 500


def _fit_rules(cfg: Any, paths: Any) -> dict[str, Any]:
    """The price-aware fitted rules (logistic, quadratic) on one heads' fitting paths."""
    from ..policies.anchors import fit_rule

    E, R = paths.present.shape
    summary = paths.state.summary.reshape(E, R, -1)
    return {r.name: r for r in (fit_rule(cfg, summary, paths.payoff, paths.legal, quadratic=q) for q in (False, True))}


def _choose(rules: list[str], val: dict[str, dict[str, np.ndarray]]) -> tuple[dict[str, str], dict[str, Any]]:
    """What validation picks among ``rules`` (by mean return; the token claim's budget by success)."""
    means = {r: float(val[r]["return"].mean()) for r in rules}
    succ = {r: float(val[r]["success"].mean()) for r in rules}
    toks = {r: float(val[r]["tokens"].mean()) for r in rules}
    groups = {"budget": [r for r in rules if r.startswith("budget@")],
              "threshold": [r for r in rules if r.startswith("threshold@")],
              "published": [r for r in rules if r.startswith(PUBLISHED)],
              "fitted": [r for r in rules if r.startswith("fitted-")]}
    chosen = {"best_rule": max(rules, key=lambda r: means[r])}
    chosen.update({g: max(rs, key=lambda r: means[r]) for g, rs in groups.items() if rs})
    chosen["budget_by_success"] = max(groups["budget"], key=lambda r: (succ[r], -toks[r]))
    return chosen, {r: {"return": means[r], "success": succ[r], "tokens": toks[r]} for r in rules}


def evaluate(policy: Any, *, env: str | None = None, env_set: tuple[str, ...] | list[str] = (), episodes: int = 500,
             validation: int = 256, fit_episodes: int | None = None, seed_offset: int = 0,
             out: str | Path | None = None, sample_traces: int = 20, oracle_all: bool = True,
             oracle_episodes: int = ORACLE_EPISODES, progress: bool = True, cache: dict[str, Any] | None = None,
             log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Evaluate ``policy`` (a run directory, a ``.pt`` file or a loaded greedy policy) with the protocol.

    The world is the policy's training world (its id and ``--set`` overrides) unless ``env``
    is given; ``env_set`` adds overrides (a shifted world). Every stop rule is valued exactly on
    always-continue paths (:mod:`orchestrace.evaluation.exact`) of ``episodes`` test seeds,
    ``validation`` tuning seeds and ``fit_episodes`` fitting seeds (the fitted rules; default
    ``min(8 × validation, FIT_EPISODES)``), for the
    learned and the base heads. ``cache`` (a dict) shares the base-heads results between runs
    evaluated in the same world (:func:`evaluate_runs`). Returns the report (also
    ``out/results.json`` when ``out`` is given).
    """
    from ..trainers.common import progress_bar

    learned = _greedy_policy(policy)
    env_id, sets, cfg = _world(learned, env, env_set)
    fit_episodes = int(fit_episodes) if fit_episodes else min(8 * validation, FIT_EPISODES)
    blocks = _seed_blocks(episodes, validation, fit_episodes, seed_offset)
    test = blocks["test"]
    cache = {} if cache is None else cache
    key = json.dumps([env_id, list(sets), episodes, validation, fit_episodes, seed_offset, oracle_episodes])
    shared = cache.setdefault(key, {"test": {}, "base": {}})
    others = _baselines(cfg, test, oracle_episodes if oracle_all else None)
    raw: dict[str, dict[str, np.ndarray]] = {}
    same: dict[str, dict[str, Any]] = {}
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    with progress_bar(6 + len(others), "evaluate", enabled=progress) as advance:
        for h, heads in (("learned", learned), ("base", None)):
            same[h] = memo = _value_rules(cfg, h, heads, blocks, shared["base"] if h == "base" else {}, timing, advance)
            raw.update({f"{h}+{r}": v for r, v in memo["res"].items()})
            if h == "learned":
                raw["learned"] = memo["test"].value(memo["test"].own_stop)
                val_learned = float(memo["val"].value(memo["val"].own_stop)["return"].mean())
        raw["always-continue"] = same["base"]["test"].value(np.zeros(same["base"]["test"].present.shape, bool))
        for name, pol, seeds in others:
            raw[name] = _played(cfg, name, pol, seeds, shared["test"], timing)
            advance(1, policy=name)
    chosen_by: dict[str, dict[str, str]] = {h: same[h]["chosen"] for h in same}
    summary = {n: _summary(r) for n, r in raw.items()}
    front = pareto({n: (s["success"]["mean"], s["tokens"]["mean"]) for n, s in summary.items()})
    from dataclasses import asdict

    from ..policies.anchors import FITTED_FEATURES

    report: dict[str, Any] = {
        "protocol": "orchestrace-fair-eval/2",
        "env": env_id, "env_set": list(sets), "env_config": asdict(cfg), "episodes": episodes,
        "seeds": {"test": [int(test[0]), int(test[-1])],
                  "validation": [int(blocks["val"][0]), int(blocks["val"][-1])],
                  "fit": [int(blocks["fit"][0]), int(blocks["fit"][-1])]},
        "valuation": {"method": "exact on always-continue paths (orchestrace.evaluation.exact)",
                      "fitted_features": list(FITTED_FEATURES), "oracle_all_episodes": min(oracle_episodes, episodes)
                      if oracle_all else 0, "learned_validation_return": val_learned},
        "policy_source": str(getattr(learned, "source", "") or ""),
        "policies": summary, "pareto": front,
        "same_heads": {
            h: {"rules": {r: summary[f"{h}+{r}"] for r in same[h]["res"]}, "chosen": chosen_by[h],
                "validation": same[h]["val_means"]}
            for h in ("learned", "base")},
        "claims": claims(raw, chosen_by), "eval_seconds": time.perf_counter() - t0, "timing": timing,
    }
    if sample_traces > 0:
        _sample_traces(report, cfg, env_id, learned, {h: same[h]["rules"] for h in same}, others, test[:sample_traces],
                       out, progress)
    if out is not None:
        _save(Path(out), report, raw)
    if log is not None:
        log(f"evaluated {len(raw)} policies exactly on {episodes} test, {validation} validation and {fit_episodes} "
            "fitting episodes")
    report["_raw"] = raw
    return report


def _greedy_policy(policy: Any) -> Any:
    """The policy to evaluate (loaded from a run directory or ``.pt`` file), refused unless greedy."""
    from ..policies.checkpoint import load_policy
    from ..trainers.common import require_learn

    require_learn()
    from ..errors import ConfigError

    learned = load_policy(policy) if isinstance(policy, (str, Path)) else policy
    if not getattr(learned, "greedy", True):
        raise ConfigError("the protocol evaluates greedy policies (each head's most likely action): load the policy "
                          "with greedy=True")
    return learned


def _played(cfg: Any, name: str, pol: Any, seeds: np.ndarray, memo: dict[str, Any],
            timing: dict[str, float]) -> dict[str, np.ndarray]:
    """A baseline's per-episode arrays on ``seeds``, played once per world (``memo``), timed."""
    if name not in memo:
        t = time.perf_counter()
        memo[name] = _play(cfg, pol, seeds)
        timing[f"test/{name}"] = time.perf_counter() - t
    return memo[name]


def _seed_blocks(episodes: int, validation: int, fit_episodes: int, seed_offset: int) -> dict[str, np.ndarray]:
    """The protocol's disjoint seed blocks: ``test`` (held out), ``val`` (tuning) and ``fit`` (the fitted rules)."""
    return {"test": held_out_seeds(episodes, seed_offset),
            "val": np.arange(TUNING_BASE, TUNING_BASE + validation, dtype=np.int64),
            "fit": np.arange(FIT_BASE, FIT_BASE + fit_episodes, dtype=np.int64)}


def _baselines(cfg: Any, test: np.ndarray, oracle_episodes: int | None) -> list[tuple[str, Any, np.ndarray]]:
    """The environment's baselines played on the test seeds (name, policy, seeds); the all-heads oracle on the
    first ``oracle_episodes`` (none when None)."""
    from ..env.baselines import make_baseline

    others: list[tuple[str, Any, np.ndarray]] = [("adaptive", make_baseline("adaptive", cfg), test)]
    others += [(n, make_baseline(n, cfg), test) for n in ("random", "fixed-fanout", "greedy")]
    if oracle_episodes is not None:
        others.append(("oracle-all", make_baseline("oracle", cfg, heads="all"), test[:oracle_episodes]))
    return others


def _value_rules(cfg: Any, h: str, heads: Any, blocks: dict[str, np.ndarray], memo: dict[str, Any],
                 timing: dict[str, float], advance: Callable[..., None]) -> dict[str, Any]:
    """One heads' always-continue paths per seed block, and every stop rule valued on them: the rules, what
    validation chose, its means and the test results (``memo``, filled where it lacks them, and returned)."""
    from .exact import collect

    for b, seeds in blocks.items():
        if b not in memo:
            t = time.perf_counter()
            memo[b] = collect(cfg, heads, seeds)
            timing[f"paths/{h}/{b}"] = time.perf_counter() - t
        advance(1, policy=f"{h} paths ({b})")
    if "rules" not in memo:
        rules = {r: v for r, v in _rules(cfg).items() if r != "clairvoyant"} | _fit_rules(cfg, memo["fit"])
        val = {r: memo["val"].value(memo["val"].stops(rule)) for r, rule in rules.items()}
        chosen, val_means = _choose(list(rules), val)
        res = {r: memo["test"].value(memo["test"].stops(rule)) for r, rule in rules.items()}
        res["clairvoyant"] = memo["test"].clairvoyant()
        memo.update(rules=rules, chosen=chosen, val_means=val_means, res=res)
    return memo


def _save(o: Path, report: dict[str, Any], raw: dict[str, dict[str, np.ndarray]]) -> None:
    """``results.json`` (the report) and ``episodes.npz`` (every policy's per-episode arrays) in ``o``."""
    o.mkdir(parents=True, exist_ok=True)
    (o / "results.json").write_text(json.dumps(report, indent=1, default=float) + "\n", encoding="utf-8")
    arrays: dict[str, Any] = {f"{n}/{k}": v for n, r in raw.items() for k, v in r.items()}
    np.savez_compressed(o / "episodes.npz", **arrays)


def _sample_traces(report: dict[str, Any], cfg: Any, env_id: str, learned: Any, rules: dict[str, dict[str, Any]],
                   others: list[tuple[str, Any, np.ndarray]], seeds: np.ndarray, out: str | Path | None,
                   progress: bool) -> None:
    """Play and trace a few test seeds of the key policies (wasted work, E2–E4 from their traces)."""
    from ..trainers.common import progress_bar

    ch = report["same_heads"]
    best, thr = ch["learned"]["chosen"]["best_rule"], ch["base"]["chosen"]["threshold"]
    table: dict[str, Any] = {"learned": learned,
                             f"learned+{best}": SameHeads(cfg, learned, rules["learned"][best], f"learned+{best}"),
                             "learned+clairvoyant": SameHeads(cfg, learned, "clairvoyant", "learned+clairvoyant"),
                             f"base+{thr}": SameHeads(cfg, None, rules["base"][thr], f"base+{thr}")}
    table.update({n: p for n, p, _ in others if n == "adaptive"})
    tdir = Path(out) / "traces" if out is not None else None
    if tdir is not None:
        tdir.mkdir(parents=True, exist_ok=True)
    with progress_bar(len(table), "traces", enabled=progress) as advance:
        for n, pol in table.items():
            trs = _traces(cfg, env_id, n, pol, seeds)
            report["policies"][n]["trace_sample"] = _trace_measures(trs)
            if tdir is not None:
                from ..core.io import dumps

                with (tdir / f"{n.replace('@', '_at_').replace('+', '_')}.jsonl").open("wb") as fh:
                    for tr in trs:
                        fh.write(dumps(tr, format="jsonl"))
            advance(1, policy=n)


# ----------------------------------------------------------------------------- many runs, shifted worlds
_CLAIM_NUMBER = {"beats_best_rule_same_heads": "return_diff", "beats_fitted_rule_same_heads": "return_diff",
                 "beats_published_rules_same_heads": "return_diff", "beats_best_threshold_same_heads": "return_diff", "near_clairvoyant_same_heads": "gap",
                 "beats_adaptive": "return_diff", "fewer_tokens_at_equal_success": "token_saving",
                 "adapts_to_difficulty": "hard_minus_easy", "vs_all_heads_oracle": "gap",
                 "threshold_gap_base_heads": "gap"}


def aggregate(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Across training runs: per claim ``passed``/``runs`` and the claim's number as mean ± t-CI."""
    out: dict[str, Any] = {"runs": len(reports), "claims": {}, "learned_return": t_interval(
        np.array([r["policies"]["learned"]["return"]["mean"] for r in reports]))}
    for k in reports[0]["claims"]:
        vals, met = [], []
        for r in reports:
            c = r["claims"].get(k)
            if c is None:
                continue
            v = c[_CLAIM_NUMBER[k]]
            vals.append(v["mean"] if isinstance(v, dict) else v)
            met.append(c["met"])
        out["claims"][k] = {"rule": CLAIM_RULES[k], "number": _CLAIM_NUMBER[k], "across_runs": t_interval(np.array(vals)),
                            "passed": None if any(m is None for m in met) else int(sum(bool(m) for m in met)),
                            "runs": len(met)}
    return out


def _check_same_world(policies: list[Any]) -> None:
    from ..errors import ConfigError

    worlds = {(p.env_id, tuple(p.env_set)) for p in policies}
    if len(worlds) > 1:
        desc = "; ".join(f"{w[0]} {' '.join(w[1]) or '(no --set)'}" for w in sorted(worlds))
        raise ConfigError(f"the runs were trained on different worlds ({desc}); an across-seed claim needs runs of "
                          "one world — evaluate each group separately")


def training_of(run: str | Path) -> dict[str, Any]:
    """The training seed and recipe of a run (from its ``config.json``), ``None`` where unknown.

    >>> training_of("no/such/run")
    {'run': 'no/such/run', 'seed': None, 'recipe': None}
    """
    p = Path(run)
    cfg_path = (p if p.is_dir() else p.parent) / "config.json"
    seed = recipe = None
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        seed = cfg.get("seed")
        stop = cfg.get("stop_update")
        recipe = "fitted" if stop == "fitted" else f"{cfg.get('algo')} (stop update: {stop})"
    except (OSError, ValueError, AttributeError):
        pass
    return {"run": str(run), "seed": seed, "recipe": recipe}


def _check_independent(training: list[dict[str, Any]]) -> None:
    """Refuse runs that are not independent training seeds of one recipe (issue 27)."""
    from ..errors import ConfigError

    by_seed: dict[Any, list[str]] = {}
    for t in training:
        if t["seed"] is not None:
            by_seed.setdefault(t["seed"], []).append(t["run"])
    same = {s: r for s, r in by_seed.items() if len(r) > 1}
    if same:
        desc = "; ".join(f"seed {s}: {', '.join(r)}" for s, r in same.items())
        raise ConfigError(f"runs share a training seed ({desc}); an across-seed claim needs independent runs — "
                          "pass runs trained with different --seed")
    recipes = {t["recipe"] for t in training if t["recipe"] is not None}
    if len(recipes) > 1:
        desc = "; ".join(f"{t['run']}: {t['recipe']}" for t in training if t["recipe"] is not None)
        raise ConfigError(f"the runs mix training recipes ({desc}); an across-seed claim is about one recipe — "
                          "evaluate each recipe's runs separately")


def evaluate_runs(runs: list[str | Path], *, env: str | None = None, env_set: tuple[str, ...] | list[str] = (),
                  episodes: int = 500, validation: int = 256, fit_episodes: int | None = None,
                  out: str | Path | None = None, oracle_all: bool = True, progress: bool = True,
                  cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate ≥ 2 training runs of one world and aggregate their claims (see :func:`aggregate`)."""
    from ..errors import ConfigError
    from ..policies.checkpoint import load_policy

    if len(runs) < 2:
        raise ConfigError(f"an across-seed claim needs at least 2 runs, got {len(runs)}; pass more run directories")
    training = [training_of(r) for r in runs]
    _check_independent(training)
    pols = [load_policy(r) for r in runs]
    _check_same_world(pols)
    cache = {} if cache is None else cache
    reports = []
    for run, pol in zip(runs, pols, strict=True):
        sub = Path(out) / Path(run).name if out is not None else None
        rep = evaluate(pol, env=env, env_set=env_set, episodes=episodes, validation=validation,
                       fit_episodes=fit_episodes, out=sub, sample_traces=0, oracle_all=oracle_all, progress=progress, cache=cache)
        rep.pop("_raw", None)
        rep["run"] = str(run)
        reports.append(rep)
    agg = {"env": reports[0]["env"], "env_set": reports[0]["env_set"], "episodes": episodes,
           "runs": [str(r) for r in runs], "training": training, **aggregate(reports)}
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "aggregate.json").write_text(json.dumps({"aggregate": agg, "reports": reports}, indent=1,
                                                             default=float) + "\n", encoding="utf-8")
    return {"aggregate": agg, "reports": reports}


def evaluate_suite(runs: list[str | Path], suite: str = "shift", *, env: str | None = None, episodes: int = 500,
                   validation: int = 256, fit_episodes: int | None = None, out: str | Path | None = None,
                   progress: bool = True, shifts: list[str] | None = None) -> dict[str, Any]:
    """:func:`evaluate_runs` in every world of a named suite (:data:`SUITES`); the all-heads
    oracle is left out of the shifted worlds (it is the costliest reference)."""
    from ..errors import ConfigError

    if suite not in SUITES:
        raise ConfigError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
    worlds = SUITES[suite]
    names = shifts or list(worlds)
    bad = [n for n in names if n not in worlds]
    if bad:
        raise ConfigError(f"unknown shift {bad[0]!r} in suite {suite!r}; known: {', '.join(worlds)}")
    table: dict[str, Any] = {}
    for n in names:
        sub = Path(out) / n if out is not None else None
        res = evaluate_runs(runs, env=env, env_set=worlds[n], episodes=episodes, validation=validation,
                            fit_episodes=fit_episodes, out=sub, oracle_all=False, progress=progress)
        table[n] = {"overrides": list(worlds[n]), **res["aggregate"]}
    result = {"suite": f"{suite}-v1", "shifts": table}
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "suite.json").write_text(json.dumps(result, indent=1, default=float) + "\n", encoding="utf-8")
    return result
