"""The demo's learned-from-traces section on the committed real corpus (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrace.errors import ConfigError
from orchestrace.offline import demo_section


def test_demo_section_fits_and_evaluates_the_committed_corpus(tmp_path: Path) -> None:
    text = demo_section(tmp_path, fresh=None)  # no fresh set: the headline is the test split's
    res = json.loads((tmp_path / "real" / "results.json").read_text())
    g = res["gates"]["learned"]
    d = g["claims"]["beats_best_rule"]["return_diff"]
    head = text.splitlines()[0]
    assert head.startswith("**Learned from real traces**") and "test-split tasks" in head and "fresh" not in head
    assert f"{d['mean']:+.4f}" in head and res["best_rule"] in head  # the headline is the result's own numbers
    assert (tmp_path / "real" / "run" / "gate.json").exists() and (tmp_path / "real" / "summary.md").exists()
    assert sum(res["corpus"]["tasks"].values()) >= 1000  # the corpus the README speaks of


def test_demo_section_without_a_corpus_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing"):
        demo_section(tmp_path, corpus=tmp_path / "nope")


def test_team_demo_section_fits_and_evaluates_the_committed_team_corpus_on_its_fresh_set(tmp_path: Path) -> None:
    from orchestrace.offline import team_demo_section

    text = team_demo_section(tmp_path)
    res = json.loads((tmp_path / "real-team" / "results.json").read_text())
    assert list(res["sets"]) == ["test", "smollm2-team-fresh-v1"]  # the fresh set is valued after the test split
    fresh = res["sets"]["smollm2-team-fresh-v1"]
    c = fresh["policies"]["learned"]["claims"]
    best, cell = c["beats_best_rule"]["return_diff"], c["beats_best_rule_per_cell"]["return_diff"]
    head = text.splitlines()[0]
    assert head.startswith("**A real team, orchestrated from its logs**") and f"{fresh['tasks']} fresh tasks" in head
    # the headline states the result's own numbers, each verdict from its interval
    for d in (best, cell):
        assert f"{d['mean']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]" in head
    v = ["beats" if d["lo"] > 0 else "ties" if d["hi"] >= 0 else "trails" for d in (best, cell)]
    assert f"{v[0]} the best (rule × fixed team)" in head and f"it {v[1]} the rule chosen per task family" in head
    assert (tmp_path / "real-team" / "run" / "team_policy.json").exists() and fresh["tasks"] == 400


def test_the_vote_section_leads_with_the_fresh_set(tmp_path: Path) -> None:
    text = demo_section(tmp_path)
    res = json.loads((tmp_path / "real" / "results.json").read_text())
    [(name, f)] = res["fresh"].items()
    d = f["gates"]["learned"]["claims"]["beats_best_rule"]["return_diff"]
    head = text.splitlines()[0]
    assert f"{name}: {f['tasks']} fresh tasks" in head and f"{d['mean']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}]" in head
