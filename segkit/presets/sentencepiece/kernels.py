"""SentencePiece BPE, compiled: the normalizer and the merges, a whole batch
per call.

Per text (UTF-8 bytes), exactly as SentencePiece's ``Normalizer`` and
``bpe::Model`` define it:

1. **Normalize** (:func:`_normalize`): at each position the longest
   user-defined symbol is kept as it is, else the longest rule of the
   precompiled charsmap (a Darts double-array trie, see :mod:`.charsmap`)
   gives the replacement, else one character (one byte of malformed UTF-8
   becomes U+FFFD).  ``remove_extra_whitespaces`` drops leading, trailing
   and repeated spaces, ``add_dummy_prefix`` puts ``▁`` first (last with
   ``treat_whitespace_as_suffix``), ``escape_whitespaces`` writes spaces as
   ``▁``.
2. **Merge** (:func:`_bpe`): the symbols are the characters of the
   normalized text, user-defined symbols being one frozen symbol each.
   Repeatedly the adjacent pair whose concatenation is a piece (normal,
   user-defined or unused) with the highest score is merged, the leftmost
   of equal scores.  The candidate pairs are in a binary min-heap keyed by
   ``(score rank, position of the left symbol)``; an entry whose pair has
   changed since it was pushed is dropped when popped (the current pair at
   that position no longer has its rank; if it has, the current pair is the
   one to merge at that key anyway).  O(n log n) per text, O(n) memory.
3. **Resegment** unused pieces into the two symbols they were last
   registered from (SentencePiece's ``rev_merge``, kept here as positions in
   the normalized text with a stamp per text), then **emit**: a piece that
   is not in the vocabulary is ``unk`` (a run of them one ``unk``), or its
   UTF-8 bytes ``<0xNN>`` with byte fallback.

Pieces are found by hashing the bytes of a span (FNV-1a, open addressing,
the piece's bytes compared); every index read from the model is within its
array by construction of the tables (:mod:`.tables`), and the charsmap
trie's reads are bounds-checked (a broken trie cannot read out of it).
"""

from __future__ import annotations

import numpy as np

from ...runtime.jit import kernel

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_LOW = np.int64(0xFFFFFFFF)

# flags (an int64 array) indices
F_ADD_DUMMY = 0
F_REMOVE_EXTRA = 1
F_ESCAPE = 2
F_SUFFIX = 3
F_BYTE_FALLBACK = 4
F_UNK = 5
N_FLAGS = 6

T_NORMAL, T_UNKNOWN, T_CONTROL, T_USER, T_UNUSED, T_BYTE = 1, 2, 3, 4, 5, 6


@kernel
def span_hash(src, a, b):
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(src[i])) * _FNV_PRIME
    return h


@kernel
def lookup(src, a, b, pbuf, poff, htab):
    """The id of the piece spelt by ``src[a:b]``, or -1."""
    mask = np.uint64(htab.size - 1)
    h = span_hash(src, a, b) & mask
    n = b - a
    while True:
        t = htab[np.int64(h)]
        if t < 0:
            return -1
        s = poff[t]
        if poff[t + 1] - s == n:
            same = True
            for k in range(n):
                if pbuf[s + k] != src[a + k]:
                    same = False
                    break
            if same:
                return t
        h = (h + np.uint64(1)) & mask


@kernel
def _user_match(src, p, end, pbuf, poff, ustart, uids):
    """Length of the longest user-defined symbol at ``src[p:end]`` (0: none)."""
    c = src[p]
    best = 0
    for k in range(ustart[c], ustart[c + 1]):
        t = uids[k]
        s = poff[t]
        n = poff[t + 1] - s
        if n <= best or p + n > end:
            continue
        same = True
        for j in range(1, n):
            if pbuf[s + j] != src[p + j]:
                same = False
                break
        if same:
            best = n
    return best


@kernel
def _charsmap_match(src, p, end, darts, nblob):
    """Longest charsmap rule at ``src[p:end]``: (length consumed, start of
    its replacement in ``nblob``); length 0 when none."""
    n = darts.size
    best = 0
    value = 0
    if n == 0:
        return best, value
    u = np.int64(darts[0])
    node = np.int64(0) ^ ((u >> 10) << ((u & 512) >> 6))
    for i in range(p, end):
        c = np.int64(src[i])
        node ^= c
        if node < 0 or node >= n:
            break
        u = np.int64(darts[node])
        if (u & 0x800000FF) != c:
            break
        node ^= (u >> 10) << ((u & 512) >> 6)
        if (u >> 8) & 1:
            if node < 0 or node >= n:
                break
            v = np.int64(darts[node]) & 0x7FFFFFFF
            if v < nblob.size:
                best = i - p + 1
                value = v
    return best, value


@kernel
def _one_char(src, p, end):
    """(length of the UTF-8 character at p, valid?) as SentencePiece's
    IsValidDecodeUTF8: a malformed sequence is one invalid byte."""
    c = src[p]
    if c < 0x80:
        return 1, True
    if c < 0xC2:
        return 1, False
    if c < 0xE0:
        n = 2
    elif c < 0xF0:
        n = 3
    elif c < 0xF5:
        n = 4
    else:
        return 1, False
    if p + n > end:
        return 1, False
    for k in range(1, n):
        if (src[p + k] & 0xC0) != 0x80:
            return 1, False
    cp = np.int64(c) & (0x7F >> n)
    for k in range(1, n):
        cp = (cp << 6) | (np.int64(src[p + k]) & 0x3F)
    if (n == 3 and cp < 0x800) or (n == 4 and (cp < 0x10000 or cp > 0x10FFFF)) or (0xD800 <= cp <= 0xDFFF):
        return 1, False
    return n, True


@kernel
def _grow(arr, need):
    if need <= arr.size:
        return arr
    size = max(need, 2 * arr.size)
    out = np.empty(size, arr.dtype)
    out[: arr.size] = arr
    return out


@kernel
def _put(nb, k, byte):
    nb = _grow(nb, k + 1)
    nb[k] = byte
    return nb


@kernel
def _put_ws(nb, k, escape):
    if escape:
        nb = _grow(nb, k + 3)
        nb[k] = 0xE2
        nb[k + 1] = 0x96
        nb[k + 2] = 0x81
        return nb, k + 3
    nb = _put(nb, k, 0x20)
    return nb, k + 1


@kernel
def _normalize(buf, a, b, nb, pbuf, poff, ustart, uids, darts, nblob, flags):
    """Normalize ``buf[a:b]`` into ``nb`` (grown as needed): (nb, length)."""
    add_dummy = flags[F_ADD_DUMMY] != 0
    remove_extra = flags[F_REMOVE_EXTRA] != 0
    escape = flags[F_ESCAPE] != 0
    suffix = flags[F_SUFFIX] != 0
    k = 0
    p = a
    if p >= b:
        return nb, 0
    fffd = np.array([0xEF, 0xBF, 0xBD], np.uint8)
    # The replacement of the prefix at p: (source kind, start, length, consumed)
    # kind 0: buf, 1: nblob, 2: U+FFFD
    first = True
    is_prev_space = remove_extra
    while p < b:
        used = 0
        kind = 0
        rs = p
        rn = 0
        if uids.size > 0:
            used = _user_match(buf, p, b, pbuf, poff, ustart, uids)
            rn = used
        if used == 0:
            used, value = _charsmap_match(buf, p, b, darts, nblob)
            if used > 0:
                kind = 1
                rs = value
                rn = 0
                while rs + rn < nblob.size and nblob[rs + rn] != 0:
                    rn += 1
            else:
                n, ok = _one_char(buf, p, b)
                used = n
                if ok:
                    rn = n
                else:
                    kind = 2
                    rs = 0
                    rn = 3
        if first:
            # Leading spaces are dropped (a replacement that is exactly " ").
            if remove_extra:
                if kind == 0:
                    single = rn == 1 and buf[rs] == 0x20
                elif kind == 1:
                    single = rn == 1 and nblob[rs] == 0x20
                else:
                    single = False
                if single:
                    p += used
                    continue
            first = False
            if add_dummy and not suffix:
                nb, k = _put_ws(nb, k, escape)
        # Leading spaces of the replacement after a space are dropped.
        j = 0
        if is_prev_space:
            while j < rn:
                if kind == 0:
                    c = buf[rs + j]
                elif kind == 1:
                    c = nblob[rs + j]
                else:
                    c = fffd[j]
                if c != 0x20:
                    break
                j += 1
        if j < rn:
            last = 0
            while j < rn:
                if kind == 0:
                    c = buf[rs + j]
                elif kind == 1:
                    c = nblob[rs + j]
                else:
                    c = fffd[j]
                if c == 0x20 and escape:
                    nb, k = _put_ws(nb, k, True)
                else:
                    nb = _put(nb, k, c)
                    k += 1
                last = c
                j += 1
            is_prev_space = last == 0x20
        p += used
        if not remove_extra:
            is_prev_space = False
    if first:  # only spaces
        return nb, 0
    if remove_extra:
        while True:
            if escape:
                if k >= 3 and nb[k - 3] == 0xE2 and nb[k - 2] == 0x96 and nb[k - 1] == 0x81:
                    k -= 3
                    continue
            elif k >= 1 and nb[k - 1] == 0x20:
                k -= 1
                continue
            break
    if suffix and add_dummy:
        nb, k = _put_ws(nb, k, escape)
    return nb, k


@kernel
def _bpe(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags,
         start, end, nxt, prv, frozen, heap, rev, stamp, cur, out, k):
    """Merge the normalized text ``nb[:n]`` and append its ids to ``out``
    from ``k``: (out, new k)."""
    unk = flags[F_UNK]
    byte_fallback = flags[F_BYTE_FALLBACK] != 0
    m = 0
    p = 0
    while p < n:
        used = 0
        if uids.size > 0:
            used = _user_match(nb, p, n, pbuf, poff, ustart, uids)
        if used > 0:
            frozen[m] = True
        else:
            frozen[m] = False
            c = nb[p]
            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            if p + used > n:
                used = n - p
        start[m] = p
        end[m] = p + used
        nxt[m] = m + 1
        prv[m] = m - 1
        m += 1
        p += used
    if m == 0:
        return out, k
    nxt[m - 1] = -1
    size = 0
    # Initial pairs, then merges; pushes in SentencePiece's order (the
    # last registration of an unused piece is the one resegmentation uses).
    step = -1
    while True:
        step += 1
        if step < m - 1:
            left = step
            right = step + 1
            nleft = -1
        elif size == 0:
            break
        else:
            key = heap[0]
            size -= 1
            heap[0] = heap[size]
            r = 0
            while True:
                c2 = 2 * r + 1
                if c2 >= size:
                    break
                if c2 + 1 < size and heap[c2 + 1] < heap[c2]:
                    c2 += 1
                if heap[r] <= heap[c2]:
                    break
                heap[r], heap[c2] = heap[c2], heap[r]
                r = c2
            i = key & _LOW
            j = nxt[i]
            if start[i] < 0 or j < 0 or frozen[j]:
                continue
            t = lookup(nb, start[i], end[j], pbuf, poff, htab)
            if t < 0 or np.int64(prank[t]) != key >> 32:
                continue
            end[i] = end[j]
            start[j] = -1
            nxt[i] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = i
            left = prv[i]
            right = i
            nleft = i
        # Push (left, right), and after a merge (nleft, nxt[nleft]) too.
        for side in range(2):
            if side == 1:
                if nleft < 0:
                    break
                left = nleft
                right = nxt[nleft]
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                continue
            t = lookup(nb, start[left], end[right], pbuf, poff, htab)
            if t < 0:
                continue
            ty = ptype[t]
            if ty != T_NORMAL and ty != T_USER and ty != T_UNUSED:
                continue
            r = size
            heap[r] = (np.int64(prank[t]) << 32) | left
            size += 1
            while r > 0 and heap[(r - 1) >> 1] > heap[r]:
                heap[(r - 1) >> 1], heap[r] = heap[r], heap[(r - 1) >> 1]
                r = (r - 1) >> 1
            if ty == T_UNUSED:
                rev[3 * t] = start[left]
                rev[3 * t + 1] = start[right]
                rev[3 * t + 2] = end[right]
                stamp[t] = cur
    # Resegment and emit.  ``heap`` is free now: a stack of spans.
    prev_unk = False
    i = 0
    while i >= 0:
        sp = 0
        heap[0] = start[i]
        heap[1] = end[i]
        sp = 2
        while sp > 0:
            sp -= 2
            a = heap[sp]
            b = heap[sp + 1]
            t = lookup(nb, a, b, pbuf, poff, htab)
            if t >= 0 and ptype[t] == T_UNUSED and stamp[t] == cur:
                mid = rev[3 * t + 1]
                # the two halves as spans of equal text where registered
                la = rev[3 * t]
                lb = rev[3 * t + 2]
                heap[sp] = mid
                heap[sp + 1] = lb
                heap[sp + 2] = la
                heap[sp + 3] = mid
                sp += 4
                continue
            if t < 0:
                t = unk
            if ptype[t] == T_UNKNOWN:
                if byte_fallback:
                    out = _grow(out, k + (b - a))
                    for q in range(a, b):
                        out[k] = byte_ids[nb[q]]
                        k += 1
                elif not prev_unk:
                    out = _grow(out, k + 1)
                    out[k] = t
                    k += 1
                prev_unk = True
            else:
                out = _grow(out, k + 1)
                out[k] = t
                k += 1
                prev_unk = False
        i = nxt[i]
    return out, k


@kernel
def encode_batch(buf, offs, pbuf, poff, ptype, prank, htab, ustart, uids, darts, nblob, byte_ids, flags):
    """Ids of every text ``buf[offs[r]:offs[r + 1]]``: (ids, row ends)."""
    rows = offs.size - 1
    longest = 1
    for r in range(rows):
        if offs[r + 1] - offs[r] > longest:
            longest = offs[r + 1] - offs[r]
    nb = np.empty(3 * longest + 8, np.uint8)
    cap = nb.size
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    nxt = np.empty(cap, np.int64)
    prv = np.empty(cap, np.int64)
    frozen = np.empty(cap, np.bool_)
    heap = np.empty(3 * cap + 4, np.int64)
    n_pieces = ptype.size
    rev = np.empty(3 * n_pieces, np.int64)
    stamp = np.full(n_pieces, -1, np.int64)
    out = np.empty(max(16, buf.size + 4 * rows), np.int32)
    row_ends = np.empty(rows, np.int64)
    k = 0
    for r in range(rows):
        nb, n = _normalize(buf, offs[r], offs[r + 1], nb, pbuf, poff, ustart, uids, darts, nblob, flags)
        if n > cap:
            cap = nb.size
            start = np.empty(cap, np.int64)
            end = np.empty(cap, np.int64)
            nxt = np.empty(cap, np.int64)
            prv = np.empty(cap, np.int64)
            frozen = np.empty(cap, np.bool_)
            heap = np.empty(3 * cap + 4, np.int64)
        out, k = _bpe(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags,
                      start, end, nxt, prv, frozen, heap, rev, stamp, r, out, k)
        row_ends[r] = k
    return out[:k], row_ends
