"""Claude Code session transcripts → one trace per session.

A session is ``<id>.jsonl`` plus an optional ``<id>/subagents/`` folder. Mapping:

==========================================  ===============================================
record                                      trace
==========================================  ===============================================
``user`` text a person sent (not            ``human_intervention`` on the main agent,
``isMeta``): a prompt, a slash command      ``attrs.kind`` = ``prompt`` / ``command`` /
(``<command-name>``), a ``!`` shell input   ``shell`` / ``interrupt`` (rules in
(``<bash-input>``), an interrupt            :data:`USER_TEXT_RULES`)
(``[Request interrupted by user…``)
``user`` text the CLI wrote                 not human: ``<task-notification>`` (a background
                                            task finished) → ``tool_result`` of tool
                                            ``background_task``; command and shell output
                                            (``<local-command-stdout>``, ``<bash-stdout>`` …),
                                            ``<system-reminder>``, hook output → structure
``assistant`` lines of one ``message.id``   one ``message`` turn: ``tokens_in`` = input +
                                            cache-creation + cache-read tokens,
                                            ``tokens_out`` = output tokens (max over the
                                            message's lines, so a repeated usage block is
                                            counted once); ``t`` = when the agent was ready
                                            (end of its previous step), ``t_end`` = first
                                            tool-use line (or last line)
``tool_use`` block                          ``tool_call`` (``t_end`` = its result's time)
``tool_result`` block                       ``tool_result`` (``tool_dependency`` edge;
                                            ``error`` from ``is_error``; web tools untrusted)
``tool_use`` named ``Task`` / ``Agent``     ``orchestrator_decision`` (O1 spawn) → ``spawn``
                                            → the sub-agent's own events → ``return`` to the
                                            main agent at the Task result's time; decision,
                                            spawn and return are instants (``t_end = t``), so
                                            the sub-agent's time is counted once, as its own
sub-agent lines                             from ``subagents/agent-<agentId>.jsonl`` (agentId
                                            from the result's ``toolUseResult`` or the
                                            ``agent_progress`` lines), else from the
                                            ``agent_progress`` lines themselves
``agent-acompact-*.jsonl``, compaction      not agents: counted as structure, tokens in
summaries, ``compact_boundary``             ``costs["compaction_tokens"]``, ``meta["compactions"]``
``system``, ``summary``                     structure (session bookkeeping)
``progress`` (hooks, bash), snapshots,      skipped by rule, with the rule named in the report
queue operations, ``isMeta`` lines
anything else                               ``unknown``: counted and warned
==========================================  ===============================================

Every event's ``source`` is ``file:line``. Times are seconds from the session's first
record (``meta["t0_unix"]`` holds the epoch); out-of-order records are clamped so that
time never runs backwards along an edge.

>>> import pathlib, tempfile, json
>>> d = pathlib.Path(tempfile.mkdtemp()); f = d / "s1.jsonl"
>>> recs = [
...  {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z",
...   "message": {"role": "user", "content": "list files"}},
...  {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-01-01T00:00:02Z",
...   "message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 10, "output_tokens": 5},
...    "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
...  {"type": "user", "uuid": "u2", "sessionId": "s1", "timestamp": "2026-01-01T00:00:03Z",
...   "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}}]
>>> _ = f.write_text("\\n".join(json.dumps(r) for r in recs) + "\\n")
>>> from orchestrace.importers import import_traces
>>> res = import_traces("claude-code", [f])
>>> [e.type.value for e in res.traces[0].events], res.traces[0].costs["tokens"]
(['human_intervention', 'message', 'tool_call', 'tool_result'], 15.0)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.trace import DecisionPayload, Trace
from ..errors import TraceDecodeError
from ..vocab import Decision, EdgeType, EventType, Topology
from ._claude_records import (
    _KNOWN_VERSION,
    _SKIP_TYPES,
    _STR_INTO,
    _STR_KEYS,
    _STRUCTURE_TYPES,
    _USAGE_KEYS,
    MAIN,
    PRIVILEGED_TOOLS,
    SPAWN_TOOLS,
    UNTRUSTED_TOOLS,
    USER_TEXT_RULES,
    _Agent,
    _blocks,
    _d,
    _json_text,
    _Msg,
    _Rec,
    user_text_kind,
)
from ._common import (
    ContentMode,
    Graph,
    bad_field,
    count_value,
    iter_jsonl,
    parse_ts,
    relative_label,
    text_of,
)
from ._report import ImportReport

__all__ = ["SPAWN_TOOLS", "USER_TEXT_RULES", "read"]

def read(paths: Sequence[str | os.PathLike[str]], *, content: ContentMode = "hash",
         report: ImportReport | None = None) -> list[Trace]:
    """Import Claude Code session files (or folders holding them); one trace per session."""
    report = report if report is not None else ImportReport(format="claude-code")
    traces = []
    for p in _expand(paths, report):
        tr = _Session(Path(p), content, report).run()
        if tr is not None:
            traces.append(tr)
    return traces


def _expand(paths: Sequence[str | os.PathLike[str]], report: ImportReport) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.glob("*.jsonl") if q.is_file())
            if not found:
                raise TraceDecodeError(f"{p}: no session .jsonl files in this folder", [])
            out.extend(found)
        else:
            out.append(p)
    return out


class _Session:
    def __init__(self, path: Path, content: ContentMode, report: ImportReport) -> None:
        self.path = path
        self.root = path.parent
        self.sub_dir = path.with_suffix("") / "subagents"
        self.report = report
        self.g = Graph(content, report)
        self.agents: dict[str, _Agent] = {}
        self.pending: dict[str, tuple[str, str, str]] = {}  # tool_use_id -> (event id, agent, tool)
        self.result_t: dict[str, float] = {}
        self.task_agent: dict[str, str] = {}  # Task tool_use_id -> agentId
        self.task_result: dict[str, dict[str, Any]] = {}
        self.progress: dict[str, list[_Rec]] = {}  # Task tool_use_id -> embedded sub-agent records
        self.used_files: set[Path] = set()
        self.meta: dict[str, Any] = {"source_format": "claude-code"}
        self.compaction_tokens = 0
        self.seen_uuids: dict[str, str] = {}
        self.task_ids: set[str] = set()

    # ------------------------------------------------------------------ reading
    def _records(self, path: Path) -> list[_Rec]:
        label = relative_label(path, self.root)
        self.report.sources.append(str(path))
        recs = []
        for line, obj in iter_jsonl(path, label, self.report):
            bad = bad_field(obj, _STR_KEYS, _STR_INTO)
            if bad is not None:
                self.report.count("<line>", "unreadable")
                self.report.error("import.bad-field", f"{label}:{line}", f"{bad} should be a string; record skipped",
                                  "this record is not a Claude Code transcript line")
                continue
            rtype = str(obj.get("type", "<no type>"))
            if rtype == "progress":
                rtype = f"progress/{_d(obj.get('data')).get('type', '?')}"
            elif rtype == "system":
                rtype = f"system/{obj.get('subtype', '?')}"
            recs.append(_Rec(label, line, obj, rtype, parse_ts(obj.get("timestamp"))))
        return recs

    def run(self) -> Trace | None:
        recs = self._records(self.path)
        if recs and not any(r.obj.get("type") in ("user", "assistant") for r in recs):
            known = sum(1 for r in recs if "sessionId" in r.obj or r.obj.get("type") in _SKIP_TYPES)
            if not known:
                self.report.error("import.wrong-format", f"{self.path.name}:1",
                                  "no Claude Code records (user/assistant lines with sessionId) in this file",
                                  "check the format, or use `orchestrace import auto`")
                for r in recs:
                    self.report.count(r.rtype, "unknown")
                return None
        if not recs:
            self.report.error("import.empty", f"{self.path.name}:1", "no readable records", "")
            return None
        self._prepass(recs)
        self._check_version(recs)
        main = self._agent(MAIN, "orchestrator")
        self._run_agent(main, recs, parent=None)
        self._compaction_files()
        self._unused_subagent_files()
        return self._build(recs)

    def _check_version(self, recs: list[_Rec]) -> None:
        v = next((r.obj.get("version") for r in recs if isinstance(r.obj.get("version"), str)), None)
        self.meta["version"] = v
        if v is not None and not _KNOWN_VERSION.match(v):
            self.report.problem("import.unknown-version", f"{self.path.name}:1",
                                f"Claude Code version {v!r} is not one this importer was written for (1.x, 2.x)",
                                "imported with the 2.x rules; check the report's unknown counts")

    def _prepass(self, recs: list[_Rec]) -> None:
        for r in recs:
            o = r.obj
            if o.get("type") == "assistant":
                for b in _blocks(o):
                    if b.get("type") == "tool_use" and b.get("name") in SPAWN_TOOLS and isinstance(b.get("id"), str):
                        self.task_ids.add(b["id"])
            elif o.get("type") == "user":
                tur = o.get("toolUseResult")
                for b in _blocks(o):
                    if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                        tid = b["tool_use_id"]
                        if r.t is not None:
                            self.result_t.setdefault(tid, r.t)
                        if isinstance(tur, dict):
                            self.task_result.setdefault(tid, tur)
                            if isinstance(tur.get("agentId"), str):
                                self.task_agent.setdefault(tid, tur["agentId"])
            elif r.rtype == "progress/agent_progress":
                data = _d(o.get("data"))
                tid = o.get("parentToolUseID")
                if isinstance(tid, str):
                    if isinstance(data.get("agentId"), str):
                        self.task_agent.setdefault(tid, data["agentId"])
                    m = data.get("message")
                    if isinstance(m, dict):
                        emb = dict(m)
                        emb.setdefault("timestamp", o.get("timestamp"))
                        self.progress.setdefault(tid, []).append(
                            _Rec(r.label, r.line, emb, "progress/agent_progress", parse_ts(emb.get("timestamp"))))

    def _msgs(self, recs: list[_Rec]) -> dict[str, _Msg]:
        out: dict[str, _Msg] = {}
        for r in recs:
            o = r.obj
            if o.get("type") != "assistant" or r.t is None:
                continue
            m = _d(o.get("message"))
            mid = str(m.get("id") or o.get("uuid") or r.where)
            blocks = _blocks(o)
            info = out.get(mid)
            if info is None:
                info = out[mid] = _Msg(first_t=r.t, t_end=r.t, usage={}, model=m.get("model"), text="")
            first_tool = any(b.get("type") == "tool_use" for b in blocks)
            if not info.tool_seen:
                info.t_end = max(info.t_end, r.t)
                info.tool_seen = first_tool
            for k, v in _d(m.get("usage")).items():
                if k in _USAGE_KEYS and (n := count_value(v, f"usage.{k}", r.where, self.report)) is not None:
                    info.usage[k] = max(info.usage.get(k, 0), n)
            txt = "\n".join(text_of([b]) for b in blocks if b.get("type") in ("text", "thinking"))
            if txt:
                info.text = f"{info.text}\n{txt}" if info.text else txt
        return out

    # ------------------------------------------------------------------ mapping
    def _agent(self, aid: str, role: str) -> _Agent:
        a = self.agents.get(aid)
        if a is None:
            a = self.agents[aid] = _Agent(aid, role)
        return a

    def _run_agent(self, agent: _Agent, recs: list[_Rec], parent: _Agent | None) -> None:
        last_t: float | None = None
        for r in recs:  # a record with no readable time takes the previous record's
            if r.obj.get("type") in ("user", "assistant") and r.t is None and last_t is not None:
                r.t = last_t
                self.report.problem("import.no-timestamp", r.where, "record has no readable timestamp",
                                    "took the previous record's time")
            last_t = r.t if r.t is not None else last_t
        msgs = self._msgs(recs)
        for r in recs:
            o = r.obj
            typ = o.get("type")
            uid = o.get("uuid")
            if isinstance(uid, str) and typ in ("user", "assistant"):
                key = f"{agent.id}/{uid}"
                if key in self.seen_uuids:
                    self.report.count(r.rtype, "skipped", "duplicate record (same uuid)")
                    self.report.problem("import.duplicate", r.where, f"record {uid} repeats {self.seen_uuids[key]}",
                                        "the copy was skipped")
                    continue
                self.seen_uuids[key] = r.where
            if typ in ("user", "assistant") and r.t is None:
                self.report.count(r.rtype, "skipped", "no timestamp")
                self.report.problem("import.no-timestamp", r.where, "record has no readable timestamp", "skipped")
                continue
            if typ == "assistant":
                self._assistant(agent, r, msgs, parent)
            elif typ == "user":
                self._user(agent, r, parent)
            elif r.rtype == "progress/agent_progress":
                tid = o.get("parentToolUseID")
                if self._sidechain_of(tid) is not None:
                    self.report.count(r.rtype, "skipped", "duplicate of the sub-agent's sidechain file")
                elif tid not in self.task_ids:
                    self.report.count(r.rtype, "skipped", "progress of a Task call not in this file")
                    self.report.problem("import.orphan-progress", r.where,
                                        f"agent_progress for Task {tid!r}, which this file does not call", "skipped")
                # else: counted when the embedded records are replayed as the sub-agent's events
            elif typ == "progress":
                self.report.count(r.rtype, "skipped", "live UI progress")
            elif typ in _SKIP_TYPES:
                self.report.count(r.rtype, "skipped", _SKIP_TYPES[str(typ)])
            elif typ in _STRUCTURE_TYPES:
                self.report.count(r.rtype, "structure", _STRUCTURE_TYPES[str(typ)])
                if o.get("subtype") == "compact_boundary":
                    self.meta.setdefault("compactions", []).append({"at": r.where, "t_unix": r.t})
            else:
                self.report.count(r.rtype, "unknown")
                self.report.problem("import.unknown-record", r.where, f"unknown record type {typ!r}",
                                    "counted as unknown and left out; report it if it carries agent activity")

    def _assistant(self, agent: _Agent, r: _Rec, msgs: dict[str, _Msg], parent: _Agent | None) -> None:
        o = r.obj
        m = _d(o.get("message"))
        mid = str(m.get("id") or o.get("uuid") or r.where)
        turn = agent.turns.get(mid)
        if turn is None:
            info = msgs[mid]
            deps = [(f, EdgeType.CAUSAL) for f in agent.frontier]
            ready = max((self.g.end(f) for f in agent.frontier), default=info.first_t)
            u = info.usage
            tin = u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
            attrs: dict[str, Any] = {k: u[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                       "cache_read_input_tokens", "output_tokens") if k in u}
            if info.model:
                attrs["model"] = info.model
            turn = self.g.add(EventType.MESSAGE, agent.id, min(ready, info.t_end), deps=deps, t_end=info.t_end,
                              role=agent.role, from_=agent.id,
                              tokens_in=tin if u else None, tokens_out=u.get("output_tokens") if u else None,
                              text=info.text or None, source=r.where, attrs={"kind": "turn", "usage": attrs} if attrs else {"kind": "turn"})
            agent.turns[mid] = turn
            agent.frontier = [turn]
            self.report.count(r.rtype, "mapped")
        else:
            self.report.count(r.rtype, "mapped", None)
        for b in _blocks(o):
            if b.get("type") == "tool_use":
                self._tool_use(agent, b, r, turn)

    def _tool_use(self, agent: _Agent, b: dict[str, Any], r: _Rec, turn: str) -> None:
        tid = str(b.get("id") or f"{r.where}#tool")
        name = str(b.get("name") or "?")
        inp = b.get("input")
        if not isinstance(inp, dict):
            inp = {}
        assert r.t is not None
        if turn in agent.frontier:
            agent.frontier.remove(turn)
        if name in SPAWN_TOOLS:
            self._spawn(agent, tid, inp, r, turn)
            return
        ev = self.g.add(EventType.TOOL_CALL, agent.id, r.t, deps=[(turn, EdgeType.CAUSAL)], t_end=self.result_t.get(tid),
                        role=agent.role, tool=name, privileged=True if name in PRIVILEGED_TOOLS else None,
                        text=_json_text(inp), source=r.where, attrs={"tool_use_id": tid})
        self.pending[tid] = (ev, agent.id, name)
        agent.frontier.append(ev)

    def _spawn(self, agent: _Agent, tid: str, inp: dict[str, Any], r: _Rec, turn: str) -> None:
        assert r.t is not None
        sub_type = str(inp.get("subagent_type") or "general-purpose")
        child_id = self.task_agent.get(tid) or inp.get("resume") or tid
        child_id = str(child_id)
        resumed = child_id in self.agents
        kind = Decision.DELEGATE if resumed else Decision.SPAWN
        dec = self.g.add(EventType.ORCHESTRATOR_DECISION, agent.id, r.t, t_end=r.t, deps=[(turn, EdgeType.CAUSAL)],
                         role=agent.role, source=r.where,
                         decision=DecisionPayload(kind=kind, action=f"{kind.value}:{sub_type}"),
                         attrs={"tool_use_id": tid, "description": inp.get("description")})
        prompt = inp.get("prompt") if isinstance(inp.get("prompt"), str) else None
        if resumed:
            sp = self.g.add(EventType.MESSAGE, agent.id, r.t, t_end=r.t, deps=[(dec, EdgeType.CAUSAL)], role=agent.role,
                            from_=agent.id, to=child_id, text=prompt, source=r.where, attrs={"tool_use_id": tid})
        else:
            sp = self.g.add(EventType.SPAWN, agent.id, r.t, t_end=r.t, deps=[(dec, EdgeType.SPAWN)], role=agent.role, to=child_id,
                            text=prompt, source=r.where,
                            attrs={"tool_use_id": tid, "subagent_type": sub_type, "model": inp.get("model")})
        child = self._agent(child_id, sub_type)
        child.frontier = [sp]
        self.pending[tid] = (sp, agent.id, "<task>")
        agent.frontier.append(sp)
        recs = self._child_records(tid, child_id, r.t)
        if recs is None:
            self.report.problem("import.missing-subagent", r.where,
                                f"no transcript for sub-agent {child_id} (neither subagents/agent-{child_id}.jsonl "
                                "nor agent_progress lines)", "imported its spawn and return only")
        elif recs:
            self._run_agent(child, recs, parent=agent)

    def _sidechain_of(self, tid: Any) -> Path | None:
        aid = self.task_agent.get(tid) if isinstance(tid, str) else None
        if aid is None:
            return None
        p = self.sub_dir / f"agent-{aid}.jsonl"
        return p if p.is_file() else None

    def _child_records(self, tid: str, child_id: str, t0: float) -> list[_Rec] | None:
        side = self._sidechain_of(tid)
        if side is not None:
            if side in self.used_files:
                return []
            self.used_files.add(side)
            return self._records(side)
        return self.progress.get(tid)

    def _user(self, agent: _Agent, r: _Rec, parent: _Agent | None) -> None:
        o = r.obj
        assert r.t is not None
        if o.get("isMeta"):
            self.report.count(r.rtype, "skipped", "meta message injected by the CLI")
            return
        if o.get("isCompactSummary"):
            self.report.count(r.rtype, "structure", "compaction summary")
            return
        content = _d(o.get("message")).get("content")
        blocks = _blocks(o)
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            for b in results:
                self._tool_result(agent, b, r, o.get("toolUseResult"))
            self.report.count(r.rtype, "mapped")
            return
        text = content if isinstance(content, str) else text_of(blocks)
        if parent is not None:
            # a sidechain's user text is the prompt its parent sent: the spawn event carries it
            self.report.count(r.rtype, "structure", "sub-agent prompt (carried by the spawn)")
            return
        kind, reason = user_text_kind(text)
        if kind is None:
            self.report.count(r.rtype, "structure", reason)
            return
        deps = [(f, EdgeType.CAUSAL) for f in agent.frontier]
        if kind == "notification":  # input from the harness, not from a person
            ev = self.g.add(EventType.TOOL_RESULT, agent.id, r.t, t_end=r.t, deps=deps, role=agent.role,
                            tool="background_task", text=text or None, source=r.where,
                            attrs={"kind": "task-notification"})
        else:
            ev = self.g.add(EventType.HUMAN_INTERVENTION, agent.id, r.t, deps=deps,
                            from_="user", to=agent.id, text=text or None, source=r.where, attrs={"kind": kind})
        agent.frontier = [ev]
        self.report.count(r.rtype, "mapped")

    def _tool_result(self, agent: _Agent, b: dict[str, Any], r: _Rec, tur: Any) -> None:
        assert r.t is not None
        tid = str(b.get("tool_use_id"))
        text = text_of(b.get("content"))
        err = True if b.get("is_error") else None
        hit = self.pending.pop(tid, None)
        if hit is None:
            self.report.problem("import.orphan-result", r.where, f"tool result for unknown tool_use {tid}",
                                "mapped as a tool result with no call")
            ev = self.g.add(EventType.TOOL_RESULT, agent.id, r.t, deps=[(f, EdgeType.CAUSAL) for f in agent.frontier],
                            role=agent.role, error=err, text=text or None, source=r.where, attrs={"tool_use_id": tid})
            agent.frontier = [ev]
            return
        call, caller, tool = hit
        if tool == "<task>":
            child_id = str(self.g.events[call].to or "")
            child = self.agents.get(child_id)
            deps = [(f, EdgeType.RETURN) for f in (child.frontier if child else [call])]
            info = tur if isinstance(tur, dict) else {}
            attrs = {k: info[k] for k in ("status", "totalDurationMs", "totalTokens", "totalToolUseCount") if k in info}
            attrs["tool_use_id"] = tid
            status = info.get("status")
            ev = self.g.add(EventType.RETURN, child_id, r.t, t_end=r.t, deps=deps, role=child.role if child else None,
                            from_=child_id, to=caller, error=err or (True if status not in (None, "completed") else None),
                            text=text or None, source=r.where, attrs=attrs)
            if child:
                child.frontier = [ev]
        else:
            ev = self.g.add(EventType.TOOL_RESULT, caller, r.t, deps=[(call, EdgeType.TOOL_DEPENDENCY)],
                            role=self.agents[caller].role, tool=tool, error=err,
                            trusted=False if tool in UNTRUSTED_TOOLS or tool.startswith("mcp__") else None,
                            text=text or None, source=r.where, attrs={"tool_use_id": tid})
        owner = self.agents[caller]
        owner.frontier = [ev if f == call else f for f in owner.frontier]
        if ev not in owner.frontier:
            owner.frontier.append(ev)

    # ------------------------------------------------------------------ side files
    def _compaction_files(self) -> None:
        if not self.sub_dir.is_dir():
            return
        for p in sorted(self.sub_dir.glob("agent-acompact-*.jsonl")):
            self.used_files.add(p)
            recs = self._records(p)
            usage: dict[str, dict[str, int]] = {}
            for r in recs:
                self.report.count(r.rtype, "structure", "context compaction run (not a sub-agent)")
                m = _d(r.obj.get("message"))
                if r.obj.get("type") == "assistant":
                    u = usage.setdefault(str(m.get("id") or r.line), {})
                    for k, v in _d(m.get("usage")).items():
                        if k in _USAGE_KEYS and (n := count_value(v, f"usage.{k}", r.where, self.report)) is not None:
                            u[k] = max(u.get(k, 0), n)
            tokens = sum(u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                         + u.get("cache_read_input_tokens", 0) + u.get("output_tokens", 0) for u in usage.values())
            self.compaction_tokens += tokens
            ts = [r.t for r in recs if r.t is not None]
            self.meta.setdefault("compactions", []).append(
                {"file": relative_label(p, self.root), "tokens": tokens, "t_unix": min(ts) if ts else None})

    def _unused_subagent_files(self) -> None:
        if not self.sub_dir.is_dir():
            return
        for p in sorted(self.sub_dir.glob("agent-*.jsonl")):
            if p in self.used_files:
                continue
            label = relative_label(p, self.root)
            self.report.problem("import.unlinked-subagent", f"{label}:1",
                                "sub-agent file is not linked to any Task call of this session",
                                "its records were counted as skipped")
            for r in self._records(p):
                self.report.count(r.rtype, "skipped", "sidechain not linked to a Task call")

    def _build(self, recs: list[_Rec]) -> Trace | None:
        if not self.g.events:
            self.report.error("import.no-events", f"{self.path.name}:1", "no agent activity found in the session",
                              "the file holds no user/assistant records")
            return None
        sid = next((r.obj.get("sessionId") for r in recs if isinstance(r.obj.get("sessionId"), str)), self.path.stem)
        slug = next((r.obj.get("slug") for r in recs if isinstance(r.obj.get("slug"), str)), None)
        t0 = min(e.t for e in self.g.events.values())
        self.meta["t0_unix"] = t0
        self.meta["source"] = self.path.name
        if slug:
            self.meta["slug"] = slug
        for c in self.meta.get("compactions", []):
            if c.get("t_unix") is not None:
                c["t"] = round(c["t_unix"] - t0, 6)
        n_sub = sum(1 for a in self.agents if a != MAIN)
        self.report.clamped_times += self.g.clamped
        costs = {"compaction_tokens": float(self.compaction_tokens)} if self.compaction_tokens else None
        tr = self.g.build(str(sid), task_id=str(slug or sid), system="claude-code",
                          topology=Topology.CENTRALIZED if n_sub else Topology.HARNESS,
                          meta=self.meta, shift=t0, costs=costs)
        return tr


