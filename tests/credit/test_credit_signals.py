"""``--truth`` / ``--baseline`` parsing and the per-trace signals and baselines (orchestrace.credit.signals)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrace import synth
from orchestrace.credit.signals import (
    alone_note,
    parse_baseline,
    parse_truth,
    signals_and_baselines,
)
from orchestrace.errors import ConfigError


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_finite_number_is_its_own_baseline(x: float) -> None:
    assert parse_baseline(repr(x)) == x


@given(st.sampled_from(["group", "GROUP", " Group "]))
def test_group_in_any_case(text: str) -> None:
    assert parse_baseline(text) == "group"


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e999"])
def test_a_baseline_that_is_not_finite_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="finite"):
        parse_baseline(text)


@given(st.text(max_size=12).filter(lambda t: not _is_float(t) and t.strip().lower() != "group"))
def test_other_text_is_refused_with_what_was_given(text: str) -> None:
    with pytest.raises(ConfigError, match="a number or 'group'"):
        parse_baseline(text)


@given(st.text(max_size=12))
def test_truth_is_a_verdict_a_number_or_the_answer(text: str) -> None:
    got = parse_truth(text)
    low = text.strip().lower()
    if low in ("true", "false"):
        assert got is (low == "true")
    elif _is_float(text):
        assert got == float(text) or (math.isnan(got) and math.isnan(float(text)))
    else:
        assert got == text


def test_group_baselines_are_the_task_means() -> None:
    runs = [synth(events=40, agents=3, seed=s, task_id="t") for s in range(4)] + \
        [synth(events=40, agents=3, seed=9, task_id="alone")]
    sigs, bases, note = signals_and_baselines(runs, None, None, "group", lambda t: t.trace_id)
    totals = [sum(x.value for x in s) for s in sigs]
    assert bases[:4] == pytest.approx([sum(totals[:4]) / 4] * 4)
    assert bases[4] == pytest.approx(totals[4])  # alone: its own reward
    assert note == alone_note(["t"] * 4 + ["alone"]) and note.startswith("1 trace(s)")


def test_a_number_is_every_trace_s_baseline_and_no_note() -> None:
    runs = [synth(events=40, agents=3, seed=s) for s in range(2)]
    _, bases, note = signals_and_baselines(runs, None, None, 0.5, lambda t: t.trace_id)
    assert bases == [0.5, 0.5] and note is None
