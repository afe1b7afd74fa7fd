"""Validation speed: orchestrace vs jsonschema, fastjsonschema, json.loads and a bare typed decode.

    python benchmarks/validate.py            # 1k, 20k, 200k, 1M events
    python benchmarks/validate.py --quick    # jsonschema only up to 20k (larger sizes extrapolated)

Synthetic traces (``orchestrace.synth``) are cached in ``bench-data/`` (gitignored), in
two encodings: native JSON and the reference JSON written by ``convert --to reference``.
Every timing is *file → result* (read + parse + check), median of several runs:

* ``orchestrace``   — ``orchestrace.validate(path)``: typed decode + every semantic check
  (the native file; ``orchestrace/ref`` is the same on the reference file);
* ``typed decode``  — ``msgspec.json.decode(read, type=Trace)``, the structural floor
  (``+free`` also drops the decoded trace, which ``validate`` has to do);
* ``json.loads``    — the stdlib parser alone, no checks;
* ``jsonschema``    — ``Draft202012Validator(reference schema)`` on the reference file
  (parse + validate); above the measured sizes it is extrapolated linearly per event and
  labelled so;
* ``fastjsonschema`` — the same schema compiled once (compile time excluded).

The peak RSS of ``orchestrace.validate`` on the largest native file is measured in a fresh
subprocess (``VmHWM`` of ``/proc/self/status``, which exec resets; ``ru_maxrss`` would also
count the forked benchmark process). Ratios against the targets are
printed last.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

import orchestrace as ot
from orchestrace.core.schema import reference_schema
from orchestrace.core.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench-data"
SIZES = [1_000, 20_000, 200_000, 1_000_000]


def files(n: int) -> tuple[Path, Path]:
    """(native, reference) files for an n-event synthetic trace, generated once."""
    CACHE.mkdir(exist_ok=True)
    agents = min(1000, max(10, n // 1000))
    native = CACHE / f"synth-{n}-{agents}.json"
    ref = CACHE / f"synth-{n}-{agents}.ref.json"
    if not native.exists() or not ref.exists():
        tr = ot.synth(events=n, agents=agents, seed=0)
        ot.dump(tr, native)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.write_bytes(msgspec.json.encode(ot.to_reference(tr)))
        del tr
    return native, ref


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
        del res  # not timed: freeing the result
    return statistics.median(times)


_RSS_CODE = """
import resource, sys, orchestrace as ot
r = ot.validate(sys.argv[1])
assert r.valid, r.problems[:3]
try:  # VmHWM is reset by exec; ru_maxrss would include the forked parent's memory
    hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")][0].split()[1]
except OSError:
    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(hwm)
"""


def peak_rss_mb(path: Path) -> float:
    """Peak resident memory (MiB) of ``orchestrace.validate(path)`` in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _RSS_CODE, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024  # KiB → MiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="jsonschema only up to 20k events; fewer repeats")
    ap.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    args = ap.parse_args()
    import fastjsonschema
    import jsonschema

    schema = reference_schema()
    js = jsonschema.Draft202012Validator(schema)
    fjs = fastjsonschema.compile(schema)
    js_limit = 20_000 if args.quick else 200_000

    def decode_only(p: Path) -> None:
        gc.disable()
        try:
            msgspec.json.decode(p.read_bytes(), type=Trace)  # freed right here: "+free"
        finally:
            gc.enable()

    results: dict[int, dict[str, float]] = {}
    labels: dict[tuple[int, str], str] = {}
    js_rate: float | None = None  # seconds per event, from the largest measured size
    for n in args.sizes:
        native, ref = files(n)
        reps = 3 if n >= 200_000 or args.quick else 5
        r: dict[str, float] = {}
        report = ot.validate(native)
        assert report.valid, report.problems[:3]
        r["orchestrace"] = median_time(lambda p=native: ot.validate(p), reps)
        r["orchestrace/ref"] = median_time(lambda p=ref: ot.validate(p), reps)
        r["typed decode"] = median_time(lambda p=native: _decode_keep(p), reps)
        r["typed decode+free"] = median_time(lambda p=native: decode_only(p), reps)
        r["json.loads"] = median_time(lambda p=ref: json.loads(p.read_bytes()), reps)
        r["fastjsonschema"] = median_time(lambda p=ref: fjs(json.loads(p.read_bytes())), 1 if n >= 1_000_000 else reps)
        if n <= js_limit:
            r["jsonschema"] = median_time(lambda p=ref: js.validate(json.loads(p.read_bytes())), 1 if n >= 200_000 else 3)
            js_rate = r["jsonschema"] / n
        elif js_rate is not None:
            r["jsonschema"] = js_rate * n
            labels[(n, "jsonschema")] = "extrapolated"
        results[n] = r
        print(f"{n:>9,} events  " + "  ".join(f"{k} {v:.3f}s" for k, v in r.items()), flush=True)

    print("\nmedian seconds (events/s) — file → result; machine shared with other jobs (loaded)")
    cols = ["orchestrace", "orchestrace/ref", "typed decode", "typed decode+free", "json.loads",
            "fastjsonschema", "jsonschema"]
    print(f"{'events':>10} " + " ".join(f"{c:>24}" for c in cols))
    for n, r in results.items():
        cells = []
        for c in cols:
            v = r.get(c)
            tag = "*" if labels.get((n, c)) else ""
            cells.append(f"{v:8.3f}s{tag} ({n / v:9,.0f}/s)" if v else "-")
        print(f"{n:>10,} " + " ".join(f"{x:>24}" for x in cells))
    if labels:
        print("  * extrapolated linearly from the largest measured size (jsonschema is O(events))")

    big = max(results)
    native, _ = files(big)
    rss = peak_rss_mb(native)
    r = results[big]
    print(f"\npeak RSS of orchestrace.validate on the {big:,}-event file ({native.stat().st_size / 1e6:.0f} MB): {rss:,.0f} MB")
    print(f"\nratios at {big:,} events (targets in brackets):")
    js_tag = " (jsonschema extrapolated)" if labels.get((big, "jsonschema")) else ""
    print(f"  jsonschema / orchestrace      = {r['jsonschema'] / r['orchestrace/ref']:6.1f}x  [>= 50x]{js_tag}")
    print(f"  fastjsonschema / orchestrace  = {r['fastjsonschema'] / r['orchestrace/ref']:6.1f}x  [>= 5x]")
    print(f"  orchestrace / typed decode    = {r['orchestrace'] / r['typed decode']:6.2f}x  [<= 2x]")
    print(f"  orchestrace / (decode+free)   = {r['orchestrace'] / r['typed decode+free']:6.2f}x")
    print(f"  json.loads / orchestrace      = {r['json.loads'] / r['orchestrace']:6.2f}x")
    print(f"  peak RSS                      = {rss / 1024:6.2f} GB  [<= 1.0 GB]")


def _decode_keep(p: Path) -> Trace:
    gc.disable()
    try:
        return msgspec.json.decode(p.read_bytes(), type=Trace)
    finally:
        gc.enable()


if __name__ == "__main__":
    main()
