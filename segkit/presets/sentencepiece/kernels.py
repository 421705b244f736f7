"""SentencePiece BPE, compiled: the normalizer and the merges, a whole batch
per call.

Per text (UTF-8 bytes), exactly as SentencePiece's ``Normalizer`` and
``bpe::Model`` define it:

1. **Normalize** (:func:`_normalize`): at each position the longest
   user-defined symbol is kept as it is, else the longest rule of the
   precompiled charsmap (a Darts double-array trie, see :mod:`segkit.presets.pipeline.charsmap`)
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
   On models where :mod:`.longest` built its tables (``flags[F_LONGEST]``),
   long words and whole texts outside word mode are encoded instead by
   longest match plus the pair test (written out in :func:`encode_rows`):
   O(n) per text.
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

from ...engine.intrinsics import prefetch
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
F_HAS_UNUSED = 6
F_FAST = 7
F_PAIR_BITS = 8
F_SPLIT = 9
F_LONGEST = 10  # 1: longest match plus the pair test (.longest) instead of the heap; 2: for every word
F_MAX_CHARS = 11  # the most characters of a piece (the exact pair test's scratch)
N_FLAGS = 12

T_NORMAL, T_UNKNOWN, T_CONTROL, T_USER, T_UNUSED, T_BYTE = 1, 2, 3, 4, 5, 6

# The longest-match encoder's tables (see .longest): a trie slot is
# ``((node << TRIE_CP_BITS | code point) << TRIE_CHILD_BITS) | child``;
# ``tinfo[4 t]`` is characters | TINFO_MARKED | (next shorter piece + 1) << 32.
TRIE_CP_BITS = 21
TRIE_CHILD_BITS = 22
TRIE_CHILD_MASK = (1 << TRIE_CHILD_BITS) - 1
TINFO_LEN_MASK = (1 << 20) - 1
TINFO_MARKED = 1 << 20
#: the prefix table's hash of code points: h = (h ^ cp) * PREFIX_MUL from PREFIX_SEED
PREFIX_SEED = np.uint64(0xCBF29CE484222325)
PREFIX_MUL = np.uint64(0x100000001B3)
#: after the 4 n ints of tinfo: a bit set of 2^BIGRAM_BITS bits, set for
#: the (hashed) pieces of each two characters side by side in a mergeable piece
BIGRAM_BITS = 20


@kernel(inline="always")
def span_hash(src, a, b):
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(src[i])) * _FNV_PRIME
    return h


@kernel(inline="always")
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


@kernel(inline="always")
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


@kernel(inline="always")
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


@kernel(inline="always")
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
    if darts.size == 0 and not remove_extra:
        # Identity without whitespace removal: every replacement is the
        # text itself (user-defined symbols included; the input is the
        # UTF-8 of a str, so never malformed), spaces escaped.
        if 3 * (b - a) + 6 > nb.size:
            nb = _grow(nb, 3 * (b - a) + 6)
        if add_dummy and not suffix:
            if escape:
                nb[0] = 0xE2
                nb[1] = 0x96
                nb[2] = 0x81
                k = 3
            else:
                nb[0] = 0x20
                k = 1
        for q in range(a, b):
            c = buf[q]
            if c == 0x20 and escape:
                nb[k] = 0xE2
                nb[k + 1] = 0x96
                nb[k + 2] = 0x81
                k += 3
            else:
                nb[k] = c
                k += 1
        if add_dummy and suffix:
            if escape:
                nb[k] = 0xE2
                nb[k + 1] = 0x96
                nb[k + 2] = 0x81
                k += 3
            else:
                nb[k] = 0x20
                k += 1
        return nb, k
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
                if k + 3 > nb.size:
                    nb = _grow(nb, k + 3)
                if escape:
                    nb[k] = 0xE2
                    nb[k + 1] = 0x96
                    nb[k + 2] = 0x81
                    k += 3
                else:
                    nb[k] = 0x20
                    k += 1
        # Leading spaces of the replacement after a space are dropped.
        j = 0
        if is_prev_space:
            while j < rn:
                if kind == 0:
                    c = buf[rs + j]
                elif kind == 1:
                    c = nblob[rs + j]
                else:
                    c = 0xEF if j == 0 else 0xBF if j == 1 else 0xBD
                if c != 0x20:
                    break
                j += 1
        if j < rn:
            if k + 3 * (rn - j) + 3 > nb.size:
                nb = _grow(nb, k + 3 * (rn - j) + 3)
            last = 0
            while j < rn:
                if kind == 0:
                    c = buf[rs + j]
                elif kind == 1:
                    c = nblob[rs + j]
                else:
                    c = 0xEF if j == 0 else 0xBF if j == 1 else 0xBD
                if c == 0x20 and escape:
                    nb[k] = 0xE2
                    nb[k + 1] = 0x96
                    nb[k + 2] = 0x81
                    k += 3
                else:
                    nb[k] = c
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
        if k + 3 > nb.size:
            nb = _grow(nb, k + 3)
        if escape:
            nb[k] = 0xE2
            nb[k + 1] = 0x96
            nb[k + 2] = 0x81
            k += 3
        else:
            nb[k] = 0x20
            k += 1
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
                    if k + (b - a) > out.size:
                        out = _grow(out, k + (b - a))
                    for q in range(a, b):
                        out[k] = byte_ids[nb[q]]
                        k += 1
                elif not prev_unk:
                    if k + 1 > out.size:
                        out = _grow(out, k + 1)
                    out[k] = t
                    k += 1
                prev_unk = True
            else:
                if k + 1 > out.size:
                    out = _grow(out, k + 1)
                out[k] = t
                k += 1
                prev_unk = False
        i = nxt[i]
    return out, k


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@kernel(inline="always")
def pair_slot(x, y, bits):
    key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
    return np.int64((key * _GOLDEN) >> np.uint64(64 - bits))


@kernel(inline="always")
def pair_lookup(x, y, pkey, pval, bits):
    """``rank << 32 | piece`` of the piece made of the pieces ``x`` and
    ``y``, or -1.  A slot is one int64: ``(x << 16 | y) << 32 | rank << 16 |
    piece`` (ids and ranks below 2^16; -1: empty), so a probe reads 8 bytes."""
    if x < 0 or y < 0:
        return -1
    key = np.uint64((x << 16) | y)
    mask = pkey.size - 1
    h = pair_slot(x, y, bits)
    while True:
        e = pkey[h]
        if e == -1:
            return -1
        if (np.uint64(e) >> np.uint64(32)) == key:
            v = e & 0xFFFFFFFF
            return ((v >> 16) << 32) | (v & 0xFFFF)
        h = (h + 1) & mask


_NONE = np.int64(1) << np.int64(40)
_FROZEN = np.int64(1) << np.int64(20)
#: _NONE as the scans' minimum key ``rank << 8 | position`` (every key of a pair is below it)
_NONE_AT = (_NONE >> np.int64(16)) << np.int64(8)


@kernel(inline="always")
def bigram_bit(x, y):
    """The bit of two characters' pieces in tinfo's bigram set."""
    key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
    return np.int64((key * _GOLDEN) >> np.uint64(64 - BIGRAM_BITS))


@kernel(inline="always")
def pair_key(x, y, pkey, bits):
    """``rank << 16 | piece`` of the piece made of the pieces ``x`` and ``y``
    (the low half of their slot, see :func:`pair_lookup`), or _NONE when
    there is none, or either is no piece (-1) or frozen (| _FROZEN)."""
    if ((x | y) >> 16) != 0:
        return _NONE
    key = np.uint64((x << 16) | y)
    mask = pkey.size - 1
    h = pair_slot(x, y, bits)
    while True:
        e = pkey[h]
        if e == -1:
            return _NONE
        if (np.uint64(e) >> np.uint64(32)) == key:
            return e & 0xFFFFFFFF
        h = (h + 1) & mask


@kernel
def build_pairs(pbuf, poff, ptype, prank, htab):
    """For the fast path: ``(char_ids, pkey, pval, bits, fast)``.

    ``char_ids[cp]`` is the piece of the one character ``cp`` (below
    U+10000), or -1; the pair table maps two pieces ``(x, y)`` to the piece
    spelt by their concatenation, for every mergeable piece and every split
    of it into two pieces; ``pval`` (when ``fast``) is ``char_ids`` packed
    16 bits a character.  ``fast`` is False when some character of a
    normal or unused piece is not itself a mergeable piece: a merge could then start
    from a symbol that has no id, and the span encoder must run instead.
    """
    n = ptype.size
    char_ids = np.full(0x10000, -1, np.int64)
    total = 0
    for t in range(n):
        ty = ptype[t]
        if ty != T_NORMAL and ty != T_USER and ty != T_UNUSED:
            continue
        a = poff[t]
        b = poff[t + 1]
        for q in range(a + 1, b):
            if (pbuf[q] & 0xC0) != 0x80:  # a split point of piece t into two pieces?
                x = lookup(pbuf, a, q, pbuf, poff, htab)
                y = lookup(pbuf, q, b, pbuf, poff, htab)
                if x >= 0 and y >= 0:
                    total += 1
    bits = 4
    while (1 << bits) < 2 * total + 16:
        bits += 1
    pkey = np.full(1 << bits, -1, np.int64)  # see pair_lookup
    pval = np.zeros(0, np.int64)
    mask = (1 << bits) - 1
    fast = n <= 0xFFFF  # ids and ranks fit the table's 16-bit fields
    for t in range(n):
        a = poff[t]
        b = poff[t + 1]
        c = pbuf[a]
        size = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
        if a + size == b and size <= 3:
            cp = np.int64(c) & (0x7F >> (size - 1) if size > 1 else 0x7F)
            if size == 2:
                cp = np.int64(c) & 0x1F
            elif size == 3:
                cp = np.int64(c) & 0x0F
            for q in range(a + 1, b):
                cp = (cp << 6) | (np.int64(pbuf[q]) & 0x3F)
            if cp < 0x10000:
                char_ids[cp] = t
        ty = ptype[t]
        if ty != T_NORMAL and ty != T_UNUSED:
            # A user-defined piece is never made by a merge: wherever its
            # text starts at a symbol, the matcher made it (or a longer one)
            # one frozen symbol.
            continue
        p = a
        while p < b:
            c = pbuf[p]
            size = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            e = min(p + size, b)
            one = lookup(pbuf, p, e, pbuf, poff, htab)
            if one < 0 or (ptype[one] != T_NORMAL and ptype[one] != T_USER and ptype[one] != T_UNUSED):
                fast = False
            if p > a:
                x = lookup(pbuf, a, p, pbuf, poff, htab)
                y = lookup(pbuf, p, b, pbuf, poff, htab)
                if x >= 0 and y >= 0:
                    tx = ptype[x]
                    ty2 = ptype[y]
                    if (tx == T_NORMAL or tx == T_USER or tx == T_UNUSED) and (
                            ty2 == T_NORMAL or ty2 == T_USER or ty2 == T_UNUSED):
                        h = pair_slot(x, y, bits)
                        while pkey[h] != -1:
                            h = (h + 1) & mask
                        pkey[h] = np.int64((np.uint64((x << 16) | y) << np.uint64(32))
                                           | np.uint64((np.int64(prank[t]) << 16) | t))
            p = e
    if fast:
        # ``pval``: char_ids packed 16 bits a character, 4 to an int64
        # (0xFFFF: no piece), 128 KiB instead of 512: the scans of short
        # words read it (see encode_rows), and it stays in a core's cache.
        pval = np.empty(0x4000, np.int64)
        for q in range(0x4000):
            v = np.int64(0)
            for j in range(4):
                c = char_ids[4 * q + j]
                v |= (np.int64(0xFFFF) if c < 0 else c) << (16 * j)
            pval[q] = v
    return char_ids, pkey, pval, bits, fast


@kernel
def _bpe_ids(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags, char_ids, pkey, pval, bits,
             start, end, nxt, prv, frozen, tok, cand, heap, rev, stamp, cur, out, k):
    """:func:`_bpe` on piece ids (same results), for models where every
    character of a mergeable piece is a mergeable piece: a pair is merged
    only if both symbols are pieces, so the pair table of ids replaces the
    hashing of spans.  ``cand[i]`` is the piece the current pair at symbol
    ``i`` makes (-1: none), set whenever that pair changes, so a popped
    entry is checked without a look-up."""
    unk = flags[F_UNK]
    has_unused = flags[F_HAS_UNUSED] != 0
    byte_fallback = flags[F_BYTE_FALLBACK] != 0
    m = 0
    p = 0
    while p < n:
        used = 0
        if uids.size > 0:
            used = _user_match(nb, p, n, pbuf, poff, ustart, uids)
        if used > 0:
            frozen[m] = True
            tok[m] = lookup(nb, p, p + used, pbuf, poff, htab)
        else:
            frozen[m] = False
            c = nb[p]
            if c < 0x80:
                used = 1
                tok[m] = char_ids[c]
            elif c < 0xE0 and p + 2 <= n:
                used = 2
                tok[m] = char_ids[((np.int64(c) & 0x1F) << 6) | (np.int64(nb[p + 1]) & 0x3F)]
            elif c < 0xF0 and p + 3 <= n:
                used = 3
                tok[m] = char_ids[((np.int64(c) & 0x0F) << 12) | ((np.int64(nb[p + 1]) & 0x3F) << 6)
                                  | (np.int64(nb[p + 2]) & 0x3F)]
            else:
                used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
                if p + used > n:
                    used = n - p
                tok[m] = lookup(nb, p, p + used, pbuf, poff, htab)
        start[m] = p
        end[m] = p + used
        nxt[m] = m + 1
        prv[m] = m - 1
        cand[m] = -1
        m += 1
        p += used
    if m == 0:
        return out, k
    nxt[m - 1] = -1
    size = 0
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
            v = cand[i]
            if start[i] < 0 or v < 0 or (v >> 32) != key >> 32:
                continue
            t = v & _LOW
            j = nxt[i]
            tok[i] = t
            end[i] = end[j]
            start[j] = -1
            nxt[i] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = i
            left = prv[i]
            right = i
            nleft = i
        for side in range(2):
            if side == 1:
                if nleft < 0:
                    break
                left = nleft
                right = nxt[nleft]
            if left < 0:
                continue
            cand[left] = -1
            if right < 0 or frozen[left] or frozen[right]:
                continue
            v = pair_lookup(tok[left], tok[right], pkey, pval, bits)
            if v < 0:
                continue
            cand[left] = v
            r = size
            heap[r] = (v & ~_LOW) | left
            size += 1
            while r > 0 and heap[(r - 1) >> 1] > heap[r]:
                heap[(r - 1) >> 1], heap[r] = heap[r], heap[(r - 1) >> 1]
                r = (r - 1) >> 1
            t = v & _LOW
            if has_unused and ptype[t] == T_UNUSED:
                rev[3 * t] = tok[left]
                rev[3 * t + 1] = tok[right]
                stamp[t] = cur
    prev_unk = False
    i = 0
    while i >= 0:
        t = tok[i]
        if t < 0 or ptype[t] == T_UNKNOWN:
            a = start[i]
            b = end[i]
            if byte_fallback:
                if k + (b - a) > out.size:
                    out = _grow(out, k + (b - a))
                for q in range(a, b):
                    out[k] = byte_ids[nb[q]]
                    k += 1
            elif not prev_unk:
                if k + 1 > out.size:
                    out = _grow(out, k + 1)
                out[k] = unk
                k += 1
            prev_unk = True
        elif ptype[t] != T_UNUSED or stamp.size == 0 or stamp[t] != cur:
            if k + 1 > out.size:
                out = _grow(out, k + 1)
            out[k] = t
            k += 1
            prev_unk = False
        else:
            sp = 1
            heap[0] = t
            while sp > 0:
                sp -= 1
                t = heap[sp]
                if ptype[t] == T_UNUSED and stamp[t] == cur:
                    heap[sp] = rev[3 * t + 1]
                    heap[sp + 1] = rev[3 * t]
                    sp += 2
                    continue
                if k + 1 > out.size:
                    out = _grow(out, k + 1)
                out[k] = t
                k += 1
            prev_unk = False
        i = nxt[i]
    return out, k


# ------------------------------------------------------------------ words
# Word mode (flags[F_SPLIT] != 0, set at load by split_mode): the
# normalized text is cut into words where no piece can span the cut, each
# word is merged alone (a short one by scans of small contiguous arrays, a
# long one by the heap on its span), and short words' ids are kept in a
# bounded cache keyed by their bytes (see encode_rows).

SPLIT_BEFORE = 1  # cut before each run of "▁" that follows another character
SPLIT_AFTER = 2  # cut after each run of "▁" that some other character follows

#: a word of at most this many bytes is merged by scans (O(m^2) on m
#: symbols, in scratch that stays in L1); longer ones by the heap
SMALL_BYTES = 64
#: the stride of the five regions of that scratch (see encode_rows)
SMALL_STRIDE = SMALL_BYTES + 1

#: the word cache: rows of CACHE_ROW int32 (one 64-byte line): [0] a tag
#: from the word's hash (0: an empty row), [1] its byte length | the
#: number of its ids << 8, [2:8] its bytes (in memory order; bytes past
#: its length are left from earlier words), [8:16] its ids.  Rows go in
#: pairs (2-way sets).
CACHE_ROW = 16
CACHE_KEY_BYTES = 24
CACHE_IDS = 8
#: rows of a word cache (4 MiB; zeros from calloc, so its pages are made as
#: words fill it)
CACHE_ROWS = 1 << 16
#: words whose ends, hashes and cache prefetches are computed ahead (see encode_rows)
CHUNK_WORDS = 16

_BIG = np.int64(1) << np.int64(62)
_MUL = np.uint64(0x9E3779B97F4A7C15)


@kernel
def split_mode(pbuf, poff, ptype):
    """:data:`SPLIT_BEFORE` when no mergeable piece (normal, user-defined,
    unused) has a "▁" right after another character, else
    :data:`SPLIT_AFTER` when none has a character other than "▁" right
    after a "▁", else 0.

    Why cutting there is exact: a merge makes a mergeable piece of two
    adjacent symbols, and a user-defined symbol is a mergeable piece
    matched in place, so no symbol ever covers two characters that no
    mergeable piece has side by side.  The words' merges are then
    independent (each step's best pair is the best of some word, ties to
    the left within it), and so is the grouping of characters into symbols
    (the longest user-defined match at a word's first character starts
    there in the whole text too)."""
    before = True
    after = True
    n = ptype.size
    for t in range(n):
        ty = ptype[t]
        if ty != T_NORMAL and ty != T_USER and ty != T_UNUSED:
            continue
        a = poff[t]
        b = poff[t + 1]
        prev = -1  # 1: the previous character is "▁", 0: another one, -1: none
        p = a
        while p < b:
            c = pbuf[p]
            size = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            space = c == 0xE2 and p + 3 <= b and pbuf[p + 1] == 0x96 and pbuf[p + 2] == 0x81
            if space and prev == 0:
                before = False
            if not space and prev == 1:
                after = False
            prev = 1 if space else 0
            p += size
    if before:
        return SPLIT_BEFORE
    if after:
        return SPLIT_AFTER
    return 0


@kernel(inline="always")
def unpack(mb, mi):
    """The model's arrays from :func:`pack`'s ``(mb, mi)``."""
    base = 18
    return (mb[mi[0] : mi[1]], mb[mi[1] : mi[2]], mi[base + mi[3] : base + mi[4]], mi[base + mi[4] : base + mi[5]],
            mi[base + mi[5] : base + mi[6]], mi[base + mi[6] : base + mi[7]], mi[base + mi[7] : base + mi[8]],
            mi[base + mi[8] : base + mi[9]], mi[base + mi[9] : base + mi[10]], mi[base + mi[10] : base + mi[11]],
            mi[base + mi[11] : base + mi[12]], mi[base + mi[12] : base + mi[13]], mi[base + mi[13] : base + mi[14]],
            mi[base + mi[14] : base + mi[15]], mi[base + mi[15] : base + mi[16]], mi[base + mi[16] : base + mi[17]])


@kernel
def _heap(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags, char_ids, pkey, pval, big, rev,
          stamp, cur, out, k):
    """The heap merge (:func:`_bpe_ids`, or :func:`_bpe` when the model is
    not fast) of ``nb[:n]``, its scratch carved from ``big`` (at least
    ``10 n + 4`` int64), its ids appended to ``out`` from ``k`` (room for
    ``n`` more: a symbol gives one id, or one per byte): the new ``k``."""
    cap = max(n, 1)
    start = big[0:cap]
    end = big[cap : 2 * cap]
    nxt = big[2 * cap : 3 * cap]
    prv = big[3 * cap : 4 * cap]
    tok = big[4 * cap : 5 * cap]
    cand = big[5 * cap : 6 * cap]
    frozen = big[6 * cap : 7 * cap]
    heap = big[7 * cap : 10 * cap + 4]
    if flags[F_FAST] != 0:
        _, k = _bpe_ids(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags, char_ids, pkey, pval,
                        flags[F_PAIR_BITS], start, end, nxt, prv, frozen, tok, cand, heap, rev, stamp, cur, out, k)
    else:
        _, k = _bpe(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags,
                    start, end, nxt, prv, frozen, heap, rev, stamp, cur, out, k)
    return k


@kernel
def encode_rows(buf, offs, mb, mi, cache, out, row_ends):
    """Append the ids of every text ``buf[offs[r]:offs[r + 1]]`` (UTF-8 of
    Python strings; with ``offs`` empty: all of ``buf``, one text) to
    ``out``, growing it: (out, number of ids).  ``row_ends[r]`` is set to
    the end of text ``r``'s ids unless ``row_ends`` is empty.  ``mb``,
    ``mi``: the model packed by :func:`pack`; ``cache``: a word cache
    (:data:`CACHE_ROWS` rows of :data:`CACHE_ROW` int32, zeros when new)
    that no other call uses meanwhile, or an empty array.

    Per text: normalize (the identity without whitespace removal, the
    common case, written out here), then in word mode (``flags[F_SPLIT]``,
    see :func:`split_mode`) cut the text into words and take each word's
    ids from the cache or merge it (one of at most :data:`SMALL_BYTES`
    bytes here, by scans of contiguous arrays; a longer one by longest
    match plus the pair test where the model has its tables, else by the
    heap), else encode the whole text by the longest match or the heap.

    Everything per text and per word is written out in this one function:
    Numba counts references to every array a called function takes, at
    each call (two atomic operations an array: a call with twenty arrays
    cost more than a cached word), and each array grows only on paths that
    seldom run."""
    (pbuf, nblob, poff, ptype, prank, htab, ustart, uids, darts, byte_ids, flags, char_ids, pkey,
     pval, trie, tinfo) = unpack(mb, mi)
    add_dummy = flags[F_ADD_DUMMY] != 0
    escape = flags[F_ESCAPE] != 0
    suffix = flags[F_SUFFIX] != 0
    identity = darts.size == 0 and flags[F_REMOVE_EXTRA] == 0
    mode = flags[F_SPLIT]
    fast = flags[F_FAST] != 0
    bits = flags[F_PAIR_BITS]
    unk = flags[F_UNK]
    byte_fallback = flags[F_BYTE_FALLBACK] != 0
    has_users = uids.size > 0
    sets = (cache.size // CACHE_ROW) >> 1
    set_mask = np.uint64(max(sets - 1, 0))
    S = SMALL_STRIDE
    bt = flags[F_LONGEST] != 0  # longest match plus the pair test (.longest): long words, whole texts
    bt_all = flags[F_LONGEST] == 2  # (and short words too: for tests)
    tmask = trie.size - 1
    tbits = 0
    while (1 << tbits) < trie.size:
        tbits += 1
    bgbase = 4 * ptype.size
    rows = offs.size - 1 if offs.size > 0 else 1
    longest = 1
    for r in range(rows):
        a0 = offs[r] if offs.size > 0 else 0
        b0 = offs[r + 1] if offs.size > 0 else buf.size
        if b0 - a0 > longest:
            longest = b0 - a0
    nb = np.empty(3 * longest + 8, np.uint8)
    work = np.empty(3 * S, np.int64)
    wpos = np.empty(CHUNK_WORDS, np.int64)
    whash = np.empty(CHUNK_WORDS, np.uint64)
    cbytes = cache.view(np.uint8)  # the rows' key bytes are read and written byte by byte
    big = np.empty(0, np.int64)
    n_pieces = ptype.size if flags[F_HAS_UNUSED] != 0 else 0  # read for UNUSED pieces only
    rev = np.empty(3 * n_pieces, np.int64)
    stamp = np.full(n_pieces, -1, np.int64)
    # The longest-match encoder's scratch, made when a word first needs it
    # (need_bt below): a run's code points, their pieces and byte
    # positions, the dead positions (by run number), the candidates of a
    # position, the exact pair test's symbols.
    cps = np.empty(0, np.int32)
    cid = np.empty(0, np.int32)
    cpos = np.empty(0, np.int64)
    dead = np.zeros(0, np.int64)
    cands = np.empty(0, np.int64)
    pairsym = np.empty(0, np.int64)
    run_no = np.int64(0)
    k = 0
    r = 0
    while r < rows:
        a0 = offs[r] if offs.size > 0 else 0
        b0 = offs[r + 1] if offs.size > 0 else buf.size
        # ---- normalize into nb[:n]
        n = 0
        if not identity:
            nb, n = _normalize(buf, a0, b0, nb, pbuf, poff, ustart, uids, darts, nblob, flags)
        elif b0 > a0:
            # Every replacement is the text itself (user-defined symbols
            # included; UTF-8 of a str is never malformed), spaces escaped.
            if add_dummy and not suffix:
                if escape:
                    nb[0] = 0xE2
                    nb[1] = 0x96
                    nb[2] = 0x81
                    n = 3
                else:
                    nb[0] = 0x20
                    n = 1
            for q in range(a0, b0):
                c = buf[q]
                if c == 0x20 and escape:
                    nb[n] = 0xE2
                    nb[n + 1] = 0x96
                    nb[n + 2] = 0x81
                    n += 3
                else:
                    nb[n] = c
                    n += 1
            if add_dummy and suffix:
                if escape:
                    nb[n] = 0xE2
                    nb[n + 1] = 0x96
                    nb[n + 2] = 0x81
                    n += 3
                else:
                    nb[n] = 0x20
                    n += 1
        # A text's ids are at most its normalized bytes (a symbol gives one
        # id, or one per byte), so nothing below grows ``out``.
        if k + n + 8 > out.size:
            out = _grow(out, k + n + 8)
        if mode == 0 and not bt:
            if big.size < 10 * n + 4:
                big = np.empty(max(10 * n + 4, 2 * big.size), np.int64)
            k = _heap(nb, n, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags, char_ids, pkey,
                           pval, big, rev, stamp, r, out, k)
            if row_ends.size > 0:
                row_ends[r] = k
            r += 1
            continue
        # ---- word by word (restarted when a long word needs more scratch:
        # arrays are not rebound inside this loop, which would count
        # references at each word)
        row_start = k
        need_big = 0
        need_bt = 0
        nw = 0  # words of the current chunk (wpos, whash)
        w = 0
        a = 0
        while a < n:
            if w == nw:
                # ---- the next chunk of up to CHUNK_WORDS words: their
                # ends, hashes, and their cache sets prefetched, so that the
                # sets' lines (the cache is larger than a core's caches) are
                # on their way while the words before them are merged.
                # A word's end: before the next run of "▁" after another
                # character (SPLIT_BEFORE), or after the run of "▁" that
                # ends this word.  A continuation byte is never 0xE2: one
                # byte at a time is exact.
                nw = 0
                w = 0
                p = a
                while p < n and nw < CHUNK_WORDS:
                    q = p
                    if mode == 0:
                        p = n
                    elif mode == SPLIT_BEFORE:
                        while p + 3 <= n and nb[p] == 0xE2 and nb[p + 1] == 0x96 and nb[p + 2] == 0x81:
                            p += 3
                        while p < n and not (nb[p] == 0xE2 and p + 3 <= n and nb[p + 1] == 0x96
                                             and nb[p + 2] == 0x81):
                            p += 1
                    else:
                        while p < n and not (nb[p] == 0xE2 and p + 3 <= n and nb[p + 1] == 0x96
                                             and nb[p + 2] == 0x81):
                            p += 1
                        while p + 3 <= n and nb[p] == 0xE2 and nb[p + 1] == 0x96 and nb[p + 2] == 0x81:
                            p += 3
                    wpos[nw] = p
                    hv = np.uint64(0)
                    if sets > 0 and mode != 0 and p - q <= CACHE_KEY_BYTES:
                        hv = _MUL ^ np.uint64(p - q)
                        for i in range(q, p):
                            hv = (hv ^ np.uint64(nb[i])) * _MUL
                        hv ^= hv >> np.uint64(29)
                        s0 = np.int64((hv >> np.uint64(33)) & set_mask) * (2 * CACHE_ROW)
                        prefetch(cache, s0)
                        prefetch(cache, s0 + CACHE_ROW)
                    whash[nw] = hv
                    nw += 1
            b = wpos[w]
            hv = whash[w]
            w += 1
            k0 = k
            # ---- the cache: a 2-way set by the hash of the word's bytes
            # (hv = 0: a word too long to be kept, or no cache)
            keyed = hv != 0
            found = -1
            s0 = 0
            tag = np.int32(0)
            if keyed:
                s0 = np.int64((hv >> np.uint64(33)) & set_mask) * (2 * CACHE_ROW)
                tag = np.int32(np.int64(hv & np.uint64(0x7FFFFFFF)) | 1)
                for way in range(2):
                    rr = s0 + way * CACHE_ROW
                    if cache[rr] != tag or (cache[rr + 1] & 0xFF) != b - a:
                        continue
                    same = True
                    j = 4 * (rr + 2)
                    for q in range(a, b):
                        if cbytes[j] != nb[q]:
                            same = False
                            break
                        j += 1
                    if same:
                        found = rr
                        break
            if found >= 0:
                for i in range(cache[found + 1] >> 8):
                    out[k] = cache[found + 2 + CACHE_KEY_BYTES // 4 + i]
                    k += 1
            elif bt and (bt_all or b - a > SMALL_BYTES or mode == 0):
                if b - a + 1 > cps.size:
                    need_bt = b - a + 1
                    break
                # ---- longest match plus the pair test (.longest).  The
                # word's runs of characters that are normal pieces, each
                # encoded on the stack out[k:top]; between runs a
                # user-defined symbol or a character that is no normal piece.
                prev_unk = False
                p = a
                while p < b:
                    e = 0
                    q = p
                    while q < b:
                        c = nb[q]
                        if has_users and ustart[c] < ustart[c + 1]:
                            if _user_match(nb, q, b, pbuf, poff, ustart, uids) > 0:
                                break
                        cp = np.int64(-1)
                        used = 1
                        if c < 0x80:
                            cp = np.int64(c)
                        elif c < 0xE0 and q + 2 <= b:
                            used = 2
                            cp = ((np.int64(c) & 0x1F) << 6) | (np.int64(nb[q + 1]) & 0x3F)
                        elif c < 0xF0 and q + 3 <= b:
                            used = 3
                            cp = (((np.int64(c) & 0x0F) << 12) | ((np.int64(nb[q + 1]) & 0x3F) << 6)
                                  | (np.int64(nb[q + 2]) & 0x3F))
                        if cp >= 0:
                            t = (pval[cp >> 2] >> ((cp & 3) * 16)) & 0xFFFF
                            if t == 0xFFFF:
                                t = -1
                        else:
                            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
                            if q + used > b:
                                used = b - q
                            t = lookup(nb, q, q + used, pbuf, poff, htab)
                            if t >= 0 and used == 4:
                                cp = (((np.int64(c) & 0x07) << 18) | ((np.int64(nb[q + 1]) & 0x3F) << 12)
                                      | ((np.int64(nb[q + 2]) & 0x3F) << 6) | (np.int64(nb[q + 3]) & 0x3F))
                        if t < 0 or cp < 0 or ptype[t] != T_NORMAL:
                            break
                        cps[e] = cp
                        cid[e] = t
                        cpos[e] = q
                        e += 1
                        q += used
                    if e > 0:
                        run_no += 1
                        top = k
                        pos = 0
                        walk = True
                        tok = np.int64(-1)
                        while True:
                            if walk:
                                # the longest piece at pos: the prefix table
                                # (.longest) by the hash of each longer prefix,
                                # the candidates' bytes compared (a hash is no proof)
                                ph = PREFIX_SEED
                                nc = 0
                                for j in range(pos, e):
                                    ph = (ph ^ np.uint64(cps[j])) * PREFIX_MUL
                                    g = np.int64((ph * _GOLDEN) >> np.uint64(64 - tbits))
                                    ptag = np.int64(ph >> np.uint64(16))
                                    v = np.int64(-1)
                                    while True:
                                        sl = trie[g]
                                        if sl == -1:
                                            break
                                        if (sl >> 16) & 0xFFFFFFFFFFFF == ptag:
                                            v = sl & 0xFFFF
                                            break
                                        g = (g + 1) & tmask
                                    if v < 0:
                                        break
                                    if v != 0xFFFF:
                                        cands[nc] = v
                                        nc += 1
                                tok = np.int64(-1)
                                while nc > 0:
                                    nc -= 1
                                    t = cands[nc]
                                    sa = poff[t]
                                    sb = poff[t + 1]
                                    ta = cpos[pos]
                                    same = ta + (sb - sa) <= b
                                    if same:
                                        for i in range(sb - sa):
                                            if pbuf[sa + i] != nb[ta + i]:
                                                same = False
                                                break
                                    if same:
                                        tok = t
                                        break
                                walk = False
                            ti = tinfo[4 * tok]
                            end = pos + (ti & TINFO_LEN_MASK)
                            ok = dead[end] != run_no
                            if ok and top > k:
                                # the pair test (.longest): is (x, y) BPE's output for their text?
                                x = np.int64(out[top - 1])
                                y = tok
                                tx = tinfo[4 * x]
                                bg = bigram_bit(cid[pos - 1], cid[pos])
                                if ((tinfo[bgbase + (bg >> 6)] >> (bg & 63)) & 1) == 0:
                                    pass  # no piece has these two characters side by side: no merge across
                                elif pair_key(x, y, pkey, bits) != _NONE:
                                    ok = False
                                elif ((tx | ti) & TINFO_MARKED) != 0:
                                    # a tree that is not monotone: BPE of the two pieces' characters
                                    lx = tx & TINFO_LEN_MASK
                                    mm = lx + (ti & TINFO_LEN_MASK)
                                    for i in range(mm):
                                        pairsym[i] = cid[pos - lx + i]
                                    while mm > 2:
                                        best = _NONE
                                        bi = -1
                                        for i in range(mm - 1):
                                            v = pair_key(pairsym[i], pairsym[i + 1], pkey, bits)
                                            if (v >> 16) < (best >> 16):
                                                best = v
                                                bi = i
                                        if bi < 0:
                                            break
                                        pairsym[bi] = best & 0xFFFF
                                        for i in range(bi + 1, mm - 1):
                                            pairsym[i] = pairsym[i + 1]
                                        mm -= 1
                                    ok = mm == 2 and pairsym[0] == x and pairsym[1] == y
                                else:
                                    # undo the later of the two merges, test the boundary it left
                                    while True:
                                        px = tinfo[4 * x + 1]
                                        py = tinfo[4 * y + 1]
                                        if px > py:
                                            limit = px
                                            x = tinfo[4 * x + 3]
                                            tie_loses = False
                                        else:
                                            if py < 0:
                                                break
                                            limit = py
                                            y = tinfo[4 * y + 2]
                                            tie_loses = True
                                        v = pair_key(x, y, pkey, bits)
                                        if v != _NONE:
                                            qr = v >> 16
                                            if qr < limit or (tie_loses and qr == limit):
                                                ok = False
                                                break
                            if ok:
                                out[top] = tok
                                top += 1
                                pos = end
                                if pos == e:
                                    break
                                walk = True
                            else:
                                tok = (ti >> 32) - 1
                                while tok < 0:
                                    # nothing fits at pos: dead; the next shorter piece in the top's place
                                    dead[pos] = run_no
                                    if top == k:
                                        break
                                    top -= 1
                                    last = out[top]
                                    tl = tinfo[4 * last]
                                    pos -= tl & TINFO_LEN_MASK
                                    tok = (tl >> 32) - 1
                                if tok < 0:
                                    # (cannot happen: BPE's output is a path; the characters as they are)
                                    top = k
                                    for i in range(e):
                                        out[top] = cid[i]
                                        top += 1
                                    break
                        k = top
                        prev_unk = False
                    if q < b:
                        # a user-defined symbol, or a character that is no normal piece
                        used = 0
                        if has_users:
                            used = _user_match(nb, q, b, pbuf, poff, ustart, uids)
                        if used > 0:
                            out[k] = lookup(nb, q, q + used, pbuf, poff, htab)
                            k += 1
                            prev_unk = False
                        else:
                            c = nb[q]
                            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
                            if q + used > b:
                                used = b - q
                            t = lookup(nb, q, q + used, pbuf, poff, htab)
                            if t < 0 or ptype[t] == T_UNKNOWN:
                                if byte_fallback:
                                    for i in range(q, q + used):
                                        out[k] = byte_ids[nb[i]]
                                        k += 1
                                elif not prev_unk:
                                    out[k] = unk
                                    k += 1
                                prev_unk = True
                            else:
                                out[k] = t
                                k += 1
                                prev_unk = False
                        q += used
                    p = q
            elif not fast or b - a > SMALL_BYTES:
                if big.size < 10 * (b - a) + 4:
                    need_big = 10 * (b - a) + 4
                    break
                k = _heap(nb[a:b], b - a, pbuf, poff, ptype, prank, htab, ustart, uids, byte_ids, flags,
                               char_ids, pkey, pval, big, rev, stamp, r, out, k)
            else:
                # ---- a short word: _bpe_ids by scans.  ``work`` holds three
                # regions of S: the symbols' pieces (-1: none; | _FROZEN for
                # a user-defined symbol), their starts, and the pair at each
                # symbol as ``rank << 16 | piece`` (_NONE: none; the pair
                # table's slot value).  Each step merges the lowest rank,
                # the leftmost of equal ranks (the heap's (rank, position)
                # key; found by one branchless minimum of rank << 8 |
                # position), and shifts the right symbol out.
                m = 0
                p = a
                while p < b:
                    used = 0
                    if has_users:
                        used = _user_match(nb, p, b, pbuf, poff, ustart, uids)
                    if used > 0:
                        work[m] = lookup(nb, p, p + used, pbuf, poff, htab) | _FROZEN
                    else:
                        c = nb[p]
                        cp = np.int64(-1)
                        if c < 0x80:
                            used = 1
                            cp = np.int64(c)
                        elif c < 0xE0 and p + 2 <= b:
                            used = 2
                            cp = ((np.int64(c) & 0x1F) << 6) | (np.int64(nb[p + 1]) & 0x3F)
                        elif c < 0xF0 and p + 3 <= b:
                            used = 3
                            cp = (((np.int64(c) & 0x0F) << 12) | ((np.int64(nb[p + 1]) & 0x3F) << 6)
                                  | (np.int64(nb[p + 2]) & 0x3F))
                        if cp >= 0:
                            t = (pval[cp >> 2] >> ((cp & 3) * 16)) & 0xFFFF
                            work[m] = -1 if t == 0xFFFF else t
                        else:
                            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
                            if p + used > b:
                                used = b - p
                            work[m] = lookup(nb, p, p + used, pbuf, poff, htab)
                    work[S + m] = p
                    m += 1
                    p += used
                lo = 0  # the pairs to (re)rank: all, then the two a merge changed
                hi = m - 1
                while True:
                    for i in range(lo, hi):
                        work[2 * S + i] = pair_key(work[i], work[i + 1], pkey, bits)
                    best = _NONE_AT
                    for i in range(m - 1):
                        best = min(best, ((work[2 * S + i] >> 16) << 8) | i)
                    if best >= _NONE_AT:
                        break
                    bi = best & 0xFF
                    work[bi] = work[2 * S + bi] & 0xFFFF
                    for j in range(bi + 1, m - 1):
                        work[j] = work[j + 1]
                        work[S + j] = work[S + j + 1]
                        work[2 * S + j] = work[2 * S + j + 1]
                    m -= 1
                    lo = max(bi - 1, 0)
                    hi = min(bi + 1, m - 1)
                prev_unk = False
                for i in range(m):
                    t = work[i]
                    if t >= 0:
                        t &= 0xFFFF
                    if t < 0 or ptype[t] == T_UNKNOWN:
                        if byte_fallback:
                            e = work[S + i + 1] if i + 1 < m else b
                            for q in range(work[S + i], e):
                                out[k] = byte_ids[nb[q]]
                                k += 1
                        elif not prev_unk:
                            out[k] = unk
                            k += 1
                        prev_unk = True
                    else:
                        out[k] = t
                        k += 1
                        prev_unk = False
            if found < 0 and keyed and k - k0 <= CACHE_IDS:
                # Into an empty row of its set, else into the first row
                # (whose word moves to the second, whose word is dropped).
                rr = s0
                if cache[rr] != 0:
                    if cache[rr + CACHE_ROW] != 0:
                        for j in range(CACHE_ROW):
                            cache[rr + CACHE_ROW + j] = cache[rr + j]
                    else:
                        rr += CACHE_ROW
                cache[rr] = tag
                cache[rr + 1] = np.int32((b - a) | ((k - k0) << 8))
                j = 4 * (rr + 2)
                for q in range(a, b):
                    cbytes[j] = nb[q]
                    j += 1
                for i in range(k - k0):
                    cache[rr + 2 + CACHE_KEY_BYTES // 4 + i] = out[k0 + i]
            # A run of unknown symbols is one unk, across words too.
            if not byte_fallback and k0 > row_start and k > k0 and out[k0] == unk and out[k0 - 1] == unk:
                for i in range(k0, k - 1):
                    out[i] = out[i + 1]
                k -= 1
            a = b
        if need_big > 0:
            # The same text again, with the scratch the long word needs.
            big = np.empty(max(need_big, 2 * big.size), np.int64)
            k = row_start
            continue
        if need_bt > 0:
            size = max(need_bt, 2 * cps.size)
            cps = np.empty(size, np.int32)
            cid = np.empty(size, np.int32)
            cpos = np.empty(size, np.int64)
            dead = np.zeros(size, np.int64)
            cands = np.empty(size, np.int64)
            pairsym = np.empty(2 * flags[F_MAX_CHARS] + 2, np.int64)
            k = row_start
            continue
        if row_ends.size > 0:
            row_ends[r] = k
        r += 1
    return out, k


@kernel
def encode_batch(buf, offs, mb, mi, cache):
    """Ids of every text ``buf[offs[r]:offs[r + 1]]``: (ids, row ends)
    (see :func:`encode_rows`)."""
    rows = offs.size - 1
    row_ends = np.empty(max(rows, 0), np.int64)
    if rows <= 0:
        return np.empty(0, np.int32), row_ends
    out = np.empty(max(16, len(buf) + 4 * rows), np.int32)
    out, k = encode_rows(buf, offs, mb, mi, cache, out, row_ends)
    return out[:k], row_ends


def pack(pbuf, nblob, parts) -> tuple:
    """``(mb, mi)`` for :func:`encode_batch`: the bytes, and a header of
    18 offsets followed by the integer arrays ``parts`` (poff, ptype, prank,
    htab, ustart, uids, darts, byte_ids, flags, char_ids, pkey, pval, trie,
    tinfo), all as int64."""
    assert len(parts) == 14
    mb = np.concatenate([pbuf, nblob]).astype(np.uint8)
    sizes = [int(p.size) for p in parts]
    header = np.zeros(18, np.int64)
    header[0], header[1], header[2] = 0, pbuf.size, pbuf.size + nblob.size
    header[3:18] = np.concatenate([[0], np.cumsum(sizes)])
    mi = np.concatenate([header] + [np.asarray(p, np.int64) for p in parts])
    return mb, mi
