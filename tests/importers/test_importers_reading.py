"""The importers' reading layer: piecewise line reading with a cap, and counted value sanitisation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrace.importers import _common
from orchestrace.importers._common import count_value, iter_lines, nesting_depth
from orchestrace.importers._report import ImportReport


def reference_lines(data: bytes, cap: int) -> tuple[list[tuple[int, bytes, bool]], list[int]]:
    """What iter_lines must give, computed on the whole input at once."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parts = data.split(b"\n")
    kept, too_large = [], []
    for i, raw in enumerate(parts):
        last = i == len(parts) - 1
        if len(raw) > cap:
            too_large.append(i + 1)
        elif raw.strip():
            kept.append((i + 1, raw, last))
    return kept, too_large


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.sampled_from([b"a", b"bb", b"\n", b" ", b"{}", b"xxxxxxx", b"\r"]), max_size=60).map(b"".join),
       cap=st.integers(1, 12), chunk=st.integers(1, 9), bom=st.booleans())
def test_iter_lines_matches_a_whole_file_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes,
                                               cap: int, chunk: int, bom: bool) -> None:
    if bom:
        data = b"\xef\xbb\xbf" + data
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    monkeypatch.setattr(_common, "_CHUNK", chunk)
    monkeypatch.setenv("ORCHESTRACE_MAX_LINE_BYTES", str(cap))
    rep = ImportReport(format="claude-code")
    got = [(n, raw, cut) for n, raw, cut in iter_lines(p, "x.jsonl", rep) if raw is not None]
    want, too_large = reference_lines(data, cap)
    assert got == want
    assert [int(q.path.rsplit(":", 1)[1]) for q in rep.errors if q.code == "import.line-too-large"] == too_large
    assert rep.sanitised.get("import.bom", 0) == int(bom)


@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=12), st.booleans(), st.none(),
                 st.lists(st.integers(), max_size=2)))
def test_count_value_is_a_plausible_count_or_a_counted_drop(value: object) -> None:
    rep = ImportReport(format="otlp")
    n = count_value(value, "tokens", "f:1", rep)
    assert n is None or (isinstance(n, int) and 0 <= n <= _common.MAX_COUNT)
    changed = sum(rep.sanitised.values())
    exact = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _common.MAX_COUNT
    assert changed == (0 if exact or value is None else 1)
    if exact:
        assert n == value
    if isinstance(value, float) and not math.isfinite(value):
        assert n is None


def test_nesting_depth_has_no_recursion_limit() -> None:
    v: object = 1
    for _ in range(50_000):
        v = [v]
    assert nesting_depth(v, limit=10**6) == 50_000
