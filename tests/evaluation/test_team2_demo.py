"""The demo's two-family team section: issue 42's pre-registered analysis recomputed live from the package's data,
agreeing with the committed ``benchmarks/team2_fresh_results.json`` (seed 0), and saying that the joint policy
does not close the oracle gap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrace.collection.team2_demo import team2_demo_section
from orchestrace.errors import ConfigError
from orchestrace.evaluation.demo import REAL_SECTIONS, _team2_line
from orchestrace.evaluation.team2_demo import POLICY_NAME, TEAM2_CORPUS, team2_section
from orchestrace.llm.tasks import make_vote_task, vote_task_prompt

COMMITTED = Path(__file__).resolve().parents[2] / "benchmarks" / "team2_fresh_results.json"


@pytest.fixture(scope="module")
def section(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict]:
    out = tmp_path_factory.mktemp("demo")
    md = team2_demo_section(out)
    return out, md, json.loads((out / "real-team2" / "results.json").read_text(encoding="utf-8"))


def _same(a: object, b: object) -> bool:
    """Equal structures, floats to 1e-12 relative: a fitted threshold can differ in its last bit between BLAS builds."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == pytest.approx(b, rel=1e-12, abs=1e-15)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_section_recomputes_the_committed_fresh_results(section: tuple[Path, str, dict]) -> None:
    _, _, res = section
    ref = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert res["where"] == ref["where"] == "team2-fresh-v1"
    assert res["tasks"] == ref["tasks"] == 1183 and res["task_ids"] == ref["task_ids"]
    assert res["exclusions"] == ref["exclusions"]  # the 13 duplicate prompts and the incomplete tasks, counted
    assert _same(res["settings"], ref["settings"])  # baselines 1-6 chose the same settings (thresholds to 1e-12)
    assert set(res["summary"]) == set(ref["summary"]) - {"joint_seed1", "joint_seed2"}
    for k, s in res["summary"].items():
        for m, v in s.items():
            assert v == pytest.approx(ref["summary"][k][m], rel=1e-12, abs=1e-15), (k, m)
    mine, theirs = res["policies"][POLICY_NAME], ref["policies"][POLICY_NAME]
    assert mine["gap_closed"]["fraction"] == pytest.approx(theirs["gap_closed"]["fraction"], rel=1e-12)
    assert mine["gap_closed"]["ci95"] == pytest.approx(theirs["gap_closed"]["ci95"], rel=1e-12)
    for b, d in mine["vs"].items():
        assert [d["mean"], d["lo"], d["hi"]] == pytest.approx([theirs["vs"][b][x] for x in ("mean", "lo", "hi")],
                                                              rel=1e-12, abs=1e-15), b
    assert mine["decision"] == theirs["decision"] and not mine["decision"]["succeeds"]


def test_the_headline_states_the_numbers_and_that_the_gap_is_not_closed(section: tuple[Path, str, dict]) -> None:
    out, md, res = section
    head, s, g = md.splitlines()[0], res["summary"], res["policies"][POLICY_NAME]["gap_closed"]
    for k in ("oracle", "1_rule_per_family", "3_knn_router", POLICY_NAME):  # 3: the best of baselines 2-6 here
        assert f"{s[k]['return']:.3f}" in head, k
    assert max(("2_rule_fixed_team", "3_knn_router", "4_cascade", "5_learnstop", "6_fitted_rules"),
               key=lambda b: s[b]["return"]) == "3_knn_router" and "nearest-neighbour router" in head
    assert f"{g['fraction']:+.2f} [{g['ci95'][0]:+.2f}, {g['ci95'][1]:+.2f}]" in head
    assert "it does not close the gap" in head and "Not met: the learned joint policy does not close" in md
    assert "1,183 fresh tasks" in head and "| **joint policy** (fitting seed 0) | 0.660 |" in md
    assert (out / "real-team2" / "summary.md").read_text(encoding="utf-8") in md
    line, = _team2_line(out)  # the demo's headline line is the section's sentence
    assert line.startswith("Real two-family team (") and line.endswith(head.split("** ", 1)[1])


def test_the_demo_runs_the_section_after_the_other_team() -> None:
    keys = [k for k, _, _ in REAL_SECTIONS]
    assert keys[:2] == ["real_team", "real_vote"] and "real_team2" in keys  # run_demo unpacks the first two


def test_a_missing_piece_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="corpus is missing from this installation"):
        team2_section(tmp_path, prompt_of=None, corpus=tmp_path / "nope")
    with pytest.raises(ConfigError, match="joint policy is missing"):
        team2_section(tmp_path, prompt_of=None, corpus=TEAM2_CORPUS, policy=tmp_path / "nope")


@given(st.text(max_size=40))
def test_a_task_id_is_a_vote_task_or_a_located_error(tid: str) -> None:
    try:
        prompt = vote_task_prompt(tid)
    except ConfigError as exc:
        assert "vote" in str(exc) or "size" in str(exc)
    else:
        suite, size, seed = tid.rsplit("-", 2)
        assert prompt == make_vote_task(suite, seed=int(seed), size=int(size[1:])).whole_prompt()[-1]["content"]


@given(st.sampled_from(["add", "mentor"]), st.integers(1, 3), st.integers(0, 10**6))
def test_the_prompt_is_the_generated_tasks(suite: str, size: int, seed: int) -> None:
    t = make_vote_task(suite, seed=seed, size=size)
    assert vote_task_prompt(t.id) == t.whole_prompt()[-1]["content"]
