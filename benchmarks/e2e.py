"""Benchmark: the commands as a user runs them — whole processes against named anchors (issue 18).

    python benchmarks/e2e.py                    # 7 runs of each process, 200k and 1M events
    python benchmarks/e2e.py --repeats 5 --sizes 200000
    python benchmarks/e2e.py --quick            # 20k events, 3 runs (a smoke run)
    python benchmarks/e2e.py --baseline ../old/src   # also an older source tree, same runs

Every figure is the wall clock of one whole process (``subprocess.run``, output to
/dev/null), median of ``--repeats`` runs (min … max shown), the processes of one group
interleaved so that load on this shared machine hits them alike. CPU time (user + system of
the child) is printed beside it: it is less sensitive to other jobs than wall clock.
Ratios are printed last, each against its anchor measured in the same run.

Processes timed:
  bare            python -c pass
  help            python -m orchestrace --help                       anchor: bare (target: help − bare ≤ 120 ms)
  validate        python -m orchestrace validate FILE.ref.json       the reference file, as the anchors read it
  validate/native python -m orchestrace validate FILE.json           the same trace in the native format
  survey-check    the survey's own dependency-free validator: stdlib ``json``, then its checks
                  (required fields, event/edge type enums, unique ids, edge ends exist, t ≥ 0,
                  costs ≥ 0) — written out in ``SURVEY_CHECK`` below from the checks that
                  ``trace-schema/validate_trace.py`` of the survey artifact performs (its code is
                  not copied). The anchor of the issue's "reference validator" row (target ≥ 3×).
  jsonschema      stdlib ``json`` + ``jsonschema.Draft202012Validator(reference schema)`` — the
                  schema validation of the reference file as ``benchmarks/validate.py`` does it
                  in-process (200k only by default: it takes ~20 s a run; ``--jsonschema-repeats``)
  metrics         python -m orchestrace metrics FILE.json (all measures; the CLI validates first)
  networkx        stdlib ``json`` + DiGraph of the dependency edges + ``dag_longest_path``
                  (the critical path alone; target metrics ≥ 8× faster)

Files are synthetic (``orchestrace.synth``) and cached in ``bench-data/`` (gitignored):
the validate files are those of ``benchmarks/validate.py``, the metrics file has 1,000
agents as in ``benchmarks/metrics.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench-data"

SURVEY_CHECK = r'''
import json, sys
from pathlib import Path

EVENT_TYPES = {"orchestrator_decision", "spawn", "despawn", "message", "tool_call", "tool_result",
               "return", "aggregate", "human_intervention", "safety_event"}
EDGE_TYPES = {"temporal", "causal", "spawn", "message", "tool_dependency", "return", "aggregate",
              "safety_flow"}


def bad(why):
    sys.exit("invalid: " + why)


doc = json.loads(Path(sys.argv[1]).read_text())
for key in ("trace_id", "task_id", "events", "edges", "rewards", "costs"):
    if key not in doc:
        bad("no " + key)
if not isinstance(doc["events"], list) or not doc["events"]:
    bad("events must be a non-empty list")
if not isinstance(doc["edges"], list):
    bad("edges must be a list")
seen = set()
for ev in doc["events"]:
    for key in ("id", "t", "type", "agent"):
        if key not in ev:
            bad("event without " + key)
    if ev["type"] not in EVENT_TYPES:
        bad("event type " + ev["type"])
    if ev["id"] in seen:
        bad("duplicate id " + ev["id"])
    if ev["t"] < 0:
        bad("negative t at " + ev["id"])
    seen.add(ev["id"])
for ed in doc["edges"]:
    for key in ("src", "dst", "type"):
        if key not in ed:
            bad("edge without " + key)
    if ed["type"] not in EDGE_TYPES:
        bad("edge type " + ed["type"])
    if ed["src"] not in seen or ed["dst"] not in seen:
        bad("dangling edge")
for key, value in doc["costs"].items():
    if value < 0:
        bad("negative cost " + key)
print("valid trace:", sys.argv[1])
'''

JSONSCHEMA_CHECK = r'''
import json, sys
from pathlib import Path
import jsonschema
schema = json.loads(Path(sys.argv[2]).read_text())
jsonschema.Draft202012Validator(schema).validate(json.loads(Path(sys.argv[1]).read_bytes()))
print("valid")
'''

NX_CRITICAL_PATH = r'''
import json, sys
import networkx as nx

DEPENDENCY = {"causal", "spawn", "return", "aggregate", "tool_dependency", "message"}
doc = json.loads(open(sys.argv[1], "rb").read())
dur = {e["id"]: (e["t_end"] - e["t"]) if e.get("t_end") is not None else 0.0 for e in doc["events"]}
g = nx.DiGraph()
g.add_nodes_from(dur)
g.add_weighted_edges_from((e["src"], e["dst"], dur[e["dst"]]) for e in doc["edges"] if e["type"] in DEPENDENCY)
path = nx.dag_longest_path(g, weight="weight")
print(sum(dur[v] for v in path))
'''


#: PYTHONPATH of the --baseline source tree (argv lists that start with "@base" run with it).
BASE_ENV: dict[str, str] = {}


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) seconds of one whole process."""
    if argv[0] == "@base":
        argv, env = argv[1:], BASE_ENV
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def timed(group: dict[str, tuple[list[str], int]], env: dict[str, str]) -> dict[str, tuple[float, float, float, float]]:
    """Interleaved runs; per name (median wall, min, max, median cpu)."""
    for argv, _ in group.values():  # warm-up: file cache, .pyc files
        run_once(argv, env)
    walls: dict[str, list[float]] = {k: [] for k in group}
    cpus: dict[str, list[float]] = {k: [] for k in group}
    for r in range(max(reps for _, reps in group.values())):
        for name, (argv, reps) in group.items():
            if r < reps:
                w, c = run_once(argv, env)
                walls[name].append(w)
                cpus[name].append(c)
    return {k: (statistics.median(v), min(v), max(v), statistics.median(cpus[k])) for k, v in walls.items()}


def files(n: int, agents: int | None = None) -> tuple[Path, Path]:
    """(native, reference) synthetic files of n events, generated once into bench-data/."""
    import msgspec

    import orchestrace as ot

    CACHE.mkdir(exist_ok=True)
    agents = agents or min(1000, max(10, n // 1000))
    native = CACHE / f"synth-{n}-{agents}.json"
    ref = CACHE / f"synth-{n}-{agents}.ref.json"
    if not native.exists() or not ref.exists():
        tr = ot.synth(events=n, agents=agents, seed=0)
        ot.dump(tr, native)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.write_bytes(msgspec.json.encode(ot.to_reference(tr)))
    return native, ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="*", default=[200_000, 1_000_000])
    ap.add_argument("--metrics-size", type=int, nargs="*", default=[200_000],
                    help="sizes of the metrics group (e.g. 200000 1000000; 1,000 agents each)")
    ap.add_argument("--jsonschema-repeats", type=int, default=3,
                    help="runs of the jsonschema anchor (only at the smallest size; 0 = skip)")
    ap.add_argument("--quick", action="store_true", help="20k events, 3 runs, no jsonschema")
    ap.add_argument("--baseline", metavar="SRC", help="also time another orchestrace source tree (its src/ "
                    "folder, e.g. an older checkout) in the same runs, as help@base, validate@base, metrics@base")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.sizes, args.metrics_size, args.jsonschema_repeats = 3, [20_000], [20_000], 0

    import orchestrace
    from orchestrace.core.schema import reference_schema  # noqa: F401 - the schema file ships with the package

    py = sys.executable
    env = dict(os.environ)
    src = str(Path(orchestrace.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    results: list[tuple[str, dict[str, tuple[float, float, float, float]], dict[str, str]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: .pyc files exist (a private folder)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        scripts = {}
        for name, code in (("survey_check.py", SURVEY_CHECK), ("jsonschema_check.py", JSONSCHEMA_CHECK),
                           ("nx_critical_path.py", NX_CRITICAL_PATH)):
            scripts[name] = Path(tmp) / name
            scripts[name].write_text(code)
        schema = Path(orchestrace.__file__).parent / "data" / "reference_trace_schema.json"
        r = args.repeats

        if args.baseline:
            BASE_ENV.update(env, PYTHONPATH=os.pathsep.join([str(Path(args.baseline).resolve()),
                                                             *filter(None, [os.environ.get("PYTHONPATH")])]))
        base = bool(args.baseline)

        def with_base(group: dict[str, tuple[list[str], int]], name: str) -> dict[str, tuple[list[str], int]]:
            if base:
                group[f"{name}@base"] = (["@base", *group[name][0]], group[name][1])
            return group

        group = with_base({"bare": ([py, "-c", "pass"], r), "help": ([py, "-m", "orchestrace", "--help"], r)}, "help")
        results.append(("start-up", timed(group, env), {k: _shown(v[0]) for k, v in group.items()}))
        print_group(*results[-1])

        for n in args.sizes:
            native, ref = files(n)
            group = {
                "validate": ([py, "-m", "orchestrace", "validate", str(ref)], r),
                "validate/native": ([py, "-m", "orchestrace", "validate", str(native)], r),
                "survey-check": ([py, str(scripts["survey_check.py"]), str(ref)], r),
            }
            with_base(group, "validate")
            if args.jsonschema_repeats and n == min(args.sizes):
                group["jsonschema"] = ([py, str(scripts["jsonschema_check.py"]), str(ref), str(schema)],
                                       args.jsonschema_repeats)
            shown = {k: _shown(v[0]) for k, v in group.items()}
            results.append((f"validate, {n:,} events ({ref.stat().st_size / 1e6:.0f} MB)", timed(group, env), shown))
            print_group(*results[-1])

        for n in args.metrics_size:
            native, _ = files(n, agents=1000)
            group = {
                "metrics": ([py, "-m", "orchestrace", "metrics", str(native)], r),
                "networkx": ([py, str(scripts["nx_critical_path.py"]), str(native)], r),
            }
            with_base(group, "metrics")
            shown = {k: _shown(v[0]) for k, v in group.items()}
            results.append((f"metrics, {n:,} events, 1,000 agents", timed(group, env), shown))
            print_group(*results[-1])

    print(f"\nratios (medians of whole processes, same run; {args.repeats} runs each):")
    for title, res, _ in results:
        for name in [k for k in res if k.endswith("@base")]:
            mine = name.removesuffix("@base")
            print(f"  {title:40} {name} / {mine} = {res[name][0] / res[mine][0]:5.2f}× wall, "
                  f"{res[name][3] / res[mine][3]:5.2f}× cpu  (the --baseline tree over this one)")
    for title, res, _ in results:
        if "help" in res:
            extra = (res["help"][0] - res["bare"][0]) * 1e3
            cpu = (res["help"][3] - res["bare"][3]) * 1e3
            print(f"  {title:40} help − bare = {extra:6.1f} ms wall, {cpu:6.1f} ms cpu   "
                  f"[target ≤ 120 ms: {'met' if extra <= 120 else 'MISSED'}]")
        if "survey-check" in res:
            for mine in ("validate", "validate/native"):
                ratio = res["survey-check"][0] / res[mine][0]
                print(f"  {title:40} survey-check / {mine:16} = {ratio:5.2f}× wall "
                      f"({res['survey-check'][3] / res[mine][3]:5.2f}× cpu)   [target ≥ 3×: {'met' if ratio >= 3 else 'MISSED'}]")
            if "jsonschema" in res:
                print(f"  {title:40} jsonschema / validate              = {res['jsonschema'][0] / res['validate'][0]:5.1f}× wall "
                      f"({res['jsonschema'][3] / res['validate'][3]:5.1f}× cpu)")
        if "networkx" in res:
            ratio = res["networkx"][0] / res["metrics"][0]
            print(f"  {title:40} networkx / metrics                 = {ratio:5.2f}× wall "
                  f"({res['networkx'][3] / res['metrics'][3]:5.2f}× cpu)   [target ≥ 8×: {'met' if ratio >= 8 else 'MISSED'}]")


def _shown(argv: list[str]) -> str:
    tag = " (--baseline)" if argv[0] == "@base" else ""
    argv = argv[1:] if tag else argv
    return " ".join(["python", *(Path(a).name if "/" in a else a for a in argv[1:])]) + tag


def print_group(title: str, res: dict[str, tuple[float, float, float, float]], shown: dict[str, str]) -> None:
    print(f"{title}: median wall (min … max), median cpu")
    for name, (med, lo, hi, cpu) in res.items():
        print(f"  {name:16} {med * 1e3:8.1f} ms ({lo * 1e3:.0f} … {hi * 1e3:.0f})  cpu {cpu * 1e3:8.1f} ms   {shown[name]}",
              flush=True)


if __name__ == "__main__":
    main()
