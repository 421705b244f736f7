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

from .kernels import SENTINEL

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
    pages = flat.reshape(_N_PAGES, 256)
    blocks: dict[bytes, int] = {}
    page_block = np.empty(_N_PAGES, dtype=np.int32)
    for i, raw in enumerate(map(bytes, pages)):
        page_block[i] = blocks.setdefault(raw, len(blocks))
    table = np.empty(_N_PAGES + 256 * len(blocks), dtype=np.int32)
    table[:_N_PAGES] = _N_PAGES + page_block * 256
    table[_N_PAGES:] = np.frombuffer(b"".join(blocks), dtype=np.int32)
    return table, np.asarray(pool, dtype=np.int32)


def build_protected(strings: list[str], ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Protected strings, longest first: ``(cps, index, first)`` where string
    ``k`` is ``cps[index[k, 0]:index[k, 1]]`` with token id ``index[k, 2]``,
    and ``first[c & 0xFFFF]`` is 1 when some string may start with ``c``."""
    order = sorted(range(len(strings)), key=lambda k: -len(strings[k]))
    cps: list[int] = []
    index = np.zeros((len(strings), 3), dtype=np.int64)
    first = np.zeros(0x10000, dtype=np.uint8)
    for row, k in enumerate(order):
        if not strings[k]:
            raise ValueError("a special token cannot be the empty string")
        index[row, 0] = len(cps)
        cps.extend(ord(ch) for ch in strings[k])
        index[row, 1] = len(cps)
        index[row, 2] = ids[k]
        first[ord(strings[k][0]) & 0xFFFF] = 1
    return np.asarray(cps if cps else [0], dtype=np.uint32), index, first


@njit(cache=True, nogil=True, inline="always")
def _protected_at(cps, i, b, pcps, pindex, pfirst):
    """Row of the longest protected string starting at ``i``, or -1."""
    c = cps[i]
    if pfirst[c & 0xFFFF] == 0:
        return -1
    for r in range(pindex.shape[0]):
        p0 = pindex[r, 0]
        p1 = pindex[r, 1]
        if pcps[p0] != c or i + (p1 - p0) > b:
            continue
        ok = True
        for q in range(1, p1 - p0):
            if cps[i + q] != pcps[p0 + q]:
                ok = False
                break
        if ok:
            return r
    return -1


@njit(cache=True, nogil=True)
def rewrite_batch(cps, bounds, table, pool, pcps, pindex, pfirst):
    """Rewrite every text; returns ``(out, out_bounds, src_start, src_end)``.

    ``src_start[j]``/``src_end[j]`` give the original span (relative to the
    text's start) of output character ``j``.  Protected strings are matched
    on the original text before any rewriting.  Two passes (measure, then
    fill), so nothing is reallocated inside the loop.
    """
    ob = np.empty(bounds.size, np.int64)
    ob[0] = 0
    total = 0
    for t in range(bounds.size - 1):
        b = bounds[t + 1]
        i = bounds[t]
        while i < b:
            r = _protected_at(cps, i, b, pcps, pindex, pfirst)
            if r >= 0:
                total += 1
                i += pindex[r, 1] - pindex[r, 0]
                continue
            c = cps[i]
            v = table[table[c >> 8] + (c & 255)]
            if v == 0:
                total += 1
            elif v > 0:
                total += pool[v]
            i += 1
        ob[t + 1] = total
    out = np.empty(total, np.uint32)
    s0 = np.empty(total, np.int32)
    s1 = np.empty(total, np.int32)
    k = 0
    for t in range(bounds.size - 1):
        a = bounds[t]
        b = bounds[t + 1]
        i = a
        while i < b:
            r = _protected_at(cps, i, b, pcps, pindex, pfirst)
            if r >= 0:
                ln = pindex[r, 1] - pindex[r, 0]
                out[k] = SENTINEL + pindex[r, 2]
                s0[k] = i - a
                s1[k] = i - a + ln
                k += 1
                i += ln
                continue
            c = cps[i]
            v = table[table[c >> 8] + (c & 255)]
            if v == 0:
                out[k] = c
                s0[k] = i - a
                s1[k] = i - a + 1
                k += 1
            elif v > 0:
                for q in range(pool[v]):
                    out[k] = pool[v + 1 + q]
                    s0[k] = i - a
                    s1[k] = i - a + 1
                    k += 1
            i += 1
    return out, ob, s0, s1


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
