"""Live capture from the OpenAI Agents SDK: a tracing processor that writes an orchestrace trace.

Install: ``pip install 'orchestrace[openai-agents]'``. Register the processor in place of
the SDK's exporter (``set_trace_processors([rec])`` — nothing is sent to OpenAI) or next to
it (``add_trace_processor(rec)``); every SDK trace (``with trace(...)`` or one
``Runner.run``) becomes one JSONL trace written while the run happens:

==================  ==========================================================================
SDK span            orchestrace events
==================  ==========================================================================
``agent``           the agent (first one: the orchestrator); its end → ``return`` to its spawner
``handoff``         O2 ``orchestrator_decision`` ``handoff:<to>`` by ``from_agent`` (the
                    alternatives are that agent's handoffs), then ``spawn`` (first time) or
                    ``message`` to ``to_agent``
``function``        ``tool_call`` + ``tool_result`` (input, output; ``error`` when the span failed)
``generation`` /    ``message`` turn of the agent, ``tokens_in`` / ``tokens_out`` from ``usage``
``response``
``guardrail``       ``safety_event`` when ``triggered``
trace end           the O5 ``stop`` by the first agent
==================  ==========================================================================

>>> import tempfile
>>> rec = OpenAIAgentsRecorder(tempfile.mkdtemp())   # doctest: +SKIP
>>> from agents import set_trace_processors          # doctest: +SKIP
>>> set_trace_processors([rec])                      # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import require
from ..importers import ContentMode
from ._team import Team
from .recorder import Recorder

__all__ = ["OpenAIAgentsRecorder"]

_EXTRA = "openai-agents"
_tracing = require("agents.tracing", extra=_EXTRA)


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return str(x) if isinstance(x, str) else json.dumps(x, default=str)  # str(): plain str, not a subclass


def _usage(u: Any) -> tuple[int | None, int | None]:
    if u is None:
        return None, None
    if not isinstance(u, dict):
        u = getattr(u, "__dict__", {}) or {}
    tin = u.get("input_tokens", u.get("prompt_tokens"))
    tout = u.get("output_tokens", u.get("completion_tokens"))
    return (int(tin) if tin is not None else None), (int(tout) if tout is not None else None)


class _Run:
    """One SDK trace being recorded."""

    def __init__(self, path: Path, trace_id: str, name: str, content: ContentMode) -> None:
        self.rec = Recorder(path, trace_id=trace_id, task_id=name or "openai-agents", system="openai-agents",
                            meta={"source_format": "openai-agents", "capture": "live"})
        self.team = Team(self.rec, content=content)
        self.agent_of: dict[str, str] = {}  # agent span id -> agent name
        self.handoffs: dict[str, list[str]] = {}  # agent name -> its handoff targets
        self.t0: dict[str, float] = {}  # span id -> recorder time at start
        self.parent: dict[str, str | None] = {}  # span id -> parent span id
        self.lock = threading.Lock()

    def owner(self, span: Any) -> str | None:
        """The agent whose span encloses ``span`` (through turn / task spans)."""
        sid = span.parent_id
        for _ in range(64):  # nesting is shallow; a cycle cannot hang us
            if sid is None:
                return None
            if sid in self.agent_of:
                return self.agent_of[sid]
            sid = self.parent.get(sid)
        return None


class OpenAIAgentsRecorder(_tracing.TracingProcessor):  # type: ignore[misc,name-defined]
    """An ``agents.tracing.TracingProcessor`` that records each SDK trace with :mod:`orchestrace.frameworks.recorder`.

    ``out`` is a directory (one ``<trace_id>.jsonl`` per SDK trace) or a file path (the
    first trace; later ones get ``-2``, ``-3`` … before the suffix). :attr:`paths` lists the
    files written, in order. ``content`` is the policy for what the agents said: ``"hash"``
    (a digest), ``"keep"`` or ``"drop"``.
    """

    def __init__(self, out: str | os.PathLike[str], *, content: ContentMode = "hash") -> None:
        self.out = Path(out)
        self.content = content
        self.paths: list[Path] = []
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    # -- paths -----------------------------------------------------------------------------
    def _path_for(self, trace_id: str) -> Path:
        if self.out.is_dir() or (not self.out.suffix and not self.out.exists()):
            self.out.mkdir(parents=True, exist_ok=True)
            return self.out / f"{trace_id}.jsonl"
        if not self.paths:
            return self.out
        return self.out.with_name(f"{self.out.stem}-{len(self.paths) + 1}{self.out.suffix}")

    # -- TracingProcessor ------------------------------------------------------------------
    def on_trace_start(self, trace: Any) -> None:
        """A new SDK trace: open its recorder."""
        with self._lock:
            path = self._path_for(trace.trace_id)
            self.paths.append(path)
            self._runs[trace.trace_id] = _Run(path, trace.trace_id, trace.name, self.content)

    def on_trace_end(self, trace: Any) -> None:
        """The run ended: the stop decision, then close the file."""
        with self._lock:
            run = self._runs.pop(trace.trace_id, None)
        if run is None:
            return
        with run.lock:
            run.team.close()

    def on_span_start(self, span: Any) -> None:
        """Agent spans make the agent known; every span's start time is kept."""
        run = self._runs.get(span.trace_id)
        if run is None:
            return
        with run.lock, run.team.guard(f"span {span.span_id} start"):
            run.t0[span.span_id] = run.rec.now()
            run.parent[span.span_id] = span.parent_id
            d = span.span_data
            if d.type == "agent":
                run.agent_of[span.span_id] = d.name
                run.handoffs[d.name] = list(d.handoffs or [])
                run.team.agent(d.name)

    def on_span_end(self, span: Any) -> None:
        """Write the span's events (see the module table)."""
        run = self._runs.get(span.trace_id)
        if run is None:
            return
        with run.lock, run.team.guard(f"span {span.span_id} end"):
            self._span_end(run, span)

    def _span_end(self, run: _Run, span: Any) -> None:
        d, team = span.span_data, run.team
        t0 = run.t0.pop(span.span_id, None)
        who = run.owner(span)
        if d.type == "agent":
            team.finish(d.name)
        elif d.type == "handoff" and d.from_agent and d.to_agent:
            team.delegate(d.from_agent, d.to_agent, verb="handoff", alternatives=run.handoffs.get(d.from_agent, ()))
        elif d.type == "function" and who is not None:
            call = team.tool_call(who, d.name, _text(d.input), t=t0, t_end=run.rec.now())
            team.tool_result(who, d.name, call, _text(d.output), error=True if span.error else None)
        elif d.type in ("generation", "response") and who is not None:
            usage = d.usage if d.type == "generation" else getattr(d.response, "usage", None)
            tin, tout = _usage(usage)
            out = d.output if d.type == "generation" else None
            team.turn(who, tokens_in=tin, tokens_out=tout, content=_text(out), t=t0)
        elif d.type == "guardrail" and who is not None and d.triggered:
            team.agent(who).safety(content=f"guardrail {d.name} triggered")

    def shutdown(self) -> None:
        """Close every open trace (with its stop)."""
        for tid in list(self._runs):
            run = self._runs.pop(tid)
            with run.lock:
                run.team.close()

    def force_flush(self) -> None:
        """Nothing to do: every event is flushed when written."""
