"""Fixture for the interop tests: the third-party traces in ``tests/data/fixtures``."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


@pytest.fixture
def fx() -> Path:
    """``tests/data/fixtures`` (sources and licences in ``tests/data/README.md``)."""
    assert FIXTURES.is_dir(), f"test data missing: {FIXTURES}"
    return FIXTURES
