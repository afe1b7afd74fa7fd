"""Rewards reported the Agent Lightning way (``agentlightning.emit_reward`` spans) import as
reward signals, so a run instrumented for Agent Lightning gets per-turn credit in orchestrace.

The attribute names are Agent Lightning's convention (``agentlightning/semconv.py``:
span ``agentlightning.annotation``, attributes ``agentlightning.reward.<i>.name/.value``);
the files are written literally, so these tests need no Agent Lightning install.
"""

from __future__ import annotations

import json
from pathlib import Path

from interop_helpers import assert_valid

from orchestrace.credit import assign
from orchestrace.importers import import_traces

T0 = 1_700_000_000_000_000_000


def _span(sid: str, name: str, start: float, end: float, parent: str | None = None, **attrs) -> dict:
    s = {"traceId": "ab" * 16, "spanId": sid, "name": name, "startTimeUnixNano": str(T0 + int(start * 1e9)),
         "endTimeUnixNano": str(T0 + int(end * 1e9)),
         "attributes": [{"key": k.replace("__", "."), "value": {"doubleValue": v} if isinstance(v, float)
                         else {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}}
                        for k, v in attrs.items()]}
    if parent:
        s["parentSpanId"] = parent
    return s


def _run(tmp_path: Path, *reward_spans: dict) -> Path:
    """A planner that delegates to a coder (chat, tool) and answers; rewards as given."""
    spans = [
        _span("a" * 16, "invoke_agent planner", 0, 10, None, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="planner"),
        _span("b" * 16, "chat", 0, 1, "a" * 16, gen_ai__operation__name="chat", gen_ai__usage__output_tokens=20),
        _span("c" * 16, "invoke_agent coder", 1, 6, "a" * 16, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="coder"),
        _span("d" * 16, "chat", 1, 2, "c" * 16, gen_ai__operation__name="chat", gen_ai__usage__output_tokens=50),
        _span("e" * 16, "execute_tool run", 2, 5, "c" * 16, gen_ai__operation__name="execute_tool", gen_ai__tool__name="run"),
        _span("f" * 16, "chat", 6, 7, "a" * 16, gen_ai__operation__name="chat", gen_ai__usage__output_tokens=10),
        *reward_spans,
    ]
    p = tmp_path / "run.json"
    p.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}))
    return p


def _reward(sid: str, t: float, value: float | str) -> dict:
    return _span(sid, "agentlightning.annotation", t, t, "a" * 16, agentlightning__reward__0__name="primary",
                 agentlightning__reward__0__value=value)


def test_agentlightning_reward_becomes_the_team_signal(tmp_path: Path) -> None:
    res = import_traces("otlp", _run(tmp_path, _reward("1" * 16, 8, 0.25), _reward("2" * 16, 9.5, 0.75)))
    (tr,) = res.traces
    assert_valid(tr)
    assert tr.agents == ["planner", "coder"]
    assert tr.rewards["agentlightning"] == 0.75  # the last reward: what Agent Lightning's trainer uses
    assert [(s.unit.value, s.value) for s in tr.signals] == [("team", 0.75)]
    assert res.report.counts["span/agentlightning.reward"]["mapped"] == 2
    credit = assign(tr, unit="turn", method="discounted").as_dict()
    assert len(credit) >= 3 and len(set(credit.values())) > 1  # credit differs per turn
    assert max(credit.values()) <= 0.75


def test_unreadable_agentlightning_reward_is_reported_not_fatal(tmp_path: Path) -> None:
    res = import_traces("otlp", _run(tmp_path, _reward("1" * 16, 8, "great")))
    (tr,) = res.traces
    assert not tr.signals and "agentlightning" not in tr.rewards
    (p,) = [p for p in res.report.problems if p.code == "import.bad-reward"]
    assert "1" * 16 in p.path and "agentlightning.reward.0.value" in p.message
