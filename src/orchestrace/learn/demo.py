"""The main job: learn to orchestrate with an explicit learned stop, and show the evidence.

``orchestrace demo [--out DIR]`` (or :func:`run_demo`):

1. trains the default :class:`~orchestrace.learn.TrainConfig` (GRPO, behaviour-cloned O1–O4
   warm start, stop head learned from counterfactual replay credit) on the default
   environment — about 1–3 minutes on a 2-core CPU;
2. evaluates the learned policy, every baseline, the oracle and the stop-head ablation on
   ≥ 500 held-out seeds each (paired: the same seeds for every policy);
3. writes ``DIR/summary.md`` (tables + evidence), ``DIR/results.json``, ``DIR/episodes.npz``,
   ``DIR/traces/*.jsonl`` (a traced sample per key policy), ``DIR/run/`` (checkpoint, metric
   log) and ``DIR/pareto.png`` when matplotlib is installed (the ``plot`` extra).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["render_summary", "run_demo"]


def _fmt(ci: dict[str, float], digits: int = 3, scale: float = 1.0) -> str:
    m, lo, hi = ci["mean"] * scale, ci["lo"] * scale, ci["hi"] * scale
    if digits == 0:
        return f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def render_summary(report: dict[str, Any], *, train_info: dict[str, Any] | None = None) -> str:
    """Markdown summary of an evaluation report (tables, Pareto front, ablation, evidence)."""
    pol = report["policies"]
    lines = [f"# orchestrace demo — learned stop (O5) on `{report['env']}`", ""]
    if train_info:
        lines += [f"Training: {train_info.get('algo')} · {train_info.get('steps')} updates × "
                  f"{train_info.get('episodes_per_step')} episodes · {train_info.get('seconds', 0):.0f} s. "
                  f"Evaluation: {report['episodes']} held-out seeds per policy "
                  f"({report['seeds'][0]}…{report['seeds'][1]}), the same seeds for every policy.", ""]
    lines += ["95 % confidence intervals in brackets (Wilson for success, normal for means). "
              "Return = success − token, time and safety costs. ★ = on the success-vs-tokens Pareto front.", "",
              "| policy | success (E1) | tokens | critical steps | wall-clock s | return | decisions easy / hard | ★ |",
              "|---|---|---|---|---|---|---|---|"]
    for n, s in pol.items():
        if n.startswith("learned+stop@"):
            continue
        lines.append(f"| {n} | {_fmt(s['success'])} | {_fmt(s['tokens'], 0)} | {s['critical_steps']['mean']:.1f} | "
                     f"{s['wall_clock_s']['mean']:.1f} | {_fmt(s['return'])} | "
                     f"{s['decisions_easy']['mean']:.1f} / {s['decisions_hard']['mean']:.1f} | "
                     f"{'★' if report['pareto'].get(n) else ''} |")
    lines += ["", "## Ablation: the learned O1–O4 heads with the stop head replaced by a fixed round budget", "",
              "| policy | success | tokens | return | decisions |", "|---|---|---|---|---|"]
    for n in ["learned"] + [n for n in pol if n.startswith("learned+stop@")]:
        s = pol[n]
        lines.append(f"| {n} | {_fmt(s['success'])} | {_fmt(s['tokens'], 0)} | {_fmt(s['return'])} | {s['decisions']['mean']:.1f} |")
    sampled = [n for n, s in pol.items() if s.get("trace_sample")]
    if sampled:
        keys = ["waste/tokens", "waste/share", "e2/speedup", "e2/efficiency", "e3/overhead_tokens", "e4/amplification"]
        lines += ["", f"## Traced sample ({report['policies'][sampled[0]]['trace_sample'].get('waste/share', {}).get('n', '?')} "
                  "episodes per policy): wasted work and E2–E4 from `orchestrace.measures`", "",
                  "| policy | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
        for n in sampled:
            ts = pol[n]["trace_sample"]
            lines.append(f"| {n} | " + " | ".join(f"{ts[k]['mean']:.3g}" if k in ts else "–" for k in keys) + " |")
    ev = report["evidence"]
    lines += ["", "## Evidence (targets of the main job)", ""]
    if "vs_best_fixed_budget" in ev:
        e = ev["vs_best_fixed_budget"]
        lines.append(f"- {'✅' if e['met'] else '❌'} **Success of the best fixed budget with ≥ 25 % fewer tokens**: "
                     f"learned {e['success_learned']:.3f} vs {e['baseline']} {e['success_baseline']:.3f} "
                     f"(paired diff {_fmt(e['success_diff'])}); tokens {e['tokens_learned']:,.0f} vs "
                     f"{e['tokens_baseline']:,.0f} → **{100 * e['token_saving']:.1f} % fewer**.")
    if "vs_oracle" in ev:
        e = ev["vs_oracle"]
        lines.append(f"- {'✅' if e['met'] else '❌'} **Return within 5 % of the oracle's**: learned {e['return_learned']:.3f} "
                     f"vs oracle {e['return_oracle']:.3f} → gap {100 * e['gap']:.1f} % "
                     f"(paired diff {_fmt(e['return_diff'])}).")
    if "adapts" in ev:
        e = ev["adapts"]
        lines.append(f"- {'✅' if e['met'] else '❌'} **The learned stop adapts**: mean decisions easy "
                     f"{e['decisions_easy']:.1f} vs hard {e['decisions_hard']:.1f} (hard − easy {_fmt(e['hard_minus_easy'], 1)}).")
    if "vs_threshold" in ev:
        e = ev["vs_threshold"]
        lines.append(f"- {'✅' if e['met'] else '❌'} **Beats the confidence-threshold heuristic** (best: {e['baseline']}): "
                     f"return {e['return_learned']:.3f} vs {e['return_baseline']:.3f} (paired diff {_fmt(e['return_diff'])}; "
                     f"met = interval above 0); success {e['success_learned']:.3f} vs {e['success_baseline']:.3f}.")
    if "vs_stop_ablation" in ev:
        e = ev["vs_stop_ablation"]
        lines.append(f"- (informative) **The stop head alone** — against {e['baseline']}, the best fixed budget on the "
                     f"same learned O1–O4 heads: return diff {_fmt(e['return_diff'])}, success diff "
                     f"{_fmt(e['success_diff'])}, {100 * e['token_saving']:.1f} % fewer tokens.")
    lines += ["", "The oracle is clairvoyant (it looks ahead in the simulator with the realised randomness), "
              "so it is an upper reference for stopping; its O1–O4 decisions are the environment's base heuristic, "
              "so a policy with better O1–O4 heads (the learned one: cloned from `adaptive`, then fine-tuned by RL) "
              "can exceed its return.", ""]
    return "\n".join(lines)


def _plot(report: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    # policies that land on the same point (e.g. always-continue = the largest budget) share a label
    points: dict[tuple[float, float], list[str]] = {}
    for n, s in report["policies"].items():
        points.setdefault((round(s["tokens"]["mean"], 1), round(s["success"]["mean"], 4)), []).append(n)
    kinds = {"learned": ("C3", "learned policy"), "oracle": ("C1", "oracle"),
             "ablation": ("C2", "learned heads + fixed stop budget"), "baseline": ("C0", "baselines")}
    shown: set[str] = set()
    for (x, y), names in points.items():
        n = names[0]
        kind = "learned" if n == "learned" else "oracle" if n == "oracle" else (
            "ablation" if n.startswith("learned+") else "baseline")
        colour, label = kinds[kind]
        s = report["policies"][n]
        ax.errorbar([x], [y], xerr=[[x - s["tokens"]["lo"]], [s["tokens"]["hi"] - x]],
                    yerr=[[y - s["success"]["lo"]], [s["success"]["hi"] - y]], fmt="o", color=colour,
                    ms=8 if kind == "learned" else 5, elinewidth=0.8, alpha=0.9, zorder=3,
                    label=None if label in shown else label)
        shown.add(label)
        ax.annotate(" = ".join(names), (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_xlabel("tokens per episode (mean)")
    ax.set_ylabel("success rate (E1)")
    ax.set_title(f"success vs tokens, {report['episodes']} held-out episodes per policy (95% CIs)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def run_demo(out: str | Path = "orchestrace-demo", *, env: str = "default", algo: str = "grpo", steps: int | None = None,
             episodes: int = 500, seed: int = 0, sample_traces: int = 20, progress: bool = True,
             overrides: dict[str, Any] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train, evaluate on held-out seeds and write the results folder; returns the report.

    ``overrides`` changes other :class:`~orchestrace.learn.TrainConfig` fields.
    """
    from . import train
    from .config import TrainConfig
    from .evaluate import evaluate

    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    run_dir = out / "run"
    if (run_dir / "config.json").exists():  # the demo's own previous run: start afresh
        shutil.rmtree(run_dir)
    fields: dict[str, Any] = {"env": env, "algo": algo, "seed": seed, **({"steps": steps} if steps else {}), **(overrides or {})}
    cfg = TrainConfig(**fields)
    log(f"[1/3] training {cfg.algo} on {cfg.env_id} ({cfg.steps} updates × {cfg.episodes_per_step} episodes) → {run_dir}")
    res = train(cfg, run_dir, progress=progress)
    t_train = time.perf_counter() - t0
    log(f"      trained in {t_train:.0f} s; last update: return {res.last_row.get('charts/episodic_return', float('nan')):.3f}, "
        f"success {res.last_row.get('charts/success', float('nan')):.3f}")
    log(f"[2/3] evaluating the learned policy, every baseline, the oracle and the stop ablation on {episodes} held-out seeds")
    t1 = time.perf_counter()
    report = evaluate(run_dir, env=env, episodes=episodes, out=out, sample_traces=sample_traces, progress=progress)
    t_eval = time.perf_counter() - t1
    report.pop("_raw", None)
    info = {"algo": cfg.algo, "steps": cfg.steps, "episodes_per_step": cfg.episodes_per_step, "seconds": t_train}
    report["timing"] = {"train_s": t_train, "eval_s": t_eval, "total_s": time.perf_counter() - t0}
    report["train_config"] = cfg.to_dict()
    (out / "results.json").write_text(json.dumps(report, indent=1, default=float) + "\n", encoding="utf-8")
    (out / "summary.md").write_text(render_summary(report, train_info=info), encoding="utf-8")
    log("[3/3] writing the results folder")
    plotted = _plot(report, out / "pareto.png")
    log(f"      summary   {out / 'summary.md'}")
    log(f"      results   {out / 'results.json'} (+ per-episode arrays in {out / 'episodes.npz'})")
    log(f"      traces    {out / 'traces'}/*.jsonl")
    log(f"      run       {run_dir} (checkpoint.pt, policy.pt, metrics.jsonl/csv)")
    log(f"      picture   {out / 'pareto.png'}" if plotted else
        "      picture   skipped: matplotlib is not installed (pip install 'orchestrace[plot]')")
    ev = report["evidence"]
    for key, label in (("vs_best_fixed_budget", "best fixed budget, ≥25% fewer tokens"), ("vs_oracle", "within 5% of oracle"),
                       ("adapts", "stop adapts easy/hard"), ("vs_threshold", "beats threshold heuristic")):
        if key in ev:
            log(f"      {'PASS' if ev[key]['met'] else 'MISS'}  {label}")
    log(f"done in {report['timing']['total_s']:.0f} s")
    return report
