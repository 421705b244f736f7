"""Each token's last merge, found by running BPE on the token's own bytes.

Idea: BPE is deterministic, so a token ``t`` can only ever be produced in one
way: by the merge BPE makes last when it encodes ``t``'s bytes alone (any
token in an output is, on its own bytes, what BPE makes of them: nothing
crosses its boundaries, so the merges inside it happen in the same order).
This file runs plain BPE (merge the adjacent pair of lowest priority, the
leftmost of equals; repeat) on the bytes of every token, shortest tokens
first.  When BPE gets down to two tokens ``(l, r)`` and that pair may merge
into ``t``, ``t`` is *reachable*, ``(l, r)`` is its *split* and the
priority of that merge is ``t``'s *priority*; otherwise ``t`` never comes
out of BPE (it stays in the vocabulary, for decoding and for a whole piece
equal to it where the semantics say so).

Only splits take part in BPE: a pair that is not the split of its merged
token can never be the one BPE merges (if it were, that token's own run
would end in it), so leaving such pairs out of the table changes nothing.
Merges found for shorter tokens are all that the run on ``t`` can use
before its last merge, which is why the shortest go first.

Priorities: tiktoken merges a pair when the concatenation is a token and
ranks it by that token's rank (``prio[t] = rank``); HuggingFace merges a
pair when it is listed in ``merges`` and ranks it by its index there.

Cost: O(L log L) for a token of L bytes (BPE with a priority queue), so
one very long token loads in linear time too; all vocabularies in use:
under a second in total.
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from .pairs import pair_get, pair_put

#: priority of a token that no merge makes (single bytes, unreachable tokens)
NO_MERGE = -1
#: ``info`` columns
LEN, PRIO, LEFT, RIGHT = 0, 1, 2, 3


_LOW = np.int64(0xFFFFFFFF)


@kernel(inline="always")
def _heap_push(heap, size, key):
    """Push ``key`` onto the min-heap ``heap[:size]``; the new size."""
    r = size
    heap[r] = key
    while r > 0 and heap[(r - 1) >> 1] > heap[r]:
        heap[(r - 1) >> 1], heap[r] = heap[r], heap[(r - 1) >> 1]
        r = (r - 1) >> 1
    return size + 1


@kernel(inline="always")
def _heap_pop(heap, size):
    """Remove the smallest key, ``heap[0]`` (read it first); the new size."""
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
    return size


@kernel
def derive_splits(tok_bytes, tok_start, order, byte_tok, rank, merges, use_merges, pairs):
    """Splits, priorities and reachability of every token.

    ``order``: token ids, shortest first (ids without bytes are skipped);
    ``byte_tok[b]``: the id of the single byte ``b`` (all 256 present);
    ``rank``: tiktoken priority per id (used unless ``use_merges``);
    ``merges``: a :mod:`~segkit.presets.bpe.pairs` table ``(a, b) -> merge
    index`` (used when ``use_merges``); ``pairs``: an empty pairs table that
    receives ``(l, r) -> t`` for every reachable token's split.

    Returns ``(info, reach)``: ``info[t] = (length, priority, l, r)``
    (``l = r = -1`` and priority ``NO_MERGE`` for single bytes and tokens
    BPE cannot make) and ``reach[t]`` (1 when BPE can output ``t``).
    """
    n = tok_start.size - 1
    info = np.empty((n, 4), np.int32)
    reach = np.zeros(n, np.uint8)
    maxlen = 0
    for t in range(n):
        info[t, LEN] = tok_start[t + 1] - tok_start[t]
        info[t, PRIO] = NO_MERGE
        info[t, LEFT] = -1
        info[t, RIGHT] = -1
        if info[t, LEN] > maxlen:
            maxlen = info[t, LEN]
    # BPE of one token: its tokens as a linked list over positions, the
    # mergeable adjacent pairs in a binary min-heap keyed by (priority,
    # position of the left token), as in the encoder of heap.py: a merge
    # marks the right token dead and pushes the pairs around the merged
    # token; an entry whose pair changed is dropped when popped.  O(L log L)
    # for a token of L bytes (a rescan of all pairs per merge, as before,
    # made one 128 KB token take minutes).
    width = max(maxlen, 1)
    tok = np.empty(width, np.int32)
    nxt = np.empty(width, np.int32)
    prv = np.empty(width, np.int32)
    heap = np.empty(3 * width, np.int64)
    for k in range(order.size):
        t = order[k]
        a = tok_start[t]
        size = tok_start[t + 1] - a
        if size == 0:
            continue
        if size == 1:
            if byte_tok[tok_bytes[a]] == t:
                reach[t] = 1
            continue
        for i in range(size):
            tok[i] = byte_tok[tok_bytes[a + i]]
            nxt[i] = i + 1 if i + 1 < size else -1
            prv[i] = i - 1
        hs = 0
        for i in range(size - 1):
            c = pair_get(pairs, tok[i], tok[i + 1])
            if c >= 0:
                hs = _heap_push(heap, hs, (np.int64(info[c, PRIO]) << 32) | i)
        m = size
        while m > 2 and hs > 0:
            key = heap[0]
            hs = _heap_pop(heap, hs)
            i = key & _LOW
            j = nxt[i]
            if tok[i] < 0 or j < 0:
                continue
            c = pair_get(pairs, tok[i], tok[j])
            if c < 0 or np.int64(info[c, PRIO]) != key >> 32:
                continue  # stale: the pair at i changed since it was pushed
            tok[i] = c
            tok[j] = -1
            nxt[i] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = i
            m -= 1
            left = prv[i]
            if left >= 0:
                c2 = pair_get(pairs, tok[left], c)
                if c2 >= 0:
                    hs = _heap_push(heap, hs, (np.int64(info[c2, PRIO]) << 32) | left)
            if nxt[i] >= 0:
                c2 = pair_get(pairs, c, tok[nxt[i]])
                if c2 >= 0:
                    hs = _heap_push(heap, hs, (np.int64(info[c2, PRIO]) << 32) | i)
        if m != 2:
            continue
        l = tok[0]
        r = tok[nxt[0]]
        if use_merges:
            p = pair_get(merges, l, r)
            if p < 0:
                continue
        else:
            p = rank[t]
        info[t, PRIO] = p
        info[t, LEFT] = l
        info[t, RIGHT] = r
        reach[t] = 1
        pair_put(pairs, l, r, t, p)
    return info, reach


@kernel
def first_non_monotone(info, reach):
    """The first reachable token whose priority is not above both of its
    parts' (-1 if none).  When there is none, priorities grow along every
    run of BPE, which the backtracking encoder relies on."""
    for t in range(info.shape[0]):
        if reach[t] and info[t, LEFT] >= 0:
            p = info[t, PRIO]
            if p <= info[info[t, LEFT], PRIO] or p <= info[info[t, RIGHT], PRIO]:
                return t
    return -1
