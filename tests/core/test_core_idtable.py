"""The id index's hash table (``core._idtable``) against a plain dict, and its bounded fallback.

Hashes are drawn both from the whole 64-bit range and from a few small values (many repeats,
and long probe runs since equal low bits crowd one part of the table); ``MAX_ROUNDS`` is also
forced down so that the sorted fallback answers, with the same result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from orchestrace.core import _dag, _idtable
from orchestrace.core._dag import IdIndex

SETTINGS = settings(max_examples=300, deadline=None)
_HASHES = hnp.arrays(np.int64, st.integers(0, 300),
                     elements=st.one_of(st.integers(-4, 4), st.sampled_from([64, 128, 1 << 40]),
                                        st.integers(-2**63, 2**63 - 1)))


def _first_of(hashes: np.ndarray) -> dict[int, int]:
    first: dict[int, int] = {}
    for i, h in enumerate(hashes.tolist()):
        first.setdefault(h, i)
    return first


@contextlib.contextmanager
def _rounds(k: int) -> Iterator[None]:
    """At most ``k`` probe rounds; the table for any number of ids."""
    old = _idtable.MAX_ROUNDS, _dag.TABLE_MIN_IDS
    _idtable.MAX_ROUNDS, _dag.TABLE_MIN_IDS = k, 0
    try:
        yield
    finally:
        _idtable.MAX_ROUNDS, _dag.TABLE_MIN_IDS = old


@SETTINGS
@given(_HASHES, _HASHES)
def test_table_finds_first_positions_and_lists_repeats_like_a_dict(hashes: np.ndarray, keys: np.ndarray) -> None:
    first = _first_of(hashes)
    table = _idtable.build(hashes)
    assert table is not None
    assert table.later.tolist() == [i for i, h in enumerate(hashes.tolist()) if first[h] != i]
    assert table.first.tolist() == [first[h] for i, h in enumerate(hashes.tolist()) if first[h] != i]
    found = _idtable.find(table, hashes, np.concatenate([keys, hashes]))
    assert found is not None
    assert found.tolist() == [first.get(k, -1) for k in [*keys.tolist(), *hashes.tolist()]]


@SETTINGS
@given(_HASHES, _HASHES, st.integers(1, 3))
def test_index_gives_the_same_answers_when_the_table_gives_up(hashes: np.ndarray, keys: np.ndarray,
                                                              rounds: int) -> None:
    ids = [f"x{h}" for h in hashes.tolist()]  # equal hashes ⇔ equal ids: no collision
    with _rounds(_idtable.MAX_ROUNDS):
        want = IdIndex(hashes, ids.__getitem__)
    assert want.table is not None
    with _rounds(rounds):
        got = IdIndex(hashes, ids.__getitem__)
    assert got.duplicates().tolist() == want.duplicates().tolist()
    assert got.lookup_hashes(keys).tolist() == want.lookup_hashes(keys).tolist()
    with _rounds(rounds):  # lookups that give up too
        assert want.lookup_hashes(keys).tolist() == got.lookup_hashes(keys).tolist()


def test_crowded_low_bits_stay_bounded() -> None:
    """Hashes equal in their low 20 bits: one long probe run; the sorted fallback answers."""
    n = max(5000, _dag.TABLE_MIN_IDS)
    hashes = (np.arange(n, dtype=np.int64) << 20) | 5
    ids = [str(h) for h in hashes.tolist()]
    ix = IdIndex(hashes, ids.__getitem__)
    assert ix.table is None  # gave up after MAX_ROUNDS rounds instead of n
    assert ix.lookup_hashes(np.array([hashes[17], 6], np.int64)).tolist() == [17, -1]
    assert ix.duplicates().tolist() == []


def test_a_true_collision_switches_to_exact_strings() -> None:
    hashes = np.array([3, 9, 3], np.int64)  # positions 0 and 2 share a hash but not an id
    ids = ["a", "b", "c"]
    for k in (_idtable.MAX_ROUNDS, 0):  # the table, and the sorted fallback
        with _rounds(k):
            ix = IdIndex(hashes, ids.__getitem__)
        assert ix.dict == {"a": 0, "b": 1, "c": 2}
        assert ix.duplicates().tolist() == []
        assert ix.lookup(["c", "x"]).tolist() == [2, -1]
