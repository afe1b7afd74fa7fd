"""Static timeline PNG for papers and slides (matplotlib, the ``plot`` extra).

Same encoding as the HTML timeline: one lane per agent in spawn-tree order, bars for
timed events and markers for instantaneous ones (colour per event type), the critical
path outlined and joined in red, wasted work hatched, the stop decision as a dashed
rule, and a concurrency strip above. Rectangles go into one ``PolyCollection`` per event
type, so 20,000 events draw in about a second.

>>> import tempfile, os
>>> from orchestrace import synth
>>> p = save_png(synth(events=120, agents=4, seed=0), os.path.join(tempfile.mkdtemp(), "t.png"), dpi=60)
>>> p.read_bytes()[:4] == b"\\x89PNG"
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..core.trace import Trace
from ..errors import require
from ._analysis import Analysis, analyse
from ._payload import FLAGS, TYPES, trace_payload

__all__ = ["COLORS", "save_png"]

#: Colour per event type (same as the HTML report; colour-blind-safe Tableau-10 family).
COLORS: dict[str, str] = {
    "orchestrator_decision": "#4e79a7", "spawn": "#59a14f", "despawn": "#a39d98",
    "message": "#f28e2b", "tool_call": "#76b7b2", "tool_result": "#3f8f8a",
    "return": "#b07aa1", "aggregate": "#9c755f", "human_intervention": "#ff9da7",
    "safety_event": "#e8c22f",
}
_MARKERS = {"orchestrator_decision": "D", "spawn": ">", "message": "v", "return": "<", "tool_call": "s",
            "tool_result": "o", "aggregate": "h"}
_POINTLIKE = {"orchestrator_decision", "spawn", "despawn", "return", "aggregate", "human_intervention", "safety_event"}
_CRIT = "#d1343f"


def save_png(
    trace: Trace,
    out: str | os.PathLike[str],
    *,
    width: float = 11.0,
    dpi: int = 200,
    analysis: Analysis | None = None,
    title: str | None = None,
) -> Path:
    """Draw the timeline of ``trace`` to a PNG at ``out`` (``width`` inches, ``dpi``).

    Raises :class:`~orchestrace.errors.MissingExtraError` (with the ``pip install``
    command) when matplotlib is not installed.
    """
    require("matplotlib", extra="plot")
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    an = analysis if analysis is not None else analyse(trace)
    P = trace_payload(trace, analysis=an, max_graph_events=0)
    ev = P["ev"]
    t = np.asarray(ev["t"], dtype=float)
    te = np.asarray(ev["te"], dtype=float)
    typ = np.asarray(ev["type"], dtype=int)
    lane = np.asarray(ev["lane"], dtype=int)
    flags = np.asarray(ev["flags"], dtype=int)
    lanes = P["lanes"]
    L = len(lanes)
    span = float(max(te.max(), t.max()) - t.min()) if t.size else 1.0
    span = span or 1.0
    lane_h = 0.62
    height = min(14.0, 1.6 + 0.22 * L + 0.9)
    fig = plt.figure(figsize=(width, height), dpi=dpi)
    gs = fig.add_gridspec(2, 1, height_ratios=[0.9 if L >= 8 else 0.5, max(1.0, 0.22 * L)], hspace=0.06)
    ax_c = fig.add_subplot(gs[0])
    ax = fig.add_subplot(gs[1], sharex=ax_c)
    plt.rcParams.update({"font.size": 8})

    timed, present = _draw_events(ax, PolyCollection, t, te, typ, lane, flags, np.asarray(P["crit"], dtype=int),
                                  L, span, lane_h)
    stop = np.flatnonzero(flags & FLAGS["stop"])
    for a in (ax, ax_c):
        for s in stop:
            a.axvline(t[s], color="#1d2330", lw=0.9, ls=(0, (4, 3)), zorder=7)
    _draw_concurrency(ax_c, t, te, lane, timed, stop, L)
    _draw_lanes(ax, ax_c, lanes, t, te, span, height)
    _legend_and_title(ax_c, P, present, stop, title, Patch, Line2D)
    path = Path(out)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return path


def _draw_events(ax: Any, PolyCollection: Any, t: np.ndarray, te: np.ndarray, typ: np.ndarray,  # noqa: N803
                 lane: np.ndarray, flags: np.ndarray, crit: np.ndarray, L: int, span: float,
                 lane_h: float) -> tuple[np.ndarray, list[str]]:
    """Bars for timed events and markers for instantaneous ones (one ``PolyCollection`` per type), wasted
    work hatched, the critical path joined in red (``crit``, in path order); returns the timed mask and the types drawn."""
    timed = ((flags & FLAGS["timed"]) != 0) & (te > t)
    min_w = span / 1500.0
    narrow = (te - t) < span / 400.0
    point_types = np.array([TYPES[k] in _POINTLIKE for k in range(len(TYPES))])
    as_bar = timed & ~(point_types[typ] & narrow)
    y = L - 1 - lane  # first lane at the top
    present = []
    for k, name in enumerate(TYPES):
        sel = np.flatnonzero(as_bar & (typ == k))
        marks = np.flatnonzero(~as_bar & (typ == k))
        if sel.size == 0 and marks.size == 0:
            continue
        present.append(name)
        if sel.size:
            x0, x1 = t[sel], np.maximum(te[sel], t[sel] + min_w)
            yy = y[sel] - lane_h / 2
            verts = np.stack([np.stack([x0, yy], 1), np.stack([x1, yy], 1),
                              np.stack([x1, yy + lane_h], 1), np.stack([x0, yy + lane_h], 1)], 1)
            ax.add_collection(PolyCollection(list(verts), facecolors=COLORS[name], edgecolors="none", zorder=2))
        if marks.size:
            ax.scatter(t[marks], y[marks], s=22, marker=_MARKERS.get(name, "o"), c=COLORS[name],
                       edgecolors="white", linewidths=0.5, zorder=4)
    wasted = np.flatnonzero(as_bar & ((flags & FLAGS["wasted"]) != 0))
    if wasted.size:
        x0, x1 = t[wasted], np.maximum(te[wasted], t[wasted] + min_w)
        yy = y[wasted] - lane_h / 2
        verts = np.stack([np.stack([x0, yy], 1), np.stack([x1, yy], 1),
                          np.stack([x1, yy + lane_h], 1), np.stack([x0, yy + lane_h], 1)], 1)
        ax.add_collection(PolyCollection(list(verts), facecolors="none", edgecolors="#5a606c", hatch="//////",
                                         linewidths=0, zorder=3))
    if crit.size:
        cx = np.ravel(np.column_stack([t[crit], np.where(timed[crit], te[crit], t[crit])]))
        cy = np.repeat(y[crit], 2)
        ax.plot(cx, cy, color=_CRIT, lw=1.3, zorder=5, solid_capstyle="round")
        ax.scatter(t[crit], y[crit], s=10, color=_CRIT, zorder=6, linewidths=0)
    return timed, present


def _draw_concurrency(ax_c: Any, t: np.ndarray, te: np.ndarray, lane: np.ndarray, timed: np.ndarray,
                      stop: np.ndarray, L: int) -> None:  # noqa: N803
    """The strip above the lanes: busy events over time (agents alive when no event is timed)."""
    s_, e_ = np.sort(t[timed]), np.sort(te[timed])
    label = "busy events"
    if s_.size == 0:
        label = "agents alive"
        lo = np.array([t[lane == i].min() for i in range(L) if (lane == i).any()])
        hi = np.array([te[lane == i].max() for i in range(L) if (lane == i).any()])
        s_, e_ = np.sort(lo), np.sort(hi)
    grid = np.linspace(float(t.min()) if t.size else 0.0, float(max(te.max(), t.max())) if t.size else 1.0, 800)
    conc = np.searchsorted(s_, grid, side="right") - np.searchsorted(e_, grid, side="right")
    ax_c.fill_between(grid, conc, step="post", color="#4e79a7", alpha=0.25, lw=0)
    ax_c.step(grid, conc, where="post", color="#4e79a7", lw=0.8)
    ax_c.set_ylabel(label, fontsize=7, rotation=0, ha="right", va="center")
    ax_c.set_ylim(0, max(1, conc.max()) * 1.15)
    ax_c.tick_params(labelbottom=False, labelsize=6)
    if stop.size:
        ax_c.text(t[stop[-1]], ax_c.get_ylim()[1], " stop (O5)", fontsize=7, va="top", ha="left", weight="bold")


def _draw_lanes(ax: Any, ax_c: Any, lanes: list[dict[str, Any]], t: np.ndarray, te: np.ndarray, span: float,
                height: float) -> None:
    """One labelled lane per agent (indented by spawn depth, striped), the time axis and the grid."""
    L = len(lanes)  # noqa: N806
    ax.set_yticks(np.arange(L))
    ax.set_yticklabels(["  " * ln["depth"] + ln["name"] for ln in reversed(lanes)],
                       fontsize=max(3.5, min(8.0, (height - 2.5) / max(L, 1) * 72 * 0.6)))
    for i in range(L):
        if i % 2:
            ax.axhspan(i - 0.5, i + 0.5, color="#f3f4f6", zorder=0, lw=0)
    ax.set_ylim(-0.6, L - 0.4)
    pad = span * 0.015
    ax.set_xlim(float(t.min()) - pad if t.size else 0, float(max(te.max(), t.max())) + pad if t.size else 1)
    ax.set_xlabel("time since start (s)")
    for a in (ax, ax_c):
        for side in ("top", "right"):
            a.spines[side].set_visible(False)
        a.grid(axis="x", color="#e6e8ec", lw=0.6, zorder=0)
        a.set_axisbelow(True)


def _legend_and_title(ax_c: Any, P: dict[str, Any], present: list[str], stop: np.ndarray, title: str | None,  # noqa: N803
                      Patch: Any, Line2D: Any) -> None:  # noqa: N803
    """The legend (types drawn, critical path, wasted work, the stop) and the title above the strip."""
    handles: list[Any] = [Patch(color=COLORS[n], label=n.replace("orchestrator_", "").replace("_", " ")) for n in present]
    handles += [Line2D([], [], color=_CRIT, lw=1.5, label="critical path"),
                Patch(facecolor="white", edgecolor="#5a606c", hatch="//////", label="wasted work")]
    if stop.size:
        handles.append(Line2D([], [], color="#1d2330", lw=0.9, ls=(0, (4, 3)), label="stop (O5)"))
    ncol = min(len(handles), 7)
    ax_c.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False, fontsize=7,
                bbox_to_anchor=(0.5, 1.02), borderaxespad=0.0)
    m = P["meta"]
    rows = -(-len(handles) // ncol)
    ax_c.set_title(title or f"{m['trace_id']} · {m['n_events']:,} events · {m['n_agents']} agents · "
                   f"critical path {len(P['crit'])} events", pad=10 + 13 * rows, fontsize=10, weight="bold")
