"""Compiled kernels of the byte-level BPE trainer.

Reference counts: passing arrays to a helper, and rebinding an array
variable inside a loop, leave atomic increments and decrements of the arrays'
reference counts in the loop (perf showed a quarter of the merge loop's time
in ``NRT_incref``/``NRT_decref`` from ``inline="always"`` heap comparisons
taking arrays, and from tables grown inside the first pass). So the hottest
code calls only scalar helpers, heap push/pop are plain calls made once per
push or pop, and arrays grow only between loops.

Counting
    :func:`count_segments` runs the GPT-2 matcher over whole batches of
    segments (UTF-8 bytes, ``starts``/``ends``) and counts every pre-token in
    an open-addressing hash table keyed by its bytes: the bytes live once in an
    arena, the table holds (hash, offset, length, count). No Python object is
    made per pre-token. With several counting threads (a table each),
    :func:`add_known` and :func:`gather_entries` add the tables up on the
    same threads, each taking a share of a table's slots.

Merging
    :func:`bpe_merge` is the seed's incremental method: pair counts over the
    unique pre-tokens ("words") weighted by their counts, an inverted index
    pair -> words, and a lazy max-heap of (count, pair). Each word is one
    contiguous stretch ``[length, count, symbols...]`` rewritten in place
    when a merge shortens it; a merge only ever makes pairs that hold its new
    token, so each pair's word list is written once, when the pair is made,
    as one run of a pool in memory order (a listed word that lost the pair
    since is found out by its scan). Words longer than ``long_from`` bytes
    (a long CJK run is a single pre-token) keep the symbol records of the
    position-level method instead, doubly linked, listed by position in the
    same pair lists, so a merge costs O(1) per occurrence however long the
    word. The word 8 list entries ahead is prefetched.

    A heap entry is pushed when a pair is made, and a popped entry whose
    count is out of date is re-pushed with the current count. Counts only
    fall once a pair is made, so only pairs of count >= T need be in the
    heap; the rest wait in a list, and T is halved when the heap runs dry. Ties in count
    go to the pair whose byte strings are greater as a tuple, then (only
    possible when different merges made equal byte strings) to smaller token
    ids; heap entries carry a 64-bit key of each token's first bytes, so the
    bytes themselves are compared only when the keys cannot decide.

    Merging (a, b) -> Z at one occurrence changes four counts: (x, a) and
    (b, y) lose, (x, Z) and (Z, y) gain, x and y being the neighbours (in a
    word scan, x is the already rewritten left neighbour, so "a b a b" nets
    (Z, Z)). Runs of a == b merge left to right from the run's start, as the
    naive definition does.
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel

from ..engine.intrinsics import prefetch as _prefetch
from ..presets.bpe.pretokenize_kernels import gpt2_match_end as match_end
from ..runtime.interrupts import stop_requested

_AHEAD = 8  # list entries read ahead of the one being merged
# FNV-1a in int64 arithmetic (the same bits as the unsigned version)
_FNV_OFFSET = np.int64(14695981039346656037 - 2**64)
_FNV_PRIME = np.int64(1099511628211)


# ------------------------------------------------------------------ counting
def new_table(capacity: int = 1 << 16, arena: int = 1 << 20):
    """Empty pre-token table: (entries, arena, state); ``entries`` holds 4
    int64 per slot (hash, offset, length, count: one cache line holds a
    slot, so a lookup costs one miss, not four); state = [entries used,
    arena bytes used]."""
    return (
        np.zeros(4 * capacity, np.int64),
        np.empty(arena, np.uint8),
        np.zeros(2, np.int64),
    )


@kernel(inline="always")
def _hash(buf, s, e):
    h = _FNV_OFFSET
    for i in range(s, e):
        h = (h ^ np.int64(buf[i])) * _FNV_PRIME
    return h


@kernel
def _rehash(tab):
    cap = len(tab) // 4 * 2
    nt = np.zeros(4 * cap, np.int64)
    for i in range(len(tab) // 4):
        if tab[4 * i + 3] != 0:
            j = tab[4 * i] & (cap - 1)
            while nt[4 * j + 3] != 0:
                j = (j + 1) & (cap - 1)
            nt[4 * j] = tab[4 * i]
            nt[4 * j + 1] = tab[4 * i + 1]
            nt[4 * j + 2] = tab[4 * i + 2]
            nt[4 * j + 3] = tab[4 * i + 3]
    return nt


@kernel
def _reserve(tab, arena, st, entries, nbytes):
    """Grow the table for ``entries`` more entries and ``nbytes`` more arena bytes."""
    while (st[0] + entries) * 2 > len(tab) // 4:
        tab = _rehash(tab)
    used = st[1]
    if used + nbytes > len(arena):
        size = len(arena) * 2
        while used + nbytes > size:
            size *= 2
        grown = np.empty(size, np.uint8)
        grown[:used] = arena[:used]
        arena = grown
    return tab, arena


@kernel(inline="always")
def _insert(src, s, e, h, cnt, tab, arena, st):
    """Add ``cnt`` to the entry of bytes ``src[s:e]`` (hash ``h``); room must
    have been reserved."""
    cap = len(tab) // 4
    n = e - s
    j = h & (cap - 1)
    while tab[4 * j + 3] != 0:
        if tab[4 * j] == h and tab[4 * j + 2] == n:
            o = tab[4 * j + 1]
            same = True
            for k in range(n):
                if arena[o + k] != src[s + k]:
                    same = False
                    break
            if same:
                tab[4 * j + 3] += cnt
                return
        j = (j + 1) & (cap - 1)
    used = st[1]
    for k in range(n):
        arena[used + k] = src[s + k]
    tab[4 * j] = h
    tab[4 * j + 1] = used
    tab[4 * j + 2] = n
    tab[4 * j + 3] = cnt
    st[0] += 1
    st[1] = used + n


@kernel
def count_segments(buf, starts, ends, cls, tab, arena, st):
    """Count the GPT-2 pre-tokens of every segment ``buf[starts[i]:ends[i]]``."""
    nbytes = 0
    for i in range(len(starts)):
        nbytes += ends[i] - starts[i]
    tab, arena = _reserve(tab, arena, st, 0, nbytes)
    if len(starts) == 0:
        return tab, arena
    pos = np.empty(2, np.int64)
    pos[0] = 0
    pos[1] = starts[0]
    # the table grows when it is half full, not by the batch's worst case (a
    # new entry per byte): on the benchmark corpus that keeps it at 1M slots
    # (32 MB) instead of 2M
    while not _count_segments(buf, starts, ends, cls, tab, arena, st, pos):
        tab = _rehash(tab)
    return tab, arena


@kernel
def _count_segments(buf, starts, ends, cls, tab, arena, st, pos):
    """The loop of :func:`count_segments` from segment ``pos[0]``, byte
    ``pos[1]``; stops (False, ``pos`` updated) when the table is half full,
    for the caller to grow it: no array is rebound inside this loop."""
    limit = len(tab) // 8
    i = pos[0]
    p = pos[1]
    while i < len(starts):
        end = ends[i]
        while p < end:
            if st[0] >= limit:
                pos[0] = i
                pos[1] = p
                return False
            e = match_end(buf, p, end, cls)
            _insert(buf, p, e, _hash(buf, p, e), 1, tab, arena, st)
            p = e
        i += 1
        if i < len(starts):
            p = starts[i]
    return True


@kernel
def count_pieces(buf, starts, ends, counts, tab, arena, st):
    """Add ``counts[i]`` for the pre-token ``buf[starts[i]:ends[i]]`` (pre-tokens
    found elsewhere, e.g. by a custom pattern)."""
    nbytes = 0
    for i in range(len(starts)):
        nbytes += ends[i] - starts[i]
    tab, arena = _reserve(tab, arena, st, len(starts), nbytes)
    for i in range(len(starts)):
        s = starts[i]
        e = ends[i]
        _insert(buf, s, e, _hash(buf, s, e), counts[i], tab, arena, st)
    return tab, arena


@kernel
def add_known(tab, arena, s_tab, s_arena, lo, hi, new):
    """For every used slot ``i`` of table ``s_tab`` with ``lo <= i < hi``:
    add its count to the entry of the same bytes in ``tab`` if there is one,
    else list ``i`` in ``new``; returns how many were listed.  ``tab`` is
    only read but for the counts of distinct entries (``s_tab``'s keys are
    distinct), so threads given disjoint slot ranges can run at once."""
    cap = len(tab) // 4
    m = 0
    for i in range(lo, hi):
        cnt = s_tab[4 * i + 3]
        if cnt == 0:
            continue
        h = s_tab[4 * i]
        o = s_tab[4 * i + 1]
        n = s_tab[4 * i + 2]
        j = h & (cap - 1)
        found = False
        while tab[4 * j + 3] != 0:
            if tab[4 * j] == h and tab[4 * j + 2] == n:
                oo = tab[4 * j + 1]
                same = True
                for k in range(n):
                    if arena[oo + k] != s_arena[o + k]:
                        same = False
                        break
                if same:
                    tab[4 * j + 3] += cnt
                    found = True
                    break
            j = (j + 1) & (cap - 1)
        if not found:
            new[m] = i
            m += 1
    return m


@kernel
def gather_entries(s_tab, s_arena, idx):
    """The entries ``idx`` of a table as ``(bytes, hashes, lengths, counts)``."""
    total = 0
    for i in idx:
        total += s_tab[4 * i + 2]
    out = np.empty(total, np.uint8)
    hashes = np.empty(idx.size, np.int64)
    lengths = np.empty(idx.size, np.int64)
    counts = np.empty(idx.size, np.int64)
    p = 0
    for j in range(idx.size):
        i = idx[j]
        o = s_tab[4 * i + 1]
        n = s_tab[4 * i + 2]
        out[p : p + n] = s_arena[o : o + n]
        p += n
        hashes[j] = s_tab[4 * i]
        lengths[j] = n
        counts[j] = s_tab[4 * i + 3]
    return out, hashes, lengths, counts


@kernel
def insert_entries(buf, hashes, lengths, counts, tab, arena, st):
    """Insert entries known to be new to the table (from :func:`gather_entries`)."""
    tab, arena = _reserve(tab, arena, st, len(lengths), len(buf))
    s = 0
    for j in range(len(lengths)):
        _insert(buf, s, s + lengths[j], hashes[j], counts[j], tab, arena, st)
        s += lengths[j]
    return tab, arena


# ------------------------------------------------------------------- merging
@kernel(inline="always")
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


@kernel
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


_SIGN = np.int64(-9223372036854775808)


@kernel
def _token_key(tb, off, n):
    """Order key of a token's bytes: the first 7 bytes (zero-padded) and the
    length (capped at 255) as one unsigned number, stored with its top bit
    flipped so that int64 order is that unsigned order. Keys of different
    first 7 bytes order as the bytes do; so do keys of equal first 7 bytes
    when either token is at most 7 bytes long (then it is a prefix of the
    other, or equal); otherwise only a full comparison decides."""
    v = np.int64(0)
    for j in range(7):
        v = (v << 8) | (np.int64(tb[off + j]) if j < n else np.int64(0))
    return ((v << 8) | np.int64(min(n, 255))) ^ _SIGN


@kernel(inline="always")
def _key_cmp(k1, k2):
    """1 or -1 when the keys decide which token's bytes are greater, 0 when
    the bytes are equal, 2 when a full comparison is needed."""
    if (k1 >> 8) != (k2 >> 8):
        return 1 if k1 > k2 else -1
    l1 = k1 & 255
    l2 = k2 & 255
    if l1 <= 7 or l2 <= 7:
        if l1 == l2:
            return 0
        return 1 if l1 > l2 else -1
    return 2


@kernel(inline="always")
def _entry_cmp(c1, ka1, kb1, c2, ka2, kb2):
    """1 when entry 1 comes first, -1 when entry 2 does, 0 when only a full
    comparison of the bytes decides (scalars only: inlining a helper that
    takes arrays costs reference-count updates at every use)."""
    if c1 != c2:
        return 1 if c1 > c2 else -1
    r = _key_cmp(ka1, ka2)
    if r == 0:
        r = _key_cmp(kb1, kb2)
    if r == 1 or r == -1:
        return r
    return 0


@kernel
def _heap_push(h, n, c, ka, kb, q, p_a, p_b, tb, tb_off, tb_len):
    """Entries are 4 int64 each, in one array (one cache line holds one):
    count, key of the first token, key of the second, pair id. Not inlined:
    called once per push, it keeps the arrays' reference counts out of its
    loop."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        r = _entry_cmp(c, ka, kb, h[4 * parent], h[4 * parent + 1], h[4 * parent + 2])
        if r == 1 or (r == 0 and _tie(q, h[4 * parent + 3], p_a, p_b, tb, tb_off, tb_len)):
            h[4 * i] = h[4 * parent]
            h[4 * i + 1] = h[4 * parent + 1]
            h[4 * i + 2] = h[4 * parent + 2]
            h[4 * i + 3] = h[4 * parent + 3]
            i = parent
        else:
            break
    h[4 * i] = c
    h[4 * i + 1] = ka
    h[4 * i + 2] = kb
    h[4 * i + 3] = q
    return n + 1


@kernel
def _heap_pop(h, n, p_a, p_b, tb, tb_off, tb_len):
    """Remove the top (caller reads it first); return the new size."""
    n -= 1
    c = h[4 * n]
    ka = h[4 * n + 1]
    kb = h[4 * n + 2]
    q = h[4 * n + 3]
    i = 0
    while True:
        l = 2 * i + 1
        if l >= n:
            break
        r = l + 1
        best = l
        if r < n:
            t = _entry_cmp(h[4 * r], h[4 * r + 1], h[4 * r + 2], h[4 * l], h[4 * l + 1], h[4 * l + 2])
            if t == 1 or (t == 0 and _tie(h[4 * r + 3], h[4 * l + 3], p_a, p_b, tb, tb_off, tb_len)):
                best = r
        t = _entry_cmp(h[4 * best], h[4 * best + 1], h[4 * best + 2], c, ka, kb)
        if t == -1 or (t == 0 and not _tie(h[4 * best + 3], q, p_a, p_b, tb, tb_off, tb_len)):
            break
        h[4 * i] = h[4 * best]
        h[4 * i + 1] = h[4 * best + 1]
        h[4 * i + 2] = h[4 * best + 2]
        h[4 * i + 3] = h[4 * best + 3]
        i = best
    if n > 0:
        h[4 * i] = c
        h[4 * i + 1] = ka
        h[4 * i + 2] = kb
        h[4 * i + 3] = q
    return n


@kernel(inline="always")
def _slot(ph_key, key):
    cap = len(ph_key)
    h = np.uint64(key)
    h = (h ^ (h >> np.uint64(31))) * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(29))
    j = np.int64(h & np.uint64(cap - 1))
    while ph_key[j] != key and ph_key[j] != -1:
        j = (j + 1) & (cap - 1)
    return j


@kernel
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


@kernel
def _grow(a, need):
    if need <= len(a):
        return a
    size = max(len(a) * 2, 16)
    while size < need:
        size *= 2
    b = np.empty(size, a.dtype)
    b[: len(a)] = a
    return b


@kernel
def _count_pairs(ws, wo, w_cnt, w, long_from, ph_key, ph_val, p_a, p_b, p_cnt, p_len, p_last, pos_pid, st):
    """First pass of :func:`bpe_merge` from word ``w`` on: pair ids, weighted
    counts and list lengths. Stops (returning the word it stopped at) when a
    word might not fit the tables, for the caller to grow them: no array is
    replaced inside this loop."""
    n_pairs = st[0]
    t = st[1]
    nw = len(wo)
    while w < nw:
        o = wo[w]
        n = ws[o]
        if (n_pairs + n) * 2 > len(ph_key) or n_pairs + n > len(p_a):
            break
        c = w_cnt[w]
        for j in range(n - 1):
            key = (np.int64(ws[o + 3 + j]) << 32) | np.int64(ws[o + 4 + j])
            k = _slot(ph_key, key)
            if ph_key[k] == -1:
                ph_key[k] = key
                ph_val[k] = n_pairs
                p_a[n_pairs] = ws[o + 3 + j]
                p_b[n_pairs] = ws[o + 4 + j]
                p_cnt[n_pairs] = 0
                p_len[n_pairs] = 0
                p_last[n_pairs] = -1
                q = n_pairs
                n_pairs += 1
            else:
                q = ph_val[k]
            p_cnt[q] += c
            if p_last[q] != o or n > long_from:  # a long word lists every position
                p_last[q] = o
                p_len[q] += 1
            pos_pid[t + j] = q
        if n > 0:
            t += n - 1
        w += 1
    st[0] = n_pairs
    st[1] = t
    return w


@kernel
def bpe_merge(arena, w_off, w_len, w_cnt, n_base, n_merges, progress, long_from, stop):
    """Run up to ``n_merges`` merges over the words ``arena[w_off[i]:][:w_len[i]]``
    with counts ``w_cnt``; new tokens get ids ``n_base, n_base + 1, ...``.
    Returns (first ids, second ids) of the merges done; ``progress[0]`` is
    kept at the number done so far (read by another thread); ``progress[1:7]``
    count heap pops, stale re-pushes, words visited, heap size, occurrences
    merged and pushes (``progress`` needs 7 entries).  The loop ends early,
    before a merge, once another thread sets ``stop[0]``
    (:func:`segkit.interrupts.stop_requested`).

    Layout: every word is one stretch of int32, ``[length, count low, count
    high, symbols...]``, rewritten in place when a merge shortens it (words
    are pre-tokens: short). The inverted index maps a pair to the words (the
    offsets of their stretches) that held it when the pair was made; a pair
    of two old tokens is never made again later (a merge only makes pairs
    holding its new token), so each pair's list is written once, as one
    contiguous run of a pool, in increasing offset order: a merge reads its
    list sequentially and visits its words in memory order. A listed word
    that no longer holds the pair is found out by its scan.
    """
    nw = len(w_off)
    total = 0
    for w in range(nw):
        total += w_len[w]
    if total + 3 * nw >= 2**31 - 1:
        raise ValueError("more than 2**31 bytes of distinct pre-tokens")
    ws = np.empty(total + 3 * nw, np.int32)
    wo = np.empty(nw, np.int64)
    o = 0
    for w in range(nw):
        n = w_len[w]
        wo[w] = o
        ws[o] = n
        ws[o + 1] = np.int32(w_cnt[w] & 0xFFFFFFFF)
        ws[o + 2] = np.int32(w_cnt[w] >> 32)
        src = w_off[w]
        for j in range(n):
            ws[o + 3 + j] = arena[src + j]
        o += 3 + n

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

    # pairs: hash (a << 32 | b) -> id; per id: a, b, count, its run of the pool
    ph_key = np.full(1 << 16, -1, np.int64)
    ph_val = np.empty(1 << 16, np.int64)
    np_cap = 1 << 15
    p_a = np.empty(np_cap, np.int32)
    p_b = np.empty(np_cap, np.int32)
    p_cnt = np.zeros(np_cap, np.int64)
    p_start = np.zeros(np_cap, np.int64)
    p_len = np.zeros(np_cap, np.int64)
    p_last = np.empty(np_cap, np.int64)  # last word listed (dedupes a word's repeats)
    n_pairs = 0
    pos_pid = np.empty(max(total, 1), np.int32)  # pair id at each position, first pass
    st = np.zeros(2, np.int64)  # pairs made, positions done
    w = 0
    while True:
        w = _count_pairs(ws, wo, w_cnt, w, long_from, ph_key, ph_val, p_a, p_b, p_cnt, p_len, p_last, pos_pid, st)
        if w == nw:
            break
        need = st[0] + ws[wo[w]]
        ph_key, ph_val = _grow_pairs(ph_key, ph_val, need)
        if need > np_cap:
            p_a = _grow(p_a, need)
            p_b = _grow(p_b, need)
            p_cnt = _grow(p_cnt, need)
            p_start = _grow(p_start, need)
            p_len = _grow(p_len, need)
            p_last = _grow(p_last, need)
            np_cap = len(p_a)
    n_pairs = st[0]
    n_list = 0
    for q in range(n_pairs):
        p_start[q] = n_list
        n_list += p_len[q]
        p_len[q] = 0
        p_last[q] = -1
    pool = np.empty(max(2 * n_list, 16), np.int32)
    # long words: one record of four int32 per position (symbol, previous,
    # next, word), doubly linked, listed by position (entry -1 - position)
    n_long = 0
    for w in range(nw):
        if w_len[w] > long_from:
            n_long += w_len[w]
    if n_long >= 2**29:
        raise ValueError("more than 2**29 bytes of long distinct pre-tokens")
    rec = np.empty(4 * max(n_long, 1), np.int32)
    t = 0
    r = 0
    for w in range(nw):
        o = wo[w]
        n = ws[o]
        if n > long_from:
            for j in range(n):
                rec[4 * (r + j)] = ws[o + 3 + j]
                rec[4 * (r + j) + 1] = r + j - 1 if j > 0 else -1
                rec[4 * (r + j) + 2] = r + j + 1 if j < n - 1 else -1
                rec[4 * (r + j) + 3] = w
            for j in range(n - 1):
                q = pos_pid[t + j]
                pool[p_start[q] + p_len[q]] = -1 - (r + j)
                p_len[q] += 1
            ws[o] = 0  # the stretch is not used again
            r += n
        else:
            for j in range(n - 1):
                q = pos_pid[t + j]
                if p_last[q] != o:
                    p_last[q] = o
                    pool[p_start[q] + p_len[q]] = o
                    p_len[q] += 1
        if n > 0:
            t += n - 1
    pos_pid = np.empty(1, np.int32)  # free it before the loop

    tk = np.zeros(V, np.int64)  # order keys of the tokens' bytes
    for i in range(256):
        tk[i] = _token_key(tb, i, 1)
    # The heap holds the pairs of count >= T (lazily: an entry may be stale),
    # the list ``low`` those below; as counts only fall once a pair is made,
    # the heap's best valid entry of count >= T is the best of all. When the
    # heap has none, T is halved and the low pairs that reach it move up.
    # Most pairs are rare and never leave ``low``: the heap stays small
    # enough for the cache.
    max_cnt = 0
    for q in range(n_pairs):
        max_cnt = max(max_cnt, p_cnt[q])
    T = max_cnt >> 6
    low = np.empty(max(np_cap, 16), np.int64)
    n_low = 0
    n_big = 0
    for q in range(n_pairs):
        if p_cnt[q] >= T:
            n_big += 1
    h = np.empty(4 * max(n_big, 16), np.int64)
    hn = 0
    for q in range(n_pairs):
        if p_cnt[q] >= T:
            hn = _heap_push(h, hn, p_cnt[q], tk[p_a[q]], tk[p_b[q]], q, p_a, p_b, tb, tb_off, tb_len)
        else:
            low[n_low] = q
            n_low += 1

    # per step, by neighbour token: ids of the pairs (x, a), (b, y) that lose and
    # (x, Z), (Z, y) that are made; valid where the stamp is the step number.
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
    # (pair, word) entries made in one step, before they are grouped by pair.
    # A word gets at most one entry per pair of its new symbols that holds Z:
    # fewer than its length, so a step makes fewer than ``total`` entries (and
    # the arrays never need to grow inside the loop, where replacing an array
    # would cost reference-count updates on every iteration)
    sb_q = np.empty(max(total, 1), np.int32)
    sb_o = np.empty(max(total, 1), np.int32)
    done = 0
    while done < n_merges:
        if stop_requested(stop):
            break
        # the best live pair
        pid = -1
        while True:
            if hn == 0 or h[0] < T:
                if T == 0:
                    break  # no pair left
                T >>= 1
                if 4 * (hn + n_low) > len(h):
                    h = _grow(h, 4 * (hn + n_low))
                kept = 0
                for i in range(n_low):
                    q = low[i]
                    if p_cnt[q] >= T and p_cnt[q] > 0:
                        hn = _heap_push(h, hn, p_cnt[q], tk[p_a[q]], tk[p_b[q]], q, p_a, p_b, tb, tb_off, tb_len)
                    elif p_cnt[q] > 0:
                        low[kept] = q
                        kept += 1
                n_low = kept
                continue
            c = h[0]
            ka = h[1]
            kb = h[2]
            q = h[3]
            hn = _heap_pop(h, hn, p_a, p_b, tb, tb_off, tb_len)
            progress[1] += 1
            if p_cnt[q] <= 0:
                continue
            if p_cnt[q] != c:
                if p_cnt[q] >= T:
                    hn = _heap_push(h, hn, p_cnt[q], ka, kb, q, p_a, p_b, tb, tb_off, tb_len)
                else:
                    low[n_low] = q
                    n_low += 1
                progress[2] += 1
                continue
            pid = q
            break
        if pid == -1:
            break
        a = np.int64(p_a[pid])
        b = np.int64(p_b[pid])
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
        tk[Z] = _token_key(tb, tb_used, la + lb)
        tb_used += la + lb
        done += 1
        # reserve room for the pairs this step can make (each holds Z and one
        # of at most Z + 1 other tokens, on either side), so that no array is
        # replaced inside the loop below
        first = n_pairs
        if n_pairs + 2 * (Z + 1) > np_cap:
            p_a = _grow(p_a, n_pairs + 2 * (Z + 1))
            p_b = _grow(p_b, n_pairs + 2 * (Z + 1))
            p_cnt = _grow(p_cnt, n_pairs + 2 * (Z + 1))
            p_start = _grow(p_start, n_pairs + 2 * (Z + 1))
            p_len = _grow(p_len, n_pairs + 2 * (Z + 1))
            p_last = _grow(p_last, n_pairs + 2 * (Z + 1))
            np_cap = len(p_a)
        nb = 0
        s0 = p_start[pid]
        s1 = s0 + p_len[pid]
        for li in range(s0, s1):
            if li + _AHEAD < s1:  # the words visited next: their loads overlap this one's work
                e = np.int64(pool[li + _AHEAD])
                if e >= 0:
                    _prefetch(ws, e)
                    _prefetch(ws, e + 16)  # a word may run into the next line
                else:
                    _prefetch(rec, 4 * (-1 - e))
            o = np.int64(pool[li])
            if o < 0:  # a position in a long word: O(1) however long the word
                p = -1 - o
                progress[3] += 1
                if rec[4 * p] != a or rec[4 * p + 2] == -1 or rec[4 * rec[4 * p + 2]] != b:
                    continue  # stale: this occurrence was merged or changed
                if a == b:
                    # a run of equal symbols merges left to right from its start
                    while rec[4 * p + 1] != -1 and rec[4 * rec[4 * p + 1]] == a:
                        p = rec[4 * p + 1]
                while True:
                    qn = np.int64(rec[4 * p + 2])
                    c = w_cnt[rec[4 * p + 3]]
                    progress[5] += 1
                    p_cnt[pid] -= c
                    xp = np.int64(rec[4 * p + 1])
                    yp = np.int64(rec[4 * qn + 2])
                    for side in range(2):
                        if side == 0:
                            if xp == -1:
                                continue
                            x = np.int64(rec[4 * xp])
                            if x == Z:  # (Z, a): made this step
                                old = rn_pid[a]
                            else:
                                if lo_stamp[x] != done:
                                    lo_stamp[x] = done
                                    lo_pid[x] = ph_val[_slot(ph_key, (x << 32) | a)]
                                old = lo_pid[x]
                            if ln_stamp[x] != done:
                                ln_stamp[x] = done
                                ln_pid[x] = n_pairs
                                p_a[n_pairs] = np.int32(x)
                                p_b[n_pairs] = np.int32(Z)
                                p_cnt[n_pairs] = 0
                                p_len[n_pairs] = 0
                                p_last[n_pairs] = -1
                                n_pairs += 1
                            q = ln_pid[x]
                            at = xp
                        else:
                            if yp == -1:
                                continue
                            y = np.int64(rec[4 * yp])
                            if y == Z:  # (b, Z): made this step; the new pair is (Z, Z)
                                old = ln_pid[b]
                                if ln_stamp[Z] != done:
                                    ln_stamp[Z] = done
                                    ln_pid[Z] = n_pairs
                                    p_a[n_pairs] = np.int32(Z)
                                    p_b[n_pairs] = np.int32(Z)
                                    p_cnt[n_pairs] = 0
                                    p_len[n_pairs] = 0
                                    p_last[n_pairs] = -1
                                    n_pairs += 1
                                q = ln_pid[Z]
                            else:
                                if ro_stamp[y] != done:
                                    ro_stamp[y] = done
                                    ro_pid[y] = ph_val[_slot(ph_key, (b << 32) | y)]
                                old = ro_pid[y]
                                if rn_stamp[y] != done:
                                    rn_stamp[y] = done
                                    rn_pid[y] = n_pairs
                                    p_a[n_pairs] = np.int32(Z)
                                    p_b[n_pairs] = np.int32(y)
                                    p_cnt[n_pairs] = 0
                                    p_len[n_pairs] = 0
                                    p_last[n_pairs] = -1
                                    n_pairs += 1
                                q = rn_pid[y]
                            at = p
                        p_cnt[old] -= c
                        p_cnt[q] += c
                        p_len[q] += 1
                        sb_q[nb] = np.int32(q - first)
                        sb_o[nb] = np.int32(-1 - at)
                        nb += 1
                    # the merge itself
                    rec[4 * p] = Z
                    rec[4 * qn] = -1
                    rec[4 * p + 2] = yp
                    if yp != -1:
                        rec[4 * yp + 1] = p
                    if a != b or yp == -1 or rec[4 * yp] != a or rec[4 * yp + 2] == -1 or rec[4 * rec[4 * yp + 2]] != a:
                        break
                    p = yp  # the run of a's goes on
                continue
            n = np.int64(ws[o])
            progress[3] += 1
            c = (np.int64(ws[o + 2]) << 32) | (np.int64(ws[o + 1]) & 0xFFFFFFFF)
            base = o + 3
            i = 0
            k = 0  # symbols written (in place: k <= i)
            prev = np.int64(-1)  # old symbol at i - 1
            last_end = -2  # old index of the second symbol of the last occurrence
            while i < n:
                u = np.int64(ws[base + i])
                if u == a and i + 1 < n and ws[base + i + 1] == b:
                    progress[5] += 1
                    p_cnt[pid] -= c
                    if i > 0 and last_end != i - 1:  # (x, a) loses
                        if lo_stamp[prev] != done:
                            lo_stamp[prev] = done
                            lo_pid[prev] = ph_val[_slot(ph_key, (prev << 32) | a)]
                        p_cnt[lo_pid[prev]] -= c
                    if i + 2 < n:  # (b, y) loses
                        y = np.int64(ws[base + i + 2])
                        if ro_stamp[y] != done:
                            ro_stamp[y] = done
                            ro_pid[y] = ph_val[_slot(ph_key, (b << 32) | y)]
                        p_cnt[ro_pid[y]] -= c
                    if k > 0:  # (x, Z) is made; x may be Z
                        x = np.int64(ws[base + k - 1])
                        if ln_stamp[x] != done:
                            ln_stamp[x] = done
                            ln_pid[x] = n_pairs
                            p_a[n_pairs] = np.int32(x)
                            p_b[n_pairs] = np.int32(Z)
                            p_cnt[n_pairs] = 0
                            p_len[n_pairs] = 0
                            p_last[n_pairs] = -1
                            n_pairs += 1
                        q = ln_pid[x]
                        p_cnt[q] += c
                        if p_last[q] != o:
                            p_last[q] = o
                            p_len[q] += 1
                            sb_q[nb] = np.int32(q - first)
                            sb_o[nb] = np.int32(o)
                            nb += 1
                    ws[base + k] = np.int32(Z)
                    k += 1
                    prev = b
                    last_end = i + 1
                    i += 2
                else:
                    if k > 0 and ws[base + k - 1] == Z:  # (Z, u) is made
                        if rn_stamp[u] != done:
                            rn_stamp[u] = done
                            rn_pid[u] = n_pairs
                            p_a[n_pairs] = np.int32(Z)
                            p_b[n_pairs] = np.int32(u)
                            p_cnt[n_pairs] = 0
                            p_len[n_pairs] = 0
                            p_last[n_pairs] = -1
                            n_pairs += 1
                        q = rn_pid[u]
                        p_cnt[q] += c
                        if p_last[q] != o:
                            p_last[q] = o
                            p_len[q] += 1
                            sb_q[nb] = np.int32(q - first)
                            sb_o[nb] = np.int32(o)
                            nb += 1
                    ws[base + k] = np.int32(u)
                    k += 1
                    prev = u
                    i += 1
            ws[o] = np.int32(k)
        p_cnt[pid] = 0
        p_len[pid] = 0
        # the lists of the pairs made this step: one run each, words in order
        if n_list + nb > len(pool):
            if n_list + nb >= 2**31 - 1:
                raise ValueError("more than 2**31 inverted index entries")
            pool = _grow(pool, n_list + nb)
        for q in range(first, n_pairs):
            p_start[q] = n_list
            n_list += p_len[q]
            p_len[q] = 0
        for e in range(nb):
            q = first + np.int64(sb_q[e])
            pool[p_start[q] + p_len[q]] = sb_o[e]
            p_len[q] += 1
        if (n_pairs + 1) * 2 > len(ph_key):
            ph_key, ph_val = _grow_pairs(ph_key, ph_val, n_pairs + 1)
        if 4 * (hn + n_pairs - first) > len(h):
            h = _grow(h, 4 * (hn + n_pairs - first))
        if n_low + n_pairs - first > len(low):
            low = _grow(low, n_low + n_pairs - first)
        for q in range(first, n_pairs):  # every pair made this step holds Z: all are new
            key = (np.int64(p_a[q]) << 32) | np.int64(p_b[q])
            k = _slot(ph_key, key)
            ph_key[k] = key
            ph_val[k] = q
            if p_cnt[q] >= T and p_cnt[q] > 0:
                hn = _heap_push(h, hn, p_cnt[q], tk[p_a[q]], tk[p_b[q]], q, p_a, p_b, tb, tb_off, tb_len)
                progress[6] += 1
            elif p_cnt[q] > 0:
                low[n_low] = q
                n_low += 1
        progress[4] = hn
        progress[0] = done
    return m_a[:done], m_b[:done]
