"""The encode kernel over a batch of pieces: bytes in, flat ids out.

A piece is ``buf[starts[p]:ends[p]]`` (a pre-token).  First the trie walk
over the whole piece: when the piece is itself a token that BPE outputs
(most pieces of running text are), that token is the answer and nothing
else runs; the same walk yields the longest token at the piece's start.
Otherwise the piece goes to the backtracking encoder
(:mod:`~segkit.presets.bpe.backtrack`), or for vocabularies it is not exact
for, to the heap encoder (:mod:`~segkit.presets.bpe.heap`).

Output: ``ids`` (int32) and ``piece_ends`` (int64): the tokens of piece
``p`` are ``ids[piece_ends[p-1]:piece_ends[p]]``.  A piece of n bytes
yields at most n tokens, so the output is sized to the input's bytes (no
growth, no per-token allocation).  Cost: linear in the bytes of the batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import layout as L
from .backtrack import encode_piece, walk
from .heap import encode_piece_heap


@njit(cache=True, nogil=True)
def encode_pieces(buf, starts, ends, auto, model, out):
    """Encode pieces into ``out`` (int32, at least as long as the pieces'
    total bytes); returns ``(number of ids, piece_ends)``, the number being
    -1 if the tables turned out inconsistent."""
    trans = auto[auto[1] : auto[2]]
    info = model[model[L.INFO] : model[L.INFO + 1]]
    nextp = model[model[L.NEXT] : model[L.NEXT + 1]]
    slot = model[model[L.SLOT] : model[L.SLOT + 1]]
    pairs = model[model[L.PAIRS] : model[L.PAIRS + 1]]
    bsym = model[model[L.BYTESYM] : model[L.BYTESYM + 1]]
    params = model[model[L.PARAMS] : model[L.PARAMS + 1]]
    monotone = params[L.P_MONOTONE] != 0
    whole_any = params[L.P_WHOLE_ANY] != 0
    m = starts.size
    longest = 0
    for p in range(m):
        if ends[p] - starts[p] > longest:
            longest = ends[p] - starts[p]
    piece_ends = np.empty(m, np.int64)
    byte_tok = np.empty(256, np.int32)
    if monotone:
        dead = np.empty(longest + 1, np.uint8)
        tok = nxt = prv = np.empty(0, np.int32)
        heap = np.empty(0, np.int64)
    else:
        dead = np.empty(0, np.uint8)
        tok = np.empty(longest, np.int32)
        nxt = np.empty(longest, np.int32)
        prv = np.empty(longest, np.int32)
        heap = np.empty(3 * longest, np.int64)
        for c in range(256):
            byte_tok[c] = slot[trans[2 * 0] + bsym[c]]
    k = 0
    for p in range(m):
        a = starts[p]
        b = ends[p]
        if b > a:
            first, whole = walk(buf, a, b, trans, slot, bsym)
            if whole >= 0:
                out[k] = whole
                k += 1
            elif whole < -1 and whole_any:
                out[k] = -2 - whole
                k += 1
            elif monotone:
                k = encode_piece(buf, a, b, trans, slot, bsym, info, nextp, pairs, first, out, k, dead)
                if k < 0:
                    return -1, piece_ends
            else:
                k = encode_piece_heap(buf, a, b, byte_tok, info, pairs, out, k, tok, nxt, prv, heap)
        piece_ends[p] = k
    return k, piece_ends
