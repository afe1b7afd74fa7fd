"""Live capture from LangGraph: a LangChain callback handler that writes an orchestrace trace.

Install: ``pip install 'orchestrace[langgraph]'``. Pass the handler in the run config —
``graph.invoke(inputs, config={"callbacks": [rec]})`` — and every callback becomes an
event while the graph runs:

=======================  ====================================================================
LangGraph / LangChain    orchestrace events
=======================  ====================================================================
the graph's run          the root agent (the orchestrator, named after the graph)
a node's run             O2 ``orchestrator_decision`` ``route:<node>`` by the graph (the
                         alternatives are the graph's nodes), then ``spawn`` of the node's
                         agent (first run) or a ``message`` to it; its end → ``return``
a tool node's run        not an agent: its tools are calls of the node that asked for them
a chat-model / LLM run   ``message`` turn of the enclosing node, tokens from the usage
a tool run               ``tool_call`` + ``tool_result`` (``error`` when it raised)
the graph's end          the O5 ``stop`` by the graph
=======================  ====================================================================

Tool nodes are the nodes named in ``tool_nodes`` (default: those whose runnable is a
``ToolNode`` when ``graph`` is given, else the node called ``"tools"``).

>>> import tempfile, os
>>> rec = LangGraphRecorder(os.path.join(tempfile.mkdtemp(), "g.jsonl"))   # doctest: +SKIP
>>> graph.invoke({"question": "2+3"}, config={"callbacks": [rec]})       # doctest: +SKIP
>>> rec.close()                                                          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from ..errors import require
from ..importers import ContentMode
from ._team import Team
from .recorder import Recorder

__all__ = ["LangGraphRecorder"]

_EXTRA = "langgraph"


def _text(x: Any) -> str | None:
    if x is None:
        return None
    return str(x) if isinstance(x, str) else json.dumps(x, default=str)  # str(): plain str, not a subclass


def _tokens(response: Any) -> tuple[int | None, int | None]:
    """Prompt and completion tokens of an ``LLMResult`` (provider usage, else message usage)."""
    u = (getattr(response, "llm_output", None) or {}).get("token_usage") or {}
    if u:
        return u.get("prompt_tokens"), u.get("completion_tokens")
    for gens in getattr(response, "generations", None) or []:
        for g in gens:
            meta = getattr(getattr(g, "message", None), "usage_metadata", None)
            if meta:
                return meta.get("input_tokens"), meta.get("output_tokens")
    return None, None


_core = require("langchain_core.callbacks", extra=_EXTRA)


class LangGraphRecorder(_core.BaseCallbackHandler):  # type: ignore[misc,name-defined]
    """A LangChain callback handler that records a LangGraph run (see the module table).

    ``path`` is the trace file (JSONL). ``graph`` (the compiled graph) gives the node
    names offered to each routing decision and finds the ``ToolNode`` s; ``tool_nodes``
    names them explicitly. ``content`` is the policy for what the nodes said: ``"hash"`` (a
    digest), ``"keep"`` or ``"drop"``. Call :meth:`close` after the run (or use it as a
    context manager).
    """

    raise_error = False
    run_inline = True

    def __init__(self, path: str | os.PathLike[str], *, graph: Any = None, tool_nodes: Iterable[str] | None = None,
                 task_id: str = "langgraph", trace_id: str | None = None, content: ContentMode = "hash") -> None:
        self.rec = Recorder(path, trace_id=trace_id, task_id=task_id, system="langgraph",
                            meta={"source_format": "langgraph", "capture": "live"})
        self.team = Team(self.rec, content=content)
        self.nodes: list[str] = []
        found: set[str] = set()
        if graph is not None:
            try:
                from langgraph.prebuilt import ToolNode
            except ImportError:  # pragma: no cover - langgraph without prebuilt
                ToolNode = ()  # type: ignore[assignment,misc]  # noqa: N806
            for name, node in getattr(graph, "nodes", {}).items():
                if name.startswith("__"):
                    continue
                self.nodes.append(name)
                if isinstance(getattr(node, "bound", None), ToolNode):
                    found.add(name)
        self.tool_nodes = set(tool_nodes) if tool_nodes is not None else (found if graph is not None else {"tools"})
        self.root_run: UUID | None = None
        self.root_name = "graph"
        self.parent: dict[UUID, UUID | None] = {}
        self.node_of: dict[UUID, str] = {}  # node run id -> node name
        self.tool_runs: dict[UUID, tuple[str, str, str]] = {}  # tool run -> (agent, tool, call id)
        self.last_agent: str | None = None
        self.t0: dict[UUID, float] = {}
        self._lock = threading.Lock()
        self.closed = False

    # -- helpers ---------------------------------------------------------------------------
    def _node(self, run_id: UUID | None) -> str | None:
        """The node whose run encloses ``run_id``."""
        for _ in range(256):
            if run_id is None:
                return None
            if run_id in self.node_of:
                return self.node_of[run_id]
            run_id = self.parent.get(run_id)
        return None

    def _agent_for(self, run_id: UUID | None) -> str:
        node = self._node(run_id)
        if node is None:
            return self.root_name
        if node in self.tool_nodes:
            return self.last_agent or self.root_name
        return node

    # -- chains (the graph and its nodes) ---------------------------------------------------
    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       metadata: dict[str, Any] | None = None, name: str | None = None, **kw: Any) -> None:
        with self._lock, self.team.guard("on_chain_start"):
            self.parent[run_id] = parent_run_id
            if self.root_run is None and parent_run_id is None:
                self.root_run = run_id
                self.root_name = name or "graph"
                self.team.agent(self.root_name)
                return
            node = (metadata or {}).get("langgraph_node")
            if parent_run_id != self.root_run or node is None or name != node:
                return
            self.node_of[run_id] = node
            if node in self.tool_nodes:
                return
            alts = self.nodes or [node]
            self.team.delegate(self.root_name, node, verb="route", alternatives=[n for n in alts
                                                                                 if n not in self.tool_nodes] or [node])
            self.last_agent = node

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        with self._lock, self.team.guard("on_chain_end"):
            if run_id == self.root_run:
                self.team.stop()
                return
            node = self.node_of.get(run_id)
            if node is not None and node not in self.tool_nodes:
                self.team.finish(node)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        with self._lock, self.team.guard("on_chain_error"):
            node = self.node_of.get(run_id)
            if node is not None and node not in self.tool_nodes:
                self.team.agent(node).safety(content=f"node {node} raised {type(error).__name__}: {error}")
            if run_id == self.root_run:
                self.team.stop(action="stop")

    # -- model calls -----------------------------------------------------------------------
    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                            **kw: Any) -> None:
        with self._lock, self.team.guard("on_chat_model_start"):
            self.parent[run_id] = parent_run_id
            self.t0[run_id] = self.rec.now()

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kw: Any) -> None:
        self.on_chat_model_start(serialized, prompts, run_id=run_id, parent_run_id=parent_run_id)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        with self._lock, self.team.guard("on_llm_end"):
            tin, tout = _tokens(response)
            text = None
            gens = getattr(response, "generations", None) or []
            if gens and gens[0]:
                text = getattr(gens[0][0], "text", None) or None
            t0 = self.t0.pop(run_id, None)
            self.team.turn(self._agent_for(run_id), tokens_in=tin, tokens_out=tout, content=_text(text), t=t0)

    # -- tools -----------------------------------------------------------------------------
    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID, parent_run_id: UUID | None = None,
                      name: str | None = None, **kw: Any) -> None:
        with self._lock, self.team.guard("on_tool_start"):
            self.parent[run_id] = parent_run_id
            tool = name or (serialized or {}).get("name") or "tool"
            agent = self._agent_for(parent_run_id)
            call = self.team.tool_call(agent, tool, _text(input_str))
            self.tool_runs[run_id] = (agent, tool, call)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        with self._lock, self.team.guard("on_tool_end"):
            got = self.tool_runs.pop(run_id, None)
            if got is not None:
                agent, tool, call = got
                self.team.tool_result(agent, tool, call, _text(getattr(output, "content", output)))

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        with self._lock, self.team.guard("on_tool_error"):
            got = self.tool_runs.pop(run_id, None)
            if got is not None:
                agent, tool, call = got
                self.team.tool_result(agent, tool, call, f"{type(error).__name__}: {error}", error=True)

    # -- finish ----------------------------------------------------------------------------
    def close(self) -> None:
        """Write the stop (if the graph's end was not seen) and close the trace file."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self.team.close()

    def __enter__(self) -> LangGraphRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
