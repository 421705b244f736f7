"""GPT-2's pre-tokenizer, compiled.

GPT-2 splits text with the regular expression :data:`GPT2_PATTERN` before
byte-pair encoding. This module runs that expression as a hand-written Numba
matcher over UTF-8 bytes, so that counting pre-tokens needs no Python object
per match. Character classes (``\\p{L}``, ``\\p{N}``, ``\\s``) come from the
installed :mod:`regex` package itself (:func:`char_classes`), which is the
reference for what the pattern means; the test-suite checks the matcher
against ``regex.finditer`` with hypothesis and on the shared multilingual
corpus.

>>> pretokenize("I'm here  now!!")
['I', "'m", ' here', ' ', ' now', '!!']

Chunk boundaries
----------------
:func:`_safe_cut` finds positions where a stream may be cut without changing
the matches: position ``i`` is safe when the character before it is not
whitespace and not an apostrophe, and the character at ``i`` has a different
class (letter / number / whitespace / other) than the one before. Then the
match holding character ``i - 1`` (a run of one class, or a contraction that
ends in a letter) ends at ``i`` whether or not the text goes on, and a match
starts at ``i`` that does not depend on what came before (the pattern has no
look-behind and every character is matched by some alternative).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

#: GPT-2's pre-tokenization pattern (for the :mod:`regex` package).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# character classes; 0 is "anything else" ([^\s\p{L}\p{N}])
_L = 1
_N = 2
_S = 4


@lru_cache(maxsize=None)
def char_classes() -> np.ndarray:
    """uint8 class of every code point, as the installed :mod:`regex` sees it:
    1 = ``\\p{L}``, 2 = ``\\p{N}``, 4 = ``\\s``, 0 = anything else."""
    import regex

    everything = "".join(map(chr, range(0x110000)))
    cls = np.zeros(0x110000, dtype=np.uint8)
    for bit, pat in ((_L, r"\p{L}"), (_N, r"\p{N}"), (_S, r"\s")):
        idx = np.fromiter((m.start() for m in regex.finditer(pat, everything)), dtype=np.int64)
        cls[idx] |= bit
    if np.any((cls != 0) & (cls != _L) & (cls != _N) & (cls != _S)):  # pragma: no cover - regex changed
        raise RuntimeError("regex: \\p{L}, \\p{N} and \\s overlap; the compiled GPT-2 matcher assumes they do not")
    return cls


@njit(cache=True, nogil=True, inline="always")
def _decode(buf, i):
    """Code point at byte ``i`` of valid UTF-8 and the index after it."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, i + 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), i + 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F), i + 3
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(buf[i + 1]) & 0x3F) << 12)
        | ((np.int64(buf[i + 2]) & 0x3F) << 6)
        | (np.int64(buf[i + 3]) & 0x3F),
        i + 4,
    )


@njit(cache=True, nogil=True, inline="always")
def _run(buf, q, end, cls, k):
    """End of the run of class ``k`` starting at byte ``q``."""
    while q < end:
        c, q2 = _decode(buf, q)
        if cls[c] != k:
            break
        q = q2
    return q


@njit(cache=True, nogil=True, inline="always")
def match_end(buf, p, end, cls):
    """End (exclusive byte index) of the GPT-2 match that starts at byte ``p``
    of ``buf[:end]``; the alternatives are tried in the pattern's order."""
    c, q = _decode(buf, p)
    k = cls[c]
    if c == 39 and q < end:  # '(?:[sdmt]|ll|ve|re)
        c1 = buf[q]
        if c1 == 115 or c1 == 100 or c1 == 109 or c1 == 116:
            return q + 1
        if q + 1 < end:
            c2 = buf[q + 1]
            if (c1 == 108 and c2 == 108) or (c1 == 118 and c2 == 101) or (c1 == 114 and c2 == 101):
                return q + 2
    if c == 32 and q < end:  # ' ?' then a run
        c2, q2 = _decode(buf, q)
        k2 = cls[c2]
        if k2 != _S:
            return _run(buf, q2, end, cls, k2)
    elif k != _S:
        return _run(buf, q, end, cls, k)
    # \s+(?!\S) | \s+
    w = q
    last = p
    while w < end:
        c2, q2 = _decode(buf, w)
        if cls[c2] != _S:
            break
        last = w
        w = q2
    if w == end:
        return end
    if last > p:
        return last
    return w


@njit(cache=True, nogil=True)
def _ends(buf, start, end, cls, out):
    """Write the end of every match in ``buf[start:end]`` to ``out``; return
    how many (``out`` must hold ``end - start`` entries)."""
    n = 0
    p = start
    while p < end:
        p = match_end(buf, p, end, cls)
        out[n] = p
        n += 1
    return n


@njit(cache=True, nogil=True)
def _prev_start(buf, i):
    """Byte index of the character that ends just before ``i``."""
    j = i - 1
    while (buf[j] & 0xC0) == 0x80:
        j -= 1
    return j


@njit(cache=True, nogil=True)
def _safe_cut(buf, lo, hi, cls):
    """Largest character boundary ``i`` with ``lo < i <= hi`` where the
    stream may be cut (see the module docstring), or -1."""
    i = hi
    if i < len(buf):  # move back to a character boundary
        while i > lo and (buf[i] & 0xC0) == 0x80:
            i -= 1
    else:
        i = len(buf)
        if i <= lo:
            return -1
        # the character at i is unknown: step back one so that both sides are known
        i = _prev_start(buf, i)
    while i > lo:
        c, _ = _decode(buf, i)
        j = _prev_start(buf, i)
        if j < lo:
            return -1
        pc, _ = _decode(buf, j)
        kp = cls[pc]
        if kp != _S and pc != 39 and cls[c] != kp:
            return i
        i = j
    return -1


@njit(cache=True, nogil=True)
def _first_cut(buf, lo, hi, cls):
    """Smallest character boundary ``i`` with ``lo <= i <= hi``, ``0 < i <
    len(buf)``, where the stream may be cut (the rule of :func:`_safe_cut`),
    or -1: one pass, for finding the next cut far ahead."""
    i = max(lo, 1)
    end = min(hi, len(buf) - 1)
    while i <= end:
        if (buf[i] & 0xC0) != 0x80:  # a character starts here
            c, _ = _decode(buf, i)
            pc, _ = _decode(buf, _prev_start(buf, i))
            kp = cls[pc]
            if kp != _S and pc != 39 and cls[c] != kp:
                return i
        i += 1
    return -1


def pretokenize(text: str) -> list[str]:
    """The GPT-2 pre-tokens of ``text`` (compiled; equal to
    ``regex.findall(GPT2_PATTERN, text)``).

    >>> pretokenize("héllo wörld 123  ")
    ['héllo', ' wörld', ' 123', '  ']
    """
    data = text.encode("utf-8")
    buf = np.frombuffer(data, dtype=np.uint8)
    out = np.empty(len(buf), dtype=np.int64)
    n = _ends(buf, 0, len(buf), char_classes(), out)
    pieces = []
    prev = 0
    for e in out[:n]:
        pieces.append(data[prev:e].decode("utf-8"))
        prev = int(e)
    return pieces
