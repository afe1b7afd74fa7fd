"""Build the project's real vote corpus with SmolLM2-135M (``src/orchestrace/data/corpora/smollm2-v1``).

Two steps::

    # 1. collect: S shards in parallel, each its own local SmolLM2 server (1 thread, 4 slots)
    #    and its own task seeds (shard k: --seed k*100000); resumable (run it again to continue)
    python benchmarks/collect_corpus.py collect --work /work/corpus-run --shards 3 --tasks 1600

    # 2. package: the finished tasks of every shard, gzipped, one manifest, validated by the reader
    python benchmarks/collect_corpus.py package --work /work/corpus-run \
        --dest src/orchestrace/data/corpora/smollm2-v1

``--team`` collects the heterogeneous-team corpus instead (``smollm2-team-v1``: ``orchestrace
collect team`` with members cold, hot, calc and reviser, 3 rounds, 12 tokens; the fresh set
``smollm2-team-fresh-v1`` is one more shard with ``--seed 500000``), packaged the same way.

Every shard runs ``orchestrace collect run SHARD -n TASKS -R 4 -W 2 --seed k*100000`` with the
default cells ``add:1,add:2,mentor:1,mentor:2`` (cycled), temperature 0.7, 16 tokens, stop at a
newline, token log-probs. ``package`` may run while shards still collect: it takes each
shard's complete traces only (up to its last end record) and says how many tasks that is.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROUNDS, WIDTH, CELLS = 4, 2, "add:1,add:2,mentor:1,mentor:2"
TEAM_ROUNDS, TEAM_MAX_TOKENS = 3, 12  # the team corpus (--team): cold, hot, calc, reviser every round
SHARD_SEED = 100_000


def shard_dirs(work: Path) -> list[Path]:
    return sorted(p for p in work.iterdir() if p.is_dir() and p.name.startswith("shard-"))


def cmd_collect(args: argparse.Namespace) -> int:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    procs = []
    for k in range(args.shards):
        d = work / f"shard-{k}"
        resume = (d / "traces.jsonl").exists()
        seed = args.seed + k * SHARD_SEED
        if args.team:
            cmd = [sys.executable, "-m", "orchestrace", "collect", "team", str(d), "-n", str(args.tasks),
                   "-R", str(TEAM_ROUNDS), "--max-tokens", str(TEAM_MAX_TOKENS), "--suites", CELLS,
                   "--seed", str(seed), "--concurrency", "4"]
        else:
            cmd = [sys.executable, "-m", "orchestrace", "collect", "run", str(d), "-n", str(args.tasks),
                   "-R", str(ROUNDS), "-W", str(WIDTH), "--suites", CELLS, "--seed", str(seed),
                   "--concurrency", "4"]
        cmd += ["--resume"] if resume else []
        log = open(work / f"shard-{k}.log", "a")  # noqa: SIM115 (the child owns it)
        procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
        print(" ".join(cmd), flush=True)
    return max(p.wait() for p in procs)


def complete_prefix(path: Path) -> tuple[bytes, int]:
    """The bytes of ``path`` up to its last complete trace (an ``end`` record), and the trace count."""
    data = path.read_bytes()
    good, n, pos = 0, 0, 0
    for line in data.splitlines(keepends=True):
        pos += len(line)
        if line.endswith(b"\n") and line.startswith(b'{"end":'):
            good, n = pos, n + 1
    return data[:good], n


def cmd_package(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from orchestrace.logged.runs import load_logged_runs

    work, dest = Path(args.work), Path(args.dest)
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("traces*.jsonl.gz"):
        old.unlink()
    shards, base = [], None
    for k, d in enumerate(shard_dirs(work)):
        man = json.loads((d / "manifest.json").read_text())
        data, n = complete_prefix(d / "traces.jsonl")
        (dest / f"traces-{k}.jsonl.gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        cfg = dict(man["config"])
        shards.append({"shard": d.name, "seed": cfg.pop("seed"), "planned_tasks": cfg.pop("n_tasks"),
                       "tasks": n, "wall_s": man.get("wall_s_total"), "sessions": man.get("sessions", [])})
        if base is None:
            base = {"format": man.get("format", "orchestrace-vote-corpus-v1"), "config": cfg, "model": man["model"],
                    "server": man["server"], "versions": man["versions"]}
        elif cfg != base["config"] or man["server"].get("model_sha256") != base["server"].get("model_sha256"):
            raise SystemExit(f"{d}: a different config or model than the first shard; not one corpus")
    assert base is not None, f"no shard-* folders in {work}"
    manifest = {
        "name": dest.name, **base,
        "shards": shards, "tasks": sum(s["tasks"] for s in shards),
        "wall_s_total": round(sum(s["wall_s"] or 0 for s in shards), 1),
        "packaged_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "split": "by task id: sha256(task_id)[:8] as an integer mod 100: < 60 train, < 80 validation, else test",
        "licence": "model SmolLM2-135M-Instruct: Apache-2.0; tasks generated by orchestrace (see README.md)",
        "command": args.command or ("python benchmarks/collect_corpus.py collect --work WORK --shards 3 --tasks 1600"
                                    " && python benchmarks/collect_corpus.py package --work WORK --dest "
                                    + str(args.dest)),
    }
    manifest["config"]["cells"] = [list(c) for c in manifest["config"]["cells"]]
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    runs = load_logged_runs(dest)  # strict: any bad run fails the packaging
    counts = {s: int((runs.split == s).sum()) for s in ("train", "validation", "test")}
    manifest["split_counts"] = counts
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in dest.iterdir())
    print(f"{dest}: {runs.shape[0]} tasks x {runs.shape[1]} rounds x {runs.shape[2]} attempts; splits {counts}; "
          f"{size / 1e6:.2f} MB on disk")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--work", required=True)
    c.add_argument("--shards", type=int, default=3)
    c.add_argument("--tasks", type=int, default=1600, help="tasks per shard")
    c.add_argument("--team", action="store_true", help="collect the team corpus (`collect team`) instead")
    c.add_argument("--seed", type=int, default=0, help="first task seed (shard k adds k*100000)")
    p = sub.add_parser("package")
    p.add_argument("--work", required=True)
    p.add_argument("--dest", default="src/orchestrace/data/corpora/smollm2-v1")
    p.add_argument("--command", default="", help="the command line to record in the manifest")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return cmd_collect(args) if args.cmd == "collect" else cmd_package(args)


if __name__ == "__main__":
    raise SystemExit(main())
