"""Fixtures for the paper-pool tests: the survey's pool in tests/data/reference and a tiny inline pool."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

from orchestrace.papers import PAPER_COLUMNS

_MINI = [
    ["magrpo", "LLM Collaboration With Multi-Agent Reinforcement Learning", "Liu, Shuo",
     "Northeastern University", "2025", "2508.04652", "arXiv", "https://arxiv.org/abs/2508.04652",
     "rl_method", "yes", "shared", "agent", "centralized", "general", "core",
     "Cooperative MARL; proposes MAGRPO", "yes", "v7"],
    ["puppeteer", "Multi-Agent Collaboration via Evolving Orchestration", "Dang, Yufan",
     "Tsinghua", "2025", "2505.19591", "NeurIPS 2025", "https://arxiv.org/abs/2505.19591",
     "rl_method", "yes", "orchestration", "orchestrator", "centralized", "general", "core",
     "RL-learned conductor", "yes", ""],
    ["c3", "Contextual Counterfactual Credit Assignment", "Chen, Yanjun", "X", "2026",
     "", "arXiv", "https://example.org/c3 ; https://example.org/c3b", "rl_method", "partial",
     "verifier", "message", "debate", "math", "supporting", "Message-level credit", "partial",
     "notes, with a comma"],
    ["swebench", "SWE-bench", "Jimenez, Carlos", "Princeton", "2023", "2310.06770", "ICLR 2024",
     "https://arxiv.org/abs/2310.06770", "benchmark", "no", "NA", "NA", "NA", "coding", "supporting",
     "Real GitHub issues", "yes", ""],
]


REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def find_reference() -> Path:
    """The survey's pool: ``tests/data/reference``, or ``$ORCHESTRACE_REFERENCE`` when set."""
    env = os.environ.get("ORCHESTRACE_REFERENCE")
    return Path(env) if env else REFERENCE


@pytest.fixture(scope="session")
def reference() -> Path:
    ref = find_reference()
    for name in ("papers.csv", "excluded.csv"):
        assert (ref / name).is_file(), f"{ref / name} is missing (see tests/data/README.md)"
    return ref


@pytest.fixture(scope="session")
def mini_rows() -> list[list[str]]:
    """Header + 4 valid rows (a copy each time you mutate it: use ``[r[:] for r in ...]``)."""
    return [list(PAPER_COLUMNS), *[r[:] for r in _MINI]]


def to_csv(rows: list[list[str]], *, quote_all: bool = False) -> str:
    """Write rows as CSV text with ``\\n`` line ends (``quote_all`` also protects a bare
    ``\\r`` in a cell, which minimal quoting leaves as a line break)."""
    buf = io.StringIO(newline="")
    quoting = csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL
    csv.writer(buf, lineterminator="\n", quoting=quoting).writerows(rows)
    return buf.getvalue()


@pytest.fixture(scope="session")
def csv_text():
    return to_csv
