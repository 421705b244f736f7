"""Exact BPE of one piece with a priority queue (any vocabulary).

Idea: BPE as defined: the tokens start as the single bytes; repeatedly the
adjacent pair of lowest priority is merged, the leftmost of equals.  The
adjacent pairs live in a binary min-heap keyed by (priority, position of
the left token); a merge marks the right token dead and pushes the two new
pairs around the merged token.  An entry is stale when its left token died
or changed or its right neighbour changed; it is recognised on pop (the
pair at its position no longer gives the same token) and dropped.

Why it is exact: every live pair of the current tokens has an entry in the
heap with its current (priority, position), so the smallest live entry is
the pair BPE merges next; stale entries are never merged.  Only split
pairs are looked up (see :mod:`~segkit.presets.bpe.splits`).

This runs for vocabularies whose priorities do not grow along every BPE run
(e.g. a HuggingFace ``merges`` list in which a token is made by a merge
listed after a merge that uses it), where the backtracking encoder's pair
test does not hold.  Cost: O(n log n) time, O(n) memory per piece.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .pairs import pair_get


@njit(cache=True, nogil=True, inline="always")
def _push(heap, size, key):
    i = size
    heap[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= heap[i]:
            break
        heap[p], heap[i] = heap[i], heap[p]
        i = p
    return size + 1


@njit(cache=True, nogil=True, inline="always")
def _pop(heap, size):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        l = 2 * i + 1
        if l >= size:
            break
        c = l
        if l + 1 < size and heap[l + 1] < heap[l]:
            c = l + 1
        if heap[i] <= heap[c]:
            break
        heap[i], heap[c] = heap[c], heap[i]
        i = c
    return top, size


@njit(cache=True, nogil=True, inline="always")
def encode_piece_heap(buf, a, b, byte_tok, info, pairs, out, k, tok, nxt, prv, heap):
    """Token ids of ``buf[a:b]`` into ``out[k:]``; returns the new end.
    ``tok``, ``nxt``, ``prv``: scratch of ``b - a`` ints; ``heap``: scratch
    of ``3 * (b - a)`` int64."""
    n = b - a
    for i in range(n):
        tok[i] = byte_tok[buf[a + i]]
        nxt[i] = i + 1 if i + 1 < n else -1
        prv[i] = i - 1
    size = 0
    for i in range(n - 1):
        c = pair_get(pairs, tok[i], tok[i + 1])
        if c >= 0:
            size = _push(heap, size, (np.int64(info[4 * c + 1]) << 32) | i)
    while size > 0:
        key, size = _pop(heap, size)
        i = key & 0xFFFFFFFF
        p = key >> 32
        j = nxt[i]
        if tok[i] < 0 or j < 0:
            continue
        c = pair_get(pairs, tok[i], tok[j])
        if c < 0 or info[4 * c + 1] != p:
            continue
        tok[i] = c
        tok[j] = -1
        nxt[i] = nxt[j]
        if nxt[j] >= 0:
            prv[nxt[j]] = i
        h = prv[i]
        if h >= 0:
            d = pair_get(pairs, tok[h], c)
            if d >= 0:
                size = _push(heap, size, (np.int64(info[4 * d + 1]) << 32) | h)
        j = nxt[i]
        if j >= 0:
            d = pair_get(pairs, c, tok[j])
            if d >= 0:
                size = _push(heap, size, (np.int64(info[4 * d + 1]) << 32) | i)
    i = 0
    while i >= 0:
        out[k] = tok[i]
        k += 1
        i = nxt[i]
    return k
