"""The Team helper behind the framework recorders, and the package's import contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace import Recorder, load, validate
from orchestrace.frameworks import counts
from orchestrace.frameworks._team import Team
from orchestrace.vocab import EventType

NAMES = ["a", "b", "c", "d"]
_op = st.one_of(
    st.tuples(st.just("turn"), st.sampled_from(NAMES)),
    st.tuples(st.just("tool"), st.sampled_from(NAMES)),
    st.tuples(st.just("finish"), st.sampled_from(NAMES)),
    st.tuples(st.just("say"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("delegate"), st.sampled_from(NAMES), st.sampled_from(NAMES)).filter(lambda o: o[1] != o[2]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_op, min_size=1, max_size=25))
def test_any_callback_order_gives_a_valid_trace_with_the_same_counts(tmp_path_factory, ops) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("team") / "t.jsonl"
    first_seen: dict[str, str] = {}  # name -> how it appeared first ("root" or "spawn")
    with Recorder(path) as rec:
        team = Team(rec)
        for op in ops:
            if op[0] == "turn":
                first_seen.setdefault(op[1], "root")
                team.turn(op[1], tokens_in=3, tokens_out=2)
            elif op[0] == "tool":
                first_seen.setdefault(op[1], "root")
                team.tool_result(op[1], "f", team.tool_call(op[1], "f", "{}"), "ok")
            elif op[0] == "finish":
                team.finish(op[1])
            elif op[0] == "say":
                first_seen.setdefault(op[2], "root")
                first_seen.setdefault(op[1], "root")
                team.say(op[1], op[2])
            else:
                first_seen.setdefault(op[1], "root")
                first_seen.setdefault(op[2], "spawn")
                team.delegate(op[1], op[2])
        team.stop()
        team.stop()  # idempotent: one stop per trace
    tr = load(path)
    report = validate(tr)
    assert report.valid, report.errors
    got = counts(tr)
    # an agent that only "finishes" was never seen: nothing is written, and with no agent at all no stop either
    assert got == {"agents": len(first_seen),
                   "delegations": sum(o[0] == "delegate" for o in ops),
                   "tool_calls": sum(o[0] == "tool" for o in ops),
                   "llm_turns": sum(o[0] == "turn" for o in ops),
                   "tokens": 5 * sum(o[0] == "turn" for o in ops),
                   "stops": 1 if first_seen else 0}
    spawned = [e.to for e in tr.events if e.type is EventType.SPAWN]
    assert spawned == [n for n, how in first_seen.items() if how == "spawn"]


def _py(code: str) -> subprocess.CompletedProcess[str]:
    src = Path(__file__).resolve().parents[2] / "src"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(src), "PATH": ""})


def test_importing_the_package_imports_no_framework() -> None:
    r = _py("import sys, orchestrace.frameworks as f; f.counts; "
            "print(sorted(m for m in ('agents', 'langgraph', 'langchain_core', 'autogen', 'openai') if m in sys.modules))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_missing_framework_names_its_extra() -> None:
    for mod, name, extra in [("autogen", "AG2Recorder", "ag2"), ("agents", "OpenAIAgentsRecorder", "openai-agents"),
                             ("langchain_core", "LangGraphRecorder", "langgraph")]:
        r = _py(f"import sys; sys.modules[{mod!r}] = None\n"
                "from orchestrace.errors import MissingExtraError\n"
                f"try:\n    from orchestrace.frameworks import {name}\n"
                "except MissingExtraError as e:\n    print(e)\n")
        assert r.returncode == 0, r.stderr
        assert f"pip install 'orchestrace[{extra}]'" in r.stdout, r.stdout


def test_public_names_are_exactly_the_curated_set() -> None:
    import orchestrace.frameworks as f

    assert set(f.__all__) == {"AG2Recorder", "LangGraphRecorder", "OpenAIAgentsRecorder", "ToolCallTransport", "counts"}


def test_a_callback_that_fails_is_counted_not_raised(tmp_path: Path) -> None:
    import pytest

    from orchestrace.errors import OrchestraceWarning

    rec = Recorder(tmp_path / "t.jsonl")
    team = Team(rec)
    team.turn("lead", tokens_in=1, tokens_out=1)
    with pytest.warns(OrchestraceWarning, match="capture/dropped_callbacks"), team.guard("span s1 end"):
        raise KeyError("to_agent")
    with team.guard("span s2 end"):
        raise TypeError("usage is not a dict")
    team.close()
    tr = load(tmp_path / "t.jsonl")
    assert validate(tr).valid
    assert tr.metrics == {"capture/dropped_callbacks": 2.0}
    assert team.dropped == ["span s1 end: KeyError: 'to_agent'", "span s2 end: TypeError: usage is not a dict"]
    assert counts(tr)["stops"] == 1


def test_content_policy_is_the_importers_one(tmp_path: Path) -> None:
    import hashlib

    import pytest

    from orchestrace.errors import ConfigError

    digest = "sha256:" + hashlib.sha256(b"2 + 3 = 5").hexdigest()
    seen = {}
    for mode in ("keep", "hash", "drop"):
        with Recorder(tmp_path / f"{mode}.jsonl") as rec:
            team = Team(rec, content=mode)  # type: ignore[arg-type]
            team.turn("lead", content="2 + 3 = 5")
            team.stop(content="max rounds")
        ev = load(tmp_path / f"{mode}.jsonl").events
        seen[mode] = (ev[0].content, ev[0].content_ref, ev[1].content)
    assert seen == {"keep": ("2 + 3 = 5", digest, "max rounds"), "hash": (None, digest, "max rounds"),
                    "drop": (None, None, "max rounds")}
    with pytest.raises(ConfigError, match="keep, hash, drop"), Recorder(tmp_path / "x.jsonl") as rec:
        Team(rec, content="full")  # type: ignore[arg-type]
