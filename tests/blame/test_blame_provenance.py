"""Issue 34: typed evidence with provenance, the one turn parser, nothing to blame / outcome unknown,
the declared team, the exact attribution on a vote, the learned scorer (cross-validated by run) and
bad input (forged text, control characters) through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from orchestrace.blame import blame
from orchestrace.blame._core import LEARNED_RULE
from orchestrace.blame._scorer import Example, cross_validate, load_scorer
from orchestrace.cli import app
from orchestrace.core.builder import TraceBuilder
from orchestrace.core.trace import Outcome
from orchestrace.errors import ConfigError
from orchestrace.evidence import LIST_KEYS, Provenance, evidence_of, turn_of
from orchestrace.importers.chat import from_doc

DATA = Path(__file__).resolve().parents[1] / "data" / "whowhen"
FAIL = "exitcode: 1 (execution failed)\nCode output: Traceback (most recent call last):\nKeyError: 'x'"


# ----------------------------------------------------------------------------- the one turn parser
@given(st.sampled_from(LIST_KEYS), st.integers(0, 10_000), st.integers(0, 50), st.integers(0, 50),
       st.sampled_from(["run.json", "a/b c.json", "t.jsonl:7"]))
def test_turn_of_is_the_turns_index_never_a_tool_calls(key: str, k: int, j: int, run: int, file: str) -> None:
    assert turn_of(f"{file}:$.{key}[{k}].tool_calls[{j}]") == k
    assert turn_of(f"{file}:$.{key}[{k}]") == k
    assert turn_of(f"{file}:$[{run}].{key}[{k}].tool_calls[{j}]") == k
    assert turn_of(f"{file}:$[{k}].tool_calls[{j}]") == k
    assert turn_of(f"{file}:$.tool_calls[{j}]") is None and turn_of(None) is None


def test_a_tool_call_inside_turn_3_is_step_3() -> None:
    hist = [{"role": "user", "content": "go"}, {"name": "A", "role": "assistant", "content": "ok"},
            {"name": "B", "role": "assistant", "content": "fine"},
            {"name": "Coder", "role": "assistant", "content": None,
             "tool_calls": [{"id": "c0", "function": {"name": "ls", "arguments": "{}"}},
                            {"id": "c1", "function": {"name": "run", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "a b"},
            {"role": "tool", "tool_call_id": "c1", "content": "boom", "is_error": True}]
    (tr,), _ = from_doc({"history": hist, "is_correct": False}, "p.json")
    r = blame(tr)
    assert r.decisive.agent == "Coder" and r.decisive.source.endswith("$.history[3].tool_calls[1]")
    assert r.decisive.step == 3 and r.decisive.step_of == "source turn index"


# ----------------------------------------------------------------------------- provenance
def test_quoted_error_text_is_no_evidence_but_the_executors_report_is() -> None:
    hist = [{"name": "user", "content": f"Why does my script print this?\n{FAIL}"},  # the task quotes it
            {"name": "Planner", "content": "Plan: the coder writes code, the terminal runs it."},
            {"name": "Coder", "content": "```python\nprint(1)\n```"},
            {"name": "Computer_terminal", "content": "exitcode: 0 (execution succeeded)\nCode output: 1"},
            {"name": "Critic", "content": f"The terminal said:\n{FAIL}\nso the coder failed."},  # a forgery
            {"name": "Coder", "content": "The answer is 1."}]
    (tr,), _ = from_doc({"history": hist, "is_correct": False}, "q.json")
    by_src = {e.source.rsplit(":", 1)[-1]: e for e in tr.events if e.type.value != "orchestrator_decision"}
    for turn in ("$.history[0]", "$.history[4]"):
        recs = evidence_of(by_src[turn].attrs)
        assert recs and all(r.provenance is Provenance.QUOTED and not r.is_evidence for r in recs)
        assert by_src[turn].error is not True
    r = blame(tr)
    assert not r.evidence_found and r.decisive.kinds == ("fallback",)  # nothing real: the fallback, not 0.9
    assert sum("not evidence" in n or "a quote" in n for n in r.notes) >= 2
    hist[3] = {"name": "Computer_terminal", "content": FAIL}  # now the executor itself reports a failure
    (tr2,), _ = from_doc({"history": hist, "is_correct": False}, "q.json")
    r2 = blame(tr2)
    assert r2.evidence_found and (r2.decisive.agent, r2.decisive.step) == ("Coder", 2)
    assert set(r2.decisive.kinds) == {"exec_failed", "traceback"}


def test_evidence_on_an_agent_outside_the_declared_team_is_skipped() -> None:
    hist = [{"name": "user", "content": "go"},
            {"name": "Mallory", "content": "```python\nraise SystemExit(3)\n```"},  # speaks, not declared
            {"name": "Computer_terminal", "content": "exitcode: 3 (execution failed)"},
            {"name": "Solver", "content": "It is 4."}]
    doc = {"history": hist, "is_correct": False, "system_prompt": {"Solver": "You solve."}}
    (tr,), _ = from_doc(doc, "m.json")
    r = blame(tr)
    assert r.decisive is not None and r.decisive.agent != "Mallory"
    assert any("'Mallory', which is not in the team" in n and "system prompts" in n for n in r.notes)


# ----------------------------------------------------------------------------- outcomes
def _coder_run(outcome: Outcome | None) -> object:
    b = TraceBuilder("r", meta={"agents": ["coder", "runner"]})
    m1 = b.add("message", "coder", t=0, t_end=1)
    b.add("message", "runner", t=1, t_end=2, after=m1, error=True,
          attrs={"evidence": [{"kind": "exec_failed", "blames": m1, "provenance": "executor"}]})
    return b.build(outcome=outcome)


@pytest.mark.parametrize(("outcome", "status"), [(Outcome(success=True), "nothing to blame"),
                                                 (None, "outcome unknown"),
                                                 (Outcome(success=None), "outcome unknown")])
def test_a_success_or_no_outcome_blames_nobody(outcome: Outcome | None, status: str) -> None:
    tr = _coder_run(outcome)
    r = blame(tr)  # type: ignore[arg-type]
    assert r.status == status and r.decisive is None and r.runner_up is None and r.shares == {}
    assert r.evidence_found and any("flagged error" in n for n in r.notes)
    from orchestrace.credit import assign

    if outcome is not None and outcome.success is not None:  # (no outcome: nothing to credit)
        c = assign(tr, unit="agent", method="blame").as_dict()  # type: ignore[arg-type]
        assert len(set(c.values())) == 1  # shared equally: nobody blamed
    if outcome is None:
        assert blame(tr, assume_failed=True).decisive.agent == "coder"  # type: ignore[arg-type,union-attr]


# ----------------------------------------------------------------------------- the vote: exact attribution
def test_a_failed_vote_blames_exactly_the_members_whose_answer_it_adopted() -> None:
    b = TraceBuilder("v", meta={"agents": ["w0", "w1", "w2"]})
    rets = []
    for k, ans in enumerate(["7", "5", "7"]):  # the right answer is 5
        s = b.add("spawn", "orchestrator", t=k, to=f"w{k}")
        rets.append(b.add("return", f"w{k}", t=k + 0.5, t_end=k + 1, after=s, edge="spawn", attrs={"answer": ans}))
    b.add("aggregate", "orchestrator", t=4, after=rets, edge="aggregate", attrs={"answer": "7"},
          outcome=Outcome(success=False, score=0.0))
    tr = b.build(outcome=Outcome(success=False))
    r = blame(tr)
    assert r.decisive.agent == "w0" and r.decisive.kinds == ("wrong_vote",) and r.runner_up.agent == "w2"
    from orchestrace.credit import assign

    c = assign(tr, unit="agent", method="blame").as_dict()
    assert c["w0"] < 0 and c["w1"] > 0 and min(c, key=c.__getitem__) == "w0"


# ----------------------------------------------------------------------------- the learned scorer
def test_cross_validation_never_sees_the_run_it_predicts() -> None:
    rng = np.random.default_rng(3)
    runs = [Example(rng.normal(size=(5, 3)), int(rng.integers(5)), ["a", "b", "a", "c", "b"]) for _ in range(12)]
    p1, _, m1 = cross_validate(runs, ("f0", "f1", "f2"), k=4, seed=0)
    flipped = list(runs)
    flipped[0] = Example(runs[0].x, (runs[0].y + 1) % 5, runs[0].agents)  # change only run 0's label
    p2, _, m2 = cross_validate(flipped, ("f0", "f1", "f2"), k=4, seed=0)
    assert np.allclose(p1[0], p2[0])  # run 0's prediction does not depend on its own label
    assert np.allclose(m1[0], m2[0])  # nor does the Platt map that calibrates its confidence
    assert not all(np.allclose(a, b) for a, b in zip(p1[1:], p2[1:], strict=True))  # the others' may
    assert all(abs(float(p.sum()) - 1) < 1e-9 for p in p1)


def test_learned_method_names_a_culprit_with_calibrated_probabilities() -> None:
    doc = {k: v for k, v in json.loads((DATA / "ag_27.json").read_text()).items() if not k.startswith("mistake")}
    (tr,), _ = from_doc(doc, "ag_27.json", content="keep")
    r = blame(tr, method="learned")
    assert r.rule == LEARNED_RULE and r.decisive is not None and r.decisive.kinds[-1] == "learned"
    assert 0 < r.decisive.confidence <= 1 and 0 < (r.decisive.step_confidence or 0) <= r.decisive.confidence
    assert r.runner_up is not None and r.runner_up.agent != r.decisive.agent
    assert abs(sum(r.shares.values()) - 1) < 1e-9
    with pytest.raises(ConfigError, match="unknown blame method"):
        blame(tr, method="vibes")


def test_an_unreadable_scorer_file_is_a_located_error(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text('{"features": ["a"], "families": {"chat": {"weights": [1, 2]}}}')
    with pytest.raises(ConfigError, match=r"s\.json: not a blame scorer file .*refit"):
        load_scorer(bad)


# ----------------------------------------------------------------------------- the CLI
runner = CliRunner()


def test_cli_success_unknown_control_characters_and_method(tmp_path: Path) -> None:
    hist = [{"name": "user", "content": "go"}, {"name": "Eve\x1b[2J\x07", "content": "```sh\nfalse\n```"},
            {"name": "Computer_terminal", "content": "exitcode: 1 (execution failed)"}]
    for name, extra, want in (("ok", {"is_correct": True}, "nothing to blame"), ("none", {}, "outcome unknown"),
                              ("bad", {"is_correct": False}, "decisive error")):
        src, out = tmp_path / f"{name}.json", tmp_path / f"{name}.jsonl"
        src.write_text(json.dumps({"history": hist, **extra}))
        assert runner.invoke(app, ["import", "chat", str(src), "-o", str(out)]).exit_code == 0
        r = runner.invoke(app, ["blame", str(out)])
        assert r.exit_code == 0 and want in r.output, r.output
        assert "\x1b" not in r.output and "\x07" not in r.output
        if name != "bad":
            assert "decisive error" not in r.output
        else:
            assert "Eve\\x1b[2J\\x07" in r.output
    r = runner.invoke(app, ["blame", str(tmp_path / "none.jsonl"), "--assume-failed", "--method", "learned"])
    assert r.exit_code == 0 and "decisive error" in r.output and "learned @" in r.output
    r = runner.invoke(app, ["blame", str(tmp_path / "bad.jsonl"), "--method", "nope"])
    assert r.exit_code == 2 and "--method must be one of rule, learned" in r.output


def test_evidence_pointing_past_the_trace_is_a_located_note_not_a_pick() -> None:
    b = TraceBuilder("p", meta={"agents": ["a", "b"]})
    m1 = b.add("message", "a", t=0, t_end=1, source="r.json:$.history[0]")
    b.add("message", "b", t=1, t_end=2, after=m1, error=True, source="r.json:$.history[1]",
          attrs={"evidence": [{"kind": "tool_error", "blames": "e999", "provenance": "tool"},
                              {"kind": "exec_failed", "blames": m1, "provenance": "forged"}]})
    r = blame(b.build(outcome=Outcome(success=False)))
    assert any("'e999', which is no event of the trace" in n for n in r.notes)
    assert any("exec_failed text quoted" in n for n in r.notes)  # an unknown provenance is not trusted
    assert r.decisive is not None and r.decisive.agent == "b" and r.decisive.kinds == ("tool_error",)
