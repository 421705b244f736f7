"""Compiled post-passes of the Chinese preset (runs of letters and digits,
choosing between forward and backward results, the distinct words as one
string).
They work on the flat token arrays of a whole batch: no per-token Python
work."""

from __future__ import annotations

import numpy as np
from numba import njit

from segkit.engine.arrays import full

_ALPHA = 1
_DIGIT = 2
_POINT = 3
_PERCENT = 4


@njit(cache=True, nogil=True, inline="always")
def _kind(c):
    if 48 <= c <= 57 or 0xFF10 <= c <= 0xFF19:
        return _DIGIT
    if 65 <= c <= 90 or 97 <= c <= 122 or 0xFF21 <= c <= 0xFF3A or 0xFF41 <= c <= 0xFF5A:
        return _ALPHA
    if c == 46 or c == 0xFF0E:
        return _POINT
    if c == 37 or c == 0xFF05:
        return _PERCENT
    return 0


@njit(cache=True, nogil=True, inline="always")
def _token_arrays(cap, nrows):
    """Empty ids, starts, ends (``cap`` each) and row splits (``nrows``,
    starting at 0) for a post-pass to fill."""
    rows = np.empty(nrows, np.int64)
    rows[0] = 0
    return np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int32), rows


@njit(cache=True, nogil=True)
def alnum_glue(cps, bounds, st, en, rows):
    """Which tokens join the token before them in a run of Latin letters and
    digits (half- or full-width): ``glue[q]`` is 1 when token ``q`` does.
    Only one-character tokens join; a point between two digits and a
    percent sign after a digit join the run too.

    Offsets are relative to each text (``cps[bounds[t]:bounds[t+1]]``).
    """
    glue = np.empty(st.size, np.uint8)
    for t in range(rows.size - 1):
        base = bounds[t]
        run_open = False  # the previous token ends a run that may grow
        last_digit = False  # ... with a digit
        for q in range(rows[t], rows[t + 1]):
            s = st[q]
            e = en[q]
            kind = _kind(cps[base + s]) if e - s == 1 else 0
            adjacent = run_open and en[q - 1] == s
            g = False
            if kind == _ALPHA or kind == _DIGIT:
                g = adjacent
                run_open = True
                last_digit = kind == _DIGIT
            elif (
                kind == _POINT
                and adjacent
                and last_digit
                and q + 1 < rows[t + 1]
                and st[q + 1] == e
                and en[q + 1] - e == 1
                and _kind(cps[base + e]) == _DIGIT
            ):
                g = True
                last_digit = False
            elif kind == _PERCENT and adjacent and last_digit:
                g = True
                run_open = False
            else:
                run_open = False
            glue[q] = g
    return glue


@njit(cache=True, nogil=True)
def merge_glued(ids, st, en, rows, glue, run_id):
    """Tokens with each glued token (see :func:`alnum_glue`) merged into the
    token before it; merged tokens get ``run_id``.  Returns new
    ``(ids, st, en, rows)``."""
    oid, ost, oen, orows = _token_arrays(ids.size, rows.size)
    k = 0
    for t in range(rows.size - 1):
        for q in range(rows[t], rows[t + 1]):
            if glue[q]:
                oen[k - 1] = en[q]
                oid[k - 1] = run_id
            else:
                oid[k] = ids[q]
                ost[k] = st[q]
                oen[k] = en[q]
                k += 1
        orows[t + 1] = k
    return oid[:k], ost[:k], oen[:k], orows


@njit(cache=True, nogil=True)
def choose_bidirectional(fid, fst, fen, frows, bid, bst, ben, brows):
    """Combine forward and backward results.

    The text is cut at every position where both results have a word
    boundary; in each stretch where they differ, the result with fewer
    words wins, then the one with fewer one-character words, then backward.
    """
    oid, ost, oen, orows = _token_arrays(fid.size + bid.size, frows.size)
    k = 0
    for t in range(frows.size - 1):
        a = frows[t]
        b = brows[t]
        fa_end = frows[t + 1]
        ba_end = brows[t + 1]
        while a < fa_end and b < ba_end:
            a0 = a
            b0 = b
            # Grow both sides until their ends meet at a common boundary.
            while fen[a] != ben[b]:
                if fen[a] < ben[b]:
                    a += 1
                else:
                    b += 1
            nf = a - a0 + 1
            nb = b - b0 + 1
            use_forward = False
            if nf < nb:
                use_forward = True
            elif nf == nb:
                sf = 0
                sb = 0
                for q in range(a0, a + 1):
                    if fen[q] - fst[q] == 1:
                        sf += 1
                for q in range(b0, b + 1):
                    if ben[q] - bst[q] == 1:
                        sb += 1
                use_forward = sf < sb
            if use_forward:
                for q in range(a0, a + 1):
                    oid[k] = fid[q]
                    ost[k] = fst[q]
                    oen[k] = fen[q]
                    k += 1
            else:
                for q in range(b0, b + 1):
                    oid[k] = bid[q]
                    ost[k] = bst[q]
                    oen[k] = ben[q]
                    k += 1
            a += 1
            b += 1
        orows[t + 1] = k
    return oid[:k], ost[:k], oen[:k], orows


@njit(cache=True, nogil=True)
def unique_words(cps, bounds, ids, st, en, rows, glue):
    """The distinct words of all texts, and which one each word is.

    Returns ``(joined, widx, wrows)``: ``joined`` holds the distinct words as
    one code point array separated by ``\\n``; word ``w`` of the batch is
    distinct word ``widx[w]``; ``wrows`` are the row splits of the texts in
    words.  A word is identified by its dictionary id (``ids[q] >= 0``) or,
    for an unseen character, by its code point; runs of letters and digits
    are each written out.

    A token with ``glue[q]`` set continues the word before it; an empty
    ``glue`` glues nothing.  Whitespace is never inside a token, so one
    ``str.split`` recovers the words.  Text repeats words a lot (pku+msr:
    203,000 words, 27,000 distinct), so the caller creates one Python string
    per distinct word instead of one per word.
    """
    nt = rows.size - 1
    n = rows[nt]
    total = 0
    for q in range(n):
        total += en[q] - st[q] + 1
    # Open addressing, sized by the batch (a call on one short text must
    # not pay for a table the size of the dictionary).  Keys: 2 * id for a
    # dictionary word, 2 * code point + 1 for an unseen character; -1: empty.
    cap = 16
    while cap < 2 * n:
        cap *= 2
    mask = cap - 1
    hkey = full(cap, np.int64(-1), np.int64)
    hval = np.empty(cap, np.int32)
    out = np.empty(total, np.uint32)
    widx = np.empty(n, np.int32)
    wrows = np.empty(nt + 1, np.int64)
    wrows[0] = 0
    use_glue = glue.size > 0
    k = 0
    u = 0
    w = 0
    for t in range(nt):
        base = bounds[t]
        q = rows[t]
        e = rows[t + 1]
        while q < e:
            r = q + 1  # the word is tokens q .. r-1
            if use_glue:
                while r < e and glue[r]:
                    r += 1
            key = np.int64(-1)  # runs of several tokens are not looked up
            if r == q + 1:
                if ids[q] >= 0:
                    key = 2 * np.int64(ids[q])
                elif en[q] - st[q] == 1:
                    key = 2 * np.int64(cps[base + st[q]]) + 1
            seen = -1
            if key >= 0:
                h = (key * np.int64(2654435761)) & mask
                while hkey[h] != -1 and hkey[h] != key:
                    h = (h + 1) & mask
                if hkey[h] == key:
                    seen = hval[h]
                else:
                    hkey[h] = key
                    hval[h] = u
            if seen >= 0:
                widx[w] = seen
            else:
                if u:
                    out[k] = 10
                    k += 1
                for p in range(q, r):
                    for c in range(base + st[p], base + en[p]):
                        out[k] = cps[c]
                        k += 1
                widx[w] = u
                u += 1
            w += 1
            q = r
        wrows[t + 1] = w
    return out[:k], widx[:w], wrows
