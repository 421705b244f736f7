"""Compiled kernels of the byte-level BPE trainer.

Counting
    :func:`count_segments` runs the GPT-2 matcher over whole batches of
    segments (UTF-8 bytes, ``starts``/``ends``) and counts every pre-token in
    an open-addressing hash table keyed by its bytes: the bytes live once in an
    arena, the table holds (hash, offset, length, count). No Python object is
    made per pre-token. :func:`merge_tables` folds one table into another (one
    table per counting thread).

Merging
    :func:`bpe_merge` is the seed's incremental method: pair counts over the
    unique pre-tokens ("words") weighted by their counts, an inverted index
    pair -> words (a linked list per pair, appended to when a word gains the
    pair; stale entries are skipped when read), and a lazy max-heap of
    (count, pair). A heap entry is pushed whenever a pair's count grows, so
    every live pair has an entry at least its count; a popped entry whose count
    is out of date is re-pushed with the current count. Ties in count go to
    the pair whose byte strings are greater as a tuple, then (only possible
    when different merges made equal byte strings) to smaller token ids.
    Each merge visits only the words that hold the pair and, within them,
    changes only the counts of the pairs beside each occurrence: (x, a) and
    (b, y) lose, (x, Z) and (Z, y) gain, where x is the symbol before *as
    already merged* (so "a b a b" correctly nets (Z, Z)).
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
def _insert(src, s, e, h, cnt, t_hash, t_off, t_len, t_cnt, arena, st):
    """Add ``cnt`` to the entry of bytes ``src[s:e]`` (hash ``h``); returns the
    (possibly reallocated) table arrays."""
    if (st[0] + 1) * 2 > len(t_hash):
        t_hash, t_off, t_len, t_cnt = _rehash(t_hash, t_off, t_len, t_cnt)
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
                return t_hash, t_off, t_len, t_cnt, arena
        j = (j + 1) & (cap - 1)
    used = st[1]
    if used + n > len(arena):
        size = len(arena) * 2
        while used + n > size:
            size *= 2
        grown = np.empty(size, np.uint8)
        grown[:used] = arena[:used]
        arena = grown
    for k in range(n):
        arena[used + k] = src[s + k]
    t_hash[j] = h
    t_off[j] = used
    t_len[j] = n
    t_cnt[j] = cnt
    st[0] += 1
    st[1] = used + n
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True)
def count_segments(buf, starts, ends, cls, t_hash, t_off, t_len, t_cnt, arena, st):
    """Count the GPT-2 pre-tokens of every segment ``buf[starts[i]:ends[i]]``."""
    for i in range(len(starts)):
        p = starts[i]
        end = ends[i]
        while p < end:
            e = match_end(buf, p, end, cls)
            t_hash, t_off, t_len, t_cnt, arena = _insert(
                buf, p, e, _hash(buf, p, e), 1, t_hash, t_off, t_len, t_cnt, arena, st
            )
            p = e
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True)
def count_pieces(buf, starts, ends, counts, t_hash, t_off, t_len, t_cnt, arena, st):
    """Add ``counts[i]`` for the pre-token ``buf[starts[i]:ends[i]]`` (pre-tokens
    found elsewhere, e.g. by a custom pattern)."""
    for i in range(len(starts)):
        s = starts[i]
        e = ends[i]
        t_hash, t_off, t_len, t_cnt, arena = _insert(
            buf, s, e, _hash(buf, s, e), counts[i], t_hash, t_off, t_len, t_cnt, arena, st
        )
    return t_hash, t_off, t_len, t_cnt, arena


@njit(cache=True, nogil=True)
def merge_tables(t_hash, t_off, t_len, t_cnt, arena, st, s_hash, s_off, s_len, s_cnt, s_arena):
    """Fold the counts of table ``s_*`` into table ``t_*``."""
    for i in range(len(s_hash)):
        if s_cnt[i] != 0:
            o = s_off[i]
            t_hash, t_off, t_len, t_cnt, arena = _insert(
                s_arena, o, o + s_len[i], s_hash[i], s_cnt[i], t_hash, t_off, t_len, t_cnt, arena, st
            )
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
def _better(c1, q1, c2, q2, p_a, p_b, tb, tb_off, tb_len):
    """Does heap entry (c1, q1) come before (c2, q2)?"""
    if c1 != c2:
        return c1 > c2
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


@njit(cache=True, nogil=True)
def _heap_push(h_cnt, h_pid, n, c, q, p_a, p_b, tb, tb_off, tb_len):
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if _better(c, q, h_cnt[parent], h_pid[parent], p_a, p_b, tb, tb_off, tb_len):
            h_cnt[i] = h_cnt[parent]
            h_pid[i] = h_pid[parent]
            i = parent
        else:
            break
    h_cnt[i] = c
    h_pid[i] = q
    return n + 1


@njit(cache=True, nogil=True)
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
        if r < n and _better(h_cnt[r], h_pid[r], h_cnt[l], h_pid[l], p_a, p_b, tb, tb_off, tb_len):
            best = r
        if _better(h_cnt[best], h_pid[best], c, q, p_a, p_b, tb, tb_off, tb_len):
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


@njit(cache=True, nogil=True, inline="always")
def _new_pair(key, ph_key, ph_val, k, n_pairs, p_a, p_b, p_cnt, p_head, p_vis):
    ph_key[k] = key
    ph_val[k] = n_pairs
    p_a[n_pairs] = np.int32(key >> 32)
    p_b[n_pairs] = np.int32(key & 0xFFFFFFFF)
    p_cnt[n_pairs] = 0
    p_head[n_pairs] = -1
    p_vis[n_pairs] = 0
    return n_pairs + 1


@njit(cache=True, nogil=True)
def bpe_merge(arena, w_off, w_len, w_cnt, n_base, n_merges, progress):
    """Run up to ``n_merges`` merges over the words ``arena[w_off[i]:][:w_len[i]]``
    with counts ``w_cnt``; new tokens get ids ``n_base, n_base + 1, ...``.
    Returns (first ids, second ids) of the merges done; ``progress[0]`` is
    kept at the number done so far (read by another thread).

    Memory layout, for cache locality (a merge visits many words): every
    word is one run of int32 in ``wd``: ``[length, stamp, count low, count
    high, token...]``, and words are referred to by the index of their run.
    Callers pass the most frequent words first, so the hot ones share cache.
    The inverted index is a linked list per pair in one array of
    (word, next) links.
    """
    nw = len(w_off)
    total = 0
    for w in range(nw):
        total += w_len[w] + 4
    wd = np.empty(total, np.int32)
    pos = 0
    for w in range(nw):
        n = w_len[w]
        wd[pos] = n
        wd[pos + 1] = 0
        wd[pos + 2] = np.int32(w_cnt[w] & 0xFFFFFFFF)
        wd[pos + 3] = np.int32(w_cnt[w] >> 32)
        o = w_off[w]
        for j in range(n):
            wd[pos + 4 + j] = arena[o + j]
        pos += n + 4

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

    # pairs: hash (a << 32 | b) -> id; per id: a, b, count, list head, visit stamp
    ph_key = np.full(1 << 16, -1, np.int64)
    ph_val = np.empty(1 << 16, np.int64)
    np_cap = 1 << 15
    p_a = np.empty(np_cap, np.int32)
    p_b = np.empty(np_cap, np.int32)
    p_cnt = np.zeros(np_cap, np.int64)
    p_head = np.empty(np_cap, np.int64)
    p_vis = np.zeros(np_cap, np.int64)
    n_pairs = 0
    links = np.empty(1 << 16, np.int64)  # (word, next) at 2i, 2i + 1
    n_links = 0
    vis = 0

    pos = 0
    while pos < total:
        L = np.int64(wd[pos])
        c = (np.int64(wd[pos + 3]) << 32) | (np.int64(wd[pos + 2]) & 0xFFFFFFFF)
        vis += 1
        need = n_pairs + L
        if need > np_cap or need * 2 > len(ph_key):
            ph_key, ph_val = _grow_pairs(ph_key, ph_val, need)
            if need > np_cap:
                p_a = _grow(p_a, need)
                p_b = _grow(p_b, need)
                p_cnt = _grow(p_cnt, need)
                p_head = _grow(p_head, need)
                p_vis = _grow(p_vis, need)
                np_cap = len(p_a)
        links = _grow(links, 2 * (n_links + L))
        t = pos + 4
        for j in range(L - 1):
            key = (np.int64(wd[t + j]) << 32) | np.int64(wd[t + j + 1])
            k = _slot(ph_key, key)
            if ph_key[k] == -1:
                n_pairs = _new_pair(key, ph_key, ph_val, k, n_pairs, p_a, p_b, p_cnt, p_head, p_vis)
                q = n_pairs - 1
            else:
                q = ph_val[k]
            p_cnt[q] += c
            if p_vis[q] != vis:
                p_vis[q] = vis
                links[2 * n_links] = pos
                links[2 * n_links + 1] = p_head[q]
                p_head[q] = n_links
                n_links += 1
        pos += L + 4

    h_cnt = np.empty(max(n_pairs, 16), np.int64)
    h_pid = np.empty(max(n_pairs, 16), np.int64)
    hn = 0
    for q in range(n_pairs):
        hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)

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
            if p_cnt[q] <= 0:
                continue
            if p_cnt[q] != c:
                hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)
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
        tb = _grow(tb, tb_used + la + lb)
        tb[tb_used : tb_used + la] = tb[tb_off[a] : tb_off[a] + la]
        tb[tb_used + la : tb_used + la + lb] = tb[tb_off[b] : tb_off[b] + lb]
        tb_off[Z] = tb_used
        tb_len[Z] = la + lb
        tb_used += la + lb
        done += 1
        stamp = np.int32(done)

        # room for everything this step can add: at most two new pairs and
        # two links per occurrence, and a word of length L has at most L // 2
        bound = 0
        node = p_head[pid]
        while node != -1:
            bound += wd[links[2 * node]]
            node = links[2 * node + 1]
        need = n_pairs + bound
        if need > np_cap or need * 2 > len(ph_key):
            ph_key, ph_val = _grow_pairs(ph_key, ph_val, need)
            if need > np_cap:
                p_a = _grow(p_a, need)
                p_b = _grow(p_b, need)
                p_cnt = _grow(p_cnt, need)
                p_head = _grow(p_head, need)
                p_vis = _grow(p_vis, need)
                np_cap = len(p_a)
        links = _grow(links, 2 * (n_links + bound))
        touched = _grow(touched, bound + 2)
        nt = 0

        node = p_head[pid]
        p_head[pid] = -1
        while node != -1:
            r0 = links[2 * node]
            node = links[2 * node + 1]
            if wd[r0 + 1] == stamp:
                continue
            wd[r0 + 1] = stamp
            L = np.int64(wd[r0])
            c = (np.int64(wd[r0 + 3]) << 32) | (np.int64(wd[r0 + 2]) & 0xFFFFFFFF)
            t = r0 + 4
            vis += 1
            # merge left to right in place, updating only the pairs around each occurrence
            r = 0
            j = 0
            while j < L:
                if j < L - 1 and wd[t + j] == a and wd[t + j + 1] == b:
                    p_cnt[pid] -= c
                    for side in range(2):
                        if side == 0:
                            if r == 0:
                                continue
                            x = np.int64(wd[t + r - 1])  # the symbol before, as already merged
                            old_key = (x << 32) | np.int64(a)
                            key = (x << 32) | np.int64(Z)
                        else:
                            if j + 2 >= L:
                                continue
                            y = np.int64(wd[t + j + 2])
                            old_key = (np.int64(b) << 32) | y
                            key = (np.int64(Z) << 32) | y
                        p_cnt[ph_val[_slot(ph_key, old_key)]] -= c
                        k = _slot(ph_key, key)
                        if ph_key[k] == -1:
                            n_pairs = _new_pair(key, ph_key, ph_val, k, n_pairs, p_a, p_b, p_cnt, p_head, p_vis)
                            q = n_pairs - 1
                            touched[nt] = q
                            nt += 1
                        else:
                            q = ph_val[k]
                        p_cnt[q] += c
                        if p_vis[q] != vis:
                            p_vis[q] = vis
                            links[2 * n_links] = r0
                            links[2 * n_links + 1] = p_head[q]
                            p_head[q] = n_links
                            n_links += 1
                    wd[t + r] = Z
                    j += 2
                else:
                    if r != j:
                        wd[t + r] = wd[t + j]
                    j += 1
                r += 1
            wd[r0] = r
        if hn + nt > len(h_cnt):
            h_cnt = _grow(h_cnt, hn + nt)
            h_pid = _grow(h_pid, hn + nt)
        for i in range(nt):  # every pair made this step holds the new token: all are new
            q = touched[i]
            if p_cnt[q] > 0:
                hn = _heap_push(h_cnt, h_pid, hn, p_cnt[q], q, p_a, p_b, tb, tb_off, tb_len)
        progress[0] = done
    return m_a[:done], m_b[:done]
