"""The member kind × task family matrix of a team corpus: is the team heterogeneous?

For each member kind and task cell: the accuracy of one call (round 0), of that member's
majority over all rounds, its mean tokens per call, and how well its confidence separates right
from wrong answers (AUC of the DeepConf confidence, of the mean token log-prob). Wilson 95 %
intervals; the best member per cell is starred. ::

    python benchmarks/team_corpus_stats.py src/orchestrace/data/corpora/smollm2-team-v1 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def auc(score: np.ndarray, label: np.ndarray) -> float:
    """Probability that a right answer scores above a wrong one (ties count half); NaN scores dropped."""
    ok = np.isfinite(score)
    s, y = score[ok], label[ok].astype(bool)
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    allv = np.concatenate([pos, neg])[order]
    i = 0
    while i < len(allv):  # average ranks over ties
        j = i
        while j + 1 < len(allv) and allv[j + 1] == allv[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def member_majority(answers: np.ndarray, correct_code: np.ndarray) -> np.ndarray:
    """Per task: is the majority (ties: first seen) of this member's answers over all rounds right?"""
    out = np.zeros(answers.shape[0], dtype=bool)
    for i, row in enumerate(answers):
        vals = [int(a) for a in row if a >= 0]
        if vals:
            counts = {v: vals.count(v) for v in dict.fromkeys(vals)}
            top = max(counts.values())
            out[i] = next(v for v in counts if counts[v] == top) == correct_code[i]
    return out


def stats(path: str) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from orchestrace.logged.runs import load_logged_runs

    runs = load_logged_runs(path)
    members = runs.members or tuple(f"col{w}" for w in range(runs.shape[2]))
    cells = sorted({f"{s}:{d}" for s, d in zip(runs.suite, runs.difficulty, strict=True)})
    table: dict = {"path": path, "tasks": runs.shape[0], "rounds": runs.shape[1], "members": list(members),
                   "cells": cells, "rows": []}
    for w, m in enumerate(members):
        for cell in [*cells, "all"]:
            sel = np.ones(runs.shape[0], bool) if cell == "all" else np.array(
                [f"{s}:{d}" == cell for s, d in zip(runs.suite, runs.difficulty, strict=True)])
            c1 = runs.correct[sel, 0, w]
            maj = member_majority(runs.answers[sel, :, w], runs.correct_code[sel])
            conf = runs.confidence[sel, :, w].ravel() if runs.confidence is not None else np.array([])
            lab = runs.correct[sel, :, w].ravel()
            table["rows"].append({
                "member": m, "cell": cell, "n": int(sel.sum()),
                "one_call": float(c1.mean()), "one_call_ci": wilson(int(c1.sum()), int(sel.sum())),
                "majority_all_rounds": float(maj.mean()),
                "tokens_per_call": float((runs.prompt_tokens[sel, :, w] + runs.completion_tokens[sel, :, w]).mean()),
                "auc_confidence": auc(conf, lab) if conf.size else float("nan"),
                "auc_logprob": auc(runs.logprob_mean[sel, :, w].ravel().astype(float), lab),
            })
    return table


def render(t: dict) -> str:
    cells = [*t["cells"], "all"]
    lines = [f"{t['path']}: {t['tasks']} tasks × {t['rounds']} rounds × members {', '.join(t['members'])}", "",
             "one call (round 0), accuracy [95 % Wilson]; ★ = best member of the cell", "",
             "| member | " + " | ".join(cells) + " |", "|---" * (len(cells) + 1) + "|"]
    best = {c: max((r["one_call"] for r in t["rows"] if r["cell"] == c), default=0) for c in cells}
    for m in t["members"]:
        row = [r for r in t["rows"] if r["member"] == m]
        lines.append(f"| {m} | " + " | ".join(
            f"{'★ ' if r['one_call'] == best[r['cell']] else ''}{r['one_call']:.2f} [{r['one_call_ci'][0]:.2f}, "
            f"{r['one_call_ci'][1]:.2f}]" for r in row) + " |")
    lines += ["", "majority of the member over all rounds / tokens per call / AUC(confidence) / AUC(log-prob)", "",
              "| member | " + " | ".join(cells) + " |", "|---" * (len(cells) + 1) + "|"]
    for m in t["members"]:
        row = [r for r in t["rows"] if r["member"] == m]
        lines.append(f"| {m} | " + " | ".join(
            f"{r['majority_all_rounds']:.2f} / {r['tokens_per_call']:.0f} / {r['auc_confidence']:.2f} / "
            f"{r['auc_logprob']:.2f}" for r in row) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--json", help="also write the table as JSON here")
    a = ap.parse_args()
    t = stats(a.corpus)
    print(render(t))
    if a.json:
        Path(a.json).write_text(json.dumps(t, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
