"""The columnar dataset's layout: its three tables, their columns and Arrow types, the decoders.

One definition of what :mod:`orchestrace.core.dataset` writes and reads: the layout version, the
table files, ``(name, type, nullable)`` per column of each table (the column tables in that
module's docstring document them), the event fields stored under their own name, the enum
lookups and JSON decoders of the cells, and the Arrow schema of a table (pyarrow, lazily).

>>> TABLES, [name for name, _, _ in _EDGE_COLS]
(('traces.parquet', 'events.parquet', 'edges.parquet'), ['trace_id', 'src', 'dst', 'type'])
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import require
from ..vocab import Decision, EdgeType, EventType, Topology
from .trace import Signal

#: Version of the columnar layout (stored in every file's key-value metadata).
DATASET_VERSION = "1"

#: The three table files of a dataset folder.
TABLES = ("traces.parquet", "events.parquet", "edges.parquet")

_S, _F, _I, _B = "string", "float64", "int64", "bool"

_OUTCOME_COLS: list[tuple[str, str, bool]] = [
    ("has_outcome", _B, False), ("outcome_success", _B, True), ("outcome_score", _F, True),
    ("outcome_verifier", _S, True), ("outcome_answer_ref", _S, True),
]

# (name, type, nullable); "list" = list<string>, "map" = map<string, double>
_TRACE_COLS: list[tuple[str, str, bool]] = [
    ("trace_id", _S, False), ("task_id", _S, False), ("schema_version", _S, False),
    ("system", _S, True), ("topology", _S, True), ("n_events", _I, False), ("n_edges", _I, False),
    ("rewards", "map", False), ("costs", "map", False), ("metrics", "map", False),
    *_OUTCOME_COLS, ("signals", _S, False), ("meta", _S, False),
]

_EVENT_COLS: list[tuple[str, str, bool]] = [
    ("trace_id", _S, False), ("event_index", _I, False),
    ("id", _S, False), ("t", _F, False), ("t_end", _F, True), ("type", _S, False), ("agent", _S, False),
    ("role", _S, True), ("from", _S, True), ("to", _S, True), ("tool", _S, True),
    ("content_ref", _S, True), ("trusted", _B, True), ("tokens_in", _I, True), ("tokens_out", _I, True),
    ("cost", _F, True), ("error", _B, True), ("privileged", _B, True), ("content", _S, True),
    ("source", _S, True),
    ("decision_kind", _S, True), ("decision_action", _S, True), ("decision_alternatives", "list", True),
    ("decision_logprob", _F, True), ("decision_policy", _S, True), ("decision_step", _I, True),
    *_OUTCOME_COLS, ("attrs", _S, True),
]

_EDGE_COLS: list[tuple[str, str, bool]] = [
    ("trace_id", _S, False), ("src", _S, False), ("dst", _S, False), ("type", _S, False),
]

#: Event fields stored under their own name (``from`` is ``from_``).
_PLAIN = ["id", "t", "t_end", "agent", "role", "from_", "to", "tool", "content_ref", "trusted",
          "tokens_in", "tokens_out", "cost", "error", "privileged", "content", "source"]


_enc = msgspec.json.Encoder()

_EVENT_TYPES = {m.value: m for m in EventType}

_EDGE_TYPES = {m.value: m for m in EdgeType}

_DECISIONS = {m.value: m for m in Decision}

_TOPOLOGIES = {m.value: m for m in Topology}

_signals_decoder = msgspec.json.Decoder(tuple[Signal, ...])

_meta_decoder = msgspec.json.Decoder(dict[str, Any])


def _pa() -> Any:
    return require("pyarrow", extra="parquet")


def _schema(cols: list[tuple[str, str, bool]], table: str) -> Any:
    pa = _pa()
    types = {_S: pa.string(), _F: pa.float64(), _I: pa.int64(), _B: pa.bool_(),
             "list": pa.list_(pa.string()), "map": pa.map_(pa.string(), pa.float64())}
    return pa.schema([pa.field(n, types[t], nullable=nul) for n, t, nul in cols],
                     metadata={"orchestrace.table": table, "orchestrace.dataset_version": DATASET_VERSION})
