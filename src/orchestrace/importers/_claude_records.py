"""Claude Code session files, the vocabulary: what a record, a tool and a user text are.

The rules :mod:`orchestrace.importers.claude_code` maps a session by — which tools spawn a
sub-agent, which bring in untrusted content or have side effects, how a ``user`` record's text
is read (:data:`USER_TEXT_RULES`, :func:`user_text_kind`), which record types are bookkeeping,
which fields must be strings — and the small records the mapping passes around (one JSONL
record, one agent's frontier, a pre-pass summary of one assistant message).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: Tool names that spawn a sub-agent (``Agent`` is the newer name of ``Task``).
SPAWN_TOOLS = frozenset({"Task", "Agent"})

#: Tools whose results carry content from outside (untrusted for safety flows).
UNTRUSTED_TOOLS = frozenset({"WebFetch", "WebSearch"})

#: How the text of a ``user`` record is read, first matching prefix wins: ``(prefix, kind,
#: reason)``. ``kind`` is the ``human_intervention`` kind for what a person sent, ``None`` for
#: text the CLI wrote (kept as structure, ``reason`` in the report), ``"notification"`` for a
#: background task's completion notice (a ``tool_result``). Any other text is a typed prompt.
USER_TEXT_RULES: tuple[tuple[str, str | None, str], ...] = (
    ("<task-notification>", "notification", "background task finished: a tool result, not a person"),
    ("<local-command-stdout>", None, "output of a local slash command, written by the CLI"),
    ("<local-command-stderr>", None, "output of a local slash command, written by the CLI"),
    ("<local-command-caveat>", None, "caveat written by the CLI"),
    ("<bash-stdout>", None, "output of a ! shell command, written by the CLI"),
    ("<bash-stderr>", None, "output of a ! shell command, written by the CLI"),
    ("<system-reminder>", None, "reminder injected by the CLI"),
    ("<user-prompt-submit-hook>", None, "hook output injected by the CLI"),
    ("[Request interrupted by user", "interrupt", "the person interrupted the agent"),
    ("<command-name>", "command", "slash command run by the person"),
    ("<command-message>", "command", "slash command run by the person"),
    ("<bash-input>", "shell", "! shell command typed by the person"),
)

#: Tools with side effects (privileged for safety flows).
PRIVILEGED_TOOLS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "KillShell"})

MAIN = "main"

_SKIP_TYPES = {
    "file-history-snapshot": "editor file snapshot (no agent activity)",
    "queue-operation": "input-queue bookkeeping",
}

_STRUCTURE_TYPES = {"system": "session bookkeeping", "summary": "session title"}

#: The usage fields that hold token counts (others, like ``service_tier``, are not counts).
_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")

#: Fields that name things (types, ids, tools): any other JSON type makes a record unreadable.
_STR_INTO = frozenset({"message", "content", "data"})

_STR_KEYS = frozenset({"type", "subtype", "uuid", "parentUuid", "sessionId", "agentId", "parentToolUseID", "toolUseID",
                       "id", "name", "tool_use_id", "model", "role", "version", "slug", "cwd", "gitBranch", "text",
                       "thinking", "leafUuid", "logicalParentUuid", "promptId", "requestId", "agentType"})


_KNOWN_VERSION = re.compile(r"^[12]\.")


@dataclass
class _Rec:
    label: str  # file label for Event.source
    line: int
    obj: dict[str, Any]
    rtype: str  # counting label
    t: float | None = None

    @property
    def where(self) -> str:
        return f"{self.label}:{self.line}"


@dataclass
class _Agent:
    id: str
    role: str
    frontier: list[str] = field(default_factory=list)
    turns: dict[str, str] = field(default_factory=dict)  # message.id -> turn event id
    prompt_seen: bool = False


@dataclass
class _Msg:
    """Pre-pass summary of one assistant ``message.id``."""

    first_t: float
    t_end: float
    usage: dict[str, int]
    model: str | None
    text: str
    tool_seen: bool = False


def user_text_kind(text: str) -> tuple[str | None, str]:
    """``(kind, reason)`` of a ``user`` record's text by :data:`USER_TEXT_RULES` (``"prompt"`` by default).

    >>> user_text_kind("<local-command-stdout>ok</local-command-stdout>")[0] is None
    True
    >>> user_text_kind("did you push?"), user_text_kind("[Request interrupted by user]")[0]
    (('prompt', 'typed by the person'), 'interrupt')
    """
    head = text.lstrip()
    for prefix, kind, reason in USER_TEXT_RULES:
        if head.startswith(prefix):
            return kind, reason
    return "prompt", "typed by the person"


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _blocks(o: dict[str, Any]) -> list[dict[str, Any]]:
    c = _d(o.get("message")).get("content")
    if isinstance(c, list):
        return [b for b in c if isinstance(b, dict)]
    return []


def _json_text(v: Any) -> str | None:
    if not v:
        return None
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)
