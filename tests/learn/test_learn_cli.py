"""`orchestrace train / eval / demo` through the real CLI with tiny budgets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrace.cli import app

runner = CliRunner()
TINY = ["--env", "small", "--episodes-per-step", "16", "--group-size", "4", "--warm-start-episodes", "32",
        "--warm-start-steps", "10", "--hidden", "32", "--quiet"]


def test_train_resume_eval(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "tiny"
    r = runner.invoke(app, ["train", "--algo", "grpo", "--steps", "2", "--seed", "3", "--out", str(run), *TINY])
    assert r.exit_code == 0, r.output
    assert "trained grpo" in r.output and (run / "policy.pt").is_file()
    r = runner.invoke(app, ["train", "--steps", "3", "--out", str(run), "--resume", "--quiet"])
    assert r.exit_code == 0, r.output
    assert json.loads((run / "config.json").read_text())["steps"] == 3
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 4
    out = tmp_path / "eval"
    r = runner.invoke(app, ["eval", str(run), "--episodes", "24", "--validation", "12", "--seeds", "held-out",
                            "--traces", "2", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "results.json").read_text())
    assert rep["env"] == "orchestrace/Orchestrate-small-v0"  # the run's own world
    assert {"learned", "oracle-all", "adaptive", "always-continue", "base+budget@1", "base+threshold@0.7",
            "learned+budget@2", "learned+clairvoyant", "base+clairvoyant", "learned+adaptive-stop"} <= set(rep["policies"])
    assert rep["policies"]["learned"]["success"]["n"] == 24
    # validation seeds are disjoint from the test seeds, and what they chose is recorded
    lo, hi = rep["seeds"]["validation"]
    assert hi < rep["seeds"]["test"][0] or lo > rep["seeds"]["test"][1]
    assert set(rep["same_heads"]["learned"]["chosen"]) == {"best_rule", "budget", "threshold", "budget_by_success",
                                                           "published", "fitted"}
    assert {"beats_best_rule_same_heads", "near_clairvoyant_same_heads", "beats_adaptive", "fewer_tokens_at_equal_success",
            "adapts_to_difficulty"} <= set(rep["claims"])
    assert all(c["rule"] for c in rep["claims"].values())
    assert "waste/tokens" in rep["policies"]["learned"]["trace_sample"]
    assert "| PASS |" in (out / "summary.md").read_text() or "| MISS |" in (out / "summary.md").read_text()
    from orchestrace.core.io import iter_traces

    traces = list(iter_traces(out / "traces" / "learned.jsonl"))
    assert len(traces) == 2
    decisions = [e.decision for e in traces[0].events if e.decision is not None]
    assert decisions and all(d.logprob is not None and d.logprob <= 0 for d in decisions)
    assert traces[0].stop_event is not None


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["train", "--algo", "sac", "--out", "X"], 2, "algo='sac' is invalid"),
        (["train", "--algo", "grpo", "--episodes-per-step", "30", "--group-size", "8", "--out", "X"], 2, "group_size=6"),
        (["train", "--out", "NOPE", "--resume"], 2, "no config.json"),
        (["eval", "NOPE", "--episodes", "4"], 1, "no such checkpoint"),
        (["eval", "NOPE", "--seeds", "train"], 2, "--seeds held-out"),
        (["eval", "NOPE", "--set", "max_round=2"], 2, "did you mean 'max_rounds'"),
        (["eval", "NOPE", "--set", "token_cost=-1"], 2, "token_cost=-1.0 is invalid"),
        (["eval", "NOPE", "--set", "max_rounds=two"], 2, "expected a int"),
        (["eval", "NOPE", "--suite", "shift"], 2, "at least 2 runs"),
        (["eval", "NOPE", "NOPE", "--suite", "nope"], 2, "unknown suite"),
        (["demo", "--set", "obs_mode=pixels", "--out", "X"], 2, "obs_mode='pixels' is invalid"),
        (["train", "--set", "p_hard=2", "--out", "X"], 2, "p_hard=2.0 is invalid"),
    ],
)
def test_bad_input_fails_with_a_message(args: list[str], code: int, needle: str, tmp_path: Path) -> None:
    args = [str(tmp_path / a) if a in ("X", "NOPE") else a for a in args]
    r = runner.invoke(app, args)
    assert r.exit_code == code, r.output
    assert needle in r.output
    assert "Traceback" not in r.output


def test_corrupted_checkpoint_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "policy.pt"
    bad.write_bytes(b"\x00garbage")
    r = runner.invoke(app, ["eval", str(bad), "--env", "small", "--episodes", "4", "--quiet"])
    assert r.exit_code == 1 and "corrupted" in r.output


def test_demo_runs_end_to_end_with_a_tiny_budget(tmp_path: Path, monkeypatch) -> None:

    import orchestrace.offline
    import orchestrace.policies.rules  # noqa: F401  (the simulator's anchors use it: load it before the fake below)
    from orchestrace.learn import demo

    def demo_section(out_dir):  # the offline package's hook: a section from the real corpus
        (Path(out_dir) / "offline.txt").write_text("x")
        return "## Learned from real LLM traces\n\nthe gate vs the best rule: +0.1 [0.0, 0.2]\n"

    monkeypatch.setattr(orchestrace.offline, "demo_section", demo_section)

    def team_demo_section(out_dir):  # the team corpus's section (the real one is tests/offline/test_demo_section.py's)
        return "**A real team, orchestrated from its logs** (x)\n\n## A real team\n\nthe policy vs the per-family rule: tie\n"

    monkeypatch.setattr(orchestrace.offline, "team_demo_section", team_demo_section)
    import orchestrace.collection.team2_demo as team2  # the two-family section (the real one: tests/evaluation)

    monkeypatch.setattr(team2, "team2_demo_section",
                        lambda out_dir: "**A two-family team** (x)\n\n## A two-family team\n\nthe gap: not closed\n")

    def tiny_demo(out, **kw):
        kw.update(parallel=False, env="small-v1", episodes=16, validation=8, fit_episodes=24, sample_traces=2,
                  overrides={"episodes_per_step": 16, "group_size": 4, "warm_start_episodes": 32, "warm_start_steps": 10,
                             "hidden": 16})
        return real(out, **kw)

    real = demo.run_demo
    monkeypatch.setattr(demo, "run_demo", tiny_demo)
    r = runner.invoke(app, ["demo", "--out", str(tmp_path / "d"), "--steps", "2", "--quiet"])
    assert r.exit_code == 0, r.output
    for f in ("summary.md", "results.json", "episodes.npz", "traces/learned.jsonl", "run/checkpoint.pt"):
        assert (tmp_path / "d" / f).exists(), f
    assert "summary" in r.output and ("picture" in r.output)
    assert "the same recipe: orchestrace train" in r.output and "--stop-update fitted" in r.output
    assert "real traces: ## Learned from real LLM traces" in r.output and (tmp_path / "d" / "offline.txt").exists()
    summary = (tmp_path / "d" / "summary.md").read_text()
    assert "+0.1 [0.0, 0.2]" in summary and "the policy vs the per-family rule: tie" in summary
    assert summary.index("## A real team") < summary.index("## A two-family team") < summary.index("## Real vote loops") \
        < summary.index("## Simulator")


def test_the_real_sections_run_in_a_second_process_and_come_back_in_order(tmp_path: Path, monkeypatch) -> None:
    from orchestrace.evaluation.demo import _RealRuns

    (tmp_path / "demo_hooks_x.py").write_text(
        "import os\nfrom pathlib import Path\n"
        "def team(out):\n    (Path(out) / 'team.txt').write_text(str(os.getpid()))\n    return '**T** head\\n\\n## T body'\n"
        "def vote(out):\n    return '## V body'\n"
        "def bug(out):\n    raise ValueError('a bug')\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # a spawned process gets the parent's sys.path
    lines: list[str] = []
    runs = _RealRuns(tmp_path, lines.append, parallel=True,
                     sections=(("real_team", "demo_hooks_x:team", "T"), ("real_vote", "demo_hooks_x:vote", "V")))
    (team_md, vote_md), timing = runs.result()
    assert (team_md, vote_md) == ("**T** head\n\n## T body", "## V body")
    assert int((tmp_path / "team.txt").read_text()) != os.getpid()  # computed in another process
    assert lines == ["      real traces: **T** head", "      real traces: ## V body"]
    assert {"real_team_s", "real_team_cpu_s", "real_vote_s", "real_vote_cpu_s", "real_wait_s"} <= set(timing)
    lines.clear()  # a section that fails in the second process is reported, not raised: the simulator's work stays
    mds, _ = _RealRuns(tmp_path, lines.append, parallel=True, sections=(("real_team", "demo_hooks_x:bug", "T"),)).result()
    assert mds == ["## T\n\nfailed: ValueError: a bug.\n"] and lines == ["      real traces: failed: ValueError: a bug"]


def test_demo_says_when_the_real_trace_result_is_not_available(tmp_path: Path, monkeypatch) -> None:
    import orchestrace.offline
    from orchestrace.evaluation.demo import _offline_section

    monkeypatch.delattr(orchestrace.offline, "demo_section")
    lines: list[str] = []
    md = _offline_section(tmp_path, lines.append)
    assert "not available" in lines[0] and "not available" in md
