"""Validate a trace: the structural layer (one typed decode) and the semantic layer.

``validate(x)`` takes a :class:`~orchestrace.Trace`, a path (``str`` / ``PathLike``; a
``str`` that starts with ``{`` is read as JSON text) or the bytes of a file, and returns a
:class:`~orchestrace.ValidationReport` listing **every** problem — it never raises on bad
input. Each problem has a stable ``code``, a ``severity``, a JSON ``path``
(``$.events[12].to``; ``line 13: $.event.to`` in a JSONL stream) and a ``hint``. At most
100 problems per code are listed, plus one summary problem with the count of the rest.

The semantic checks run on integer-indexed numpy arrays (ids → ints once, then vector
operations), so a 1M-event trace is checked in well under a second.

Problem codes
-------------
=========================  ========  ====================================================
code                       severity  meaning
=========================  ========  ====================================================
``io.not-found``           error     the path does not exist
``io.unreadable``          error     the file cannot be read (permissions, …)
``io.is-directory``        error     the path is a directory
``io.too-large``           error     the file is over ``ORCHESTRACE_MAX_FILE_BYTES``
``json.empty``             error     the input is empty or only whitespace
``json.malformed``         error     not JSON (includes ``NaN``/``Infinity`` tokens)
``json.truncated``         error     a JSON document ends early
``json.invalid-utf8``      error     bytes that are not UTF-8 (the rest is still checked)
``json.bom``               warning   a UTF-8 byte-order mark before the JSON (ignored)
``json.too-deep``          error     nesting beyond ~1000 levels
``json.toml``              error     the file is TOML, not JSON (a reward spec or a config?)
``jsonl.truncated``        warning   the stream's last line was cut; earlier records kept
``jsonl.no-end``           warning   a stream trace has no ``end`` record
``jsonl.no-header``        error     records before the first ``header`` record
``jsonl.bad-record``       error     a line is not exactly one of header/event/edge/end
``schema.type``            error     a value has the wrong JSON type
``schema.missing-field``   error     a required field is absent
``schema.not-a-trace``     error     a JSON object with none of a trace's fields (a config file?)
``schema.unknown-field``   error     an unknown trace field (warning on a native event:
                                     kept in ``attrs``)
``schema.enum``            error     an unknown enum value (hint: "did you mean …?")
``reference.missing-field``  error   a reference trace (no ``schema_version``) lacks a
                                     field the reference schema requires
``reference.empty-events``   error   a reference trace has no events (``minItems: 1``)
``reference.empty-string``   error   an empty id/agent/trace_id/task_id (``minLength: 1``)
``reference.negative-time``  error   ``t < 0`` in a reference trace (``minimum: 0``)
``reference.extra-moved``  warning   an extra property of a reference event collides with
                                     a native field of another type; kept in ``attrs``
``version.unknown``        warning   a ``schema_version`` this release does not know
``id.duplicate``           error     two events share an id
``id.empty``               error     an empty event id or agent
``edge.dangling``          error     an edge end is not an event id
``edge.cycle``             error     dependency edges (every type but temporal and
                                     safety_flow) form a cycle (one cycle's members are listed)
``edge.time-backwards``    error     a dependency edge goes back in time (``t[dst] < t[src]``)
``event.end-before-start`` error     ``t_end < t``
``agent.before-spawn``     error     an agent has events before it is first spawned
``return.wrong-target``    error     a return does not go to the agent's spawner
``stop.multiple``          error     more than one stop decision (O5)
``stop.has-successor``     error     a dependency edge leaves the stop decision
``cost.negative``          error     a negative cost, token count or ``costs`` entry
``cost.too-large``         error     a token count beyond 2**53 (a corrupt value)
``number.non-finite``      error     NaN, ±Infinity or a number beyond the float range
``decision.misplaced``     warning   a decision payload on a non-decision event
``internal.error``         error     the validator itself failed (a bug: please report)
=========================  ========  ====================================================

>>> from orchestrace import TraceBuilder
>>> b = TraceBuilder("t1")
>>> s = b.spawn("w1", t=1)
>>> c = b.tool_call("w1", "search", t=0.5, after=s)
>>> r = validate(b.build())
>>> r.valid, [p.code for p in r.problems]
(False, ['edge.time-backwards', 'agent.before-spawn'])
>>> validate(b"[1, 2]").problems[0].code
'schema.type'
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import attrgetter, is_not
from typing import Any

import msgspec
import numpy as np

from .._problems import ValidationReport
from ..errors import ConfigError, TraceDecodeError
from ..vocab import EventType
from ._blocked import float_column as _float_column
from ._blocked import prefill
from ._dag import (
    DEPENDENCY_CODES,
    EDGE_CODE,
    EVENT_CODE,
    Columns,
    IdIndex,
    column,
    cycle_message,
    dangling_message,
    duplicate_message,
    first_positions,
)
from ._dag import (
    find_cycle as find_cycle,  # re-exported: the one cycle finder, shared with the graph core
)
from ._located import ERROR, WARNING, Collector, short
from ._structural import Decoded, Locator, decode_bytes
from .io import read_bytes
from .trace import SCHEMA_VERSION, Trace

__all__ = ["KNOWN_SCHEMA_VERSIONS", "validate"]

#: Native format versions this release reads.
KNOWN_SCHEMA_VERSIONS = frozenset({SCHEMA_VERSION})

#: Traces with at least this many events take the cache-blocked column walk
#: (:func:`~orchestrace.core._blocked.prefill`); the plain per-column passes give the same columns.
_BLOCKED_MIN_EVENTS = 1
_ABS_TOL, _REL_TOL = 1e-9, 1e-12  # time comparisons: a ≥ b - (abs + rel·|b|)

_EV_CODE, _ED_CODE = EVENT_CODE, EDGE_CODE
_DEP_CODES = np.flatnonzero(DEPENDENCY_CODES).astype(np.int8)  # codes of the dependency edge types
_SPAWN, _RETURN, _DECISION = (_EV_CODE[EventType.SPAWN], _EV_CODE[EventType.RETURN],
                              _EV_CODE[EventType.ORCHESTRATOR_DECISION])
_get = {name: attrgetter(name) for name in (
    "id", "t", "type", "agent", "t_end", "tokens_in", "tokens_out", "cost", "decision", "outcome",
    "src", "dst", "to", "value")}


def validate(trace: Trace | str | os.PathLike[str] | bytes, *, strict: bool = False,
             columns: Columns | None = None) -> ValidationReport:
    """Check a trace (object, path, or file bytes); return every problem found.

    With ``strict=True`` warnings are promoted to errors (so ``report.valid`` is False
    when anything at all was found). Bad input never raises; only an argument of the
    wrong Python type does (``TypeError``). ``columns`` (a :class:`~orchestrace.core._dag.Columns`
    of this trace) keeps the columns the checks pull out, for the graph built next.

    >>> validate(b'{"trace_id": "t", "task_id": "k", "events": [{"id": "e1", "t": 0, '
    ...          b'"type": "tool_cal", "agent": "a"}]}').problems[0].hint
    "did you mean 'tool_call'?"
    """
    if not isinstance(trace, (Trace, bytes, bytearray, memoryview, str, os.PathLike)):
        raise TypeError(f"validate() takes a Trace, a path or bytes, not {type(trace).__name__}")
    return validate_keeping(trace, strict=strict, columns=columns)


def validate_keeping(trace: Trace | str | os.PathLike[str] | bytes, *, strict: bool = False,
                     columns: Columns | None = None, keep: Callable[[Any], None] | None = None) -> ValidationReport:
    """:func:`validate`, handing the decoded traces to ``keep`` (the command line passes a
    holder when its process ends with ``os._exit``: nothing is freed one object at a time just
    before the exit, ~40 ms for 200k events). An argument, not a global set at run time."""
    col = Collector()
    decoded: list[Decoded] = []
    source: str | None = None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects; none of them cyclic
    try:
        if isinstance(trace, Trace):
            decoded = [Decoded(trace, Locator(), False)]
        elif isinstance(trace, (bytes, bytearray, memoryview)):
            source = "<bytes>"
            decoded = decode_bytes(bytes(trace), source, col)
        elif isinstance(trace, str) and trace.lstrip()[:1] in ("{", "["):
            source = "<str>"
            decoded = decode_bytes(trace.encode("utf-8", "surrogatepass"), source, col)
        else:  # a path
            source = os.fspath(trace)
            try:
                data = read_bytes(trace)
            except TraceDecodeError as exc:
                col.extend(exc.problems)
            else:
                decoded = decode_bytes(data, source, col)
                del data
        for d in decoded:
            check_semantics(d, col, columns)
    except ConfigError:  # a bad ORCHESTRACE_* setting is not a problem of the input
        raise
    except Exception as exc:  # the contract: bad input never escapes as an exception
        col.add("internal.error", "$", f"validator failed: {type(exc).__name__}: {short(str(exc), 200)}",
                "please report this as a bug, with the input")
    finally:
        if gc_was_enabled:
            gc.enable()
    problems = col.finish()
    if keep is not None:
        keep(decoded)
    if strict:
        problems = [p if p.severity is ERROR else msgspec.structs.replace(p, severity=ERROR) for p in problems]
    return ValidationReport(
        source=source, problems=tuple(problems),
        n_events=sum(len(d.trace.events) for d in decoded), n_edges=sum(len(d.trace.edges) for d in decoded),
    )


# ----------------------------------------------------------------------------- semantic layer
def check_semantics(d: Decoded, col: Collector, columns: Columns | None = None) -> None:
    """Every semantic rule on one decoded trace; problems go to ``col`` (columns to ``columns``)."""
    try:
        _check(d, col, columns)
    except (TypeError, ValueError, KeyError, OverflowError, AttributeError):
        # a Trace built in code with wrong Python types: round-trip it through the
        # tolerant structural layer to get located problems, then check what converts
        if d.loc.event_lines is not None or d.loc.event_pos is not None:
            raise
        col2 = Collector(col.cap)
        again = decode_bytes(msgspec.json.encode(d.trace), "<trace>", col2)
        col.extend(col2.finish())
        if not again or again[0].loc.event_pos is None and again[0].loc.edge_pos is None and not col2.problems:
            raise
        _check(again[0]._replace(reference=d.reference), col)


def _tol(t: np.ndarray) -> float:
    """One tolerance for a whole time column: ``abs + rel·max|t|``."""
    big = np.abs(t[np.isfinite(t)]).max(initial=0.0) if len(t) else 0.0
    return float(_ABS_TOL + _REL_TOL * big)


def _check(d: Decoded, col: Collector, columns: Columns | None = None) -> None:
    tr, loc = d.trace, d.loc
    ev = tr.events
    n = len(ev)
    _check_trace_level(d, col)
    if n == 0:
        return
    if columns is not None and columns.trace is not tr:
        columns = None  # another trace's columns: ignored (as `column` would)
    if n >= _BLOCKED_MIN_EVENTS and (columns is None or not columns.has("id_index")):
        # every column in one cache-blocked walk; a caller's columns also get what the graph reads
        columns = prefill(tr, columns, graph=columns is not None)

    # -- columns (one pass each, no per-event Python loop) --------------------------------
    # ids, agents and edge ends are handled as 64-bit string hashes (see _dag.IdIndex); the
    # strings themselves are only fetched (ev[i].id) for the few problems reported
    # (given a _dag.Columns, the graph core reuses them: same names, same values)
    t = column(columns, tr, "t", lambda: np.fromiter(map(_get["t"], ev), np.float64, n))  # (n,)
    types = column(columns, tr, "event_type_code", lambda: np.fromiter(
        map(_EV_CODE.get, map(_get["type"], ev), repeat(-1)), np.int8, n))  # (n,) -1 = not a type
    if columns is None:  # validation alone: no id list to keep
        index = IdIndex(np.fromiter(map(hash, map(_get["id"], ev)), np.int64, n), lambda i: ev[i].id)
    else:  # the graph's `ids` too
        index = column(columns, tr, "id_index", lambda: IdIndex.of(
            column(columns, tr, "list:id", lambda: list(map(_get["id"], ev)))))

    bad_type = np.flatnonzero(types < 0)
    col.add_many("schema.enum", bad_type, lambda i: (loc.event(i, "type"), f"invalid event type {short(ev[i].type)}", ""))

    agents = _check_ids(d, col, columns, index)
    finite = d.finite  # the strict JSON decode already excluded NaN/Infinity
    tol = _tol(t)
    _check_numbers(d, col, columns, t, tol)
    s, _, causal = _check_edges(d, col, columns, index, t, tol)
    # -- agents: spawned before acting, return to the spawner -----------------------------
    _check_agents(ev, agents, t, types, tol, loc, col)
    _check_decisions(d, col, columns, types, t, s, causal)

    # -- outcomes -------------------------------------------------------------------------
    outcomes = [] if finite else list(map(_get["outcome"], ev))
    if outcomes.count(None) != len(outcomes):
        for i, o in enumerate(outcomes):
            if o is not None and o.score is not None and not np.isfinite(o.score):
                col.add("number.non-finite", loc.event(i, "outcome.score"), f"score = {o.score!r}")


def _check_ids(d: Decoded, col: Collector, columns: Columns | None,
               index: IdIndex) -> tuple[np.ndarray, dict[str, int]]:
    """Duplicate and empty event ids and agents; returns the agents as :func:`~._dag.first_positions`
    codes (n,) and name → first position (the graph core's agent column)."""
    tr, loc = d.trace, d.loc
    ev, n = tr.events, len(tr.events)

    def dup(i: int) -> tuple[str, str, str]:
        first = int(index.lookup([ev[i].id])[0])
        return (loc.event(i, "id"), *duplicate_message(ev[i].id, loc.event(first)))

    col.add_many("id.duplicate", index.duplicates(), dup)
    empty_code = "reference.empty-string" if d.reference else "id.empty"
    agents = column(columns, tr, "agent_first", lambda: first_positions(map(_get["agent"], ev), n))
    for field, empty in (("id", bool((index.hashes == _EMPTY_HASH).any())), ("agent", "" in agents[1])):
        if empty:
            col.add_many(empty_code, [i for i in range(n) if getattr(ev[i], field) == ""],
                         _empty_problem(loc, field))
    return agents


def _check_numbers(d: Decoded, col: Collector, columns: Columns | None, t: np.ndarray, tol: float) -> None:
    """Times (finite, ≥ 0 in reference traces, ends not before starts) and costs (≥ 0, token counts ≤ 2**53)."""
    tr, loc = d.trace, d.loc
    n = len(tr.events)
    finite = d.finite
    if not finite:
        _finite(col, t, lambda i: loc.event(i, "t"))
    if d.reference:
        col.add_many("reference.negative-time", np.flatnonzero(t < 0),
                     lambda i: (loc.event(i, "t"), f"t = {float(t[i])!r} is negative", "reference traces need t ≥ 0"))
    t_end, t_end_none, t_end_values = _optional(columns, tr, "t_end")  # (n,) NaN = none
    if not finite:
        _finite(col, t_end, lambda i: loc.event(i, "t_end"), t_end_none, t_end_values)
    early = np.flatnonzero((t_end < t - tol) & np.isfinite(t_end) & np.isfinite(t))
    col.add_many("event.end-before-start", early, lambda i: (
        loc.event(i, "t_end"), f"t_end = {float(t_end[i])!r} is before t = {float(t[i])!r}", "t_end must be ≥ t (or omitted)"))
    for field in ("tokens_in", "tokens_out", "cost"):
        arr, n_none, values = _optional(columns, tr, field)
        if n_none == n:
            continue
        if field == "cost" and not finite:
            _finite(col, arr, lambda i, f=field: loc.event(i, f), n_none, values)
        col.add_many("cost.negative", np.flatnonzero(arr < 0), lambda i, f=field, a=arr: (  # type: ignore[misc]
            loc.event(i, f), f"{f} = {float(a[i])!r} is negative", "costs and token counts are ≥ 0"))
        if field != "cost":
            col.add_many("cost.too-large", np.flatnonzero(arr > _MAX_TOKENS), lambda i, f=field, a=arr: (  # type: ignore[misc]
                loc.event(i, f), f"{f} = {float(a[i]):.3g} is beyond 2**53 tokens", "a token count is a whole number "
                "that a float holds exactly; fix the corrupt value"))


def _check_edges(d: Decoded, col: Collector, columns: Columns | None, index: IdIndex, t: np.ndarray,
                 tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dangling ends, edge types, time along dependency edges, cycles; returns the edges' source and
    destination positions (m,) and the indices of the dependency edges."""
    tr, loc = d.trace, d.loc
    ev, ed, n, m = tr.events, tr.edges, len(tr.events), len(tr.edges)
    if not m:
        z = np.zeros(0, np.int64)
        return z, z, z
    s = column(columns, tr, "edge_src", lambda: index.lookup_of(ed, _get["src"]))  # (m,) event positions, -1 = none
    dd = column(columns, tr, "edge_dst", lambda: index.lookup_of(ed, _get["dst"]))
    etype = column(columns, tr, "edge_type_code", lambda: np.fromiter(
        map(_ED_CODE.get, map(_get["type"], ed), repeat(-1)), np.int8, m))
    for name, ends in (("src", s), ("dst", dd)):
        dangling: list[int] = np.flatnonzero(ends < 0).tolist()
        if col.dropped_ids:  # an edge to an event that failed to decode is not news
            dangling = [j for j in dangling if getattr(ed[j], name) not in col.dropped_ids]
        col.add_many("edge.dangling", dangling, lambda j, f=name: (  # type: ignore[misc]
            loc.edge(j, f), *dangling_message(f, getattr(ed[j], f))))
    col.add_many("schema.enum", np.flatnonzero(etype < 0),
                 lambda j: (loc.edge(j, "type"), f"invalid edge type {short(ed[j].type)}", ""))
    causal = np.flatnonzero(np.isin(etype, _DEP_CODES) & (s >= 0) & (dd >= 0))  # dependency edge indices
    cs, cd = s[causal], dd[causal]
    back = causal[(t[cd] < t[cs] - tol) & np.isfinite(t[cd]) & np.isfinite(t[cs])]
    col.add_many("edge.time-backwards", back, lambda j: (
        loc.edge(j), f"time runs backwards along this {ed[j].type} edge: "
        f"{short(ed[j].src)} at t={float(t[s[j]])!r} → {short(ed[j].dst)} at t={float(t[dd[j]])!r}",
        "an effect cannot precede its cause; fix the times or the edge direction"))
    _check_dag(cs, cd, causal, t, n, lambda i: ev[i].id, loc, col)
    return s, dd, causal


def _check_decisions(d: Decoded, col: Collector, columns: Columns | None, types: np.ndarray, t: np.ndarray,
                     s: np.ndarray, causal: np.ndarray) -> None:
    """Decision payloads only on decision events, finite log-probs, one stop and nothing after it."""
    tr, loc = d.trace, d.loc
    ev, ed, n = tr.events, tr.edges, len(tr.events)
    finite = d.finite
    decisions = column(columns, tr, "list:decision", lambda: list(map(_get["decision"], ev)))
    n_dec = n - decisions.count(None)  # identity checks: fast
    dec_typed = np.flatnonzero(types == _DECISION)
    if n_dec == len(dec_typed) and all(decisions[i] is not None for i in dec_typed.tolist()):
        has_dec = dec_typed  # the usual case: payloads exactly on the decision events
    else:
        has_dec = np.flatnonzero(np.fromiter(map(is_not, decisions, repeat(None)), np.bool_, n))
    if len(has_dec):
        misplaced = has_dec[types[has_dec] != _DECISION]
        col.add_many("decision.misplaced", misplaced, lambda i: (
            loc.event(i, "decision"), f"a decision payload on a {ev[i].type} event",
            "only orchestrator_decision events carry a decision; move it or change the type"), WARNING)
        stops = []
        for i in has_dec.tolist():  # decisions are few: a loop over them is fine
            dec = decisions[i]
            if not finite and dec.logprob is not None and not np.isfinite(dec.logprob):
                col.add("number.non-finite", loc.event(i, "decision.logprob"), f"logprob = {dec.logprob!r}")
            if dec.is_stop:  # an O5 decision with action "continue" is not a stop
                stops.append(i)
        if len(stops) > 1:
            stops.sort(key=lambda i: (t[i], i))
            col.add_many("stop.multiple", stops[1:], lambda i: (
                loc.event(i), f"a second stop decision (the first is {loc.event(stops[0])})",
                "a trace ends once: keep one stop (O5) decision"))
        if stops and len(causal):
            is_stop = np.zeros(n, np.bool_)
            is_stop[stops] = True
            after = causal[is_stop[s[causal]]]
            col.add_many("stop.has-successor", after, lambda j: (
                loc.edge(j), f"a {ed[j].type} edge leaves the stop decision {short(ed[j].src)}",
                "nothing may be caused by the stop; drop the edge or move the stop later"))


def _check_trace_level(d: Decoded, col: Collector) -> None:
    tr, loc = d.trace, d.loc
    if d.reference:
        for f in d.ref_missing():
            col.add("reference.missing-field", loc.field(f), f"reference trace has no `{f}`",
                    "the reference schema requires it; add it, or add \"schema_version\" to mark a native trace")
        if not tr.events and not col.dropped_ids and "events" not in col.missing_fields:  # reported already
            col.add("reference.empty-events", loc.field("events"), "reference trace has no events",
                    "the reference schema requires at least one event")
        for f in ("trace_id", "task_id"):
            if getattr(tr, f) == "" and f not in col.missing_fields:  # a missing field is reported once
                col.add("reference.empty-string", loc.field(f), f"`{f}` is empty", "give it a non-empty value")
    elif tr.schema_version not in KNOWN_SCHEMA_VERSIONS:
        col.add("version.unknown", loc.field("schema_version"),
                f"schema_version {short(tr.schema_version)} is not one this release knows "
                f"({', '.join(sorted(KNOWN_SCHEMA_VERSIONS))}); fields may be misread",
                "upgrade orchestrace, or convert the trace", WARNING)
    for name in ("rewards", "costs", "metrics"):
        for k, v in getattr(tr, name).items():
            if not isinstance(v, (int, float)) or not np.isfinite(v):
                col.add("number.non-finite", loc.field(f"{name}.{k}"), f"{name}[{k!r}] = {short(v)}")
            elif name == "costs" and v < 0:
                col.add("cost.negative", loc.field(f"{name}.{k}"), f"costs[{k!r}] = {v!r} is negative",
                        "costs are ≥ 0")
    if tr.outcome is not None and tr.outcome.score is not None and not np.isfinite(tr.outcome.score):
        col.add("number.non-finite", loc.field("outcome.score"), f"score = {tr.outcome.score!r}")
    if tr.signals:
        vals = _float_column(list(map(_get["value"], tr.signals)))
        col.add_many("number.non-finite", np.flatnonzero(~np.isfinite(vals)), lambda k: (
            loc.field(f"signals[{k}].value"), f"signal value = {float(vals[k])!r}", ""))


_EMPTY_HASH = hash("")


def _empty_problem(loc: Locator, field: str) -> Any:
    return lambda i: (loc.event(i, field), f"{field} is empty", f"give the event a non-empty {field}")


#: Token counts above this cannot be summed exactly as floats (and are corrupt values anyway).
_MAX_TOKENS = float(2**53)


def _optional(columns: Columns | None, tr: Trace, field: str) -> tuple[np.ndarray, int, Callable[[], list[Any]]]:
    """An optional number's float column (n,) (NaN = absent), its count of absent values, and a
    getter of its values (a list pass only when a NaN must be told from an absent value)."""
    ev = tr.events

    def values() -> list[Any]:
        return column(columns, tr, f"list:{field}", lambda: list(map(_get[field], ev)))

    arr = column(columns, tr, f"float:{field}", lambda: _float_column(values()))
    return arr, column(columns, tr, f"none:{field}", lambda: values().count(None)), values


def _finite(col: Collector, arr: np.ndarray, where: Any, n_none: int | None = None,
            values: Callable[[], list[Any]] | None = None) -> None:
    """Report non-finite entries; given the count of absent values (and a getter of the values),
    NaN that came from None is not a problem."""
    bad = ~np.isfinite(arr)
    if values is not None and bad.any():
        nan = np.isnan(arr)
        if int(nan.sum()) == n_none:
            bad &= ~nan  # every NaN is a missing value
        else:
            vals = values()
            bad &= ~(nan & (np.fromiter(map(is_not, vals, repeat(None)), np.bool_, len(vals)) == 0))
    col.add_many("number.non-finite", np.flatnonzero(bad), lambda i: (where(i), f"value is {float(arr[i])!r}", ""))


# ----------------------------------------------------------------------------- DAG
def _check_dag(cs: np.ndarray, cd: np.ndarray, causal: np.ndarray, t: np.ndarray, n: int,
               id_at: Any, loc: Locator, col: Collector) -> None:
    """Dependency edges must form a DAG.

    Fast path: an edge that goes strictly forward in time cannot close a cycle on its own —
    any cycle needs an edge with ``t[dst] <= t[src]``. If every dependency edge goes forward,
    the graph is a DAG (one vector comparison). If the only non-forward edges join events
    of equal time, a cycle can only use those, so Kahn's peel runs on that small subgraph;
    otherwise (time runs backwards somewhere, or NaN times) on the whole dependency graph.
    """
    if not len(cs):
        return
    ts, td = t[cs], t[cd]
    fwd = td > ts
    if fwd.all():
        return
    sub = ~fwd if not (td < ts).any() and not np.isnan(ts).any() and not np.isnan(td).any() else slice(None)
    cycle = find_cycle(cs[sub], cd[sub], n)
    if cycle is None:
        return
    # locate the cycle at one of its edges (the one leaving its first member)
    on = (cs == cycle[0]) & (cd == cycle[1 % len(cycle)])
    j = int(causal[np.flatnonzero(on)[0]]) if on.any() else int(causal[0])
    col.add("edge.cycle", loc.edge(j), *cycle_message([id_at(i) for i in cycle]))


# ----------------------------------------------------------------------------- agents
def _check_agents(ev: Sequence[Any], agents: tuple[np.ndarray, dict[str, int]], t: np.ndarray, types: np.ndarray,
                  tol: float, loc: Locator, col: Collector) -> None:
    """Spawned agents act only after their first spawn, and return to their spawner.

    Agents are matched by their first-position codes (exact, vectorised); a child that never
    acts has nothing to check.
    """
    agent_code, first_of = agents  # (n,) position of the agent's first event; name → that position
    spawn_idx = np.flatnonzero(types == _SPAWN)
    codes = [first_of.get(c, -1) if c is not None else -1 for c in map(_get["to"], map(ev.__getitem__, spawn_idx.tolist()))]
    child = np.array(codes, np.int64)  # (spawns,) the spawned agent's code, -1 = none or never acts
    spawn_idx, child = spawn_idx[child >= 0], child[child >= 0]
    if not len(spawn_idx):
        return
    order = np.lexsort((t[spawn_idx], child))  # by child, then time (ties: position)
    firsts = order[np.r_[True, child[order][1:] != child[order][:-1]]]
    spawn_of_code = np.full(len(t), -1, np.int64)
    spawn_of_code[child[firsts]] = spawn_idx[firsts]
    spawn_of = spawn_of_code[agent_code]  # (n,) the event that first spawned ev[i].agent, -1 = not spawned
    is_child = spawn_of >= 0
    spawn_t = np.where(is_child, t[np.maximum(spawn_of, 0)], -np.inf)
    early = np.flatnonzero(t < spawn_t - tol).tolist()
    if early:
        firsts_of: dict[str, int] = {}
        counts: dict[str, int] = {}
        for i in early:
            a = ev[i].agent
            counts[a] = counts.get(a, 0) + 1
            if a not in firsts_of or t[i] < t[firsts_of[a]]:
                firsts_of[a] = i
        col.add_many("agent.before-spawn", sorted(firsts_of.values()), lambda i: (
            loc.event(i, "t"),
            f"agent {short(ev[i].agent)} acts at t={float(t[i])!r} ({counts[ev[i].agent]} event(s) in all) before "
            f"it is first spawned at t={float(spawn_t[i])!r} ({loc.event(int(spawn_of[i]))})",
            "spawn the agent before it acts (or fix the times)"))
    ret = np.flatnonzero((types == _RETURN) & is_child)
    wrong = [i for i in ret.tolist() if ev[i].to is not None and ev[i].to != ev[spawn_of[i]].agent]
    col.add_many("return.wrong-target", wrong, lambda i: (
        loc.event(i, "to"), f"agent {short(ev[i].agent)} returns to {short(ev[i].to)} but was spawned by "
        f"{short(ev[spawn_of[i]].agent)} ({loc.event(int(spawn_of[i]))})", "return to the spawner"))
