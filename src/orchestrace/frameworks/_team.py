"""A framework run as the recorder sees it: agents by name, delegation, tool pairs, turns, the stop.

Framework callbacks arrive one by one (span ends, chain starts, log events), not as nested
``with`` blocks, so :class:`Team` drives :class:`orchestrace.Recorder` handles directly:

* the first agent seen is the root (the orchestrator unless told otherwise); an agent that
  another one hands off / routes / speaks to for the first time is **spawned** by it
  (``O2`` decision ``<verb>:<agent>``, then ``spawn``); later hand-offs to it are a
  decision and a ``message``;
* an agent's turn ends with a ``return`` to its spawner (:meth:`finish`);
* an LLM generation is a ``message`` event with its tokens (no ``to``: the agent's own turn);
* a tool call is a ``tool_call`` / ``tool_result`` pair joined by a ``tool_dependency`` edge;
* :meth:`stop` is the single O5 decision, by the root.

What the agents said (prompts, answers, tool arguments and outputs) follows the importers'
content policy: ``"hash"`` (default) keeps a ``content_ref`` digest, ``"keep"`` the text
itself, ``"drop"`` nothing. Framework status strings (a termination reason, an error) are
always kept.

A callback that cannot be recorded (an unexpected shape from a framework version) must not
break the run it watches: :meth:`guard` catches the exception, counts it, warns once, and
:meth:`close` writes the count as the metric ``capture/dropped_callbacks``, so nothing is
lost silently.

>>> import os, tempfile
>>> from orchestrace import Recorder, load, validate
>>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl")
>>> with Recorder(p) as rec:
...     team = Team(rec, content="keep")
...     _ = team.turn("triage", tokens_in=10, tokens_out=2)
...     _ = team.delegate("triage", "calc", verb="handoff")
...     c = team.tool_call("calc", "add", '{"a": 1}')
...     _ = team.tool_result("calc", "add", c, "2")
...     _ = team.finish("calc")
...     _ = team.stop()
>>> tr = load(p)
>>> [e.type.value for e in tr.events], validate(tr).valid, tr.events[3].content
(['message', 'orchestrator_decision', 'spawn', 'tool_call', 'tool_result', 'return', 'orchestrator_decision'], True, '{"a": 1}')
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConfigError, OrchestraceWarning
from ..importers import CONTENT_MODES, ContentMode
from ..importers import content_digest as _digest
from ..vocab import Decision, EdgeType, EventType
from .recorder import AgentHandle, Recorder

__all__ = ["Team"]


class Team:
    """Agents of one framework run, created on first sight (see the module docstring)."""

    def __init__(self, rec: Recorder, *, root_role: str = "orchestrator", content: ContentMode = "hash") -> None:
        if content not in CONTENT_MODES:
            raise ConfigError(f"content must be one of {', '.join(CONTENT_MODES)}, got {content!r}")
        self.content = content
        self.rec = rec
        self.root_role = root_role
        self.root: AgentHandle | None = None
        self.handles: dict[str, AgentHandle] = {}
        self.stopped = False
        self.dropped: list[str] = []  # "<callback>: <error>" for each callback that could not be recorded

    def text(self, text: str | None) -> dict[str, str]:
        """The event fields for ``text`` under the content policy."""
        if not text or self.content == "drop":
            return {}
        if self.content == "keep":
            return {"content": text, "content_ref": _digest(text)}
        return {"content_ref": _digest(text)}

    @contextmanager
    def guard(self, where: str) -> Iterator[None]:
        """Run a callback's recording; an exception is counted and warned about, never raised."""
        try:
            yield
        except Exception as exc:  # the framework's run must go on
            self.dropped.append(f"{where}: {type(exc).__name__}: {exc}")
            if len(self.dropped) == 1:
                warnings.warn(f"{self.rec.trace_id}: could not record {self.dropped[0]}; counted in the trace's "
                              "metric capture/dropped_callbacks", OrchestraceWarning, stacklevel=3)

    def close(self) -> None:
        """Stop (if not yet) and close the recorder, with the count of dropped callbacks."""
        with self.guard("stop"):
            self.stop()
        self.rec.close(metrics={"capture/dropped_callbacks": float(len(self.dropped))} if self.dropped else None)

    def agent(self, name: str, *, role: str | None = None) -> AgentHandle:
        """The handle of ``name``; the first agent ever seen becomes the root."""
        h = self.handles.get(name)
        if h is None:
            h = AgentHandle(self.rec, name, role or (self.root_role if self.root is None else "agent"))
            self.rec._agents[name] = h
            self.handles[name] = h
            if self.root is None:
                self.root = h
        return h

    def delegate(self, src: str, dst: str, *, verb: str = "delegate", alternatives: Iterable[str] = (),
                 content: str | None = None, kind: Decision = Decision.DELEGATE, **fields: Any) -> str:
        """``src`` passes control to ``dst``: an O2 decision, then a spawn (first time) or a message."""
        a = self.agent(src)
        alts = [f"{verb}:{x}" for x in alternatives] or [f"{verb}:{dst}"]
        a.decide(kind, action=f"{verb}:{dst}", alternatives=alts, **fields)
        if dst in self.handles:
            return a.message(dst, **self.text(content))
        sp = a._event(EventType.SPAWN, edge=EdgeType.SPAWN, to=dst, **self.text(content))
        h = AgentHandle(self.rec, dst, "agent", spawner=src)
        self.rec._agents[dst] = h
        self.handles[dst] = h
        h._push(sp, EdgeType.SPAWN)
        return sp

    def finish(self, name: str, *, content: str | None = None) -> str | None:
        """End of ``name``'s turn: a return to its spawner (nothing for a root agent)."""
        h = self.handles.get(name)
        if h is None or h.spawner is None:
            return None
        return h.return_(**self.text(content))

    def turn(self, name: str, *, tokens_in: int | None = None, tokens_out: int | None = None,
             content: str | None = None, t: float | None = None, t_end: float | None = None,
             **fields: Any) -> str:
        """One LLM generation of ``name`` (a ``message`` event with its tokens)."""
        if t is not None and t_end is None:
            t_end = self.rec.now()
        fields.update(self.text(content))
        return self.agent(name)._event(EventType.MESSAGE, from_=name, tokens_in=tokens_in, tokens_out=tokens_out,
                                       t=t, t_end=t_end, **fields)

    def say(self, src: str, dst: str, *, content: str | None = None, **fields: Any) -> str:
        """A ``message`` from ``src`` to ``dst`` (``dst`` created as a root agent when unseen)."""
        self.agent(dst)
        return self.agent(src).message(dst, **self.text(content), **fields)

    def tool_call(self, name: str, tool: str, args: str | None = None, *, t: float | None = None,
                  **fields: Any) -> str:
        """``name`` calls ``tool``; returns the call's id (give it to :meth:`tool_result`)."""
        return self.agent(name).tool_call(tool, t=t, **self.text(args), **fields)

    def tool_result(self, name: str, tool: str, call: str, output: str | None = None, *,
                    error: bool | None = None, **fields: Any) -> str:
        """The result of ``call`` (``error=True`` when the tool failed); failure evidence (a non-zero exit code,
        a traceback in the output, the failure itself) goes on the event as ``attrs.evidence``, blaming the call."""
        from ..importers import Evidence, EvidenceKind, of_tool_output, scan, to_attrs

        found = scan(output)
        if error and not any(e.kind is not EvidenceKind.REFUSAL for e in found):
            first = (output or "").strip().split("\n", 1)[0][:160] or None
            found = [*found, Evidence(EvidenceKind.TOOL_ERROR, (0, len(first)) if first else None, first)]
        if found:
            found = of_tool_output(found, call)
            error = True if any(e.is_evidence for e in found) else error
            fields["attrs"] = {**(fields.get("attrs") or {}), "evidence": to_attrs(found, self.content != "drop")}
        return self.agent(name).tool_result(tool, after=call, error=error, **self.text(output), **fields)

    def stop(self, *, by: str | None = None, action: str = "stop", content: str | None = None) -> str | None:
        """The run's end: the one O5 stop decision (by the root unless ``by``); idempotent.

        ``content`` is the framework's reason (kept as it is, not under the content policy).
        """
        if self.stopped:
            return None
        who = self.agent(by) if by is not None else self.root
        if who is None:
            return None
        self.stopped = True
        return who.stop(action=action, content=content)
