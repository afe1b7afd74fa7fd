"""Codex CLI rollouts (JSONL) → one trace per root session, sub-agents included.

A rollout line is ``{"timestamp", "type", "payload"}``. Mapping:

=========================================  ================================================
record                                     trace
=========================================  ================================================
``session_meta``, ``turn_context``         structure (``meta``: session id, CLI version, model)
``response_item`` user ``message``         ``human_intervention`` for what the person sent
                                           (``attrs.kind`` ``prompt``; ``interrupt`` for
                                           ``<turn_aborted>``); context the CLI injects
                                           (:data:`INJECTED_PREFIXES`, e.g.
                                           ``<environment_context>``, ``# AGENTS.md``,
                                           ``<subagent_notification>``) → structure. When the
                                           rollout records ``event_msg`` ``user_message``
                                           lines, they are the authority: a user item no
                                           such line records is structure too
``response_item`` assistant ``message``    ``message`` turn (``t`` = when the agent was ready,
                                           ``t_end`` = the line's time)
``response_item`` ``reasoning``            ``message`` with ``attrs.kind = "reasoning"``
``function_call`` / ``custom_tool_call`` /  ``tool_call`` (``t_end`` = its output's time)
``local_shell_call``
``function_call_output`` (+ custom)        ``tool_result`` (``tool_dependency`` edge)
``event_msg`` ``token_count``              its ``last_token_usage`` goes to the model output
                                           just before it (``tokens_in`` = input tokens,
                                           ``tokens_out`` = output tokens)
other ``event_msg`` (UI mirrors)           skipped by rule
``function_call`` ``spawn_agent``          ``orchestrator_decision`` (O1) → ``spawn`` → the
                                           child rollout's events → ``return`` to the parent
``compacted``                              structure (compaction)
=========================================  ================================================

Child rollouts are the other files given, or ``*.jsonl`` files next to the parent, whose
``session_meta`` names the parent thread (``source.subagent.thread_spawn.parent_thread_id``)
or whose id is the ``agent_id`` the ``spawn_agent`` call returned.

>>> import pathlib, tempfile, json
>>> d = pathlib.Path(tempfile.mkdtemp()); f = d / "rollout.jsonl"
>>> lines = [
...  {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s1"}},
...  {"timestamp": "2025-01-01T00:00:01Z", "type": "response_item",
...   "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
...  {"timestamp": "2025-01-01T00:00:02Z", "type": "response_item",
...   "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}},
...  {"timestamp": "2025-01-01T00:00:03Z", "type": "response_item",
...   "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}}]
>>> _ = f.write_text("\\n".join(json.dumps(x) for x in lines) + "\\n")
>>> from orchestrace.importers import import_traces
>>> [e.type.value for e in import_traces("codex", [f]).traces[0].events]
['human_intervention', 'tool_call', 'tool_result']
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.trace import DecisionPayload, Trace
from ..vocab import Decision, EdgeType, EventType, Topology
from ._common import ContentMode, Graph, bad_field, count_value, iter_jsonl, parse_ts, text_of
from ._report import ImportReport

__all__ = ["INJECTED_PREFIXES", "read"]

MAIN = "main"
_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
#: Text prefixes of user-role items that Codex writes itself (its ``is_contextual_user_message``
#: list): instructions, environment and context updates, shell-command records, notifications.
INJECTED_PREFIXES: tuple[str, ...] = (
    "<environment_context", "<user_instructions>", "# AGENTS.md", "<permissions", "<INSTRUCTIONS>",
    "<skills_instructions>", "<skill>", "<user_shell_command>", "<subagent_notification>",
    "<codex_internal_context", "<recommended_plugins>", "<hook_prompt", "<context_update>", "<external_",
    "<collaboration_mode>", "<model_switch>", "<personality_spec>", "<realtime_conversation>",
)
_INTERRUPT = "<turn_aborted>"
#: Fields that name things (types, ids, tools): any other JSON type makes a record unreadable.
_STR_INTO = frozenset({"payload", "content"})
_STR_KEYS = frozenset({"type", "role", "id", "call_id", "name", "cwd", "originator", "cli_version", "model_provider",
                       "agent_id", "thread_id", "model", "text", "record_type", "status"})
#: The fields of a ``token_count`` usage block that hold token counts.
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
_OLD_ITEMS = {"message", "reasoning", *_CALLS, *_OUTPUTS}


@dataclass
class _Rec:
    label: str
    line: int
    kind: str  # session_meta, turn_context, response_item, event_msg, compacted, …
    payload: dict[str, Any]
    t: float | None

    @property
    def where(self) -> str:
        return f"{self.label}:{self.line}"

    @property
    def rtype(self) -> str:
        sub = self.payload.get("type")
        return f"{self.kind}/{sub}" if self.kind in ("response_item", "event_msg") and sub else self.kind


@dataclass
class _Rollout:
    path: Path
    recs: list[_Rec]
    sid: str | None
    parent: str | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Agent:
    id: str
    role: str
    frontier: list[str] = field(default_factory=list)
    resp: list[str] | None = None  # deps of the current model response, None between responses


def read(paths: Sequence[str | os.PathLike[str]], *, content: ContentMode = "hash",
         report: ImportReport | None = None) -> list[Trace]:
    """Import Codex rollouts; children of ``spawn_agent`` join their parent's trace."""
    report = report if report is not None else ImportReport(format="codex")
    given = [_load(Path(p), report) for p in paths]
    pool = {str(r.path.resolve()): r for r in given}
    for r in given:  # child rollouts next to the parents
        for q in sorted(r.path.parent.glob("*.jsonl")):
            key = str(q.resolve())
            if key not in pool and _peek_parent(q) is not None:
                pool[key] = _load(q, report)
    by_id = {r.sid: r for r in pool.values() if r.sid}
    traces = []
    for r in given:
        if r.parent and r.parent in by_id:
            continue  # imported inside its parent's trace
        if not r.recs:
            if not any(pr.path.startswith(f"{r.path.name}:") for pr in report.errors):  # nothing said yet
                report.error("import.empty", f"{r.path.name}:1", "no readable records",
                             "pass a Codex CLI rollout (rollout-*.jsonl)")
            continue
        tr = _Import(r, by_id, content, report).run()
        if tr is not None:
            traces.append(tr)
    return traces


def _peek_parent(path: Path) -> str | None:
    try:
        from .._limits import open_input

        with open_input(path) as fh:  # a FIFO never blocks
            first = fh.readline(1 << 20)
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
        return _parent_of(obj["payload"].get("source"))
    return None


def _parent_of(source: Any, depth: int = 0) -> str | None:
    """The parent thread id anywhere inside ``session_meta.source`` (``parent_thread_id``)."""
    if isinstance(source, dict) and depth < 32:
        for k, v in source.items():
            if k in ("parent_thread_id", "parent_id") and isinstance(v, str):
                return v
            found = _parent_of(v, depth + 1)
            if found:
                return found
    return None


def _load(path: Path, report: ImportReport) -> _Rollout:
    label = path.name
    report.sources.append(str(path))
    recs: list[_Rec] = []
    sid = parent = None
    meta: dict[str, Any] = {}
    last_t: float | None = None
    for line, obj in iter_jsonl(path, label, report):
        bad = bad_field(obj, _STR_KEYS, _STR_INTO)
        if bad is not None:
            report.count("<line>", "unreadable")
            report.error("import.bad-field", f"{label}:{line}", f"{bad} should be a string; record skipped",
                         "this record is not a Codex rollout line")
            continue
        if "payload" in obj and isinstance(obj.get("type"), str):
            kind, payload = obj["type"], obj["payload"] if isinstance(obj["payload"], dict) else {}
        elif obj.get("type") in _OLD_ITEMS:  # rollouts before the {type, payload} wrapper
            kind, payload = "response_item", obj
        elif "id" in obj and "instructions" in obj or obj.get("record_type") == "state":
            kind, payload = ("session_meta" if "id" in obj else "state"), obj
        else:
            kind, payload = str(obj.get("type", "<no type>")), obj
        t = parse_ts(obj.get("timestamp")) or parse_ts(payload.get("timestamp"))
        if t is None:
            t = last_t
        last_t = t if t is not None else last_t
        rec = _Rec(label, line, kind, payload, t)
        if kind == "session_meta":
            sid = sid or (str(payload["id"]) if payload.get("id") else None)
            parent = parent or _parent_of(payload.get("source"))
            meta.update({k: payload[k] for k in ("id", "cli_version", "originator", "model_provider") if k in payload})
        recs.append(rec)
    if recs and not any(r.kind in ("session_meta", "response_item", "event_msg", "turn_context") for r in recs):
        report.error("import.wrong-format", f"{label}:1", "no Codex records (session_meta / response_item lines)",
                     "check the format, or use `orchestrace import auto`")
        for r in recs:
            report.count(r.rtype, "unknown")
        recs = []
    return _Rollout(path, recs, sid, parent, meta)


class _Import:
    def __init__(self, root: _Rollout, by_id: dict[str, _Rollout], content: ContentMode,
                 report: ImportReport) -> None:
        self.root = root
        self.by_id = by_id
        self.children: dict[str | None, list[_Rollout]] = {}  # looked up by a possibly-None sid
        for r in by_id.values():
            if r.parent:
                self.children.setdefault(r.parent, []).append(r)
        self.report = report
        self.g = Graph(content, report)
        self.agents: dict[str, _Agent] = {}
        self.returns: dict[str, str] = {}  # child agent id -> return event id
        self.used: set[str] = set()

    def run(self) -> Trace | None:
        main = self.agents[MAIN] = _Agent(MAIN, "orchestrator")
        self._agent(main, self.root, parent=None)
        if not self.g.events:
            self.report.error("import.no-events", f"{self.root.path.name}:1", "no agent activity in the rollout", "")
            return None
        t0 = min(e.t for e in self.g.events.values())
        meta = {"source_format": "codex", "t0_unix": t0, "source": self.root.path.name, **self.root.meta}
        self.report.clamped_times += self.g.clamped
        sid = self.root.sid or self.root.path.stem
        n_sub = len(self.agents) - 1
        return self.g.build(sid, task_id=sid, system="codex", meta=meta, shift=t0,
                            topology=Topology.CENTRALIZED if n_sub else Topology.HARNESS)

    # -- one rollout = one agent ----------------------------------------------------------
    def _agent(self, agent: _Agent, ro: _Rollout, parent: _Agent | None) -> None:
        if ro.sid:
            self.used.add(ro.sid)
        usage, out_t, call_names, spawn_ids = self._prepass(ro)
        typed = _typed_messages(ro)  # what event_msg user_message lines say the person sent, if recorded
        calls: dict[str, str] = {}
        prompt_seen = False
        for r in ro.recs:
            p = r.payload
            typ = p.get("type")
            if r.t is None:
                self.report.count(r.rtype, "skipped", "no timestamp")
                self.report.problem("import.no-timestamp", r.where, "record has no readable timestamp", "skipped")
                continue
            if r.kind in ("session_meta", "turn_context", "state"):
                self.report.count(r.rtype, "structure", "session settings (in meta)")
            elif r.kind == "compacted":
                self.report.count(r.rtype, "structure", "context compaction")
            elif r.kind == "event_msg":
                if typ == "token_count":
                    self.report.count(r.rtype, "structure", "token usage folded into the preceding model output")
                else:
                    self.report.count(r.rtype, "skipped", "UI event (mirrors response items)")
            elif r.kind == "response_item":
                if typ == "message" and p.get("role") == "assistant" or typ == "reasoning":
                    self._output(agent, r, usage.get(r.line))
                elif typ == "message":
                    text = text_of(p.get("content"))
                    kind = None if p.get("role") in ("developer", "system") else _user_kind(p.get("content"), text)
                    if kind is None:
                        self.report.count(r.rtype, "structure", "instructions / context injected by the CLI")
                    elif parent is not None and not prompt_seen:
                        prompt_seen = True
                        self.report.count(r.rtype, "structure", "sub-agent prompt (carried by the spawn)")
                    elif kind == "prompt" and typed is not None and not _take(typed, text):
                        self.report.count(r.rtype, "structure", "user item no user_message event records (injected)")
                    else:
                        agent.resp = None
                        ev = self.g.add(EventType.HUMAN_INTERVENTION, agent.id, r.t, from_="user",
                                        to=agent.id, deps=[(f, EdgeType.CAUSAL) for f in agent.frontier],
                                        text=text or None, source=r.where, attrs={"kind": kind})
                        agent.frontier = [ev]
                        self.report.count(r.rtype, "mapped")
                elif typ in _CALLS:
                    cid = str(p.get("call_id") or p.get("id") or r.where)
                    if p.get("name") == "spawn_agent":
                        self._spawn(agent, r, cid, spawn_ids.get(cid), usage.get(r.line))
                    else:
                        calls[cid] = self._call(agent, r, cid, usage.get(r.line), out_t.get(cid))
                    self.report.count(r.rtype, "mapped")
                elif typ in _OUTPUTS:
                    self._result(agent, r, calls, call_names)
                elif typ in ("ghost_snapshot",):
                    self.report.count(r.rtype, "skipped", "workspace snapshot")
                else:
                    self._unknown(r)
            else:
                self._unknown(r)

    def _unknown(self, r: _Rec) -> None:
        self.report.count(r.rtype, "unknown")
        self.report.problem("import.unknown-record", r.where, f"unknown record type {r.rtype!r}",
                            "counted as unknown and left out")

    def _prepass(self, ro: _Rollout) -> tuple[dict[int, dict[str, int]], dict[str, float], dict[str, str], dict[str, str]]:
        usage: dict[int, dict[str, int]] = {}
        out_t: dict[str, float] = {}
        names: dict[str, str] = {}
        spawn_ids: dict[str, str] = {}
        last_out: int | None = None
        prev_total: dict[str, int] = {}
        for r in ro.recs:
            p = r.payload
            typ = p.get("type")
            if r.kind == "response_item" and (typ in _CALLS or typ == "reasoning"
                                              or typ == "message" and p.get("role") == "assistant"):
                last_out = r.line
                if typ in _CALLS:
                    names[str(p.get("call_id") or p.get("id") or r.where)] = str(p.get("name") or typ)
            elif r.kind == "response_item" and typ in _OUTPUTS:
                cid = str(p.get("call_id"))
                if r.t is not None:
                    out_t.setdefault(cid, r.t)
                if names.get(cid) == "spawn_agent":
                    aid = _agent_id(p.get("output"))
                    if aid:
                        spawn_ids[cid] = aid
            elif r.kind == "event_msg" and typ == "token_count":
                info: dict[str, Any] = p["info"] if isinstance(p.get("info"), dict) else {}
                last = info.get("last_token_usage")
                total: dict[str, Any] = info["total_token_usage"] if isinstance(info.get("total_token_usage"), dict) else {}
                total = {k: n for k, v in total.items() if k in _USAGE_KEYS
                         and (n := count_value(v, f"total_token_usage.{k}", r.where, self.report)) is not None}
                if isinstance(last, dict):
                    last = {k: n for k, v in last.items() if k in _USAGE_KEYS
                            and (n := count_value(v, f"last_token_usage.{k}", r.where, self.report)) is not None}
                else:
                    last = {k: v - prev_total.get(k, 0) for k, v in total.items() if v >= prev_total.get(k, 0)}
                prev_total = total or prev_total
                if last_out is not None and last:
                    u = usage.setdefault(last_out, {})
                    for k, v in last.items():
                        u[k] = u.get(k, 0) + v
                    last_out = None
        return usage, out_t, names, spawn_ids

    def _start_response(self, agent: _Agent) -> list[str]:
        if agent.resp is None:
            agent.resp = list(agent.frontier)
            agent.frontier = []
        return agent.resp

    def _output(self, agent: _Agent, r: _Rec, usage: dict[str, int] | None) -> None:
        assert r.t is not None
        deps = self._start_response(agent)
        ready = max((self.g.end(d) for d in deps), default=r.t)
        p = r.payload
        kind = "reasoning" if p.get("type") == "reasoning" else "turn"
        text = text_of(p.get("summary") if kind == "reasoning" and p.get("summary") else p.get("content"))
        ev = self.g.add(EventType.MESSAGE, agent.id, min(ready, r.t), t_end=r.t, deps=[(d, EdgeType.CAUSAL) for d in deps],
                        role=agent.role, from_=agent.id, text=text or None, source=r.where,
                        attrs={"kind": kind}, **_tokens(usage))
        agent.resp = [ev]
        agent.frontier = [f for f in agent.frontier if f not in deps] + [ev]
        self.report.count(r.rtype, "mapped")

    def _call(self, agent: _Agent, r: _Rec, cid: str, usage: dict[str, int] | None, t_end: float | None) -> str:
        assert r.t is not None
        p = r.payload
        deps = self._start_response(agent)
        name = str(p.get("name") or p.get("type"))
        args = p.get("arguments") if p.get("arguments") is not None else p.get("input") or p.get("action")
        ev = self.g.add(EventType.TOOL_CALL, agent.id, r.t, t_end=t_end, deps=[(d, EdgeType.CAUSAL) for d in deps],
                        role=agent.role, tool=name, text=args if isinstance(args, str) else json.dumps(args) if args else None,
                        privileged=True if name in ("shell", "local_shell", "apply_patch", "exec_command") else None,
                        source=r.where, attrs={"call_id": cid}, **_tokens(usage))
        agent.frontier = [f for f in agent.frontier if f not in deps] + [ev]
        return ev

    def _result(self, agent: _Agent, r: _Rec, calls: dict[str, str], names: dict[str, str]) -> None:
        assert r.t is not None
        p = r.payload
        cid = str(p.get("call_id"))
        agent.resp = None
        out = p.get("output")
        text = out if isinstance(out, str) else text_of(out) if out is not None else ""
        if names.get(cid) == "spawn_agent":
            self.report.count(r.rtype, "structure", "spawn acknowledgement (carried by the spawn)")
            return
        call = calls.get(cid)
        deps = [(call, EdgeType.TOOL_DEPENDENCY)] if call else [(f, EdgeType.CAUSAL) for f in agent.frontier]
        if call is None:
            self.report.problem("import.orphan-result", r.where, f"output for unknown call_id {cid}", "mapped with no call")
        if names.get(cid, "").startswith("wait"):  # the children's returns feed the wait's result
            deps += [(ret, EdgeType.RETURN) for ret in self.returns.values()]
            self.returns.clear()
        err = True if isinstance(out, dict) and out.get("success") is False else None
        ev = self.g.add(EventType.TOOL_RESULT, agent.id, r.t, deps=deps, role=agent.role, tool=names.get(cid),
                        error=err, text=text or None, source=r.where, attrs={"call_id": cid})
        agent.frontier = [ev if f == call else f for f in agent.frontier]
        if ev not in agent.frontier:
            agent.frontier.append(ev)
        self.report.count(r.rtype, "mapped")

    def _spawn(self, agent: _Agent, r: _Rec, cid: str, child_sid: str | None, usage: dict[str, int] | None) -> None:
        assert r.t is not None
        p = r.payload
        try:
            args = json.loads(p.get("arguments") or "{}")
        except (TypeError, ValueError, RecursionError):
            args = {}
        args = args if isinstance(args, dict) else {}
        role = str(args.get("agent_type") or "default")
        deps = self._start_response(agent)
        dec = self.g.add(EventType.ORCHESTRATOR_DECISION, agent.id, r.t, t_end=r.t, deps=[(d, EdgeType.CAUSAL) for d in deps],
                         role=agent.role, source=r.where, attrs={"call_id": cid},
                         decision=DecisionPayload(kind=Decision.SPAWN, action=f"spawn:{role}"), **_tokens(usage))
        child_ro = self.by_id.get(child_sid) if child_sid else None
        if child_ro is None:  # fall back to an unused child rollout of this thread, in time order
            cands = [c for c in self.children.get(self._sid_of(agent), []) if c.sid not in self.used]
            child_ro = cands[0] if cands else None
        child_id = (child_ro.sid if child_ro else None) or child_sid or cid
        sp = self.g.add(EventType.SPAWN, agent.id, r.t, t_end=r.t, deps=[(dec, EdgeType.SPAWN)], role=agent.role, to=child_id,
                        text=args.get("message") if isinstance(args.get("message"), str) else None,
                        source=r.where, attrs={"call_id": cid, "agent_type": role})
        agent.frontier = [f for f in agent.frontier if f not in deps] + [sp]
        child = self.agents.setdefault(child_id, _Agent(child_id, role))
        child.frontier = [sp]
        if child_ro is None:
            self.report.problem("import.missing-subagent", r.where, f"no rollout found for sub-agent {child_id}",
                                "imported its spawn only; pass the child rollout file too")
            return
        self._agent(child, child_ro, parent=agent)
        t_ret = max(self.g.end(f) for f in child.frontier)
        ret = self.g.add(EventType.RETURN, child_id, t_ret, t_end=t_ret,
                         deps=[(f, EdgeType.RETURN) for f in child.frontier], role=role, from_=child_id, to=agent.id,
                         source=f"{child_ro.path.name}:end")
        child.frontier = [ret]
        self.returns[child_id] = ret

    def _sid_of(self, agent: _Agent) -> str | None:
        if agent.id == MAIN:
            return self.root.sid
        return agent.id


def _user_kind(content: Any, text: str) -> str | None:
    """``"prompt"``, ``"interrupt"`` or None (injected by the CLI) for a user-role item.

    An item is injected when any of its text parts starts with an :data:`INJECTED_PREFIXES`
    entry (as Codex itself decides); ``<turn_aborted>`` records that the person interrupted.
    """
    parts = [text_of([c]) for c in content] if isinstance(content, list) else [text]
    heads = [x.lstrip() for x in parts if x.strip()] or [text.lstrip()]
    if any(h.startswith(_INTERRUPT) for h in heads):
        return "interrupt"
    if any(h.startswith(INJECTED_PREFIXES) for h in heads):
        return None
    return "prompt"


def _typed_messages(ro: _Rollout) -> list[str] | None:
    """Texts of the rollout's ``event_msg`` ``user_message`` lines (None when it records none)."""
    out = [str(r.payload.get("message") or "").strip() for r in ro.recs
           if r.kind == "event_msg" and r.payload.get("type") == "user_message"]
    return out or None


def _take(typed: list[str], text: str) -> bool:
    """Match a user item to an unused ``user_message`` text (equal, or contained in the item)."""
    t = text.strip()
    for k, msg in enumerate(typed):
        if msg == t or (msg and msg in t):
            del typed[k]
            return True
    return False


def _agent_id(output: Any) -> str | None:
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except (ValueError, RecursionError):
            return None
    if isinstance(output, dict):
        v = output.get("agent_id") or output.get("thread_id") or output.get("id")
        return str(v) if v else None
    return None


def _tokens(usage: dict[str, int] | None) -> dict[str, Any]:
    if not usage:
        return {}
    return {"tokens_in": usage.get("input_tokens"), "tokens_out": usage.get("output_tokens")}

