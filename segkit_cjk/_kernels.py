"""Compiled passes of the Chinese preset: choosing between forward and
backward results, merging runs of letters and digits and finding each
word's cached string (:func:`word_keys`), and all of it for one text in one
call (:func:`segment_one`).  They work on the flat token arrays of a whole
batch: no per-token Python work.

Numba's on-disk cache keys a compiled function by its own file only, yet the
functions here compile the engine's matching loop into themselves
(:func:`segkit.engine.kernels._segment_range`, its pops layout included):
a change to that loop must change this file too, or a stale cache keeps the
old loop (the last such change: failure pops read through list headers)."""

from __future__ import annotations

import numpy as np
from segkit.engine import kernel

from segkit.engine import prefetch, segment_text_into


_ALPHA = 1
_DIGIT = 2
_POINT = 3
_PERCENT = 4


@kernel(inline="always")
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


@kernel(inline="always")
def _may_join(c):
    """Whether ``c`` can be of a kind other than 0 (see :func:`_kind`):
    false for nearly all of Chinese text, which then skips the run rules
    (tested first, it made the pass over pku+msr twice as fast)."""
    return c <= 122 or 0xFF05 <= c <= 0xFF5A


@kernel(inline="always")
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


@kernel
def choose_bidirectional(fid, fst, fen, frows, bid, bst, ben, brows):
    """Combine forward and backward results.

    The text is cut at every position where both results have a word
    boundary; in each stretch where they differ, the result with fewer
    words wins, then the one with fewer one-character words, then backward.
    """
    cap = fid.size + bid.size
    oid, ost, oen = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int32)
    orows = np.empty(frows.size, np.int64)
    orows[0] = 0
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


#: Unseen characters below this code point get a cache key
#: (``vocab_size`` + code point); others are spelled out each time.
CACHED_CHARS = 0x10000

#: Cache key of the whitespace token ``"\r\n"`` (``vocab_size`` + this),
#: which ``keep_whitespace`` makes one token, as jieba does.
CRLF_KEY = CACHED_CHARS

#: Cache keys beyond the dictionary's: unseen characters, then ``"\r\n"``.
EXTRA_KEYS = CACHED_CHARS + 1

#: Tokens ahead whose dictionary word's slot :func:`word_keys` prefetches
#: (``slot_of`` is 1.6 MB for the default dictionary, read at random: the
#: pass ran 1.06x faster warm and 1.14x after other work emptied the cache).
_SLOT_AHEAD = 16

#: Slots a thread's table of the keys spelled out in a call starts with (it
#: doubles when half full): 512 KiB.
TABLE_SLOTS = 1 << 16


@kernel(inline="always")
def _slot(key, mask):
    return ((key * np.int64(2654435761)) >> 7) & mask


@kernel
def _grown_table(seen, stamp, spelled):
    """The entries of this call (``stamp``) in a table of twice the slots
    (an entry holds a spelled index ``r``; its key is ``spelled[r]``)."""
    cap = seen.size // 2
    bigger = np.zeros(4 * cap, np.int32)
    mask = 2 * cap - 1
    for h in range(cap):
        if seen[2 * h] == stamp:
            r = seen[2 * h + 1]
            g = _slot(np.int64(spelled[r]), mask)
            while bigger[2 * g] == stamp:
                g = (g + 1) & mask
            bigger[2 * g] = stamp
            bigger[2 * g + 1] = r
    return bigger


@kernel
def word_keys(cps, bounds, ids, st, en, rows, alnum, vocab_size, slot_of, seen, stamp, keys, text, spelled, wst, wen):
    """Which string each word of the batch is, and the words to spell.

    A one-token word has a cache key: its dictionary id (``ids[q] >= 0``),
    or for an unseen character of the Basic Multilingual Plane
    ``vocab_size`` + its code point; other words (merged runs, unseen
    characters beyond U+FFFF) have none.  ``slot_of[key]`` is the slot of
    the key's string in the cache, or -1.  ``keys[w]`` gets word ``w``'s
    slot (``>= 0``), or ``-1 - r`` when its string is the ``r``-th one
    spelled out in this call: a word without a key, and the first word of
    each key not cached, is spelled out (its code points appended to
    ``text``, separated by ``\n``, so that the caller makes the strings with
    one ``str.split``) and ``spelled[r]`` gets its key, or -1; later words
    of that key refer to the same ``r``.  Returns ``(w, wrows, r, k, u,
    seen)``: words, the row splits of the texts in words, words spelled,
    code points written, keys not cached yet (the keyed words among the
    spelled ones), and the table (a larger one when it had to grow).

    With ``alnum`` set, runs of Latin letters and digits are merged into one
    word first (:func:`_glue_rule`, token by token: a one-character token
    of a letter or digit joins an adjacent run, a point between digits and
    a percent sign after a digit too).  ``wst[w]``/``wen[w]`` get the
    word's offsets (relative to its text, like the tokens').
    ``slot_of`` is only read here: the caller sets it, holding the GIL,
    after the strings are in the cache.  ``seen`` is an open-addressing
    table of int32 pairs (stamp, r) that a thread keeps from call to call
    with a new ``stamp`` each time (a slot of another stamp is empty),
    holding the keys spelled in this call (as their index in ``spelled``).
    It grows between texts only (assigning a new array to it inside the
    token loop made Numba count references on every token, which doubled
    the time of this pass).  ``text`` needs room for every character plus
    one per word; ``keys``, ``spelled``, ``wst`` and ``wen`` one slot per
    token.
    """
    nt = rows.size - 1
    wrows = np.empty(nt + 1, np.int64)
    wrows[0] = 0
    mask = seen.size // 2 - 1
    n_keys = vocab_size + EXTRA_KEYS
    k = 0
    r = 0
    w = 0
    u = 0  # keys in the table
    for t in range(nt):
        while 2 * min(u + rows[t + 1] - rows[t], n_keys) > mask:  # it could fill up: double it
            seen = _grown_table(seen, stamp, spelled)
            mask = seen.size // 2 - 1
        base = bounds[t]
        e = rows[t + 1]
        run_open = False  # the previous token ends a run that may grow
        last_digit = False  # ... with a digit
        q0 = rows[t]  # first token of the word being collected
        for q in range(rows[t], e + 1):
            if q + _SLOT_AHEAD < ids.size:  # the slot lookup is a cache miss: start it early
                ahead = ids[q + _SLOT_AHEAD]
                if ahead >= 0:
                    prefetch(slot_of, ahead)
            g = False
            if q < e and alnum:  # the run rule, token by token
                s = st[q]
                x = en[q]
                c = cps[base + s]
                if _may_join(c) and x - s == 1:
                    kind = _kind(c)
                    follows = kind == _POINT and q + 1 < e and st[q + 1] == x and en[q + 1] - x == 1 and _kind(cps[base + x]) == _DIGIT
                    g, run_open, last_digit = _glue_rule(kind, run_open and en[q - 1] == s, follows, run_open, last_digit)
                else:
                    run_open = False  # _glue_rule of kind 0, without its branches
            if g or q == q0:
                continue
            # The word is tokens q0 .. q-1.
            wst[w] = st[q0]
            wen[w] = en[q - 1]
            key = np.int64(-1)
            if q == q0 + 1:
                if ids[q0] >= 0:
                    key = np.int64(ids[q0])
                elif en[q0] - st[q0] == 1:
                    c = cps[base + st[q0]]
                    if c < CACHED_CHARS:
                        key = vocab_size + np.int64(c)
                elif en[q0] - st[q0] == 2 and cps[base + st[q0]] == 13 and cps[base + st[q0] + 1] == 10:
                    key = vocab_size + np.int64(CRLF_KEY)  # only keep_whitespace makes such a token
            spell = True
            if key >= 0:
                slot = slot_of[key]
                if slot >= 0:
                    keys[w] = slot
                    spell = False
                else:  # spelled once per call: look for it in the table
                    h = _slot(key, mask)
                    while seen[2 * h] == stamp:
                        if spelled[seen[2 * h + 1]] == key:
                            keys[w] = -1 - seen[2 * h + 1]
                            spell = False
                            break
                        h = (h + 1) & mask
                    if spell:
                        seen[2 * h] = stamp
                        seen[2 * h + 1] = r
                        u += 1
            if spell:
                if r:
                    text[k] = 10
                    k += 1
                for p in range(q0, q):
                    for c in range(base + st[p], base + en[p]):
                        text[k] = cps[c]
                        k += 1
                keys[w] = -1 - r
                spelled[r] = key
                r += 1
            w += 1
            q0 = q
        wrows[t + 1] = w
    return w, wrows, r, k, u, seen


@kernel
def _fill_gaps_into(cps, bounds, ids, st, en, rows, oid, ost, oen, orows):
    """The tokens with the characters between them (the whitespace the
    engine drops) made tokens too, into ``oid``/``ost``/``oen`` (room for
    one token per character) and the row splits ``orows``; returns the
    token count.

    As jieba makes them: each character of a gap is a token of its own
    (id -1), except that ``"\\r"`` followed by ``"\\n"`` is one token.  Every
    character of every text is then in exactly one token.
    """
    k = 0
    orows[0] = 0
    for t in range(rows.size - 1):
        base = bounds[t]
        n = bounds[t + 1] - base
        e = rows[t + 1]
        pos = 0
        for q in range(rows[t], e + 1):
            nxt = st[q] if q < e else n
            while pos < nxt:
                step = 2 if cps[base + pos] == 13 and pos + 1 < nxt and cps[base + pos + 1] == 10 else 1
                oid[k] = -1
                ost[k] = pos
                oen[k] = pos + step
                k += 1
                pos += step
            if q < e:
                oid[k] = ids[q]
                ost[k] = st[q]
                oen[k] = en[q]
                k += 1
                pos = en[q]
        orows[t + 1] = k
    return k


@kernel
def fill_gaps(cps, bounds, ids, st, en, rows):
    """A batch's tokens with its whitespace made tokens (see
    :func:`_fill_gaps_into`): ``(ids, starts, ends, rows)``, new arrays."""
    cap = cps.size + 1
    oid, ost, oen = np.empty(cap, np.int32), np.empty(cap, np.int32), np.empty(cap, np.int32)
    orows = np.empty(rows.size, np.int64)
    k = _fill_gaps_into(cps, bounds, ids, st, en, rows, oid, ost, oen, orows)
    return oid[:k], ost[:k], oen[:k], orows


#: ``mode`` codes of :func:`segment_one`.
FORWARD, BACKWARD, BIDIRECTIONAL = 0, 1, 2


@kernel
def segment_one(cps, fauto, bauto, mode, flags, alnum, vocab_size, keep_ws, slot_of, seen, stamp, scratch):
    """One text from code points to words, in one compiled call.

    Segments ``cps`` forward with ``fauto``, backward with ``bauto`` or both
    (``mode``: :data:`FORWARD`, :data:`BACKWARD`, :data:`BIDIRECTIONAL`),
    with ``keep_ws`` makes the whitespace between them tokens too
    (:func:`_fill_gaps_into`, into the direction's rows that are free),
    then runs :func:`word_keys`.  ``scratch`` is the calling thread's int32
    array of 13 rows of at least ``2 * cps.size + 16``: rows 0-3 and 4-7
    the forward and backward tokens, then the words' keys, the keys of the
    words spelled, the spelled code points, and the words' starts and ends.
    Returns ``(w, r, k, u)`` of :func:`word_keys` (the table never grows
    for a text of at most 16,384 characters).  A per-text call of the batch path
    spends tens of microseconds in NumPy calls on tiny arrays and in the
    dispatch of several compiled calls; this is one.
    """
    bounds = np.empty(2, np.int64)
    bounds[0] = 0
    bounds[1] = cps.size
    fout = scratch[0:4]
    bout = scratch[4:8]
    kf = segment_text_into(cps, fauto, flags, fout, False) if mode != BACKWARD else 0
    kb = segment_text_into(cps, bauto, flags, bout, True) if mode != FORWARD else 0
    rows = np.empty(2, np.int64)
    rows[0] = 0
    rows[1] = kb if mode == BACKWARD else kf
    if mode == FORWARD:
        ids, st, en = fout[0, :kf], fout[1, :kf], fout[2, :kf]
    elif mode == BACKWARD:
        ids, st, en = bout[0, :kb], bout[1, :kb], bout[2, :kb]
    else:
        brows = np.empty(2, np.int64)
        brows[0] = 0
        brows[1] = kb
        ids, st, en, rows = choose_bidirectional(fout[0, :kf], fout[1, :kf], fout[2, :kf], rows,
                                                 bout[0, :kb], bout[1, :kb], bout[2, :kb], brows)
    if keep_ws:
        o = 4 if mode == FORWARD else 0  # rows no longer needed (at least cps.size + 16 wide)
        orows = np.empty(2, np.int64)
        kw = _fill_gaps_into(cps, bounds, ids, st, en, rows, scratch[o], scratch[o + 1], scratch[o + 2], orows)
        ids, st, en, rows = scratch[o, :kw], scratch[o + 1, :kw], scratch[o + 2, :kw], orows
    w, wrows, r, k, u, seen = word_keys(cps, bounds, ids, st, en, rows, alnum, vocab_size, slot_of, seen, stamp,
                                        scratch[8], scratch[10], scratch[9], scratch[11], scratch[12])
    return w, r, k, u
