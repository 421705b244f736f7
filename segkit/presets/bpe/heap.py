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
test does not hold.  Cost: O(n log n) time, O(n) memory per piece.  Written as one function for
the reason given in :mod:`~segkit.presets.bpe.backtrack`.
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from . import layout as L

_ix = np.uint64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW = np.int64(0xFFFFFFFF)


@kernel
def encode_pieces_heap(buf, starts, ends, piece_ids, model, out):
    """:func:`~segkit.presets.bpe.backtrack.encode_pieces` for any
    vocabulary (same arguments and results)."""
    trans = model[model[L.TRANS] : model[L.TRANS + 1]]
    info = model[model[L.INFO] : model[L.INFO + 1]]
    slot = model[model[L.SLOT] : model[L.SLOT + 1]]
    pairs = model[model[L.PAIRS] : model[L.PAIRS + 1]]
    bsym = model[model[L.BYTESYM] : model[L.BYTESYM + 1]]
    whole_any = model[model[L.PARAMS] + L.P_WHOLE_ANY] != 0
    mask = pairs.size // 4 - 1
    m = starts.size
    longest = 1
    for p in range(m):
        if ends[p] - starts[p] > longest:
            longest = ends[p] - starts[p]
    tok = np.empty(longest, np.int32)
    nxt = np.empty(longest, np.int32)
    prv = np.empty(longest, np.int32)
    heap = np.empty(3 * longest, np.int64)
    byte_tok = np.empty(256, np.int32)
    for c in range(256):
        t = trans[0] + bsym[c]
        byte_tok[c] = slot[t] if bsym[c] > 0 and trans[2 * t + 1] == 0 else -1
    piece_ends = np.empty(m, np.int64)
    k = 0
    for p in range(m):
        if piece_ids[p] >= 0:  # a special token found by the pre-tokenizer
            out[_ix(k)] = piece_ids[p]
            k += 1
            piece_ends[p] = k
            continue
        a = starts[p]
        b = ends[p]
        node = 0
        whole = -1
        for j in range(a, b):
            t = trans[_ix(2 * node)] + bsym[_ix(buf[_ix(j)])]
            if trans[_ix(2 * t + 1)] != node:
                whole = -1
                break
            node = t
            whole = slot[_ix(t)]
        if whole >= 0 or (whole < -1 and whole_any):
            out[_ix(k)] = whole if whole >= 0 else -2 - whole
            k += 1
            piece_ends[p] = k
            continue
        n = b - a
        if n == 0:
            piece_ends[p] = k
            continue
        for i in range(n):
            tok[i] = byte_tok[buf[a + i]]
            if tok[i] < 0:  # a byte that is no token (never in UTF-8 text)
                return -1, piece_ends
            nxt[i] = i + 1 if i + 1 < n else -1
            prv[i] = i - 1
        size = 0
        # Entries (priority << 32 | position) for the pairs at positions
        # i = 0 .. n-2 first, then for the pairs a merge creates.
        step = -1
        while True:
            step += 1
            if step < n - 1:
                i = step
                left = tok[i]
                right = tok[i + 1]
            elif size == 0:
                break
            else:
                # Pop the smallest entry (sift down).
                key = heap[0]
                size -= 1
                heap[0] = heap[size]
                r = 0
                while True:
                    c = 2 * r + 1
                    if c >= size:
                        break
                    if c + 1 < size and heap[c + 1] < heap[c]:
                        c += 1
                    if heap[r] <= heap[c]:
                        break
                    heap[r], heap[c] = heap[c], heap[r]
                    r = c
                i = key & _LOW
                j = nxt[i]
                if tok[i] < 0 or j < 0:
                    continue
                # Still the same pair (the entry is not stale)?
                x = tok[i]
                y = tok[j]
                hh = np.int64((((np.uint64(x) << np.uint64(32)) | np.uint64(y)) * _GOLDEN) >> np.uint64(33)) & mask
                made = -1
                while True:
                    e = pairs[_ix(4 * hh)]
                    if e == x and pairs[_ix(4 * hh + 1)] == y:
                        made = pairs[_ix(4 * hh + 2)]
                        break
                    if e == -1:
                        break
                    hh = (hh + 1) & mask
                if made < 0 or np.int64(info[4 * made + 1]) != key >> 32:
                    continue
                tok[i] = made
                tok[j] = -1
                nxt[i] = nxt[j]
                if nxt[j] >= 0:
                    prv[nxt[j]] = i
                # New pairs: (prev, made) and (made, next); pushed below
                # one at a time through the same code.
                i2 = prv[i]
                left = -1
                right = -1
                for side in range(2):
                    if side == 0:
                        if i2 < 0:
                            continue
                        at = i2
                        x = tok[i2]
                        y = made
                    else:
                        if nxt[i] < 0:
                            continue
                        at = i
                        x = made
                        y = tok[nxt[i]]
                    hh = np.int64((((np.uint64(x) << np.uint64(32)) | np.uint64(y)) * _GOLDEN) >> np.uint64(33)) & mask
                    while True:
                        e = pairs[_ix(4 * hh)]
                        if e == x and pairs[_ix(4 * hh + 1)] == y:
                            c2 = pairs[_ix(4 * hh + 2)]
                            r = size
                            heap[r] = (np.int64(info[4 * c2 + 1]) << 32) | at
                            size += 1
                            while r > 0 and heap[(r - 1) >> 1] > heap[r]:
                                heap[(r - 1) >> 1], heap[r] = heap[r], heap[(r - 1) >> 1]
                                r = (r - 1) >> 1
                            break
                        if e == -1:
                            break
                        hh = (hh + 1) & mask
                continue
            # Push the initial pair (left, right) at position i.
            hh = np.int64((((np.uint64(left) << np.uint64(32)) | np.uint64(right)) * _GOLDEN) >> np.uint64(33)) & mask
            while True:
                e = pairs[_ix(4 * hh)]
                if e == left and pairs[_ix(4 * hh + 1)] == right:
                    c2 = pairs[_ix(4 * hh + 2)]
                    r = size
                    heap[r] = (np.int64(info[4 * c2 + 1]) << 32) | i
                    size += 1
                    while r > 0 and heap[(r - 1) >> 1] > heap[r]:
                        heap[(r - 1) >> 1], heap[r] = heap[r], heap[(r - 1) >> 1]
                        r = (r - 1) >> 1
                    break
                if e == -1:
                    break
                hh = (hh + 1) & mask
        i = 0
        while i >= 0:
            out[_ix(k)] = tok[i]
            k += 1
            i = nxt[i]
        piece_ends[p] = k
    return k, piece_ends
