"""Shared helpers for the interop tests: where the third-party fixtures are, and a validity check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fixtures_dir() -> Path:
    """``../shared/fixtures`` next to the repository (skips with the reason when absent)."""
    d = (ROOT / ".." / "shared" / "fixtures").resolve()
    if not d.is_dir():
        pytest.skip(f"third-party fixtures not found at {d} (they live in shared/, beside the repo)")
    return d


@pytest.fixture
def fx() -> Path:
    return fixtures_dir()


def assert_valid(trace) -> None:  # type: ignore[no-untyped-def]
    from orchestrace import validate

    rep = validate(trace)
    assert rep.valid, [str(p) for p in rep.errors]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
