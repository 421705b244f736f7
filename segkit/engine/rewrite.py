"""A compiled character rewrite pass with offset tracking.

Presets normalize text with a per-code-point table (see
:func:`build_rewrite_table`): each code point is kept, deleted, or replaced
by a sequence of code points.  The same pass extracts *protected* strings
(special tokens such as ``[CLS]``) from the original text, leftmost-longest,
and replaces each by one sentinel code point (``SENTINEL + token id``) that
the matching kernel turns into that token.

For every output character the pass records the span of original
characters it came from, so token offsets map back to the original text.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .charmap import two_level
from .kernels import SENTINEL, _run_offsets

_N_PAGES = 0x110000 >> 8
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
    pool = [0]
    for cp, rep in sorted(mapping.items()):
        if rep == chr(cp):
            continue
        if not rep:
            flat[cp] = DELETE
            continue
        flat[cp] = len(pool)
        pool.append(len(rep))
        pool.extend(ord(ch) for ch in rep)
    if delete is not None:
        flat[delete] = DELETE
    return two_level(flat), np.asarray(pool, dtype=np.int32)


# Packed layout: header of section offsets, then the table, the pool, the
# protected strings' code points, their index rows (start, end, id) and a
# bitmap of their possible first characters (low 16 bits).
_RH = 8
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
    for p, o in zip(parts, offsets[:-1]):
        out[o : o + p.size] = p
    return out


def check_rewrite(rw: np.ndarray, source: str) -> None:
    """Bounds-check a packed rewrite array from a file (ValueError if bad)."""
    def bad() -> ValueError:
        return ValueError(f"{source}: invalid normalization tables")

    if rw.dtype != np.int32 or rw.ndim != 1 or rw.size < _RH:
        raise bad()
    h = rw[:_RH].astype(np.int64)
    ends = h[:6]
    n = int(h[_RH - 1])
    if ends[0] != _RH or (np.diff(ends) < 0).any() or ends[5] != rw.size or n < 0:
        raise bad()
    table, pool = rw[ends[0] : ends[1]], rw[ends[1] : ends[2]]
    pcps, index, first = rw[ends[2] : ends[3]], rw[ends[3] : ends[4]], rw[ends[4] : ends[5]]
    n_pages = 0x110000 >> 8
    if table.size < n_pages + 256 or (table.size - n_pages) % 256 or first.size != _FIRST_WORDS or index.size != 3 * n:
        raise bad()
    pages = table[:n_pages]
    if pages.min() < n_pages or pages.max() > table.size - 256 or ((pages - n_pages) % 256).any():
        raise bad()
    refs = table[n_pages:]
    if refs.min() < -1:
        raise bad()
    refs = refs[refs > 0]
    if refs.size and (refs.max() >= pool.size or (refs + pool[refs]).max() >= pool.size or pool[refs].min() < 1):
        raise bad()
    if n:
        rows = index.reshape(-1, 3)
        if rows[:, 0].min() < 0 or rows[:, 1].max() > pcps.size or (rows[:, 1] <= rows[:, 0]).any() or rows[:, 2].min() < 0:
            raise bad()


@njit(cache=True, nogil=True, inline="always")
def _may_protect(c, first_word):
    """Whether a protected string may start with code point ``c``, given
    the bitmap word ``first_word = rw[pf + ((c & 0xFFFF) >> 5)]``."""
    return (first_word >> (c & 31)) & 1 != 0


@njit(cache=True, nogil=True, inline="always")
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


@njit(cache=True, nogil=True, inline="always")
def _rewritten_length(cps, a, b, rw):
    tb = rw[0]
    po = rw[1]
    pc = rw[2]
    px = rw[3]
    pf = rw[4]
    n = rw[_RH - 1]
    total = 0
    i = a
    while i < b:
        c = cps[i]
        r = -1
        if _may_protect(c, rw[pf + ((c & 0xFFFF) >> 5)]):
            r = _protected_at(cps, i, b, rw, pc, px, pf, n)
        if r >= 0:
            total += 1
            i += rw[px + 3 * r + 1] - rw[px + 3 * r]
            continue
        v = rw[tb + rw[tb + (c >> 8)] + (c & 255)]
        if v == 0:
            total += 1
        elif v > 0:
            total += rw[po + v]
        i += 1
    return total


@njit(cache=True, nogil=True, inline="always")
def _rewrite_fill(cps, a, b, rw, out, s0, s1, k):
    tb = rw[0]
    po = rw[1]
    pc = rw[2]
    px = rw[3]
    pf = rw[4]
    n = rw[_RH - 1]
    i = a
    while i < b:
        c = cps[i]
        r = -1
        if _may_protect(c, rw[pf + ((c & 0xFFFF) >> 5)]):
            r = _protected_at(cps, i, b, rw, pc, px, pf, n)
        if r >= 0:
            ln = rw[px + 3 * r + 1] - rw[px + 3 * r]
            out[k] = SENTINEL + rw[px + 3 * r + 2]
            s0[k] = i - a
            s1[k] = i - a + ln
            k += 1
            i += ln
            continue
        v = rw[tb + rw[tb + (c >> 8)] + (c & 255)]
        if v == 0:
            out[k] = c
            s0[k] = i - a
            s1[k] = i - a + 1
            k += 1
        elif v > 0:
            for q in range(rw[po + v]):
                out[k] = rw[po + v + 1 + q]
                s0[k] = i - a
                s1[k] = i - a + 1
                k += 1
        i += 1
    return k


@njit(cache=True, nogil=True)
def rewrite_batch(cps, bounds, rw):
    """Rewrite every text; returns ``(out, out_bounds, src_start, src_end)``.

    ``src_start[j]``/``src_end[j]`` give the original span (relative to the
    text's start) of output character ``j``.  Protected strings are matched
    on the original text before any rewriting.  Two passes (measure, then
    fill), so nothing is reallocated inside the loop.
    """
    nt = bounds.size - 1
    ob = np.empty(nt + 1, np.int64)
    ob[0] = 0
    for t in range(nt):
        ob[t + 1] = ob[t] + _rewritten_length(cps, bounds[t], bounds[t + 1], rw)
    total = ob[nt]
    out = np.empty(total, np.uint32)
    s0 = np.empty(total, np.int32)
    s1 = np.empty(total, np.int32)
    k = 0
    for t in range(nt):
        k = _rewrite_fill(cps, bounds[t], bounds[t + 1], rw, out, s0, s1, k)
    return out, ob, s0, s1


@njit(cache=True, nogil=True)
def segment_rewritten_into(cps, auto, rw, clsmask, out, tmp_cps, tmp_src):
    """One text: rewrite, match and map offsets back, in one call.

    ``out`` (4, >= m) receives ids, starts, ends and word indices;
    ``tmp_cps`` (>= m) and ``tmp_src`` (2, >= m) are scratch, where m is the
    rewritten length.  Returns the token count, or ``-m`` when the buffers
    are too small (the caller grows them and calls again).
    """
    n = cps.size
    m = _rewritten_length(cps, 0, n, rw)
    if m > tmp_cps.size or m > out.shape[1] or m > tmp_src.shape[1]:
        return -m
    s0 = tmp_src[0]
    s1 = tmp_src[1]
    _rewrite_fill(cps, 0, n, rw, tmp_cps, s0, s1, 0)
    i, k, word, done = _run_offsets(tmp_cps[:m], 0, m, auto, clsmask, out[0], out[1], out[2], out[3], 0, 0)
    for q in range(k):
        s = out[1, q]
        e = out[2, q]
        if e > s:
            out[1, q] = s0[s]
            out[2, q] = s1[e - 1]
        else:
            out[1, q] = 0
            out[2, q] = 0
    return k


@njit(cache=True, nogil=True)
def map_offsets(st, en, rows, out_bounds, src_start, src_end):
    """Map token offsets from rewritten text back to the original, in place.

    An empty span (``st == en``) stays at the mapped start.
    """
    for t in range(rows.size - 1):
        base = out_bounds[t]
        for q in range(rows[t], rows[t + 1]):
            s = st[q]
            e = en[q]
            if e > s:
                st[q] = src_start[base + s]
                en[q] = src_end[base + e - 1]
            else:
                st[q] = src_start[base + s] if base + s < src_start.size else 0
                en[q] = st[q]
