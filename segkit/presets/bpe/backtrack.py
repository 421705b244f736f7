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
  split only arises after an earlier boundary already failed.
* *Memo.* The valid encoding of a prefix is unique, so a position from
  which the search once failed fails again: it is marked dead and never
  entered twice.

Cost: each position of the piece is entered at most once; there a longest
match walks at most the longest token's length, and at most that many
shorter candidates are tested, each test taking a few table lookups.  So
time is linear in the piece length (times constants bounded by the
vocabulary), memory is one byte per input byte.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import layout as L
from .pairs import pair_get


@njit(cache=True, nogil=True, inline="always")
def walk(buf, i, b, trans, slot, bsym):
    """Walk the trie from the root over ``buf[i:b]``.

    Returns ``(best, whole)``: the longest token BPE can output that is a
    prefix of ``buf[i:b]`` (-1 if none) and the slot value of the node the
    whole of ``buf[i:b]`` leads to (-1 when it leads to no token)."""
    node = 0
    best = -1
    whole = -1
    for j in range(i, b):
        t = trans[2 * node] + bsym[buf[j]]
        if trans[2 * t + 1] != node:
            return best, -1
        node = t
        v = slot[t]
        if v >= 0:
            best = v
        whole = v
    return best, whole


@njit(cache=True, nogil=True, inline="always")
def compatible(info, pairs, x, y):
    """Whether BPE of the bytes of ``x`` then ``y`` is ``x, y``."""
    if pair_get(pairs, x, y) >= 0:
        return False
    while True:
        px = info[4 * x + 1]
        py = info[4 * y + 1]
        if px > py:
            # x was made last: before, its right part faced y, and the merge
            # making x (to the left of that boundary) had to win, ties too.
            x = info[4 * x + 3]
            c = pair_get(pairs, x, y)
            if c >= 0 and info[4 * c + 1] < px:
                return False
        else:
            if py < 0:
                return True  # both single bytes: nothing left to undo
            # y was made last: x faced y's left part, and the merge making
            # y (to the right of that boundary) had to win outright.
            y = info[4 * y + 2]
            c = pair_get(pairs, x, y)
            if c >= 0 and info[4 * c + 1] <= py:
                return False


@njit(cache=True, nogil=True, inline="always")
def encode_piece(buf, a, b, trans, slot, bsym, info, nextp, pairs, first, out, k, dead):
    """Token ids of ``buf[a:b]`` (non-empty) into ``out[k:]``; returns the
    new end of ``out``, or -1 if the tables are inconsistent.  ``first`` is
    the longest token at ``a``; ``dead`` has room for ``b - a + 1`` flags."""
    n = b - a
    for i in range(n + 1):
        dead[i] = 0
    pos = 0
    top = k
    tok = first
    while True:
        end = pos + info[4 * tok]
        if dead[end] == 0 and (top == k or compatible(info, pairs, out[top - 1], tok)):
            out[top] = tok
            top += 1
            pos = end
            if pos == n:
                return top
            tok, _ = walk(buf, a + pos, b, trans, slot, bsym)
            if tok < 0:
                return -1
        else:
            tok = nextp[tok]
            while tok < 0:
                # Nothing fits at pos: it is dead; undo the last token and
                # try the next shorter one in its place.
                dead[pos] = 1
                if top == k:
                    return -1
                top -= 1
                last = out[top]
                pos -= info[4 * last]
                tok = nextp[last]
