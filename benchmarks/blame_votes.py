"""Blame against an exact attribution: the committed vote and team corpora, where every member's answer is logged.

    python benchmarks/blame_votes.py                                   # src/orchestrace/data/corpora/smollm2-v1
    python benchmarks/blame_votes.py --corpus src/orchestrace/data/corpora/smollm2-team-v1   # the team corpus
    python benchmarks/blame_votes.py --corpus DIR --json out.json

On a vote run that failed (the graded majority after the last round is wrong), the members whose
wrong answers made the aggregate wrong are known exactly from the log
(:func:`orchestrace.offline.load_logged_runs`): the **culprits** are the members that voted for the
adopted wrong answer; a culprit is **pivotal** when its answering right instead would have made
the majority (ties: the answer seen first) right. ``blame`` (and ``credit --method blame --unit
agent``) run on the native traces of the same runs and are scored against that attribution:

- decisive agent is a culprit / is pivotal (when a pivotal member exists);
- credit: the agents with negative credit are exactly the culprits (precision, recall), and the
  lowest-credited agent is a culprit.

Beside it: blame without the ``wrong_vote`` evidence (what it did before: the fallback, the first
reply) and the expected hit rate of a random member.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from orchestrace._vote import majority

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "src" / "orchestrace" / "data" / "corpora" / "smollm2-v1"


def majority_first_tie(codes: list[int]) -> int:
    """The majority answer code (ties: the code seen first); -1 (nothing parsed) never wins over an answer.

    >>> majority_first_tie([2, 1, 1, 2]), majority_first_tie([-1, -1, 3])
    (2, 3)
    """
    top = majority([str(c) if c >= 0 else None for c in codes])  # the package's one majority vote
    return -1 if top is None else int(top)


def member_name(runs: Any, r: int, w: int) -> str:
    """The trace's agent name of round ``r``'s member ``w``: ``r0w1`` (vote corpus), ``r0-hot`` (team corpus).

    >>> class V: members = ()
    >>> class T: members = ("cold", "hot")
    >>> member_name(V, 0, 1), member_name(T, 2, 1)
    ('r0w1', 'r2-hot')
    """
    members = tuple(getattr(runs, "members", None) or ())
    return f"r{r}-{members[w]}" if members else f"r{r}w{w}"


def exact(runs: Any, t: int) -> tuple[set[str], set[str], int]:
    """``(culprits, pivotal, winner)`` of task ``t`` (agents named as in the traces: :func:`member_name`)."""
    _, r_n, w_n = runs.answers.shape
    flat = [(r, w, int(runs.answers[t, r, w])) for r in range(r_n) for w in range(w_n)]
    codes = [c for _, _, c in flat]
    win = majority_first_tie(codes)
    good = int(runs.correct_code[t])
    culprits = {member_name(runs, r, w) for r, w, c in flat if c == win}
    pivotal = set()
    for k, (r, w, c) in enumerate(flat):
        if c == win and good >= 0:
            alt = codes[:k] + [good] + codes[k + 1:]
            if majority_first_tie(alt) == good:
                pivotal.add(member_name(runs, r, w))
    return culprits, pivotal, win


def traces(corpus: Path) -> dict[str, Any]:
    """The corpus' native traces by task id (the streams split at their headers)."""
    from orchestrace.core.io import loads

    out = {}
    for f in sorted(corpus.glob("traces*.jsonl*")):
        raw = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        chunk: list[bytes] = []
        for line in [*raw.splitlines(), b'{"header"']:
            if line.startswith(b'{"header"') and chunk:
                tr = loads(b"\n".join(chunk), source=str(f))
                out[tr.task_id] = tr
                chunk = []
            chunk.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from orchestrace.blame import EvidenceKind, blame
    from orchestrace.credit import assign
    from orchestrace.offline import load_logged_runs

    runs = load_logged_runs(args.corpus)
    trs = traces(args.corpus)
    t_n, r_n, w_n = runs.answers.shape
    no_vote: set[EvidenceKind] = {k for k in EvidenceKind if k is not EvidenceKind.WRONG_VOTE}
    rows: dict[str, list[float]] = {k: [] for k in ("culprit", "pivotal", "before_culprit", "before_pivotal",
                                                    "random", "neg_precision", "neg_recall", "min_is_culprit")}
    mismatch = 0
    failed = 0
    for t in range(t_n):
        if bool(runs.round_correct[t, -1]):
            continue
        failed += 1
        culprits, pivotal, win = exact(runs, t)
        if win == int(runs.correct_code[t]):
            mismatch += 1  # the log's grade and the recomputed majority disagree: reported, not scored
            continue
        tr = trs[str(runs.task_ids[t])]
        r = blame(tr)
        b = blame(tr, kinds=no_vote)
        for key, res in (("culprit", r), ("before_culprit", b)):
            rows[key].append(float(res.decisive is not None and res.decisive.agent in culprits))
        if pivotal:
            rows["pivotal"].append(float(r.decisive is not None and r.decisive.agent in pivotal))
            rows["before_pivotal"].append(float(b.decisive is not None and b.decisive.agent in pivotal))
        rows["random"].append(len(culprits) / (r_n * w_n))
        c = assign(tr, unit="agent", method="blame").as_dict()
        names = {member_name(runs, r, w) for r in range(r_n) for w in range(w_n)}
        members = {a: v for a, v in c.items() if a in names}
        neg = {a for a, v in members.items() if v < -1e-12}
        rows["neg_precision"].append(len(neg & culprits) / len(neg) if neg else 0.0)
        rows["neg_recall"].append(len(neg & culprits) / len(culprits))
        rows["min_is_culprit"].append(float(min(members, key=members.__getitem__) in culprits))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from whowhen import pct

    kind = "Team" if tuple(getattr(runs, "members", None) or ()) else "Vote"
    print(f"\n## {kind} corpus {args.corpus.name}: {t_n} runs, {failed} failed ({r_n} rounds x {w_n} members)\n")
    if mismatch:
        print(f"{mismatch} failed runs whose recomputed majority is the right answer (grade disagrees): not scored\n")
    print("| measure | runs | % [95 % CI] |")
    print("|---|---|---|")
    table = {}
    for key, label in (("culprit", "blame: decisive agent is a culprit"),
                       ("pivotal", "blame: decisive agent is pivotal (runs with a pivotal member)"),
                       ("before_culprit", "blame without wrong_vote evidence: a culprit"),
                       ("before_pivotal", "blame without wrong_vote evidence: pivotal"),
                       ("random", "random member (expected): a culprit"),
                       ("min_is_culprit", "credit --method blame: the lowest-credited agent is a culprit"),
                       ("neg_precision", "credit: share of negatively credited agents that are culprits"),
                       ("neg_recall", "credit: share of culprits credited negatively")):
        v = rows[key]
        if not v:
            continue
        m, lo, hi = pct(v)
        table[key] = {"pct": m, "lo": lo, "hi": hi, "n": len(v)}
        print(f"| {label} | {len(v)} | {m:.1f} [{lo:.1f}, {hi:.1f}] |")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
