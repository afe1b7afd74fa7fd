"""Columns straight from the bytes? The candidates of issue 43, timed against the typed decode.

    python benchmarks/decode_candidates.py                 # 200k events
    python benchmarks/decode_candidates.py --events 1000000 --repeats 3

``orchestrace validate`` and the graph core need ~15 per-event columns (ids, types, agents,
times, tokens, edge ends …). Today they come from a typed msgspec decode into ``Trace``
structs, then one C-level ``map`` pass per column. Each candidate below would write columns
without per-event structs; each is timed on the same file (the reference file of
``benchmarks/validate.py``), in-process, median of ``--repeats``:

* ``typed decode``         — ``msgspec.json.Decoder(Trace)``: the structural check itself;
* ``+ columns (structs)``  — the typed decode, then every column that ``validate`` and
  ``TraceGraph`` read (one shared ``Columns``: what ``orchestrace metrics`` does);
  ``… plain passes`` pulls them one column at a time over the whole trace and sorts the ids
  (the path before the cache-blocked walk of ``core._blocked`` and the hash table of
  ``core._idtable``); ``… blocked, no table`` and ``… plain passes, table`` take one of the two;
* ``array_like Struct``    — msgspec's array-like structs decode JSON *arrays* only: on the
  object events of a trace the decode fails (printed), so it cannot be a path for them;
* ``Raw spans``            — ``events: list[msgspec.Raw]``: the byte span of every event, no
  values (the floor of any msgspec-based second pass);
* ``untyped (msgspec)``, ``orjson.loads``, ``json.loads`` — dicts and lists, no checks;
* ``pyarrow read_json``    — the events as NDJSON (Raw spans joined by newlines) read by
  Arrow's JSON reader with an explicit schema of 8 columns (needs ``orchestrace[parquet]``);
* ``scanner (1 column)``   — one regex pass that pulls the ``"t":`` numbers out of the bytes
  (``re.findall`` + a numpy float parse): the cost of *one* column of a hand-rolled scanner,
  before any alignment of keys to events (nested objects, key order) or any check.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import files  # noqa: E402  (the cached synthetic files)

from orchestrace.core._dag import Columns  # noqa: E402
from orchestrace.core.trace import Trace  # noqa: E402


class _RawEvents(msgspec.Struct):
    events: list[msgspec.Raw]
    edges: list[msgspec.Raw] = []


class _ArrayEvent(msgspec.Struct, array_like=True):
    id: str
    t: float


class _ArrayTrace(msgspec.Struct):
    events: list[_ArrayEvent]


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
        del res
    return statistics.median(times)


def all_columns(data: bytes, blocked: bool = True, table: bool = True) -> Any:
    """Typed decode, then every column the validator and the graph core read (``blocked``: the
    cache-blocked walk; ``table``: the id hash table — off, the plain passes and the sorted index)."""
    import orchestrace as ot
    from orchestrace.analysis.graph import TraceGraph
    from orchestrace.core import _idtable
    from orchestrace.core import _validate as v

    old = v._BLOCKED_MIN_EVENTS, _idtable.MAX_ROUNDS
    v._BLOCKED_MIN_EVENTS, _idtable.MAX_ROUNDS = (1 if blocked else 1 << 62), (old[1] if table else 0)
    try:
        tr = msgspec.json.decode(data, type=Trace)
        cols = Columns(tr)
        ot.validate(tr, columns=cols)
        g = TraceGraph.from_trace(tr, columns=cols)
        return tr, g.tokens_in, g.error, g.privileged, g.untrusted
    finally:
        v._BLOCKED_MIN_EVENTS, _idtable.MAX_ROUNDS = old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--columns-only", action="store_true", help="only the typed decode and the column rows")
    args = ap.parse_args()
    _, ref = files(args.events)
    data = ref.read_bytes()
    raw = msgspec.json.decode(data, type=_RawEvents)
    gc.disable()  # as validate does: millions of short-lived objects
    rows: dict[str, float] = {}
    rows["typed decode"] = median_time(lambda: msgspec.json.decode(data, type=Trace), args.repeats)
    rows["+ columns (structs)"] = median_time(lambda: all_columns(data), args.repeats)
    rows["+ columns, plain passes"] = median_time(lambda: all_columns(data, False, False), args.repeats)
    rows["+ columns, blocked, no table"] = median_time(lambda: all_columns(data, True, False), args.repeats)
    rows["+ columns, plain passes, table"] = median_time(lambda: all_columns(data, False, True), args.repeats)
    if args.columns_only:
        return _print(rows, args, data, ref)
    try:
        msgspec.json.decode(data, type=_ArrayTrace)
        print("array_like Struct: decoded (unexpected)")
    except msgspec.ValidationError as exc:
        print(f"array_like Struct: not a path for object events ({exc})")
    rows["Raw spans"] = median_time(lambda: msgspec.json.decode(data, type=_RawEvents), args.repeats)
    rows["untyped (msgspec)"] = median_time(lambda: msgspec.json.decode(data), args.repeats)
    try:
        import orjson

        rows["orjson.loads"] = median_time(lambda: orjson.loads(data), args.repeats)
    except ImportError:
        print("orjson: not installed")
    import json

    rows["json.loads"] = median_time(lambda: json.loads(data), max(1, args.repeats // 2))
    try:
        import pyarrow as pa
        import pyarrow.json as pj

        schema = pa.schema([("id", pa.string()), ("t", pa.float64()), ("type", pa.string()), ("agent", pa.string()),
                            ("to", pa.string()), ("t_end", pa.float64()), ("tokens_in", pa.int64()),
                            ("tokens_out", pa.int64())])
        opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")

        def arrow() -> Any:
            nd = b"\n".join(map(bytes, msgspec.json.decode(data, type=_RawEvents).events))
            return pj.read_json(pa.BufferReader(nd), parse_options=opts)

        rows["pyarrow read_json (8 columns)"] = median_time(arrow, args.repeats)
    except ImportError:
        print("pyarrow: not installed (orchestrace[parquet])")
    t_pattern = re.compile(rb'"t":(-?[0-9][0-9.eE+-]*)')
    rows["scanner (1 column, regex)"] = median_time(
        lambda: np.array(t_pattern.findall(data)).astype(np.float64), args.repeats)
    del raw
    _print(rows, args, data, ref)


def _print(rows: dict[str, float], args: Any, data: bytes, ref: Path) -> None:
    base = rows["typed decode"]
    print(f"{args.events:,} events ({len(data) / 1e6:.0f} MB, {ref.name}); medians of {args.repeats}")
    for name, s in rows.items():
        print(f"  {name:32} {s:7.3f} s   {s / base:5.2f}× the typed decode")


if __name__ == "__main__":
    main()
