"""The compiled single pass: pre-tokenization fused with LinMaxMatch.

Every entry point takes the text as an array of symbols (see below) and the
automaton as ONE packed int32 array (see :func:`pack`): each array argument
costs a Numba call about half a microsecond, which matters for short texts.
Kernels release the GIL.  Single-text entry points write into buffers the
caller provides (a text of n characters never yields more than n tokens);
batch entry points allocate their output, grown geometrically, never per
token.  Whether offsets are produced is decided at compile time: the
``*_ids`` entry points skip them entirely.

Packed layout: ``auto[0:8]`` is a header of section offsets (char map,
transitions, failure data, pops pool, parameters, end); ``trans`` holds
``base, check`` pairs and ``fails`` holds ``link, pops`` pairs, flattened.

Parameters (``auto[auto[P]:]``):

0. slot of the continuation root (0 when the suffix indicator is empty);
1. id emitted for an unmatchable word (the unk id);
2. longest word, in characters, that is matched at all (longer ones are unk);
3. 1 when unseen characters become one-character tokens (then no word is
   ever unk except for the length limit), 0 when a word with an unmatchable
   part becomes one unk token;
4. id given to such one-character tokens;
5. longest word in UTF-8 bytes that is matched at all, 0 for no such limit
   (TensorFlow Text counts bytes).

``clsmask`` (an argument): 3 to honour the boundary classes of the char
map, 0 to treat the whole input as one word; plus :data:`LOOKAHEAD` (4) to
prefetch the transitions of positions ahead (see :func:`_segment_range`).

Two alphabets, one source.  The text's dtype says which: a ``uint32``
array holds code points, looked up in the char map (symbol and boundary
class); a ``uint8`` array holds bytes, and byte ``c`` *is* symbol ``c + 1``
of class ``WORD`` (no char map: its section is empty; see
:class:`segkit.engine.EngineConfig`'s ``alphabet``).  Numba compiles one
specialization per dtype, and :func:`byte_text` is a constant in each, so
the byte specialization has no char map loads and the code point one no
byte branch: the same loop, two machine codes.  Callers must give an
automaton the dtype of its alphabet (the Python entry points check).
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel, literally, overload

from .arrays import copy_rows_prefix, grow
from .charmap import MAX_CODE_POINT
from .intrinsics import prefetch

#: Code points from SENTINEL on stand for "emit token id (cp - SENTINEL) here".
SENTINEL = 0x110000

#: Output arrays start with room for at most this many tokens and grow
#: geometrically (a restart redoes only the current word).
MAX_INITIAL_TOKENS = 1 << 23

#: Flag of the ``clsmask`` argument: prefetch ahead (for large automata).
LOOKAHEAD = 4
#: How far ahead, in characters, the transitions from the root's children
#: (depth 2) and from their children (depth 3) are prefetched: far enough
#: for a miss to complete meanwhile, near enough to stay in the L1 cache.
AHEAD_2 = 32
AHEAD_3 = 16

#: Cast for array indices in the hot loop: unsigned indices are used as they
#: are, signed ones get a branch that wraps negative values around.
_ix = np.uint64

P_SROOT, P_UNK, P_MAXCHARS, P_CHARMODE, P_CHARID, P_MAXBYTES = range(6)
N_PARAMS = 6
H_CMAP, H_TRANS, H_FAILS, H_POOL, H_PARAMS, H_END = range(6)
HEADER = 8


def byte_text(c) -> bool:
    """Whether ``c``, a symbol read from the text, is a byte (a ``uint8``
    array's element) rather than a code point: a compile-time constant in
    compiled code (see the module doc)."""
    return isinstance(c, np.uint8)


@overload(byte_text, inline="always")
def _ov_byte_text(c):
    # Scalars only: an inlined helper that takes an array costs reference
    # counting on every call (see _segment_range); this one folds away.
    from numba import types

    if isinstance(c, types.Integer):
        if c.bitwidth == 8 and not c.signed:
            return lambda c: True
        return lambda c: False
    return None


def pack(cmap, trans, fails, pool, params) -> np.ndarray:
    """One int32 array holding all parts of an automaton (see module doc)."""
    parts = [cmap.ravel(), trans.ravel(), fails.ravel(), pool.ravel(), np.asarray(params, dtype=np.int32)]
    offsets = np.cumsum([HEADER] + [p.size for p in parts])
    out = np.empty(int(offsets[-1]), dtype=np.int32)
    out[:HEADER] = 0
    out[: len(offsets)] = offsets
    for p, a in zip(parts, offsets[:-1]):
        out[a : a + p.size] = p
    return out


def unpack(auto: np.ndarray):
    """Views ``(cmap, trans, fails, pool, params)`` into a packed automaton."""
    h = auto[:HEADER]
    cmap = auto[h[H_CMAP] : h[H_TRANS]]
    trans = auto[h[H_TRANS] : h[H_FAILS]].reshape(-1, 2)
    fails = auto[h[H_FAILS] : h[H_POOL]].reshape(-1, 2)
    pool = auto[h[H_POOL] : h[H_PARAMS]]
    params = auto[h[H_PARAMS] : h[H_END]]
    return cmap, trans, fails, pool, params


@kernel(literal=("with_offsets",))
def _segment_range(cps, i, b, auto, clsmask, ids, st, en, wd, k, word, with_offsets):
    """Tokenize ``cps[i:b]`` into the outputs from slot ``k`` on.

    ``word`` is the index of the next word; each token gets the index of its
    word in ``wd`` (with offsets).  Returns ``(i, k, word, done)``.  When the
    outputs fill up, it stops at the start of the current word (rolling back
    its tokens) with ``done=False`` so the caller can grow them and resume;
    the arrays are never reallocated here.

    The loop calls no helper that takes an array: Numba reference-counts
    arrays passed to an inlined function (two atomic increments and
    decrements per call), which once cost half the time of the whole pass.
    Failure pops are therefore emitted at one site, written out here; the
    end of a word is the pseudo-symbol ``-1``, which has no transition, so
    the pops still pending at a word's end go through the same site.
    Indices go through ``_ix`` (unsigned): Numba then drops the code that
    wraps negative indices around, which is some 15% of the loop.

    With :data:`LOOKAHEAD` in ``clsmask``, every character read also
    prefetches, for the position :data:`AHEAD_2` characters on, the
    transition a word starting there takes on its second character, and for
    the position :data:`AHEAD_3` on the one it takes on its third (reading
    the base of the second node, prefetched 16 characters earlier, whether
    or not that node exists).  Failure data of those nodes is
    prefetched too.  An automaton far larger than a core's cache (Chinese:
    349,000 words, 20 MB) otherwise waits on one cache miss after another,
    each needing the state the previous one produced; the prefetches start
    most of them early and in parallel.  A guess from the root is wrong
    after a continuation (WordPiece's ``##``) and useless when the automaton
    fits the cache, where the extra work costs time, so the caller decides
    (:attr:`segkit.engine.Automaton.lookahead`).  Prefetched indices are
    always within the arrays: a base plus a symbol stays below the double
    array's size (``build._place``, checked by ``automaton_from_arrays``).

    ``with_offsets`` is a compile-time constant (two specializations).
    Callers pass the integer arguments as ``np.int64`` values, not literal
    constants, or Numba compiles one more specialization per literal.
    """
    literally(with_offsets)  # compiled once with, once without offsets
    ahead = (clsmask & LOOKAHEAD) != 0
    clsmask &= 3
    n_cps = cps.size
    cmap = auto[auto[0] : auto[1]]
    trans = auto[auto[1] : auto[2]]
    fails = auto[auto[2] : auto[3]]
    pool = auto[auto[3] : auto[4]]
    pa = auto[4]
    sroot = auto[pa]
    unk = auto[pa + 1]
    maxc = auto[pa + 2]
    charmode = auto[pa + 3] != 0
    charid = auto[pa + 4]
    maxb = auto[pa + 5]
    maxlen = maxc
    if maxb > 0 and maxb < maxlen:
        maxlen = maxb  # a word of more characters than maxb has more bytes too
    cap = ids.size
    while i < b:
        c = cps[_ix(i)]
        if c > MAX_CODE_POINT:
            # A pre-matched token (e.g. a special token found by the
            # normalization pass): code point SENTINEL + id.
            if k >= cap:
                return i, k, word, False
            ids[_ix(k)] = c - SENTINEL
            if with_offsets:
                st[_ix(k)] = i
                en[_ix(k)] = i + 1
                wd[_ix(k)] = word
            word += 1
            k += 1
            i += 1
            continue
        if byte_text(c):
            v = np.int32((c + 1) << 2)  # symbol c + 1, class WORD
        else:
            v = cmap[_ix(cmap[_ix(c >> 8)] + (c & 255))]
        cls = v & clsmask
        if cls == 1:  # separator
            i += 1
            continue
        ws = i  # word start
        kw = k  # first output slot of this word
        pos = i  # next character not yet covered by an output token
        u = 0
        ok = True
        j = i  # the character being consumed (sym), or the word's end (sym -1)
        sym = v >> 2
        while True:
            # One step: follow failure links, emitting pops, until sym is
            # consumed (or, for sym -1, until a root is reached).
            while True:
                if sym >= 0:
                    t = trans[_ix(2 * u)] + sym
                    if trans[_ix(2 * t + 1)] == u:
                        u = t
                        break
                elif u == 0 or u == sroot:
                    break
                f = fails[_ix(2 * u)]
                if f < 0:
                    if sym >= 0 and charmode and (u == 0 or u == sroot):
                        if k >= cap:
                            return ws, kw, word, False
                        ids[_ix(k)] = charid
                        if with_offsets:
                            st[_ix(k)] = j
                            en[_ix(k)] = j + 1
                            wd[_ix(k)] = word
                        k += 1
                        pos = j + 1
                        u = sroot
                        break
                    ok = False
                    break
                ref = fails[_ix(2 * u + 1)]
                if ref < 0:
                    # A single pop stored inline (build.compute_failure).
                    if k >= cap:
                        return ws, kw, word, False
                    packed = -1 - ref
                    ids[_ix(k)] = (packed >> 8) - 1
                    cov = packed & 255
                    if with_offsets:
                        st[_ix(k)] = pos
                        en[_ix(k)] = pos + cov
                        wd[_ix(k)] = word
                    pos += cov
                    k += 1
                else:
                    # A list: its header (count, where its pairs start).
                    cnt = pool[_ix(ref)]
                    at = pool[_ix(ref + 1)]
                    if k + cnt > cap:
                        return ws, kw, word, False
                    for e in range(cnt):
                        ids[_ix(k)] = pool[_ix(at + 2 * e)]
                        cov = pool[_ix(at + 1 + 2 * e)]
                        if with_offsets:
                            st[_ix(k)] = pos
                            en[_ix(k)] = pos + cov
                            wd[_ix(k)] = word
                        pos += cov
                        k += 1
                u = f
            if not ok or sym < 0:
                break
            j += 1
            if cls == 2 or j >= b:
                sym = -1
                continue
            if j - ws > maxlen:
                # Longer than any limit allows: unk whatever follows, so stop
                # matching (and emitting) and just find the end of the word.
                ok = False
                break
            c = cps[_ix(j)]
            if ahead and j + AHEAD_2 + 1 < n_cps:
                c1 = cps[_ix(j + AHEAD_2)]
                c2 = cps[_ix(j + AHEAD_2 + 1)]
                if byte_text(c1):
                    n1 = trans[0] + np.int32(c1 + 1)
                    n2 = trans[_ix(2 * n1)] + np.int32(c2 + 1)
                    prefetch(trans, _ix(2 * n2))
                    prefetch(fails, _ix(2 * n2))
                elif c1 <= MAX_CODE_POINT and c2 <= MAX_CODE_POINT:
                    n1 = trans[0] + (cmap[_ix(cmap[_ix(c1 >> 8)] + (c1 & 255))] >> 2)
                    n2 = trans[_ix(2 * n1)] + (cmap[_ix(cmap[_ix(c2 >> 8)] + (c2 & 255))] >> 2)
                    prefetch(trans, _ix(2 * n2))
                    prefetch(fails, _ix(2 * n2))
                c1 = cps[_ix(j + AHEAD_3)]
                c2 = cps[_ix(j + AHEAD_3 + 1)]
                c3 = cps[_ix(j + AHEAD_3 + 2)]
                if byte_text(c1):
                    n1 = trans[0] + np.int32(c1 + 1)
                    n2 = trans[_ix(2 * n1)] + np.int32(c2 + 1)
                    n3 = trans[_ix(2 * n2)] + np.int32(c3 + 1)
                    prefetch(trans, _ix(2 * n3))
                    prefetch(fails, _ix(2 * n3))
                elif c1 <= MAX_CODE_POINT and c2 <= MAX_CODE_POINT and c3 <= MAX_CODE_POINT:
                    n1 = trans[0] + (cmap[_ix(cmap[_ix(c1 >> 8)] + (c1 & 255))] >> 2)
                    n2 = trans[_ix(2 * n1)] + (cmap[_ix(cmap[_ix(c2 >> 8)] + (c2 & 255))] >> 2)
                    # No check that n2 is a node: a branch here mispredicts
                    # half the time; a useless prefetch costs less.
                    n3 = trans[_ix(2 * n2)] + (cmap[_ix(cmap[_ix(c3 >> 8)] + (c3 & 255))] >> 2)
                    prefetch(trans, _ix(2 * n3))
                    prefetch(fails, _ix(2 * n3))
            if c > MAX_CODE_POINT:
                sym = -1
                continue
            if byte_text(c):
                v = np.int32((c + 1) << 2)
            else:
                v = cmap[_ix(cmap[_ix(c >> 8)] + (c & 255))]
            if (v & clsmask) != 0:
                sym = -1
                continue
            sym = v >> 2
        if not ok:
            if cls == 2:
                j = ws + 1
            else:
                while j < b:
                    c = cps[_ix(j)]
                    if byte_text(c):
                        j += 1  # bytes are all of class WORD
                        continue
                    if c > MAX_CODE_POINT or (cmap[_ix(cmap[_ix(c >> 8)] + (c & 255))] & clsmask) != 0:
                        break
                    j += 1
        if ok and maxb > 0 and j - ws > maxb // 4:
            nb = 0
            for q in range(ws, j):
                c = cps[_ix(q)]
                nb += 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
            ok = nb <= maxb
        if not ok or j - ws > maxc:
            k = kw
            if k >= cap:
                return ws, kw, word, False
            ids[_ix(k)] = unk
            if with_offsets:
                st[_ix(k)] = ws
                en[_ix(k)] = j
                wd[_ix(k)] = word
            k += 1
        word += 1
        i = j
    return i, k, word, True


@kernel
def grown_rows(out, k, more):
    """A copy of the (4, n) rows ``out`` (first ``k`` slots kept) with room
    for at least ``more`` further tokens, at least twice as large."""
    bigger = np.empty((4, max(2 * out.shape[1], k + more + 16)), np.int32)
    copy_rows_prefix(bigger, out, k)
    return bigger


@kernel
def mirror_rows(out, rows, bounds):
    """Tokens of reversed texts made tokens of the texts, in place.

    ``out`` (4, n) holds the tokens of the reversed texts ``bounds``
    (offsets relative to each text, word indices from 0), text ``t``'s in
    columns ``rows[t]:rows[t + 1]``.  Afterwards it lists the texts and
    their tokens in reverse (the original order), with offsets and word
    indices mirrored.  Backward MaxMatch runs the forward loop over the
    reversed text; this maps its output back without allocating."""
    for t in range(rows.size - 1):
        a = rows[t]
        b = rows[t + 1]
        length = bounds[t + 1] - bounds[t]
        last = -1
        for q in range(a, b):
            if out[3, q] > last:
                last = out[3, q]
        for q in range(a, b):
            s = out[1, q]
            out[1, q] = length - out[2, q]
            out[2, q] = length - s
            out[3, q] = last - out[3, q]
    lo = rows[0]
    hi = rows[rows.size - 1] - 1
    while lo < hi:
        for r in range(4):
            x = out[r, lo]
            out[r, lo] = out[r, hi]
            out[r, hi] = x
        lo += 1
        hi -= 1


@kernel
def _run_ids(cps, a, b, auto, clsmask, ids, k):
    return _segment_range(cps, a, b, auto, clsmask, ids, ids, ids, ids, k, np.int64(0), False)


@kernel
def segment_into(cps, auto, clsmask, out):
    """Tokens of one text into the rows of ``out`` (4, >= ``cps.size``): ids,
    starts, ends, word indices (that size always suffices); returns the
    token count."""
    zero = np.int64(0)  # not a literal: shares the batch kernels' specialization
    i, k, word, done = _segment_range(cps, zero, cps.size, auto, clsmask, out[0], out[1], out[2], out[3], zero, zero, True)
    return k


@kernel
def segment_text_into(cps, auto, clsmask, out, backward):
    """:func:`segment_into` in either direction: with ``backward``, the
    reversed text is matched and its tokens mirrored back in place
    (:func:`mirror_rows`), so ``out`` holds the text's tokens in order."""
    if not backward:
        return segment_into(cps, auto, clsmask, out)
    n = cps.size
    k = segment_into(cps[::-1].copy(), auto, clsmask, out)
    rows = np.empty(2, np.int64)
    rows[0] = 0
    rows[1] = k
    bounds = np.empty(2, np.int64)
    bounds[0] = 0
    bounds[1] = n
    mirror_rows(out[:, :k], rows, bounds)
    return k


@kernel
def segment_ids_into(cps, auto, clsmask, ids):
    """Token ids of one text into ``ids`` (at least ``cps.size`` long)."""
    i, k, word, done = _run_ids(cps, 0, cps.size, auto, clsmask, ids, 0)
    return k


def token_rows(n_chars: int) -> np.ndarray:
    """The output rows a batch kernel starts with, for ``n_chars`` characters
    (it grows them when a text needs more).

    Allocated here, by NumPy, not inside the kernel: NumPy asks the kernel
    for transparent huge pages on large arrays, and a fresh batch result of
    tens of megabytes otherwise costs one page fault per 4 KiB written
    (measured: writing the rows of the whole corpus took 28 ms with 4 KiB
    pages, 16 ms with huge pages).
    """
    return np.empty((4, min(n_chars // 2, MAX_INITIAL_TOKENS) + 16), np.int32)


@kernel
def segment_batch(cps, bounds, auto, clsmask, out):
    """Tokens of many texts concatenated in ``cps``; text ``t`` is
    ``cps[bounds[t]:bounds[t+1]]``.  Offsets are relative to each text and
    word indices restart at 0 for each text.  ``out`` holds the first rows
    to fill (see :func:`token_rows`).  Returns ``(out, row_splits)`` with
    ``out`` a (4, n) int32 array: ids, starts, ends, word indices.

    The loop holds the four row views itself, made once per call (and again
    only when ``out`` grows): a view made per text, or arrays passed to a
    helper per text, cost reference counting, some 10% of a batch of short
    texts.  :func:`segkit.engine.rewrite.segment_batch_rewritten` writes the
    same grow-and-resume loop out for the same reason."""
    nt = bounds.size - 1
    rows = np.empty(nt + 1, np.int64)
    rows[0] = 0
    k = 0
    zero = np.int64(0)  # not a literal: one specialization of the loop
    ids, st, en, wd = out[0], out[1], out[2], out[3]
    for t in range(nt):
        a = bounds[t]
        b = bounds[t + 1]
        k0 = k
        i = a
        word = zero
        while True:
            i, k, word, done = _segment_range(cps, i, b, auto, clsmask, ids, st, en, wd, k, word, True)
            if done:
                break
            out = grown_rows(out, k, b - i)
            ids, st, en, wd = out[0], out[1], out[2], out[3]
        for q in range(k0, k):
            st[q] -= a
            en[q] -= a
        rows[t + 1] = k
    return out[:, :k], rows


@kernel
def segment_batch_ids(cps, bounds, auto, clsmask):
    """Like :func:`segment_batch` without offsets: ``(ids, row_splits)``."""
    cap = min(cps.size // 2, MAX_INITIAL_TOKENS) + 16
    ids = np.empty(cap, np.int32)
    nt = bounds.size - 1
    rows = np.empty(nt + 1, np.int64)
    rows[0] = 0
    k = 0
    for t in range(nt):
        b = bounds[t + 1]
        i = bounds[t]
        while True:
            i, k, word, done = _run_ids(cps, i, b, auto, clsmask, ids, k)
            if done:
                break
            ids = grow(ids, k + b - i)
        rows[t + 1] = k
    return ids[:k], rows
