"""Compiled post-passes of the Chinese preset (runs of letters and digits,
choosing between forward and backward results, the distinct words as one
string).
They work on the flat token arrays of a whole batch: no per-token Python
work."""

from __future__ import annotations

import numpy as np
from numba import njit


_ALPHA = 1
_DIGIT = 2
_POINT = 3
_PERCENT = 4


@njit(cache=True, nogil=True, inline="always")
def _kind(c):
    if c > 122 and not 0xFF05 <= c <= 0xFF5A:  # most characters: one test
        return 0
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


@njit(cache=True, nogil=True, inline="always")
def _glue_rule(kind, adjacent, digit_follows, run_open, last_digit):
    """The run rule for one token: ``(glued, run_open, last_digit)``.

    ``kind``: of the token's character if it is one character long, else 0;
    ``adjacent``: a run is open and the token touches it; ``digit_follows``:
    the next token is a digit touching this one.  ``run_open``/``last_digit``
    say whether the tokens so far end a run that may grow, with a digit.
    Letters and digits join an adjacent run (and open one); a point joins
    between two digits; a percent sign joins after a digit and closes the
    run.
    """
    if kind == _ALPHA or kind == _DIGIT:
        return adjacent, True, kind == _DIGIT
    if kind == _POINT and adjacent and last_digit and digit_follows:
        return True, run_open, False
    if kind == _PERCENT and adjacent and last_digit:
        return True, False, last_digit
    return False, False, last_digit


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
        end = rows[t + 1]
        for q in range(rows[t], end):
            s = st[q]
            x = en[q]
            kind = _kind(cps[base + s]) if x - s == 1 else 0
            follows = kind == _POINT and q + 1 < end and st[q + 1] == x and en[q + 1] - x == 1 and _kind(cps[base + x]) == _DIGIT
            glue[q], run_open, last_digit = _glue_rule(kind, run_open and en[q - 1] == s, follows, run_open, last_digit)
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


#: Keys of :func:`distinct_words`' table: a dictionary word is its id, an
#: unseen character ``vocab_size + code point``.
UNSEEN_KEYS = 0x110000

#: Slots a thread's table of distinct words starts with (it doubles when
#: half full): 768 KiB, which stays in a core's cache, where a table sized
#: by the dictionary or by the batch costs a cache miss per word.
TABLE_SLOTS = 1 << 16


@njit(cache=True, nogil=True, inline="always")
def _slot(key, mask):
    return ((key * np.int64(2654435761)) >> 7) & mask


@njit(cache=True, nogil=True)
def _grown_table(seen, stamp):
    """The entries of this call (``stamp``) in a table of twice the slots."""
    cap = seen.size // 3
    bigger = np.zeros(6 * cap, np.int32)
    mask = 2 * cap - 1
    for h in range(cap):
        if seen[3 * h] == stamp:
            key = np.int64(seen[3 * h + 1])
            g = _slot(key, mask)
            while bigger[3 * g] == stamp:
                g = (g + 1) & mask
            bigger[3 * g] = stamp
            bigger[3 * g + 1] = key
            bigger[3 * g + 2] = seen[3 * h + 2]
    return bigger


@njit(cache=True, nogil=True)
def distinct_words(cps, bounds, ids, st, en, rows, alnum, vocab_size, seen, stamp, text, widx):
    """The distinct words of all texts, and which one each word is.

    Writes the distinct words into ``text`` as code points separated by
    ``\\n`` and, for word ``w`` of the batch, the number of its distinct word
    into ``widx[w]``; returns ``(k, w, wrows, seen)``: code points written,
    words, the row splits of the texts in words, and the table (a larger
    one when it had to grow).

    With ``alnum`` set, runs of Latin letters and digits are merged into one
    word first (the rules of :func:`alnum_glue`, applied in the same pass).
    A one-token word is identified by its dictionary id (``ids[q] >= 0``) or,
    for an unseen character, by ``vocab_size`` + its code point; merged runs
    are written out each time.  Whitespace is never inside a word, so one
    ``str.split`` recovers the words.  Text repeats words a lot (pku+msr:
    210,000 words, 27,000 distinct), so the caller creates one Python string
    per distinct word instead of one per word.

    ``seen`` is an open-addressing table of int32 triples (stamp, key,
    distinct word; a power of two of them) that the caller keeps from call
    to call with a new ``stamp`` each time: a slot whose stamp is not this
    call's is empty, so no table is allocated or cleared per call.
    ``text`` needs room for every character plus one per word, ``widx`` one
    slot per token.
    """
    nt = rows.size - 1
    wrows = np.empty(nt + 1, np.int64)
    wrows[0] = 0
    mask = seen.size // 3 - 1
    k = 0
    u = 0
    w = 0
    for t in range(nt):
        base = bounds[t]
        e = rows[t + 1]
        run_open = False  # the previous token ends a run that may grow
        last_digit = False  # ... with a digit
        q0 = rows[t]  # first token of the word being collected
        for q in range(rows[t], e + 1):
            g = False
            if q < e and alnum:  # the rule of alnum_glue, token by token
                s = st[q]
                x = en[q]
                kind = _kind(cps[base + s]) if x - s == 1 else 0
                follows = kind == _POINT and q + 1 < e and st[q + 1] == x and en[q + 1] - x == 1 and _kind(cps[base + x]) == _DIGIT
                g, run_open, last_digit = _glue_rule(kind, run_open and en[q - 1] == s, follows, run_open, last_digit)
            if g or q == q0:
                continue
            # The word is tokens q0 .. q-1.
            key = np.int64(-1)  # merged runs are not looked up
            if q == q0 + 1:
                if ids[q0] >= 0:
                    key = np.int64(ids[q0])
                elif en[q0] - st[q0] == 1:
                    key = vocab_size + np.int64(cps[base + st[q0]])
            h = np.int64(0)
            found = False
            if key >= 0:
                h = _slot(key, mask)
                while seen[3 * h] == stamp:
                    if seen[3 * h + 1] == key:
                        found = True
                        break
                    h = (h + 1) & mask
            if found:
                widx[w] = seen[3 * h + 2]
            else:
                if key >= 0:
                    seen[3 * h] = stamp
                    seen[3 * h + 1] = key
                    seen[3 * h + 2] = u
                if u:
                    text[k] = 10
                    k += 1
                for p in range(q0, q):
                    for c in range(base + st[p], base + en[p]):
                        text[k] = cps[c]
                        k += 1
                widx[w] = u
                u += 1
                if 2 * u > mask:  # half full: double it
                    seen = _grown_table(seen, stamp)
                    mask = seen.size // 3 - 1
            w += 1
            q0 = q
        wrows[t + 1] = w
    return k, w, wrows, seen
