"""The columnar dataset: millions of traces as three Parquet tables (needs ``orchestrace[parquet]``).

A dataset is a folder with three tables, readable by DuckDB, Polars, pandas, Ray Data or plain
pyarrow without orchestrace. Rows appear in dataset order: the traces in the order they were
written, each trace's events in ``event_index`` order and its edges in their original order,
so ``read_dataset`` rebuilds every trace exactly (a lossless round trip of any valid trace).

``traces.parquet`` — one row per trace

==========================  ====================  ===========================================
column                      type                  meaning
==========================  ====================  ===========================================
``trace_id``                string, required      ``Trace.trace_id`` (not necessarily unique)
``task_id``                 string, required      ``Trace.task_id``
``schema_version``          string, required      native format version
``system``, ``topology``    string                null when absent
``n_events``, ``n_edges``   int64, required       rows this trace owns in the other tables
``rewards``, ``costs``,     map<string, double>   the trace's dicts (key order kept;
``metrics``                                       DuckDB ``MAP``, Polars list of structs)
``has_outcome``             bool, required        ``Trace.outcome is not None``
``outcome_success``         bool                  ``Trace.outcome.success``
``outcome_score``           double                ``Trace.outcome.score``
``outcome_verifier``        string                ``Trace.outcome.verifier``
``outcome_answer_ref``      string                ``Trace.outcome.answer_ref``
``signals``                 string, required      JSON array of ``Signal`` objects (``[]``)
``meta``                    string, required      JSON object (``{}``)
==========================  ====================  ===========================================

``events.parquet`` — one row per event

==============================  ============  ===============================================
column                          type          meaning
==============================  ============  ===============================================
``trace_id``                    string        owning trace (join key with ``traces``)
``event_index``                 int64         position of the event in ``Trace.events``
``id``, ``type``, ``agent``     string        required ``Event`` fields (``type`` = enum value)
``t``                           double        start time (required)
``t_end``                       double        end time; duration = ``t_end - t``
``role``, ``from``, ``to``,     string        the ``Event`` fields of the same name
``tool``, ``content_ref``,                    (``from`` is ``Event.from_``)
``content``, ``source``
``trusted``, ``error``,         bool          the ``Event`` flags
``privileged``
``tokens_in``, ``tokens_out``   int64         token counts
``cost``                        double        money cost (USD)
``decision_kind``               string        O1–O5 kind; null ⇔ ``Event.decision is None``
``decision_action``             string        chosen action
``decision_alternatives``       list<string>  legal actions (``[]`` when none were listed)
``decision_logprob``            double        behaviour log-probability
``decision_policy``             string        policy name
``decision_step``               int64         decision index in the episode
``has_outcome``                 bool          ``Event.outcome is not None``
``outcome_success``, …          …             as in ``traces`` (``_score``, ``_verifier``,
                                              ``_answer_ref``)
``attrs``                       string        JSON object of extra properties; null ⇔ None
==============================  ============  ===============================================

``edges.parquet`` — one row per edge: ``trace_id``, ``src``, ``dst``, ``type`` (all strings).

Null means "absent" everywhere (the struct default). Each file carries the key-value
metadata ``orchestrace.table`` and ``orchestrace.dataset_version`` (:data:`DATASET_VERSION`).
:func:`write_dataset` streams: it buffers about ``rows_per_group`` events before writing a
row group, so a million traces never sit in memory at once; it writes to temporary names and
renames at the end, so a crash never leaves a half-written dataset that looks complete.

Example query (DuckDB): ``SELECT type, sum(tokens_out) FROM 'ds/events.parquet' GROUP BY 1``.

>>> import tempfile
>>> from orchestrace import synth
>>> folder = tempfile.mkdtemp()
>>> traces = [synth(events=50, agents=3, seed=s) for s in range(3)]
>>> write_dataset(traces, folder)
3
>>> list(read_dataset(folder)) == traces
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from .._problems import Problem
from ..errors import ConfigError, TraceDecodeError, TraceError, require
from ..vocab import Severity
from ._dataset_schema import (
    _DECISIONS,
    _EDGE_COLS,
    _EDGE_TYPES,
    _EVENT_COLS,
    _EVENT_TYPES,
    _OUTCOME_COLS,
    _PLAIN,
    _TOPOLOGIES,
    _TRACE_COLS,
    DATASET_VERSION,
    TABLES,
    _enc,
    _meta_decoder,
    _pa,
    _schema,
    _signals_decoder,
)
from .trace import DecisionPayload, Edge, Event, Outcome, Trace

__all__ = ["DATASET_VERSION", "TABLES", "count_traces", "is_dataset", "read_dataset", "write_dataset"]

_DEFAULT_ROWS = 128 * 1024


def is_dataset(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a folder holding ``traces.parquet`` (a columnar dataset).

    >>> is_dataset(".")
    False
    """
    p = Path(path)
    return p.is_dir() and (p / "traces.parquet").is_file()


# ----------------------------------------------------------------------------- writing
def _json_str(obj: Any) -> str:
    return _enc.encode(obj).decode()


def _outcome_columns(outs: list[Outcome | None]) -> dict[str, list[Any]]:
    if not any(o is not None for o in outs):
        n = len(outs)
        return {"has_outcome": [False] * n, "outcome_success": [None] * n, "outcome_score": [None] * n,
                "outcome_verifier": [None] * n, "outcome_answer_ref": [None] * n}
    return {
        "has_outcome": [o is not None for o in outs],
        "outcome_success": [None if o is None else o.success for o in outs],
        "outcome_score": [None if o is None else o.score for o in outs],
        "outcome_verifier": [None if o is None else o.verifier for o in outs],
        "outcome_answer_ref": [None if o is None else o.answer_ref for o in outs],
    }


def _trace_columns(traces: list[Trace]) -> dict[str, list[Any]]:
    get = {f: list(map(attrgetter(f), traces)) for f in ("trace_id", "task_id", "schema_version", "system")}
    return {
        **get,
        "topology": list(map(attrgetter("topology"), traces)),
        "n_events": [len(t.events) for t in traces],
        "n_edges": [len(t.edges) for t in traces],
        "rewards": [list(t.rewards.items()) for t in traces],
        "costs": [list(t.costs.items()) for t in traces],
        "metrics": [list(t.metrics.items()) for t in traces],
        **_outcome_columns([t.outcome for t in traces]),
        "signals": [_json_str(t.signals) for t in traces],
        "meta": [_json_str(t.meta) for t in traces],
    }


def _event_columns(traces: list[Trace]) -> dict[str, Any]:
    import numpy as np

    pa = _pa()
    evs = [e for t in traces for e in t.events]
    counts = [len(t.events) for t in traces]
    cols: dict[str, Any] = {
        "trace_id": pa.array([t.trace_id for t in traces], pa.string()).take(
            pa.array(np.repeat(np.arange(len(traces), dtype=np.int64), counts))),
        "event_index": pa.array(np.concatenate([np.arange(c, dtype=np.int64) for c in counts])
                                if counts else np.zeros(0, np.int64)),
    }
    for f in _PLAIN:
        cols["from" if f == "from_" else f] = list(map(attrgetter(f), evs))
    cols["type"] = list(map(attrgetter("type"), evs))  # str enums: arrow reads their value
    decs = list(map(attrgetter("decision"), evs))
    names = ("decision_kind", "decision_action", "decision_alternatives", "decision_logprob",
             "decision_policy", "decision_step")
    if any(d is not None for d in decs):
        cols["decision_kind"] = [None if d is None else d.kind for d in decs]
        cols["decision_action"] = [None if d is None else d.action for d in decs]
        cols["decision_alternatives"] = [None if d is None else list(d.alternatives) for d in decs]
        cols["decision_logprob"] = [None if d is None else d.logprob for d in decs]
        cols["decision_policy"] = [None if d is None else d.policy for d in decs]
        cols["decision_step"] = [None if d is None else d.step for d in decs]
    else:
        cols.update(dict.fromkeys(names))
    cols.update(_outcome_columns(list(map(attrgetter("outcome"), evs))))
    cols["attrs"] = [None if a is None else _json_str(a) for a in map(attrgetter("attrs"), evs)]
    return cols


def _edge_columns(traces: list[Trace]) -> dict[str, list[Any]]:
    eds = [d for t in traces for d in t.edges]
    return {
        "trace_id": [t.trace_id for t in traces for _ in t.edges],
        "src": list(map(attrgetter("src"), eds)),
        "dst": list(map(attrgetter("dst"), eds)),
        "type": list(map(attrgetter("type"), eds)),
    }


def _table(schema: Any, cols: dict[str, Any], n: int) -> Any:
    pa = _pa()
    arrays = []
    for field in schema:
        v = cols[field.name]
        if v is None:
            arrays.append(pa.nulls(n, field.type))
        elif isinstance(v, pa.Array):
            arrays.append(v)
        else:
            arrays.append(pa.array(v, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def write_dataset(traces: Iterable[Trace], folder: str | os.PathLike[str], *,
                  rows_per_group: int = _DEFAULT_ROWS) -> int:
    """Write traces as a columnar dataset folder (``traces``/``events``/``edges.parquet``); return the count.

    Streams: traces are buffered until about ``rows_per_group`` events (or traces) are
    pending, then written as row groups, so ``traces`` may be a generator over millions of
    traces. The folder is created if needed; existing tables in it are replaced only once
    the new ones are complete. Raises :class:`~orchestrace.errors.TraceError` when a trace
    holds a value the columns cannot store (an int beyond int64, a non-JSON ``meta`` value).

    >>> import tempfile
    >>> from orchestrace.core.builder import TraceBuilder
    >>> b = TraceBuilder("t1"); _ = b.add("spawn", "orchestrator", t=0, to="w1")
    >>> folder = tempfile.mkdtemp()
    >>> write_dataset([b.build()], folder, rows_per_group=1000)
    1
    >>> sorted(p.name for p in Path(folder).iterdir())
    ['edges.parquet', 'events.parquet', 'traces.parquet']
    """
    if rows_per_group < 1:
        raise ConfigError(f"rows_per_group must be >= 1, got {rows_per_group}")
    pa = _pa()
    pq = require("pyarrow.parquet", extra="parquet")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    specs = [("traces", _TRACE_COLS, _trace_columns), ("events", _EVENT_COLS, _event_columns),
             ("edges", _EDGE_COLS, _edge_columns)]
    schemas = [_schema(cols, name) for name, cols, _ in specs]
    tmp = [out / f".{name}.parquet.orchestrace-tmp" for name, _, _ in specs]
    writers = [pq.ParquetWriter(str(p), s, compression="zstd") for p, s in zip(tmp, schemas, strict=True)]
    n_traces = 0
    pending: list[Trace] = []
    n_pending = 0

    def flush() -> None:
        counts = (len(pending), sum(len(t.events) for t in pending), sum(len(t.edges) for t in pending))
        for (_, _, build), schema, w, n in zip(specs, schemas, writers, counts, strict=True):
            try:
                table = _table(schema, build(pending), n)
            except (pa.ArrowException, OverflowError, TypeError, ValueError, msgspec.EncodeError) as exc:
                ids = ", ".join(repr(t.trace_id) for t in pending[:3]) + (" …" if len(pending) > 3 else "")
                raise TraceError(f"cannot store trace(s) {ids} in {schema.metadata[b'orchestrace.table'].decode()}"
                                 f".parquet: {type(exc).__name__}: {exc}") from None
            w.write_table(table, row_group_size=rows_per_group)
        pending.clear()

    ok = False
    try:
        for tr in traces:
            pending.append(tr)
            n_traces += 1
            n_pending += len(tr.events) + 1
            if n_pending >= rows_per_group:
                flush()
                n_pending = 0
        if pending:
            flush()
        ok = True
    finally:
        for w in writers:
            w.close()
        if ok:
            for (name, _, _), p in zip(specs, tmp, strict=True):
                os.replace(p, out / f"{name}.parquet")
        else:
            for p in tmp:
                p.unlink(missing_ok=True)
    return n_traces


# ----------------------------------------------------------------------------- reading
def _problem(code: str, path: str, message: str, hint: str = "") -> Problem:
    return Problem(code=code, severity=Severity.ERROR, path=path, message=message, hint=hint)


def _fail(code: str, path: str, message: str, hint: str = "") -> TraceDecodeError:
    return TraceDecodeError(f"{path}: {message}", [_problem(code, path, message, hint)])


class _Table:
    """Batches of one table as dicts of Python lists, with a row cursor for error locations."""

    def __init__(self, folder: Path, name: str, cols: list[tuple[str, str, bool]], batch_rows: int,
                 rows: tuple[int, int] | None = None) -> None:
        pq = require("pyarrow.parquet", extra="parquet")
        pa = _pa()
        self.where = str(folder / name)
        self.schema = _schema(cols, name.split(".")[0])
        self.required = [n for n, _, nullable in cols if not nullable]
        path = folder / name
        if not path.is_file():
            raise _fail("io.not-found", self.where, "table is missing",
                        f"a dataset folder holds {', '.join(TABLES)}; rewrite it with write_dataset "
                        "or `orchestrace convert … --to parquet`")
        try:
            self.file = pq.ParquetFile(str(path))
            have = self.file.schema_arrow
        except OSError as exc:
            if isinstance(exc, pa.ArrowException):
                raise _fail("parquet.corrupt", self.where, f"not a readable Parquet file: {exc}",
                            "the file is truncated or corrupted; rewrite the dataset") from None
            raise _fail("io.unreadable", self.where, f"cannot read: {exc.strerror or exc}",
                        "check the path and its permissions") from None
        except pa.ArrowException as exc:
            raise _fail("parquet.corrupt", self.where, f"not a readable Parquet file: {exc}",
                        "the file is truncated or corrupted; rewrite the dataset") from None
        missing = [f.name for f in self.schema if f.name not in have.names]
        if missing:
            raise _fail("parquet.schema", self.where, f"missing column(s): {', '.join(missing)}",
                        "see the column list in orchestrace.core.dataset's documentation")
        self.casts: dict[str, Any] = {}
        for f in self.schema:
            got = have.field(f.name).type
            if got != f.type:
                self.casts[f.name] = f.type
        self.batch_rows = batch_rows
        self.rows = rows  # [start, stop) rows of this table only (a partition), or all of it
        self.row = 0 if rows is None else rows[0]  # rows before the current batch

    def _range_batches(self, start: int, stop: int) -> Iterator[Any]:
        """Record batches of rows [start, stop), reading only the row groups that hold them."""
        meta = self.file.metadata
        lo = 0
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            if lo + n > start and lo < stop:
                table = self.file.read_row_group(g, columns=self.schema.names)
                table = table.slice(max(0, start - lo), min(stop, lo + n) - max(start, lo))
                yield from table.to_batches(max_chunksize=self.batch_rows)
            lo += n
            if lo >= stop:
                return

    def batches(self) -> Iterator[dict[str, list[Any]]]:
        pa = _pa()
        names = self.schema.names
        if self.rows is None:
            it = self.file.iter_batches(batch_size=self.batch_rows, columns=names, use_threads=True)
        else:
            it = self._range_batches(*self.rows)
        while True:
            try:
                batch = next(it, None)
                if batch is None:
                    return
                cols = {}
                for name in names:
                    arr = batch.column(batch.schema.get_field_index(name))
                    if name in self.casts:
                        arr = arr.cast(self.casts[name])
                    if name in self.required and arr.null_count:
                        bad = arr.is_null().to_pylist().index(True)
                        raise _fail("parquet.null", f"{self.where}[row {self.row + bad}].{name}",
                                    "required column holds null", "every row needs this value")
                    cols[name] = arr.to_pylist()
            except (pa.ArrowException, OSError) as exc:
                raise _fail("parquet.corrupt", self.where, f"cannot decode rows from {self.row}: "
                            f"{type(exc).__name__}: {exc}", "the file is corrupted; rewrite the dataset") from None
            yield cols
            self.row += batch.num_rows


class _Rows:
    """Take the next ``n`` rows of a table as built objects, across batch boundaries."""

    def __init__(self, table: _Table, build: Any) -> None:
        self.table = table
        self._batches = table.batches()
        self._build = build
        self._items: list[Any] = []
        self._tids: list[str] = []
        self._pos = 0
        self._start = 0  # table row of self._items[0]

    def take(self, n: int, trace_id: str, trace_row: int) -> list[Any]:
        out: list[Any] = []
        while len(out) < n:
            if self._pos >= len(self._items):
                cols = next(self._batches, None)
                if cols is None:
                    raise _fail("parquet.mismatch", self.table.where,
                                f"table ends early: trace {trace_id!r} (traces.parquet row {trace_row}) "
                                f"needs {n} row(s), {len(out)} found", "the dataset is incomplete; rewrite it")
                self._start = self.table.row
                self._items = self._build(cols, self.table)
                self._tids = cols["trace_id"]
                self._pos = 0
            k = min(n - len(out), len(self._items) - self._pos)
            tids = self._tids[self._pos:self._pos + k]
            if tids.count(trace_id) != k:
                bad = next(i for i, t in enumerate(tids) if t != trace_id)
                row = self._start + self._pos + bad
                raise _fail("parquet.mismatch", f"{self.table.where}[row {row}].trace_id",
                            f"row belongs to trace {tids[bad]!r}, expected {trace_id!r} "
                            f"(traces.parquet row {trace_row})",
                            "rows must stay in dataset order; do not sort or filter the tables separately")
            out.extend(self._items[self._pos:self._pos + k])
            self._pos += k
        return out

    def done(self) -> bool:
        if self._pos < len(self._items):
            return False
        return next(self._batches, None) is None


def _lookup(table: dict[str, Any], value: str, where: str, col: str, row: int) -> Any:
    try:
        return table[value]
    except KeyError:
        raise _fail("parquet.value", f"{where}[row {row}].{col}", f"unknown {col} {value!r}",
                    f"use one of: {', '.join(sorted(table))}") from None


def _missing(where: str, row: int, col: str) -> Any:
    raise _fail("parquet.null", f"{where}[row {row}].{col}", "null where a decision needs a value",
                "decision_kind and decision_action are both set or both null")


def _outcomes(cols: dict[str, list[Any]]) -> list[Outcome | None]:
    has, succ, score, ver, ans = (cols[n] for n, _, _ in _OUTCOME_COLS)
    if not any(has) and succ.count(None) == score.count(None) == ver.count(None) == ans.count(None) == len(has):
        return [None] * len(has)
    return [Outcome(success=s, score=sc, verifier=v, answer_ref=a)
            if (h or s is not None or sc is not None or v is not None or a is not None) else None
            for h, s, sc, v, a in zip(has, succ, score, ver, ans, strict=True)]


def _json(decoder: Any, text: str | None, where: str, row: int, col: str) -> Any:
    if text is None:
        return None
    try:
        return decoder.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise _fail("parquet.value", f"{where}[row {row}].{col}", f"bad JSON: {exc}",
                    f"{col} holds a JSON document") from None


_attrs_decoder = msgspec.json.Decoder(dict[str, Any])


def _build_events(cols: dict[str, list[Any]], table: _Table) -> list[Event]:
    base = table.row
    types = [_EVENT_TYPES.get(v) or _lookup(_EVENT_TYPES, v, table.where, "type", base + i)
             for i, v in enumerate(cols["type"])]
    kinds = cols["decision_kind"]
    n = len(types)
    decisions: list[DecisionPayload | None]
    if kinds.count(None) == n:
        decisions = [None] * n
    else:
        decisions = [None if k is None else DecisionPayload(
            kind=_DECISIONS.get(k) or _lookup(_DECISIONS, k, table.where, "decision_kind", base + i),
            action=a if a is not None else _missing(table.where, base + i, "decision_action"), alternatives=tuple(alt or ()), logprob=lp, policy=po, step=st)
            for i, (k, a, alt, lp, po, st) in enumerate(zip(
                kinds, cols["decision_action"], cols["decision_alternatives"], cols["decision_logprob"],
                cols["decision_policy"], cols["decision_step"], strict=True))]
    attrs = cols["attrs"]
    if attrs.count(None) != n:
        attrs = [_json(_attrs_decoder, a, table.where, base + i, "attrs") for i, a in enumerate(attrs)]
    return [Event(id=i_, t=t, type=ty, agent=ag, role=ro, from_=fr, to=to, tool=tl, content_ref=cr, trusted=tr,
                  t_end=te, tokens_in=ti, tokens_out=tout, cost=co, decision=de, outcome=oc, error=er,
                  privileged=pr, content=cn, source=so, attrs=at)
            for i_, t, ty, ag, ro, fr, to, tl, cr, tr, te, ti, tout, co, de, oc, er, pr, cn, so, at in zip(
                cols["id"], cols["t"], types, cols["agent"], cols["role"], cols["from"], cols["to"], cols["tool"],
                cols["content_ref"], cols["trusted"], cols["t_end"], cols["tokens_in"], cols["tokens_out"],
                cols["cost"], decisions, _outcomes(cols), cols["error"], cols["privileged"], cols["content"],
                cols["source"], attrs, strict=True)]


def _build_edges(cols: dict[str, list[Any]], table: _Table) -> list[Edge]:
    base = table.row
    return [Edge(s, d, _EDGE_TYPES.get(ty) or _lookup(_EDGE_TYPES, ty, table.where, "type", base + i))
            for i, (s, d, ty) in enumerate(zip(cols["src"], cols["dst"], cols["type"], strict=True))]


def count_traces(folder: str | os.PathLike[str]) -> int:
    """The number of traces in a dataset folder (from the Parquet footer; no row is read).

    >>> import tempfile
    >>> from orchestrace import synth
    >>> folder = tempfile.mkdtemp(); _ = write_dataset([synth(events=20, agents=2, seed=s) for s in range(3)], folder)
    >>> count_traces(folder)
    3
    """
    return _Table(Path(folder), TABLES[0], _TRACE_COLS, 1).file.metadata.num_rows


def _partition_rows(root: Path, lo: int, hi: int, batch_rows: int) -> list[tuple[int, int] | None]:
    """[start, stop) rows of traces / events / edges that traces lo … hi-1 own."""
    tab = _Table(root, TABLES[0], _TRACE_COLS, batch_rows)
    n = tab.file.metadata.num_rows
    hi = min(hi, n)
    lo = min(lo, hi)
    counts = tab.file.read(columns=["n_events", "n_edges"])
    ev = counts.column("n_events").to_numpy(zero_copy_only=False)
    ed = counts.column("n_edges").to_numpy(zero_copy_only=False)
    e0, d0 = int(ev[:lo].sum()), int(ed[:lo].sum())
    return [(lo, hi), (e0, e0 + int(ev[lo:hi].sum())), (d0, d0 + int(ed[lo:hi].sum()))]


def read_dataset(folder: str | os.PathLike[str], *, batch_rows: int = 64 * 1024,
                 traces: range | None = None) -> Iterator[Trace]:
    """Yield the traces of a columnar dataset folder in order (the exact inverse of :func:`write_dataset`).

    ``traces=range(lo, hi)`` yields only traces ``lo … hi-1`` (rows of ``traces.parquet``): a
    partition, read from the row groups that hold it (the events and edges offsets come from the
    ``n_events`` / ``n_edges`` columns), so that partitions can be read in parallel.

    Streams: at most one batch of each table (``batch_rows`` rows) plus the trace being
    assembled is held in memory. A missing, corrupted or inconsistent table raises
    :class:`~orchestrace.errors.TraceDecodeError` whose problem names the file, row and
    column (codes ``io.not-found``, ``io.unreadable``, ``parquet.corrupt``, ``parquet.schema``,
    ``parquet.null``, ``parquet.value``, ``parquet.mismatch``). Tables written by other tools
    load when they have the documented columns (types are cast, e.g. ``large_string``).

    >>> import tempfile
    >>> from orchestrace import synth
    >>> folder = tempfile.mkdtemp()
    >>> _ = write_dataset([synth(events=40, agents=2, seed=1)], folder)
    >>> [(tr.trace_id, len(tr.events)) for tr in read_dataset(folder)] == [(synth(events=40, agents=2, seed=1).trace_id, 40)]
    True
    >>> folder = tempfile.mkdtemp(); _ = write_dataset([synth(events=20, agents=2, seed=s) for s in range(5)], folder)
    >>> [t.trace_id for t in read_dataset(folder, traces=range(1, 3))] == [t.trace_id for t in read_dataset(folder)][1:3]
    True
    >>> next(read_dataset(tempfile.mkdtemp()))
    Traceback (most recent call last):
    ...
    orchestrace.errors.TraceDecodeError: ...traces.parquet: table is missing
    """
    root = Path(folder)
    if not root.is_dir():
        code = "io.not-found" if not root.exists() else "io.not-a-dataset"
        raise _fail(code, str(root), "not a dataset folder" if root.exists() else "no such folder",
                    f"a columnar dataset is a folder holding {', '.join(TABLES)}")
    spans: list[tuple[int, int] | None] = [None, None, None]
    if traces is not None:
        if traces.step != 1 or traces.start < 0:
            raise ConfigError(f"traces must be a range(lo, hi) with lo >= 0, got {traces!r}")
        spans = _partition_rows(root, traces.start, max(traces.start, traces.stop), batch_rows)
    tables = [_Table(root, name, cols, batch_rows, rows=span) for name, cols, span in zip(
        TABLES, (_TRACE_COLS, _EVENT_COLS, _EDGE_COLS), spans, strict=True)]
    trace_tab, event_tab, edge_tab = tables
    events = _Rows(event_tab, _build_events)
    edges = _Rows(edge_tab, _build_edges)
    for cols in trace_tab.batches():
        base = trace_tab.row
        outcomes = _outcomes(cols)
        for i in range(len(cols["trace_id"])):
            row, tid = base + i, cols["trace_id"][i]
            topo = cols["topology"][i]
            yield Trace(
                trace_id=tid, task_id=cols["task_id"][i], schema_version=cols["schema_version"][i],
                system=cols["system"][i],
                topology=None if topo is None else _lookup(_TOPOLOGIES, topo, trace_tab.where, "topology", row),
                events=tuple(events.take(cols["n_events"][i], tid, row)),
                edges=tuple(edges.take(cols["n_edges"][i], tid, row)),
                rewards=dict(cols["rewards"][i]), costs=dict(cols["costs"][i]), metrics=dict(cols["metrics"][i]),
                outcome=outcomes[i],
                signals=_json(_signals_decoder, cols["signals"][i], trace_tab.where, row, "signals"),
                meta=_json(_meta_decoder, cols["meta"][i], trace_tab.where, row, "meta"),
            )
    if traces is not None:
        return  # a partition: the tables go on after it
    for rows in (events, edges):
        if not rows.done():
            raise _fail("parquet.mismatch", rows.table.where, "rows left over after the last trace",
                        "n_events / n_edges in traces.parquet do not match this table; rewrite the dataset")
