"""Texts as UTF-8 bytes for the byte alphabet, and offsets between bytes
and characters.

The byte alphabet (:class:`segkit.engine.EngineConfig`, ``alphabet="byte"``)
matches the UTF-8 bytes of a text.  A ``str`` is encoded once:

* one text, in compiled code that reads the ``str`` where it lies
  (:func:`encode_str_into`, through Numba's own ``str`` layout: one loop per
  storage width, so ASCII text is a byte copy), in the same call as matching;
* a batch, by CPython (``"".join(texts).encode()``, which is faster than any
  loop), the text boundaries then moved from characters to bytes by
  :func:`byte_bounds`.

A lone surrogate cannot be encoded: the error names the text and the
position, as ``str.encode`` does (:func:`raise_surrogate`).  Invariant of
the compiled encoders: the output buffer holds ``4 *`` the characters read
(no UTF-8 character is longer), so no write is ever out of bounds; cost:
one pass over the characters.  Token offsets
are in bytes; for a ``str`` they convert to characters with
:func:`to_char_offsets` (a token that starts or ends inside a character
covers the whole character).

Numba's on-disk cache keys a compiled function by its own file only, yet the
functions here compile the engine's matching loop into themselves
(:func:`segkit.engine.kernels._segment_range`, its pops layout included):
a change to that loop must change this file too, or a stale cache keeps the
old loop (the last such change: failure pops read through list headers).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..runtime import jit
from ..runtime.jit import kernel

from .kernels import _ix, _run_ids, _segment_range, mirror_rows

# Numba's str internals (the storage width and one-unit reads), module
# globals of the kernels below: bound when Numba loads (None if this Numba
# lacks them; then callers encode in Python, see reads_str).
PY_UNICODE_1BYTE_KIND = PY_UNICODE_2BYTE_KIND = deref_uint8 = deref_uint16 = deref_uint32 = None


@jit.on_load
def _bind_str_internals() -> None:
    global PY_UNICODE_1BYTE_KIND, PY_UNICODE_2BYTE_KIND, deref_uint8, deref_uint16, deref_uint32
    try:
        from numba.cpython.unicode import (
            PY_UNICODE_1BYTE_KIND,
            PY_UNICODE_2BYTE_KIND,
            deref_uint8,
            deref_uint16,
            deref_uint32,
        )
    except ImportError:  # pragma: no cover - another Numba: callers encode in Python
        pass


def reads_str() -> bool:
    """Whether compiled code can read a ``str`` (else callers pass bytes).
    Loads Numba (the callers are about to run a kernel)."""
    jit.materialize()
    return deref_uint8 is not None


_U8 = np.dtype(np.uint8)


@kernel(inline="always")
def _put(out, k, c):
    """Write code point ``c`` (not a surrogate) as UTF-8 at ``out[k:]``;
    returns the next ``k``."""
    if c < 0x80:
        out[_ix(k)] = c
        return k + 1
    if c < 0x800:
        out[_ix(k)] = 0xC0 | (c >> 6)
        out[_ix(k + 1)] = 0x80 | (c & 0x3F)
        return k + 2
    if c < 0x10000:
        out[_ix(k)] = 0xE0 | (c >> 12)
        out[_ix(k + 1)] = 0x80 | ((c >> 6) & 0x3F)
        out[_ix(k + 2)] = 0x80 | (c & 0x3F)
        return k + 3
    out[_ix(k)] = 0xF0 | (c >> 18)
    out[_ix(k + 1)] = 0x80 | ((c >> 12) & 0x3F)
    out[_ix(k + 2)] = 0x80 | ((c >> 6) & 0x3F)
    out[_ix(k + 3)] = 0x80 | (c & 0x3F)
    return k + 4

@kernel
def encode_str_range(text, a, b, out):
    """The UTF-8 bytes of ``text[a:b]`` (a ``str``) into the uint8
    ``out`` (at least ``4 * (b - a)`` long); returns the byte count, or
    ``-1 - i`` when character ``a + i`` is a lone surrogate.  One loop
    per storage width of the ``str`` (1, 2 or 4 bytes a character): an
    ASCII text is a byte copy."""
    data = text._data
    k = 0
    if text._kind == PY_UNICODE_1BYTE_KIND:
        if text._is_ascii:
            for i in range(a, b):
                out[_ix(i - a)] = deref_uint8(data, i)
            return b - a
        for i in range(a, b):
            k = _put(out, k, np.uint32(deref_uint8(data, i)))
        return k
    if text._kind == PY_UNICODE_2BYTE_KIND:
        for i in range(a, b):
            c = np.uint32(deref_uint16(data, i))
            if 0xD800 <= c < 0xE000:
                return -1 - (i - a)
            k = _put(out, k, c)
        return k
    for i in range(a, b):
        c = np.uint32(deref_uint32(data, i))
        if 0xD800 <= c < 0xE000:
            return -1 - (i - a)
        k = _put(out, k, c)
    return k

@kernel
def segment_str_list(text, auto, scratch, backward, clsmask):
    """Token ids of one ``str`` matched over its UTF-8, as a list, in
    one call (the list is made here: no array, no slice, no
    ``tolist``).

    ``scratch``: 1-d int32 of at least ``5 * len(text)`` items: ids go
    to ``scratch[:4 * len(text)]`` (a token per byte at most), the UTF-8
    to the rest, read as bytes.  A lone surrogate at character ``i``
    gives an empty list and ``scratch[0] = -1 - i`` (a text that is not
    empty always has a token).  ``backward``: match the reversed bytes,
    ids in text order.  ``clsmask``: 0, or :data:`~segkit.engine.kernels.
    LOOKAHEAD` to prefetch ahead (an int64 either way)."""
    n = len(text)
    ids = scratch[: 4 * n]
    buf = scratch[4 * n : 5 * n].view(np.uint8)
    m = encode_str_range(text, 0, n, buf)
    if m < 0:
        scratch[0] = m
        return [np.int64(x) for x in range(0)]
    if backward:
        _reverse(buf, m)
    i, k, word, done = _run_ids(buf, np.int64(0), np.int64(m), auto, clsmask, ids, np.int64(0))
    out = [np.int64(0)] * k
    if backward:
        for q in range(k):
            out[q] = ids[k - 1 - q]
    else:
        for q in range(k):
            out[q] = ids[q]
    return out

@kernel
def segment_str_rows(text, auto, scratch, backward, char_offsets):
    """One ``str`` with offsets: rows 0-3 of ``scratch`` (int32, (5, m),
    ``m >= 4 * len(text)``) receive ids, starts, ends and word indices
    (0); row 4 holds the UTF-8.  Offsets are in bytes, or with
    ``char_offsets`` in characters of ``text``.  Returns the token
    count, or ``-1 - i`` for a lone surrogate at character ``i``."""
    buf = scratch[4].view(np.uint8)
    n = encode_str_range(text, 0, len(text), buf)
    if n < 0:
        return n
    return _match_rows(buf, n, auto, np.int64(0), scratch, np.int64(0), backward, char_offsets)

@kernel
def segment_str_batch(text, cb, auto, clsmask, out, k, rows, backward, char_offsets):
    """Many texts, joined in one ``str`` (text ``t`` is
    ``text[cb[t]:cb[t + 1]]``), each encoded to UTF-8 in a scratch
    buffer and matched from there, in one call.

    ``out`` holds the rows to fill from slot ``k`` on: (4, n) ids,
    starts, ends, word indices (offsets from the start of each text, in
    bytes or with ``char_offsets`` in characters), or (1, n) for ids
    only; ``rows[t + 1]`` receives the slot after text ``t``.  Returns
    ``(out, k, bad)``: ``out`` is a larger copy when it had to grow;
    ``bad`` is -1, or the text holding a lone surrogate (its position in
    ``rows[bad + 1]``; the texts before it are done)."""
    nt = cb.size - 1
    buf = np.empty(4096, np.uint8)
    zero = np.int64(0)
    offsets = out.shape[0] == 4
    for t in range(nt):
        a = cb[t]
        b = cb[t + 1]
        if 4 * (b - a) > buf.size:
            buf = np.empty(max(2 * buf.size, 4 * (b - a)), np.uint8)
        n = encode_str_range(text, a, b, buf)
        if n < 0:
            rows[t + 1] = -1 - n
            return out, k, t
        if k + n > out.shape[1]:
            out = grown_rows_n(out, k, n)
        if offsets:
            k += _match_rows(buf, n, auto, clsmask, out, k, backward, char_offsets)
        else:
            if backward:
                _reverse(buf, n)
            i, k1, word, done = _run_ids(buf, zero, np.int64(n), auto, clsmask, out[0], np.int64(k))
            if backward:
                _reverse(out[0, k:], k1 - k)
            k = k1
        rows[t + 1] = k
    return out, k, np.int64(-1)


@kernel
def _match_rows(buf, n, auto, clsmask, out, k, backward, char_offsets):
    """Match ``buf[:n]`` (a text's UTF-8) into columns ``k:`` of the (4, m)
    rows ``out`` (room for ``n`` tokens there), with offsets in bytes of the
    text, or in characters with ``char_offsets``; backward when asked.
    Returns the number of tokens."""
    zero = np.int64(0)
    if backward:
        _reverse(buf, n)
    i, k1, word, done = _segment_range(buf, zero, np.int64(n), auto, clsmask, out[0], out[1], out[2], out[3],
                                       np.int64(k), zero, True)
    cnt = k1 - k
    rows = np.empty(2, np.int64)
    rows[0] = 0
    rows[1] = cnt
    bounds = np.empty(2, np.int64)
    bounds[0] = 0
    bounds[1] = n
    if backward:
        _reverse(buf, n)
        mirror_rows(out[:, k:k1], rows, bounds)
    if char_offsets:
        to_char_offsets(buf, bounds, out[1, k:k1], out[2, k:k1], rows)
    return cnt


@kernel
def grown_rows_n(out, k, more):
    """A copy of the (r, n) rows ``out`` (first ``k`` slots kept) with room
    for at least ``more`` further tokens, at least twice as large."""
    bigger = np.empty((out.shape[0], max(2 * out.shape[1], k + more + 16)), np.int32)
    for r in range(out.shape[0]):
        for q in range(k):
            bigger[r, q] = out[r, q]
    return bigger


@kernel(inline="always")
def _reverse(arr, n):
    """Reverse ``arr[:n]`` in place."""
    lo = 0
    hi = n - 1
    while lo < hi:
        x = arr[lo]
        arr[lo] = arr[hi]
        arr[hi] = x
        lo += 1
        hi -= 1


@kernel
def byte_bounds(data, char_bounds):
    """Text boundaries in bytes of the UTF-8 ``data`` (uint8) of texts
    whose boundaries in characters are ``char_bounds`` (int64, from 0).
    Reads one lead byte per character."""
    out = np.empty(char_bounds.size, np.int64)
    out[0] = 0
    p = 0
    for t in range(char_bounds.size - 1):
        for _ in range(char_bounds[t + 1] - char_bounds[t]):
            b = data[_ix(p)]
            p += 1 + (b >= 0xC0) + (b >= 0xE0) + (b >= 0xF0)
        out[t + 1] = p
    return out


@kernel
def to_char_offsets(data, bounds, st, en, rows):
    """Token offsets from bytes to characters, in place.

    Text ``t`` is ``data[bounds[t]:bounds[t + 1]]`` (valid UTF-8); its tokens
    are ``rows[t]:rows[t + 1]`` of ``st``/``en`` (byte offsets from the start
    of their text, in text order).  A token's start becomes the index of the
    character its first byte belongs to, its end one past the character of
    its last byte.  One pass over each text's bytes, tokens in step: with
    ``lead`` the lead bytes before byte ``i``, byte ``i`` belongs to
    character ``lead + is_lead(i) - 1`` and an end at ``i`` is ``lead``."""
    for t in range(bounds.size - 1):
        a = bounds[t]
        n = bounds[t + 1] - a
        qs = rows[t]
        qe = qs
        q1 = rows[t + 1]
        lead = 0
        for i in range(n + 1):
            if qs >= q1 and qe >= q1:
                break
            isl = 1 if i < n and (data[_ix(a + i)] & 0xC0) != 0x80 else 0
            while qs < q1 and st[qs] <= i:
                st[qs] = lead + isl - 1
                qs += 1
            while qe < q1 and en[qe] <= i:
                en[qe] = lead
                qe += 1
            lead += isl


def text_bytes(text: object) -> np.ndarray:
    """One text as a read-only uint8 array: the bytes of a bytes-like
    object, the UTF-8 of a ``str`` (a lone surrogate: ``UnicodeEncodeError``
    naming its position)."""
    if isinstance(text, str):
        return np.frombuffer(text.encode("utf-8"), _U8)
    if isinstance(text, (bytes, bytearray, memoryview)):
        arr = np.frombuffer(text, _U8) if not isinstance(text, memoryview) else np.frombuffer(text.cast("B"), _U8)
        if isinstance(text, bytearray):
            arr = arr.copy()  # a bytearray can change under us
            arr.flags.writeable = False
        return arr
    raise TypeError(f"expected text as str or bytes, found {type(text).__name__}: {text!r:.80}")


def raise_surrogate(text: str, position: int, index: int | None = None) -> None:
    """Raise the ``UnicodeEncodeError`` ``str.encode`` raises for the lone
    surrogate at ``position`` of ``text`` (``index``: of the text in its
    batch, named in the message)."""
    where = " in the text" if index is None else f" (text {index} of the batch)"
    raise UnicodeEncodeError("utf-8", text, position, position + 1, "surrogates not allowed" + where)


def join_texts_bytes(texts: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """All texts (``str`` or bytes-like, mixed) as one uint8 array of UTF-8
    plus ``bounds`` (int64, length n + 1) in bytes."""
    n = len(texts)
    if n and all(type(t) is str for t in texts):
        joined = "".join(texts)
        try:
            raw = joined.encode("utf-8")
        except UnicodeEncodeError as e:
            _raise_joined_surrogate(texts, e.start)
        data = np.frombuffer(raw, _U8)
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
        cb = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=cb[1:])
        if len(raw) == len(joined):  # ASCII: bytes are characters
            return data, cb
        return data, byte_bounds(data, cb)
    parts = []
    for i, t in enumerate(texts):
        if isinstance(t, str):
            try:
                parts.append(t.encode("utf-8"))
            except UnicodeEncodeError as e:
                raise_surrogate(t, e.start, i)
        elif isinstance(t, (bytes, bytearray, memoryview)):
            parts.append(t)
        else:
            raise TypeError(f"expected texts as a sequence of str or bytes, found {type(t).__name__} at index {i}: {t!r:.80}")
    lengths = np.fromiter((len(memoryview(p).cast("B")) if isinstance(p, memoryview) else len(p) for p in parts),
                          dtype=np.int64, count=n)
    bounds = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return np.frombuffer(b"".join(parts), _U8), bounds


def _raise_joined_surrogate(texts: Sequence[str], at: int) -> None:
    pos = at
    for i, t in enumerate(texts):
        if pos < len(t):
            raise_surrogate(t, pos, i)
        pos -= len(t)
    raise AssertionError("unreachable: the surrogate lies in some text")  # pragma: no cover
