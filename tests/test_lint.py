"""Static checks as tests: ``ruff check src tests benchmarks`` and ``mypy`` (pyproject config) pass.

Both tools are in the ``test`` extra; the tests skip (saying so) only when a tool is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (it is in the `test` extra: pip install -e '.[test]')")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit code {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"


def test_ruff_check_is_clean() -> None:
    proc = _run("ruff", "check", "--no-cache", "src", "tests", "benchmarks", timeout=120)
    assert proc.returncode == 0, _explain(proc)


@pytest.mark.slow  # ~20 s cold; well under 1 s with mypy's (git-ignored) .mypy_cache warm
def test_mypy_is_clean() -> None:
    # files, python_version and the other options come from [tool.mypy] in pyproject.toml
    proc = _run("mypy", timeout=300)
    assert proc.returncode == 0, _explain(proc)
    assert "Success" in proc.stdout, _explain(proc)
