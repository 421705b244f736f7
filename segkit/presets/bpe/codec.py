"""Compiled helpers around encoding: ids to bytes, byte spans to character
offsets.  Linear in their input, no Python object per token."""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel


@kernel
def gather_bytes(ids, dec_start, dec_end, dec_bytes):
    """The bytes of the tokens ``ids`` (int64 array) concatenated: returns
    ``(out, bad)``, ``bad`` being the position of the first id that is no
    token (``dec_end[i] == dec_start[i]``), or -1."""
    n_ids = dec_start.size
    total = 0
    for k in range(ids.size):
        i = ids[k]
        if i < 0 or i >= n_ids or dec_end[i] == dec_start[i]:
            return np.empty(0, np.uint8), k
        total += dec_end[i] - dec_start[i]
    out = np.empty(total, np.uint8)
    p = 0
    for k in range(ids.size):
        i = ids[k]
        for j in range(dec_start[i], dec_end[i]):
            out[p] = dec_bytes[j]
            p += 1
    return out, -1


@kernel
def token_spans(ids, piece_ends, starts, ends, piece_ids, tok_len):
    """Byte spans ``(begin, end)`` of each token: the tokens of piece ``p``
    tile ``[starts[p], ends[p])`` in order (a special or added token spans
    its whole piece)."""
    k = ids.size
    begin = np.empty(k, np.int64)
    end = np.empty(k, np.int64)
    t = 0
    for p in range(piece_ends.size):
        pos = starts[p]
        stop = piece_ends[p]
        if piece_ids[p] >= 0:
            begin[t] = starts[p]
            end[t] = ends[p]
            t += 1
            continue
        while t < stop:
            begin[t] = pos
            pos += tok_len[ids[t]]
            end[t] = pos
            t += 1
    return begin, end


@kernel
def char_offsets(buf, begin, end, row_byte_starts, row_of_token):
    """Character offsets (within each text) of byte spans: a span starting
    inside a character starts at that character, one ending inside a
    character ends after it.  ``row_byte_starts[r]``: first byte of text
    ``r``; ``row_of_token``: each token's text."""
    n = buf.size
    leads = np.empty(n + 1, np.int64)  # leads[x]: characters starting before byte x
    leads[0] = 0
    for x in range(n):
        leads[x + 1] = leads[x] + (1 if (buf[x] & 0xC0) != 0x80 else 0)
    k = begin.size
    cs = np.empty(k, np.int64)
    ce = np.empty(k, np.int64)
    for t in range(k):
        base = leads[row_byte_starts[row_of_token[t]]]
        b = begin[t]
        cs[t] = (leads[b + 1] - 1 if b < n else leads[n]) - base
        ce[t] = leads[end[t]] - base
    return cs, ce
