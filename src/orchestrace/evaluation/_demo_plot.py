"""The simulator demo's picture: return vs tokens of every stop rule, the learned stop and its neighbours.

Labels are placed greedily so none overlaps (:func:`_place_labels`); matplotlib is optional (no picture
without it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Label positions tried around a point, in offset points (right, left, above, below, farther out).
_LABEL_OFFSETS = ((5, 4), (5, -11), (-5, 4), (-5, -11), (0, 9), (0, -16), (5, 15), (5, -22), (-5, 15), (-5, -22),
                  (0, 24), (0, -30))


def _place_labels(fig: Any, ax: Any, labels: list[tuple[str, float, float]]) -> None:
    """Annotate each point with the first candidate offset whose text box overlaps no label placed
    before it, no other point and stays inside the axes (greedy; the first offset when none fits)."""
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    points = [ax.transData.transform((x, y)) for _, x, y in labels]
    taken: list[Any] = []
    for text, x, y in sorted(labels, key=lambda t: -t[2]):
        best = None
        for dx, dy in _LABEL_OFFSETS:
            ann = ax.annotate(text, (x, y), fontsize=7, xytext=(dx, dy), textcoords="offset points",
                              ha="left" if dx >= 0 else "right")
            box = ann.get_window_extent(renderer)
            mine = ax.transData.transform((x, y))
            clear = (frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)
                     and not any(box.overlaps(t) for t in taken)
                     and not any(box.contains(px, py) for px, py in points if (px, py) != tuple(mine)))
            if clear or best is None:
                if best is not None:
                    best[0].remove()
                best = (ann, box)
            else:
                ann.remove()
            if clear:
                break
        assert best is not None
        taken.append(best[1])


def _plot(report: dict[str, Any], path: Path) -> bool:
    """Return vs tokens on the test seeds: every stop rule on the learned policy's heads (grey) and
    their frontier, the validation-chosen rules, the learned stop, always-continue and the clairvoyant
    stop on the same heads; labels in a legend beside the axes (none overlaps) and a zoom on the
    learned stop's neighbourhood, where the rules it ties sit on top of each other."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    from .summary import frontier

    pol = report["policies"]
    sh = report["same_heads"]["learned"]
    pts = [(v["tokens"]["mean"], v["return"]["mean"]) for v in sh["rules"].values()]
    fr = frontier(pts)  # the frontier: best return at ≤ tokens
    roles: dict[str, list[str]] = {}
    for role, rule in sh["chosen"].items():
        roles.setdefault(rule, []).append(role.replace("_", " "))
    markers, colors = ["o", "s", "D", "^", "v", "P", "X"], ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                                            "#e377c2", "#17becf"]
    me = pol["learned"]
    mx, my = me["tokens"]["mean"], me["return"]["mean"]

    def draw(ax: Any, big: float) -> None:
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10 * big, color="0.75", zorder=1,
                   label=f"every stop rule on the learned policy's heads ({len(pts)})")
        ax.step([p[0] for p in fr], [p[1] for p in fr], where="post", color="0.45", lw=1, zorder=2,
                label="frontier of those rules (best return at ≤ tokens)")
        ax.errorbar([mx], [my], yerr=[[my - me["return"]["lo"]], [me["return"]["hi"] - my]], fmt="*", ms=16 * big ** 0.5,
                    color="#d62728", mec="k", zorder=3, label=f"learned stop (return {my:.3f}, 95 % CI)")
        for k, (rule, why) in enumerate(roles.items()):
            v = sh["rules"].get(rule) or pol.get(f"learned+{rule}")
            if v is not None:
                ax.scatter([v["tokens"]["mean"]], [v["return"]["mean"]], marker=markers[k % 7], s=45 * big,
                           color=colors[k % 7], edgecolor="k", lw=0.6, zorder=6,
                           label=f"{rule} (chosen on validation as {', '.join(why)})")
        for name, style, text in (("always-continue", {"marker": "s", "facecolor": "white", "edgecolor": "k",
                                                       "lw": 1.4}, "always continue"),
                                  ("learned+clairvoyant", {"marker": "X", "color": "k"},
                                   "clairvoyant stop on the same heads (hindsight)")):
            if name in pol:
                v = pol[name]
                ax.scatter([v["tokens"]["mean"]], [v["return"]["mean"]], s=70 * big, zorder=4, label=text, **style)

    fig, ax = plt.subplots(figsize=(10, 5.4))
    draw(ax, 1.0)
    ax.set_xlabel("tokens per episode (mean over the test seeds)")
    ax.set_ylabel("return per episode (success − token cost)")
    ax.set_title(f"Simulator {report['env']}: return vs tokens, {report['episodes']:,} test seeds", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    ins = ax.inset_axes((0.08, 0.06, 0.38, 0.42))
    draw(ins, 1.6)
    ins.set_xlim(mx - 0.06 * (x1 - x0), mx + 0.06 * (x1 - x0))
    ins.set_ylim(my - 0.06 * (y1 - y0), my + 0.06 * (y1 - y0))
    ins.tick_params(labelsize=6)
    ins.set_title("zoom: around the learned stop", fontsize=7)
    ins.grid(alpha=0.3)
    ax.indicate_inset_zoom(ins, edgecolor="0.4")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
