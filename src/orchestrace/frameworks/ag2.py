"""Live capture from an AG2 (AutoGen) group chat: an event stream + runtime logger that records a trace.

Install: ``pip install 'orchestrace[ag2]'`` (the ``ag2`` package, imported as ``autogen``).
:class:`AG2Recorder` is two things AG2 already calls: an ``IOStream`` (the events an
agent prints: messages, the manager's ``Next speaker``, executed functions, termination)
and a runtime ``BaseLogger`` (every chat completion, with its usage). ``with
rec.capture(): user.initiate_chat(manager, …)`` installs both and writes while the chat runs:

=============================  ==============================================================
AG2                            orchestrace events
=============================  ==============================================================
the ``GroupChatManager``       the root agent (the orchestrator)
``Next speaker: X``            O2 ``orchestrator_decision`` ``speaker:X`` by the manager (the
                               alternatives are the group's agents), then ``spawn`` of X
                               (first time) or a ``message`` to it
X's chat completion            ``message`` turn of X with ``tokens_in`` / ``tokens_out``
X's reply to the manager       ``return`` to the manager (a ``message`` when X was never
                               selected, e.g. the agent that opened the chat)
an executed function           ``tool_call`` + ``tool_result`` of the speaker that ran it
                               (``error`` when it failed)
termination                    the O5 ``stop`` by the manager, its reason as content
=============================  ==============================================================

Broadcasts (the manager relaying a reply to every other agent) are silent in AG2 and are
not recorded: they carry no new content.

>>> import tempfile, os
>>> rec = AG2Recorder(os.path.join(tempfile.mkdtemp(), "chat.jsonl"), manager)  # doctest: +SKIP
>>> with rec.capture():                                                          # doctest: +SKIP
...     user.initiate_chat(manager, message="What is 2 + 3?")
>>> rec.close()                                                                  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import require
from ..importers import ContentMode
from ._team import Team
from .recorder import Recorder

__all__ = ["AG2Recorder"]

_EXTRA = "ag2"
_base_logger = require("autogen.logger.base_logger", extra=_EXTRA)


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return str(x) if isinstance(x, str) else json.dumps(x, default=str)  # str(): plain str, not a subclass


def _name(x: Any) -> str:
    return str(getattr(x, "name", x))


class AG2Recorder(_base_logger.BaseLogger):  # type: ignore[misc,name-defined]
    """Records one AG2 group chat run by ``manager`` (a ``GroupChatManager``) into ``path`` (JSONL).

    ``echo=True`` also forwards every event to the stream that was the default before
    (AG2's console output); by default the chat runs silent. ``content`` is the policy for
    what the agents said: ``"hash"`` (a digest), ``"keep"`` or ``"drop"``.
    """

    def __init__(self, path: str | os.PathLike[str], manager: Any, *, task_id: str = "ag2-groupchat",
                 trace_id: str | None = None, echo: bool = False, content: ContentMode = "hash") -> None:
        self.rec = Recorder(path, trace_id=trace_id, task_id=task_id, system="ag2",
                            meta={"source_format": "ag2", "capture": "live"})
        self.team = Team(self.rec, content=content)
        self.manager = _name(manager)
        gc = getattr(manager, "groupchat", None)
        self.agent_names: list[str] = list(getattr(gc, "agent_names", []) or [])
        self.team.agent(self.manager)
        self.speaker: str | None = None
        self.echo = echo
        self._inner: Any = None
        self._lock = threading.Lock()
        self.closed = False
        self.termination_reason: str | None = None

    # -- installing ------------------------------------------------------------------------
    @contextmanager
    def capture(self) -> Iterator[AG2Recorder]:
        """Make this the default event stream and the runtime logger for the block."""
        from autogen import runtime_logging
        from autogen.io.base import IOStream

        try:
            self._inner = IOStream.get_default()
        except RuntimeError:
            self._inner = None
        runtime_logging.start(logger=self)
        try:
            with IOStream.set_default(self):
                yield self
        finally:
            runtime_logging.stop()

    # -- IOStream --------------------------------------------------------------------------
    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        """Plain prints (not events) are only echoed."""
        if self.echo and self._inner is not None:
            self._inner.print(*objects, sep=sep, end=end, flush=flush)

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        """No human in a recorded run: an empty answer (AG2 then uses its default reply)."""
        return ""

    def send(self, message: Any) -> None:
        """One AG2 event (see the module table)."""
        if self.echo and self._inner is not None:
            self._inner.send(message)
        kind = getattr(message, "type", None)
        ev = getattr(message, "content", None)
        if ev is None:
            return
        with self._lock, self.team.guard(f"event {kind}"):
            if self.closed:
                return
            if kind == "group_chat_run_chat":
                self.speaker = str(ev.speaker)
                self.team.delegate(self.manager, self.speaker, verb="speaker", alternatives=self.agent_names)
            elif kind in ("text", "tool_call", "tool_response", "function_call", "function_response"):
                self._message(ev, kind)
            elif kind == "executed_function":
                who = self.speaker or self.manager
                args = _text(getattr(ev, "arguments", None))
                call = self.team.tool_call(who, str(ev.func_name), args)
                ok = bool(getattr(ev, "is_exec_success", True))
                self.team.tool_result(who, str(ev.func_name), call, _text(getattr(ev, "content", None)),
                                      error=None if ok else True)
            elif kind == "termination":
                self.termination_reason = str(ev.termination_reason)
                self.team.stop(by=self.manager, content=self.termination_reason)

    def _message(self, ev: Any, kind: str) -> None:
        sender, recipient = str(ev.sender), str(ev.recipient)
        content = getattr(ev, "content", None)
        if kind == "tool_call":
            content = {"tool_calls": [tc.model_dump() if hasattr(tc, "model_dump") else str(tc) for tc in ev.tool_calls]}
        text = _text(content)
        h = self.team.handles.get(sender)
        if recipient == self.manager and h is not None and h.spawner == self.manager:
            self.team.finish(sender, content=text)
        else:
            self.team.say(sender, recipient, content=text)

    # -- BaseLogger ------------------------------------------------------------------------
    def start(self) -> str:
        """Runtime logging started: the session id is the trace id."""
        return self.rec.trace_id

    def log_chat_completion(self, invocation_id: Any, client_id: int, wrapper_id: int, source: Any, request: Any,
                            response: Any, is_cached: int, cost: float, start_time: str) -> None:
        """One LLM call of ``source``: a ``message`` turn with its usage."""
        with self._lock, self.team.guard("chat completion"):
            usage = getattr(response, "usage", None)
            tin = getattr(usage, "prompt_tokens", None)
            tout = getattr(usage, "completion_tokens", None)
            if self.closed:
                return
            self.team.turn(_name(source), tokens_in=tin, tokens_out=tout)

    def log_new_agent(self, agent: Any, init_args: dict[str, Any]) -> None:
        """Agents appear when they first act."""

    def log_event(self, source: Any, name: str, **kwargs: Any) -> None:
        """Messages come through the event stream instead."""

    def log_new_wrapper(self, wrapper: Any, init_args: dict[str, Any]) -> None:
        """Not recorded."""

    def log_new_client(self, client: Any, wrapper: Any, init_args: dict[str, Any]) -> None:
        """Not recorded."""

    def log_function_use(self, source: Any, function: Any, args: dict[str, Any], returns: Any) -> None:
        """Function calls come through the event stream (``executed_function``)."""

    def stop(self) -> None:
        """Runtime logging stopped (the trace stays open until :meth:`close`)."""

    def get_connection(self) -> None:
        """No database."""
        return None

    # -- finish ----------------------------------------------------------------------------
    def close(self) -> None:
        """Write the stop (if the chat did not terminate) and close the trace file."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            with self.team.guard("stop"):
                self.team.stop(by=self.manager, content=self.termination_reason)
            self.team.close()
