"""The pre-registered pilot questions (docs/team2-preregistration.md) on a two-family team corpus.

    python benchmarks/team2_pilot_analysis.py bench-data/team2-pilot [--json out.json] [--png matrix.png]

Reads the corpus with the library's reader (prices charged: billed tokens), then, per task family:

1. each member's accuracy (round 0) and the error overlaps P(B right | A wrong) (round 0);
2. the exact return of every path over the joint action space (round-0 member subset, stop or a
   round-1 subset, every aggregation), valued with ``TeamArrays`` at the per-task price
   (``task_prices``, seed 0) and ``token_scale`` = the mean billed cost of one full round: the best
   *fixed* path per family (in sample), the per-task oracle, and the gap between them;
3. whether a round-1 observable predicts which member is right: the AUC of ``s-cold``'s mean token
   log-prob for "``s-cold`` is right", and ``g-cold``'s accuracy on the tasks where ``s-cold`` is wrong;
   and an in-sample two-step cascade (``s-cold``; below a log-prob threshold call one more subset).

``--png`` draws step 1 as a picture: the member × family accuracy matrix and, per family and pooled over
families, the matrix of error overlaps P(B right | A wrong) (matplotlib, the ``plot`` extra).

In-sample on a small pilot: a check of the design, not a result to quote.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def auc(score: np.ndarray, label: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties half (NaN scores dropped); NaN if one class is empty."""
    ok = np.isfinite(score)
    s, y = score[ok], label[ok].astype(bool)
    if y.all() or not y.any():
        return float("nan")
    pos, neg = s[y][:, None], s[~y][None, :]
    return float(((pos > neg) + 0.5 * (pos == neg)).mean())


def auc_ci(score: np.ndarray, label: np.ndarray, n: int = 2000, seed: int = 0) -> list[float]:
    """A task-bootstrap 95 % interval of :func:`auc` (resamples with one class empty skipped)."""
    rng = np.random.default_rng(seed)
    vals = [auc(score[i], label[i]) for i in (rng.integers(0, len(score), len(score)) for _ in range(n))]
    vals = [v for v in vals if np.isfinite(v)]
    return [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))] if vals else [float("nan")] * 2


def calc_stats(folder: str) -> dict:
    """The calculator member's logged tool faults: share faulty, accuracy with and without a fault."""
    import gzip
    from pathlib import Path

    rows = []
    text = "".join(gzip.decompress(f.read_bytes()).decode() if f.suffix == ".gz" else f.read_text()
                   for f in sorted(Path(folder).glob("traces*.jsonl*")))
    for line in text.splitlines():
        ev = json.loads(line).get("event") if line.startswith('{"event"') else None
        if ev and ev.get("type") == "return" and "tool_faulty" in (ev.get("attrs") or {}):
            rows.append((bool(ev["attrs"]["tool_faulty"]), bool(ev["attrs"]["correct"])))
    parsed = np.array(rows, bool).reshape(-1, 2)
    f, ok = parsed[:, 0], parsed[:, 1]
    return {"tool_calls_with_a_parsed_expression": len(rows), "share_faulty": float(f.mean()) if len(f) else None,
            "accuracy_when_faulty": float(ok[f].mean()) if f.any() else None,
            "accuracy_when_not_faulty": float(ok[~f].mean()) if (~f).any() else None}


def overlaps(c0: np.ndarray, m: np.ndarray, mem: list[str]) -> tuple[dict, dict]:
    """Round-0 accuracy per member and P(B right | A wrong) for every ordered member pair, on the tasks ``m``."""
    W = len(mem)
    acc = {mem[w]: float(c0[m, w].mean()) for w in range(W)}
    ov = {f"P({mem[b]} right | {mem[a_]} wrong)": (float(c0[m & ~c0[:, a_], b].mean()) if (m & ~c0[:, a_]).any()
                                                  else None)
          for a_ in range(W) for b in range(W) if a_ != b}
    return acc, ov


def draw(out: dict, path: str, name: str, note: str = "in sample, round 0") -> None:
    """The accuracy matrix and the error-overlap matrices (per family and pooled) as one PNG at ``path``."""
    from orchestrace.errors import require

    plt = require("matplotlib.pyplot", extra="plot")
    mem, cells = out["members"], list(out["cells"])
    W = len(mem)
    panels = [(c, out["cells"][c]) for c in cells] + [("all families", out["all_families"])]
    ncol = 3
    nrow = 1 + (len(panels) + ncol - 1) // ncol
    fig = plt.figure(figsize=(4.2 * ncol, 3.7 * nrow), dpi=110)
    gs = fig.add_gridspec(nrow, ncol)
    ax = fig.add_subplot(gs[0, :2])
    acc = np.array([[out["cells"][c]["accuracy_round0"][m] for m in mem] for c in cells])
    im = _heat(ax, acc, [f"{c} (n={out['cells'][c]['n']})" for c in cells], mem, "member (round 0)", "task family")
    ax.set_title("accuracy of each member's round-0 answer")
    fig.colorbar(im, ax=fig.add_subplot(gs[0, 2]), fraction=0.5, label="share (every panel)").ax.tick_params(labelsize=7)
    fig.axes[-2].axis("off")
    for k, (c, e) in enumerate(panels):
        ax = fig.add_subplot(gs[1 + k // ncol, k % ncol])
        mat = np.full((W, W), np.nan)
        for a_ in range(W):
            for b in range(W):
                v = e["overlap"].get(f"P({mem[b]} right | {mem[a_]} wrong)") if a_ != b else None
                mat[a_, b] = np.nan if v is None else v
        _heat(ax, mat, [f"{x} wrong" for x in mem], [f"{x} right" for x in mem], "B", "A")
        ax.set_title(f"P(B right | A wrong): {c} (n={e['n']})", fontsize=9)
    fig.suptitle(f"{name}: {out['tasks']} tasks, members {', '.join(mem)} "
                 f"({note})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _heat(ax, mat: np.ndarray, rows: list[str], cols: list[str], xlabel: str, ylabel: str):  # noqa: ANN001, ANN202
    ax.set_facecolor("#d9d9d9")  # undefined cells (the diagonal; no wrong answers of A): grey, "—"
    im = ax.imshow(np.ma.masked_invalid(mat), vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            v = mat[i, j]
            ax.text(j, i, "—" if not np.isfinite(v) else f"{v:.2f}", ha="center", va="center", fontsize=8,
                    color="black" if not np.isfinite(v) or v >= 0.6 else "white")
    ax.set_xticks(range(len(cols)), cols, fontsize=7, rotation=20)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    return im


def paths(arr, subs, aggs, T):  # noqa: ANN001, ANN201
    """(T, P) exact return and (P,) descriptions of every path: S0 then stop(agg), or S0, S1 then stop(agg)."""
    W = arr.shape[2]
    masks = [np.isin(np.arange(W), s) for s in subs]
    idx = np.arange(T)
    cols, names = [], []
    st_empty = arr.start(idx)
    for i, s0 in enumerate(subs):
        st0 = arr.step(st_empty, np.broadcast_to(masks[i], (T, W)))
        for g in aggs:
            cols.append(arr.correct(st0, g) - arr.cost(st0))
            names.append((s0, None, g))
        for j, s1 in enumerate(subs):
            st1 = arr.step(st0, np.broadcast_to(masks[j], (T, W)))
            for g in aggs:
                cols.append(arr.correct(st1, g) - arr.cost(st1))
                names.append((s0, s1, g))
    return np.stack(cols, 1), names


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--json", default="")
    ap.add_argument("--png", default="", help="draw the accuracy and error-overlap matrices here")
    a = ap.parse_args()

    from orchestrace.logged.runs import load_logged_runs
    from orchestrace.logged.value import task_prices
    from orchestrace.policies.team import TeamArrays, aggregations, subsets

    runs = load_logged_runs(a.corpus, exclude=True)
    T, R, W = runs.answers.shape
    mem = list(runs.members)
    cell = np.array([f"{s}:{d}" for s, d in zip(runs.suite.tolist(), runs.difficulty.tolist(), strict=True)])
    price = task_prices(runs.task_ids, 0)
    tok = runs.prompt_tokens.astype(float) + runs.completion_tokens
    scale = float(tok.sum(2).mean())
    arr = TeamArrays.build(runs, price, scale)
    subs, aggs = subsets(runs), list(aggregations(runs))
    ret, names = paths(arr, subs, aggs, T)
    c0 = runs.correct[:, 0, :]  # (T, W) round-0 correctness
    out: dict = {"tasks": T, "members": mem, "billing": runs.meta.get("billing"), "token_scale": scale,
                 "excluded": runs.meta.get("excluded"), "cells": {}}
    fam_best = np.zeros(T)
    for c in sorted(set(cell.tolist())):
        m = cell == c
        acc, overlap = overlaps(c0, m, mem)
        mean = ret[m].mean(0)
        best = int(mean.argmax())
        fam_best[m] = ret[m, best]
        oracle = ret[m].max(1).mean()
        lp = runs.logprob_mean[m, 0, mem.index("s-cold")].astype(float)
        s_ok = c0[m, mem.index("s-cold")]
        g_ok = c0[m, mem.index("g-cold")]
        # an in-sample cascade: s-cold alone; when its log-prob < tau, call one more round-1 subset, answer by agg
        only = [k for k, (s0, s1, g) in enumerate(names) if s0 == (mem.index("s-cold"),) and s1 is None and
                g == "latest:s-cold"][0]
        casc_best, casc_desc = float(mean[only]), "s-cold alone"
        for tau in np.unique(np.nan_to_num(lp, nan=-99.0)):
            low = np.nan_to_num(lp, nan=-99.0) <= tau
            for k, (s0, s1, _g) in enumerate(names):
                if s0 == (mem.index("s-cold"),) and s1 is not None:
                    v = float(np.where(low, ret[m, k], ret[m, only]).mean())
                    if v > casc_best:
                        casc_best, casc_desc = v, f"s-cold; if lp <= {tau:.3f}: call {[mem[i] for i in s1]}, {_g}"
        s0, s1, g = names[best]
        out["cells"][c] = {
            "n": int(m.sum()), "accuracy_round0": acc, "overlap": overlap,
            "best_fixed": {"path": f"{[mem[i] for i in s0]} then {[mem[i] for i in s1] if s1 else 'stop'}, {g}",
                           "return": float(mean[best])},
            "oracle_return": float(oracle), "gap_fixed_to_oracle": float(oracle - mean[best]),
            "cascade_in_sample": {"return": casc_best, "policy": casc_desc,
                                  "share_of_gap": (casc_best - float(mean[best])) / max(oracle - mean[best], 1e-12)},
            "auc_scold_logprob_for_scold_right": auc(lp, s_ok), "auc_95ci": auc_ci(lp, s_ok),
            "gcold_acc_when_scold_wrong": float(g_ok[~s_ok].mean()) if (~s_ok).any() else None,
            "tasks_where_best_fixed_is_not_optimal": float((ret[m, best] < ret[m].max(1) - 1e-12).mean()),
        }
    glob = int(ret.mean(0).argmax())
    out["overall"] = {"best_fixed_one_for_all": float(ret[:, glob].mean()), "per_family_best_fixed": float(fam_best.mean()),
                      "oracle": float(ret.max(1).mean())}
    acc_all, ov_all = overlaps(c0, np.ones(T, bool), mem)
    out["all_families"] = {"n": T, "accuracy_round0": acc_all, "overlap": ov_all}
    out["calculator"] = calc_stats(a.corpus)
    if a.png:
        draw(out, a.png, a.corpus.rstrip("/").rsplit("/", 1)[-1])
    text = json.dumps(out, indent=1, default=str)
    if a.json:
        from orchestrace.core.io import atomic_write

        atomic_write(a.json, (text + "\n").encode())  # a reader never sees half a file
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
