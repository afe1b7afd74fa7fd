"""Write ``src/orchestrace/data/examples/smollm2-samples.jsonl.gz``: real sampling logs in the plain samples shape.

The committed corpus ``smollm2-v1`` holds real always-continue self-consistency runs of
SmolLM2-135M-Instruct (8 samples per task, with token log-probs). This script rewrites its
``add`` tasks as the JSONL a user's own sampling job would give — one line per question with
its samples (text, mean token log-prob, tokens) and the reference answer — so the worked
example of docs/your-runs.md starts from logs, not from an orchestrace corpus:

    PYTHONPATH=src python benchmarks/export_samples.py [N_TASKS]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "orchestrace" / "data" / "corpora" / "smollm2-v1"
DEST = ROOT / "src" / "orchestrace" / "data" / "examples" / "smollm2-samples.jsonl.gz"


def main(n_tasks: int) -> None:
    from orchestrace.llm.tasks import make_vote_task

    rows: list[dict] = []
    for f in sorted(SRC.glob("traces-*.jsonl.gz")):
        cur: dict | None = None
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if "header" in rec:
                    h = rec["header"]
                    cur = {"id": h["task_id"], "meta": h["meta"], "samples": []} if h["meta"]["suite"] == "add" else None
                elif cur is not None and "event" in rec and rec["event"]["type"] == "return":
                    ev = rec["event"]
                    cur["samples"].append((ev["attrs"]["round"], ev["attrs"]["worker"], {
                        "text": ev.get("content", ""), "logprob_mean": ev["attrs"].get("logprob_mean"),
                        "tokens": ev.get("tokens_out"), "prompt_tokens": ev.get("tokens_in")}))
                elif cur is not None and "end" in rec:
                    suite, size, seed = cur["id"].split("-")
                    task = make_vote_task(suite, seed=int(seed), size=int(size[1:]))
                    rows.append({"id": cur["id"], "question": task.question, "answer": cur["meta"]["answer"],
                                 "samples": [s for _, _, s in sorted(cur["samples"], key=lambda x: x[:2])]})
                    cur = None
                if len(rows) >= n_tasks:
                    break
        if len(rows) >= n_tasks:
            break
    DEST.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(DEST, "wb", mtime=0) as gz:  # mtime 0: the same bytes on every rebuild
        gz.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode())
    print(f"wrote {len(rows)} tasks to {DEST}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 240)
