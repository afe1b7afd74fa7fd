"""Statistics of a real vote corpus and the simulator fitted to it (the numbers of docs/corpus-real.md).

    python benchmarks/corpus_stats.py src/orchestrace/data/corpora/smollm2-v1 --out /tmp/corpus-stats.json

Prints markdown tables: tasks by cell and split; per-attempt accuracy and majority accuracy after
each round by cell (95 % CIs: bootstrap over tasks, 2,000 resamples); how often voting changes
the answer; the oracle stop against fixed budgets; tokens; log-probs of right vs wrong attempts;
the simulator fitted on the train split (moments: real train, simulated, real test); and the
sim-to-real gap of one simple stop rule (a vote-share threshold with a per-call price, tuned in
the fitted simulator vs tuned on real validation tasks, both valued on the real test tasks,
paired bootstrap CI).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from orchestrace.logged.runs import LoggedRuns, load_logged_runs  # noqa: E402
from orchestrace.logged.simfit import (  # noqa: E402
    corpus_moments,
    fit_simulator,
    load_fitted_env,
    simulate_logged_runs,
)

B = 2000


def ci(x: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    """Mean and 95 % bootstrap CI over the first axis (tasks)."""
    x = np.asarray(x, float)
    idx = rng.integers(0, len(x), (B, len(x)))
    bs = x[idx].mean(1)
    return float(x.mean()), float(np.quantile(bs, 0.025)), float(np.quantile(bs, 0.975))


def fmt(m: tuple[float, float, float]) -> str:
    return f"{m[0]:.3f} [{m[1]:.3f}, {m[2]:.3f}]"


def cells(runs: LoggedRuns) -> list[tuple[str, np.ndarray]]:
    out = [("all", np.ones(runs.shape[0], bool))]
    for s in sorted(set(runs.suite.tolist())):
        for d in sorted(set(runs.difficulty[runs.suite == s].tolist())):
            out.append((f"{s}:{d}", (runs.suite == s) & (runs.difficulty == d)))
    return out


def stop_values(runs: LoggedRuns, share: np.ndarray, thr: float, price: float) -> np.ndarray:
    """Per task: correct − price·calls of "stop after the first round whose vote share ≥ thr" (last round at the latest)."""
    t, r, w = runs.shape
    ok = share >= thr
    ok[:, -1] = True
    k = ok.argmax(1)
    return runs.round_correct[np.arange(t), k].astype(float) - price * w * (k + 1)


def vote_share(runs: LoggedRuns) -> np.ndarray:
    """(T, R): share of the leading answer among all attempts of rounds 0..r (unparsed count as votes)."""
    t, r, w = runs.shape
    k = max(int(runs.answers.max()) + 1, 1)
    onehot = runs.answers[..., None] == np.arange(k)
    counts = onehot.sum(2).cumsum(1)  # (T, R, k)
    return counts.max(2) / (w * (np.arange(r) + 1))[None, :]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--out", default=None)
    ap.add_argument("--search", type=int, default=300)
    ap.add_argument("--sim-tasks", type=int, default=1500)
    ap.add_argument("--prices", type=float, nargs="+", default=[0.005, 0.02, 0.05],
                    help="prices per LLM call for the stop-rule comparison")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    runs = load_logged_runs(args.corpus)
    t, r, w = runs.shape
    res: dict = {"corpus": args.corpus, "shape": [t, r, w]}
    print(f"## Corpus {args.corpus}: {t} tasks x {r} rounds x {w} attempts\n")
    print("| cell | tasks | train | validation | test | attempt accuracy | majority after round 1 | "
          "after round " + str(r) + " | gain (last − attempt) |")
    print("|---|---|---|---|---|---|---|---|---|")
    res["cells"] = {}
    for name, m in cells(runs):
        sub = runs.subset(m)
        acc = ci(sub.correct.reshape(sub.shape[0], -1).mean(1), rng)
        m1 = ci(sub.round_correct[:, 0], rng)
        mr = ci(sub.round_correct[:, -1], rng)
        gain = ci(sub.round_correct[:, -1] - sub.correct.reshape(sub.shape[0], -1).mean(1), rng)
        sp = [int((sub.split == s).sum()) for s in ("train", "validation", "test")]
        res["cells"][name] = {"tasks": int(m.sum()), "splits": sp, "acc": acc, "maj_first": m1, "maj_last": mr,
                              "gain": gain, "maj_by_round": sub.round_correct.mean(0).tolist()}
        print(f"| {name} | {int(m.sum())} | {sp[0]} | {sp[1]} | {sp[2]} | {fmt(acc)} | {fmt(m1)} | {fmt(mr)} | "
              f"{fmt(gain)} |")
    # per-task solve-rate spread
    p = runs.correct.reshape(t, -1).mean(1)
    res["solve_rate_quantiles"] = np.quantile(p, [0.1, 0.25, 0.5, 0.75, 0.9]).tolist()
    res["share_tasks_0"] = float((p == 0).mean())
    res["share_tasks_1"] = float((p == 1).mean())
    res["share_tasks_mixed"] = float(((p > 0) & (p < 1)).mean())
    # how often voting changes the answer
    first = runs.answers[:, 0, 0]
    k = max(int(runs.answers.max()) + 1, 1)
    counts = (runs.answers.reshape(t, -1)[..., None] == np.arange(k)).sum(1)
    maj = np.where(counts.max(1) > 0, counts.argmax(1), -1)
    changed = maj != first
    flip_good = changed & runs.round_correct[:, -1] & ~runs.correct[:, 0, 0]
    flip_bad = changed & ~runs.round_correct[:, -1] & runs.correct[:, 0, 0]
    res["vote_changes"] = {"changed": ci(changed, rng), "wrong_to_right": ci(flip_good, rng),
                           "right_to_wrong": ci(flip_bad, rng),
                           "round_majority_changes": float((np.diff(runs.round_correct.astype(int), axis=1) != 0)
                                                           .any(1).mean())}
    print(f"\nSolve rate per task (share of its {r * w} attempts right): quantiles 10/25/50/75/90 % = "
          + ", ".join(f"{q:.3f}" for q in res["solve_rate_quantiles"])
          + f"; never solved {res['share_tasks_0']:.3f}, always {res['share_tasks_1']:.3f}, "
          f"mixed {res['share_tasks_mixed']:.3f}")
    vc = res["vote_changes"]
    print(f"\nThe final majority ({r * w} attempts) differs from the first attempt's answer on {fmt(vc['changed'])} "
          f"of tasks: wrong→right {fmt(vc['wrong_to_right'])}, right→wrong {fmt(vc['right_to_wrong'])}; the graded "
          f"majority changes between rounds on {vc['round_majority_changes']:.3f} of tasks.")
    # oracle stop vs fixed budgets
    rc = runs.round_correct
    anyc = rc.any(1)
    first_ok = np.where(anyc, rc.argmax(1), 0)
    print("\n| stop rule | accuracy | LLM calls per task |\n|---|---|---|")
    res["budgets"] = {}
    for kk in range(r):
        res["budgets"][f"fixed@{kk + 1}"] = [float(rc[:, kk].mean()), w * (kk + 1)]
        print(f"| fixed: {kk + 1} round(s) | {fmt(ci(rc[:, kk], rng))} | {w * (kk + 1)} |")
    oc = w * (first_ok + 1)
    res["oracle"] = [float(anyc.mean()), float(oc.mean())]
    print(f"| oracle stop (first round whose majority is right; else after round 1) | {fmt(ci(anyc, rng))} | "
          f"{oc.mean():.2f} |")
    # tokens and log-probs
    lp = runs.logprob_mean
    right, wrong = lp[runs.correct & np.isfinite(lp)], lp[~runs.correct & (runs.answers >= 0) & np.isfinite(lp)]
    auc = float((right[:, None] > wrong[None, :]).mean() + 0.5 * (right[:, None] == wrong[None, :]).mean())
    res["tokens"] = {"prompt_mean": float(runs.prompt_tokens.mean()), "completion_mean": float(runs.completion_tokens.mean()),
                     "completion_p90": float(np.quantile(runs.completion_tokens, 0.9)),
                     "per_task_full": float((runs.prompt_tokens + runs.completion_tokens).sum((1, 2)).mean())}
    res["logprob"] = {"right_mean": float(right.mean()), "wrong_mean": float(wrong.mean()), "auc_right_vs_wrong": auc,
                      "present": float(np.isfinite(lp).mean()), "unparsed": float((runs.answers < 0).mean())}
    print(f"\nTokens per attempt: prompt {res['tokens']['prompt_mean']:.1f}, completion "
          f"{res['tokens']['completion_mean']:.2f} (90th pct {res['tokens']['completion_p90']:.0f}); a whole "
          f"{r}x{w} run {res['tokens']['per_task_full']:.0f} tokens. Mean token log-prob: right "
          f"{right.mean():.3f}, wrong {wrong.mean():.3f}; AUC (right > wrong) {auc:.3f}; unparsed replies "
          f"{res['logprob']['unparsed']:.3f}.")
    # simulator fit on train, compared with train and test
    train, val, test = (runs.subset(runs.split == s) for s in ("train", "validation", "test"))
    t0 = time.time()
    fit = fit_simulator(train, n_sim=args.sim_tasks, n_search=args.search, seed=0)
    res["fit"] = {k: fit[k] for k in ("set", "profile", "loss")}
    res["fit_seconds"] = time.time() - t0
    mt, ms, mte = fit["moments"]["real"], fit["moments"]["simulated"], corpus_moments(test)
    res["fit"]["moments"] = {"train": mt, "sim": ms, "test": mte}
    print(f"\n### Simulator fitted on the {train.shape[0]} train tasks ({res['fit_seconds']:.0f} s)\n")
    print("`--set " + " --set ".join(fit["set"]) + "`\n")
    print("| moment | real train | fitted simulator | real test |\n|---|---|---|---|")
    for key in ("acc", "maj_first", "maj_last", "wrong_agree", "unparsed", "tokens_out", "tokens_in"):
        print(f"| {key} | {mt[key]:.3f} | {ms[key]:.3f} | {mte[key]:.3f} |")
    for key in ("conf_right", "conf_wrong"):
        print(f"| {key} (mean, sd of logit conf) | {mt[key][0]:.2f}, {mt[key][1]:.2f} | {ms[key][0]:.2f}, "
              f"{ms[key][1]:.2f} | {mte[key][0]:.2f}, {mte[key][1]:.2f} |")
    print("| solve-count histogram (k = 0.." + str(r * w) + ") | " + " ".join(f"{x:.2f}" for x in mt["solve_hist"])
          + " | " + " ".join(f"{x:.2f}" for x in ms["solve_hist"]) + " | "
          + " ".join(f"{x:.2f}" for x in mte["solve_hist"]) + " |")
    tv = float(np.abs(np.array(mt["solve_hist"]) - np.array(ms["solve_hist"])).sum() / 2)
    tv_test = float(np.abs(np.array(mt["solve_hist"]) - np.array(mte["solve_hist"])).sum() / 2)
    res["fit"]["tv_train_sim"], res["fit"]["tv_train_test"] = tv, tv_test
    print(f"\nTotal-variation distance of the solve-count histograms: train vs simulator {tv:.3f}; "
          f"train vs test (sampling noise) {tv_test:.3f}.")
    # sim-to-real for one simple rule: a vote-share threshold, tuned in sim vs on real validation
    fitted = load_fitted_env(_tmp_fit(fit))
    sim = simulate_logged_runs(fitted, 5000, r, w, seed=7)
    grid = np.round(np.arange(0.3, 1.01, 0.05), 2)
    sh_test, sh_val, sh_sim = vote_share(test), vote_share(val), vote_share(sim)
    res["sim_to_real"] = []
    print("\n### Sim-to-real for a vote-share threshold (value = right − price·calls)\n")
    print(f"Stop after the first round whose leading answer holds ≥ θ of the votes so far. θ tuned on 5,000 tasks "
          f"of the fitted simulator vs on the {val.shape[0]} real validation tasks; both valued on the "
          f"{test.shape[0]} real test tasks (paired bootstrap over tasks).\n")
    print("| price per call | θ sim | θ real | test value, sim-tuned | test value, real-tuned | sim − real | "
          "best fixed budget on test |")
    print("|---|---|---|---|---|---|---|")
    for price in args.prices:
        def best(rr: LoggedRuns, sh: np.ndarray, price: float = price) -> float:
            return float(grid[int(np.argmax([stop_values(rr, sh, g, price).mean() for g in grid]))])

        th_sim, th_real = best(sim, sh_sim), best(val, sh_val)
        v_sim, v_real = stop_values(test, sh_test, th_sim, price), stop_values(test, sh_test, th_real, price)
        fixed = [float((test.round_correct[:, kk] - price * w * (kk + 1)).mean()) for kk in range(r)]
        row = {"price_per_call": price, "threshold_sim": th_sim, "threshold_real_val": th_real,
               "test_value_sim_tuned": ci(v_sim, rng), "test_value_real_tuned": ci(v_real, rng),
               "diff_sim_minus_real": ci(v_sim - v_real, rng), "fixed_budgets_test": fixed}
        res["sim_to_real"].append(row)
        kb = int(np.argmax(fixed))
        print(f"| {price} | {th_sim} | {th_real} | {fmt(row['test_value_sim_tuned'])} | "
              f"{fmt(row['test_value_real_tuned'])} | {fmt(row['diff_sim_minus_real'])} | "
              f"{fixed[kb]:.3f} ({kb + 1} round(s)) |")
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0


def _tmp_fit(fit: dict) -> str:
    import tempfile

    p = Path(tempfile.mkdtemp()) / "fit.json"
    p.write_text(json.dumps(fit))
    return str(p)


if __name__ == "__main__":
    raise SystemExit(main())
