"""The scripted fake endpoint of the LLM tests: the package's :mod:`orchestrace.llm.fake_endpoint`, the one fake
the tests and the benchmarks share (actions ``ok``, ``429``, ``500``, ``401``, ``malformed``, ``empty``,
``drop``, ``hang``; raw replies; every request recorded)."""

from __future__ import annotations

from orchestrace.llm.fake_endpoint import (
    FAKE_USAGE,
    FakeEndpoint,
    completion_bytes,
    free_port,
    scripted,
)

#: The tests' name for the fake.
FaultyServer = FakeEndpoint

__all__ = ["FAKE_USAGE", "FaultyServer", "completion_bytes", "free_port", "scripted"]
