"""Hypothesis strategies: valid orchestration traces (and JSON mutations of them)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from orchestrace import DecisionPayload, Edge, Event, Outcome, Signal, Trace
from orchestrace.vocab import CreditUnit, Decision, EdgeType, EventType, Topology

_ID_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs",))
ids = st.text(_ID_CHARS, min_size=1, max_size=8)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False, width=64), st.text(max_size=10))
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                           max_leaves=6)
_RESERVED = {f if f != "from_" else "from" for f in Event.__struct_fields__}
attr_dicts = st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k not in _RESERVED), json_values,
                             min_size=1, max_size=3)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
nonneg = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def traces(draw: Any, *, reference_safe: bool = False, max_workers: int = 4, max_steps: int = 5) -> Trace:
    """A semantically valid trace: decision → spawns → worker chains → returns → aggregate → stop.

    ``reference_safe`` leaves out what the reference format cannot hold (signals, meta,
    outcome) so that native → reference → native is lossless.
    """
    n_workers = draw(st.integers(1, max_workers))
    names = draw(st.lists(ids, min_size=n_workers + 1, max_size=n_workers + 1, unique=True))
    orch, workers = names[0], names[1:]
    pool = iter(draw(st.lists(ids, min_size=200, max_size=200, unique=True)))
    events: list[Event] = []
    edges: list[Edge] = []

    def extras() -> dict[str, Any]:
        kw: dict[str, Any] = {}
        if draw(st.booleans()):
            kw["tokens_in"] = draw(st.integers(0, 10**6))
        if draw(st.booleans()):
            kw["tokens_out"] = draw(st.integers(0, 10**6))
        if draw(st.booleans()):
            kw["cost"] = draw(nonneg)
        if draw(st.booleans()):
            kw["role"] = draw(st.text(max_size=6))
        if draw(st.booleans()):
            kw["content"] = draw(st.text(max_size=20))
        if draw(st.booleans()):
            kw["attrs"] = draw(attr_dicts)
        if draw(st.booleans()):
            kw["error"] = draw(st.booleans())
        return kw

    t = draw(st.floats(0, 100, allow_nan=False))
    step = st.floats(0.001, 10, allow_nan=False)
    d0 = next(pool)
    events.append(Event(id=d0, t=t, type=EventType.ORCHESTRATOR_DECISION, agent=orch,
                        decision=DecisionPayload(kind=Decision.SPAWN, action="spawn",
                                                 alternatives=tuple(draw(st.lists(st.text(max_size=5), max_size=3))),
                                                 logprob=draw(st.none() | st.floats(-50, 0)))))
    returns = []
    for w in workers:
        t += draw(step)
        sp = next(pool)
        events.append(Event(id=sp, t=t, type=EventType.SPAWN, agent=orch, to=w, **extras()))
        edges.append(Edge(d0, sp, EdgeType.SPAWN))
        prev, tw = sp, t
        for _ in range(draw(st.integers(0, max_steps))):
            tw += draw(step)
            eid = next(pool)
            kind = draw(st.sampled_from([EventType.TOOL_CALL, EventType.TOOL_RESULT, EventType.MESSAGE,
                                         EventType.SAFETY_EVENT, EventType.HUMAN_INTERVENTION]))
            dur = draw(st.none() | st.floats(0, 5, allow_nan=False))
            kw = extras()
            if kind in (EventType.TOOL_CALL, EventType.TOOL_RESULT):
                kw["tool"] = draw(st.sampled_from(["search", "code.run", "browser.open"]))
            if kind is EventType.TOOL_RESULT:
                kw["trusted"] = draw(st.booleans())
            if kind is EventType.MESSAGE:
                kw["from_"], kw["to"] = w, draw(st.sampled_from(names))
            events.append(Event(id=eid, t=tw, t_end=None if dur is None else tw + dur, type=kind, agent=w, **kw))
            edges.append(Edge(prev, eid, draw(st.sampled_from([EdgeType.CAUSAL, EdgeType.TOOL_DEPENDENCY]))))
            if draw(st.booleans()):
                edges.append(Edge(prev, eid, draw(st.sampled_from([EdgeType.TEMPORAL, EdgeType.MESSAGE,
                                                                   EdgeType.SAFETY_FLOW]))))
            prev = eid
        tw += draw(step)
        rid = next(pool)
        events.append(Event(id=rid, t=tw, type=EventType.RETURN, agent=w, from_=w, to=orch))
        edges.append(Edge(prev, rid, EdgeType.RETURN))
        returns.append((rid, tw))
    t_agg = max(tw for _, tw in returns) + draw(step)
    agg = next(pool)
    events.append(Event(id=agg, t=t_agg, type=EventType.AGGREGATE, agent=orch,
                        outcome=None if reference_safe else draw(st.none() | st.builds(
                            Outcome, success=st.none() | st.booleans(), score=st.none() | finite))))
    edges.extend(Edge(r, agg, EdgeType.AGGREGATE) for r, _ in returns)
    if draw(st.booleans()):
        stop = next(pool)
        events.append(Event(id=stop, t=t_agg + draw(step), type=EventType.ORCHESTRATOR_DECISION, agent=orch,
                            decision=DecisionPayload(kind=Decision.STOP, action="stop")))
        edges.append(Edge(agg, stop, EdgeType.CAUSAL))
    if draw(st.booleans()):  # events need not be listed in time order
        events = draw(st.permutations(events))
    keys = st.text(min_size=1, max_size=8)
    costs = draw(st.dictionaries(keys, nonneg, max_size=3))
    if reference_safe:
        costs.setdefault("tokens", 0.0)
        costs.setdefault("wall_clock_s", 0.0)
    signals = () if reference_safe else tuple(draw(st.lists(st.builds(
        Signal, unit=st.sampled_from(list(CreditUnit)), id=ids, value=finite), max_size=3)))
    return Trace(
        trace_id=draw(st.text(min_size=1, max_size=10)), task_id=draw(st.text(min_size=1, max_size=10)),
        system=draw(st.none() | st.text(max_size=8)), topology=draw(st.none() | st.sampled_from(list(Topology))),
        events=tuple(events), edges=tuple(edges),
        rewards=draw(st.dictionaries(keys, finite, max_size=3)), costs=costs,
        metrics=draw(st.dictionaries(keys, finite, max_size=3)),
        outcome=None if reference_safe else draw(st.none() | st.builds(Outcome, success=st.none() | st.booleans())),
        signals=signals, meta={} if reference_safe else draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2)),
    )


# ----------------------------------------------------------------------------- mutations
_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.just([]), st.just({}),
                  st.just(float("nan")), st.just(float("inf")), st.just(-1e300))


@st.composite
def mutated_json(draw: Any) -> bytes:
    """The JSON text of a valid trace after one random mutation (may or may not stay valid)."""
    from orchestrace import dumps

    tr = draw(traces(max_workers=3, max_steps=3))
    doc = json.loads(dumps(tr))
    kind = draw(st.sampled_from(["drop-field", "retype", "swap-ids", "reverse-times", "add-edge",
                                 "drop-event", "dup-event", "junk-top", "truncate", "bad-enum"]))
    evs, eds = doc["events"], doc["edges"]
    if kind == "drop-field":
        target = draw(st.sampled_from([doc] + evs + eds))
        if target:
            target.pop(draw(st.sampled_from(sorted(target))), None)
    elif kind == "retype":
        target = draw(st.sampled_from([doc] + evs + eds))
        target[draw(st.sampled_from(sorted(target)))] = draw(_JUNK)
    elif kind == "swap-ids" and len(evs) > 1:
        i, j = draw(st.integers(0, len(evs) - 1)), draw(st.integers(0, len(evs) - 1))
        evs[i]["id"], evs[j]["id"] = evs[j]["id"], evs[i]["id"]
        evs[i]["t"], evs[j]["t"] = evs[j]["t"], evs[i]["t"]
    elif kind == "reverse-times":
        ts = [e["t"] for e in evs][::-1]
        for e, t in zip(evs, ts, strict=True):
            e["t"] = t
    elif kind == "add-edge":
        pick = st.sampled_from([e["id"] for e in evs] + ["nope"])
        eds.append({"src": draw(pick), "dst": draw(pick), "type": draw(st.sampled_from([x.value for x in EdgeType]))})
    elif kind == "drop-event" and evs:
        evs.pop(draw(st.integers(0, len(evs) - 1)))
    elif kind == "dup-event" and evs:
        evs.append(dict(evs[draw(st.integers(0, len(evs) - 1))]))
    elif kind == "junk-top":
        doc = draw(_JUNK)
    elif kind == "bad-enum" and evs:
        evs[draw(st.integers(0, len(evs) - 1))]["type"] = draw(st.text(max_size=12))
    text = json.dumps(doc, allow_nan=True).encode()
    if kind == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    return text
