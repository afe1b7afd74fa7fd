"""Time and peak memory of valuing and fitting the whole rule family on a synthetic team corpus (issue 30).

    python benchmarks/family_cost.py 3000 20000      # task counts; one line each

The team: ``cold``, ``hot``, ``calc`` and a ``reviser`` that saw the other three (8 valid member
subsets), 4 rounds; every rule × configuration × aggregation fitted on the train split, tuned on
validation and valued on test (``evaluate_traces`` with no gate). One thread.
"""

from __future__ import annotations

import os
import resource
import sys
import time


def main(argv: list[str]) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from orchestrace.offline import evaluate_traces, make_synthetic_logged

    for arg in argv or ["3000"]:
        T = int(arg)  # noqa: N806
        runs = make_synthetic_logged(T, 4, 4, seed=0, members=("cold", "hot", "calc", "reviser"),
                                     sees=((), (), (), (0, 1, 2)))
        t = time.perf_counter()
        res = evaluate_traces(runs, [])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # Linux: KiB → GB
        print(f"T={T}: {res['candidates']} candidates, {time.perf_counter() - t:.1f} s, peak RSS {peak:.2f} GB "
              f"(process so far); best {res['best_rule']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
