"""Pass 1 of the chat importer: every turn of a transcript read into a :class:`Turn` (speaker,
role, text, tool calls, time), with what cannot be read reported at its JSON path.

A turn's speaker is its name (:data:`~._chat_doc.NAME_KEYS`), else a role that is not a chat-API
role; a Magentic-One tag (``Orchestrator (thought)``) is split off; AutoGen AgentChat tool events
are rewritten into the OpenAI ``tool_calls`` / ``tool_responses`` shape that pass 2
(:mod:`orchestrace.importers.chat`) maps.

>>> from orchestrace.importers._report import ImportReport
>>> r = TurnReader("t.json", "$", [{"role": "assistant", "name": "Orchestrator (-> Coder)", "content": "go"},
...                                 {"source": "Coder", "type": "MemoryQueryEvent", "content": "q"}, 7],
...                ImportReport(format="chat"), None)
>>> [(t.speaker, t.tag, t.text) for t in r.turns()], [p.code for p in r.report.errors]
([('Orchestrator', '-> Coder', 'go')], ['chat.bad-turn'])
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._chat_doc import (
    AGENTCHAT_SKIPPED,
    AGENTCHAT_TYPES,
    API_ROLES,
    HUMANS,
    NAME_KEYS,
    TAG,
    TIME_KEYS,
    TURN_HINT,
    json_kind,
)
from ._common import parse_ts, text_of
from ._report import ImportReport


@dataclass
class Turn:
    """One readable turn of a transcript."""

    k: int  # index in the turn list
    where: str  # file:$.history[k]
    speaker: str
    tag: str | None
    role: str | None
    text: str
    rec: dict[str, Any]
    human: bool = False
    ts: float | None = None
    kind: str | None = None  # an AutoGen AgentChat message type (``ToolCallRequestEvent`` …)
    items_key: str = "tool_calls"  # where the tool calls / results of the turn are (JSON paths)


@dataclass
class TurnReader:
    """Reads the turns of one transcript (``raw``, the list at JSON path ``path`` of ``label``)."""

    label: str
    path: str  # JSON path of the list: "$.history", "$", "<line>:$.history" (a JSON line), "" (turns are lines)
    raw: list[Any]
    report: ImportReport
    linenos: list[int] | None  # line of each turn when the turns are JSON lines

    def where(self, k: int, sub: str = "") -> str:
        """``file:$.history[k].sub`` (``file:line:$.sub`` when the turns are JSON lines)."""
        if self.linenos is not None:
            return f"{self.label}:{self.linenos[k]}" + (f":$.{sub}" if sub else "")
        return f"{self.label}:{self.path}[{k}]" + (f".{sub}" if sub else "")

    def turns(self) -> list[Turn]:
        """Every readable turn, in order; unreadable ones are reported and skipped."""
        out = []
        rep = self.report
        for k, rec in enumerate(self.raw):
            if not isinstance(rec, dict):
                rep.count("<turn>", "unreadable")
                rep.error("chat.bad-turn", self.where(k), f"turn is a{'n' if json_kind(rec)[0] in 'aeiou' else ''} "
                          f"{json_kind(rec)}, not an object; skipped", TURN_HINT)
                continue
            typ = rec.get("type")
            kind = typ if isinstance(typ, str) and typ in AGENTCHAT_TYPES else None
            if kind in AGENTCHAT_SKIPPED:
                rep.count(str(kind), "skipped", AGENTCHAT_SKIPPED[str(kind)])
                continue
            role = rec.get("role")
            if role is not None and not isinstance(role, str):
                rep.count("<turn>", "unreadable")
                rep.error("import.bad-field", self.where(k, "role"), f"role is a{'n' if json_kind(role)[0] in 'aeiou' else ''}"
                          f" {json_kind(role)}, not a string; turn skipped", "a role is a string such as \"assistant\"")
                continue
            speaker, bad = self._speaker(rec, k) if role != "function" else (None, False)  # legacy: name = function
            if bad:
                continue
            if speaker is None:
                if role and role not in API_ROLES:  # Who&When hand-crafted / Magentic-One: the role is the agent
                    speaker = role
                elif role in ("tool", "function"):
                    speaker = ""  # the caller's, filled in pass 2
                elif role:
                    speaker = role
                else:
                    speaker = "unknown"
                    rep.sanitise("chat.no-speaker", self.where(k), "turn names no speaker (no name nor role); "
                                 "attributed to agent 'unknown'", "give each turn a `name` or `role`")
            tag = None
            m = TAG.match(speaker) if speaker and len(speaker) < 200 else None
            if m:
                speaker, tag = m.group("agent"), m.group("tag")
            ts = next((parse_ts(rec[key]) for key in TIME_KEYS if key in rec), None)
            items_key = "tool_calls"
            if kind == "ToolCallRequestEvent":  # content: [{id, name, arguments}] → OpenAI tool_calls
                c = rec.get("content")
                rec = dict(rec, content=None, tool_calls=[
                    {"id": x.get("id"), "function": {"name": x.get("name"), "arguments": x.get("arguments")}}
                    if isinstance(x, dict) else x for x in c] if isinstance(c, list) else c)
                items_key = "content"
            elif kind == "ToolCallExecutionEvent":  # content: [{call_id, name, content, is_error}] → tool responses
                c = rec.get("content")
                rec = dict(rec, content=None, tool_responses=[
                    {"tool_call_id": x.get("call_id"), "name": x.get("name"), "content": x.get("content"),
                     "is_error": x.get("is_error")} if isinstance(x, dict) else x for x in c]
                    if isinstance(c, list) else [c])
                role, items_key = "tool", "content"
            text = self._text(rec, k) if kind != "SelectSpeakerEvent" else ""
            out.append(Turn(k, self.where(k), speaker, tag, role, text, rec,
                             human=speaker.lower() in HUMANS and not tag, ts=ts, kind=kind, items_key=items_key))
        return out

    def _speaker(self, rec: dict[str, Any], k: int) -> tuple[str | None, bool]:
        for key in NAME_KEYS:
            v = rec.get(key)
            if v is None or v == "":
                continue
            if isinstance(v, str):
                return v.strip() or None, False
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                self.report.sanitise("import.coerced", self.where(k, key), f"{key} = {v!r} read as the name {str(v)!r}",
                                     "the source wrote a name as a number")
                return str(v), False
            self.report.count("<turn>", "unreadable")
            self.report.error("import.bad-field", self.where(k, key), f"{key} is a{'n' if json_kind(v)[0] in 'aeiou' else ''}"
                              f" {json_kind(v)}, not a string; turn skipped", "a speaker's name is a string")
            return None, True
        return None, False

    def _text(self, rec: dict[str, Any], k: int) -> str:
        c = rec.get("content")
        if c is None or isinstance(c, str):
            return c or ""
        if isinstance(c, list) and all(isinstance(b, (str, dict)) for b in c):
            return text_of(c)  # OpenAI content parts
        self.report.sanitise("chat.non-string-content", self.where(k, "content"),
                             f"content is a{'n' if json_kind(c)[0] in 'aeiou' else ''} {json_kind(c)}; kept as its JSON text",
                             "content is a string or a list of text parts")
        return json.dumps(c, ensure_ascii=False, default=str)

    def _call_id(self, v: Any, where: str) -> str | None:
        """A tool-call id as a string; a number is read as text, anything else dropped (both warned)."""
        if v is None or isinstance(v, str):
            return v or None
        if isinstance(v, int) and not isinstance(v, bool):
            self.report.sanitise("import.coerced", where, f"call id {v!r} read as {str(v)!r}", "ids are strings")
            return str(v)
        self.report.sanitise("chat.bad-call-id", where, f"call id is a{'n' if json_kind(v)[0] in 'aeiou' else ''} "
                             f"{json_kind(v)}, not a string; ignored", "ids are strings")
        return None
