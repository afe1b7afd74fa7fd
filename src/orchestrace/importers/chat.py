"""Chat transcripts of agent teams → traces (AG2/AutoGen group chats, Magentic-One, AgentChat, plain lists).

Input: one JSON document (or JSON lines) holding a list of turns, either bare
(``[{"role", "content"}, …]``) or wrapped in an object under one of :data:`LIST_KEYS`
(``history`` — the Who&When failure-attribution dataset —, ``messages``, ``chat_history``,
…), or a list of such objects (one trace each). A turn is an object with a speaker
(:data:`NAME_KEYS`, else a ``role`` that is not a chat-API role), a ``content`` and,
optionally, ``tool_calls`` / ``tool_call_id`` / ``tool_responses`` / ``function_call``.
AutoGen AgentChat (0.4+) message dumps (``{"source", "content", "type", "models_usage"}``,
e.g. ``TaskResult.messages``) are read by their ``type`` (:data:`AGENTCHAT_TYPES`).

Mapping (documented with examples in ``docs/interop.md``, "Chat transcripts"):

=================================  =============================================================
turn                               trace
=================================  =============================================================
a speaker                          an agent (``Event.agent``); Magentic-One names
                                   ``Orchestrator (thought)`` / ``(-> WebSurfer)`` are the agent
                                   ``Orchestrator`` (the tag in ``attrs.tag``, ``->`` sets ``to``)
the orchestrator / manager         the orchestrator agent (:func:`orchestrator_of`); when no
                                   speaker is one and two or more agents speak, the implicit
                                   AG2 manager ``chat_manager`` (said in ``meta.assumptions``)
a turn with text                   ``message`` (``human_intervention`` for a person:
                                   ``human`` / ``user``), content per the content policy
``tool_calls[i]``, ``function_call``  ``tool_call`` (``tool`` = function name, ``attrs.call_id``)
``role: tool`` + ``tool_call_id``,  ``tool_result`` with a ``tool_dependency`` edge from its call
``tool_responses[i]``, ``function``  (no matching call: kept, ``attrs.orphan``, counted warning)
``role: system``                   structure (its digest in ``meta.system_prompts``)
a worker's turn in a team          preceded by an O2 ``orchestrator_decision`` of the
                                   orchestrator (``action`` = the speaker, ``alternatives`` =
                                   the team); a Magentic-One ledger's ``next_speaker`` is that
                                   decision (``attrs.selected_by = "ledger"``), as is an
                                   AgentChat ``SelectSpeakerEvent`` (``"selector"``; its source
                                   is the orchestrator) or ``HandoffMessage`` (``"handoff"``, by
                                   the handing agent); else it is inferred (``"transcript"``)
AgentChat ``ToolCallRequestEvent``  ``tool_call`` per item; ``ToolCallExecutionEvent``:
                                   ``tool_result`` per item (``is_error`` → ``error``);
                                   ``models_usage`` → ``tokens_in`` / ``tokens_out``;
                                   ``StopMessage`` → the stop's reason; streaming chunks skipped
the end                            the O5 stop: ``terminate`` (a turn ends with ``TERMINATE``),
                                   ``request_satisfied`` (ledger), ``termination_condition``
                                   (Magentic-One, AgentChat ``StopMessage`` / ``stop_reason``),
                                   ``max_round`` (the wrapper's ``max_round`` reached), else
                                   ``end_of_transcript``
=================================  =============================================================

Time is the turn index (turn ``k`` runs from ``k`` to ``k + 1``) unless every turn has a
timestamp; ``meta.time_unit`` says which and ``meta.assumptions`` lists every assumption.
Tokens are rarely recorded by transcripts: ``estimate=True`` fills ``tokens_out`` with
:func:`estimate_tokens` where no usage is recorded (said in ``meta.tokens``). Wrapper fields: ``question`` /
``task`` → ``meta.task_ref`` (content policy), ``question_ID`` / ``task_id`` → ``task_id``,
``is_correct`` / ``is_corrected`` / … (:data:`OUTCOME_KEYS`; disagreeing fields: a located
warning and an unknown success) → ``Trace.outcome``; every other top-level field is kept verbatim
in ``meta.source_fields`` (:mod:`._chat_meta`) — except benchmark labels (Who&When ``mistake_agent`` /
``mistake_step`` / ``mistake_reason``), dropped unless ``labels=True``, which puts them in
``meta.labels``. What the transcript shows went wrong is flagged on its event (``error`` and
``attrs.evidence``: :mod:`._evidence`, :mod:`._chat_evidence`).

>>> turns = [{"role": "user", "name": "Admin", "content": "Plot it."},
...          {"role": "assistant", "name": "Planner", "content": "1. fetch 2. plot"},
...          {"role": "assistant", "name": "Engineer", "content": "done. TERMINATE"}]
>>> tr = from_doc(turns, "t.json")[0][0]
>>> [(e.type.value, e.agent, e.decision.action if e.decision else None) for e in tr.events]
... # doctest: +NORMALIZE_WHITESPACE
[('message', 'Admin', None), ('orchestrator_decision', 'Admin', 'Planner'), ('message', 'Planner', None),
 ('orchestrator_decision', 'Admin', 'Engineer'), ('message', 'Engineer', None),
 ('orchestrator_decision', 'Admin', 'terminate')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..core.trace import DecisionPayload, Trace
from ..errors import TraceDecodeError
from ..vocab import Decision, EventType
from ._chat_doc import (
    IMPLICIT_MANAGER,
    LIST_KEYS,
    NAME_KEYS,
    TERMINATE,
    TURN_HINT,
    estimate_tokens,
    ledger_of,
    looks_like,
    names_of,
    orchestrator_of,
    scalar_document,
    transcripts,
)
from ._chat_evidence import TurnRecord, facts_of, flag, outputs
from ._chat_meta import _TraceMeta
from ._chat_turns import Turn, TurnReader
from ._common import (
    ContentMode,
    Graph,
    _digest,
    count_value,
    iter_jsonl,
    load_json,
)
from ._evidence import to_attrs
from ._report import ImportReport

#: A speaker selection lists the team as its alternatives up to this many agents (the list is
#: repeated on every decision; a transcript of thousands of one-turn speakers would explode).
MAX_ALTERNATIVES = 64

__all__ = ["LIST_KEYS", "NAME_KEYS", "estimate_tokens", "from_doc", "looks_like", "orchestrator_of", "read"]


def read(paths: Sequence[str | os.PathLike[str]], *, content: ContentMode = "hash", estimate: bool = False,
         orchestrator: str | None = None, report: ImportReport | None = None, labels: bool = False) -> list[Trace]:
    """Import chat-transcript files (a JSON document, or JSON lines of turns or of wrapped transcripts).

    ``orchestrator`` names the speaker that is the orchestrator (default: by its name,
    :func:`orchestrator_of`); ``labels=True`` keeps benchmark labels (``mistake_*``) in
    ``meta.labels`` (by default they are dropped).
    """
    report = report if report is not None else ImportReport(format="chat")
    traces: list[Trace] = []
    for p in map(Path, paths):
        report.sources.append(str(p))
        try:
            doc: Any = load_json(p, p.name, report)
            linenos = None
        except TraceDecodeError as exc:
            if not any(pr.code == "import.not-json" for pr in exc.problems):
                raise
            scalar = scalar_document(p)
            if scalar is not None:
                report.count("<document>", "unreadable")
                report.error("import.wrong-format", f"{p.name}:$", f"document is a{'n' if scalar[0] in 'aeiou' else ''} "
                             f"{scalar}, not a list of turns", "pass a JSON list of turns, or an object wrapping one")
                continue
            pairs = list(iter_jsonl(p, p.name, report))
            doc, linenos = [obj for _, obj in pairs], [n for n, _ in pairs]
            if not doc:
                if not report.errors:
                    report.error("import.empty", f"{p.name}:$", "no JSON document or JSON lines",
                                 "pass a chat transcript: a JSON list of turns")
                continue
        got, _ = from_doc(doc, p.name, content=content, estimate=estimate, report=report, linenos=linenos,
                          stem=p.stem, orchestrator=orchestrator, labels=labels)
        traces.extend(got)
    return traces


def from_doc(doc: Any, label: str, *, content: ContentMode = "hash", estimate: bool = False,
             report: ImportReport | None = None, linenos: list[int] | None = None, stem: str | None = None,
             orchestrator: str | None = None, labels: bool = False) -> tuple[list[Trace], ImportReport]:
    """Traces from an already-decoded transcript document (see the module docstring for the shapes).

    ``linenos`` are the line numbers of the items of ``doc`` when it was read from JSON lines.
    """
    report = report if report is not None else ImportReport(format="chat")
    stem = stem or label.rsplit(".", 1)[0]
    found = transcripts(doc, label, report, linenos)
    out = []
    for k, (path, turns, wrapper) in enumerate(found):
        tid = stem if len(found) == 1 else f"{stem}#{k}"
        lines = linenos if path == "" else None
        tr = _Transcript(label, path, turns, report, lines, wrapper=wrapper, content=content, estimate=estimate,
                         given_orchestrator=orchestrator, labels=labels).build(tid)
        if tr is not None:
            out.append(tr)
    return out, report


@dataclass
class _Walk:
    """What pass 2 carries from one turn to the next."""

    g: Graph
    orch: str
    team: bool
    alternatives: tuple[str, ...]
    calls: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # call id → (event id, agent, tool)
    fn_calls: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # function name → [(event id, agent)] unanswered (legacy)
    tail: list[str] = field(default_factory=list)  # the events the next one depends on (the previous turn's last events)
    last_agent: str | None = None
    pending: tuple[str, str] | None = None  # (decision id, selected speaker) not yet used
    n_dec: int = 0
    stop_reason: tuple[str, str] | None = None  # (action, why)
    sys_refs: list[str] = field(default_factory=list)
    first: bool = True

    def delegate(self, agent: str, t: float, action: str, alternatives: tuple[str, ...], source: str,
                 selected_by: str, *, role: str | None = "orchestrator", selected: list[str] | None = None) -> str:
        """An O2 speaker selection that follows the current tail (``selected``: all the speakers an
        AgentChat selector named, when more than one); returns its event id."""
        attrs: dict[str, Any] = {"selected_by": selected_by, **({"selected": selected} if selected else {})}
        fields: dict[str, Any] = {"role": role} if role is not None else {}
        dec = self.g.add(EventType.ORCHESTRATOR_DECISION, agent, t, deps=[(x, "causal") for x in self.tail],
                         decision=DecisionPayload(kind=Decision.DELEGATE, action=action, alternatives=alternatives,
                                                  step=self.n_dec),
                         attrs=attrs, source=source, **fields)
        self.n_dec += 1
        return dec


@dataclass
class _Transcript(TurnReader, _TraceMeta):
    """Pass 2: the turns of one transcript (read by :class:`TurnReader`) mapped onto a trace."""

    wrapper: dict[str, Any] | None
    content: ContentMode
    estimate: bool
    given_orchestrator: str | None = None
    labels: bool = False
    assumptions: list[str] = field(default_factory=list)
    records: list[TurnRecord] = field(default_factory=list)  # mapped turns, for the failure evidence
    has_usage: bool = False

    # -- pass 2: build the graph ------------------------------------------------------------------
    def build(self, trace_id: str) -> Trace | None:
        rep = self.report
        n_errors = len(rep.errors)
        turns = self.turns()
        if not turns:
            if len(rep.errors) > n_errors:
                return None  # every turn was unreadable: already reported
            rep.count("<document>", "unreadable")
            rep.error("chat.no-turns", f"{self.label}:{self.path or '$'}", "the transcript has no turns" +
                      (f" to import ({len(self.raw)} skipped: see the report)" if self.raw else ""), "nothing to import")
            return None
        orch, workers, ledger = self._cast(turns)
        team = len(workers) >= 2
        alternatives = tuple(workers) if len(workers) <= MAX_ALTERNATIVES else ()
        if len(workers) > MAX_ALTERNATIVES:
            self.assumptions.append(f"{len(workers)} agents speak: speaker selections do not list them as "
                                    f"alternatives (more than {MAX_ALTERNATIVES}); meta.agents does")
        all_ts = all(tu.ts is not None for tu in turns)
        t0 = min(tu.ts for tu in turns if tu.ts is not None) if all_ts else 0.0
        if all_ts:
            self.assumptions.append("time is each turn's timestamp (seconds from the first); turns are instants")
        else:
            self.assumptions.append("the transcript records no timestamps: time is the turn index (turn k runs from "
                                    "k to k + 1); durations and wall_clock_s count turns, not seconds")
        g = Graph(content=self.content, report=rep)
        g.scan_evidence = False  # the turns are read for evidence as a whole (_flag)
        w = _Walk(g, orch, team, alternatives)
        for tu in turns:
            t = (tu.ts - t0) if all_ts and tu.ts is not None else float(tu.k)
            self._turn(w, tu, t, None if all_ts else t + 1.0)
        self._note_tokens()
        self._stop(w)
        self._flag(g)
        rep.clamped_times += g.clamped
        return self._finish(g, trace_id, orch, team, ledger, all_ts, t0, w.sys_refs, tuple(workers))

    def _cast(self, turns: list[Turn]) -> tuple[str, list[str], bool]:
        """The orchestrator, the workers and whether a ledger (tagged turns) is there, with the
        assumption that names the orchestrator."""
        speakers: dict[str, None] = {}
        selector = None  # the source of AgentChat SelectSpeakerEvents: the group chat's manager
        for tu in turns:
            if tu.kind == "SelectSpeakerEvent" and tu.speaker:
                selector = selector or tu.speaker
            elif tu.speaker and tu.role not in ("system", "tool", "function") and not tu.human and tu.kind != "StopMessage":
                speakers.setdefault(tu.speaker, None)
        names = [s for s in speakers if s != selector]
        orch = self.given_orchestrator or selector or orchestrator_of(names)
        if self.given_orchestrator and self.given_orchestrator not in speakers and self.given_orchestrator != selector:
            self.report.problem("chat.orchestrator-not-a-speaker", f"{self.label}:{self.path or '$'}",
                                f"--orchestrator {self.given_orchestrator!r} never speaks in this transcript; it is "
                                "kept as the agent that selects speakers and stops",
                                f"speakers: {', '.join(list(speakers)[:8])}")
        ledger = any(tu.tag for tu in turns)
        workers = [s for s in names if s != orch]
        if orch is None:
            if len(workers) >= 2 or not workers:
                orch = IMPLICIT_MANAGER
                self.assumptions.append(f"no speaker is named like an orchestrator or manager: speaker selection and "
                                        f"the stop are attributed to the implicit group-chat manager `{orch}`")
            else:
                orch = workers[0]
                self.assumptions.append(f"one agent ({orch!r}) speaks: it is the orchestrator; no speaker selection")
                workers = []
        elif orch == self.given_orchestrator:
            self.assumptions.append(f"{orch!r} is the orchestrator (given with --orchestrator)")
        elif orch == selector:
            self.assumptions.append(f"{orch!r} is the orchestrator (it selects the speakers)")
        else:
            self.assumptions.append(f"{orch!r} is the orchestrator (by its name)")
        return orch, workers, ledger

    def _tok(self, text: str) -> int | None:
        return estimate_tokens(text) if self.estimate and text else None

    def _turn(self, w: _Walk, tu: Turn, t: float, t_end: float | None) -> None:
        """Map one turn: structure (system prompt, stop message), a selection, tool results, or speech."""
        rep, rec, src = self.report, tu.rec, tu.where
        if tu.role == "system" and not tu.tag and tu.speaker in ("system", ""):
            rep.count("system", "structure", "system prompt (its digest in meta.system_prompts)")
            if tu.text:
                w.sys_refs.append(_digest(tu.text))
            return
        if tu.kind == "StopMessage":
            rep.count("StopMessage", "structure", "the stop's reason")
            w.stop_reason = ("terminate" if TERMINATE in tu.text else "termination_condition", f"{src}: {tu.text[:120]}")
            return
        if tu.kind == "SelectSpeakerEvent":
            chosen = names_of(rec.get("content"))
            if not chosen:
                rep.count("SelectSpeakerEvent", "unreadable")
                rep.error("chat.bad-turn", f"{src}.content", "SelectSpeakerEvent names no speaker; skipped",
                          "its content is the list of selected speakers' names")
                return
            rep.count("SelectSpeakerEvent", "mapped")
            dec = w.delegate(w.orch, t, chosen[0], _with(w.alternatives, *chosen), src, "selector",
                             selected=chosen if len(chosen) > 1 else None)
            rep.note("speaker selection (O2) read from AgentChat SelectSpeakerEvents")
            w.pending, w.tail = (dec, chosen[0]), [dec]
            return
        responses = rec.get("tool_responses")
        is_result = tu.role in ("tool", "function") or "tool_call_id" in rec
        if is_result or isinstance(responses, list) and responses:
            w.tail, w.last_agent = self._results(w.g, tu, t, t_end, w.tail, w.calls, w.fn_calls, responses, w.last_agent)
            w.first = False
            return
        self._speak(w, tu, t, t_end)

    def _speak(self, w: _Walk, tu: Turn, t: float, t_end: float | None) -> None:
        """A turn that speaks: its message (or human intervention) and tool calls, the selection
        that preceded it, and what it says about the next speaker or the stop."""
        rep, rec, src, g = self.report, tu.rec, tu.where, w.g
        agent = tu.speaker or (w.last_agent or "unknown")
        is_orch = agent == w.orch
        deps: list[tuple[str, str]] = [(x, "causal" if agent == w.last_agent else "message") for x in w.tail]
        # a worker who speaks after someone else was selected (by the manager, a ledger, a handoff …)
        if w.team and not is_orch and not tu.human and not w.first and (agent != w.last_agent or w.pending is not None):
            if w.pending is None or w.pending[1] != agent:
                dec = w.delegate(w.orch, t, agent, w.alternatives, src, "transcript")
                rep.note("speaker selection (O2) inferred from who spoke next")
                w.pending = (dec, agent)
            if w.pending[0] in w.tail:  # the selection is the event just before: one causal edge
                deps = [(x, k) for x, k in deps if x != w.pending[0]]
            deps.append((w.pending[0], "causal"))
            w.pending = None
        attrs: dict[str, Any] = {}
        if tu.tag:
            attrs["tag"] = tu.tag
        if tu.role and tu.role != tu.speaker:
            attrs["chat_role"] = tu.role
        to = tu.tag[2:].strip() if tu.tag and tu.tag.startswith("->") else None
        calls_raw = rec.get("tool_calls")
        has_calls = isinstance(calls_raw, list) and bool(calls_raw) or isinstance(rec.get("function_call"), dict)
        rtype = tu.kind or "turn"
        if tu.kind:
            attrs["type"] = tu.kind
        target = rec.get("target") if tu.kind == "HandoffMessage" and isinstance(rec.get("target"), str) else None
        usage = self._usage(tu)
        main: str | None = None
        if tu.text or not has_calls:
            if not tu.text:
                rep.problem("chat.empty-content", src, "turn has no content (empty text, no tool calls)",
                            "kept as a message without content")
                rep.count(rtype, "mapped", "empty turn (no content)")
            else:
                rep.count(rtype, "mapped")
            tokens: dict[str, int | None] = dict(usage) if usage else ({} if tu.human else {"tokens_out": self._tok(tu.text)})
            main = g.add(EventType.HUMAN_INTERVENTION if tu.human else EventType.MESSAGE, agent, t, t_end=t_end,
                         deps=deps, text=tu.text or None, to=to or target,
                         role="orchestrator" if is_orch else ("human" if tu.human else None),
                         attrs=attrs, source=src, **tokens)
            usage = {}
            w.tail = [main]
        if has_calls:
            cdeps = [(main, "causal")] if main else deps
            tc = t if main is None or t_end is None else t_end
            got = self._calls(g, tu, agent, tc, cdeps, w.calls, w.fn_calls, self._tok, usage)
            w.tail = [got] if got else w.tail
            if main is None and got:
                main = got
                rep.count(rtype, "mapped", "tool calls only")
        w.last_agent = agent
        w.first = False
        if main is not None:
            self.records.append(TurnRecord(tu.k, main, agent, tu.text, "orch" if is_orch else (
                "human" if tu.human else "worker")))
        if target is not None and w.tail:  # a handoff: the speaker itself chose the next agent
            dec = w.delegate(agent, max(map(g.end, w.tail)), target, _with(w.alternatives, target), src, "handoff",
                             role=None)
            rep.note("speaker selection (O2) read from AgentChat HandoffMessages (decided by the handing agent)")
            w.pending, w.tail = (dec, target), [dec]
        if is_orch and "next_speaker" in tu.text:
            self._ledger(w, tu, t if t_end is None else t_end)
        if tu.tag == "termination condition":
            w.stop_reason = ("termination_condition", f"{src}: {tu.text[:120]}")
        elif tu.text.rstrip().endswith(TERMINATE) and w.stop_reason is None:
            w.stop_reason = ("terminate", f"{src} ends with {TERMINATE}")

    def _ledger(self, w: _Walk, tu: Turn, t: float) -> None:
        """A ledger turn: the orchestrator's own record of the next speaker, or of the stop."""
        led = ledger_of(tu.text)
        if led is None:
            return
        satisfied, nxt = led
        if satisfied:
            w.stop_reason = ("request_satisfied", f"ledger at {tu.where}: is_request_satisfied = true")
        elif nxt:
            dec = w.delegate(w.orch, t, nxt, _with(w.alternatives, nxt), tu.where, "ledger")
            self.report.note("speaker selection (O2) read from a Magentic-One ledger's next_speaker")
            w.pending = (dec, nxt)
            w.tail = [dec]

    def _note_tokens(self) -> None:
        """The assumption about token counts (estimated, the transcript's usage, or absent)."""
        if self.estimate:
            self.assumptions.append("tokens_out estimated as ceil(characters / 4) of the text an agent wrote"
                                    + (" (where the transcript records no usage)" if self.has_usage else ""))
        elif self.has_usage:
            self.assumptions.append("token counts are the transcript's own usage records; turns without one have none")
        else:
            self.assumptions.append("the transcript records no tokens: token counts are absent "
                                    "(import with --estimate-tokens to estimate them)")

    def _stop(self, w: _Walk) -> None:
        """The O5 stop decision: the reason the transcript gives, else ``max_round``, else its end."""
        stop_reason = w.stop_reason
        stop_text = self.wrapper.get("stop_reason") if self.wrapper else None
        if stop_reason is None and isinstance(stop_text, str) and stop_text:
            stop_reason = ("terminate" if TERMINATE in stop_text else "termination_condition",
                           f"stop_reason: {stop_text[:120]}")
        max_round = self.wrapper.get("max_round") if self.wrapper else None
        n_turns = len(self.raw)
        if stop_reason is None and isinstance(max_round, int) and not isinstance(max_round, bool) and n_turns >= max_round:
            stop_reason = ("max_round", f"{n_turns} turns reached max_round = {max_round}")
        action, why = stop_reason or ("end_of_transcript", "the transcript ends (no termination message)")
        end_t = max((w.g.end(e) for e in w.g.events), default=0.0)
        w.g.add(EventType.ORCHESTRATOR_DECISION, w.orch, end_t, deps=[(x, "causal") for x in w.tail],
                decision=DecisionPayload(kind=Decision.STOP, action=action, alternatives=("continue",), step=w.n_dec),
                attrs={"reason": why}, role="orchestrator", source=f"{self.label}:{self.path or '$'}")
        self.report.note(f"stop (O5): {action}")

    def _calls(self, g: Graph, tu: Turn, agent: str, t: float, deps: list[tuple[str, str]],
               calls: dict[str, tuple[str, str, str]], fn_calls: dict[str, list[tuple[str, str]]], tok: Any,
               usage: dict[str, int]) -> str | None:
        rep = self.report
        last = None
        raw = tu.rec.get("tool_calls")
        items: list[tuple[str, Any]] = ([(f"{tu.items_key}[{i}]", c) for i, c in enumerate(raw)]
                                        if isinstance(raw, list) else [])
        if isinstance(tu.rec.get("function_call"), dict):
            items.append(("function_call", {"function": tu.rec["function_call"], "legacy": True}))
        for sub, c in items:
            where = self.where(tu.k, sub)
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(c, dict) or not isinstance(fn, dict):
                rep.count("tool_call", "unreadable")
                rep.error("chat.bad-tool-call", where, "tool call is not {\"id\", \"function\": {\"name\", \"arguments\"}}; "
                          "skipped", "write tool calls in the OpenAI chat format")
                continue
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                rep.sanitise("chat.no-tool-name", f"{where}.function.name", "tool call names no function; tool 'unknown'",
                             "give the call a function name")
                name = "unknown"
            args = fn.get("arguments")
            text = args if isinstance(args, str) else (json.dumps(args, ensure_ascii=False, default=str)
                                                       if args is not None else "")
            cid = self._call_id(c.get("id"), f"{where}.id")
            attrs = {"call_id": cid} if cid else {}
            fields = usage or {"tokens_out": tok(text)}  # the model's usage goes to its first output
            usage = {}
            eid = g.add(EventType.TOOL_CALL, agent, t, deps=deps, tool=name, text=text or None, attrs=attrs,
                        source=where, **fields)
            rep.count("tool_call", "mapped")
            if cid:
                calls[cid] = (eid, agent, name)
            if c.get("legacy") or not cid:
                fn_calls.setdefault(name, []).append((eid, agent))
            last = eid
        return last

    def _results(self, g: Graph, tu: Turn, t: float, t_end: float | None, tail: list[str],
                 calls: dict[str, tuple[str, str, str]], fn_calls: dict[str, list[tuple[str, str]]],
                 responses: Any, prev_agent: str | None) -> tuple[list[str], str | None]:
        rep = self.report
        rec = tu.rec
        if isinstance(responses, list) and responses:
            items = [(f"{'tool_responses' if tu.items_key == 'tool_calls' else tu.items_key}[{i}]", r)
                     for i, r in enumerate(responses)]
        else:
            items = [("", rec)]
        agent_out = None
        out: list[str] = []
        for sub, r in items:
            where = self.where(tu.k, sub) if sub else tu.where
            if not isinstance(r, dict):
                rep.count("tool_result", "unreadable")
                rep.error("chat.bad-turn", where, "tool response is not an object; skipped", TURN_HINT)
                continue
            cid = self._call_id(r.get("tool_call_id"), f"{where}.tool_call_id" if sub else self.where(tu.k, "tool_call_id"))
            text = tu.text if not sub else self._text(r, tu.k)
            match = calls.pop(cid, None) if cid else None
            if match is None and not cid:
                fname = r.get("name") if isinstance(r.get("name"), str) else tu.speaker
                queue = fn_calls.get(fname or "")
                if queue:
                    e, a = queue.pop(0)
                    match = (e, a, fname or "unknown")
            deps = [(x, "causal") for x in tail if match is None or match[0] != x]  # results of one turn: parallel
            attrs: dict[str, Any] = {"call_id": cid} if cid else {}
            if match is not None:
                deps.append((match[0], "tool_dependency"))
                caller, tool = match[1], match[2]
                rep.count("tool_result", "mapped")
            else:
                name = r.get("name")
                caller, tool = (tu.speaker or prev_agent or "unknown"), (name if isinstance(name, str) and name else "unknown")
                attrs["orphan"] = True
                rep.count("tool_result", "mapped", "no matching tool call (kept, attrs.orphan)")
                rep.problem("chat.orphan-tool-result", where, f"tool result{(' for call ' + repr(cid)) if cid else ''} "
                            "answers no earlier tool call; kept without a tool_dependency edge",
                            "check that the transcript includes the assistant turn with the matching tool_calls")
            if tu.speaker and tu.speaker not in (caller, tool):  # AG2 names the executing agent; some SDKs the tool
                attrs["executor"] = tu.speaker
            out.append(g.add(EventType.TOOL_RESULT, caller, t, t_end=t_end, deps=deps, tool=tool, text=text or None,
                             attrs=attrs, source=where, error=True if r.get("is_error") is True else None))
            self.records.append(TurnRecord(tu.k, out[-1], caller, text or "", "tool_result",
                                           caller=match[0] if match is not None else None,
                                           is_error=r.get("is_error") is True))
            agent_out = tu.speaker if tu.speaker and tu.speaker != tool else caller
        return (out or tail), agent_out

    def _usage(self, tu: Turn) -> dict[str, int]:
        """``tokens_in`` / ``tokens_out`` from the turn's own usage (AgentChat ``models_usage``, OpenAI ``usage``)."""
        for key in ("models_usage", "usage"):
            u = tu.rec.get(key)
            if isinstance(u, dict):
                out = {}
                for name, field_ in (("prompt_tokens", "tokens_in"), ("input_tokens", "tokens_in"),
                                     ("completion_tokens", "tokens_out"), ("output_tokens", "tokens_out")):
                    if name in u and field_ not in out:
                        n = count_value(u[name], f"{key}.{name}", self.where(tu.k, f"{key}.{name}"), self.report)
                        if n is not None:
                            out[field_] = n
                if out:
                    self.has_usage = True
                    return out
        return {}

    def _flag(self, g: Graph) -> None:
        """Failure evidence on the events (``error`` + ``attrs.evidence``), from the mapped turns' texts."""
        found = flag(self.records, facts_of(self.wrapper))
        keep = self.content != "drop"
        for eid, code in outputs(self.records).items():  # an executor's report is the output of the code it ran
            e = g.events[eid]
            extra = {"output": True, **({"output_of": code} if code else {})}
            g.events[eid] = msgspec.structs.replace(e, attrs={**(e.attrs or {}), **extra})
        for eid, evs in found.items():
            e = g.events[eid]
            attrs = dict(e.attrs or {})
            attrs["evidence"] = to_attrs(evs, keep)
            g.events[eid] = msgspec.structs.replace(e, attrs=attrs, error=True if any(  # a quote is no error
                ev.is_evidence for ev in evs) else e.error)
            for ev in evs:
                self.report.count("evidence", "mapped", ev.kind.value if ev.is_evidence else f"{ev.kind.value} (quoted)")
        if found:
            self.report.note("failure evidence flagged on events (error: true, attrs.evidence): exit codes, "
                             "tracebacks, tool errors, ledger verdicts, repeated actions, refusals")


def _with(alternatives: tuple[str, ...], *chosen: str) -> tuple[str, ...]:
    """The alternatives of a selection, the chosen speakers included (none listed when the team is too big)."""
    return tuple(dict.fromkeys((*alternatives, *chosen))) if alternatives else ()
