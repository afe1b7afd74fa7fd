"""Chat transcripts, the end of pass 2: the wrapper's fields → the trace's metadata, task id and outcome.

What the object around a transcript's turns says of the run (see :mod:`.chat`, "Wrapper fields"):
``question_ID`` / ``task_id`` → ``task_id``; ``question`` / ``task`` → ``meta.task_ref`` (content
policy); the outcome fields (:data:`OUTCOME_KEYS`; disagreeing fields: a located warning and an
unknown success) → ``Trace.outcome``; benchmark labels (``mistake_*``) dropped unless asked for;
every other field verbatim in ``meta.source_fields``; plus the dialect, the orchestrator, the
time unit and every assumption the mapping made. :class:`_TraceMeta` is mixed into the
transcript (:class:`~orchestrace.importers.chat._Transcript`), whose fields it reads.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..core.trace import Outcome, Trace
from ..vocab import Topology
from ._chat_doc import ID_KEYS, TASK_KEYS
from ._chat_evidence import OUTCOME_KEYS, outcome_of
from ._common import ContentMode, Graph, _digest
from ._evidence import LABEL_KEYS
from ._report import ImportReport


class _TraceMeta:
    """The trace's metadata and outcome from the transcript's wrapper (mixed into ``_Transcript``)."""

    # the transcript's fields this part reads (declared for type checkers; set by the dataclass)
    label: str
    path: str
    raw: list[Any]
    report: ImportReport
    wrapper: dict[str, Any] | None
    content: ContentMode
    estimate: bool
    labels: bool
    assumptions: list[str]

    def _mistake_step(self, n: int) -> int | None:
        if not self.wrapper or "mistake_step" not in self.wrapper:
            return None
        v = self.wrapper["mistake_step"]
        try:
            k = int(v) if not isinstance(v, bool) else None
        except (TypeError, ValueError):
            k = None
        if k is None or not 0 <= k < n:
            self.report.problem("chat.bad-mistake-step", f"{self.label}:{self.path.rsplit('.', 1)[0] or '$'}.mistake_step",
                                f"mistake_step = {str(v)[:40]!r} is not a turn index (0 … {n - 1}); no turn flagged",
                                "kept in meta.labels")
            return None
        return k

    def _finish(self, g: Graph, trace_id: str, orch: str, team: bool, ledger: bool, all_ts: bool, t0: float,
                sys_refs: list[str], workers: tuple[str, ...]) -> Trace:
        w = self.wrapper or {}
        for note in self.assumptions:  # the report counts them over traces: names and counts left out
            self.report.note(re.sub(r"\b\d+ agents", "N agents", re.sub(r"'[^']*'", "NAME", note)))
        meta: dict[str, Any] = {"source_format": "chat", "source": self.label,
                                "dialect": "magentic-one" if ledger else ("ag2" if any(
                                    isinstance(r, dict) and ("tool_responses" in r or "name" in r) for r in self.raw[:50])
                                    else "chat-messages"),
                                "orchestrator": orch, "agents": list(workers) or None,
                                "time_unit": "s" if all_ts else "step", "assumptions": self.assumptions}
        if all_ts:
            meta["t0_unix"] = t0
        if self.estimate:
            meta["tokens"] = "estimated: ceil(characters / 4)"
        if sys_refs:
            meta["system_prompts"] = sys_refs
        ok, keys, clash = outcome_of(w)
        known = set(keys) | LABEL_KEYS
        for k in OUTCOME_KEYS:
            if k in w and k not in keys:
                self.report.problem("chat.bad-outcome", f"{self.label}:{self.path.rsplit('.', 1)[0] or '$'}.{k}",
                                    f"{k} = {str(w[k])[:40]!r} is not true / false; not read as the outcome",
                                    "kept in meta.source_fields")
        found = sorted(k for k in LABEL_KEYS if k in w)
        if found and self.labels:
            self._mistake_step(len(self.raw))
            meta["labels"] = {k: w[k] for k in found}
        elif found:
            self.report.note(f"benchmark label fields dropped ({', '.join(found)}): import with --labels "
                             "(labels=True) to keep them in meta.labels")
        list_key = self.path.rsplit(".", 1)[-1] if self.wrapper else None
        task_id = trace_id
        for key in ID_KEYS:
            v = w.get(key)
            if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v):
                task_id = str(v)
                known.add(key)
                break
        for key in TASK_KEYS:
            v = w.get(key)
            if isinstance(v, str) and v:
                if self.content != "drop":
                    meta["task_ref"] = _digest(v)
                if self.content == "keep":
                    meta["task"] = v
                known.add(key)
                break
        rest = {k: v for k, v in w.items() if k != list_key and k not in known}
        if rest:
            meta["source_fields"] = rest
        meta = {k: v for k, v in meta.items() if v is not None}
        system = str(w["mas_name"]) if isinstance(w.get("mas_name"), str) else str(meta["dialect"])
        tr = g.build(trace_id, task_id=task_id, system=system,
                     topology=Topology.CENTRALIZED if team else Topology.UNKNOWN, meta=meta,
                     costs={"steps": float(len(self.raw))} if not all_ts else None)
        if clash is not None:
            self.report.problem("chat.contradictory-outcome", f"{self.label}:{self.path.rsplit('.', 1)[0] or '$'}",
                                f"outcome fields disagree ({clash}): the run's success is unknown",
                                "keep one outcome field, or fix the one that is wrong")
        if keys:
            tr = msgspec.structs.replace(tr, outcome=Outcome(success=ok, verifier="source:" + ",".join(keys)))
        return tr
