"""Reading a logged-runs file: anything that is not one is a located ConfigError, never a crash."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_runs import structured_runs

from orchestrace.errors import ConfigError
from orchestrace.offline import LoggedRuns as _LoggedRuns
from orchestrace.offline import check_runs, read_corpus, save_runs

_DIR: dict[str, Path] = {}


def structured(**kw: int) -> _LoggedRuns:
    """Logged runs with the structure of real ones (the offline branch's generator)."""
    return _LoggedRuns(**structured_runs(**kw))


@settings(max_examples=60, deadline=None)
@given(blob=st.binary(max_size=400), zipped=st.booleans())
def test_any_bytes_are_a_corpus_or_a_config_error(tmp_path_factory, blob: bytes, zipped: bool) -> None:
    if zipped:  # a real zip (so numpy reads it) holding arbitrary members
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("answers.npy", blob)
        blob = buf.getvalue()
    p = _DIR.setdefault("d", tmp_path_factory.mktemp("npz")) / "x.npz"
    p.write_bytes(blob)
    with pytest.raises(ConfigError, match=str(p).replace("\\", "\\\\")):
        read_corpus(p)


def test_round_trip_keeps_every_array(tmp_path: Path) -> None:
    runs = structured(T=30, R=3, W=2, seed=3)
    back = read_corpus(save_runs(runs, tmp_path / "c.npz"))
    for name in ("task_ids", "split", "answers", "correct_code", "logprob_mean", "round_correct"):
        assert np.array_equal(getattr(back, name), getattr(runs, name)), name
    assert back.meta == runs.meta
    assert read_corpus(tmp_path / "c.npz").answers.shape == (30, 3, 2)


def test_inconsistent_shapes_are_refused_with_the_field() -> None:
    runs = structured(T=30, R=3, W=2, seed=3)
    from orchestrace.logged.runs import LoggedRuns

    bad = LoggedRuns(**{**runs.__dict__, "round_correct": runs.round_correct[:, :2]})
    with pytest.raises(ConfigError, match=r"round_correct has shape \(30, 2\), expected \(30, 3\)"):
        check_runs(bad)
