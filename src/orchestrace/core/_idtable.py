"""A vectorised open-addressing table of 64-bit hashes: position of each hash's first occurrence.

:class:`~orchestrace.core._dag.IdIndex` maps event ids to positions through their 64-bit string
hashes. Sorting a million hashes and then a million edge ends (two ``argsort`` calls and a
``searchsorted``) was about a quarter of ``orchestrace validate`` at 1M events; this table does
the same with a few rounds of numpy gathers and scatters and no sort. Linear probing in a table
at most half full: every round, each pending hash looks at its slot — an empty slot is claimed
(one claimant wins; the others retry the now-taken slot), a slot holding the same hash ends the
search (a later occurrence), another hash moves the claimant one slot on. Equal hashes start in
the same slot and move in lockstep, so after a round fix-up the table holds each hash's *first*
position, exactly as the sorted index does.

The number of rounds is the longest probe run: a handful for hashes as random as SipHash. Hashes
chosen to collide in their low bits (with a known hash seed) could make runs long, so after
:data:`MAX_ROUNDS` rounds :func:`build` and :func:`find` give up (``None``) and the caller sorts
instead: time stays bounded on any input.

>>> h = np.array([7, -3, 7, 12], np.int64)
>>> table = build(h)
>>> table.later.tolist(), table.first.tolist()  # position 2 repeats position 0's hash
([2], [0])
>>> find(table, h, np.array([12, 7, 5], np.int64)).tolist()
[3, 0, -1]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["MAX_ROUNDS", "HashTable", "build", "find"]

#: Probe rounds before giving up (the caller then sorts): random hashes need far fewer.
MAX_ROUNDS = 64
_EMPTY = -1


class HashTable(NamedTuple):
    """``slots`` (cap,) position or −1; ``mask`` = cap − 1; ``later`` (k,) positions whose hash
    an earlier position already has, sorted; ``first`` (k,) that earlier (first) position."""

    slots: np.ndarray
    mask: int
    later: np.ndarray
    first: np.ndarray


def build(hashes: np.ndarray) -> HashTable | None:
    """The table of ``hashes`` (n,), or None when probing needs more than :data:`MAX_ROUNDS` rounds."""
    n = len(hashes)
    cap = 1 << max(4, (2 * n).bit_length())  # at most half full
    mask = cap - 1
    slots = np.full(cap, _EMPTY, np.int64)
    pend = np.arange(n, dtype=np.int64)
    at = hashes & mask  # (pending,) slot each pending position looks at
    same_items, same_slots = [], []
    for _ in range(MAX_ROUNDS):
        if not pend.size:
            break
        occ = slots[at]
        free = occ == _EMPTY
        slots[at[free]] = pend[free]  # one claimant per slot wins
        retry = free & (slots[at] != pend)  # lost the claim: look at the same slot again
        taken = ~free
        same = taken & (hashes[np.where(taken, occ, 0)] == hashes[pend])
        if same.any():
            same_items.append(pend[same])
            same_slots.append(at[same])
        move = taken & ~same
        keep = move | retry
        pend, at = pend[keep], np.where(move[keep], (at[keep] + 1) & mask, at[keep])
    else:
        if pend.size:
            return None
    later, first = _first_occurrences(slots, hashes, same_items, same_slots)
    return HashTable(slots, mask, later, first)


def _first_occurrences(slots: np.ndarray, hashes: np.ndarray, items: list[np.ndarray],
                       at: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Give each repeated hash's slot its smallest position; (later positions, their first)."""
    if not items:
        z = np.zeros(0, np.int64)
        return z, z
    rep, where = np.concatenate(items), np.concatenate(at)
    members = np.concatenate([rep, slots[where]])  # every position of every repeated hash
    member_slot = np.concatenate([where, where])
    order = np.lexsort((members, member_slot))  # by slot (one per hash), then position
    members, member_slot = members[order], member_slot[order]
    head = np.r_[True, member_slot[1:] != member_slot[:-1]]
    dup = np.r_[False, members[1:] == members[:-1]] & ~head  # an owner listed twice
    members, member_slot, head = members[~dup], member_slot[~dup], head[~dup]
    firsts = members[head]  # smallest position per slot
    slots[member_slot[head]] = firsts
    group = np.cumsum(head) - 1
    later = members[~head]
    first = firsts[group[~head]]
    o = np.argsort(later)
    return later[o], first[o]


def find(table: HashTable, hashes: np.ndarray, keys: np.ndarray) -> np.ndarray | None:
    """Position of each key hash's first occurrence in ``hashes``, or −1; None after
    :data:`MAX_ROUNDS` rounds (the caller then searches a sorted copy)."""
    slots, mask = table.slots, table.mask
    out = np.full(len(keys), -1, np.int64)
    pend = np.arange(len(keys), dtype=np.int64)
    at = keys & mask
    for _ in range(MAX_ROUNDS):
        if not pend.size:
            return out
        occ = slots[at]
        taken = occ != _EMPTY  # an empty slot ends the search: not there
        pend, at, occ = pend[taken], at[taken], occ[taken]
        hit = hashes[occ] == keys[pend]
        out[pend[hit]] = occ[hit]
        miss = ~hit
        pend, at = pend[miss], (at[miss] + 1) & mask
    return out if not pend.size else None
