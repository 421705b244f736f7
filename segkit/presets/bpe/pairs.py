"""A hash table from token pairs to tokens, in one flat int32 array.

Idea: slot ``h`` holds four int32 values ``(left, right, merged, extra)``
(16 bytes: a slot never straddles a cache line); an empty slot has ``left
== -1``.  ``extra`` is the merged token's priority in the encoder's split
table, so that a hit needs no second lookup.  ``(left, right)`` is hashed
by one 64-bit multiplication (Fibonacci hashing: the top bits of ``key *
2**64/phi``) and collisions probe the next slots (linear probing).  The
table is at most three quarters full (:func:`table_size`): a hit reads
about two slots, one or two cache lines (a smaller table stays in a
core's cache more of the time, which counts more).

Invariant: every key is stored in the first empty-or-equal slot of its probe
sequence, and nothing is ever deleted, so a lookup that meets an empty slot
may stop: the key is absent.  Cost: O(1) expected per insert and lookup.
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: multiplier of the filter's hash (independent of the table's)
FILTER_MUL = np.uint64(0xC2B2AE3D27D4EB4F)


def table_size(n: int) -> int:
    """Number of slots (a power of two, >= 4n/3, >= 16) for ``n`` keys."""
    size = 16
    while 3 * size < 4 * n:
        size *= 2
    return size


def new_table(n: int) -> np.ndarray:
    """An empty table with room for ``n`` keys: int32 array of 4 * slots."""
    return np.full(4 * table_size(n), -1, dtype=np.int32)


@kernel(inline="always")
def pair_slot(left, right, mask):
    key = (np.uint64(left) << np.uint64(32)) | np.uint64(right & 0xFFFFFFFF)
    return np.int64((key * _GOLDEN) >> np.uint64(33)) & mask


@kernel(inline="always")
def pair_get(table, left, right):
    """The token stored for ``(left, right)``, or -1."""
    mask = table.size // 4 - 1
    h = pair_slot(left, right, mask)
    while True:
        a = table[4 * h]
        if a == left and table[4 * h + 1] == right:
            return table[4 * h + 2]
        if a == -1:
            return -1
        h = (h + 1) & mask


@kernel(inline="always")
def pair_put(table, left, right, merged, extra):
    """Store ``(merged, extra)`` for ``(left, right)`` (replacing an earlier value)."""
    mask = table.size // 4 - 1
    h = pair_slot(left, right, mask)
    while True:
        a = table[4 * h]
        if a == -1 or (a == left and table[4 * h + 1] == right):
            table[4 * h] = left
            table[4 * h + 1] = right
            table[4 * h + 2] = merged
            table[4 * h + 3] = extra
            return
        h = (h + 1) & mask


def filter_bits(n: int) -> int:
    """log2 of the filter's size in bits for ``n`` pairs (>= 16 bits each)."""
    bits = 10
    while (1 << bits) < 16 * n:
        bits += 1
    return bits


@kernel(inline="always")
def filter_add(filt, shift, left, right):
    """Set the filter bit of ``(left, right)`` (``shift``: 64 - bits)."""
    key = (np.uint64(left) << np.uint64(32)) | np.uint64(right & 0xFFFFFFFF)
    f = np.int64((key * FILTER_MUL) >> shift)
    filt[f >> 5] |= np.int32(1) << np.int32(f & 31)


@kernel
def fill_filter(table, bits, filt):
    """Fill ``filt`` (``2**bits / 32`` int32 words) with the bit set of the
    pairs stored in ``table``: bit ``(key * FILTER_MUL) >> (64 - bits)`` of
    each key is set."""
    for i in range(filt.size):
        filt[i] = 0
    shift = np.uint64(64 - bits)
    for h in range(table.size // 4):
        if table[4 * h] >= 0:
            key = (np.uint64(table[4 * h]) << np.uint64(32)) | np.uint64(table[4 * h + 1] & 0xFFFFFFFF)
            f = np.int64((key * FILTER_MUL) >> shift)
            filt[f >> 5] |= np.int32(1) << np.int32(f & 31)
