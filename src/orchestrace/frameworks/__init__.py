"""Live capture from agent frameworks: their own hooks write an orchestrace trace while they run.

==========================  ==========================  =========================================
framework                   hook                        class (extra)
==========================  ==========================  =========================================
OpenAI Agents SDK           tracing processor           :class:`OpenAIAgentsRecorder`
                                                        (``openai-agents``)
LangGraph                   LangChain callback handler  :class:`LangGraphRecorder` (``langgraph``)
AG2 (AutoGen) group chat    IOStream + runtime logger   :class:`AG2Recorder` (``ag2``)
==========================  ==========================  =========================================

Each class lives in its own module and imports its framework only when it is used
(``pip install 'orchestrace[frameworks]'`` installs all three). :class:`ToolCallTransport`
lets a model served without tool-call support (SmolLM2 on ``orchestrace serve-local``)
answer forced tool calls, so a framework's tools and hand-offs run against it.
:func:`counts` gives the numbers to hold against the framework's own record.

>>> from orchestrace import synth
>>> sorted(counts(synth(events=30, agents=3, seed=0)))
['agents', 'delegations', 'llm_turns', 'stops', 'tokens', 'tool_calls']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..core.trace import Trace
from ..vocab import Decision, EventType

if TYPE_CHECKING:
    from ._toolcalls import ToolCallTransport
    from .ag2 import AG2Recorder
    from .langgraph import LangGraphRecorder
    from .openai_agents import OpenAIAgentsRecorder

__all__ = ["AG2Recorder", "LangGraphRecorder", "OpenAIAgentsRecorder", "ToolCallTransport", "counts"]

_LAZY = {"OpenAIAgentsRecorder": ".openai_agents", "LangGraphRecorder": ".langgraph", "AG2Recorder": ".ag2",
         "ToolCallTransport": "._toolcalls"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'orchestrace.frameworks' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def counts(trace: Trace) -> dict[str, int]:
    """Agents, O2 delegations, tool calls, LLM turns, tokens and stops of a trace.

    Agents are those that act, are spawned or are sent a message; LLM turns are
    ``message`` events without a receiver (a framework's generation); delegations are
    ``orchestrator_decision`` s of kind ``delegate``.

    >>> from orchestrace import TraceBuilder
    >>> b = TraceBuilder("t")
    >>> _ = b.tool_call("a", "search", t=0)
    >>> counts(b.build())["tool_calls"], counts(b.build())["agents"]
    (1, 1)
    """
    ev = trace.events
    return {
        "agents": len({e.agent for e in ev} | {e.to for e in ev if e.to is not None
                                               and e.type in (EventType.SPAWN, EventType.MESSAGE)}),
        "delegations": sum(1 for e in ev if e.type is EventType.ORCHESTRATOR_DECISION and e.decision is not None
                           and e.decision.kind is Decision.DELEGATE),
        "tool_calls": sum(1 for e in ev if e.type is EventType.TOOL_CALL),
        "llm_turns": sum(1 for e in ev if e.type is EventType.MESSAGE and e.to is None),
        "tokens": sum(e.tokens for e in ev),
        "stops": sum(1 for e in ev if e.type is EventType.ORCHESTRATOR_DECISION and e.decision is not None
                     and e.decision.kind is Decision.STOP and e.decision.action != "continue"),
    }
