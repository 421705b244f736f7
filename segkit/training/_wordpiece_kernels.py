"""Compiled parts of :func:`segkit.training.train_wordpiece`.

Two kernels:

* :func:`count_words` normalizes code points with a rewrite table (see
  :mod:`segkit.engine.rewrite`), splits them into words by boundary class
  (see :mod:`segkit.engine.charmap`) and counts the words in an
  open-addressing hash table over code-point spans: no Python object per
  word.  It is called once per chunk of the corpus; the table carries over.
* :func:`merge_loop` runs the WordPiece/BPE merges with incremental pair
  counts, an inverted index (pair -> words, append-only linked lists) and a
  lazy max-heap ordered by (count desc, first id asc, second id asc).
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel

from ..runtime.interrupts import stop_requested



@kernel(inline="always")
def _hash_span(store, a, n):
    h = np.uint64(1469598103934665603)
    for i in range(a, a + n):
        h = (h ^ np.uint64(store[i])) * np.uint64(1099511628211)
    return h ^ (h >> np.uint64(29))


@kernel
def _grow1(arr, need):
    if need <= arr.size:
        return arr
    n = arr.size * 2
    while n < need:
        n *= 2
    out = np.empty(n, dtype=arr.dtype)
    out[: arr.size] = arr
    return out


# ---------------------------------------------------------------- span tables
# A span table maps code-point sequences to dense ids.  State: ``slots``
# (int64, power-of-two size, -1 empty, else id), ``store`` (int32 code points
# of every key, in id order), ``starts`` (int64, n + 1 entries used) and the
# number of keys ``n``.


@kernel
def _span_find(slots, store, starts, buf, a, n):
    """Id of ``buf[a:a+n]`` or ``-(slot + 1)`` of the empty slot to fill."""
    mask = slots.size - 1
    h = _hash_span(buf, a, n)
    j = np.int64(h & np.uint64(mask))
    tag = np.int64(h >> np.uint64(33))
    while True:
        e = slots[j]
        if e < 0:
            return -(j + 1)
        if (e >> 32) != tag:
            j = (j + 1) & mask
            continue
        k = e & 0xFFFFFFFF
        s = starts[k]
        if starts[k + 1] - s == n:
            same = True
            for q in range(n):
                if store[s + q] != buf[a + q]:
                    same = False
                    break
            if same:
                return k
        j = (j + 1) & mask


@kernel
def _span_rehash(slots, store, starts, nkeys):
    new = np.full(slots.size * 2, -1, dtype=np.int64)
    mask = new.size - 1
    for k in range(nkeys):
        s = starts[k]
        h = _hash_span(store, s, starts[k + 1] - s)
        j = np.int64(h & np.uint64(mask))
        while new[j] >= 0:
            j = (j + 1) & mask
        new[j] = (np.int64(h >> np.uint64(33)) << 32) | k
    return new


@kernel
def _span_insert(slots, store, starts, nkeys, buf, a, n):
    """Insert ``buf[a:a+n]``; returns (id, slots, store, starts, nkeys)."""
    r = _span_find(slots, store, starts, buf, a, n)
    if r >= 0:
        return r, slots, store, starts, nkeys
    j = -r - 1
    s = starts[nkeys]
    store = _grow1(store, s + n)
    for q in range(n):
        store[s + q] = buf[a + q]
    starts = _grow1(starts, nkeys + 2)
    starts[nkeys + 1] = s + n
    h = _hash_span(buf, a, n)
    slots[j] = (np.int64(h >> np.uint64(33)) << 32) | nkeys
    nkeys += 1
    if 2 * nkeys > slots.size:
        slots = _span_rehash(slots, store, starts, nkeys)
    return nkeys - 1, slots, store, starts, nkeys


# --------------------------------------------------------------- word counts


_FNV_OFFSET = np.uint64(1469598103934665603)


@kernel
def count_words(cps, ctab, pool, classes, slots, store, starts, counts, nkeys, buf, state):
    """Add the words of ``cps`` (code points, normalized here) to the table.

    ``ctab``: two-level table (see :func:`segkit.engine.charmap.two_level`)
    of a code point's fate: 0, 1, 2 kept with boundary class word, space or
    isolated; -1 deleted; ``v >= 3``: replaced by ``pool[v - 2]`` code points
    ``pool[v - 1:]``, whose classes are in ``classes``.  The word table is
    ``(slots, store, starts, counts, nkeys)``; ``buf`` holds the current
    word.  Nothing is reallocated here (that would cost reference counting
    in the loop): when the table or ``buf`` is full the kernel stops, saves
    its position in ``state`` (code point, character of its replacement,
    word length) and returns ``(1, nkeys)`` (grow the table) or ``(2,
    nkeys)`` (grow ``buf``); the caller grows and calls again.  ``(0,
    nkeys)``: done.  A word still open at the end stays in ``buf``.
    """
    i = state[0]
    r = state[1]
    w = state[2]
    h = _FNV_OFFSET
    for q in range(w):
        h = (h ^ np.uint64(buf[q])) * np.uint64(1099511628211)
    n = cps.size
    cap = starts.size - 2
    if counts.size - 1 < cap:
        cap = counts.size - 1
    status = 0
    while i < n:
        c = np.int64(cps[i])
        if c > 0x10FFFF:
            c = 0xFFFD
        v = ctab[ctab[c >> 8] + (c & 255)]
        if v < 0:
            i += 1
            r = 0
            continue
        if v < 3:
            d = c
            cl = v
            last = True
        else:
            d = np.int64(pool[v - 1 + r])
            cl = classes[d]
            last = r + 1 == pool[v - 2]
        if cl == 0:
            if w >= buf.size:
                status = 2
                break
            buf[w] = d
            h = (h ^ np.uint64(d)) * np.uint64(1099511628211)
            w += 1
        else:
            # room for two new words (this one and an isolated character)
            if nkeys + 2 > cap or starts[nkeys] + w + 1 > store.size or 2 * (nkeys + 2) > slots.size:
                status = 1
                break
            # count the word in buf, then the isolated character (written
            # out here: a helper with array arguments costs reference counts)
            for rep in range(2):
                if rep == 1:
                    if cl != 2:
                        break
                    buf[0] = d
                    w = 1
                    h = (_FNV_OFFSET ^ np.uint64(d)) * np.uint64(1099511628211)
                if w == 0:
                    continue
                hh = h ^ (h >> np.uint64(29))
                mask = slots.size - 1
                j = np.int64(hh & np.uint64(mask))
                tag = np.int64(hh >> np.uint64(33))
                found = False
                while True:
                    ent = slots[j]
                    if ent < 0:
                        break
                    if (ent >> 32) == tag:
                        k = ent & 0xFFFFFFFF
                        s0 = starts[k]
                        if starts[k + 1] - s0 == w:
                            same = True
                            for q in range(w):
                                if store[s0 + q] != buf[q]:
                                    same = False
                                    break
                            if same:
                                counts[k] += 1
                                found = True
                                break
                    j = (j + 1) & mask
                if not found:
                    s0 = starts[nkeys]
                    for q in range(w):
                        store[s0 + q] = buf[q]
                    starts[nkeys + 1] = s0 + w
                    counts[nkeys] = 1
                    slots[j] = (tag << 32) | nkeys
                    nkeys += 1
                w = 0
                h = _FNV_OFFSET
        if last:
            i += 1
            r = 0
        else:
            r += 1
    state[0] = i
    state[1] = r
    state[2] = w
    return status, nkeys


@kernel
def _grow_zero(arr, need):
    n = arr.size * 2
    while n < need:
        n *= 2
    out = np.zeros(n, dtype=arr.dtype)
    out[: arr.size] = arr
    return out


# ------------------------------------------------------------------- merges


@kernel(inline="always")
def _pair_hash(key, mask):
    # splitmix64's finalizer
    h = np.uint64(key)
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.int64((h ^ (h >> np.uint64(31))) & np.uint64(mask))


# Pair records, 8 int64 each (one cache line): first, second, count, head
# and tail of its word list, last word appended, step of last touch.
_PA, _PB, _PC, _PH, _PT, _PL, _PS = 0, 1, 2, 3, 4, 5, 6
_PW = 8
#: Words merged per batch (their symbols loaded ahead, room reserved).
_AHEAD = 64
#: Largest block of a pair's word list.
_BLOCK_MAX = 64


@kernel
def _pair_rehash(pslots, P, npairs):
    new = np.full(pslots.size * 2, -1, dtype=np.int64)
    mask = new.size // 2 - 1
    for p in range(npairs):
        key = (P[_PW * p + _PA] << 32) | P[_PW * p + _PB]
        j = _pair_hash(key, mask)
        while new[2 * j] >= 0:
            j = (j + 1) & mask
        new[2 * j] = key
        new[2 * j + 1] = p
    return new


@kernel(inline="always")
def _pair_slot(pslots, key):
    """Slot of ``key`` in the pair table, or of the empty slot where it goes."""
    mask = pslots.size // 2 - 1
    j = _pair_hash(key, mask)
    while True:
        k = pslots[2 * j]
        if k == key or k < 0:
            return j
        j = (j + 1) & mask


@kernel(inline="always")
def _heap_less(H, i, j):
    """Whether heap entry i ranks below entry j (count, then smaller pair first).
    Entries are 4 int64: count, first, second, pair."""
    if H[4 * i] != H[4 * j]:
        return H[4 * i] < H[4 * j]
    if H[4 * i + 1] != H[4 * j + 1]:
        return H[4 * i + 1] > H[4 * j + 1]
    return H[4 * i + 2] > H[4 * j + 2]


@kernel(inline="always")
def _heap_swap(H, i, j):
    for f in range(4):
        H[4 * i + f], H[4 * j + f] = H[4 * j + f], H[4 * i + f]


@kernel(inline="always")
def _sift_down(H, k, hn):
    """A 4-ary heap: half the levels of a binary one, so fewer cache misses
    on a heap of a million pairs."""
    while True:
        c0 = 4 * k + 1
        if c0 >= hn:
            break
        m = c0
        c1 = min(c0 + 4, hn)
        for c in range(c0 + 1, c1):
            if _heap_less(H, m, c):
                m = c
        if _heap_less(H, k, m):
            _heap_swap(H, k, m)
            k = m
        else:
            break


@kernel(inline="always")
def _heap_push(H, hn, c, a, b, p):
    """Push (``H`` has room); returns the new size."""
    H[4 * hn] = c
    H[4 * hn + 1] = a
    H[4 * hn + 2] = b
    H[4 * hn + 3] = p
    k = hn
    while k > 0:
        par = (k - 1) // 4
        if _heap_less(H, par, k):
            _heap_swap(H, par, k)
            k = par
        else:
            break
    return hn + 1


@kernel
def _count_pairs(w0, w1, hoff, S, pslots, P, pc, npairs):
    """Initial counts of the pairs of words ``w0:w1`` (room reserved; no
    helper with array arguments, see :func:`_merge_batch`); ``P[.. + _PS]``
    counts the words of each pair.  Returns ``npairs``."""
    mask = pslots.size // 2 - 1
    for w in range(w0, w1):
        hw = hoff[w]
        s = (hw + 4) // 2
        cw = (np.int64(S[hw + 2]) & 0xFFFFFFFF) | (np.int64(S[hw + 3]) << 32)
        for i in range(s, s + S[hw] - 1):
            key = (np.int64(S[2 * i]) << 32) | S[2 * i + 2]
            h = np.uint64(key)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            j = np.int64((h ^ (h >> np.uint64(31))) & np.uint64(mask))
            while True:
                kk = pslots[2 * j]
                if kk == key or kk < 0:
                    break
                j = (j + 1) & mask
            if pslots[2 * j] < 0:
                p = npairs
                npairs += 1
                b = _PW * p
                P[b + _PA] = S[2 * i]
                P[b + _PB] = S[2 * i + 2]
                P[b + _PH] = -1
                P[b + _PT] = -1
                P[b + _PL] = -1
                P[b + _PS] = 0
                pc[p] = 0
                pslots[2 * j] = key
                pslots[2 * j + 1] = p
            else:
                p = pslots[2 * j + 1]
            S[2 * i + 1] = p
            pc[p] += cw
            b = _PW * p
            if P[b + _PL] != hw:
                P[b + _PL] = hw
                P[b + _PS] += 1
    return npairs


@kernel
def _merge_batch(wl, k0, k1, S, a, b, t, p, existed, step, pslots, P, pc, B, nb, npairs, touched, nt,
                 lmap, lstamp, rmap, rstamp):
    """Merge (a, b) -> t in words ``wl[k0:k1]``, updating pair counts, pair
    records and word lists.  Every array has room reserved by the caller.
    No helper with array arguments is called (nor inlined) and nothing is
    reallocated here: either costs reference counting in the loop.
    Returns ``(npairs, nb, nt)``."""
    mask = pslots.size // 2 - 1
    for k in range(k0, k1):
        w = wl[k]  # the word's header offset in S (its identity in word lists)
        s = (w + 4) // 2
        e = s + S[w]
        cw = (np.int64(S[w + 2]) & 0xFFFFFFFF) | (np.int64(S[w + 3]) << 32)
        # one pass: merge in place; the pairs around each occurrence change
        # (the symbol before is the output's, maybe a new token already)
        o = s
        i = s
        while i < e:
            if i + 1 < e and S[2 * i] == a and S[2 * i + 2] == b:
                pc[p] -= cw
                q = -1
                for side in range(2):
                    if side == 0:
                        if o == s:
                            continue
                        pc[S[2 * o - 1]] -= cw  # (x, a) before the occurrence
                        x = S[2 * o - 2]
                        y = t
                        if lstamp[x] == step:
                            q = lmap[x]
                            fresh = False
                        else:
                            fresh = True
                    else:
                        if i + 2 >= e:
                            q = -1
                            continue
                        pc[S[2 * i + 3]] -= cw  # (b, y) after it
                        x = t
                        y = S[2 * i + 4]
                        if rstamp[y] == step:
                            q = rmap[y]
                            fresh = False
                        else:
                            fresh = True
                    if fresh:  # first (x, t) or (t, y) of this step
                        key = (np.int64(x) << 32) | y
                        q = -1
                        h = np.uint64(key)
                        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                        j = np.int64((h ^ (h >> np.uint64(31))) & np.uint64(mask))
                        while True:
                            kk = pslots[2 * j]
                            if kk == key:
                                q = pslots[2 * j + 1]
                                break
                            if kk < 0:
                                break
                            j = (j + 1) & mask
                        if q < 0:  # a new pair (slot j is free)
                            q = npairs
                            npairs += 1
                            bq = _PW * q
                            P[bq + _PA] = x
                            P[bq + _PB] = y
                            P[bq + _PH] = -1
                            P[bq + _PT] = -1
                            P[bq + _PL] = -1
                            P[bq + _PS] = 0
                            pc[q] = 0
                            pslots[2 * j] = key
                            pslots[2 * j + 1] = q
                        if side == 0:
                            lstamp[x] = step
                            lmap[x] = q
                        else:
                            rstamp[y] = step
                            rmap[y] = q
                    if side == 0:
                        S[2 * o - 1] = q
                    pc[q] += cw
                    bq = _PW * q
                    if P[bq + _PS] != step:
                        P[bq + _PS] = step
                        touched[nt] = q
                        nt += 1
                    if P[bq + _PL] != w:
                        P[bq + _PL] = w
                        # append w to q's word list (a new block when full)
                        tail = P[bq + _PT]
                        if tail < 0 or B[tail + 1] == B[tail + 2]:
                            size = 4 if tail < 0 else min(2 * B[tail + 2], _BLOCK_MAX)
                            B[nb] = -1
                            B[nb + 1] = 0
                            B[nb + 2] = size
                            if tail < 0:
                                P[bq + _PH] = nb
                            else:
                                B[tail] = nb
                            P[bq + _PT] = nb
                            tail = nb
                            nb += 3 + size
                        B[tail + 3 + B[tail + 1]] = w
                        B[tail + 1] += 1
                S[2 * o] = t
                S[2 * o + 1] = q
                i += 2
            else:
                S[2 * o] = S[2 * i]
                S[2 * o + 1] = S[2 * i + 1]
                i += 1
            o += 1
        S[w] = o - s
    return npairs, nb, nt


@kernel
def merge_loop(ws, wstart, wlen, wcount, tslots, tstore, tstarts, ntok, prefix, vocab_size, min_frequency, progress,
               stop):
    """Merge pairs until ``ntok`` distinct tokens or no pair is left.

    ``ws[wstart[w]:wstart[w] + wlen[w]]``: symbol ids of word ``w`` (merged
    in place); ``wcount``: word counts; ``(tslots, tstore, tstarts, ntok)``:
    the span table of token strings (ids = vocabulary ids).  Each step
    merges, in every word, the pair with the highest count (ties: smallest
    first id, then smallest second id); the new token is the first part's
    string followed by the second's without a leading ``prefix``; a string
    already known keeps its id.  Returns ``(tslots, tstore, tstarts, ntok,
    merges)`` with ``merges`` rows (first, second, result, count).
    ``progress[0]`` follows ``ntok`` (for a progress bar polled by another
    thread: this kernel releases the GIL).  The loop ends early, before a
    merge, once another thread sets ``stop[0]``
    (:func:`segkit.interrupts.stop_requested`).

    Every symbol of a word is stored with the id of the pair it starts
    (``S[2 i]`` symbol, ``S[2 i + 1]`` pair), so the pairs a merge destroys
    are found without a hash lookup; the pairs it creates, (x, new) and
    (new, y), are found through per-step maps indexed by x and y.
    """
    nwords = wlen.size
    # Each word in S: a header (length, step stamp, count low and high 32
    # bits) then (symbol, pair) per symbol, so that visiting a word touches
    # one stretch of memory.  A word is known by its header's offset.
    hoff = np.empty(nwords, dtype=np.int64)
    S = np.empty(4 * nwords + 2 * ws.size, dtype=np.int32)
    for w in range(nwords):
        h = 4 * w + 2 * wstart[w]
        hoff[w] = h
        S[h] = wlen[w]
        S[h + 1] = 0
        S[h + 2] = np.int32(wcount[w] & 0xFFFFFFFF)
        S[h + 3] = np.int32(wcount[w] >> 32)
        s = (h + 4) // 2
        for j in range(wlen[w]):
            S[2 * (s + j)] = ws[wstart[w] + j]
            S[2 * (s + j) + 1] = -1
    cap = 1 << 16
    pslots = np.full(2 * cap, -1, dtype=np.int64)  # (key, pair) per slot
    P = np.empty(_PW * cap, dtype=np.int64)
    pc = np.zeros(cap, dtype=np.int64)
    npairs = 0
    wl = np.empty(1024, dtype=np.int64)  # words of the pair being merged
    sink = np.int32(0)
    touched = np.empty(1024, dtype=np.int64)
    merges = np.empty((16, 4), dtype=np.int64)
    nmerges = 0
    step = 1
    tok = np.empty(64, dtype=np.int32)
    lp = prefix.size
    # per-step maps: pair (x, new) and (new, y) by x and y
    mcap = max(vocab_size, ntok) + 1
    lmap = np.empty(mcap, dtype=np.int64)
    lstamp = np.zeros(mcap, dtype=np.int64)
    rmap = np.empty(mcap, dtype=np.int64)
    rstamp = np.zeros(mcap, dtype=np.int64)

    # ---- initial pair counts; number of words of each pair
    # (room is reserved for the pairs a batch can add: at most one per
    # symbol, and at most one per pair of the ntok symbols there are, so a
    # single word of millions of characters reserves little)
    for w0 in range(0, nwords, 4096):
        w1 = min(w0 + 4096, nwords)
        tot = min(wstart[w1] - wstart[w0], np.int64(ntok) * ntok)
        if npairs + tot > pc.size:
            pc = _grow1(pc, npairs + tot)
            P = _grow1(P, _PW * (npairs + tot))
        while 4 * (npairs + tot) > pslots.size:
            pslots = _pair_rehash(pslots, P, npairs)
        npairs = _count_pairs(w0, w1, hoff, S, pslots, P, pc, npairs)
    # one block per pair, filled in word order
    total = 0
    for p in range(npairs):
        total += 3 + P[_PW * p + _PS]
    B = np.empty(total + 1024, dtype=np.int64)
    nb = 0
    for p in range(npairs):
        b = _PW * p
        B[nb] = -1
        B[nb + 1] = 0
        B[nb + 2] = P[b + _PS]
        P[b + _PH] = nb
        P[b + _PT] = nb
        P[b + _PS] = 0
        P[b + _PL] = -1
        nb += 3 + B[nb + 2]
    for w in range(nwords):
        h = hoff[w]
        s = (h + 4) // 2
        for i in range(s, s + S[h] - 1):
            p = S[2 * i + 1]
            b = _PW * p
            if P[b + _PL] != h:
                P[b + _PL] = h
                o = P[b + _PT]
                B[o + 3 + B[o + 1]] = h
                B[o + 1] += 1
    H = np.empty(4 * (npairs + 1024), dtype=np.int64)
    hn = 0
    for p in range(npairs):
        if pc[p] > 0:
            H[4 * hn] = pc[p]
            H[4 * hn + 1] = P[_PW * p + _PA]
            H[4 * hn + 2] = P[_PW * p + _PB]
            H[4 * hn + 3] = p
            hn += 1
    for i in range((hn - 2) // 4, -1, -1):
        _sift_down(H, i, hn)

    # ---- merges
    while ntok < vocab_size and hn > 0:
        if stop_requested(stop):
            break
        c = H[0]
        p = H[3]
        hn -= 1
        if hn > 0:
            _heap_swap(H, 0, hn)
            _sift_down(H, 0, hn)
        cur = pc[p]
        if c != cur:
            if cur > 0:
                if 4 * (hn + 1) > H.size:
                    H = _grow1(H, 4 * (hn + 1))
                hn = _heap_push(H, hn, cur, P[_PW * p + _PA], P[_PW * p + _PB], p)
            continue
        if c < 1 or c < min_frequency:
            break
        progress[0] = ntok
        a = np.int32(P[_PW * p + _PA])
        b = np.int32(P[_PW * p + _PB])
        # the new token's string
        sa = tstarts[a]
        la = tstarts[a + 1] - sa
        sb = tstarts[b]
        lb = tstarts[b + 1] - sb
        skip = 0
        if lp > 0 and lb >= lp:
            skip = lp
            for q in range(lp):
                if tstore[sb + q] != prefix[q]:
                    skip = 0
                    break
        ln = la + lb - skip
        if tok.size < ln:
            tok = _grow1(tok, ln)
        for q in range(la):
            tok[q] = tstore[sa + q]
        for q in range(lb - skip):
            tok[la + q] = tstore[sb + skip + q]
        known = ntok
        t, tslots, tstore, tstarts, ntok = _span_insert(tslots, tstore, tstarts, ntok, tok, 0, ln)
        existed = t < known  # pairs with t may exist already: look them up
        t = np.int32(t)
        if t >= lmap.size:
            lmap = _grow1(lmap, t + 1)
            rmap = _grow1(rmap, t + 1)
            lstamp = _grow_zero(lstamp, t + 1)
            rstamp = _grow_zero(rstamp, t + 1)
        if nmerges >= merges.shape[0]:
            big = np.empty((2 * merges.shape[0], 4), dtype=np.int64)
            big[:nmerges] = merges[:nmerges]
            merges = big
        merges[nmerges, 0] = a
        merges[nmerges, 1] = b
        merges[nmerges, 2] = t
        merges[nmerges, 3] = c
        nmerges += 1
        step += 1
        nt = 0
        # the pair's words, gathered first (independent loads overlap)
        nw = 0
        blk = P[_PW * p + _PH]
        while blk >= 0:
            used = B[blk + 1]
            if nw + used > wl.size:
                wl = _grow1(wl, nw + used)
            for k in range(used):
                w = B[blk + 3 + k]
                if S[w + 1] != step:
                    S[w + 1] = step
                    wl[nw] = w
                    nw += 1
            blk = B[blk]
        for k0 in range(0, nw, _AHEAD):
            k1 = min(k0 + _AHEAD, nw)
            # the batch's words: their symbols are loaded together
            # (independent loads overlap), and room is reserved for what
            # they can add.  Every pair made or touched holds t and one of
            # the ntok tokens, on either side: at most 2 ntok + 2 of them in
            # a step (new pairs, touched entries), and per word at most one
            # list entry for each (fewer than its symbols, too).  A new list
            # block is either a pair's first in this batch or follows a full
            # one (at least 4 entries), so entries // 4 + pairs bounds them.
            near = 2 * np.int64(ntok) + 2
            tot = 0
            ent = 0
            acc = np.int32(0)
            for kk in range(k0, k1):
                w = wl[kk]
                tot += S[w]
                ent += min(np.int64(S[w]), near)
                acc ^= S[w + 4]
            sink ^= acc
            room = min(tot, near)
            blocks = min(ent, near) + ent // 4 + 1
            if npairs + room > pc.size:
                pc = _grow1(pc, npairs + room)
                P = _grow1(P, _PW * (npairs + room))
            while 4 * (npairs + room) > pslots.size:
                pslots = _pair_rehash(pslots, P, npairs)
            if nt + room > touched.size:
                touched = _grow1(touched, nt + room)
            if nb + blocks * (3 + _BLOCK_MAX) > B.size:
                B = _grow1(B, nb + blocks * (3 + _BLOCK_MAX))
            npairs, nb, nt = _merge_batch(wl, k0, k1, S, a, b, t, p, existed, step, pslots, P, pc, B, nb,
                                          npairs, touched, nt, lmap, lstamp, rmap, rstamp)
        if 4 * (hn + nt) > H.size:
            H = _grow1(H, 4 * (hn + nt))
        for r in range(nt):
            q = touched[r]
            if pc[q] > 0:
                hn = _heap_push(H, hn, pc[q], P[_PW * q + _PA], P[_PW * q + _PB], q)
    for w in range(nwords):
        h = hoff[w]
        s = (h + 4) // 2
        wlen[w] = S[h]
        for j in range(wlen[w]):
            ws[wstart[w] + j] = S[2 * (s + j)]
    if sink == 0x7FFFFFFF:  # keeps the prefetching loads
        ntok += 0
    return tslots, tstore, tstarts, ntok, merges[:nmerges].copy()


@kernel
def add_known_words(slots, store, starts, counts, b_store, b_starts, b_counts, lo, hi, new):
    """Add the count of every word ``k`` of table B with ``lo <= k < hi``
    (``b_store[b_starts[k]:b_starts[k + 1]]``, seen ``b_counts[k]`` times)
    that table A ``(slots, store, starts, counts)`` holds to A's count; list
    the other ``k`` in ``new``; returns how many were listed.  A is only
    read but for ``counts``, and B's words are distinct, so threads given
    disjoint ranges of B can run at once (no two write the same count)."""
    m = 0
    for k in range(lo, hi):
        a = b_starts[k]
        r = _span_find(slots, store, starts, b_store, a, b_starts[k + 1] - a)
        if r >= 0:
            counts[r] += b_counts[k]
        else:
            new[m] = k
            m += 1
    return m


@kernel
def gather_words(b_store, b_starts, b_counts, idx):
    """Words ``idx`` of table B as ``(code points, lengths, counts)``."""
    total = 0
    for k in idx:
        total += b_starts[k + 1] - b_starts[k]
    cps = np.empty(total, dtype=b_store.dtype)
    lengths = np.empty(idx.size, dtype=np.int64)
    counts = np.empty(idx.size, dtype=np.int64)
    o = 0
    for j in range(idx.size):
        k = idx[j]
        a = b_starts[k]
        n = b_starts[k + 1] - a
        cps[o : o + n] = b_store[a : a + n]
        o += n
        lengths[j] = n
        counts[j] = b_counts[k]
    return cps, lengths, counts


@kernel
def utf8_code_points(buf):
    """The code points of valid UTF-8 ``buf`` (checked by
    :func:`segkit.training.corpus.utf8_check`) as uint32."""
    out = np.empty(buf.size, dtype=np.uint32)
    n = 0
    i = 0
    while i < buf.size:
        b = np.uint32(buf[i])
        if b < 0x80:
            out[n] = b
            i += 1
        elif b < 0xE0:
            out[n] = ((b & 0x1F) << 6) | (np.uint32(buf[i + 1]) & 0x3F)
            i += 2
        elif b < 0xF0:
            out[n] = ((b & 0x0F) << 12) | ((np.uint32(buf[i + 1]) & 0x3F) << 6) | (np.uint32(buf[i + 2]) & 0x3F)
            i += 3
        else:
            out[n] = (((b & 0x07) << 18) | ((np.uint32(buf[i + 1]) & 0x3F) << 12)
                      | ((np.uint32(buf[i + 2]) & 0x3F) << 6) | (np.uint32(buf[i + 3]) & 0x3F))
            i += 4
        n += 1
    return out[:n]


# ------------------------------------------------------------ preparation
@kernel
def char_stats(cps, starts, counts):
    """``(freq, later)`` over all code points: how often each occurs in the
    words (weighted by the words' counts), and whether it occurs after a
    word's first character.  One pass, no array per character of the corpus
    (a single word of ten million characters stays ten million int32)."""
    freq = np.zeros(0x110000, dtype=np.int64)
    later = np.zeros(0x110000, dtype=np.bool_)
    for w in range(counts.size):
        a = starts[w]
        c = counts[w]
        for i in range(a, starts[w + 1]):
            freq[cps[i]] += c
            if i > a:
                later[cps[i]] = True
    return freq, later


@kernel
def word_symbols(cps, starts, counts, first_id, cont_id):
    """The words as symbol ids for :func:`merge_loop`: a word's first
    character takes ``first_id``, the others ``cont_id``; characters outside
    the alphabet (id -1) are dropped, and words left with fewer than two
    symbols (no pair) too.  Returns ``(ws, wstart, wlen, wcount)``."""
    nw = counts.size
    kept = np.zeros(nw, dtype=np.int64)
    total = 0
    multi = 0
    for w in range(nw):
        a = starts[w]
        k = 0
        for i in range(a, starts[w + 1]):
            s = first_id[cps[i]] if i == a else cont_id[cps[i]]
            if s >= 0:
                k += 1
        kept[w] = k
        if k >= 2:
            total += k
            multi += 1
    ws = np.empty(total, dtype=np.int32)
    wstart = np.zeros(multi + 1, dtype=np.int64)
    wlen = np.empty(multi, dtype=np.int64)
    wcount = np.empty(multi, dtype=np.int64)
    j = 0
    m = 0
    for w in range(nw):
        if kept[w] < 2:
            continue
        a = starts[w]
        for i in range(a, starts[w + 1]):
            s = first_id[cps[i]] if i == a else cont_id[cps[i]]
            if s >= 0:
                ws[j] = s
                j += 1
        wlen[m] = kept[w]
        wcount[m] = counts[w]
        m += 1
        wstart[m] = j
    return ws, wstart, wlen, wcount
