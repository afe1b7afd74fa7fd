"""Chat-transcript import speed and memory: 1k, 10k and 100k turns.

    python benchmarks/chat_import.py            # 1k, 10k, 100k turns
    python benchmarks/chat_import.py --quick    # 1k, 10k

A synthetic AG2-style group chat (four speakers, a tool call and its ``role: tool`` result
every ten turns) is written to ``bench-data/`` (gitignored). Timings are *file → traces*
(``import_traces("chat", …)``: read, map, build), median of 3, with two anchors measured in
the same run: ``json.loads`` of the same file (the parse floor) and ``orchestrace.validate``
of the imported trace. Peak RSS is measured in fresh subprocesses (``VmHWM``): the import of
the largest file against a process that only imports the module and parses the file with
``json.loads``. Ratios against the anchors are printed last.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench-data"
NAMES = ["Planner", "Coder", "Critic", "Executor"]


def transcript(n: int) -> Path:
    """An ``n``-turn group chat under ``{"messages": …}``, written once."""
    CACHE.mkdir(exist_ok=True)
    p = CACHE / f"chat-{n}.json"
    if not p.exists():
        turns: list[dict[str, Any]] = []
        for k in range(n):
            if k % 10 == 3:
                turns.append({"role": "assistant", "name": "Coder", "content": None, "tool_calls": [
                    {"id": f"c{k}", "type": "function", "function": {"name": "run", "arguments": "{\"x\": 1}"}}]})
            elif k % 10 == 4:
                turns.append({"role": "tool", "tool_call_id": f"c{k - 1}", "content": "ok " * 10})
            else:
                turns.append({"role": "assistant", "name": NAMES[k % 4], "content": f"turn {k}: " + "words " * 30})
        p.write_text(json.dumps({"messages": turns}))
    return p


def median_time(fn: Callable[[], Any], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
        del res
    return statistics.median(times)


_RSS = """
import json, sys
from orchestrace.importers import import_traces
{body}
hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]
print(hwm)
"""


def peak_rss_mb(body: str, path: Path) -> float:
    code = _RSS.format(body=body)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]

    import orchestrace as ot
    from orchestrace.importers import import_traces

    print(f"{'turns':>8} {'events':>8} {'MB':>6} {'import s':>9} {'json.loads s':>12} {'validate s':>10}")
    rows = []
    for n in sizes:
        p = transcript(n)
        res = import_traces("chat", [p])
        (tr,) = res.traces
        assert not res.report.errors and ot.validate(tr).valid
        t_imp = median_time(lambda p=p: import_traces("chat", [p]))
        t_json = median_time(lambda p=p: json.loads(p.read_bytes()))
        t_val = median_time(lambda tr=tr: ot.validate(tr))
        rows.append((n, len(tr.events), t_imp, t_json, t_val))
        print(f"{n:>8} {len(tr.events):>8} {p.stat().st_size / 1e6:>6.1f} {t_imp:>9.3f} {t_json:>12.3f} {t_val:>10.3f}")
        del res, tr

    big = transcript(sizes[-1])
    rss_imp = peak_rss_mb("r = import_traces('chat', [sys.argv[1]]); assert r.traces", big)
    rss_base = peak_rss_mb("d = json.loads(open(sys.argv[1], 'rb').read())", big)
    print(f"\npeak RSS, {sizes[-1]} turns: import {rss_imp:.0f} MB; anchor (module + json.loads) {rss_base:.0f} MB")
    print("\nratios (median, same run):")
    for n, _ev, t_imp, t_json, t_val in rows:
        print(f"  {n:>7} turns: import / json.loads = {t_imp / t_json:6.1f}x   import / validate = {t_imp / t_val:5.1f}x"
              f"   {1e6 * t_imp / n:6.1f} µs per turn")
    print(f"  peak RSS import / anchor = {rss_imp / rss_base:.2f}x")


if __name__ == "__main__":
    main()
