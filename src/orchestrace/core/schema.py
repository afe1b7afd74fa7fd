"""JSON Schemas: the native format (generated from the structs) and the reference one.

The native schema is **generated** from :class:`~orchestrace.Trace` with
:func:`msgspec.json.schema` — never maintained by hand — so it always matches what
:func:`orchestrace.load` accepts structurally. The reference schema is the survey's
minimal schema (CC0; a copy ships in ``orchestrace/data``).

>>> s = native_schema()
>>> s["$schema"], s["$ref"]
('https://json-schema.org/draft/2020-12/schema', '#/$defs/Trace')
>>> sorted(s["$defs"]["Event"]["properties"]["type"]["$ref"].split("/"))[-1]
'EventType'
>>> reference_schema()["title"]
'LLM-MAS Orchestration Trace'
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import msgspec

from .trace import SCHEMA_VERSION, Trace

__all__ = ["native_schema", "reference_schema"]


def native_schema() -> dict[str, Any]:
    """The native trace format's JSON Schema (Draft 2020-12), generated from the structs."""
    schema = msgspec.json.schema(Trace)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:orchestrace:schema:trace:{SCHEMA_VERSION}",
        "title": "orchestrace native orchestration trace",
        "description": (
            f"Native orchestrace trace, schema_version {SCHEMA_VERSION}: a superset of the survey's "
            "reference trace schema (generated from orchestrace.Trace; do not edit by hand). "
            "Semantic rules (unique ids, DAG, time order, spawn order, one stop, finite "
            "non-negative costs) are checked by `orchestrace validate`, not by this schema."
        ),
        **schema,
    }


def reference_schema() -> dict[str, Any]:
    """The survey's reference trace JSON Schema (CC0, xxzcc/awesome-llm-mas-rl @ a14d8de)."""
    text = resources.files("orchestrace").joinpath("data/reference_trace_schema.json").read_text("utf-8")
    return dict(json.loads(text))
