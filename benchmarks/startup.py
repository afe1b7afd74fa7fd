"""Benchmark: start-up as a user feels it — whole processes, medians, ratios last.

    python benchmarks/startup.py               # 21 runs of each command
    python benchmarks/startup.py --repeats 5   # quicker

Timed (wall clock of the whole process, runs interleaved so that machine noise hits every
command alike):
  bare       python -c pass                                  (the anchor)
  import     python -c "import orchestrace"
  help       python -m orchestrace --help
  version    python -m orchestrace --version
  validate   python -m orchestrace validate small.json       (a 200-event synth trace)
  CMD -h     python -m orchestrace CMD --help                (with --all-commands: every command
                                                             and group, target ≤ 120 ms each, issue 43)
CPU time (user + system, from ``getrusage``) is printed too: on a shared machine it is
less sensitive to other load than wall clock. The commands run the orchestrace that this interpreter imports (``python -m``, as the
``orchestrace`` console script does, plus runpy's few milliseconds). Target (issue 18):
help − bare ≤ 120 ms.
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
from pathlib import Path


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) seconds of one whole process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--all-commands", action="store_true", help="also time CMD --help for every command and group")
    args = ap.parse_args()

    from orchestrace import dump, synth

    py = sys.executable
    env = dict(os.environ)
    src = str(Path(__import__("orchestrace").__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory() as tmp:
        # An installed package has its .pyc files: let the warm-up runs write them (to a
        # private folder, not the source tree) even where PYTHONDONTWRITEBYTECODE is set.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        small = Path(tmp) / "small.json"
        dump(synth(events=200, agents=4, seed=0), small)
        commands = {
            "bare": [py, "-c", "pass"],
            "import": [py, "-c", "import orchestrace"],
            "help": [py, "-m", "orchestrace", "--help"],
            "version": [py, "-m", "orchestrace", "--version"],
            "validate": [py, "-m", "orchestrace", "validate", str(small)],
        }
        if args.all_commands:
            commands.update({f"{' '.join(p)} -h": [py, "-m", "orchestrace", *p, "--help"] for p in command_paths()})
        for name, argv in list(commands.items()):  # warm the file cache and the .pyc files
            try:
                run_once(argv, env)
            except subprocess.CalledProcessError:
                print(f"  ({name}: this version of orchestrace fails it; not timed)")
                del commands[name]
        times: dict[str, list[float]] = {k: [] for k in commands}
        cpu: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.repeats):
            for name, argv in commands.items():
                wall, used = run_once(argv, env)
                times[name].append(wall)
                cpu[name].append(used)

    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"orchestrace from {src}; {args.repeats} runs each; medians of wall clock (min … max) and of CPU time")
    for name, argv in commands.items():
        shown = " ".join(["python", *argv[1:]]).replace(str(small), small.name)
        print(f"  {name:18} {med[name] * 1e3:7.1f} ms  ({min(times[name]) * 1e3:.0f} … "
              f"{max(times[name]) * 1e3:.0f})  cpu {med_cpu[name] * 1e3:6.1f} ms  {shown}")
    print("over a bare interpreter (wall: median − bare, median / bare; cpu: median − bare):")
    for name in (n for n in commands if n != "bare"):
        extra = (med[name] - med["bare"]) * 1e3
        helps = name == "help" or name.endswith(" -h")
        target = "  target ≤ 120 ms: " + ("met" if extra <= 120 else "MISSED") if helps else ""
        print(f"  {name:18} +{extra:6.1f} ms   {med[name] / med['bare']:5.2f}×   cpu "
              f"+{(med_cpu[name] - med_cpu['bare']) * 1e3:6.1f} ms{target}")

def command_paths() -> list[list[str]]:
    """Every command and group of the CLI, as the words that name it (``["env", "run"]``)."""
    import typer.main

    from orchestrace.cli import app

    out: list[list[str]] = []

    def walk(cmd: object, prefix: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return out


if __name__ == "__main__":
    main()
