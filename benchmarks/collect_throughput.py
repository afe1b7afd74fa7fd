"""Collection throughput: ``collect run`` and ``collect team`` against a plain concurrent client (issue 43, item 4).

Both sides talk to **one** local SmolLM2 server (xllamacpp, ``--threads`` compute threads, ``--slots`` request
slots) and keep ``--slots`` requests in flight:

- **collect**: the library's collection (:func:`orchestrace.collection.collect.collect` with a
  :class:`CollectConfig` for ``run`` or a :class:`TeamConfig` for ``team``), ``concurrency = slots``, into a
  temporary folder — everything it does per task included (prompts, grading, trace building, the fsynced append).
- **plain**: the very same request bodies (recorded from an untimed pass of the collection, which also warms the
  server), sent by a bare ``httpx.AsyncClient`` with a semaphore of ``slots``: no retries, no parsing, no traces.
  For a team the plain client does not wait for a round's answers before the reviser's call: it is an upper
  bound, not a like-for-like replay.

Per repeat the two run back to back, their order alternating; the figure is completion tokens per second
(``usage.completion_tokens`` summed over the calls / wall clock), medians over ``--repeats``, and the ratio
collect / plain per repeat (paired). The machine load is recorded before and after::

    OMP_NUM_THREADS=1 python benchmarks/collect_throughput.py --tasks 24 --slots 2 --repeats 3 \\
        --json benchmarks/collect_throughput_results.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def _config(kind: str, n_tasks: int, seed: int) -> Any:
    from orchestrace.collection.collect import CollectConfig
    from orchestrace.collection.team import TeamConfig

    cells = (("add", 1), ("mentor", 1))
    if kind == "run":
        return CollectConfig(cells=cells, n_tasks=n_tasks, rounds=2, width=2, seed=seed)
    return TeamConfig(cells=cells, n_tasks=n_tasks, rounds=2, seed=seed)


def _collect(kind: str, n_tasks: int, seed: int, base_url: str, model: str, slots: int) -> tuple[float, int, int]:
    """One timed collection into a temporary folder: (wall seconds, completion tokens, calls)."""
    from orchestrace.collection.collect import collect

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = collect(_config(kind, n_tasks, seed), Path(tmp) / "c", base_url=base_url, model=model,
                      concurrency=slots)
        return time.perf_counter() - t0, res.completion_tokens, res.calls


def _record_bodies(kind: str, n_tasks: int, seed: int, base_url: str, model: str, slots: int) -> list[dict[str, Any]]:
    """The request bodies the collection sends (an untimed pass with ``ChatClient._call`` wrapped)."""
    from orchestrace.llm.client import ChatClient

    bodies: list[dict[str, Any]] = []
    original = ChatClient._call

    async def recording(self: Any, http: Any, body: dict[str, Any], path: str) -> Any:
        bodies.append({"path": path, "body": json.loads(json.dumps(body))})
        return await original(self, http, body, path)

    ChatClient._call = recording  # type: ignore[method-assign]
    try:
        _collect(kind, n_tasks, seed, base_url, model, slots)
    finally:
        ChatClient._call = original  # type: ignore[method-assign]
    return bodies


async def _plain_async(bodies: list[dict[str, Any]], base_url: str, slots: int) -> tuple[float, int]:
    import httpx

    sem = asyncio.Semaphore(slots)
    tokens = 0
    limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
    async with httpx.AsyncClient(timeout=600.0, limits=limits) as http:
        async def one(item: dict[str, Any]) -> None:
            nonlocal tokens
            async with sem:
                resp = await http.post(base_url.rstrip("/") + item["path"], json=item["body"])
                resp.raise_for_status()
                tokens += int(resp.json().get("usage", {}).get("completion_tokens") or 0)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - t0, tokens


def _plain(bodies: list[dict[str, Any]], base_url: str, slots: int) -> tuple[float, int, int]:
    wall, tokens = asyncio.run(_plain_async(bodies, base_url, slots))
    return wall, tokens, len(bodies)


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown"


def measure(kind: str, *, tasks: int, slots: int, repeats: int, threads: int, seed: int = 0) -> dict[str, Any]:
    """Paired repeats of collect vs plain on one server; medians of tokens/s and of the per-repeat ratio."""
    from orchestrace.llm.local import LocalServer

    rows: list[dict[str, Any]] = []
    with LocalServer(threads=threads, parallel=slots, ctx=1024 * slots) as srv:
        base, model = srv.base_url or "", srv.model
        bodies = _record_bodies(kind, tasks, seed, base, model, slots)
        for rep in range(repeats):
            order = ("collect", "plain") if rep % 2 == 0 else ("plain", "collect")
            row: dict[str, Any] = {"repeat": rep, "order": list(order)}
            for side in order:
                wall, tok, calls = (_collect(kind, tasks, seed, base, model, slots) if side == "collect"
                                    else _plain(bodies, base, slots))
                row[side] = {"wall_s": round(wall, 3), "completion_tokens": tok, "calls": calls,
                             "tokens_per_s": round(tok / wall, 2)}
            row["ratio"] = round(row["collect"]["tokens_per_s"] / row["plain"]["tokens_per_s"], 4)
            rows.append(row)
            print(f"{kind} repeat {rep}: collect {row['collect']['tokens_per_s']} tok/s, "
                  f"plain {row['plain']['tokens_per_s']} tok/s, ratio {row['ratio']}", flush=True)
    return {
        "kind": kind, "tasks": tasks, "calls_per_pass": len(bodies), "slots": slots, "threads": threads,
        "collect_tokens_per_s_median": round(statistics.median(r["collect"]["tokens_per_s"] for r in rows), 2),
        "plain_tokens_per_s_median": round(statistics.median(r["plain"]["tokens_per_s"] for r in rows), 2),
        "ratio_median": round(statistics.median(r["ratio"] for r in rows), 4),
        "ratio_min": min(r["ratio"] for r in rows), "ratio_max": max(r["ratio"] for r in rows),
        "repeats": rows,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="run,team", help="comma-separated: run, team")
    ap.add_argument("--tasks", type=int, default=24)
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"load_before": _loadavg(), "results": []}
    for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
        out["results"].append(measure(kind, tasks=args.tasks, slots=args.slots, repeats=args.repeats,
                                      threads=args.threads))
    out["load_after"] = _loadavg()
    text = json.dumps(out, indent=1)
    if args.json is not None:
        from orchestrace.core.io import atomic_write

        atomic_write(args.json, (text + "\n").encode())
    for r in out["results"]:
        print(f"{r['kind']}: collect {r['collect_tokens_per_s_median']} tok/s, plain "
              f"{r['plain_tokens_per_s_median']} tok/s, ratio median {r['ratio_median']} "
              f"[{r['ratio_min']}, {r['ratio_max']}]")
    print(f"load before: {out['load_before']}; after: {out['load_after']}")
    return out


if __name__ == "__main__":
    main()
