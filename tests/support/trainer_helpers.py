"""Helpers of the trainer checks (a module of its own: every test folder has a ``conftest``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def needs(*modules: str, extra: str = "trainers") -> pytest.MarkDecorator:
    """Skip, naming the install command, when one of ``modules`` is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}: pip install 'orchestrace[{extra}]'")


def cli(*args: str) -> str:
    """Run ``python -m orchestrace ARGS`` as a user would; returns stdout, fails the test on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "orchestrace", *args], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, f"orchestrace {' '.join(args)} exited {r.returncode}: {r.stderr}"
    return r.stdout
