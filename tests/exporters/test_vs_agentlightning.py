"""benchmarks/vs_agentlightning.py on a small run: both sides read the same spans; Agent
Lightning's trainer reward is one value per run, orchestrace's credit differs per turn."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from trainer_helpers import SRC, needs

pytestmark = [needs("agentlightning", "opentelemetry.sdk", extra="agentlightning"), pytest.mark.slow]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("vs_agentlightning", SRC.parent / "benchmarks" / "vs_agentlightning.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vs_agentlightning"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_same_spans_broadcast_vs_per_turn_credit(bench, env_run) -> None:
    _, traces = env_run
    ok = [t for t in traces if bench.team_reward(t) != 0]
    assert ok, "the recorded run should hold a successful episode"
    res = bench.compare(ok[:2], repeat=1)
    for run in res["runs"]:
        a, o = run["agentlightning"], run["orchestrace"]
        assert o["same_as_recorded"]  # orchestrace rebuilt the exact trace from the spans
        assert o["agentlightning_reward_read"] == run["team_reward"]  # and read Agent Lightning's reward span
        assert a["rows"] == o["rows"] > 0  # the same turns on both sides (repair_hierarchy=False)
        assert a["rows_default_adapter"] <= a["rows"]
        assert a["credit"]["distinct"] == 1 and a["credit"]["max"] == run["team_reward"]  # one reward for all
        assert o["credit"]["broadcast"]["distinct"] == 1
        assert o["credit"]["leave-one-out"]["distinct"] > 1 and o["credit"]["shapley"]["distinct"] > 1
        assert a["agents"] == ["*"] and len(o["agents"]) > 1
        assert o["edges"] > 0 and o["tool_calls"] > 0
    assert "| orchestrace `--method shapley` |" in bench.table(res)
