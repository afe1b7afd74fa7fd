"""Importers: real runs from other tools → orchestrace traces, with a report of every record.

=================  ==============================================================  ==========================
format             input                                                           module
=================  ==============================================================  ==========================
``claude-code``    session ``<id>.jsonl`` (+ ``<id>/subagents/``), or a folder      :mod:`.claude_code`
``codex``          Codex CLI rollouts (JSONL); child rollouts of ``spawn_agent``   :mod:`.codex`
``otlp``           OTLP JSON (``resourceSpans`` / Tempo ``batches``), or OTel SDK  :mod:`.otel`
                   span JSON (``{"spans": [...]}``, e.g. any-agent)
``jaeger``         Jaeger JSON (``{"data": [{"traceID", "spans", "processes"}]}``)  :mod:`.otel`
``openai-agents``  OpenAI Agents SDK trace export (trace + spans with span_data)   :mod:`.openai_agents`
``chat``           chat transcripts of agent teams: AG2 group chats, Magentic-One,  :mod:`.chat`
                   ``[{role, name, content}]`` lists, objects wrapping one
``reference``      the survey's reference JSON, native JSON or the JSONL stream    :func:`orchestrace.load`
``auto``           any of the above, detected from the content                     :mod:`.detect`
=================  ==============================================================  ==========================

Every importer counts each input record as mapped, kept as structure, skipped by a named
rule, unknown, or unreadable (:class:`ImportReport`), keeps a pointer to its source record
in ``Event.source`` (``file:line`` or a span id), and applies the content policy
(``keep`` the text, ``hash`` it into ``content_ref`` — the default — or ``drop`` it).

>>> from orchestrace.importers import FORMATS
>>> FORMATS
('claude-code', 'codex', 'otlp', 'jaeger', 'openai-agents', 'chat', 'reference', 'auto')
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError, TraceDecodeError
from ._chat_doc import LIST_KEYS as CHAT_LIST_KEYS  # the keys that hold a transcript's turns
from ._common import CONTENT_MODES, ContentMode
from ._common import (
    _digest as content_digest,  # the sha256 reference of --content hash (frameworks' capture)
)
from ._evidence import (
    STRENGTH,
    Evidence,
    EvidenceKind,
    Provenance,
    evidence_of,
    of_tool_output,
    scan,
    to_attrs,
)
from ._report import BUCKETS, ImportReport, ImportResult

__all__ = ["BUCKETS", "CHAT_LIST_KEYS", "CONTENT_MODES", "FORMATS", "STRENGTH", "ContentMode", "Evidence", "EvidenceKind",
           "ImportReport", "ImportResult", "Provenance", "content_digest", "evidence_of", "import_traces", "of_tool_output",
           "scan", "to_attrs"]

#: Formats accepted by :func:`import_traces` and ``orchestrace import``.
FORMATS: tuple[str, ...] = ("claude-code", "codex", "otlp", "jaeger", "openai-agents", "chat", "reference", "auto")


def import_traces(
    format: str,
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    content: ContentMode = "hash",
    estimate_tokens: bool = False,
    orchestrator: str | None = None,
    labels: bool = False,
) -> ImportResult:
    """Import every path in ``format``; never raises for bad records, only reports them.

    ``estimate_tokens`` (``chat`` only: transcripts record no tokens) fills ``tokens_out``
    with an estimate, ``ceil(characters / 4)``, and says so in the trace's ``meta``;
    ``orchestrator`` (``chat`` only) names the speaker that is the orchestrator; ``labels``
    (``chat`` only) keeps benchmark labels (Who&When ``mistake_*``) in ``meta.labels`` —
    by default they are dropped, so no method can read them.

    Unreadable paths (missing, a directory where a file is needed, too large) and files
    of the wrong format become *error* problems in the report; records that cannot be
    read are skipped with a located problem and the rest is imported.

    >>> import os, tempfile, orchestrace as ot
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl"); ot.dump(ot.synth(events=50, agents=2), p)
    >>> res = import_traces("auto", [p])
    >>> len(res.traces[0].events), res.report.counts["event"]["mapped"], res.ok
    (50, 50, True)
    """
    if format not in FORMATS:
        raise ConfigError(f"unknown import format {format!r}; use one of: {', '.join(FORMATS)}")
    if content not in CONTENT_MODES:
        raise ConfigError(f"unknown content mode {content!r}; use one of: {', '.join(CONTENT_MODES)}")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    report = ImportReport(format=format)
    traces = []
    for p in paths:
        fmt = format
        if fmt == "auto":
            from .detect import detect

            try:
                fmt = detect(p)
            except TraceDecodeError as exc:
                report.problems.extend(exc.problems)
                continue
        sub = ImportReport(format=fmt)
        try:
            got = _read(fmt, Path(p), content, sub, estimate_tokens, orchestrator, labels)
        except TraceDecodeError as exc:
            got = []
            if exc.problems:
                sub.problems.extend(exc.problems)
            else:
                sub.error("import.unreadable", str(p), str(exc), "check the path")
        except RecursionError:  # e.g. spans nested thousands of levels deep
            got = []
            sub.error("import.too-deep", str(p), "the records nest too deeply to map (thousands of levels)",
                      "this is not a run that orchestrace can import")
        sub.n_traces = len(got)
        sub.n_events = sum(len(t.events) for t in got)
        sub.n_edges = sum(len(t.edges) for t in got)
        report.merge(sub)
        traces.extend(got)
    if format == "auto":
        report.format = "auto"
    return ImportResult(traces=traces, report=report)


def _read(fmt: str, path: Path, content: ContentMode, report: ImportReport, estimate_tokens: bool = False,
          orchestrator: str | None = None, labels: bool = False) -> list:
    if fmt == "claude-code":
        from . import claude_code

        return claude_code.read([path], content=content, report=report)
    if fmt == "codex":
        from . import codex

        return codex.read([path], content=content, report=report)
    if fmt in ("otlp", "jaeger"):
        from . import otel

        return otel.read([path], content=content, report=report, expect=fmt)
    if fmt == "openai-agents":
        from . import openai_agents

        return openai_agents.read([path], content=content, report=report)
    if fmt == "chat":
        from . import chat

        return chat.read([path], content=content, estimate=estimate_tokens, orchestrator=orchestrator, report=report,
                         labels=labels)
    return _read_reference(path, content, report)


def _read_reference(path: Path, content: ContentMode, report: ImportReport) -> list:
    """The reference format and orchestrace's own JSON / JSONL: decoded, not re-mapped."""
    import warnings

    import msgspec

    from ..core.io import iter_traces

    report.sources.append(str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traces = list(iter_traces(path))
    for w in caught:
        report.problem("import.stream", str(path), str(w.message), "")
    out = []
    for tr in traces:
        report.count("event", "mapped", n=len(tr.events))
        report.count("edge", "mapped", n=len(tr.edges))
        if content != "keep" and any(e.content is not None for e in tr.events):
            from ._common import _digest

            evs = tuple(
                msgspec.structs.replace(
                    e, content=None,
                    content_ref=e.content_ref or (_digest(e.content) if content == "hash" else None))
                if e.content is not None else e
                for e in tr.events
            )
            tr = msgspec.structs.replace(tr, events=evs)
        out.append(tr)
    return out
