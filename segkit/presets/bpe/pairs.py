"""A hash table from token pairs to tokens, in one flat int32 array.

Idea: slot ``h`` holds three int32 values ``(left, right, merged)``; an empty
slot has ``left == -1``.  ``(left, right)`` is hashed by one 64-bit
multiplication (Fibonacci hashing: the top bits of ``key * 2**64/phi``) and
collisions probe the next slots (linear probing).  The table is at most half
full (:func:`table_size`), so a lookup reads one or two slots, usually in
one cache line.

Invariant: every key is stored in the first empty-or-equal slot of its probe
sequence, and nothing is ever deleted, so a lookup that meets an empty slot
may stop: the key is absent.  Cost: O(1) expected per insert and lookup.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: multiplier of the filter's hash (independent of the table's)
FILTER_MUL = np.uint64(0xC2B2AE3D27D4EB4F)


def table_size(n: int) -> int:
    """Number of slots (a power of two, >= 2n, >= 16) for ``n`` keys."""
    size = 16
    while size < 2 * n:
        size *= 2
    return size


def new_table(n: int) -> np.ndarray:
    """An empty table with room for ``n`` keys: int32 array of 3 * slots."""
    return np.full(3 * table_size(n), -1, dtype=np.int32)


@njit(cache=True, nogil=True, inline="always")
def _slot(left, right, mask):
    key = (np.uint64(left) << np.uint64(32)) | np.uint64(right & 0xFFFFFFFF)
    return np.int64((key * _GOLDEN) >> np.uint64(33)) & mask


@njit(cache=True, nogil=True, inline="always")
def pair_get(table, left, right):
    """The token stored for ``(left, right)``, or -1."""
    mask = table.size // 3 - 1
    h = _slot(left, right, mask)
    while True:
        a = table[3 * h]
        if a == left and table[3 * h + 1] == right:
            return table[3 * h + 2]
        if a == -1:
            return -1
        h = (h + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def pair_put(table, left, right, merged):
    """Store ``merged`` for ``(left, right)`` (replacing an earlier value)."""
    mask = table.size // 3 - 1
    h = _slot(left, right, mask)
    while True:
        a = table[3 * h]
        if a == -1 or (a == left and table[3 * h + 1] == right):
            table[3 * h] = left
            table[3 * h + 1] = right
            table[3 * h + 2] = merged
            return
        h = (h + 1) & mask


def filter_bits(n: int) -> int:
    """log2 of the filter's size in bits for ``n`` pairs (>= 16 bits each)."""
    bits = 10
    while (1 << bits) < 16 * n:
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def fill_filter(table, bits, filt):
    """Fill ``filt`` (``2**bits / 32`` int32 words) with the bit set of the
    pairs stored in ``table``: bit ``(key * FILTER_MUL) >> (64 - bits)`` of
    each key is set."""
    for i in range(filt.size):
        filt[i] = 0
    shift = np.uint64(64 - bits)
    for h in range(table.size // 3):
        if table[3 * h] >= 0:
            key = (np.uint64(table[3 * h]) << np.uint64(32)) | np.uint64(table[3 * h + 1] & 0xFFFFFFFF)
            f = np.int64((key * FILTER_MUL) >> shift)
            filt[f >> 5] |= np.int32(1) << np.int32(f & 31)
