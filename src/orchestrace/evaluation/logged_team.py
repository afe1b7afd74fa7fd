"""``orchestrace eval --traces TEAM_CORPUS RUN … [--test FRESH …]``: the joint policy against every fixed team.

1. **Fixed configurations**: every callable member subset S (:func:`~._team.subsets`) called
   every round × every aggregation over S (majority, log-prob, confidence, ``latest:<member>``
   for a member of S) × every stop rule of the family (:func:`team_family`, read on the votes of
   S) — valued exactly along the log.
2. **Tuning on the corpus's validation tasks only**: the best (rule × configuration) is the one
   of highest validation mean return; so are the baselines' settings.
3. **Baselines a reviewer would write**: the best (rule × configuration); a single cold call;
   the fitted stop-only policy on the best fixed team (the same backward induction, the action
   space cut to "call that team again" / "stop with its aggregation"); the defaults people run —
   an always-continue vote at T 0.7 (``hot`` every round, majority) and a three-round debate (all
   members, the reviser's answer).
4. **Claims** on the corpus's test split and on every fresh collection (``--test``; all its
   tasks): paired 95 % CIs over tasks, per policy (fitting seed), never only the best seed; a CI
   that holds 0 is written as a tie. Calls saved vs the cheapest fixed configuration (any subset,
   its best aggregation, a fixed number of rounds) whose validation accuracy is at least the
   policy's.

>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> from orchestrace.trainers.team_fitted_q import fit_team_policy
>>> runs = make_synthetic_team(900, 3, seed=2)
>>> pol, _ = fit_team_policy(runs, classes=("linear",))
>>> res = evaluate_team(runs, [pol], names=["seed0"], stop_only=False)
>>> sorted(res["sets"]["test"]["policies"]["seed0"]["claims"])[:3]
['beats_best_rule', 'beats_best_rule_per_cell', 'beats_cold_call']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..logged.corpus import CheckedRuns, billed_prices, held
from ..logged.runs import LoggedRuns
from ..logged.value import Valuation
from ..policies.rules import StopRule, VoteState
from ..policies.team import TeamArrays, rollout, subsets
from ..policies.team_policy import TeamPolicy
from ..trainers.team_fitted_q import arrays_for, fit_team_policy, greedy, team_scales
from .logged import ci_mean, fresh_sets, rule_grid, saving_ci, t_interval
from .rule_table import COUNT_RULES, distinct_counts, first_stops

__all__ = ["evaluate_team", "render_team", "team_family"]


def team_family(R: int, width: int) -> dict[str, list[StopRule]]:
    """The stop-rule family on a configuration of ``width`` columns (one home: :mod:`.rules` / ``rule_grid``)."""
    return rule_grid(R, width)


def _paths(arr: TeamArrays, S: tuple[int, ...], aggs: list[str]) -> dict[str, Any]:
    """Calling S every round: per aggregation the :class:`~orchestrace.logged.value.Valuation` of every stopping
    time (the vote's table: a vote is the team of identical members), and the rule states of each check."""
    T, R, W = arr.shape
    mask = np.zeros(W, bool)
    mask[list(S)] = True
    st = arr.start(np.arange(T))
    corr = np.zeros((T, R, len(aggs)), bool)
    tok = np.zeros((T, R))
    states = []
    for k in range(R):
        st = arr.step(st, mask[None])
        for g, a in enumerate(aggs):
            corr[:, k, g] = arr.correct(st, a)
        tok[:, k] = st.tokens
        seq = arr.codes[:, : k + 1][:, :, list(S)].reshape(T, -1)
        lp = arr.lp[:, : k + 1][:, :, list(S)].reshape(T, -1)  # per-sample log-prob (CISC) and confidence (DeepConf)
        cf = arr.cf[:, : k + 1][:, :, list(S)].reshape(T, -1)
        states.append(VoteState(votes=st.votes, recent=seq, price=arr.price, round_=np.full(T, k), max_rounds=R,
                                logprob=lp, confidence=cf))
    calls = np.broadcast_to((np.arange(R) + 1) * len(S), (T, R))
    values = [Valuation(len(S), a, corr[:, :, g], tok, calls, arr.price, arr.token_scale) for g, a in enumerate(aggs)]
    return {"values": values, "states": states}


#: Rules whose decision depends only on the multiset of vote counts (one home: :mod:`.rule_table`).
_COUNT_RULES = COUNT_RULES
#: The distinct count vectors of a vote table and each row's index among them (:func:`.rule_table.distinct_counts`).
_distinct_counts = distinct_counts


def _decide(rule: StopRule, state: VoteState, uniq: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``rule.stop_now(state)``; for a count-only rule, on the distinct sorted count vectors ``uniq`` only (the plain
    rule-by-rule reference of :func:`.rule_table.first_stops`, kept for the tests)."""
    if type(rule) in _COUNT_RULES:
        rows, inv = uniq
        small = VoteState(votes=rows, recent=None, price=np.zeros(len(rows)), round_=np.full(len(rows), -1),
                          max_rounds=state.max_rounds)
        return np.asarray(rule.stop_now(small), bool)[inv]
    return np.asarray(rule.stop_now(state), bool)


def _config_aggs(all_aggs: Sequence[str], members: Sequence[str], S: tuple[int, ...]) -> list[str]:
    return [a for a in all_aggs if not a.startswith("latest:") or members.index(a.split(":", 1)[1]) in S]


def _outcome(path: dict[str, Any], stop: np.ndarray, g: int, rows: np.ndarray) -> dict[str, np.ndarray]:
    o = path["values"][g].at(stop[rows], rows)
    return {k: o[k] for k in ("return", "correct", "calls", "tokens")}


def _policy_rollout(p: TeamPolicy, runs: LoggedRuns, price: np.ndarray, rows: np.ndarray,
                    token_scale: float) -> dict[str, np.ndarray]:
    """The policy's exact outcome on ``rows``: its features read with its own constants (as :meth:`TeamPolicy.decide`
    does), the return in the evaluation's token scale."""
    arr = TeamArrays.build(runs, price, p.token_scale, lp_fill=p.lp_fill, cf_fill=p.cf_fill, cells=tuple(p.cells))
    ps = [tuple(s) for s in p.subsets]
    o = rollout(arr, greedy(arr, p.model_class, p.models, ps, len(p.aggregations)), ps, tuple(p.aggregations), idx=rows)
    o["return"] = o["correct"] - price[rows] * o["tokens"] / token_scale
    return o


def _cmp(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> dict[str, Any]:
    d = ci_mean(a["return"] - b["return"])
    verdict = "better" if d["lo"] > 0 else "worse" if d["hi"] < 0 else "tie"
    return {"return_diff": d, "accuracy_diff": ci_mean(a["correct"] - b["correct"]), "verdict": verdict}


def _summ(o: dict[str, np.ndarray]) -> dict[str, Any]:
    return {"return": ci_mean(o["return"]), "accuracy": ci_mean(o["correct"]), "calls": float(o["calls"].mean()),
            "tokens": float(o["tokens"].mean())}


def evaluate_team(runs: LoggedRuns | CheckedRuns, policies: Sequence[TeamPolicy], *,
                  names: Sequence[str] | None = None, tests: Sequence[tuple[str, LoggedRuns | CheckedRuns]] = (),
                  price_seed: int = 0, stop_only: bool = True,
                  log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Tune every fixed configuration × rule on validation; value them, the baselines and every policy on the
    test split and each fresh set (module docstring). Runs not yet checked are held to the team's rules here (a
    vote corpus is the one-kind team); :class:`~orchestrace.logged.corpus.CheckedRuns` are not checked again."""
    t0 = time.perf_counter()
    where = "corpus" if isinstance(runs, CheckedRuns) else str(runs.meta.get("path", "corpus"))
    runs, notes = held(runs, where=where, team=True)
    T, R, W = runs.answers.shape
    names = list(names) if names is not None else [f"policy{i}" for i in range(len(policies))]
    cells = sorted({f"{s}:{d}" for s, d in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)})

    _check_policies(runs, policies, names, cells, R)
    checked = fresh_sets(runs, tests, lambda tr, tn: held(tr, where=tn, splits=False, team=True))
    notes += [f"{tn}: {x}" for tn, _, tnotes in checked for x in tnotes]
    fresh = [(tn, tr) for tn, tr, _ in checked]
    train = runs.subset(runs.split == "train")
    sc = team_scales(train)
    for tn, tr in fresh:
        unknown = sorted({f"{s}:{d}" for s, d in zip(tr.suite.tolist(), tr.difficulty.tolist(), strict=True)}
                         - set(sc["cells"]))
        if unknown:
            raise ConfigError(f"{tn}: task cell(s) {unknown} are not in the corpus ({list(sc['cells'])})")
    a_all = arrays_for(runs, sc, price_seed)
    iv, it = np.flatnonzero(runs.split == "validation"), np.flatnonzero(runs.split == "test")
    sets: list[tuple[str, TeamArrays, np.ndarray]] = [("test", a_all, it)]
    sets += [(tn, arrays_for(tr, sc, price_seed), np.arange(len(tr.task_ids))) for tn, tr in fresh]
    members = list(a_all.members)
    subs = subsets(runs)
    val_cell = _cell_of(runs)[iv]
    cell_masks = {c: val_cell == c for c in cells if (val_cell == c).any()}
    # 1–2. fixed configurations × rules: stop indices once per corpus, chosen on validation
    cands, paths = _tune(a_all, sets, [tn for tn, _ in fresh], iv, subs, members, cell_masks, R)
    log(f"{len(cands)} (rule × configuration) settings tuned on {len(iv)} validation tasks")

    best = max(cands, key=lambda c: c["val_return"])
    # the strongest rule with the policy's information: a (rule × configuration) chosen per task cell on validation
    route = {c: max(cands, key=lambda x: x["val_cells"].get(c, float("-inf"))) for c in cell_masks}
    tuned = _Tuned(paths, best, route, {"test": runs, **dict(fresh)})
    by_family = {f: max((c for c in cands if c["family"] == f), key=lambda c: c["val_return"])
                 for f in dict.fromkeys(c["family"] for c in cands)}

    baselines = _baselines(cands, best, members, bool(runs.members), subs, R, W)
    budgets = [c for c in cands if c["family"] == "budget"]
    # 3. the fitted stop-only policy on the best fixed team
    so: TeamPolicy | None = None
    if stop_only:
        so, _ = fit_team_policy(runs, classes=("linear", "quadratic"), seed=0, price_seed=price_seed,
                                only=(best["S"], best["agg"]))
        log(f"stop-only policy on {best['name'].split('/', 1)[1]}: {so.model_class}, validation return "
            f"{so.meta['validation_return']:.4f}")
    # 4. policies and claims on every set
    out_sets: dict[str, Any] = {}
    val_out = {n: _policy_rollout(p, runs, a_all.price, iv, sc["token_scale"])
               for n, p in zip(names, policies, strict=True)}
    base_name = {k: c["name"] for k, c in baselines.items()}
    base_name["stop_only_best_team"] = f"stop-only/{best['name'].split('/', 1)[1]}"
    base_name["best_rule_per_cell"] = "per cell: " + "; ".join(f"{c} → {x['name']}" for c, x in route.items())
    for sn, arr, rows in sets:
        out_sets[sn] = _set_entry(tuned, sn, arr, rows, names, policies, so, baselines, base_name, by_family, budgets,
                                  val_out, sc["token_scale"])
    # what a user gains: the tool's pick on validation (a policy or the best rule) vs the defaults
    picks = {n: float(v["return"].mean()) for n, v in val_out.items()}
    pick = max(picks, key=lambda n: picks[n]) if picks and max(picks.values()) > best["val_return"] else None
    return {"corpus": {"tasks": {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")},
                       "rounds": R, "members": members, "sees": [list(s) for s in a_all.sees],
                       "cells": list(sc["cells"]), "token_scale": sc["token_scale"]},
            "exclusions": notes, "settings": len(cands), "best_rule": best["name"],
            "best_rule_validation_return": best["val_return"],
            "tool_pick": pick or best["name"], "sets": out_sets, "eval_seconds": time.perf_counter() - t0}


def _cell_of(r: LoggedRuns) -> np.ndarray:
    """The task cell (``suite:difficulty``) of every task of ``r``."""
    return np.array([f"{s}:{d}" for s, d in zip(r.suite.tolist(), r.difficulty.tolist(), strict=True)])


@dataclass
class _Tuned:
    """The tuned settings valued on any set: one setting (:meth:`value`), or the per-cell choice (:meth:`routed`)."""

    paths: dict[tuple[str, tuple[int, ...]], dict[str, Any]]
    best: dict[str, Any]
    route: dict[str, dict[str, Any]]
    set_runs: dict[str, LoggedRuns]

    def value(self, c: dict[str, Any], sn: str, rows: np.ndarray) -> dict[str, np.ndarray]:
        key = "corpus" if sn == "test" else sn
        return _outcome(self.paths[(key, c["S"])], c["stops"][key], c["g"], rows)

    def routed(self, sn: str, rows: np.ndarray) -> dict[str, np.ndarray]:
        where = _cell_of(self.set_runs[sn])[rows]
        out = {k: np.zeros(len(rows)) for k in ("return", "correct", "calls", "tokens")}
        for c, cand in self.route.items():
            m = where == c
            if m.any():
                for k, v in self.value(cand, sn, rows[m]).items():
                    out[k][m] = v
        missing = ~np.isin(where, list(self.route))
        if missing.any():  # a cell without validation tasks: the best single rule
            for k, v in self.value(self.best, sn, rows[missing]).items():
                out[k][missing] = v
        return out


def _set_entry(tuned: _Tuned, sn: str, arr: TeamArrays, rows: np.ndarray, names: Sequence[str],
               policies: Sequence[TeamPolicy], so: TeamPolicy | None, baselines: dict[str, dict[str, Any]],
               base_name: dict[str, str], by_family: dict[str, dict[str, Any]], budgets: list[dict[str, Any]],
               val_out: dict[str, dict[str, np.ndarray]], token_scale: float) -> dict[str, Any]:
    """Step 4 on one set (the test split or a fresh set): the baselines, each family's best, every policy and its
    claims, and (several policies) the claims across fitting seeds."""
    value, best = tuned.value, tuned.best
    base_o = {k: value(c, sn, rows) for k, c in baselines.items()}
    base_o["best_rule_per_cell"] = tuned.routed(sn, rows)
    if so is not None:
        ss = [tuple(s) for s in so.subsets]
        base_o["stop_only_best_team"] = rollout(arr, greedy(arr, so.model_class, so.models, ss, 1), ss,
                                                tuple(so.aggregations), idx=rows)
    pols: dict[str, Any] = {}
    for n, p in zip(names, policies, strict=True):
        o = _policy_rollout(p, tuned.set_runs[sn], arr.price, rows, token_scale)
        eq = _equal_accuracy_budget(budgets, float(val_out[n]["correct"].mean()))
        pols[n] = _policy_entry(n, p, o, val_out[n], value(eq, sn, rows), eq, base_o, base_name, baselines, best)
    entry: dict[str, Any] = {"tasks": int(len(rows)), "baselines": {k: {"name": base_name[k], **_summ(o)}
                                                                    for k, o in base_o.items()},
                             "family_best": {f: {"name": c["name"], **_summ(value(c, sn, rows))} for f, c in
                                             by_family.items()},
                             "policies": pols}
    if len(policies) > 1:
        entry["across_seeds"] = {k: t_interval([v["claims"][k]["return_diff"]["mean"] for v in pols.values()])
                                 for k in next(iter(pols.values()))["claims"] if k.startswith("beats_")}
    return entry


def _check_policies(runs: LoggedRuns, policies: Sequence[TeamPolicy], names: Sequence[str], cells: list[str],
                    R: int) -> None:  # noqa: N803
    """Refuse a policy fitted for another team, round limit or set of task cells."""
    for n, p in zip(names, policies, strict=True):
        p.check_team(runs.members, runs.sees, R, where=f"{n} on the corpus", prices=billed_prices(runs.meta))
        if sorted(p.cells) != cells:
            raise ConfigError(f"{n}: the policy was fitted on task cells {sorted(p.cells)}, the corpus has {cells}; "
                              "evaluate it on tasks of the cells it was fitted on")


def _tune(a_all: TeamArrays, sets: list[tuple[str, TeamArrays, np.ndarray]], fresh_names: list[str],
          iv: np.ndarray, subs: list[tuple[int, ...]], members: list[str], cell_masks: dict[str, np.ndarray],
          R: int) -> tuple[list[dict[str, Any]], dict[tuple[str, tuple[int, ...]], dict[str, Any]]]:  # noqa: N803
    """Steps 1–2: every fixed configuration × rule × aggregation, its stops on the corpus and on every fresh
    set, valued on the validation tasks (overall and per task cell); and the paths they were read from."""
    cands: list[dict[str, Any]] = []
    paths: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
    for S in subs:
        aggs = _config_aggs(a_all.aggs, members, S)
        gidx = [a_all.aggs.index(a) for a in aggs]
        for sn, arr, _ in [("corpus", a_all, iv)] + [(tn, a, ix) for tn, a, ix in sets[1:]]:
            paths[(sn, S)] = _paths(arr, S, list(a_all.aggs))
        fam = team_family(R, len(S))
        rules = [(fname, rule) for fname, rs in fam.items() for rule in rs]
        table = {sn: first_stops([r for _, r in rules], paths[(sn, S)]["states"])  # (rules, T) int8, shared work
                 for sn in ["corpus", *fresh_names]}
        for sn in table:  # the vote states are read: drop them (memory; the outcomes need the payoffs only)
            del paths[(sn, S)]["states"]
        pc: list[Valuation] = paths[("corpus", S)]["values"]
        for i, (fname, rule) in enumerate(rules):
            stops = {sn: t[i] for sn, t in table.items()}
            sv = stops["corpus"][iv]
            calls = float(pc[0].calls[iv, sv].mean())
            for g, a in zip(gidx, aggs, strict=True):
                pv, cv = pc[g].payoff[iv, sv], pc[g].correct[iv, sv]  # (n_val,)
                cands.append({"family": fname, "rule": rule.name, "S": S, "agg": a, "g": g, "stops": stops,
                              "val_return": float(pv.mean()), "val_accuracy": float(cv.mean()),
                              "val_calls": calls, "val_cells": {c: float(pv[m].mean()) for c, m in cell_masks.items()},
                              "name": f"{rule.name}/{'+'.join(members[c] for c in S)}/{a}"})
    return cands, paths


def _baselines(cands: list[dict[str, Any]], best: dict[str, Any], members: list[str], team: bool,
               subs: list[tuple[int, ...]], R: int, W: int) -> dict[str, dict[str, Any]]:  # noqa: N803
    """The named baselines among the tuned settings: the best rule, one call (the cold member's, else the best
    single call), the hot vote at full budget, and the default debate, where the team has them."""
    def find(S: tuple[int, ...], rule: str, agg: str) -> dict[str, Any] | None:
        return next((c for c in cands if c["S"] == S and c["rule"] == rule and c["agg"] == agg), None)

    col = {m: i for i, m in enumerate(members)}
    baselines: dict[str, dict[str, Any]] = {"best_rule": best}
    singles = [c for c in cands if len(c["S"]) == 1 and c["rule"] == "budget@1" and c["agg"] == "majority"]
    cold = find((col["cold"],), "budget@1", "majority") if "cold" in col else None
    if cold is not None:
        baselines["cold_call"] = cold
    else:  # no cold member (e.g. a vote corpus): the best single call on validation
        baselines["single_call"] = max(singles, key=lambda c: c["val_return"])
    if "hot" in col:
        hot = find((col["hot"],), f"budget@{R}", "majority")
        if hot is not None:
            baselines["default_vote_hot"] = hot
    elif not team:  # a vote corpus: its one sampler is the T 0.7 vote; always-continue at full width
        hot = find(tuple(range(W)), f"budget@{R}", "majority")
        if hot is not None:
            baselines["default_vote_hot"] = hot
    full = tuple(range(W))
    debate_agg = "latest:reviser" if "reviser" in col else "majority"
    deb = find(full, f"budget@{min(3, R)}", debate_agg) if full in subs and team else None
    if deb is not None:
        baselines["default_debate"] = deb
    return baselines


def _equal_accuracy_budget(budgets: list[dict[str, Any]], accuracy: float) -> dict[str, Any]:
    """The cheapest fixed budget at least as accurate on validation (else the most accurate one)."""
    ok = [c for c in budgets if c["val_accuracy"] >= accuracy - 1e-12]
    return min(ok, key=lambda c: (c["val_calls"], -c["val_accuracy"])) if ok else \
        max(budgets, key=lambda c: c["val_accuracy"])


def _policy_entry(n: str, p: TeamPolicy, o: dict[str, np.ndarray], val: dict[str, np.ndarray],
                  eo: dict[str, np.ndarray], eq: dict[str, Any], base_o: dict[str, dict[str, np.ndarray]],
                  base_name: dict[str, str], baselines: dict[str, dict[str, Any]],
                  best: dict[str, Any]) -> dict[str, Any]:
    """One policy on one set: its summary, its claims against every baseline and the equal-accuracy budget
    ``eq`` (outcome ``eo``), and the tool's pick on validation (this policy or the best rule)."""
    claims = {f"beats_{k}": {"baseline": base_name[k], **_cmp(o, bo)} for k, bo in base_o.items()}
    sv = saving_ci(o["calls"], eo["calls"])
    da = ci_mean(o["correct"] - eo["correct"])
    claims["fewer_calls_at_equal_accuracy"] = {
        "baseline": eq["name"], "call_saving": sv, "accuracy_diff": da,
        "met": bool(sv["lo"] >= 0.40 and da["hi"] >= 0), "verdict": "tie" if sv["lo"] <= 0 <= sv["hi"] else
        ("fewer calls" if sv["lo"] > 0 else "more calls")}
    # what a user gains: the tool's pick on validation (this policy or the best rule) vs the defaults
    use_pol = float(val["return"].mean()) > best["val_return"]
    po = o if use_pol else base_o["best_rule"]
    gains = {k: {"baseline": baselines[k]["name"], **_cmp(po, base_o[k])}
             for k in ("default_vote_hot", "default_debate") if k in base_o}
    return {"summary": _summ(o), "model_class": p.model_class, "fit_seed": p.meta.get("fit_seed"),
            "validation_return": float(val["return"].mean()), "claims": claims,
            "tool_pick": {"name": n if use_pol else best["name"], "summary": _summ(po), "vs": gains}}


def _fmt(d: dict[str, float]) -> str:
    return f"{d['mean']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def render_team(res: dict[str, Any]) -> str:
    """A markdown summary of :func:`evaluate_team`'s result (every set, every policy, ties as ties)."""
    c = res["corpus"]
    lines = [f"# Team policy vs fixed teams ({', '.join(c['members'])}; {c['rounds']} rounds)", "",
             f"{res['settings']} (rule × configuration) settings tuned on {c['tasks']['validation']} validation "
             f"tasks; best: `{res['best_rule']}`; the tool's validation pick: `{res['tool_pick']}`.", ""]
    for sn, s in res["sets"].items():
        lines += [f"## {sn} ({s['tasks']} tasks)", "", "| policy / baseline | return | accuracy | calls |",
                  "|---|---|---|---|"]
        for k, b in s["baselines"].items():
            lines.append(f"| {k}: `{b['name']}` | {_fmt(b['return'])} | {b['accuracy']['mean']:.3f} | "
                         f"{b['calls']:.2f} |")
        for n, p in s["policies"].items():
            lines.append(f"| **{n}** ({p['model_class']}, seed {p['fit_seed']}) | {_fmt(p['summary']['return'])} | "
                         f"{p['summary']['accuracy']['mean']:.3f} | {p['summary']['calls']:.2f} |")
        lines += ["", "| policy | claim | baseline | return diff (paired 95 % CI) | verdict |", "|---|---|---|---|---|"]
        for n, p in s["policies"].items():
            for k, v in p["claims"].items():
                if "return_diff" in v:
                    lines.append(f"| {n} | {k} | `{v['baseline']}` | {_fmt(v['return_diff'])} | {v['verdict']} |")
                else:
                    lines.append(f"| {n} | {k} | `{v['baseline']}` | saving {_fmt(v['call_saving'])}, accuracy "
                                 f"{_fmt(v['accuracy_diff'])} | {v['verdict']} |")
        lines += ["", "| seed | the tool's validation pick | vs | return diff (paired 95 % CI) | verdict |",
                  "|---|---|---|---|---|"]
        for n, p in s["policies"].items():
            for k, v in p["tool_pick"]["vs"].items():
                lines.append(f"| {n} | `{p['tool_pick']['name']}` | {k}: `{v['baseline']}` | {_fmt(v['return_diff'])} "
                             f"| {v['verdict']} |")
        lines.append("")
    return "\n".join(lines)
