"""Exporters: traces → the reference format, OTLP JSON / OpenTelemetry, and RL training data.

===============  ===========================================================  ===========================
format           what                                                         function
===============  ===========================================================  ===========================
``reference``    the survey's reference JSON                                  :func:`orchestrace.to_reference`
``otlp``         OTLP JSON with GenAI attributes (Jaeger, Phoenix, Langfuse)  :func:`to_otlp`
(SDK hook)       replay a trace into an OpenTelemetry tracer (extra ``otel``)  :func:`emit_to_tracer`
``rllm``         rLLM episodes: Episode → Trajectory per agent → Step         :func:`to_rllm`
                 with ``reward`` and precomputed ``advantage``
``verl``         verl parquet rows (``extra_info{trace_id, agent_id, …}``)    :func:`to_verl`
``trl``          TRL prompt / completion / reward rows (JSONL)                :func:`to_trl`
===============  ===========================================================  ===========================

>>> from orchestrace.exporters import EXPORT_FORMATS
>>> EXPORT_FORMATS
('otlp', 'rllm', 'verl', 'trl', 'reference')
"""

from __future__ import annotations

from .otlp import to_otlp
from .training import (
    Turn,
    advantages_of,
    export_turns,
    export_warnings,
    to_rllm,
    to_trl,
    to_verl,
    turns_of,
    verl_rows,
)

__all__ = [
    "EXPORT_FORMATS",
    "Turn",
    "advantages_of",
    "emit_to_tracer",
    "export_turns",
    "export_warnings",
    "to_otlp",
    "to_rllm",
    "to_trl",
    "to_verl",
    "turns_of",
    "verl_rows",
]

#: Formats of ``orchestrace export``.
EXPORT_FORMATS: tuple[str, ...] = ("otlp", "rllm", "verl", "trl", "reference")


def emit_to_tracer(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Replay a trace into an OpenTelemetry tracer (see :func:`.otel_sdk.emit_to_tracer`)."""
    from .otel_sdk import emit_to_tracer as _emit

    return _emit(*args, **kwargs)
