"""The vectorised stable orders of the graph core (``_dag``) against numpy's stable argsort."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from orchestrace.core._dag import IdIndex, stable_argsort_hashes, stable_argsort_small, unique_ints

SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(st.integers(1, 50).flatmap(lambda bound: st.tuples(
    st.just(bound), hnp.arrays(np.int32, st.integers(0, 200), elements=st.integers(0, bound - 1)))))
def test_stable_argsort_small_is_numpys_stable_argsort(case: tuple[int, np.ndarray]) -> None:
    bound, keys = case
    assert np.array_equal(stable_argsort_small(keys, bound), np.argsort(keys, kind="stable"))


@SETTINGS
@given(hnp.arrays(np.int64, st.integers(0, 200),
                  elements=st.one_of(st.integers(-3, 3), st.integers(-2**63, 2**63 - 1))))
def test_stable_argsort_hashes_is_numpys_stable_argsort(hashes: np.ndarray) -> None:
    assert np.array_equal(stable_argsort_hashes(hashes), np.argsort(hashes, kind="stable"))


@SETTINGS
@given(hnp.arrays(np.int64, st.integers(0, 200), elements=st.integers(-5, 5)))
def test_unique_ints_is_numpys_unique(a: np.ndarray) -> None:
    got, want = unique_ints(a), np.unique(a)
    assert got.dtype == want.dtype and np.array_equal(got, want)


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "é", ""]), max_size=40),
       st.lists(st.sampled_from(["a", "b", "z", "é", ""]), max_size=20))
def test_id_index_against_a_dict(ids: list[str], keys: list[str]) -> None:
    ix = IdIndex.of(ids)
    first: dict[str, int] = {}
    for i, x in enumerate(ids):
        first.setdefault(x, i)
    assert ix.lookup(keys).tolist() == [first.get(k, -1) for k in keys]
    assert ix.duplicates().tolist() == [i for i, x in enumerate(ids) if first[x] != i]
