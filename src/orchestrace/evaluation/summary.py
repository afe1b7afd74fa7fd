"""The summary (markdown) and the Pareto picture (accuracy vs LLM calls) of an offline evaluation.

>>> from orchestrace.offline import make_synthetic_logged
>>> from orchestrace.evaluation.logged import evaluate_traces
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


def _rule_table(part: dict[str, Any], tasks: str) -> list[str]:
    """The table of each family's chosen rule, always continue and the gates, on the ``tasks`` of ``part``
    (the corpus's test split, or a fresh collection)."""
    lines = [f"| rule ({tasks} tasks) | chosen on validation | return [95 % CI] | accuracy | LLM calls |",
             "|---|---|---|---|---|"]
    rows = [(fam, v["name"], v["test"]) for fam, v in part["chosen"].items()]
    rows.append(("always continue", part["always_continue"]["name"], part["always_continue"]["test"]))
    rows += [(f"gate {n}", f"{g['model_class']}/w{g['width']}/{g['aggregation']}", g["summary"])
             for n, g in part["gates"].items()]
    for fam, name, s in rows:
        lines.append(f"| {fam} | {name} | {_ci(s['return'], '{:.4f}')} | {s['accuracy']['mean']:.3f} | "
                     f"{s['calls']['mean']:.2f} |")
    return lines


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
    lines += ["", *_rule_table(res, "test")]
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
    if res["gates"]:
        lines += ["## Gate − each family's chosen rule (committed test split; paired 95 % CI, per gate run)", ""]
        lines += vs_table(res["gates"], {f: v["name"] for f, v in res["chosen"].items()})
    for name, f in res.get("fresh", {}).items():
        lines += [f"## Fresh collection {name} ({f['tasks']} tasks; fitted and tuned on the corpus only)", ""]
        lines += [f"- excluded: {n}" for n in f["exclusions"]]
        lines += _rule_table(f, "fresh")
        lines.append("")
        if f["gates"]:
            lines += vs_table(f["gates"], {fam: v["name"] for fam, v in f["chosen"].items()})
            for n, g in f["gates"].items():
                fc = g["claims"]["fewer_calls_at_equal_accuracy"]
                lines.append(f"- gate {n}: call saving {_ci(fc['call_saving'], '{:.1%}')}, accuracy diff "
                             f"{_ci(fc['accuracy_diff'])} vs {fc['baseline']} → {'PASS' if fc['met'] else 'MISS'}")
            lines.append("")
    return "\n".join(lines)


def verdict(d: dict[str, float]) -> str:
    """``gate better`` / ``rule better`` when the paired CI excludes 0, else ``tie``.

    >>> verdict({"mean": 0.01, "lo": -0.01, "hi": 0.03})
    'tie'
    """
    return "gate better" if d["lo"] > 0 else "rule better" if d["hi"] < 0 else "tie"


def vs_table(gates: dict[str, Any], chosen: dict[str, str]) -> list[str]:
    """Rows: each family's chosen rule; columns: each gate run's paired return difference gate − rule."""
    names = list(gates)
    out = ["| family: chosen rule | " + " | ".join(f"gate {n} − rule" for n in names) + " |",
           "|---|" + "---|" * len(names)]
    for fam, nm in chosen.items():
        cells = [gates[n]["vs_family_best"][fam] for n in names]
        out.append(f"| {fam}: `{nm}` | " + " | ".join(f"{_ci(c)} {verdict(c)}" for c in cells) + " |")
    return [*out, ""]
def frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The return–cost frontier: the points no other point beats with fewer or equal calls, by calls.

    >>> frontier([(1, 0.1), (2, 0.3), (3, 0.2), (4, 0.5)])
    [(1, 0.1), (2, 0.3), (4, 0.5)]
    """
    out: list[tuple[float, float]] = []
    for c, r in sorted(points, key=lambda p: (p[0], -p[1])):
        if not out or r > out[-1][1]:
            out.append((c, r))
    return out


def write_pareto(res: dict[str, Any], path: Path) -> Path | None:
    """Return vs LLM calls on the test tasks: every rule setting (grey) and their frontier, the
    validation-chosen setting of each family, the learned gate(s), always-continue and the
    clairvoyant reference; the model and corpus in the title. None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    meta = res["corpus"].get("meta") or {}
    model = meta.get("model") or "logged model"
    corpus = meta.get("name") or Path(str(meta.get("path") or "corpus")).name
    n_test = res["corpus"]["tasks"]["test"]
    fig, ax = plt.subplots(figsize=(9.5, 5.2))
    pts = [(v["calls"], v["return"]) for v in res["points"].values()]
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=9, color="0.75", zorder=1,
               label=f"every rule setting ({len(pts)})")
    fr = frontier(pts)
    ax.step([p[0] for p in fr], [p[1] for p in fr], where="post", color="0.45", lw=1, zorder=2,
            label="frontier of the settings (best return at ≤ calls)")
    markers = ["o", "s", "D", "^", "v", "P", "X"]
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    for k, (fam, v) in enumerate(res["chosen"].items()):
        t = v["test"]
        ax.scatter([t["calls"]["mean"]], [t["return"]["mean"]], marker=markers[k % 7], s=60, color=colors[k % 7],
                   edgecolor="k", lw=0.6, zorder=4, label=f"{fam}, chosen on validation: {v['name']}")
    a = res["always_continue"]["test"]
    ax.scatter([a["calls"]["mean"]], [a["return"]["mean"]], marker="s", s=70, facecolor="white", edgecolor="k",
               lw=1.4, zorder=4, label=f"always continue ({res['always_continue']['name']})")
    cl = res["clairvoyant"]["mean"]
    ax.axhline(cl, color="k", ls="--", lw=1, zorder=1, label=f"clairvoyant: best stop of each task in hindsight ({cl:.3f})")
    for n, g in res["gates"].items():
        sm = g["summary"]
        ax.scatter([sm["calls"]["mean"]], [sm["return"]["mean"]], marker="*", s=260, color="#d62728", edgecolor="k",
                   zorder=5, label=f"learned stop ({n}: {g['model_class']}, width {g['width']}, {g['aggregation']} vote)")
    ax.set_xlabel("LLM calls per task (mean over the test tasks)")
    ax.set_ylabel("return per task (correct − price × tokens)")
    ax.set_title(f"{model} on {corpus}: return vs LLM calls, {n_test} held-out test tasks", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
