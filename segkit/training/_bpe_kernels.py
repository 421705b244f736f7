"""Compiled kernels of the byte-level BPE trainer.

Helpers called in hot loops are ``inline="always"``: a call that passes
arrays costs an atomic increment and decrement of each array's reference
count, which took a third of the merge loop's time before inlining.

Counting
    :func:`count_segments` runs the GPT-2 matcher over whole batches of
    segments (UTF-8 bytes, ``starts``/``ends``) and counts every pre-token in
    an open-addressing hash table keyed by its bytes: the bytes live once in an
    arena, the table holds (hash, offset, length, count). No Python object is
    made per pre-token. :func:`merge_tables` folds one table into another (one
    table per counting thread).

Merging
    :func:`bpe_merge` is the seed's incremental method at the level of
    positions: pair counts over the unique pre-tokens ("words") weighted by
    their counts; the symbols of all words in one array, doubly linked per
    word; an inverted index pair -> positions where the pair was made (a
    linked list per pair; an entry is checked when read and skipped if
    stale); and a lazy max-heap of (count, pair). A heap entry is pushed
    whenever a pair's count grows, so every live pair has an entry at least
    its count; a popped entry whose count is out of date is re-pushed with the
    current count. Ties in count go to the pair whose byte strings are
    greater as a tuple, then (only possible when different merges made equal
    byte strings) to smaller token ids.

    Merging (a, b) -> Z at one occurrence changes four counts: (x, a) and
    (b, y) lose, (x, Z) and (Z, y) gain, x and y being the current
    neighbours (so whichever of "a b a b"'s occurrences goes first, the net
    is (Z, Z)). Runs of a == b merge left to right from the run's start,
    as the naive definition does. A merge costs O(1) per occurrence, however
    long the word (Chinese or Japanese sentences are single pre-tokens).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .gpt2_pretokenize import match_end

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


# ------------------------------------------------------------------ counting
def new_table(capacity: int = 1 << 16, arena: int = 1 << 20):
    """Empty pre-token table: (hash, offset, length, count, arena, state);
    state = [entries, arena bytes used]."""
    return (
        np.zeros(capacity, np.uint64),
        np.zeros(capacity, np.int64),
        np.zeros(capacity, np.int64),
        np.zeros(capacity, np.int64),
        np.empty(arena, np.uint8),
        np.zeros(2, np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def _hash(buf, s, e):
    h = _FNV_OFFSET
    for i in range(s, e):
        h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _rehash(t_hash, t_off, t_len, t_cnt):
    cap = len(t_hash) * 2
    mask = np.uint64(cap - 1)
    nh = np.zeros(cap, np.uint64)
    no = np.zeros(cap, np.int64)
    nl = np.zeros(cap, np.int64)
    nc = np.zeros(cap, np.int64)
    for i in range(len(t_hash)):
        if t_cnt[i] != 0:
            j = np.int64(t_hash[i] & mask)
            while nc[j] != 0:
                j = (j + 1) & (cap - 1)
            nh[j] = t_hash[i]
            no[j] = t_off[i]
            nl[j] = t_len[i]
            nc[j] = t_cnt[i]
    return nh, no, nl, nc


@njit(cache=True, nogil=True)
def _reserve(t_hash, t_off, t_len, t_cnt, arena, st, entries, nbytes):
    """Grow the table for ``entries`` more entries and ``nbytes`` more arena bytes."""
    while (st[0] + entries) * 2 > len(t_hash):
        t_hash, t_off, t_len, t_cnt = _rehash(t_hash, t_off, t_len, t_cnt)
    used = st[1]
    if used + nbytes > len(arena):
        size = len(arena) * 2
        while used + nbytes > size:
            size *= 2
        grown = np.empty(size, np.uint8)
        grown[:used] = arena[:used]
        arena = grown
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True, inline="always")
def _insert(src, s, e, h, cnt, t_hash, t_off, t_len, t_cnt, arena, st):
    """Add ``cnt`` to the entry of bytes ``src[s:e]`` (hash ``h``); room must
    have been reserved."""
    cap = len(t_hash)
    n = e - s
    j = np.int64(h & np.uint64(cap - 1))
    while t_cnt[j] != 0:
        if t_hash[j] == h and t_len[j] == n:
            o = t_off[j]
            same = True
            for k in range(n):
                if arena[o + k] != src[s + k]:
                    same = False
                    break
            if same:
                t_cnt[j] += cnt
                return
        j = (j + 1) & (cap - 1)
    used = st[1]
    for k in range(n):
        arena[used + k] = src[s + k]
    t_hash[j] = h
    t_off[j] = used
    t_len[j] = n
    t_cnt[j] = cnt
    st[0] += 1
    st[1] = used + n


@njit(cache=True, nogil=True)
def count_segments(buf, starts, ends, cls, t_hash, t_off, t_len, t_cnt, arena, st):
    """Count the GPT-2 pre-tokens of every segment ``buf[starts[i]:ends[i]]``."""
    nbytes = 0
    for i in range(len(starts)):
        nbytes += ends[i] - starts[i]
    t_hash, t_off, t_len, t_cnt, arena = _reserve(t_hash, t_off, t_len, t_cnt, arena, st, nbytes, nbytes)
    for i in range(len(starts)):
        p = starts[i]
        end = ends[i]
        while p < end:
            e = match_end(buf, p, end, cls)
            _insert(buf, p, e, _hash(buf, p, e), 1, t_hash, t_off, t_len, t_cnt, arena, st)
            p = e
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True)
def count_pieces(buf, starts, ends, counts, t_hash, t_off, t_len, t_cnt, arena, st):
    """Add ``counts[i]`` for the pre-token ``buf[starts[i]:ends[i]]`` (pre-tokens
    found elsewhere, e.g. by a custom pattern)."""
    nbytes = 0
    for i in range(len(starts)):
        nbytes += ends[i] - starts[i]
    t_hash, t_off, t_len, t_cnt, arena = _reserve(t_hash, t_off, t_len, t_cnt, arena, st, len(starts), nbytes)
    for i in range(len(starts)):
        s = starts[i]
        e = ends[i]
        _insert(buf, s, e, _hash(buf, s, e), counts[i], t_hash, t_off, t_len, t_cnt, arena, st)
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True)
def merge_tables(t_hash, t_off, t_len, t_cnt, arena, st, s_hash, s_off, s_len, s_cnt, s_arena):
    """Fold the counts of table ``s_*`` into table ``t_*``."""
    entries = 0
    nbytes = 0
    for i in range(len(s_hash)):
        if s_cnt[i] != 0:
            entries += 1
            nbytes += s_len[i]
    t_hash, t_off, t_len, t_cnt, arena = _reserve(t_hash, t_off, t_len, t_cnt, arena, st, entries, nbytes)
    for i in range(len(s_hash)):
        if s_cnt[i] != 0:
            o = s_off[i]
            _insert(s_arena, o, o + s_len[i], s_hash[i], s_cnt[i], t_hash, t_off, t_len, t_cnt, arena, st)
    return t_hash, t_off, t_len, t_cnt, arena


# ------------------------------------------------------------------- merging
@njit(cache=True, nogil=True, inline="always")
def _bytes_cmp(tb, tb_off, tb_len, x, y):
    if x == y:
        return 0
    ox = tb_off[x]
    oy = tb_off[y]
    lx = tb_len[x]
    ly = tb_len[y]
    n = lx if lx < ly else ly
    for k in range(n):
        bx = tb[ox + k]
        by = tb[oy + k]
        if bx != by:
            return 1 if bx > by else -1
    if lx == ly:
        return 0
    return 1 if lx > ly else -1


@njit(cache=True, nogil=True)
def _tie(q1, q2, p_a, p_b, tb, tb_off, tb_len):
    """Between pairs of equal count: does q1 come first? Greater (bytes, bytes)
    wins; equal byte strings (two merges made the same bytes): smaller ids.
    Not inlined on purpose: called only on ties, it keeps the array
    reference-count traffic out of the heap's common path."""
    if q1 == q2:
        return False
    a1 = p_a[q1]
    a2 = p_a[q2]
    r = _bytes_cmp(tb, tb_off, tb_len, a1, a2)
    if r != 0:
        return r > 0
    b1 = p_b[q1]
    b2 = p_b[q2]
    r = _bytes_cmp(tb, tb_off, tb_len, b1, b2)
    if r != 0:
        return r > 0
    if a1 != a2:
        return a1 < a2
    return b1 < b2


@njit(cache=True, nogil=True, inline="always")
def _heap_push(h_cnt, h_pid, n, c, q, p_a, p_b, tb, tb_off, tb_len):
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        cp = h_cnt[parent]
        if c > cp or (c == cp and _tie(q, h_pid[parent], p_a, p_b, tb, tb_off, tb_len)):
            h_cnt[i] = h_cnt[parent]
            h_pid[i] = h_pid[parent]
            i = parent
        else:
            break
    h_cnt[i] = c
    h_pid[i] = q
    return n + 1


@njit(cache=True, nogil=True, inline="always")
def _heap_pop(h_cnt, h_pid, n, p_a, p_b, tb, tb_off, tb_len):
    """Remove the top (caller reads it first); return the new size."""
    n -= 1
    c = h_cnt[n]
    q = h_pid[n]
    i = 0
    while True:
        l = 2 * i + 1
        if l >= n:
            break
        r = l + 1
        best = l
        if r < n:
            cr = h_cnt[r]
            cl = h_cnt[l]
            if cr > cl or (cr == cl and _tie(h_pid[r], h_pid[l], p_a, p_b, tb, tb_off, tb_len)):
                best = r
        cb = h_cnt[best]
        if cb > c or (cb == c and _tie(h_pid[best], q, p_a, p_b, tb, tb_off, tb_len)):
            h_cnt[i] = h_cnt[best]
            h_pid[i] = h_pid[best]
            i = best
        else:
            break
    if n > 0:
        h_cnt[i] = c
        h_pid[i] = q
    return n


@njit(cache=True, nogil=True, inline="always")
def _slot(ph_key, key):
    cap = len(ph_key)
    h = np.uint64(key)
    h = (h ^ (h >> np.uint64(31))) * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(29))
    j = np.int64(h & np.uint64(cap - 1))
    while ph_key[j] != key and ph_key[j] != -1:
        j = (j + 1) & (cap - 1)
    return j


@njit(cache=True, nogil=True)
def _grow_pairs(ph_key, ph_val, need):
    cap = len(ph_key)
    while need * 2 > cap:
        cap *= 2
    if cap == len(ph_key):
        return ph_key, ph_val
    nk = np.full(cap, -1, np.int64)
    nv = np.empty(cap, np.int64)
    for i in range(len(ph_key)):
        if ph_key[i] != -1:
            j = _slot(nk, ph_key[i])
            nk[j] = ph_key[i]
            nv[j] = ph_val[i]
    return nk, nv


@njit(cache=True, nogil=True)
def _grow(a, need):
    if need <= len(a):
        return a
    size = max(len(a) * 2, 16)
    while size < need:
        size *= 2
    b = np.empty(size, a.dtype)
    b[: len(a)] = a
    return b


@njit(cache=True, nogil=True)
def bpe_merge(arena, w_off, w_len, w_cnt, n_base, n_merges, progress):
    """Run up to ``n_merges`` merges over the words ``arena[w_off[i]:][:w_len[i]]``
    with counts ``w_cnt``; new tokens get ids ``n_base, n_base + 1, ...``.
    Returns (first ids, second ids) of the merges done; ``progress[0]`` is
    kept at the number done so far (read by another thread); ``progress[1:7]``
    count heap pops, stale re-pushes, occurrences visited, heap size,
    occurrences merged and pushes (``progress`` needs 7 entries).

    Layout: the symbols of all words in one array, doubly linked per word
    (a merged-away symbol becomes -1), one record of four int32 per position
    (symbol, previous, next, word: one cache line holds a position and its
    neighbours), so a merge
    costs O(1) per occurrence however long the word. The inverted index is,
    per pair, a linked list of the positions where it was made (the
    position of its first symbol); a position is checked before use.
    """
    nw = len(w_off)
    total = 0
    for w in range(nw):
        total += w_len[w]
    if total >= 2**31 - 1:
        raise ValueError("more than 2**31 bytes of distinct pre-tokens")
    rec = np.empty(4 * total, np.int32)  # per position: symbol, previous, next, word
    pos = 0
    for w in range(nw):
        n = w_len[w]
        o = w_off[w]
        for j in range(n):
            rec[4 * (pos + j)] = arena[o + j]
            rec[4 * (pos + j) + 1] = pos + j - 1 if j > 0 else -1
            rec[4 * (pos + j) + 2] = pos + j + 1 if j < n - 1 else -1
            rec[4 * (pos + j) + 3] = w
        pos += n

    # bytes of every token, for the tie rule
    V = n_base + n_merges
    tb_off = np.zeros(V, np.int64)
    tb_len = np.zeros(V, np.int64)
    tb = np.empty(1 << 16, np.uint8)
    for i in range(256):
        tb[i] = i
        tb_off[i] = i
        tb_len[i] = 1
    tb_used = 256

    # pairs: hash (a << 32 | b) -> id; per id: a, b, count, head of its occurrence list
    ph_key = np.full(1 << 16, -1, np.int64)
    ph_val = np.empty(1 << 16, np.int64)
    np_cap = 1 << 15
    p_a = np.empty(np_cap, np.int32)
    p_b = np.empty(np_cap, np.int32)
    p_cnt = np.zeros(np_cap, np.int64)
    p_head = np.empty(np_cap, np.int64)
    p_len = np.zeros(np_cap, np.int64)  # entries in the pair's position list (a bound on its occurrences)
    n_pairs = 0
    # (position, next) per entry; entries of a merged pair's list are recycled
    occ = np.empty(2 * max(total, 16), np.int32)
    free = -1  # head of the list of recycled entries
    n_free = 0
    n_occ = 0

    for i in range(total):
        if rec[4 * (i) + 2] == -1:
            continue
        key = (np.int64(rec[4 * (i)]) << 32) | np.int64(rec[4 * (i + 1)])
        if (n_pairs + 1) * 2 > len(ph_key):
            ph_key, ph_val = _grow_pairs(ph_key, ph_val, n_pairs + 1)
        k = _slot(ph_key, key)
        if ph_key[k] == -1:
            if n_pairs == np_cap:
                p_a = _grow(p_a, n_pairs + 1)
                p_b = _grow(p_b, n_pairs + 1)
                p_cnt = _grow(p_cnt, n_pairs + 1)
                p_head = _grow(p_head, n_pairs + 1)
                p_len = _grow(p_len, n_pairs + 1)
                np_cap = len(p_a)
            ph_key[k] = key
            ph_val[k] = n_pairs
            p_a[n_pairs] = rec[4 * (i)]
            p_b[n_pairs] = rec[4 * (i + 1)]
            p_cnt[n_pairs] = 0
            p_head[n_pairs] = -1
            p_len[n_pairs] = 0
            q = n_pairs
            n_pairs += 1
        else:
            q = ph_val[k]
        p_cnt[q] += w_cnt[rec[4 * (i) + 3]]
        occ[2 * n_occ] = i
        occ[2 * n_occ + 1] = p_head[q]
        p_head[q] = n_occ
        p_len[q] += 1
        n_occ += 1

    h_cnt = np.empty(max(n_pairs, 16), np.int64)
    h_pid = np.empty(max(n_pairs, 16), np.int64)
    hn = 0
    for q in range(n_pairs):
        hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)

    # per step, by neighbour token: ids of the pairs (x, a), (b, y) that lose and
    # (x, Z), (Z, y) that are made; valid where the stamp is the step number.
    # (Z, Z) always lives in the left map.
    lo_stamp = np.full(V, -1, np.int64)
    lo_pid = np.empty(V, np.int64)
    ro_stamp = np.full(V, -1, np.int64)
    ro_pid = np.empty(V, np.int64)
    ln_stamp = np.full(V, -1, np.int64)
    ln_pid = np.empty(V, np.int64)
    rn_stamp = np.full(V, -1, np.int64)
    rn_pid = np.empty(V, np.int64)

    m_a = np.empty(n_merges, np.int32)
    m_b = np.empty(n_merges, np.int32)
    touched = np.empty(1 << 10, np.int64)
    done = 0
    while done < n_merges:
        # the best live pair
        pid = -1
        while hn > 0:
            c = h_cnt[0]
            q = h_pid[0]
            hn = _heap_pop(h_cnt, h_pid, hn, p_a, p_b, tb, tb_off, tb_len)
            progress[1] += 1
            if p_cnt[q] <= 0:
                continue
            if p_cnt[q] != c:
                hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)
                progress[2] += 1
                continue
            pid = q
            break
        if pid == -1:
            break
        a = p_a[pid]
        b = p_b[pid]
        Z = n_base + done
        m_a[done] = a
        m_b[done] = b
        la = tb_len[a]
        lb = tb_len[b]
        if tb_used + la + lb > len(tb):
            tb = _grow(tb, tb_used + la + lb)
        tb[tb_used : tb_used + la] = tb[tb_off[a] : tb_off[a] + la]
        tb[tb_used + la : tb_used + la + lb] = tb[tb_off[b] : tb_off[b] + lb]
        tb_off[Z] = tb_used
        tb_len[Z] = la + lb
        tb_used += la + lb
        done += 1
        nt = 0
        # reserve room for all this step can make (two pairs, two list entries
        # and two heap entries per occurrence), so that no array is replaced
        # inside the loop below: a replaced array would cost reference-count
        # updates on every iteration
        k2 = 2 * p_len[pid]
        if n_pairs + k2 > np_cap:
            p_a = _grow(p_a, n_pairs + k2)
            p_b = _grow(p_b, n_pairs + k2)
            p_cnt = _grow(p_cnt, n_pairs + k2)
            p_head = _grow(p_head, n_pairs + k2)
            p_len = _grow(p_len, n_pairs + k2)
            np_cap = len(p_a)
        if k2 > len(touched):
            touched = _grow(touched, k2)
        if n_free < k2 and 2 * (n_occ + k2) > len(occ):
            if n_occ + k2 >= 2**31 - 1:
                raise ValueError("more than 2**31 pair occurrences")
            occ = _grow(occ, 2 * (n_occ + k2))
        if hn + k2 > len(h_cnt):
            h_cnt = _grow(h_cnt, hn + k2)
            h_pid = _grow(h_pid, hn + k2)
        p_len[pid] = 0

        node = p_head[pid]
        p_head[pid] = -1
        while node != -1:
            p = np.int64(occ[2 * node])
            here = node
            node = np.int64(occ[2 * node + 1])
            occ[2 * here + 1] = free  # recycle the entry
            free = here
            n_free += 1
            progress[3] += 1
            if rec[4 * (p)] != a or rec[4 * (p) + 2] == -1 or rec[4 * (rec[4 * (p) + 2])] != b:
                continue  # stale: this occurrence was merged or changed
            if a == b:
                # a run of equal symbols merges left to right from its start
                while rec[4 * (p) + 1] != -1 and rec[4 * (rec[4 * (p) + 1])] == a:
                    p = rec[4 * (p) + 1]
            while True:
                qn = np.int64(rec[4 * (p) + 2])
                c = w_cnt[rec[4 * (p) + 3]]
                progress[5] += 1
                p_cnt[pid] -= c
                xp = np.int64(rec[4 * (p) + 1])
                yp = np.int64(rec[4 * (qn) + 2])
                for side in range(2):
                    if side == 0:
                        if xp == -1:
                            continue
                        x = np.int64(rec[4 * (xp)])
                        if x == Z:  # (Z, a): made this step
                            old = rn_pid[a]
                        else:
                            if lo_stamp[x] != done:
                                lo_stamp[x] = done
                                lo_pid[x] = ph_val[_slot(ph_key, (x << 32) | np.int64(a))]
                            old = lo_pid[x]
                        fresh = ln_stamp[x] != done
                        if fresh:
                            ln_stamp[x] = done
                            ln_pid[x] = n_pairs
                            key = (x << 32) | np.int64(Z)
                        q = ln_pid[x]
                        at = xp
                    else:
                        if yp == -1:
                            continue
                        y = np.int64(rec[4 * (yp)])
                        if y == Z:  # (b, Z): made this step; then the new pair is (Z, Z)
                            old = ln_pid[b]
                            fresh = ln_stamp[Z] != done
                            if fresh:
                                ln_stamp[Z] = done
                                ln_pid[Z] = n_pairs
                                key = (np.int64(Z) << 32) | np.int64(Z)
                            q = ln_pid[Z]
                        else:
                            if ro_stamp[y] != done:
                                ro_stamp[y] = done
                                ro_pid[y] = ph_val[_slot(ph_key, (np.int64(b) << 32) | y)]
                            old = ro_pid[y]
                            fresh = rn_stamp[y] != done
                            if fresh:
                                rn_stamp[y] = done
                                rn_pid[y] = n_pairs
                                key = (np.int64(Z) << 32) | y
                            q = rn_pid[y]
                        at = p
                    if fresh:
                        p_a[n_pairs] = np.int32(key >> 32)
                        p_b[n_pairs] = np.int32(key & 0xFFFFFFFF)
                        p_cnt[n_pairs] = 0
                        p_head[n_pairs] = -1
                        p_len[n_pairs] = 0
                        touched[nt] = n_pairs
                        nt += 1
                        n_pairs += 1
                    p_cnt[old] -= c
                    p_cnt[q] += c
                    if free != -1:
                        e = free
                        free = np.int64(occ[2 * e + 1])
                        n_free -= 1
                    else:
                        e = n_occ
                        n_occ += 1
                    occ[2 * e] = at
                    occ[2 * e + 1] = p_head[q]
                    p_head[q] = e
                    p_len[q] += 1
                # the merge itself
                rec[4 * (p)] = Z
                rec[4 * (qn)] = -1
                rec[4 * (p) + 2] = yp
                if yp != -1:
                    rec[4 * (yp) + 1] = p
                if a != b or yp == -1 or rec[4 * (yp)] != a or rec[4 * (yp) + 2] == -1 or rec[4 * (rec[4 * (yp) + 2])] != a:
                    break
                p = yp  # the run of a's goes on
        if (n_pairs + 1) * 2 > len(ph_key):
            ph_key, ph_val = _grow_pairs(ph_key, ph_val, n_pairs + 1)
        for i in range(nt):  # every pair made this step holds the new token: all are new
            q = touched[i]
            key = (np.int64(p_a[q]) << 32) | np.int64(p_b[q])
            k = _slot(ph_key, key)
            ph_key[k] = key
            ph_val[k] = q
            if p_cnt[q] > 0:
                hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)
                progress[6] += 1
        progress[4] = hn
        progress[0] = done
    return m_a[:done], m_b[:done]
