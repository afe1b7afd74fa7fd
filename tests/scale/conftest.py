"""One local Ray cluster for the scale tests (2 CPUs, loopback, no dashboard), shut down at the end.

The tests skip, with the reason, only when Ray is not importable; CI installs it (the ``all``
extra includes ``ray``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'orchestrace[ray]')")
    # Ray's workers import this checkout's orchestrace: put its src first on their path
    path = os.environ.get("PYTHONPATH", "")
    if SRC not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, path) if p)
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    yield ray
    if started:
        ray.shutdown()
