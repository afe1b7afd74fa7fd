"""Benchmark: all measures of ``orchestrace.analysis.measures.compute`` vs. loading the file and vs.
networkx's critical path alone, on synth traces of 200k and 1M events (1,000 sub-agents).

    python benchmarks/metrics.py            # 200k and 1M events
    python benchmarks/metrics.py --quick    # 20k and 100k events, for CI

Timed per size (medians over repeats):
  load       orchestrace.load(path) of the native JSON file
  measures   compute(trace, validate=False): TraceGraph build + all 47 measures + safety flows
  validate   orchestrace.validate(trace) (informational; the CLI runs it first)
  networkx   DiGraph build from the dependency edges (node duration on the in-edge) +
             dag_longest_path — the critical path alone
Targets: networkx / measures ≥ 20; load / measures > 1 at 1M events.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time


def timed(fn, repeats: int) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def nx_critical_path(trace) -> float:
    import networkx as nx

    from orchestrace.analysis.graph import DEPENDENCY_EDGE_TYPES

    dur = {e.id: (e.t_end - e.t) if e.t_end is not None else 0.0 for e in trace.events}
    g = nx.DiGraph()
    g.add_nodes_from(dur)
    g.add_weighted_edges_from((e.src, e.dst, dur[e.dst]) for e in trace.edges if e.type in DEPENDENCY_EDGE_TYPES)
    path = nx.dag_longest_path(g, weight="weight")
    return sum(dur[v] for v in path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20k and 100k events (CI smoke run)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [20_000, 100_000] if args.quick else [200_000, 1_000_000]

    from orchestrace import dump, load, synth
    from orchestrace.analysis.measures import compute

    try:
        from orchestrace import validate
    except ImportError:  # pragma: no cover
        validate = None

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"synth-{n}.json")
            dump(synth(events=n, agents=1000, seed=0), path)
            gc.collect()
            t_load, trace = timed(lambda p=path: load(p), args.repeats)
            t_meas, res = timed(lambda tr=trace: compute(tr, validate=False), args.repeats)
            t_val = timed(lambda tr=trace: validate(tr), 1)[0] if validate else float("nan")
            t_nx, length = timed(lambda tr=trace: nx_critical_path(tr), 1)
            cp = res.metrics["e2/critical_path_s"]
            assert abs(length - cp) <= 1e-6 * max(1.0, cp), (length, cp)
            rows.append((n, t_load, t_meas, t_val, t_nx))
            print(f"{n:>9,} events  load {t_load:7.3f} s   measures {t_meas:7.3f} s   "
                  f"validate {t_val:7.3f} s   networkx critical path {t_nx:7.3f} s   "
                  f"(critical path {cp:.1f} s, {len(res.metrics)} measures)", flush=True)
            del trace, res
            gc.collect()
    print("\nratios (same run; the machine is shared, numbers are from a loaded machine):")
    for n, t_load, t_meas, _, t_nx in rows:
        print(f"{n:>9,} events  networkx/measures = {t_nx / t_meas:6.1f}x (target >= 20)   "
              f"load/measures = {t_load / t_meas:5.2f}x (target > 1)")


if __name__ == "__main__":
    sys.exit(main())
