"""The summary (markdown) and the Pareto picture (accuracy vs LLM calls) of an offline evaluation.

>>> from orchestrace.offline import make_synthetic_logged
>>> from orchestrace.offline._eval import evaluate_traces
>>> text = render(evaluate_traces(make_synthetic_logged(T=200, R=3, W=2, seed=0), []))
>>> text.startswith("# Stop rules on logged runs")
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["render", "write_pareto"]


def _ci(d: dict[str, float], fmt: str = "{:+.4f}") -> str:
    return f"{fmt.format(d['mean'])} [{fmt.format(d['lo'])}, {fmt.format(d['hi'])}]"


def render(res: dict[str, Any]) -> str:
    """Markdown: the corpus, the validation-chosen rule of every family and every gate on the test tasks, the claims."""
    c = res["corpus"]
    p = res["price"]
    lines = [
        "# Stop rules on logged runs (exact offline evaluation)", "",
        f"Corpus: {c['tasks']['train']} train / {c['tasks']['validation']} validation / {c['tasks']['test']} test "
        f"tasks, {c['rounds']} rounds × {c['width']} attempts, suites {', '.join(c['suites'])}.", "",
        f"Return = correct (1 or 0) − price × tokens used / tokens of one full-width round ({p['token_scale']:.0f} "
        f"tokens on the training tasks). Each task draws its price {p['distribution']} on [{p['lo']}, {p['hi']}] "
        f"(seed {p['seed']}): at price 0.1 one more full-width round costs a tenth of a correct answer.", "",
    ]
    lines += [f"- excluded: {n}" for n in res["exclusions"]]
    lines += ["", "| rule (test tasks) | chosen on validation | return [95 % CI] | accuracy | LLM calls |",
              "|---|---|---|---|---|"]
    rows = [(fam, v["name"], v["test"]) for fam, v in res["chosen"].items()]
    rows.append(("always continue", res["always_continue"]["name"], res["always_continue"]["test"]))
    rows += [(f"gate {n}", f"{g['model_class']}/w{g['width']}/{g['aggregation']}", g["summary"])
             for n, g in res["gates"].items()]
    for fam, name, s in rows:
        lines.append(f"| {fam} | {name} | {_ci(s['return'], '{:.4f}')} | {s['accuracy']['mean']:.3f} | "
                     f"{s['calls']['mean']:.2f} |")
    cl = res["clairvoyant"]
    lines += ["", f"Best rule of the whole family (validation): **{res['best_rule']}**; clairvoyant (the best stopping "
              f"time, width and aggregation of each task in hindsight): return {_ci(cl, '{:.4f}')}.", ""]
    for n, g in res["gates"].items():
        lines += [f"## Claims — gate {n} ({g['model_class']}, fit seed {g['fit_seed']})", ""]
        for k, v in g["claims"].items():
            mark = "reference" if v["met"] is None else ("PASS" if v["met"] else "MISS")
            if k == "beats_best_rule":
                num = f"return diff {_ci(v['return_diff'])} vs {v['baseline']}"
            elif k == "fewer_calls_at_equal_accuracy":
                num = (f"call saving {_ci(v['call_saving'], '{:.1%}')}, accuracy diff {_ci(v['accuracy_diff'])} vs "
                       f"{v['baseline']}")
            else:
                num = f"gap {_ci(v['gap'])}"
            lines.append(f"- **{mark}** `{k}`: {num}  \n  rule: {v['rule']}")
        lines.append("")
    if "aggregate" in res:
        a = res["aggregate"]
        lines += [f"## Across {a['runs']} fitting seeds", ""]
        for k, v in a["claims"].items():
            lines.append(f"- `{k}`: {v['number']} {_ci(v['across_runs'])} (t-interval across runs); met "
                         f"{v['met'] if v['met'] is not None else 'reference'}")
        lines.append("")
    return "\n".join(lines)


def write_pareto(res: dict[str, Any], path: Path) -> Path | None:
    """Accuracy vs mean LLM calls of every rule setting (test tasks), the gates on top; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 5))
    fams = sorted({v["family"] for v in res["points"].values()})
    for fam in fams:
        pts = [v for v in res["points"].values() if v["family"] == fam]
        ax.scatter([v["calls"] for v in pts], [v["accuracy"] for v in pts], s=10, alpha=0.5, label=fam)
    for n, g in res["gates"].items():
        s = g["summary"]
        ax.scatter([s["calls"]["mean"]], [s["accuracy"]["mean"]], marker="*", s=160, edgecolor="k", label=f"gate {n}")
    ax.set_xlabel("LLM calls per task (mean, test)")
    ax.set_ylabel("accuracy (test)")
    ax.set_title("Stop rules on logged runs: accuracy vs LLM calls")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
