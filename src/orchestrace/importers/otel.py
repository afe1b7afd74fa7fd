"""OpenTelemetry spans (OTLP JSON, Jaeger JSON, OTel SDK JSON) → one trace per trace id.

Each span is classified, first match wins:

=========  =======================================================================  ===========================
class      recognised by                                                            trace
=========  =======================================================================  ===========================
agent      ``gen_ai.operation.name`` ``invoke_agent`` / ``create_agent``, a name     the agent's activity; nested
           starting so, or ``openinference.span.kind = AGENT``                      in another agent's span →
                                                                                    O1 decision + ``spawn`` at
                                                                                    the start, ``return`` at the
                                                                                    end (a second invocation of
                                                                                    a known agent: O2 delegate +
                                                                                    ``message``)
tool       ``execute_tool``, ``openinference.span.kind`` TOOL / RETRIEVER,            ``tool_call`` [start, end] +
           ``gen_ai.tool.name`` / ``tool.name``                                     ``tool_result`` at the end
llm        ``chat`` / ``text_completion`` / ``generate_content`` / ``call_llm``,      ``message`` turn with tokens
           OpenInference LLM, or any ``gen_ai.usage.*`` / ``llm.token_count.*``     (``gen_ai.usage.input_tokens``
                                                                                    or ``prompt_tokens``,
                                                                                    ``llm.token_count.prompt`` …)
structure  everything else (HTTP, queues, CHAIN, an LLM span inside an LLM span —   kept for timing: not an event
           the same call instrumented twice —, a client-side ``invoke_agent``
           whose agent's own spans are in the trace)
=========  =======================================================================  ===========================

The acting agent of a tool or LLM span is its nearest enclosing agent span (or the
service name when a trace has no agent span). Within one agent, an activity depends on
every earlier activity that had ended when it started, so parallel calls stay parallel.
An LLM span that contains tool spans ends, as a turn, when the first tool starts.

Duplicate spans: a file that carries a trace's spans more than once (an export or copy
accident) would multiply the run. Spans are keyed by (trace id, span id): an *identical*
copy is dropped and counted (``span/duplicate``, skipped; one ``import.duplicate-span``
warning per trace with the count); a *different* span under an id already seen is an
``import.conflicting-span`` error located at the span id (the first copy is kept).

Rewards reported the Agent Lightning way — an ``agentlightning.annotation`` span with
``agentlightning.reward.<i>.name`` / ``.value`` attributes, as ``agentlightning.emit_reward``
writes — are read too: the last one's primary value (the reward Agent Lightning's trainer
uses) goes into ``rewards["agentlightning"]`` and, when the trace has no outcome and no
signals, becomes its ``team`` reward signal, so credit can be assigned per turn.

Spans exported by :func:`orchestrace.exporters.to_otlp` carry the native event in
``orchestrace.event``; such files are rebuilt exactly (lossless round trip).

>>> from orchestrace.exporters import to_otlp
>>> from orchestrace import synth
>>> import json, tempfile, os
>>> tr = synth(events=60, agents=3, seed=0)
>>> p = os.path.join(tempfile.mkdtemp(), "t.json")
>>> _ = open(p, "w").write(json.dumps(to_otlp(tr)))
>>> read([p])[0] == tr
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..core.trace import DecisionPayload, Edge, Event, Signal, Trace
from ..vocab import CreditUnit, Decision, EdgeType, EventType, RewardFamily, Topology
from ._common import ContentMode, Graph, cost_value, count_value, text_of
from ._report import ImportReport
from ._spans import Span, _spans_of, dedupe_spans

__all__ = ["classify", "dedupe_spans", "read"]

_AGENT_OPS = {"invoke_agent", "create_agent"}
_TOOL_OPS = {"execute_tool"}
_LLM_OPS = {"chat", "text_completion", "generate_content", "call_llm", "completion", "responses"}
_IN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt", "llm.usage.prompt_tokens")
_OUT_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
             "llm.usage.completion_tokens")


def classify(s: Span) -> str:
    """``"agent"``, ``"tool"``, ``"llm"`` or ``"structure"`` for one span (see the table above)."""
    a = s.attrs
    if "orchestrace.handoff.to" in a:
        return "handoff"
    if a.get("orchestrace.guardrail.triggered") is True:
        return "safety"
    op = a.get("gen_ai.operation.name")
    op = op if isinstance(op, str) else None  # attribute values are any JSON value
    first = s.name.split(" ", 1)[0]
    oi = str(a.get("openinference.span.kind") or "").upper()
    if op in _AGENT_OPS or first in _AGENT_OPS or oi == "AGENT":
        return "agent"
    if op in _TOOL_OPS or first in _TOOL_OPS or oi in ("TOOL", "RETRIEVER"):
        return "tool"
    if op in _LLM_OPS or first in _LLM_OPS or oi == "LLM" or any(k in a for k in _IN_KEYS + _OUT_KEYS):
        return "llm"
    if "gen_ai.tool.name" in a or ("tool.name" in a and oi != "CHAIN"):
        return "tool"
    return "structure"


def read(paths: Sequence[str | os.PathLike[str]], *, content: ContentMode = "hash",
         report: ImportReport | None = None, expect: str | None = None) -> list[Trace]:
    """Import span files; ``expect`` (``"otlp"`` / ``"jaeger"``) only sharpens error messages."""
    report = report if report is not None else ImportReport(format=expect or "otlp")
    traces: list[Trace] = []
    for p in map(Path, paths):
        label = p.name
        report.sources.append(str(p))
        spans = _spans_of(p, label, report, expect)
        by_trace: dict[str, list[Span]] = {}
        for s in spans:
            by_trace.setdefault(s.trace_id, []).append(s)
        for tid, group in by_trace.items():
            group = dedupe_spans(tid, group, label, report)
            rewards = [s for s in group if _AGL_REWARD in s.attrs or any(k.startswith(_AGL_REWARD + ".") for k in s.attrs)]
            group = [s for s in group if s not in rewards]
            native = [s for s in group if "orchestrace.event" in s.attrs]
            if native:
                tr = _native(tid, group, label, report)
            else:
                tr = _Mapper(tid, group, label, content, report).run()
            if tr is not None and rewards:
                tr = _with_agl_reward(tr, rewards, report)
            if tr is not None:
                traces.append(tr)
    return traces


_AGL_REWARD = "agentlightning.reward"


def _agl_value(s: Span) -> float | None:
    """The primary reward of an Agent Lightning reward span (dimension 0), or None."""
    v = s.attrs.get(f"{_AGL_REWARD}.0.value")
    if v is None and isinstance(s.attrs.get(_AGL_REWARD), str):  # collectors that keep the list as JSON
        try:
            dims = json.loads(s.attrs[_AGL_REWARD])
            v = dims[0]["value"] if isinstance(dims, list) and dims and isinstance(dims[0], dict) else None
        except ValueError:
            v = None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


def _with_agl_reward(tr: Trace, spans: list[Span], report: ImportReport) -> Trace:
    vals = [(s.end, v) for s in spans if (v := _agl_value(s)) is not None]
    for s in spans:
        ok = _agl_value(s) is not None
        report.count("span/agentlightning.reward", "mapped" if ok else "unreadable")
        if not ok:
            report.problem("import.bad-reward", s.where, "Agent Lightning reward span without a numeric "
                           f"{_AGL_REWARD}.0.value", "the reward was skipped")
    if not vals:
        return tr
    final = max(vals, key=lambda x: x[0])[1]
    signals = tr.signals
    if not signals and tr.outcome is None:
        signals = (Signal(unit=CreditUnit.TEAM, id="team", value=final, family=RewardFamily.SHARED,
                          name="agentlightning"),)
    return msgspec.structs.replace(tr, rewards={**tr.rewards, "agentlightning": final}, signals=signals)


# ----------------------------------------------------------------------------- exact path
def _native(tid: str, spans: list[Span], label: str, report: ImportReport) -> Trace | None:
    """Rebuild a trace written by :func:`orchestrace.exporters.to_otlp` (lossless)."""
    events: list[Event] = []
    edges: list[tuple[int, Edge]] = []
    head: dict[str, Any] = {}
    for s in sorted(spans, key=_event_index):
        raw = s.attrs.get("orchestrace.event")
        if raw is None:
            report.count(f"span/{classify(s)}", "structure", "agent span written by the exporter")
            continue
        try:
            events.append(msgspec.json.decode(raw, type=Event))
            for src, kind, k in json.loads(s.attrs.get("orchestrace.edges_in") or "[]"):
                edges.append((int(k), Edge(src, events[-1].id, EdgeType(kind))))
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError, RecursionError) as exc:
            report.count("span/orchestrace", "unreadable")
            report.error("import.bad-span", s.where, f"orchestrace.event does not decode: {exc}", "the span was skipped")
            continue
        report.count("span/orchestrace", "mapped")
        head = head or s.resource
    raw_head = head.get("orchestrace.trace")
    try:
        h = json.loads(raw_head) if isinstance(raw_head, str) else {}
    except (ValueError, RecursionError):
        h = {}
    if not isinstance(h, dict):
        report.error("import.bad-trace", f"{label}#{tid}", "orchestrace.core.trace header is not a JSON object", "")
        h = {}
    try:
        return msgspec.convert({**h, "events": [msgspec.to_builtins(e) for e in events],
                                "edges": [msgspec.to_builtins(e) for _, e in sorted(edges, key=lambda x: x[0])]}, Trace)
    except msgspec.ValidationError as exc:
        report.error("import.bad-trace", f"{label}#{tid}", f"orchestrace.core.trace header does not decode: {exc}", "")
        return None


# ----------------------------------------------------------------------------- GenAI mapping
@dataclass
class _Act:
    """One activity of an agent: its first and last event, and when it ran."""

    start: float
    end: float
    first: str | None = None
    last: str | None = None


@dataclass
class _AgentState:
    id: str
    entry: str | None = None
    open: list[_Act] = field(default_factory=list)
    spawner: str | None = None


class _Mapper:
    def __init__(self, tid: str, spans: list[Span], label: str, content: ContentMode, report: ImportReport) -> None:
        self.tid = tid
        for s in spans:
            if not s.end >= s.start:  # NaN too
                report.sanitise("import.end-before-start", s.where,
                                f"span ends {'at an unreadable time' if s.end != s.end else f'{s.start - s.end:.6g} s before it starts'}; "
                                "its end was moved to its start", "check the exporter's clock or the span's duration")
                s.end = s.start
        self.spans = sorted(spans, key=lambda s: (s.start, s.end))
        self.by_id = {s.span_id: s for s in self.spans}
        self.cls = {s.span_id: classify(s) for s in self.spans}
        self.orphans = 0
        self.label = label
        self.report = report
        cut = self._cycles()
        agent_spans = [s for s in self.spans if self.cls[s.span_id] == "agent"]
        self.kids: dict[str | None, list[Span]] = {}
        for s in self.spans:
            is_cut = (s.span_id, s.parent_id) in cut
            parent = s.parent_id if s.parent_id in self.by_id and not is_cut else None
            if parent is None and s.parent_id and not is_cut and self.cls[s.span_id] in ("llm", "tool"):
                # parent not exported: attach to the innermost agent span that contains it in time
                box = [a for a in agent_spans if a.start <= s.start and s.end <= a.end and a is not s]
                if box:
                    parent = max(box, key=lambda a: a.start).span_id
                    self.orphans += 1
            self.kids.setdefault(parent, []).append(s)
        self.g = Graph(content, report)
        busy = {a.span_id for a in agent_spans if any(self.cls[k.span_id] in ("llm", "tool", "agent", "handoff", "safety") for k in self._desc(a))}
        for a in agent_spans:
            if a.span_id not in busy and (busy - {a.span_id}) or a.kind == "client" and busy - {a.span_id}:
                self.cls[a.span_id] = "remote-agent"
        self.agents: dict[str, _AgentState] = {}
        self._spawned: set[str] = set()
        self._walked: set[int] = set()

    def _cycles(self) -> set[tuple[str, str]]:
        """Parent links ``(span id, parent id)`` that are cut: one per parent cycle (a self-parented span is one).

        A cycle would hide every span on it (none is a root); the link that closes it is
        cut instead, so that span becomes a root, with a counted warning, and the rest of
        the trace is imported. Duplicate span ids are followed through all their parents.
        """
        ups: dict[str, list[str]] = {}
        for s in self.spans:
            if s.parent_id in self.by_id:
                ups.setdefault(s.span_id, []).append(s.parent_id)  # type: ignore[arg-type]
        color: dict[str, int] = {}  # 1 on the current path, 2 done
        cut: set[tuple[str, str]] = set()
        for start in ups:
            if start in color:
                continue
            color[start] = 1
            stack = [(start, iter(ups.get(start, ())))]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    color[node] = 2
                    stack.pop()
                elif color.get(nxt) == 1:  # back to a span on the path: this link closes a cycle
                    path = [n for n, _ in stack]
                    ring = path[path.index(nxt):]  # ring[k] → ring[k + 1] → … → node → nxt
                    first = min(ring, key=lambda x: (self.by_id[x].start, x))  # the earliest span becomes the root
                    up = nxt if first == node else ring[ring.index(first) + 1]
                    cut.add((first, up))
                    what = ("names itself as its parent" if len(ring) == 1 else
                            f"is on a parent cycle of {len(ring)} spans ({' → '.join(ring[:4])}{' …' if len(ring) > 4 else ''})")
                    self.report.sanitise("import.parent-cycle", self.by_id[first].where,
                                         f"span {first} {what}; it is treated as a root",
                                         "the exporter wrote a broken parentSpanId")
                elif nxt not in color:
                    color[nxt] = 1
                    stack.append((nxt, iter(ups.get(nxt, ()))))
        return cut

    def run(self) -> Trace | None:
        missing = [s for s in self.spans if s.parent_id and s.parent_id not in self.by_id]
        if missing:
            self.report.problem("import.missing-parent", f"{self.label}#{missing[0].span_id}",
                                f"{len(missing)} span(s) of trace {self.tid} name a parent that is not in the export "
                                f"({self.orphans} LLM/tool span(s) attached to the agent span containing them in time)",
                                "the others are treated as roots; export the whole trace to link them")
        default = next((s.service for s in self.spans if s.service), None) or "agent"
        for root in self.kids.get(None, []):
            self._walk(root, agent=None, default=default)
        if not self.g.events:
            self.report.problem("import.no-agent-events", f"{self.label}#{self.tid}",
                                f"trace {self.tid} has no agent, tool or LLM spans", "nothing imported for it")
            return None
        t0 = min(e.t for e in self.g.events.values())
        self.report.clamped_times += self.g.clamped
        system = next((s.attrs.get("gen_ai.system") or s.attrs.get("gen_ai.provider.name") for s in self.spans
                       if s.attrs.get("gen_ai.system") or s.attrs.get("gen_ai.provider.name")), None)
        n_agents = len({e.agent for e in self.g.events.values()})
        conv = next((s.attrs.get("gen_ai.conversation.id") for s in self.spans if s.attrs.get("gen_ai.conversation.id")), None)
        meta = {"source_format": "otel", "t0_unix": t0, "source": self.label, "otel_trace_id": self.tid}
        return self.g.build(self.tid, task_id=str(conv or self.tid), system=str(system or default),
                            topology=Topology.CENTRALIZED if n_agents > 1 else Topology.HARNESS, meta=meta, shift=t0)

    # -- walking ------------------------------------------------------------------------
    def _walk(self, s: Span, agent: _AgentState | None, default: str) -> None:
        if id(s) in self._walked:  # duplicate span ids: a span is mapped once
            return
        self._walked.add(id(s))
        c = self.cls[s.span_id]
        if c == "agent":
            self._agent_span(s, agent, default)
            return
        if agent is None and c in ("tool", "llm"):
            agent = self._state(default)
        if c == "tool":
            assert agent is not None
            if self._tool(s, agent, default):
                return  # its children were walked as the tool's nested agents
        elif c == "llm":
            assert agent is not None
            self._llm(s, agent)
        elif c in ("handoff", "safety") and agent is not None:
            self._handoff(s, agent) if c == "handoff" else self._safety(s, agent)
        else:
            reason = {"llm-dup": "LLM call already counted by an enclosing LLM span",
                      "remote-agent": "agent invocation with no activity below it (its work is under another agent span)"}.get(c, "not an agent event (kept for timing)")
            self.report.count(f"span/{'structure' if c == 'structure' else c}", "structure", reason)
        for k in self.kids.get(s.span_id, []):
            if c in ("llm", "llm-dup") and self.cls[k.span_id] == "llm":
                self.cls[k.span_id] = "llm-dup"
            self._walk(k, agent, default)

    def _state(self, aid: str) -> _AgentState:
        st = self.agents.get(aid)
        if st is None:
            st = self.agents[aid] = _AgentState(aid)
        return st

    def _deps(self, st: _AgentState, start: float) -> list[tuple[str, EdgeType]]:
        done = [a for a in st.open if a.end <= start and a.last]
        if done:
            st.open = [a for a in st.open if a not in done]
            return [(a.last, EdgeType.CAUSAL) for a in done]  # type: ignore[misc]
        if st.entry is None:
            return []
        is_spawn = self.g.events[st.entry].type is EventType.SPAWN
        return [(st.entry, EdgeType.SPAWN if is_spawn else EdgeType.CAUSAL)]

    def _agent_span(self, s: Span, outer: _AgentState | None, default: str) -> None:
        a = s.attrs
        name = str(a.get("gen_ai.agent.id") or a.get("gen_ai.agent.name") or a.get("agent.name")
                   or (s.name.split(" ", 1)[1] if " " in s.name else s.name) or default)
        op = a.get("gen_ai.operation.name") or s.name.split(" ", 1)[0]
        if outer is not None and outer.id == name:
            self.report.count("span/agent", "structure", "nested span of the same agent")
            for k in self.kids.get(s.span_id, []):
                self._walk(k, outer, default)
            return
        known = name in self.agents
        st = self._state(name)
        self._spawned.add(name)
        if outer is None:
            self.report.count("span/agent", "mapped")
            before = len(self.g.events)
            for k in self.kids.get(s.span_id, []):
                self._walk(k, st, default)
            if len(self.g.events) == before and op != "create_agent":  # an agent with no visible work
                ev = self.g.add(EventType.MESSAGE, name, s.start, t_end=s.end, deps=self._deps(st, s.start),
                                from_=name, source=s.where, error=s.error or None, attrs={"kind": "invocation"},
                                text=_text(a, "output"))
                st.open.append(_Act(s.start, s.end, ev, ev))
            return
        deps = self._deps(outer, s.start)
        spawn = not known
        kind = Decision.SPAWN if spawn else Decision.DELEGATE
        dec = self.g.add(EventType.ORCHESTRATOR_DECISION, outer.id, s.start, t_end=s.start, deps=deps, source=s.where,
                         decision=DecisionPayload(kind=kind, action=f"{kind.value}:{name}"))
        if spawn:
            entry = self.g.add(EventType.SPAWN, outer.id, s.start, t_end=s.start, deps=[(dec, EdgeType.SPAWN)], to=name,
                               source=s.where, text=_text(a, "input"))
            st.spawner = outer.id
        else:
            entry = self.g.add(EventType.MESSAGE, outer.id, s.start, t_end=s.start, deps=[(dec, EdgeType.CAUSAL)], from_=outer.id,
                               to=name, source=s.where, text=_text(a, "input"))
        self.report.count("span/agent", "mapped")
        st.entry, st.open = entry, []
        if op == "create_agent":
            outer.open.append(_Act(s.start, s.end, dec, entry))
            return
        for k in self.kids.get(s.span_id, []):
            self._walk(k, st, default)
        last = self._close(st, s.end, to=outer.id, where=s.where, error=s.error, text=_text(a, "output"))
        outer.open.append(_Act(s.start, s.end, dec, last))

    def _close(self, st: _AgentState, end: float, to: str, where: str, error: bool = False,
               text: str | None = None) -> str:
        """End one invocation of an agent: a ``return`` to its spawner, else a message."""
        deps = [(a.last, EdgeType.RETURN) for a in st.open if a.last] or ([(st.entry, EdgeType.RETURN)] if st.entry else [])
        if st.spawner == to:
            ev = self.g.add(EventType.RETURN, st.id, end, t_end=end, deps=deps, from_=st.id, to=to, source=where,
                            error=error or None, text=text)
        else:
            ev = self.g.add(EventType.MESSAGE, st.id, end, t_end=end, deps=[(d, EdgeType.CAUSAL) for d, _ in deps], from_=st.id,
                            to=to, source=where, error=error or None, text=text)
        st.open = [_Act(end, end, ev, ev)]
        return ev

    def _tool(self, s: Span, st: _AgentState, default: str) -> bool:
        """Map a tool span; True when its children (nested agents) were walked here."""
        a = s.attrs
        tool = str(a.get("gen_ai.tool.name") or a.get("tool.name") or (s.name.split(" ", 1)[1] if " " in s.name else s.name))
        has_agents = self._has(s, "agent")
        call = self.g.add(EventType.TOOL_CALL, st.id, s.start, t_end=None if has_agents else s.end,
                          deps=self._deps(st, s.start), tool=tool, source=s.where, text=_text(a, "tool_input"),
                          tokens_in=_int(a, _IN_KEYS, s.where, self.report),
                          tokens_out=_int(a, _OUT_KEYS, s.where, self.report),
                          attrs=_pick(a, ("gen_ai.tool.call.id", "gen_ai.tool.type")))
        deps = [(call, EdgeType.TOOL_DEPENDENCY)]
        if has_agents:  # agents used as tools: their returns feed the result
            saved, st.open = st.open, [_Act(s.start, s.start, call, call)]
            for k in self.kids.get(s.span_id, []):
                self._walk(k, st, default)
            deps = [(x.last, EdgeType.TOOL_DEPENDENCY) for x in st.open if x.last]
            st.open = saved
        res = self.g.add(EventType.TOOL_RESULT, st.id, s.end, deps=deps, tool=tool, source=s.where,
                         error=s.error or None, text=_text(a, "tool_output"))
        st.open.append(_Act(s.start, s.end, call, res))
        self.report.count("span/tool", "mapped")
        return has_agents

    def _handoff(self, s: Span, st: _AgentState) -> None:
        """A handoff hands control to another agent: O2 delegate, then ``spawn`` (first time) or ``message``."""
        to = str(s.attrs["orchestrace.handoff.to"])
        dec = self.g.add(EventType.ORCHESTRATOR_DECISION, st.id, s.start, t_end=s.start, deps=self._deps(st, s.start), source=s.where,
                         decision=DecisionPayload(kind=Decision.DELEGATE, action=f"handoff:{to}"))
        target = self._state(to)
        if to not in self._spawned and not target.open:
            entry = self.g.add(EventType.SPAWN, st.id, s.start, t_end=s.start, deps=[(dec, EdgeType.SPAWN)], to=to, source=s.where,
                               attrs={"kind": "handoff"})
            self._spawned.add(to)
        else:
            entry = self.g.add(EventType.MESSAGE, st.id, s.start, t_end=s.start, deps=[(dec, EdgeType.CAUSAL)], from_=st.id, to=to,
                               source=s.where, attrs={"kind": "handoff"})
        target.entry, target.open = entry, []
        st.open.append(_Act(s.start, s.start, dec, entry))
        self.report.count("span/handoff", "mapped")

    def _safety(self, s: Span, st: _AgentState) -> None:
        ev = self.g.add(EventType.SAFETY_EVENT, st.id, s.start, t_end=s.end, deps=self._deps(st, s.start),
                        source=s.where, attrs={"guardrail": s.name})
        st.open.append(_Act(s.start, s.end, ev, ev))
        self.report.count("span/guardrail", "mapped")

    def _llm(self, s: Span, st: _AgentState) -> None:
        a = s.attrs
        tools = [k.start for k in self._desc(s) if self.cls[k.span_id] == "tool"]
        end = min([s.end, *tools]) if tools else s.end
        tin = _int(a, _IN_KEYS, s.where, self.report)
        tout = _int(a, _OUT_KEYS, s.where, self.report)
        cost = _cost(a, s.where, self.report)
        model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or a.get("llm.model_name")
        ev = self.g.add(EventType.MESSAGE, st.id, s.start, t_end=end, deps=self._deps(st, s.start), from_=st.id,
                        tokens_in=tin, tokens_out=tout, cost=cost, source=s.where, error=s.error or None,
                        text=_text(a, "output"), attrs={"kind": "turn", **({"model": model} if model else {})})
        st.open.append(_Act(s.start, end, ev, ev))
        self.report.count("span/llm", "mapped")

    def _desc(self, s: Span) -> list[Span]:
        out, stack = [], list(self.kids.get(s.span_id, []))
        seen = {id(s)}
        while stack:
            k = stack.pop()
            if id(k) in seen:  # duplicate span ids can link a span below itself
                continue
            seen.add(id(k))
            out.append(k)
            if self.cls[k.span_id] != "agent":
                stack.extend(self.kids.get(k.span_id, []))
        return out

    def _has(self, s: Span, cls: str) -> bool:
        return any(self.cls[k.span_id] == cls for k in self._desc(s))


def _event_index(s: Span) -> int:
    k = s.attrs.get("orchestrace.event.index", 0)
    return k if isinstance(k, int) and not isinstance(k, bool) else 0


def _int(a: dict[str, Any], keys: tuple[str, ...], where: str = "", report: ImportReport | None = None) -> int | None:
    """The first of ``keys`` present in ``a`` as a count (bad values dropped with a counted warning)."""
    for k in keys:
        if a.get(k) is not None:
            n = count_value(a[k], k, where, report)
            if n is not None:
                return n
    return None


def _cost(a: dict[str, Any], where: str, report: ImportReport | None) -> float | None:
    vals = [cost_value(a[k], k, where, report) for k in ("gen_ai.usage.input_cost", "gen_ai.usage.output_cost",
                                                        "gen_ai.usage.cost") if a.get(k) is not None]
    return sum(v for v in vals if v is not None) or None


def _pick(a: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any] | None:
    out = {k: a[k] for k in keys if k in a}
    return out or None


_TEXT_KEYS = {
    "input": ("gen_ai.input.messages", "input.value", "gen_ai.prompt"),
    "output": ("gen_ai.output.messages", "gen_ai.completion.0.content", "gen_ai.output", "output.value",
               "gen_ai.completion"),
    "tool_input": ("gen_ai.tool.call.arguments", "gen_ai.tool.args", "input.value", "tool.parameters"),
    "tool_output": ("gen_ai.tool.call.result", "gen_ai.output", "output.value", "gcp.vertex.agent.tool_response"),
}


def _text(a: dict[str, Any], which: str) -> str | None:
    for k in _TEXT_KEYS[which]:
        v = a.get(k)
        if v not in (None, ""):
            return v if isinstance(v, str) else text_of(v) or json.dumps(v, default=str)
    return None
