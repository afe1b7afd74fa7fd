"""Reward combinators and the TOML spec: parsing, validation messages, reproducibility."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrace import Signal, synth
from orchestrace.errors import ConfigError
from orchestrace.rewards import (
    BUILTINS,
    bind,
    load_spec,
    loads_spec,
    merge,
    mix,
    parl,
    scale,
    shared_outcome,
    tool_use,
    total,
    weighted_sum,
)
from orchestrace.vocab import CreditUnit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reward_spec.toml"


def const(unit, uid, value):
    return lambda trace, *, truth=None: [Signal(unit=unit, id=uid, value=value)]


def test_combinators_are_pure_and_compose():
    a, b = const(CreditUnit.AGENT, "w1", 1.0), const(CreditUnit.AGENT, "w1", 3.0)
    s = weighted_sum((a, 2.0), b)
    assert [x.value for x in s(None)] == [5.0]
    assert [x.value for x in s(None)] == [5.0]  # no hidden state
    assert scale(s, 0.5)(None)[0].value == 2.5
    m = mix(const(CreditUnit.AGENT, "w1", 1.0), const(CreditUnit.TEAM, "team", 0.0), alpha=0.75)
    assert m(None)[0].value == 0.75
    with pytest.raises(ConfigError, match="alpha"):
        mix(a, b, 1.5)
    with pytest.raises(ConfigError, match="finite"):
        scale(a, float("nan"))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(-10, 10)), max_size=12), st.floats(-3, 3))
def test_merge_and_weighted_sum_are_linear(items, w):
    sigs = [Signal(unit=CreditUnit.AGENT, id=i, value=v) for i, v in items]
    merged = merge(sigs)
    assert len({s.id for s in merged}) == len(merged)
    assert total(merged) == pytest.approx(total(sigs), abs=1e-9)
    fn = lambda trace, *, truth=None: sigs  # noqa: E731
    assert total(weighted_sum((fn, w))(None)) == pytest.approx(w * total(sigs), abs=1e-9)


def test_spec_evaluates_like_the_manual_sum():
    tr = synth(events=200, agents=4, seed=4)
    spec = loads_spec(
        '[[reward]]\nfn = "shared_outcome"\nweight = 2.0\n'
        '[[reward]]\nfn = "parl"\nweight = 0.5\nparams = { lambda1 = 0.2, lambda2 = 0.0 }\n'
        '[[reward]]\nfn = "tool_use"\nparams = { call_cost = 0.1 }\n'
    )
    manual = weighted_sum((shared_outcome, 2.0), (bind(parl, lambda1=0.2, lambda2=0.0), 0.5),
                          bind(tool_use, call_cost=0.1))(tr)
    assert spec.evaluate(tr) == manual
    assert spec.evaluate(tr) == spec.evaluate(tr)


def test_example_spec_parses_and_runs():
    spec = load_spec(EXAMPLE)
    assert spec.name and len(spec.terms) >= 4 and spec.credit is not None
    assert all(t.fn in BUILTINS for t in spec.terms)
    assert spec.evaluate(synth(events=200, agents=4, seed=4))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[reward]]\nfn = "shared_outcom"\n', r"reward\[0\]\.fn: unknown reward function 'shared_outcom'; did you mean 'shared_outcome'"),
        ('[[reward]]\nfn = "parl"\nweight = "high"\n', r"reward\[0\]\.weight: must be a finite number"),
        ('[[reward]]\nfn = "parl"\nparams = { lamda1 = 0.1 }\n', r"reward\[0\]\.params\.lamda1: parl has no parameter 'lamda1'; did you mean 'lambda1'"),
        ('[[reward]]\nfn = "parl"\nparams = { max_agents = 2.5 }\n', r"max_agents: must be an integer"),
        ('[[reward]]\nfn = "hybrid"\nparams = { alpha = "x" }\n', r"alpha: must be a finite number \(default 0.5\)"),
        ('[[reward]]\nfn = "parallel_speedup"\nparams = { normalize = 1 }\n', r"normalize: must be true or false"),
        ('name = "x"\nrewards = 1\n', r"rewards: unknown key; did you mean 'reward'"),
        ('name = "x"\n', r"no \[\[reward\]\] table"),
        ('[[reward]]\nfn = "parl"\n[credit]\nmethod = "shaply"\n', r"credit\.method: unknown credit method 'shaply'; did you mean 'shapley'"),
        ('[[reward]]\nfn = "parl"\n[credit]\nunit = "agents"\n', r"credit\.unit: unknown credit unit"),
        ('[[reward]]\nfn = "parl"\n[credit]\nmethod = "causal"\nparams = { gamma = 0.9 }\n', r"credit\.params\.gamma: causal credit has no option"),
        ('[[reward]]\nfn = "parl"\n[credit]\nsamples = 1\n', r"credit\.samples: must be an integer ≥ 2"),
        ('[[reward\nfn = 1', r"not valid TOML"),
    ],
)
def test_spec_errors_are_located_and_actionable(text, message):
    with pytest.raises(ConfigError, match=message) as info:
        loads_spec(text, source="spec.toml")
    assert str(info.value).startswith("spec.toml")


def test_global_alias_and_missing_file(tmp_path):
    spec = loads_spec('[[reward]]\nfn = "hybrid"\nparams = { global = "shared_outcome", local = "agent_success" }\n')
    assert dict(spec.terms[0].params) == {"global_": "shared_outcome", "local": "agent_success"}
    with pytest.raises(ConfigError, match="cannot read spec"):
        load_spec(tmp_path / "nope.toml")
