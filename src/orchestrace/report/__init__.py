"""See a trace: one self-contained HTML report (and a static PNG timeline for papers).

``report_html(trace)`` returns a page with

* a **timeline** on ``<canvas>``: one lane per agent, nested by the spawn tree; bars for
  timed events, marks for instantaneous ones (shape and colour per event type); the
  critical path outlined in red and joined by a red line; wasted work hatched; the stop
  decision as a dashed rule; a concurrency strip above; wheel zoom, drag pan, hover
  shows an event's fields. Dense views merge bars per pixel, so 20,000 events pan
  smoothly;
* the **event graph** (layered DAG, SVG) for traces of at most ``max_graph_events``
  events, else the **spawn tree** of agents;
* the **measures** (namespaced, grouped) and **safety flows** listed as paths;
* **credit** per unit as a heat strip and a table, when given.

Several traces (a list, a JSONL dataset, a folder — e.g. an ``eval`` run) give a summary
page: one histogram per measure and the success-versus-cost plot of policies
(``trace.meta["policy"]``) with its Pareto front; each trace opens on click when the
run is small enough to embed (``embed_events``).

The page loads nothing (Content-Security-Policy ``default-src 'none'``): scripts, styles
and data are inline. Data travel as columns (one array per field), not one object per
event.

>>> from orchestrace import synth
>>> page = report_html(synth(events=80, agents=3, seed=0))
>>> page.startswith("<!doctype html>") and 'id="payload"' in page
True
>>> "https://" in page.split('id="payload"')[0]
False
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.trace import Trace
from ._analysis import Analysis, analyse
from ._credit import credit_payload
from ._html import render_html
from ._payload import many_payload, summary_row, trace_payload

__all__ = ["Analysis", "analyse", "credit_payload", "measures_of", "report_html", "save_png", "write_report"]

#: Largest total number of events for which a many-trace page embeds every trace.
EMBED_EVENTS = 60_000


def measures_of(trace: Trace, analysis: Analysis | None = None) -> dict[str, float | None]:
    """Namespaced measures of a trace (:func:`orchestrace.analysis.measures.compute`; None = unknown).

    >>> from orchestrace import synth
    >>> m = measures_of(synth(events=60, agents=2, seed=0))
    >>> m["spawn/agents"], "e2/critical_steps" in m
    (2.0, True)
    """
    return dict((analysis or analyse(trace)).measures)


def _as_traces(source: Trace | Iterable[Trace] | str | os.PathLike[str]) -> tuple[list[Trace], str]:
    if isinstance(source, Trace):
        return [source], source.trace_id
    if isinstance(source, (str, os.PathLike)):
        from ..core._paths import expand_paths
        from ..core.io import iter_traces

        p = Path(source)
        files = [t.path for t in expand_paths([p], recursive=True, datasets=False).targets if t.problem is None]
        return [t for f in files for t in iter_traces(f)], str(p)
    traces = list(source)
    return traces, f"{len(traces)} traces"


def report_html(
    source: Trace | Iterable[Trace] | str | os.PathLike[str],
    *,
    credit: Mapping[str, Any] | None = None,
    max_graph_events: int = 300,
    embed_events: int = EMBED_EVENTS,
    title: str | None = None,
) -> str:
    """The HTML report of one trace, or the summary page of several.

    ``source`` is a :class:`~orchestrace.Trace`, an iterable of traces, or a path (a JSON
    / JSONL file, or a folder searched recursively for ``*.json`` / ``*.jsonl``).
    ``credit`` (single trace only) is ``{"unit", "method", "ids": [...], "values": [...]}``
    — see :func:`orchestrace.report.credit_payload` in the CLI.
    """
    traces, label = _as_traces(source)
    if len(traces) == 1:
        tr = traces[0]
        an = analyse(tr)
        payload = trace_payload(tr, measures=measures_of(tr, an), credit=credit,
                                max_graph_events=max_graph_events, analysis=an)
        return render_html(payload, title=title or f"orchestrace · {tr.trace_id}")
    rows, embedded = [], []
    total = sum(len(t.events) for t in traces)
    for tr in traces:
        an = analyse(tr)
        meas = measures_of(tr, an)
        rows.append(summary_row(tr, meas))
        if total <= embed_events:
            embedded.append(trace_payload(tr, measures=meas, max_graph_events=max_graph_events, analysis=an))
    return render_html(many_payload(rows, source=label, traces=embedded), title=title or f"orchestrace · {label}")


def write_report(
    source: Trace | Iterable[Trace] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    **kwargs: Any,
) -> Path:
    """Write :func:`report_html` to ``out`` (UTF-8); returns the path.

    >>> import tempfile, os
    >>> from orchestrace import synth
    >>> p = write_report(synth(events=50, agents=2, seed=0), os.path.join(tempfile.mkdtemp(), "r.html"))
    >>> p.stat().st_size > 10_000
    True
    """
    p = Path(out)
    p.write_text(report_html(source, **kwargs), encoding="utf-8")
    return p


def save_png(trace: Trace, out: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Static timeline PNG (matplotlib, extra ``plot``); see :func:`orchestrace.report._png.save_png`."""
    from ._png import save_png as _save

    return _save(trace, out, **kwargs)
