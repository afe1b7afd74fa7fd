"""Hypothesis: any mutation of a row's controlled cells, or of the file's bytes, gives either
no problem or located problems, never an exception."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace.papers import PAPER_COLUMNS, check, check_text
from orchestrace.papers._pool import _PAPER_SCHEMA, _choices

CONTROLLED = [c for c in _PAPER_SCHEMA if c.kind == "vocab"]
COL = {c: i for i, c in enumerate(PAPER_COLUMNS)}
LOCATED = re.compile(r"^papers\.csv(:row \d+(:[^:]+)?)?$")
ALL_VALUES = sorted({v for c in CONTROLLED for v in _choices(c)})

cell = st.one_of(
    st.sampled_from(ALL_VALUES),
    st.sampled_from(ALL_VALUES).map(lambda v: v.upper()),
    st.sampled_from(ALL_VALUES).map(lambda v: f" {v}"),
    st.sampled_from(ALL_VALUES).map(lambda v: v[:-1]),
    st.text(max_size=30),
    st.text(alphabet=",\"\n\r;|[]\\ \t\x00", max_size=8),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(1, 4), edits=st.lists(
    st.tuples(st.sampled_from(CONTROLLED), cell), min_size=1, max_size=4))
def test_controlled_cell_mutations(mini_rows, csv_text, row, edits):
    rows = [r[:] for r in mini_rows]
    for col, value in edits:
        rows[row][COL[col.name]] = value
    problems = check_text(csv_text(rows, quote_all=True))
    line = row + 1
    for p in problems:
        assert p.severity in ("error", "warning") and p.code.startswith("corpus.")
        assert p.path.startswith(f"papers.csv:row {line}:"), p
    final = {col.name: rows[row][COL[col.name]] for col, _ in edits}
    for col in CONTROLLED:
        if col.name in final:
            bad = final[col.name] not in _choices(col)
            flagged = [p for p in problems if p.path == f"papers.csv:row {line}:{col.name}"]
            assert bool(flagged) == bad, (col.name, final[col.name], problems)
            if flagged and final[col.name].strip():
                assert flagged[0].hint


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_byte_mutations_never_raise(mini_rows, csv_text, data):
    raw = bytearray(csv_text(mini_rows).encode())
    for _ in range(data.draw(st.integers(1, 5))):
        pos = data.draw(st.integers(0, len(raw)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        byte = data.draw(st.integers(0, 255))
        if op == "insert":
            raw.insert(pos, byte)
        elif pos < len(raw):
            if op == "delete":
                del raw[pos]
            else:
                raw[pos] = byte
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "papers.csv"
        path.write_bytes(bytes(raw))
        for p in check(path):
            assert LOCATED.match(p.path), p
            assert p.code.startswith("corpus.") and p.message
