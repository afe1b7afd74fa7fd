"""The demo's learned-from-traces section on the committed real corpus (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace.errors import ConfigError
from orchestrace.offline import demo_section


def test_demo_section_fits_and_evaluates_the_committed_corpus(tmp_path: Path) -> None:
    text = demo_section(tmp_path)
    res = json.loads((tmp_path / "real" / "results.json").read_text())
    g = res["gates"]["learned"]
    d = g["claims"]["beats_best_rule"]["return_diff"]
    head = text.splitlines()[0]
    assert head.startswith("**Learned from real traces**")
    assert f"{d['mean']:+.4f}" in head and res["best_rule"] in head  # the headline is the result's own numbers
    assert (tmp_path / "real" / "run" / "gate.json").exists() and (tmp_path / "real" / "summary.md").exists()
    assert sum(res["corpus"]["tasks"].values()) >= 1000  # the corpus the README speaks of


def test_demo_section_without_a_corpus_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing"):
        demo_section(tmp_path, corpus=tmp_path / "nope")
