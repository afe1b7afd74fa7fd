"""Recorder overhead per event (target ≤ 10 µs on this machine).

Measures, per recorded event (median of repeats): the Recorder SDK (``AgentHandle.tool_call``:
event struct, causal edge, lock, encode, write + flush), and two anchors measured in the
same run — orchestrace's bare ``TraceWriter.event`` with a prebuilt event, and the
hand-written ``json.dumps`` + ``write`` + ``flush`` a user would do instead. Ratios last.

    python benchmarks/recorder.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from orchestrace.core.io import TraceWriter
from orchestrace.core.trace import Event
from orchestrace.frameworks.recorder import Recorder


def _time(fn, n: int, repeats: int) -> float:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(n)
        out.append((time.perf_counter() - t0) / n)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n, repeats = (2_000, 3) if args.quick else (50_000, 7)
    d = tempfile.mkdtemp()

    def recorder(k: int) -> None:
        with Recorder(os.path.join(d, "r.jsonl")) as rec, rec.agent("lead") as a:
            for _ in range(k):
                a.tool_call("search", tokens_in=10)

    ev = Event(id="e1", t=0.0, type="tool_call", agent="lead", tool="search", tokens_in=10)

    def writer(k: int) -> None:
        with TraceWriter(os.path.join(d, "w.jsonl"), trace_id="t", task_id="k") as w:
            for _ in range(k):
                w.event(ev)

    def handwritten(k: int) -> None:
        with open(os.path.join(d, "h.jsonl"), "a", encoding="utf-8") as fh:
            for i in range(k):
                fh.write(json.dumps({"event": {"id": f"e{i}", "t": time.perf_counter(), "type": "tool_call",
                                               "agent": "lead", "tool": "search", "tokens_in": 10}}) + "\n")
                fh.flush()

    res = {name: _time(fn, n, repeats) for name, fn in
           [("recorder", recorder), ("trace_writer", writer), ("json_dumps_write_flush", handwritten)]}
    print(f"events per run: {n}, repeats: {repeats} (machine shared with other work: numbers are noisy)")
    for k, v in res.items():
        print(f"  {k:<24} median {v * 1e6:7.2f} µs/event")
    print("ratios (recorder / anchor):")
    print(f"  recorder / trace_writer           {res['recorder'] / res['trace_writer']:.2f}x")
    print(f"  recorder / json_dumps_write_flush {res['recorder'] / res['json_dumps_write_flush']:.2f}x")
    print(f"  target: recorder ≤ 10 µs/event -> {'met' if res['recorder'] <= 10e-6 else 'MISSED'}")


if __name__ == "__main__":
    main()
