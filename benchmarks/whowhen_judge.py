"""The Who&When LLM-judge protocols with the local SmolLM2-135M on the development split.

    python benchmarks/whowhen_judge.py [--data ../shared/data/whowhen-dev] [--budget-min 25]
        [--context-tokens 1024] [--max-calls 40] [--without-gt all-at-once,binary-search]
        [--out whowhen_judge.json] [--score-only whowhen_judge.partial.jsonl]

1. reads every run of both subsets (Algorithm-Generated: AG2 group chats; Hand-Crafted:
   Magentic-One), removes the annotation fields (``mistake_*``, ``mistake_type``, ``labels``)
   *before* importing (``orchestrace.importers.chat.from_doc``, text kept); the labels stay in
   this script's scorer, which is the only code that reads them;
2. starts SmolLM2-135M-Instruct on xllamacpp (127.0.0.1, one thread, one slot of
   ``--context-tokens``) and judges the runs in an order that alternates the subsets (each
   shuffled with seed 0), each run with the three protocols with the ground-truth answer, and
   the ``--without-gt`` protocols (default all-at-once and binary search: step-by-step is the
   costly one) also without it (the prompts share the transcript as a prefix, so the server
   reads it about once per run); step-by-step gives up after ``--max-calls`` questions (no
   verdict); it starts no new run after ``--budget-min`` minutes (the runs not reached are counted);
3. prints agent- and step-level accuracy with Wilson 95 % intervals per subset × protocol ×
   ground truth (a "no verdict" counts as wrong), beside the expected accuracy of a uniform
   random pick over the same runs and the paper's GPT-4o figures (quoted, not rerun); writes
   every verdict and the table to ``--out`` (JSON); last, the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from orchestrace._stats import wilson as _wilson

#: Fields of a Who&When file that are labels: never imported, read only by the scorer.
LABEL_KEYS = ("mistake_agent", "mistake_step", "mistake_reason", "mistake_type", "labels")
SUBSETS = ("Algorithm-Generated", "Hand-Crafted")
#: The paper's GPT-4o judges (Zhang et al., ICML 2025), agent / step accuracy %, with ground truth,
#: as quoted in issue 26 (not rerun).
PAPER_GPT4O = {
    ("all-at-once", "Algorithm-Generated"): (54.3, 12.5), ("all-at-once", "Hand-Crafted"): (55.2, 5.3),
    ("step-by-step", "Algorithm-Generated"): (35.2, 25.5), ("step-by-step", "Hand-Crafted"): (34.5, 7.0),
    ("binary-search", "Algorithm-Generated"): (44.1, 24.0), ("binary-search", "Hand-Crafted"): (51.7, 6.9),
}


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score interval of k/n (the package's, :func:`orchestrace._stats.wilson`), clipped to [0, 1]; (0, 0) for n = 0."""
    if n == 0:
        return 0.0, 0.0
    r = _wilson(k, n)
    return max(0.0, r["lo"]), min(1.0, r["hi"])


def load_runs(data: Path) -> tuple[list[tuple[str, str, Any]], dict[tuple[str, str], tuple[str, int]]]:
    """``[(subset, name, transcript)]`` with the labels stripped before import, and the labels apart."""
    from orchestrace.blame.judge import transcript_of
    from orchestrace.importers.chat import from_doc

    runs, labels = [], {}
    for subset in SUBSETS:
        for f in sorted((data / subset).glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0):
            doc = json.loads(f.read_text())
            labels[(subset, f.stem)] = (str(doc["mistake_agent"]), int(doc["mistake_step"]))
            clean = {k: v for k, v in doc.items() if k not in LABEL_KEYS}
            traces, _ = from_doc(clean, f.name, content="keep")
            runs.append((subset, f.stem, transcript_of(traces[0])))
    return runs, labels


def interleave(runs: list[tuple[str, str, Any]], seed: int = 0) -> list[tuple[str, str, Any]]:
    """Both subsets shuffled (seeded), then taken in turn, so that a cut-off run covers both."""
    rng = random.Random(seed)
    groups = [[r for r in runs if r[0] == s] for s in SUBSETS]
    for g in groups:
        rng.shuffle(g)
    out = []
    for k in range(max(len(g) for g in groups)):
        out.extend(g[k] for g in groups if k < len(g))
    return out


async def judge_all(order: list[tuple[str, str, Any]], base_url: str, model: str, args: Any,
                    t0: float) -> tuple[list[dict[str, Any]], int]:
    from orchestrace.blame.judge import PROTOCOLS, JudgeConfig, ajudge
    from orchestrace.llm.client import ChatClient

    rows: list[dict[str, Any]] = []
    done = 0
    async with ChatClient(base_url, model, timeout=300, deadline=900, max_retries=1, max_concurrency=1) as c:
        for subset, name, tx in order:
            if time.perf_counter() - t0 > args.budget_min * 60:
                break
            for protocol in PROTOCOLS:
                for gt in (True, False)[: 2 if protocol in args.without_gt else 1]:
                    cfg = JudgeConfig(protocol=protocol, context_tokens=args.context_tokens,
                                      max_tokens=args.max_tokens, with_ground_truth=gt, max_calls=args.max_calls)
                    v = await ajudge(tx, c, cfg)
                    rows.append({"subset": subset, "run": name, "n_steps": len(tx.steps), "team": len(tx.team),
                                 **v.to_dict()})
            done += 1
            print(f"[{time.perf_counter() - t0:6.0f} s] {done:2d} {subset[:4]} {name:>4}: " + "  ".join(
                f"{r['protocol'][:3]}{'+' if r['with_ground_truth'] else '-'} {r['agent'] or '-'}@{r['step']}"
                for r in rows if (r["subset"], r["run"]) == (subset, name)), flush=True)
            partial = args.out.with_suffix(".partial.jsonl")  # survives an interrupted run
            with partial.open("a") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows
                              if (r["subset"], r["run"]) == (subset, name))
    return rows, done


def score(rows: list[dict[str, Any]], labels: dict[tuple[str, str], tuple[str, int]]) -> list[dict[str, Any]]:
    """Agent / step accuracy per subset × protocol × ground truth (the only place the labels are read)."""
    from orchestrace.blame.judge import PROTOCOLS

    table = []
    for subset in SUBSETS:
        for protocol in PROTOCOLS:
            for gt in (True, False):
                cell = [r for r in rows if r["subset"] == subset and r["protocol"] == protocol
                        and r["with_ground_truth"] == gt]
                n = len(cell)
                if n == 0:
                    continue
                agent_ok = sum(r["agent"] == labels[(subset, r["run"])][0] for r in cell)
                step_ok = sum(r["step"] == labels[(subset, r["run"])][1] for r in cell)
                table.append({
                    "subset": subset, "protocol": protocol, "with_ground_truth": gt, "n": n,
                    "agent": agent_ok / n, "agent_ci": wilson(agent_ok, n), "step": step_ok / n,
                    "step_ci": wilson(step_ok, n), "no_verdict": sum(not r["verdict"] for r in cell),
                    "random_agent": sum(1 / r["team"] for r in cell) / n,
                    "random_step": sum(1 / r["n_steps"] for r in cell) / n,
                    "calls": sum(r["calls"] for r in cell) / n,
                    "prompt_tokens": sum(r["prompt_tokens"] for r in cell) / n,
                    "seconds": sum(r["seconds"] for r in cell) / n,
                    "truncated_runs": sum(bool(r["truncated"]) for r in cell),
                    "paper_gpt4o": PAPER_GPT4O.get((protocol, subset)) if gt else None,
                })
    return table


def show(table: list[dict[str, Any]]) -> None:
    def pct(x: float, ci: tuple[float, float]) -> str:
        return f"{100 * x:5.1f} [{100 * ci[0]:4.1f}, {100 * ci[1]:4.1f}]"

    print("| subset | protocol | GT | n | agent % [95 % CI] | step % [95 % CI] | no verdict | random agent / step % "
          "| GPT-4o (paper) agent / step % | calls | prompt tokens | s / run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in table:
        paper = "{:.1f} / {:.1f}".format(*r["paper_gpt4o"]) if r["paper_gpt4o"] else "–"
        print(f"| {r['subset']} | {r['protocol']} | {'yes' if r['with_ground_truth'] else 'no'} | {r['n']} "
              f"| {pct(r['agent'], r['agent_ci'])} | {pct(r['step'], r['step_ci'])} | {r['no_verdict']} "
              f"| {100 * r['random_agent']:.1f} / {100 * r['random_step']:.1f} | {paper} | {r['calls']:.1f} "
              f"| {r['prompt_tokens']:,.0f} | {r['seconds']:.1f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "whowhen-dev")
    ap.add_argument("--budget-min", type=float, default=25.0, help="start no new run after this many minutes")
    ap.add_argument("--context-tokens", type=int, default=1024, help="the server's one slot; the prompt budget")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--max-calls", type=int, default=40, help="step-by-step: no verdict after this many calls")
    ap.add_argument("--without-gt", default="all-at-once,binary-search",
                    help="protocols also judged without the ground truth (comma-separated; '' for none)")
    ap.add_argument("--limit", type=int, default=0, help="judge at most this many runs (0: all)")
    ap.add_argument("--out", type=Path, default=Path("whowhen_judge.json"))
    ap.add_argument("--score-only", type=Path, default=None,
                    help="print the table of verdicts already written (the --out JSON or its .partial.jsonl)")
    args = ap.parse_args()
    args.without_gt = tuple(p for p in args.without_gt.split(",") if p)
    from orchestrace.llm.local import LocalServer

    if args.score_only is not None:
        text = args.score_only.read_text()
        rows = (json.loads(text)["verdicts"] if args.score_only.suffix == ".json"
                else [json.loads(line) for line in text.splitlines() if line.strip()])
        show(score(rows, load_runs(args.data)[1]))
        return 0

    t_wall = time.perf_counter()
    runs, labels = load_runs(args.data)
    order = interleave(runs)[: args.limit or None]
    print(f"{len(runs)} runs ({', '.join(f'{s}: {sum(r[0] == s for r in runs)}' for s in SUBSETS)}); "
          f"context {args.context_tokens} tokens, max_tokens {args.max_tokens}, budget {args.budget_min:g} min",
          flush=True)
    with LocalServer(threads=1, parallel=1, ctx=args.context_tokens, startup_timeout=180) as srv:
        t0 = time.perf_counter()
        rows, done = asyncio.run(judge_all(order, srv.base_url or "", srv.model, args, t0))
    table = score(rows, labels)
    show(table)
    wall = time.perf_counter() - t_wall
    judged = {(r["subset"], r["run"]) for r in rows}
    print(f"\njudged {done} of {len(order)} runs ({', '.join(f'{s}: {sum(k[0] == s for k in judged)}' for s in SUBSETS)})"
          f"; wall time {wall / 60:.1f} min")
    args.out.write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()}, "wall_s": wall,
                                    "runs_judged": sorted(f"{s}/{n}" for s, n in judged), "table": table,
                                    "verdicts": rows}, indent=1, ensure_ascii=False))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
