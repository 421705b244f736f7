"""HuggingFace ``tokenizers``' BPE model over characters, compiled: a whole
batch of words per call.

Per word (code points ``cps[a:b]``), exactly as ``tokenizers.models.BPE``
(``merge_word``, ``Word::merge_all``, then the tokenizer's offset
conversion) defines it:

1. **Whole word** (``ignore_merges``): a word that is a vocabulary string
   is one token (:func:`_word_id`, FNV-1a over the code points, open
   addressing).
2. **Initial symbols**: character ``i`` is looked up as ``prefix + ch``
   when ``i > 0`` and as ``ch + suffix`` when it is the last one (both
   when both hold; an affix that is not set is empty), in a table of code
   points giving the ids of the four spellings (:func:`_char_id`).  Not
   found: with ``byte_fallback`` the UTF-8 bytes *of that spelling*
   (affixes included) as ``<0xNN>`` tokens when all of them exist, each
   one byte long; else, with an unknown token, ``unk`` (a run of them one
   ``unk`` with ``fuse_unk``).  A pending ``unk`` is emitted only when a
   found character or the end of the word comes, not before byte tokens
   (HF's order: the bytes come first).  Without an unknown token the
   character is dropped.
3. **Merges**: the adjacent pairs live in a binary min-heap keyed by
   ``(rank, position of the left symbol)`` with the id the merge makes; an
   entry is applied when its left symbol is alive and has a right
   neighbour and the current pair makes that same id (HF's test), else
   dropped.  Entries of equal key are the same merge, so the order of
   merges is HF's.  O(n log n) per word, O(n) memory.
4. **Offsets**: each symbol has HF's length in bytes (the character's
   UTF-8 length; 1 per byte token), the tokens' byte spans are the running
   sums, and they become character offsets as ``tokenizers`` converts them
   (:func:`_char_span`): usually the characters the span touches, and
   HF's values as they are for spans that run past the word (byte
   fallback of affixes makes symbols longer than their character).

Tables (built by :class:`~segkit.presets.charbpe.model.CharBPE`):

* ``cptab``: int32, 5 per slot: code point (-1: empty), then the ids of
  ``ch``, ``prefix+ch``, ``ch+suffix``, ``prefix+ch+suffix`` (-1: none).
* ``pairs``: int32, 4 per slot: left id (-1: empty), right id, rank, new id.
* ``wbuf``/``woff``/``whash``: the vocabulary strings as code points, for
  ``ignore_merges`` (empty arrays otherwise).
* ``byte_tok``: the ids of ``<0x00>`` .. ``<0xFF>`` (-1: missing);
  ``pre``/``suf``: the affixes' UTF-8 bytes; ``flags``: the ``F_*`` values.
"""

from __future__ import annotations

import numpy as np

from ...runtime.jit import kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_LOW = np.int64(0xFFFFFFFF)

# flags (an int64 array) indices
F_PREFIX = 0  # continuing_subword_prefix is set
F_SUFFIX = 1  # end_of_word_suffix is set
F_BYTE_FALLBACK = 2
F_UNK = 3  # unk_token is set
F_UNK_ID = 4  # its id, -1 when it is not in the vocabulary
F_FUSE_UNK = 5
F_IGNORE_MERGES = 6
N_FLAGS = 7

#: ``encode_batch``'s status when every word was encoded.
OK = -1


@kernel(inline="always")
def _cp_slot(cp, mask):
    return np.int64(((np.uint64(cp) * _GOLDEN) >> np.uint64(32)) & np.uint64(mask))


@kernel(inline="always")
def _pair_slot(x, y, mask):
    key = (np.uint64(x) << np.uint64(32)) | np.uint64(y)
    return np.int64(((key * _GOLDEN) >> np.uint64(33)) & np.uint64(mask))


@kernel(inline="always")
def _span_hash(src, a, b):
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(src[i])) * _FNV_PRIME
    return h


@kernel(inline="always")
def _char_id(cptab, cp, form):
    """Id of code point ``cp`` spelt in ``form`` (0: ``ch``, 1: prefixed,
    2: suffixed, 3: both), or -1."""
    mask = cptab.size // 5 - 1
    h = _cp_slot(cp, mask)
    while True:
        c = cptab[5 * h]
        if c == cp:
            return cptab[5 * h + 1 + form]
        if c < 0:
            return -1
        h = (h + 1) & mask


@kernel(inline="always")
def _pair(pairs, x, y):
    """(rank, new id) of the merge of ids ``x`` and ``y``, or (-1, -1)."""
    mask = pairs.size // 4 - 1
    h = _pair_slot(x, y, mask)
    while True:
        e = pairs[4 * h]
        if e == x and pairs[4 * h + 1] == y:
            return pairs[4 * h + 2], pairs[4 * h + 3]
        if e < 0:
            return np.int32(-1), np.int32(-1)
        h = (h + 1) & mask


@kernel(inline="always")
def _word_id(src, a, b, wbuf, woff, whash):
    """Id of the vocabulary string spelt by ``src[a:b]`` (code points), or -1."""
    mask = np.uint64(whash.size // 2 - 1)
    h = _span_hash(src, a, b) & mask
    n = b - a
    while True:
        t = whash[2 * np.int64(h)]
        if t < 0:
            return -1
        s = woff[t]
        if woff[t + 1] - s == n:
            same = True
            for k in range(n):
                if wbuf[s + k] != src[a + k]:
                    same = False
                    break
            if same:
                return whash[2 * np.int64(h) + 1]
        h = (h + np.uint64(1)) & mask


@kernel(inline="always")
def _utf8_len(cp):
    if cp < 0x80:
        return 1
    if cp < 0x800:
        return 2
    if cp < 0x10000:
        return 3
    return 4


@kernel(inline="always")
def _utf8_byte(cp, n, k):
    """Byte ``k`` of the ``n``-byte UTF-8 form of ``cp`` (surrogates as
    ``surrogatepass`` writes them)."""
    if n == 1:
        return cp
    if k == 0:
        lead = 0xC0 if n == 2 else (0xE0 if n == 3 else 0xF0)
        return lead | (cp >> (6 * (n - 1)))
    return 0x80 | ((cp >> (6 * (n - 1 - k))) & 0x3F)


@kernel(inline="always")
def _push(hkey, hval, size, key, val):
    r = size
    hkey[r] = key
    hval[r] = val
    while r > 0:
        up = (r - 1) >> 1
        if hkey[up] <= hkey[r]:
            break
        hkey[up], hkey[r] = hkey[r], hkey[up]
        hval[up], hval[r] = hval[r], hval[up]
        r = up
    return size + 1


@kernel(inline="always")
def _pop(hkey, hval, size):
    """(key, value, new size) of the smallest entry, removed."""
    key = hkey[0]
    val = hval[0]
    size -= 1
    hkey[0] = hkey[size]
    hval[0] = hval[size]
    r = 0
    while True:
        c = 2 * r + 1
        if c >= size:
            break
        if c + 1 < size and hkey[c + 1] < hkey[c]:
            c += 1
        if hkey[r] <= hkey[c]:
            break
        hkey[r], hkey[c] = hkey[c], hkey[r]
        hval[r], hval[c] = hval[c], hval[r]
        r = c
    return key, val, size


@kernel(inline="always")
def _char_span(b0, b1, nbytes, cob):
    """Character offsets of the byte span ``b0:b1`` of a word of ``nbytes``
    bytes (``cob[j]``: the character holding byte ``j``), as ``tokenizers``
    converts them: the normalized string's alignments widen the span to
    whole characters, then bytes become characters; a span past the word's
    end keeps its byte values (start inside: start, start + 2)."""
    if b1 <= nbytes:
        return cob[b0], cob[b1 - 1] + 1
    if b0 < nbytes:
        return cob[b0], cob[b0] + 2
    return b0, b1


@kernel
def _grow(arr, need):
    if need <= arr.size:
        return arr
    out = np.empty(max(need, 2 * arr.size), arr.dtype)
    out[: arr.size] = arr
    return out


@kernel
def build_pairs(left, right, made, size):
    """Open-addressing table of the merges (``size`` slots, a power of
    two): merge ``i`` is ``(left[i], right[i]) -> made[i]`` of rank ``i``;
    a pair listed again replaces the earlier one (HF's map keeps the last)."""
    pairs = np.full(4 * size, -1, np.int32)
    mask = size - 1
    for i in range(left.size):
        x = left[i]
        y = right[i]
        h = _pair_slot(x, y, mask)
        while True:
            e = pairs[4 * h]
            if e < 0 or (e == x and pairs[4 * h + 1] == y):
                break
            h = (h + 1) & mask
        pairs[4 * h] = x
        pairs[4 * h + 1] = y
        pairs[4 * h + 2] = i
        pairs[4 * h + 3] = made[i]
    return pairs


@kernel
def build_chars(cps, forms, ids, size):
    """Table of code points (``size`` slots, a power of two): spelling
    ``forms[i]`` of ``cps[i]`` has id ``ids[i]``."""
    cptab = np.full(5 * size, -1, np.int32)
    mask = size - 1
    for i in range(cps.size):
        cp = cps[i]
        h = _cp_slot(cp, mask)
        while True:
            c = cptab[5 * h]
            if c < 0 or c == cp:
                break
            h = (h + 1) & mask
        cptab[5 * h] = cp
        cptab[5 * h + 1 + forms[i]] = ids[i]
    return cptab


@kernel
def build_words(wbuf, woff, ids, size):
    """Table of the vocabulary strings (``size`` slots, a power of two; the
    strings are distinct): slot = (string index, id)."""
    whash = np.full(2 * size, -1, np.int32)
    mask = np.uint64(size - 1)
    for t in range(woff.size - 1):
        h = _span_hash(wbuf, woff[t], woff[t + 1]) & mask
        while whash[2 * np.int64(h)] >= 0:
            h = (h + np.uint64(1)) & mask
        whash[2 * np.int64(h)] = t
        whash[2 * np.int64(h) + 1] = ids[t]
    return whash


@kernel
def encode_batch(cps, bounds, cptab, pairs, wbuf, woff, whash, byte_tok, pre, suf, flags):
    """Encode words ``cps[bounds[w]:bounds[w + 1]]``.

    Returns ``(status, ids, starts, ends, splits)``: status :data:`OK`, or
    the index of a word that needs the unknown token when it is not in the
    vocabulary (the arrays are then incomplete); token ``j`` of word ``w``
    for ``splits[w] <= j < splits[w + 1]``, offsets in characters of the
    word.
    """
    has_pre = flags[F_PREFIX] != 0
    has_suf = flags[F_SUFFIX] != 0
    byte_fallback = flags[F_BYTE_FALLBACK] != 0
    has_unk = flags[F_UNK] != 0
    unk_id = np.int32(flags[F_UNK_ID])
    fuse = flags[F_FUSE_UNK] != 0
    ignore = flags[F_IGNORE_MERGES] != 0
    nw = bounds.size - 1
    longest = 0
    for w in range(nw):
        if bounds[w + 1] - bounds[w] > longest:
            longest = bounds[w + 1] - bounds[w]
    per_char = pre.size + 4 if byte_fallback else 1
    cap = longest * per_char + suf.size + 1
    tok = np.empty(cap, np.int32)
    blen = np.empty(cap, np.int64)
    nxt = np.empty(cap, np.int64)
    prv = np.empty(cap, np.int64)
    hkey = np.empty(3 * cap, np.int64)
    hval = np.empty(3 * cap, np.int32)
    cob = np.empty(4 * longest + 1, np.int64)
    total = bounds[nw] - bounds[0]
    ids = np.empty(total + 16, np.int32)
    starts = np.empty(total + 16, np.int32)
    ends = np.empty(total + 16, np.int32)
    splits = np.zeros(nw + 1, np.int64)
    k = 0
    for w in range(nw):
        a = bounds[w]
        n = bounds[w + 1] - a
        splits[w] = k
        if n == 0:
            continue
        if ignore:
            t = _word_id(cps, a, a + n, wbuf, woff, whash)
            if t >= 0:
                if k + 1 > ids.size:
                    ids = _grow(ids, k + 1)
                    starts = _grow(starts, k + 1)
                    ends = _grow(ends, k + 1)
                ids[k] = t
                starts[k] = 0
                ends[k] = n
                k += 1
                continue
        # 1. Initial symbols (and the byte -> character map of the word).
        m = 0
        nbytes = 0
        pend = -1
        pend_len = 0
        for i in range(n):
            cp = np.int64(cps[a + i])
            cl = _utf8_len(cp)
            for j in range(cl):
                cob[nbytes + j] = i
            nbytes += cl
            form = 0
            if has_pre and i > 0:
                form += 1
            if has_suf and i == n - 1:
                form += 2
            t = _char_id(cptab, cp, form)
            if t >= 0:
                if pend >= 0:
                    tok[m] = pend
                    blen[m] = pend_len
                    m += 1
                    pend = -1
                tok[m] = t
                blen[m] = cl
                m += 1
                continue
            if byte_fallback:
                ok = True
                if form & 1:
                    for j in range(pre.size):
                        if byte_tok[pre[j]] < 0:
                            ok = False
                for j in range(cl):
                    if byte_tok[_utf8_byte(cp, cl, j)] < 0:
                        ok = False
                if form & 2:
                    for j in range(suf.size):
                        if byte_tok[suf[j]] < 0:
                            ok = False
                if ok:
                    if form & 1:
                        for j in range(pre.size):
                            tok[m] = byte_tok[pre[j]]
                            blen[m] = 1
                            m += 1
                    for j in range(cl):
                        tok[m] = byte_tok[_utf8_byte(cp, cl, j)]
                        blen[m] = 1
                        m += 1
                    if form & 2:
                        for j in range(suf.size):
                            tok[m] = byte_tok[suf[j]]
                            blen[m] = 1
                            m += 1
                    continue
            if has_unk:
                if unk_id < 0:
                    return w, ids[:k], starts[:k], ends[:k], splits
                if pend >= 0:
                    if fuse:
                        pend_len += cl
                        continue
                    tok[m] = pend
                    blen[m] = pend_len
                    m += 1
                pend = unk_id
                pend_len = cl
        if pend >= 0:
            tok[m] = pend
            blen[m] = pend_len
            m += 1
        if m == 0:
            continue
        # 2. Merges.
        for i in range(m):
            nxt[i] = i + 1 if i + 1 < m else -1
            prv[i] = i - 1
        size = 0
        for i in range(m - 1):
            r, z = _pair(pairs, tok[i], tok[i + 1])
            if r >= 0:
                size = _push(hkey, hval, size, (np.int64(r) << 32) | i, z)
        while size > 0:
            key, z, size = _pop(hkey, hval, size)
            p = key & _LOW
            if blen[p] == 0:
                continue
            q = nxt[p]
            if q < 0:
                continue
            r, z2 = _pair(pairs, tok[p], tok[q])
            if r < 0 or z2 != z:
                continue
            tok[p] = z
            blen[p] += blen[q]
            blen[q] = 0
            nxt[p] = nxt[q]
            if nxt[q] >= 0:
                prv[nxt[q]] = p
            left = prv[p]
            if left >= 0:
                r, z2 = _pair(pairs, tok[left], z)
                if r >= 0:
                    size = _push(hkey, hval, size, (np.int64(r) << 32) | left, z2)
            right = nxt[p]
            if right >= 0:
                r, z2 = _pair(pairs, z, tok[right])
                if r >= 0:
                    size = _push(hkey, hval, size, (np.int64(r) << 32) | p, z2)
        # 3. Tokens (symbol 0 is never merged away).
        count = 0
        i = 0
        while i >= 0:
            count += 1
            i = nxt[i]
        if k + count > ids.size:
            ids = _grow(ids, k + count)
            starts = _grow(starts, k + count)
            ends = _grow(ends, k + count)
        pos = 0
        i = 0
        while i >= 0:
            s, e = _char_span(pos, pos + blen[i], nbytes, cob)
            pos += blen[i]
            ids[k] = tok[i]
            starts[k] = s
            ends[k] = e
            k += 1
            i = nxt[i]
    splits[nw] = k
    return OK, ids[:k], starts[:k], ends[:k], splits


# ------------------------------------------------ the SentencePiece shapes
SHAPE_METASPACE = 0  #: no normalizer, a Metaspace pre-tokenizer
SHAPE_PREPEND = 1  #: Prepend(rep) + Replace(" ", rep), no pre-tokenizer
SCHEME_ALWAYS = 0
SCHEME_FIRST = 1
SCHEME_NEVER = 2


@kernel
def shape_rows(cps, text_splits, part_a, part_b, part_id, part_splits, rep, kind, scheme, split,
               cptab, pairs, wbuf, woff, whash, byte_tok, pre, suf, flags):
    """Token rows of texts in one of the SentencePiece-converted shapes
    (see :mod:`segkit.presets.pipeline.metaspace_rows`), in one call.

    ``cps``: the texts' code points, joined, text ``r`` being
    ``cps[text_splits[r]:text_splits[r + 1]]``; its parts are
    ``part_splits[r]:part_splits[r + 1]``, each ``cps[part_a:part_b]``
    (``part_id`` an added token's id, or -1 for text the model encodes).
    Returns ``(status, rows, row_splits)``: status :data:`OK` or the index
    of a word that needs a missing unknown token; rows (4, n) int32: ids,
    starts, ends (offsets within each text), word index.
    """
    n_parts = part_a.size
    n_texts = text_splits.size - 1
    # 1. The normalized words, and per word: its part, what was put first,
    # where it starts in its normalized part, its word index.
    cap = cps.size + n_parts + 2
    ncps = np.empty(cap, np.int32)
    wb = np.empty(cap + 1, np.int64)
    w_part = np.empty(cap, np.int64)
    w_first = np.empty(cap, np.int64)
    w_off = np.empty(cap, np.int64)
    w_index = np.empty(cap, np.int64)
    p_index = np.empty(n_parts, np.int64)  # word index of an added token
    nw = 0
    m = 0
    for r in range(n_texts):
        index = 0
        for q in range(part_splits[r], part_splits[r + 1]):
            a = part_a[q]
            b = part_b[q]
            if part_id[q] >= 0:
                p_index[q] = index
                index += 1
                continue
            start = m
            first = 0
            if kind == SHAPE_PREPEND:
                put = True
            else:  # Metaspace: unless the part starts with rep (a space written as rep)
                put = (scheme == SCHEME_ALWAYS or (scheme == SCHEME_FIRST and a == text_splits[r])) and not (
                    cps[a] == rep or cps[a] == 32)
            if put:
                ncps[m] = rep
                m += 1
                first = 1
            for i in range(a, b):
                c = cps[i]
                ncps[m] = rep if c == 32 else c
                m += 1
            wb[nw] = start
            w_part[nw] = q
            w_first[nw] = first
            w_off[nw] = 0
            w_index[nw] = index
            nw += 1
            index += 1
            if split:  # Metaspace's split: a word starts at each rep
                for k in range(start + 1, m):
                    if ncps[k] == rep:
                        wb[nw] = k
                        w_part[nw] = q
                        w_first[nw] = first
                        w_off[nw] = k - start
                        w_index[nw] = index
                        nw += 1
                        index += 1
    wb[nw] = m
    status, ids, starts, ends, splits = encode_batch(ncps[:m], wb[:nw + 1], cptab, pairs, wbuf, woff, whash,
                                                    byte_tok, pre, suf, flags)
    if status != OK:
        return status, np.empty((4, 0), np.int32), np.zeros(n_texts + 1, np.int64)
    # 2. The rows, in order: added tokens and the words' tokens.
    n_added = 0
    for q in range(n_parts):
        if part_id[q] >= 0:
            n_added += 1
    out = np.empty((4, ids.size + n_added), np.int32)
    row_splits = np.zeros(n_texts + 1, np.int64)
    k = 0
    w = 0
    for r in range(n_texts):
        base = text_splits[r]
        for q in range(part_splits[r], part_splits[r + 1]):
            if part_id[q] >= 0:
                out[0, k] = part_id[q]
                out[1, k] = part_a[q] - base
                out[2, k] = part_b[q] - base
                out[3, k] = p_index[q]
                k += 1
                continue
            a = part_a[q] - base
            while w < nw and w_part[w] == q:
                for j in range(splits[w], splits[w + 1]):
                    s = w_off[w] + starts[j] - w_first[w]
                    e = w_off[w] + ends[j] - w_first[w]
                    out[0, k] = ids[j]
                    out[1, k] = a + (s if s > 0 else 0)
                    out[2, k] = a + (e if e > 1 else 1)
                    out[3, k] = w_index[w]
                    k += 1
                w += 1
        row_splits[r + 1] = k
    return OK, out, row_splits
