"""Reading a chat-transcript document: its shapes, its speakers, and what ``import auto`` recognises.

The mapping to a trace is in :mod:`.chat`; this module only finds the turns (a bare list,
an object wrapping one under :data:`LIST_KEYS`, a list of those), names the orchestrator,
and reads the orchestrator's own records (a Magentic-One ledger, AgentChat selections).

>>> looks_like({"messages": [{"role": "user", "content": "hi"}]}), orchestrator_of(["Coder", "Orchestrator"])
(True, 'Orchestrator')
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..evidence import (
    LIST_KEYS,  # wrapper keys that may hold the list of turns (one definition, in the core)
)
from ._report import ImportReport

__all__ = ["AGENTCHAT_SKIPPED", "AGENTCHAT_TYPES", "API_ROLES", "HUMANS", "ID_KEYS", "IMPLICIT_MANAGER", "LIST_KEYS",
           "NAME_KEYS", "TAG", "TASK_KEYS", "TERMINATE", "TIME_KEYS", "TURN_HINT", "estimate_tokens", "json_kind",
           "ledger_of", "looks_like", "names_of", "orchestrator_of", "scalar_document", "transcripts"]

#: Keys that name the speaker of a turn, tried in this order (then ``role``).
NAME_KEYS: tuple[str, ...] = ("name", "agent_name", "speaker", "sender", "agent", "source")
#: Chat-API roles: a ``role`` with one of these values is not a speaker's name.
API_ROLES = frozenset({"user", "assistant", "system", "tool", "function", "developer", "ipython", "model"})
#: Speakers that are a person (their turns are ``human_intervention``).
HUMANS = frozenset({"human", "user", "person", "customer"})
#: Orchestrator names by priority (lower first): exact names, then the weaker heuristics.
_ORCH_EXACT = ("orchestrator", "magenticoneorchestrator", "chat_manager", "chatmanager", "groupchatmanager",
               "group_chat_manager", "manager", "supervisor", "coordinator")
_ORCH_WEAK = ("admin", "planner", "lead", "leader", "router", "task_planner")
#: The implicit AG2 group-chat manager, when no speaker is an orchestrator.
IMPLICIT_MANAGER = "chat_manager"
TIME_KEYS = ("timestamp", "time", "created_at", "ts")
TASK_KEYS = ("question", "task", "query", "problem", "prompt")
ID_KEYS = ("question_ID", "question_id", "task_id", "id", "trace_id", "instance_id")
TAG = re.compile(r"^(?P<agent>.*?\S)\s*\((?P<tag>thought|->\s*[^()]+|termination condition|final answer)\)\s*$")
TERMINATE = "TERMINATE"
#: AutoGen AgentChat (0.4+) message types read by their ``type`` (``TaskResult.messages`` dumps).
AGENTCHAT_TYPES = frozenset({"TextMessage", "MultiModalMessage", "ToolCallRequestEvent", "ToolCallExecutionEvent",
                             "ToolCallSummaryMessage", "HandoffMessage", "StopMessage", "SelectSpeakerEvent",
                             "ThoughtEvent", "CodeGenerationEvent", "CodeExecutionEvent", "StructuredMessage",
                             "ModelClientStreamingChunkEvent", "MemoryQueryEvent", "UserInputRequestedEvent"})
AGENTCHAT_SKIPPED = {"ModelClientStreamingChunkEvent": "streaming chunk (the whole message is its own record)",
                      "MemoryQueryEvent": "memory lookup (no agent turn)",
                      "UserInputRequestedEvent": "input request (the person's answer is its own record)"}
TURN_HINT = "a turn is an object like {\"name\": \"Planner\", \"role\": \"assistant\", \"content\": \"...\"}"


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text``: ``ceil(characters / 4)`` (the usual rule of thumb for English with
    BPE tokenizers such as OpenAI's; an estimate, not a count).

    >>> estimate_tokens("hello world!"), estimate_tokens("")
    (3, 0)
    """
    return math.ceil(len(text) / 4)


def looks_like(doc: Any) -> bool:
    """True for a decoded chat transcript: a list of turns, an object wrapping one, or a list of those.

    >>> looks_like([{"role": "user", "content": "hi"}]), looks_like({"history": [{"name": "a", "content": "x"}]})
    (True, True)
    >>> looks_like([{"type": "span", "content": "x"}]), looks_like({"events": []})
    (False, False)
    """
    if isinstance(doc, list):
        if _turn_list(doc):
            return True
        wrappers = [d for d in doc[:20] if d is not None]
        return bool(wrappers) and all(isinstance(d, dict) and _list_key(d) is not None for d in wrappers)
    return isinstance(doc, dict) and _list_key(doc) is not None


def _turn_list(items: list[Any]) -> bool:
    """Most of the first 20 items are turns (a few bad turns do not hide a transcript)."""
    sample = [d for d in items[:20] if d is not None]
    n = sum(1 for d in sample if _is_turn(d))
    return n > 0 and 5 * n >= 4 * len(sample)


def _is_turn(d: Any) -> bool:
    if not isinstance(d, dict) or "type" in d and ("payload" in d or "sessionId" in d) or "object" in d:
        return False
    has_body = any(k in d for k in ("content", "tool_calls", "tool_responses", "function_call"))
    return has_body and ("role" in d or any(k in d for k in NAME_KEYS))


def _list_key(d: dict[str, Any], strict: bool = True) -> str | None:
    """The wrapper key holding the turns (``strict=False``: any list, for an explicit ``import chat``)."""
    for k in LIST_KEYS:
        v = d.get(k)
        if isinstance(v, list) and (not v or not strict or _turn_list(v)):
            return k
    return None


def orchestrator_of(speakers: Sequence[str]) -> str | None:
    """The speaker that is the orchestrator / manager, by name; None when no name says so.

    Exact names (``Orchestrator``, ``chat_manager``, ``Manager``, ``Supervisor`` …, any
    ``*_manager``) win over the weaker ``Admin`` / ``Planner`` / ``Lead`` heuristics; ties go
    to the first speaker.

    >>> orchestrator_of(["Admin", "Engineer", "Planner"]), orchestrator_of(["Engineer", "chat_manager", "Admin"])
    ('Admin', 'chat_manager')
    >>> orchestrator_of(["Coder", "Critic"]) is None
    True
    """
    best: tuple[int, int] | None = None
    found = None
    for k, s in enumerate(speakers):
        low = s.strip().lower().replace(" ", "_").replace("-", "_")
        if low in _ORCH_EXACT or low.startswith("orchestrator") or low.endswith("manager"):
            rank = 0
        elif low in _ORCH_WEAK:
            rank = 1
        else:
            continue
        if best is None or (rank, k) < best:
            best, found = (rank, k), s
    return found


def scalar_document(p: Path) -> str | None:
    """The JSON kind of a small file that is one JSON scalar (``"hello"``, ``42``), else None."""
    from .._limits import open_input

    try:
        with open_input(p) as fh:  # bounded read: st_size is 0 for devices and pipes (/dev/zero)
            raw = fh.read((1 << 16) + 1)
        if len(raw) > 1 << 16:
            return None
        obj = msgspec.json.decode(raw)
    except (OSError, msgspec.DecodeError, UnicodeDecodeError):
        return None
    return None if isinstance(obj, (dict, list)) else json_kind(obj)


def transcripts(doc: Any, label: str, report: ImportReport, linenos: list[int] | None
                 ) -> list[tuple[str, list[Any], dict[str, Any] | None]]:
    """``(JSON path of the turn list, turns, wrapper object)`` for each transcript in ``doc``."""
    if isinstance(doc, dict):
        key = _list_key(doc) or _list_key(doc, strict=False)
        if key is None:
            bad = next((k for k in LIST_KEYS if k in doc), None)
            if bad is not None:
                v = doc[bad]  # not a list: any list would have been taken
                what = f"a{'n' if json_kind(v)[0] in 'aeiou' else ''} {json_kind(v)}"
                report.count("<document>", "unreadable")
                report.error("chat.no-turns", f"{label}:$.{bad}", f"`{bad}` holds {what}, not a list of turns",
                             TURN_HINT)
            else:
                report.count("<document>", "unknown")
                report.error("import.wrong-format", f"{label}:$", "object holds no list of turns under any of "
                             f"{', '.join(LIST_KEYS)} (keys: {', '.join(sorted(map(str, doc))[:8])})",
                             "pass the transcript list itself, or an object wrapping it under `history` / `messages`")
            return []
        return [(f"$.{key}", doc[key], doc)]
    if not isinstance(doc, list):
        report.count("<document>", "unreadable")
        report.error("import.wrong-format", f"{label}:$", f"document is a{'n' if json_kind(doc)[0] in 'aeiou' else ''} "
                     f"{json_kind(doc)}, not a list of turns", "pass a JSON list of turns, or an object wrapping one")
        return []
    if not doc:
        report.count("<document>", "unreadable")
        report.error("chat.no-turns", f"{label}:$", "the transcript is an empty list", "nothing to import")
        return []
    dicts = [d for d in doc if isinstance(d, dict)]
    if dicts and all(_list_key(d) is not None and not _is_turn(d) for d in dicts):
        out: list[tuple[str, list[Any], dict[str, Any] | None]] = []
        for i, d in enumerate(doc):
            where = f"{label}:{linenos[i]}" if linenos else f"{label}:$[{i}]"
            if not isinstance(d, dict):
                report.count("<transcript>", "unreadable")
                report.error("chat.bad-turn", where, f"item is a{'n' if json_kind(d)[0] in 'aeiou' else ''} {json_kind(d)}, "
                             "not a transcript object", "each item is an object wrapping a list of turns")
                continue
            key = _list_key(d)
            out.append((f"{linenos[i]}:$.{key}" if linenos else f"$[{i}].{key}", d[key], d))
        return out
    if dicts and not any(_turnish(d) for d in dicts[:50]):
        keys = sorted({str(k) for d in dicts[:50] for k in d})[:10]
        mad = any(isinstance(d.get("trace"), dict) and isinstance(d["trace"].get("trajectory"), str) for d in dicts[:50])
        report.count("<document>", "unknown")
        report.error("import.wrong-format", f"{label}:$", f"the list holds no chat turns (item keys: {', '.join(keys)})",
                     "MAST / MAD records keep their trajectory as one text log (trace.trajectory): there are no turns "
                     "to map; extract them as [{name, content}] first" if mad else TURN_HINT)
        return []
    return [("" if linenos else "$", doc, None)]


def _turnish(d: dict[str, Any]) -> bool:
    """An object with any field of a turn (a speaker, a role, a content, tool calls)."""
    return any(k in d for k in ("content", "role", "tool_calls", "tool_responses", "function_call", *NAME_KEYS))


def json_kind(v: Any) -> str:
    return {list: "array", dict: "object", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(v), type(v).__name__)


def names_of(v: Any) -> list[str]:
    """Speaker names from a SelectSpeakerEvent's content (a list of names, or one name)."""
    items = v if isinstance(v, list) else [v]
    return [x for x in items if isinstance(x, str) and x]


def ledger_of(text: str) -> tuple[bool, str | None] | None:
    """``(is_request_satisfied, next_speaker)`` of a Magentic-One ledger turn, or None."""
    a, b = text.find("{"), text.rfind("}")
    if a < 0 or b <= a:
        return None
    try:
        d = msgspec.json.decode(text[a:b + 1])
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(d, dict):
        return None

    def answer(key: str) -> Any:
        v = d.get(key)
        return v.get("answer") if isinstance(v, dict) else v

    nxt = answer("next_speaker")
    return answer("is_request_satisfied") is True, nxt if isinstance(nxt, str) and nxt else None
