"""Exact BPE of one piece as longest match plus a compatibility test.

Idea (the algorithm of GitHub's ``bpe`` crate, "so many tokens, so little
time"): BPE's output for a piece is its unique *valid* encoding, and a
token sequence is valid exactly when every adjacent pair is (a pair
``(x, y)`` is valid when BPE of ``x``'s bytes followed by ``y``'s gives
``x, y`` back).  So the encoding can be built left to right: keep the
valid encoding of a prefix of the piece on a stack, try the longest token
that matches next, and if it does not form a valid pair with the token
before it, try the next shorter token that matches there; when no token
at a position fits, pop the last token and try its shorter alternatives.

Why the pieces fit:

* *Prefixes.* A prefix of a valid encoding is the valid encoding of the
  bytes it covers (BPE never merged across its end, and the merges inside
  happen in the same order without what follows).  So every position the
  exact encoding passes through is reached with the one valid encoding of
  the bytes before it, whatever order the search tries things in.
* *Extension.* A valid encoding followed by a token that forms a valid pair
  with its last token is valid: the merges of the two sides interleave in
  the order of their priorities, and each boundary between neighbours lost
  to the merges around it in its own pair already.
* *Pairs.* The validity of ``(x, y)`` is decided by undoing merges: of the
  two tokens, the one whose merge has the higher priority was made last
  (on a tie, the right one); before that merge the boundary was between
  its part and the other token, and BPE must have preferred the merge over
  merging across the boundary (a merge to the left wins a tie, one to the
  right loses it).  Walking down the two tokens' facing edges this way and
  finding no boundary pair that would have merged first proves the pair
  valid, provided priorities grow along every BPE run, which
  :func:`~segkit.presets.bpe.splits.first_non_monotone` checks for the
  vocabulary (else :mod:`~segkit.presets.bpe.heap` runs).  Only split
  pairs are looked up: a boundary pair that merges but is not its token's
  split only arises after an earlier boundary already failed.  Every
  boundary pair straddles the same two bytes of the text (those either
  side of the position), so where no split in the vocabulary has those two
  bytes at its seam (``BIGRAM``), no pair there merges: the test passes
  without looking at the tokens.  And the walk ends at the two bytes either
  side of the boundary, checked against the first merge on each edge:
  with ``q`` the priority of merging those two bytes, ``x1`` and ``y1``
  those of the first merges on ``x``'s right and ``y``'s left edge
  (``EDGE``), the last undo is of the earlier of the two (``x``'s on a
  tie), and that check fails when ``q < x1 <= y1`` or ``q <= y1 < x1``:
  so where ``q < x1``, every candidate with ``y1 >= q`` fails, which is
  decided before any walk (the candidates a run like ``abab...`` tries
  and rejects at every position).
* *Memo.* The valid encoding of a prefix is unique, so a position from
  which the search once failed fails again: it is marked dead and never
  entered twice.

Layout: the kernel is one function.  A helper that takes arrays costs two
atomic reference-count updates per array per call even when inlined (5x
the time of the whole loop on short pieces, measured), so the walk and
the pair test are written out in place; indices go through ``_ix``
(unsigned) so that Numba drops its wrap-around code for negative ones.

Cost: each position of the piece is entered at most once; there a longest
match walks at most the longest token's length, and at most that many
shorter candidates are tested, each test taking a few table lookups.  So
time is linear in the piece length (times constants bounded by the
vocabulary), memory is one byte per input byte.
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from . import layout as L
from .pairs import FILTER_MUL

_ix = np.uint64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: above every priority (none of the boundary's candidates is known to fail)
_NEVER = np.int64(1) << 40


@kernel
def encode_pieces(buf, starts, ends, piece_ids, model, out):
    """Encode the pieces ``buf[starts[p]:ends[p]]`` into ``out`` (int32, at
    least as long as the pieces' total bytes: no piece yields more tokens
    than bytes); a piece with ``piece_ids[p] >= 0`` is that one token (a
    special token).

    Returns ``(k, piece_ends)``: ``out[:k]`` holds the ids, those of piece
    ``p`` ending at ``piece_ends[p]``; ``k`` is -1 if the tables turned out
    inconsistent (a model that was not built by
    :func:`~segkit.presets.bpe.tables.build_tables`).
    """
    m = starts.size
    longest = 0
    for p in range(m):
        if ends[p] - starts[p] > longest:
            longest = ends[p] - starts[p]
    dead = np.zeros(longest + 1, np.uint8)
    piece_ends = np.empty(m, np.int64)
    k = encode_range(buf, starts, ends, piece_ids, 0, m, model, out, 0, dead, piece_ends)
    return k, piece_ends


@kernel
def encode_range(buf, starts, ends, piece_ids, p0, p1, model, out, k, dead, piece_ends):
    """Encode pieces ``p0 .. p1 - 1`` (see :func:`encode_pieces`) into
    ``out[k:]``, writing where each piece's ids end to ``piece_ends[p]``;
    returns the new end of ``out``, or -1 for inconsistent tables.  ``buf``
    is a uint8 array or ``bytes``; ``dead`` has room for the longest piece
    plus one (any integer dtype); ``out`` may be int32 or int64.  One call
    per text or batch: the model's sections are sliced once per call."""
    trans = model[model[L.TRANS] : model[L.TRANS + 1]]
    info = model[model[L.INFO] : model[L.INFO + 1]]
    nextp = model[model[L.NEXT] : model[L.NEXT + 1]]
    slot = model[model[L.SLOT] : model[L.SLOT + 1]]
    pairs = model[model[L.PAIRS] : model[L.PAIRS + 1]]
    bsym = model[model[L.BYTESYM] : model[L.BYTESYM + 1]]
    filt = model[model[L.FILTER] : model[L.FILTER + 1]]
    bigram = model[model[L.BIGRAM] : model[L.BIGRAM + 1]]
    edge = model[model[L.EDGE] : model[L.EDGE + 1]]
    byteprio = model[model[L.BYTEPRIO] : model[L.BYTEPRIO + 1]]
    whole_any = model[model[L.PARAMS] + L.P_WHOLE_ANY] != 0
    fshift = np.uint64(64 - model[model[L.PARAMS] + L.P_FILTER_BITS])
    mask = pairs.size // 4 - 1
    for p in range(p0, p1):
        if piece_ids[p] >= 0:  # a special token found by the pre-tokenizer
            out[_ix(k)] = piece_ids[p]
            k += 1
            piece_ends[p] = k
            continue
        a = starts[p]
        b = ends[p]
        # The walk over the whole piece: the piece as one token, and the
        # longest token at its start.
        node = 0
        tok = -1
        whole = -1
        for j in range(a, b):
            t = trans[_ix(2 * node)] + bsym[_ix(buf[_ix(j)])]
            if trans[_ix(2 * t + 1)] != node:
                whole = -1
                break
            node = t
            whole = slot[_ix(t)]
            if whole >= 0:
                tok = whole
        if whole >= 0 or (whole < -1 and whole_any):
            out[_ix(k)] = whole if whole >= 0 else -2 - whole
            k += 1
            piece_ends[p] = k
            continue
        if b == a:
            piece_ends[p] = k
            continue
        n = b - a
        for i in range(n + 1):
            dead[_ix(i)] = 0
        pos = 0  # bytes of the piece covered by out[k:top]
        top = k
        check_here = True  # whether a pair at pos can be a split at all (BIGRAM)
        fail_from = _NEVER  # candidates whose first left merge is at least this fail (EDGE)
        while True:
            if tok < 0:
                return -1
            end = pos + info[_ix(4 * tok)]
            ok = dead[_ix(end)] == 0
            if ok and top > k and check_here and edge[_ix(2 * tok)] >= fail_from:
                ok = False  # fails at the two bytes of the boundary (module doc)
            if ok and top > k and check_here:
                # The pair test (module doc): is (x, y) valid?
                x = out[_ix(top - 1)]
                y = tok
                key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
                f = np.int64((key * FILTER_MUL) >> fshift)
                h = np.int64((key * _GOLDEN) >> np.uint64(33)) & mask
                if (filt[_ix(f >> 5)] >> (f & 31)) & 1 == 0:
                    h = -1  # not a split: skip the table
                while h >= 0:  # x, y must not merge themselves
                    e = pairs[_ix(4 * h)]
                    if e == x and pairs[_ix(4 * h + 1)] == y:
                        ok = False
                        break
                    if e == -1:
                        break
                    h = (h + 1) & mask
                while ok:
                    px = info[_ix(4 * x + 1)]
                    py = info[_ix(4 * y + 1)]
                    if px > py:
                        # x was made last; before, its right part faced y
                        # and x's merge (left of the boundary) had to win,
                        # ties included.
                        x = info[_ix(4 * x + 3)]
                        limit = px
                        tie_loses = False
                    else:
                        if py < 0:
                            break  # two single bytes: nothing left to undo
                        # y was made last; x faced y's left part and y's
                        # merge (right of the boundary) had to win outright.
                        y = info[_ix(4 * y + 2)]
                        limit = py
                        tie_loses = True
                    key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
                    f = np.int64((key * FILTER_MUL) >> fshift)
                    if (filt[_ix(f >> 5)] >> (f & 31)) & 1 == 0:
                        continue  # not a split: this boundary never merged
                    h = np.int64((key * _GOLDEN) >> np.uint64(33)) & mask
                    while True:
                        e = pairs[_ix(4 * h)]
                        if e == x and pairs[_ix(4 * h + 1)] == y:
                            q = pairs[_ix(4 * h + 3)]  # the merged token's priority
                            if q < limit or (tie_loses and q == limit):
                                ok = False
                            break
                        if e == -1:
                            break
                        h = (h + 1) & mask
            if ok:
                out[_ix(top)] = tok
                top += 1
                pos = end
                if pos == n:
                    break
                bg = (np.int64(buf[_ix(a + pos - 1)]) << 8) | np.int64(buf[_ix(a + pos)])
                check_here = ((bigram[_ix(bg >> 5)] >> (bg & 31)) & 1) != 0
                q = byteprio[_ix(bg)]
                fail_from = np.int64(q) if q < edge[_ix(2 * tok + 1)] else _NEVER
                # The longest token at the new position.
                node = 0
                tok = -1
                for j in range(a + pos, b):
                    t = trans[_ix(2 * node)] + bsym[_ix(buf[_ix(j)])]
                    if trans[_ix(2 * t + 1)] != node:
                        break
                    node = t
                    v = slot[_ix(t)]
                    if v >= 0:
                        tok = v
            else:
                tok = nextp[_ix(tok)]
                while tok < 0:
                    # Nothing fits at pos: it is dead; undo the last token
                    # and try the next shorter one in its place.
                    dead[_ix(pos)] = 1
                    if top == k:
                        return -1
                    top -= 1
                    last = out[_ix(top)]
                    pos -= info[_ix(4 * last)]
                    tok = nextp[_ix(last)]
                    if pos > 0:
                        bg = (np.int64(buf[_ix(a + pos - 1)]) << 8) | np.int64(buf[_ix(a + pos)])
                        check_here = ((bigram[_ix(bg >> 5)] >> (bg & 31)) & 1) != 0
                        q = byteprio[_ix(bg)]
                        fail_from = np.int64(q) if q < edge[_ix(2 * out[_ix(top - 1)] + 1)] else _NEVER
        k = top
        piece_ends[p] = k
    return k
