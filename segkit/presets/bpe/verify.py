"""Checking a stored BPE model against its vocabulary, without rebuilding.

A model file stores the vocabulary (token bytes, and the merge list of a
merges-based model), the engine's double array and every token's split
(:mod:`~segkit.presets.bpe.splits`).  Recomputing the splits costs a BPE
run per token (most of a build), so loading *certifies* them instead; all
other tables are rebuilt from them in linear passes
(:func:`~segkit.presets.bpe.tables.finish_tables`, which also walks every
token through the double array).

:func:`check_trie` makes any walk over any bytes stay inside the double
array and reach only nodes that spell what was read (every base plus
every symbol is a slot; distinct bytes have distinct symbols; no node has
a child on the "no symbol" 0).

:func:`certify_splits` checks, for every token ``t``:

1. *structure*: its length; a single byte has no split; a split ``(l, r)``
   consists of tokens BPE can output whose bytes make ``t``'s;
2. *priority*: the rank of ``t`` (tiktoken) or the index of the merge
   ``(l, r)`` (merge list), as the build assigns it;
3. *the split is BPE's*: BPE of ``l``'s bytes then ``r``'s reaches ``l, r``
   before merging them (the pair test of
   :mod:`~segkit.presets.bpe.backtrack`, without its last step); then BPE
   of ``t``'s bytes ends in ``t``;
4. *no token is missing*: a token stored without a split has no split
   passing 3 whose pair merges into it.

By induction on length (every test on ``t`` involves shorter tokens only),
tokens passing 1-4 have exactly the splits and priorities the build
computes, so the model encodes as the one built from the vocabulary.
Test 3 relies on priorities growing along merges, which
:func:`~segkit.presets.bpe.splits.first_non_monotone` checks on the stored
splits; a model without that property (the heap encoder's) is rebuilt
instead.  Cost: linear in the vocabulary's bytes (for an unreachable
token, one walk along it plus one lookup of the rest after each prefix
that is a token).
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from ...engine.intrinsics import prefetch
from .pairs import FILTER_MUL, pair_get, pair_slot

OK = 0
BAD_LENGTH = 1
BAD_BYTE = 2
BAD_PARTS = 3
BAD_PRIORITY = 4
NOT_BPE_SPLIT = 5
MISSING_SPLIT = 6
BAD_HOLE = 7

#: how many tokens ahead :func:`check_structure` fetches the parts' rows
AHEAD = 8

MESSAGES = {
    BAD_LENGTH: "its stored length is not its byte length",
    BAD_BYTE: "a single byte with a split or a priority",
    BAD_PARTS: "its split is not two tokens BPE can output whose bytes make it",
    BAD_PRIORITY: "its priority is not its rank or the index of its merge",
    NOT_BPE_SPLIT: "BPE of its bytes does not end in its stored split",
    MISSING_SPLIT: "it is stored as a token BPE never outputs, but BPE of its bytes ends in it",
    BAD_HOLE: "an id without a token has split data",
}


def check_trie(trans: np.ndarray, bsym: np.ndarray) -> str | None:
    """What is wrong with a double array and byte symbols (None: nothing)."""
    if trans.ndim != 2 or trans.shape[1] != 2 or trans.shape[0] < 2 or trans.dtype != np.int32:
        return "the double array must be an int32 array of shape (slots >= 2, 2)"
    if bsym.shape != (256,) or bsym.dtype != np.int32:
        return "the byte symbols must be 256 int32 values"
    size = trans.shape[0]
    base = trans[:, 0]
    check = trans[:, 1]
    if bsym.min() < 0 or base.min() < 0 or int(base.max()) + int(bsym.max()) >= size:
        return "a transition leads outside the double array"
    used = bsym[bsym > 0]
    if np.unique(used).size != used.size:
        return "two bytes share a symbol"
    if np.any(check[base] == np.arange(size)):
        return "a node has a child on no symbol"
    return None


@kernel
def _reachable(info, t):
    return info[t, 0] == 1 or info[t, 2] >= 0


@kernel(inline="always")
def _split_of(pairs, filt, fshift, x, y):
    key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
    f = np.int64((key * FILTER_MUL) >> fshift)
    if (filt[f >> 5] >> (f & 31)) & 1 == 0:
        return -1
    return pair_get(pairs, x, y)


@kernel
def _reaches_split(info, pairs, filt, fshift, x, y):
    """Whether BPE of x's bytes then y's reaches ``x, y`` (before any merge
    of the two): the pair test without its first lookup."""
    while True:
        px = info[x, 1]
        py = info[y, 1]
        if px > py:
            x = info[x, 3]
            c = _split_of(pairs, filt, fshift, x, y)
            if c >= 0 and info[c, 1] < px:
                return False
        else:
            if py < 0:
                return True
            y = info[y, 2]
            c = _split_of(pairs, filt, fshift, x, y)
            if c >= 0 and info[c, 1] <= py:
                return False


@kernel
def _lookup(tok_bytes, a, b, trans, bsym, slot):
    """The token (as ``slot`` stores it) of the bytes ``tok_bytes[a:b]``, or -1."""
    node = 0
    for j in range(a, b):
        t = trans[2 * node] + bsym[tok_bytes[j]]
        if bsym[tok_bytes[j]] == 0 or trans[2 * t + 1] != node:
            return -1
        node = t
    return slot[node]


@kernel
def check_structure(tok_bytes, tok_start, info, mtab, use_merges, t0, t1):
    """``(status, token)`` of tests 1 and 2 (module doc) for tokens ``t0 ..
    t1 - 1``, or ``(OK, -1)``.  Run before anything reads ``info``:
    afterwards every id it holds is in range and every part is shorter than
    its token."""
    n = tok_start.size - 1
    for t in range(t0, t1):
        if t + AHEAD < t1:  # the parts' rows, read from random places: fetch them ahead
            u = info[t + AHEAD, 2]
            v = info[t + AHEAD, 3]
            prefetch(info, u)
            prefetch(info, v)
            prefetch(tok_start, u)
            prefetch(tok_start, v)
        size = tok_start[t + 1] - tok_start[t]
        if size == 0:
            if info[t, 0] != 0 or info[t, 1] != -1 or info[t, 2] != -1 or info[t, 3] != -1:
                return BAD_HOLE, t
            continue
        if info[t, 0] != size:
            return BAD_LENGTH, t
        l = info[t, 2]
        r = info[t, 3]
        if size == 1:
            if l != -1 or r != -1 or info[t, 1] != -1:
                return BAD_BYTE, t
            continue
        if l < 0:
            if l != -1 or r != -1 or info[t, 1] != -1:
                return BAD_PARTS, t
            continue
        if l >= n or r < 0 or r >= n or not _reachable(info, l) or not _reachable(info, r):
            return BAD_PARTS, t
        a = tok_start[t]
        if info[l, 0] + info[r, 0] != size:
            return BAD_PARTS, t
        for j in range(info[l, 0]):
            if tok_bytes[tok_start[l] + j] != tok_bytes[a + j]:
                return BAD_PARTS, t
        for j in range(info[r, 0]):
            if tok_bytes[tok_start[r] + j] != tok_bytes[a + info[l, 0] + j]:
                return BAD_PARTS, t
        want = pair_get(mtab, l, r) if use_merges else t
        if want < 0 or info[t, 1] != want:
            return BAD_PRIORITY, t
    return OK, -1


#: walks :func:`certify_splits` keeps in flight at once
LANES = 16


@kernel
def certify_splits(tok_bytes, tok_start, info, trans, bsym, slot, pairs, filt, filter_bits, mtab, use_merges, t0, t1):
    """``(status, token)`` of tests 3 and 4 (module doc), or ``(OK, -1)``,
    after :func:`check_structure` passed (so the walks stay in range and
    end).  ``trans`` flat; ``slot``, ``pairs`` as
    :func:`~segkit.presets.bpe.tables.finish_tables` built them from
    ``info``, with its filter; ``mtab``: the merge list's pairs table
    (``use_merges``).  Tokens ``t0 .. t1 - 1``; a failure is reported for
    the failing token of lowest id."""
    status, tok = _certify_reachable(info, pairs, filt, filter_bits, t0, t1)
    status2, tok2 = _certify_missing(tok_bytes, tok_start, info, trans, bsym, slot, pairs, filt, filter_bits, mtab,
                                     use_merges, t0, t1 if tok < 0 else tok)
    if status2 != OK:
        return status2, tok2
    return status, tok


@kernel
def _certify_reachable(info, pairs, filt, filter_bits, t0, t1):
    """Test 3 for the tokens with a split in ``t0 .. t1 - 1``: the first
    that fails (lowest id), or ``(OK, -1)``.

    The walks of :func:`_reaches_split`, :data:`LANES` of them interleaved
    (one step of each in turn).  Every step reads a token's row and maybe a
    split-table slot from random places; here a step only starts those
    reads (the row into the lane's registers, a prefetch of the slot) and
    the lane's next turn, a round later, uses them, so the reads of all
    lanes overlap instead of following one another.  The lookup of the
    pair a step reaches is thus done on the lane's next turn (pending):
    the walk does not depend on it, only the verdict.  A split's priority
    is read from the split table (its ``extra``)."""
    fshift = np.uint64(64 - filter_bits)
    mask = pairs.size // 4 - 1
    xs = np.zeros(LANES, np.int64)
    ys = np.zeros(LANES, np.int64)
    pxs = np.zeros(LANES, np.int64)
    pys = np.zeros(LANES, np.int64)
    ts = np.full(LANES, -1, np.int64)
    limits = np.full(LANES, -1, np.int64)  # pending lookup of (x, y): fails at priority <= limit; -1: none
    nxt = t0
    failed = t1  # lowest failing token so far (lanes finish out of order)
    busy = True
    while busy:
        busy = False
        for i in range(LANES):
            t = ts[i]
            if t < 0:  # a free lane takes the next token with a split
                while nxt < t1 and info[nxt, 2] < 0:
                    nxt += 1
                if nxt >= t1 or nxt >= failed:
                    continue
                t = nxt
                nxt += 1
                ts[i] = t
                x = info[t, 2]
                y = info[t, 3]
                xs[i] = x
                ys[i] = y
                pxs[i] = info[x, 1]
                pys[i] = info[y, 1]
                limits[i] = -1
                busy = True
                continue
            busy = True
            x = xs[i]
            y = ys[i]
            limit = limits[i]
            if limit >= 0:  # the lookup of the pair reached last turn
                limits[i] = -1
                key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
                f = np.int64((key * FILTER_MUL) >> fshift)
                if (filt[f >> 5] >> (f & 31)) & 1:
                    h = pair_slot(x, y, mask)
                    while True:
                        a = pairs[4 * h]
                        if a == x and pairs[4 * h + 1] == y:
                            if pairs[4 * h + 3] <= limit:
                                limit = -2
                            break
                        if a == -1:
                            break
                        h = (h + 1) & mask
                    if limit == -2:
                        if t < failed:
                            failed = t
                        ts[i] = -1
                        continue
            px = pxs[i]
            py = pys[i]
            if px > py:  # x was made last: undo it, its right part faces y
                x = info[x, 3]
                limit = px - 1  # a pair there of priority below px merges first
            else:
                if py < 0:  # both single bytes: the pair is reached
                    ts[i] = -1
                    continue
                y = info[y, 2]
                limit = py  # ... of priority up to py (a tie goes left)
            limits[i] = limit
            prefetch(pairs, 4 * pair_slot(x, y, mask))
            xs[i] = x
            ys[i] = y
            pxs[i] = info[x, 1]
            pys[i] = info[y, 1]
    if failed < t1:
        return NOT_BPE_SPLIT, failed
    return OK, -1


@kernel
def _certify_missing(tok_bytes, tok_start, info, trans, bsym, slot, pairs, filt, filter_bits, mtab, use_merges, t0, t1):
    """Test 4 for the tokens without a split in ``t0 .. t1 - 1``."""
    fshift = np.uint64(64 - filter_bits)
    for t in range(t0, t1):
        size = tok_start[t + 1] - tok_start[t]
        if size < 2 or info[t, 2] >= 0:
            continue
        a = tok_start[t]
        # The prefixes of t are the nodes on its own path (walked once, not
        # once per cut: that was quadratic in the token's length); a suffix
        # is looked up only after a prefix that is a token.
        node = 0
        for k in range(1, size):
            c = bsym[tok_bytes[a + k - 1]]
            nd = trans[2 * node] + c
            if c == 0 or trans[2 * nd + 1] != node:
                break  # (never: finish_tables walked every token)
            node = nd
            x = slot[node]
            if x < 0:
                continue
            y = _lookup(tok_bytes, a + k, a + size, trans, bsym, slot)
            if y < 0:
                continue
            if use_merges and pair_get(mtab, x, y) < 0:
                continue
            if _reaches_split(info, pairs, filt, fshift, x, y):
                return MISSING_SPLIT, t
    return OK, -1
