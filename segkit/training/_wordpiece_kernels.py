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
from numba import njit

_EMPTY = -1
_FNV = np.uint64(1469598103934665603)
_PRIME = np.uint64(1099511628211)


@njit(cache=True, nogil=True, inline="always")
def _hash_span(store, a, n):
    h = np.uint64(1469598103934665603)
    for i in range(a, a + n):
        h = (h ^ np.uint64(store[i])) * np.uint64(1099511628211)
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def count_words(cps, table, pool, classes, slots, store, starts, counts, nkeys):
    """Add the words of ``cps`` (code points, normalized here) to the table.

    ``table``/``pool``: a rewrite table (0 keep, -1 delete, else an offset
    into ``pool``: length then code points); ``classes``: boundary class of
    every code point (0 word, 1 space, 2 isolated).  Returns the grown state
    ``(slots, store, starts, counts, nkeys)``.
    """
    buf = np.empty(256, dtype=np.int32)
    w = 0  # characters of the current word in buf
    n = cps.size
    i = 0
    nrep = 0
    r = 0
    v = 0
    c = 0
    while True:
        # next normalized code point d (or flush at the end)
        if r < nrep:
            d = np.int64(pool[v + 1 + r])
            r += 1
        else:
            if i >= n:
                break
            c = np.int64(cps[i])
            i += 1
            if c > 0x10FFFF:
                c = 0xFFFD
            v = table[table[c >> 8] + (c & 255)]
            if v == 0:
                d = c
                nrep = 0
                r = 0
            elif v == -1:
                continue
            else:
                nrep = pool[v]
                r = 1
                d = np.int64(pool[v + 1])
        cl = classes[d]
        if cl == 0:
            if w >= buf.size:
                buf = _grow1(buf, w + 1)
            buf[w] = d
            w += 1
            continue
        if w > 0:
            k = _span_find(slots, store, starts, buf, 0, w)
            if k < 0:
                k, slots, store, starts, nkeys = _span_insert(slots, store, starts, nkeys, buf, 0, w)
                if k >= counts.size:
                    counts = _grow_zero(counts, k + 1)
            counts[k] += 1
            w = 0
        if cl == 2:
            buf[0] = d
            k = _span_find(slots, store, starts, buf, 0, 1)
            if k < 0:
                k, slots, store, starts, nkeys = _span_insert(slots, store, starts, nkeys, buf, 0, 1)
                if k >= counts.size:
                    counts = _grow_zero(counts, k + 1)
            counts[k] += 1
    if w > 0:
        k, slots, store, starts, nkeys = _span_insert(slots, store, starts, nkeys, buf, 0, w)
        if k >= counts.size:
            counts = _grow_zero(counts, k + 1)
        counts[k] += 1
    return slots, store, starts, counts, nkeys


@njit(cache=True, nogil=True)
def _grow_zero(arr, need):
    n = arr.size * 2
    while n < need:
        n *= 2
    out = np.zeros(n, dtype=arr.dtype)
    out[: arr.size] = arr
    return out


# ------------------------------------------------------------------- merges


@njit(cache=True, nogil=True, inline="always")
def _pair_hash(key, mask):
    # splitmix64's finalizer
    h = np.uint64(key)
    h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.int64((h ^ (h >> np.uint64(31))) & np.uint64(mask))


@njit(cache=True, nogil=True)
def _pair_rehash(pslots, pa, pb, npairs):
    new = np.full(pslots.size * 2, -1, dtype=np.int64)
    mask = new.size // 2 - 1
    for p in range(npairs):
        key = (np.int64(pa[p]) << 32) | pb[p]
        j = _pair_hash(key, mask)
        while new[2 * j] >= 0:
            j = (j + 1) & mask
        new[2 * j] = key
        new[2 * j + 1] = p
    return new


@njit(cache=True, nogil=True)
def _pair_find(pslots, pa, pb, x, y):
    key = (np.int64(x) << 32) | y
    mask = pslots.size // 2 - 1
    j = _pair_hash(key, mask)
    while True:
        k = pslots[2 * j]
        if k == key:
            return pslots[2 * j + 1]
        if k < 0:
            return -1
        j = (j + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def _heap_less(hc, ha, hb, i, j):
    """Whether heap entry i ranks below entry j (count, then smaller pair first)."""
    if hc[i] != hc[j]:
        return hc[i] < hc[j]
    if ha[i] != ha[j]:
        return ha[i] > ha[j]
    return hb[i] > hb[j]


@njit(cache=True, nogil=True)
def _heap_swap(hc, ha, hb, hp, i, j):
    hc[i], hc[j] = hc[j], hc[i]
    ha[i], ha[j] = ha[j], ha[i]
    hb[i], hb[j] = hb[j], hb[i]
    hp[i], hp[j] = hp[j], hp[i]


@njit(cache=True, nogil=True)
def merge_loop(ws, wstart, wlen, wcount, tslots, tstore, tstarts, ntok, prefix, vocab_size, min_frequency):
    """Merge pairs until ``ntok`` distinct tokens or no pair is left.

    ``ws[wstart[w]:wstart[w] + wlen[w]]``: symbol ids of word ``w`` (merged
    in place); ``wcount``: word counts; ``(tslots, tstore, tstarts, ntok)``:
    the span table of token strings (ids = vocabulary ids).  Each step
    merges, in every word, the pair with the highest count (ties: smallest
    first id, then smallest second id); the new token is the first part's
    string followed by the second's without a leading ``prefix``; a string
    already known keeps its id.  Returns ``(tslots, tstore, tstarts, ntok,
    merges)`` with ``merges`` rows (first, second, result, count).
    """
    nwords = wlen.size
    # pairs: hash (a, b) -> p; count, first, second; inverted index lists
    cap = 1 << 16
    pslots = np.full(2 * cap, -1, dtype=np.int64)  # (key, pair) per slot
    pa = np.empty(cap // 2, dtype=np.int32)
    pb = np.empty(cap // 2, dtype=np.int32)
    pc = np.zeros(cap // 2, dtype=np.int64)
    phead = np.full(cap // 2, -1, dtype=np.int64)
    ptail = np.full(cap // 2, -1, dtype=np.int64)
    plast = np.full(cap // 2, -1, dtype=np.int64)  # last word appended
    ptouch = np.zeros(cap // 2, dtype=np.int64)  # step of last touch
    npairs = 0
    nword = np.empty(ws.size // 2 + 16, dtype=np.int64)
    nnext = np.empty(ws.size // 2 + 16, dtype=np.int64)
    nn = 0
    touched = np.empty(1024, dtype=np.int64)
    wstamp = np.zeros(nwords, dtype=np.int64)
    merges = np.empty((16, 4), dtype=np.int64)
    nmerges = 0
    pmask = cap - 1
    step = 1
    # heap
    hcap = 1024
    hc = np.empty(hcap, dtype=np.int64)
    ha = np.empty(hcap, dtype=np.int32)
    hb = np.empty(hcap, dtype=np.int32)
    hp = np.empty(hcap, dtype=np.int64)
    hn = 0
    tok = np.empty(64, dtype=np.int32)
    lp = prefix.size

    # ---- initial pair counts
    for w in range(nwords):
        s = wstart[w]
        for i in range(s, s + wlen[w] - 1):
            key = (np.int64(ws[i]) << 32) | ws[i + 1]
            j = _pair_hash(key, pmask)
            while True:
                p = pslots[2 * j + 1]
                if p < 0:
                    p = npairs
                    if p >= pa.size:
                        pa = _grow1(pa, p + 1)
                        pb = _grow1(pb, p + 1)
                        pc = _grow1(pc, p + 1)
                        phead = _grow1(phead, p + 1)
                        ptail = _grow1(ptail, p + 1)
                        plast = _grow1(plast, p + 1)
                        ptouch = _grow1(ptouch, p + 1)
                    pa[p] = ws[i]
                    pb[p] = ws[i + 1]
                    pc[p] = 0
                    phead[p] = -1
                    ptail[p] = -1
                    plast[p] = -1
                    ptouch[p] = 0
                    pslots[2 * j] = key
                    pslots[2 * j + 1] = p
                    npairs += 1
                    break
                if pslots[2 * j] == key:
                    break
                j = (j + 1) & pmask
            if 4 * npairs > pslots.size:
                pslots = _pair_rehash(pslots, pa, pb, npairs)
                pmask = pslots.size // 2 - 1
            pc[p] += wcount[w]
            if plast[p] != w:
                plast[p] = w
                if nn >= nword.size:
                    nword = _grow1(nword, nn + 1)
                    nnext = _grow1(nnext, nn + 1)
                nword[nn] = w
                nnext[nn] = -1
                if ptail[p] >= 0:
                    nnext[ptail[p]] = nn
                else:
                    phead[p] = nn
                ptail[p] = nn
                nn += 1
    for p in range(npairs):
        if pc[p] > 0:
            if hn >= hc.size:
                hc = _grow1(hc, hn + 1)
                ha = _grow1(ha, hn + 1)
                hb = _grow1(hb, hn + 1)
                hp = _grow1(hp, hn + 1)
            hc[hn] = pc[p]
            ha[hn] = pa[p]
            hb[hn] = pb[p]
            hp[hn] = p
            hn += 1
    # heapify
    for i in range(hn // 2 - 1, -1, -1):
        k = i
        while True:
            l = 2 * k + 1
            if l >= hn:
                break
            m = l
            if l + 1 < hn and _heap_less(hc, ha, hb, l, l + 1):
                m = l + 1
            if _heap_less(hc, ha, hb, k, m):
                _heap_swap(hc, ha, hb, hp, k, m)
                k = m
            else:
                break

    # ---- merges
    while ntok < vocab_size and hn > 0:
        c = hc[0]
        p = hp[0]
        # pop
        hn -= 1
        if hn > 0:
            _heap_swap(hc, ha, hb, hp, 0, hn)
            k = 0
            while True:
                l = 2 * k + 1
                if l >= hn:
                    break
                m = l
                if l + 1 < hn and _heap_less(hc, ha, hb, l, l + 1):
                    m = l + 1
                if _heap_less(hc, ha, hb, k, m):
                    _heap_swap(hc, ha, hb, hp, k, m)
                    k = m
                else:
                    break
        if c != pc[p]:
            if pc[p] > 0:
                hn = _heap_push(hc, ha, hb, hp, hn, pc[p], pa[p], pb[p], p)
                if hn < 0:
                    hc, ha, hb, hp = _heap_grown(hc, ha, hb, hp)
                    hn = _heap_push(hc, ha, hb, hp, -hn - 1, pc[p], pa[p], pb[p], p)
            continue
        if c < 1 or c < min_frequency:
            break
        a = pa[p]
        b = pb[p]
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
        t, tslots, tstore, tstarts, ntok = _span_insert(tslots, tstore, tstarts, ntok, tok, 0, ln)
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
        node = phead[p]
        while node >= 0:
            w = nword[node]
            node = nnext[node]
            if wstamp[w] == step:
                continue
            wstamp[w] = step
            s = wstart[w]
            L = wlen[w]
            found = False
            for i in range(s, s + L - 1):
                if ws[i] == a and ws[i + 1] == b:
                    found = True
                    break
            if not found:
                continue
            cw = wcount[w]
            # one pass: merge in place, count changes around each occurrence
            # (the symbol before is the output's, possibly a merged token)
            o = s
            i = s
            e = s + L
            while i < e:
                if i + 1 < e and ws[i] == a and ws[i + 1] == b:
                    pc[p] -= cw
                    for side in range(2):
                        if side == 0:
                            if o == s:
                                continue
                            x0 = ws[o - 1]
                            y0 = a
                            x1 = ws[o - 1]
                            y1 = t
                        else:
                            if i + 2 >= e:
                                continue
                            x0 = b
                            y0 = ws[i + 2]
                            x1 = t
                            y1 = ws[i + 2]
                        q = _pair_find(pslots, pa, pb, x0, y0)
                        pc[q] -= cw
                        # the new pair
                        key = (np.int64(x1) << 32) | y1
                        j = _pair_hash(key, pmask)
                        while True:
                            q = pslots[2 * j + 1]
                            if q < 0:
                                q = npairs
                                if q >= pa.size:
                                    pa = _grow1(pa, q + 1)
                                    pb = _grow1(pb, q + 1)
                                    pc = _grow1(pc, q + 1)
                                    phead = _grow1(phead, q + 1)
                                    ptail = _grow1(ptail, q + 1)
                                    plast = _grow1(plast, q + 1)
                                    ptouch = _grow1(ptouch, q + 1)
                                pa[q] = x1
                                pb[q] = y1
                                pc[q] = 0
                                phead[q] = -1
                                ptail[q] = -1
                                plast[q] = -1
                                ptouch[q] = 0
                                pslots[2 * j] = key
                                pslots[2 * j + 1] = q
                                npairs += 1
                                if 4 * npairs > pslots.size:
                                    pslots = _pair_rehash(pslots, pa, pb, npairs)
                                    pmask = pslots.size // 2 - 1
                                break
                            if pslots[2 * j] == key:
                                break
                            j = (j + 1) & pmask
                        pc[q] += cw
                        if ptouch[q] != step:
                            ptouch[q] = step
                            if nt >= touched.size:
                                touched = _grow1(touched, nt + 1)
                            touched[nt] = q
                            nt += 1
                        if plast[q] != w:
                            plast[q] = w
                            if nn >= nword.size:
                                nword = _grow1(nword, nn + 1)
                                nnext = _grow1(nnext, nn + 1)
                            nword[nn] = w
                            nnext[nn] = -1
                            if ptail[q] >= 0:
                                nnext[ptail[q]] = nn
                            else:
                                phead[q] = nn
                            ptail[q] = nn
                            nn += 1
                    ws[o] = t
                    i += 2
                else:
                    ws[o] = ws[i]
                    i += 1
                o += 1
            wlen[w] = o - s
        for r in range(nt):
            q = touched[r]
            if pc[q] > 0:
                hn = _heap_push(hc, ha, hb, hp, hn, pc[q], pa[q], pb[q], q)
                if hn < 0:
                    hc, ha, hb, hp = _heap_grown(hc, ha, hb, hp)
                    hn = _heap_push(hc, ha, hb, hp, -hn - 1, pc[q], pa[q], pb[q], q)
    return tslots, tstore, tstarts, ntok, merges[:nmerges].copy()


@njit(cache=True, nogil=True)
def _heap_grown(hc, ha, hb, hp):
    n = hc.size * 2
    return _grow1(hc, n), _grow1(ha, n), _grow1(hb, n), _grow1(hp, n)


@njit(cache=True, nogil=True)
def _heap_push(hc, ha, hb, hp, hn, c, a, b, p):
    """Push; returns the new size, or ``-(hn + 1)`` when the heap is full."""
    if hn >= hc.size:
        return -(hn + 1)
    hc[hn] = c
    ha[hn] = a
    hb[hn] = b
    hp[hn] = p
    k = hn
    while k > 0:
        par = (k - 1) // 2
        if _heap_less(hc, ha, hb, par, k):
            _heap_swap(hc, ha, hb, hp, par, k)
            k = par
        else:
            break
    return hn + 1
