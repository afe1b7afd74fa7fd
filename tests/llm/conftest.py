"""Fixtures for the LLM-worker tests (the local model server, ``local_llm``, is the repository
conftest's, shared with the framework capture tests). ``faulty(script)``
starts a scripted fake endpoint (see ``llm_fakes.py``) and stops it after the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from llm_fakes import FaultyServer


@pytest.fixture
def faulty() -> Iterator[Callable[..., FaultyServer]]:
    servers: list[FaultyServer] = []

    def make(script: Callable[[int], str] | str = "ok", **kw: object) -> FaultyServer:
        fn = script if callable(script) else (lambda i, a=script: a)
        srv = FaultyServer(fn, **kw).start()  # type: ignore[arg-type]
        servers.append(srv)
        return srv

    yield make
    for s in servers:
        s.stop()
