"""A compiled character rewrite pass with offset tracking.

Presets normalize text with a per-code-point table (see
:func:`build_rewrite_table`): each code point is kept, deleted, or replaced
by a sequence of code points.  The same pass extracts *protected* strings
(special tokens such as ``[CLS]``) from the original text, leftmost-longest,
and replaces each by one sentinel code point (``SENTINEL + token id``) that
the matching kernel turns into that token.

Numba's on-disk cache keys a compiled function by its own file only, yet the
functions here compile the engine's matching loop into themselves
(:func:`segkit.engine.kernels._segment_range`, its pops layout included):
a change to that loop must change this file too, or a stale cache keeps the
old loop (the last such change: failure pops read through list headers).

For every output character the pass records the span of original
characters it came from, so token offsets map back to the original text.
"""

from __future__ import annotations

import numpy as np

from ..runtime import jit
from ..runtime.jit import kernel, overload
from .charmap import _N_PAGES, MAX_CODE_POINT, two_level
from .kernels import SENTINEL, _ix, _segment_range, grown_rows

KEEP = 0
DELETE = -1


def build_rewrite_table(mapping: dict[int, str], delete: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two-level table for ``mapping`` (code point -> replacement string).

    Code points not in ``mapping`` are kept; those marked in the boolean
    array ``delete`` (length 0x110000) are deleted (it takes precedence).
    Returns ``(table, pool)``:
    ``table[table[cp >> 8] + (cp & 255)]`` is ``KEEP`` (0), ``DELETE`` (-1)
    or an offset into ``pool``, where ``pool[off]`` is the replacement's
    length followed by its code points.
    """
    flat = np.zeros(0x110000, dtype=np.int32)
    items = sorted((cp, rep) for cp, rep in mapping.items() if rep != chr(cp))
    cps = np.fromiter((cp for cp, _ in items), dtype=np.int64, count=len(items))
    lengths = np.fromiter((len(rep) for _, rep in items), dtype=np.int64, count=len(items))
    flat[cps[lengths == 0]] = DELETE
    # The pool: 0, then for each replacement in code point order its length
    # and its code points (built with whole-array operations).
    kept = lengths > 0
    n = lengths[kept]
    heads = 1 + np.cumsum(n + 1) - (n + 1)  # where each entry's length goes
    pool = np.zeros(1 + int((n + 1).sum()), dtype=np.int32)
    pool[heads] = n
    chars = "".join(rep for _, rep in items).encode("utf-32-le", "surrogatepass")
    firsts = np.cumsum(n) - n
    pool[np.repeat(heads + 1 - firsts, n) + np.arange(int(n.sum()))] = np.frombuffer(chars, dtype=np.uint32)
    flat[cps[kept]] = heads
    if delete is not None:
        flat[delete] = DELETE
    return two_level(flat), pool


# Packed layout: header of section offsets, then the table, the pool, the
# protected strings' code points, their index rows (start, end, id) and a
# bitmap of their possible first characters (low 16 bits).  Header slot
# _IDENT is 1 when the table keeps every code point (texts without a
# protected string are then matched as they are: no rewrite, no mapping back);
# slot _RH - 1 is the number of protected strings.
_RH = 8
_IDENT = 6
_FIRST_WORDS = 0x10000 // 32


def pack_rewrite(table: np.ndarray, pool: np.ndarray, strings: list[str], ids: list[int]) -> np.ndarray:
    """One int32 array with a rewrite table and protected strings.

    Protected strings are tried longest first; string ``k`` becomes the
    sentinel of token id ``ids[k]``.
    """
    order = sorted(range(len(strings)), key=lambda k: -len(strings[k]))
    cps: list[int] = []
    index: list[int] = []
    first = np.zeros(_FIRST_WORDS, dtype=np.uint32)
    for k in order:
        if not isinstance(strings[k], str) or not strings[k]:
            raise ValueError(f"a special token must be a non-empty string, found {strings[k]!r}")
        index += [len(cps), len(cps) + len(strings[k]), int(ids[k])]
        cps.extend(ord(ch) for ch in strings[k])
        c = ord(strings[k][0]) & 0xFFFF
        first[c >> 5] |= np.uint32(1) << np.uint32(c & 31)
    parts = [
        np.asarray(table, dtype=np.int32),
        np.asarray(pool, dtype=np.int32),
        np.asarray(cps, dtype=np.int32),
        np.asarray(index, dtype=np.int32),
        first.view(np.int32),
    ]
    offsets = np.cumsum([_RH] + [p.size for p in parts])
    out = np.zeros(int(offsets[-1]), dtype=np.int32)
    out[: offsets.size] = offsets
    out[_RH - 1] = len(strings)
    out[_IDENT] = int(not np.asarray(table)[_N_PAGES:].any())
    for p, o in zip(parts, offsets[:-1]):
        out[o : o + p.size] = p
    return out


@kernel(inline="always")
def _may_protect(c, first_word):
    """Whether a protected string may start with code point ``c``, given
    the bitmap word ``first_word = rw[pf + ((c & 0xFFFF) >> 5)]``."""
    return (first_word >> (c & 31)) & 1 != 0


@kernel
def _protected_at(cps, i, b, rw, pc, px, pf, n):
    """Row of the longest protected string starting at ``i``, or -1.

    Callers first test the first-character bitmap (:func:`_may_protect`):
    an inline call with array arguments costs atomic reference counting,
    too much for every character.
    """
    c = cps[i]
    for r in range(n):
        p0 = rw[px + 3 * r]
        p1 = rw[px + 3 * r + 1]
        if rw[pc + p0] != c or i + (p1 - p0) > b:
            continue
        ok = True
        for q in range(1, p1 - p0):
            if cps[i + q] != rw[pc + p0 + q]:
                ok = False
                break
        if ok:
            return r
    return -1


@kernel
def _rewrite_fill(cps, i, b, a, rw, out, s0, s1, k):
    """Rewrite ``cps[i:b]`` into ``out`` from slot ``k`` on, with each output
    character's source span (relative to ``a``, the text's start) in
    ``s0``/``s1``.  Returns ``(i, k, done)``; it stops before a character
    whose output would not fit (``done`` False) so the caller can grow the
    buffers and resume.  One pass: no separate measuring pass."""
    tb = rw[0]
    po = rw[1]
    pc = rw[2]
    px = rw[3]
    pf = rw[4]
    n = rw[_RH - 1]
    cap = out.size
    if s0.size < cap:
        cap = s0.size
    if s1.size < cap:
        cap = s1.size
    while i < b:
        c = cps[_ix(i)]
        r = -1
        if _may_protect(c, rw[_ix(pf + ((c & 0xFFFF) >> 5))]):
            r = _protected_at(cps, i, b, rw, pc, px, pf, n)
        if r >= 0:
            if k >= cap:
                return i, k, False
            ln = rw[px + 3 * r + 1] - rw[px + 3 * r]
            out[_ix(k)] = SENTINEL + rw[px + 3 * r + 2]
            s0[_ix(k)] = i - a
            s1[_ix(k)] = i - a + ln
            k += 1
            i += ln
            continue
        v = rw[_ix(tb + rw[_ix(tb + (c >> 8))] + (c & 255))]
        if v == 0:
            if k >= cap:
                return i, k, False
            out[_ix(k)] = c
            s0[_ix(k)] = i - a
            s1[_ix(k)] = i - a + 1
            k += 1
        elif v > 0:
            cnt = rw[_ix(po + v)]
            if k + cnt > cap:
                return i, k, False
            for q in range(cnt):
                out[_ix(k)] = rw[_ix(po + v + 1 + q)]
                s0[_ix(k)] = i - a
                s1[_ix(k)] = i - a + 1
                k += 1
        i += 1
    return i, k, True


@kernel
def _rewrite_simple(cps, a, b, rw, out):
    """Rewrite ``cps[a:b]`` into ``out[0:]`` as long as every character
    stays one character (kept, or replaced by exactly one code point) and
    none starts a protected string; returns where it stopped (``b`` when it
    rewrote the whole text).  ``out`` must hold ``b - a`` code points.

    The rewritten text then has the original's length and positions, so
    tokens matched on it need no mapping back and no source spans are
    written: one store per character, not three, and no mapping pass (the
    case of almost every text of a cased vocabulary, which only deletes
    control characters, and of most lowercased text).  Code points below
    256 are looked up in one load: the table's first page is found once.
    """
    tb = rw[0]
    po = rw[1]
    pc = rw[2]
    px = rw[3]
    pf = rw[4]
    n = rw[_RH - 1]
    p0 = tb + rw[tb]  # the block of code points 0..255
    for i in range(a, b):
        c = cps[_ix(i)]
        if _may_protect(c, rw[_ix(pf + ((c & 0xFFFF) >> 5))]):
            if _protected_at(cps, i, b, rw, pc, px, pf, n) >= 0:
                return i
        if c < 256:
            v = rw[_ix(p0 + c)]
        else:
            v = rw[_ix(tb + rw[_ix(tb + (c >> 8))] + (c & 255))]
        if v != 0:
            if v < 0 or rw[_ix(po + v)] != 1:
                return i
            c = rw[_ix(po + v + 1)]
        out[_ix(i - a)] = c
    return b


@kernel
def _identity_spans(s0, s1, m):
    """Source spans of the first ``m`` characters when each came from the
    character at its own position (what :func:`_rewrite_simple` produced)."""
    for q in range(m):
        s0[q] = q
        s1[q] = q + 1


@kernel
def _is_plain(cps, a, b, rw):
    """True when the rewrite would leave ``cps[a:b]`` as it is: the table is
    the identity and no character may start a protected string."""
    if rw[_IDENT] != 1:
        return False
    if rw[_RH - 1] == 0:
        return True
    pf = rw[4]
    for q in range(a, b):
        c = cps[_ix(q)]
        if _may_protect(c, rw[_ix(pf + ((c & 0xFFFF) >> 5))]):
            return False
    return True


@kernel
def _copy_plain(cps, a, b, rw, out):
    """Copy ``cps[a:b]`` into ``out`` when :func:`_is_plain`; returns False
    (``out`` then holds nothing useful) otherwise, or when ``out`` is too
    small."""
    if b - a > out.size or not _is_plain(cps, a, b, rw):
        return False
    for q in range(b - a):
        out[_ix(q)] = cps[_ix(a + q)]
    return True


@kernel
def _map_back(st, en, k0, k1, s0, s1, m, n):
    """Token offsets ``k0:k1`` from a rewritten text (``m`` characters) back
    to its original (``n`` characters), in place.  An empty span maps to
    the original position of the character after it."""
    for q in range(k0, k1):
        s = st[q]
        e = en[q]
        if e > s:
            st[q] = s0[s]
            en[q] = s1[e - 1]
        else:
            p = s0[s] if s < m else n
            st[q] = p
            en[q] = p


@kernel(inline="always")
def _shifted(arr, size, p, m):
    """A new 1-d array of ``size`` items starting with ``arr[p:m]``."""
    out = np.empty(size, arr.dtype)
    for q in range(m - p):
        out[q] = arr[p + q]
    return out


#: Characters of rewritten text a batch keeps at a time (the scratch buffers,
#: 12 bytes a character: at most 768 KiB, which stay in cache).  A longer
#: text is rewritten and matched a window at a time, cut at word boundaries;
#: only a word longer than half the window makes the buffers grow.
WINDOW = 1 << 16


@kernel
def _last_boundary(tmp, m, auto, clsmask):
    """The largest ``p`` in ``1..m-1`` such that ``tmp[p]`` cannot continue
    the word before it (a separator, a character that is a word of its own,
    or a pre-matched token), or 0: matching ``tmp[:p]`` then gives the
    tokens that matching ``tmp[:m]`` would give before ``p``."""
    cm0 = auto[0]
    mask = clsmask & 3
    p = m - 1
    while p > 0:
        c = tmp[_ix(p)]
        if c > MAX_CODE_POINT:
            return p
        if auto[_ix(cm0 + auto[_ix(cm0 + (c >> 8))] + (c & 255))] & mask != 0:
            return p
        p -= 1
    return p


@kernel
def _rewrite_long(cps, i, a, b, m, auto, rw, clsmask, out, k, tmp, s0, s1):
    """The rest of text ``cps[a:b]`` once the buffers are full: ``tmp[:m]``
    (spans in ``s0``/``s1``) holds the rewrite of ``cps[a:i]``.  Matches a
    window at a time, each up to its last word boundary, the unfinished
    word kept for the next.  Returns ``(out, k, tmp, s0, s1)``, the buffers
    larger when a word outgrew them.  Kept out of
    :func:`segment_batch_rewritten`, whose loop stays as lean as it was for
    the usual text, which fits the buffers."""
    zero = np.int64(0)
    word = zero
    ids, st, en, wd = out[0], out[1], out[2], out[3]
    done = False
    while True:
        # Match up to the end of the text, or else up to the last word
        # boundary in the buffers.
        p = m if done else _last_boundary(tmp, m, auto, clsmask)
        kq = k
        if p > 0:
            src = cps  # unified with the buffer's type, as in the batch loop:
            if p > 0:  # one specialization of the matching loop, not two
                src = tmp
            q = zero
            while True:
                q, k, word, ok = _segment_range(src, q, p, auto, clsmask, ids, st, en, wd, k, word, True)
                if ok:
                    break
                out = grown_rows(out, k, p - q)
                ids, st, en, wd = out[0], out[1], out[2], out[3]
            _map_back(st, en, kq, k, s0, s1, m, b - a)
        if done:
            break
        r = m - p
        if 2 * r > tmp.size:
            # More than half the buffers hold one unfinished word: they grow
            # together, doubling, so that each window adds at least half a
            # buffer of new text and a text costs O(length) however long its
            # words.  (Growing each buffer to twice its own size, as an
            # earlier version did, doubled the text buffer on every refill
            # of the span buffers: quadratic.)
            size = 2 * tmp.size
            tmp = _shifted(tmp, size, p, m)
            s0 = _shifted(s0, size, p, m)
            s1 = _shifted(s1, size, p, m)
        elif p > 0:
            for x in range(r):
                tmp[x] = tmp[p + x]
                s0[x] = s0[p + x]
                s1[x] = s1[p + x]
        i, m, done = _rewrite_fill(cps, i, b, a, rw, tmp, s0, s1, r)
    return out, k, tmp, s0, s1


@kernel
def segment_batch_rewritten(cps, bounds, auto, rw, clsmask, out, k, rows, first_id, last_id):
    """Rewrite, match and map offsets back, text by text, in one call.

    Text ``t`` is ``cps[bounds[t]:bounds[t+1]]``.  A text the rewrite
    leaves as it is (no normalization, no special token in it) is matched
    where it is; any other is rewritten into scratch buffers that stay in
    cache (at most :data:`WINDOW` characters at a time, cut at word
    boundaries, for a long text) and matched from there, so the rewritten
    batch, or a long text, is never stored whole.  Tokens are appended to
    the (4, n) rows of ``out`` (ids, starts, ends in the original texts,
    word indices) from slot ``k`` on, so that a batch can be fed in chunks
    (first rows: :func:`segkit.engine.kernels.token_rows`); ``rows[t + 1]``
    receives the slot after text ``t``.  Returns ``(out, k)``: ``out`` is a
    larger copy when it had to grow.

    ``first_id`` / ``last_id`` (int64, -1 for none): a token put before /
    after every text, with offsets ``(0, 0)`` and word index -1 (a
    template such as BERT's ``[CLS] A [SEP]``, written here so that a batch
    of single texts needs no post-processing pass).
    """
    nt = bounds.size - 1
    tmp = np.empty(1024, np.uint32)  # rewritten text, and the source span of each character
    s0 = np.empty(1024, np.int32)
    s1 = np.empty(1024, np.int32)
    zero = np.int64(0)  # not a literal: the callees keep one specialization
    # The row views are made once, not per text (see kernels.segment_batch).
    ids, st, en, wd = out[0], out[1], out[2], out[3]
    for t in range(nt):
        a = bounds[t]
        b = bounds[t + 1]
        if first_id >= 0:
            if k >= ids.size:
                out = grown_rows(out, k, b - a + 2)
                ids, st, en, wd = out[0], out[1], out[2], out[3]
            ids[_ix(k)] = first_id
            st[_ix(k)] = 0
            en[_ix(k)] = 0
            wd[_ix(k)] = -1
            k += 1
        k0 = k
        plain = _is_plain(cps, a, b, rw)
        simple = False
        matched = False
        if plain:  # matched in place (no copy): offsets come out relative to the batch
            src = cps
            i = a
            m = b
        else:
            if b - a > tmp.size and tmp.size < WINDOW:
                # Room for the text as it is (what the rewrite usually
                # yields), up to a window; earlier texts' contents need no
                # copy.
                size = min(max(2 * tmp.size, b - a + 16), WINDOW)
                tmp = np.empty(size, np.uint32)
                s0 = np.empty(size, np.int32)
                s1 = np.empty(size, np.int32)
            p = a
            if b - a <= tmp.size:
                p = _rewrite_simple(cps, a, b, rw, tmp)
            if p == b:  # same length and positions: offsets need no mapping back
                simple = True
                m = b - a
                done = True
            else:
                _identity_spans(s0, s1, p - a)
                i, m, done = _rewrite_fill(cps, p, b, a, rw, tmp, s0, s1, p - a)
            if not done:  # longer than the buffers: a window at a time
                out, k, tmp, s0, s1 = _rewrite_long(cps, i, a, b, m, auto, rw, clsmask, out, k, tmp, s0, s1)
                ids, st, en, wd = out[0], out[1], out[2], out[3]
                matched = True
            src = tmp
            i = zero
        if not matched:
            word = zero
            while True:
                i, k, word, done = _segment_range(src, i, m, auto, clsmask, ids, st, en, wd, k, word, True)
                if done:
                    break
                out = grown_rows(out, k, m - i)
                ids, st, en, wd = out[0], out[1], out[2], out[3]
            if plain:
                for q in range(k0, k):
                    st[q] -= a
                    en[q] -= a
            elif not simple:
                _map_back(st, en, k0, k, s0, s1, m, b - a)
        if last_id >= 0:
            if k >= ids.size:
                out = grown_rows(out, k, 1)
                ids, st, en, wd = out[0], out[1], out[2], out[3]
            ids[_ix(k)] = last_id
            st[_ix(k)] = 0
            en[_ix(k)] = 0
            wd[_ix(k)] = -1
            k += 1
        rows[t + 1] = k
    return out, k


#: Rows of the scratch array of :func:`segment_rewritten_into`: tokens (ids,
#: starts, ends, words), the rewritten text, its source spans.  Callers may
#: use the rows from SCRATCH_ROWS on for their own output.
SCRATCH_ROWS = 7


def _text_code_points(text, scratch):
    """The code points of ``text`` as a uint32 array (compiled code only):
    a uint32 array as it is; a str (Numba's unicode type) converted into
    row :data:`SCRATCH_ROWS` of ``scratch``, which must have that row and
    ``len(text)`` columns."""
    raise NotImplementedError("compiled code only")


#: Numba's internal reader of one code point of a str, a module global of
#: compiled code: bound when Numba loads (None if this Numba lacks it).
_get_code_point = None


@jit.on_load
def _bind_code_point_reader() -> None:
    global _get_code_point
    try:
        from numba.cpython.unicode import _get_code_point
    except ImportError:  # pragma: no cover
        pass


@overload(_text_code_points, jit_options={"cache": True, "nogil": True})
def _ov_text_code_points(text, scratch):
    from numba import types

    if isinstance(text, types.UnicodeType):
        if _get_code_point is None:  # pragma: no cover (another Numba: callers pass arrays)
            return None

        def from_str(text, scratch):
            cps = scratch[SCRATCH_ROWS].view(np.uint32)
            for i in range(len(text)):
                cps[i] = _get_code_point(text, i)
            return cps

        return from_str
    if isinstance(text, types.Array):
        return lambda text, scratch: text
    return None


def reads_str() -> bool:
    """Whether single-text kernels can read a str directly (Numba's unicode
    type, read through its internal ``_get_code_point``): the str's own
    memory is read, where converting it to an array first costs a bytes
    object and a NumPy array per call (about half a microsecond).  Loads
    Numba (the caller is about to run a kernel)."""
    jit.materialize()
    return _get_code_point is not None


@kernel(inline="always")
def segment_rewritten_into(cps, auto, rw, clsmask, scratch):
    """One text: rewrite, match and map offsets back, in one call.

    ``scratch`` is an int32 array of at least :data:`SCRATCH_ROWS` rows of
    m columns, m the rewritten length (one array, not seven: every array
    argument adds to the cost of a call).  Rows 0-3 receive ids, starts,
    ends and word indices; rows 4-6 hold the rewritten text and its source
    spans.  Returns the token count, or ``-size`` when ``scratch`` is too
    small, ``size`` being a larger size to try (the caller grows it and
    calls again).

    ``cps`` is the text as a uint32 array of code points, or (when
    :func:`reads_str`) the str itself, whose code points then go to row
    :data:`SCRATCH_ROWS` of ``scratch`` (which must have that row).
    """
    n = len(cps)
    cap = scratch.shape[1]
    zero = np.int64(0)  # not a literal: the callees keep one specialization
    if n > cap:
        return -max(2 * cap, n + 16)  # longer than the buffers: grow them
    tmp_cps = scratch[4].view(np.uint32)
    s0 = scratch[5]
    s1 = scratch[6]
    cps = _text_code_points(cps, scratch)
    # Plain (nothing to rewrite) or simple (every character stays one
    # character): positions are the original's, no mapping back.
    mapped = False
    m = n
    if not _copy_plain(cps, zero, n, rw, tmp_cps):
        p = _rewrite_simple(cps, zero, n, rw, tmp_cps)
        if p < n:
            mapped = True
            _identity_spans(s0, s1, p)
            i, m, done = _rewrite_fill(cps, p, n, zero, rw, tmp_cps, s0, s1, p)
            if not done:
                return -max(2 * cap, n + 16)  # the rewrite is longer: grow the buffers
    i, k, word, done = _segment_range(tmp_cps, zero, m, auto, clsmask, scratch[0], scratch[1], scratch[2], scratch[3], zero, zero, True)
    if mapped:
        _map_back(scratch[1], scratch[2], zero, k, s0, s1, m, n)
    return k
