"""Helpers shared by the interop tests (a module of its own: ``conftest`` is not importable)."""

from __future__ import annotations

import json
from pathlib import Path


def assert_valid(trace) -> None:  # type: ignore[no-untyped-def]
    from orchestrace import validate

    rep = validate(trace)
    assert rep.valid, [str(p) for p in rep.errors]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
