"""jieba's full mode (``jieba.cut(text, cut_all=True)``): every dictionary
word found in the text, overlapping, in one compiled pass.

jieba 0.42.1 cuts a text in full mode as follows, and so does
:func:`full_mode`:

* The text is split into *blocks*, runs of ``[\\u4E00-\\u9FD5a-zA-Z0-9+#&._%-]``
  (jieba's ``re_han_default``), and the stretches between them.
* In a block, for each position ``k`` the words of the dictionary that start
  there and end inside the block are listed (jieba's ``get_DAG``; the
  character itself when there is none).  When there is one and position
  ``k`` is not yet covered, it is a token; when there are several, every
  one longer than a character is a token.  Such single tokens that start
  with an ASCII letter or digit are glued together until the next position
  that is not one (jieba's ``eng_buf``), which can join words that are not
  adjacent (``x`` and ``y`` of ``x3GPy`` when ``3G`` and ``3GP`` are words).
* Between blocks, ``"\\r\\n"`` and each other whitespace character (Python's
  ``\\s``) is a token, and so is each run of the other characters
  (punctuation, other scripts) between them.

jieba also yields an empty string on each side of a whitespace token;
segkit leaves those out.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from segkit.engine import kernel, key_ends

_ix = np.uint64


@kernel(inline="always")
def _in_block(c):
    """Whether ``c`` is of jieba's ``re_han_default`` class."""
    if 0x4E00 <= c <= 0x9FD5:
        return True
    if c > 122:
        return False
    return (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 43 or c == 35 or c == 38 or c == 46
            or c == 95 or c == 37 or c == 45)


@kernel(inline="always")
def _is_eng(c):
    """jieba's ``re_eng``: an ASCII letter or digit."""
    return 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122


@kernel(inline="always")
def _is_space(c, space):
    return c < space.size and space[_ix(c)]


@kernel(inline="always")
def _emit(out, n, s, e, join):
    """Row ``n`` of ``out`` (grown when full): ``(s, e, join)``; returns
    ``(out, n + 1)``."""
    if n == out.shape[1]:
        bigger = np.empty((3, 2 * n + 16), np.int64)
        bigger[:, :n] = out
        out = bigger
    out[0, n] = s
    out[1, n] = e
    out[2, n] = join
    return out, n + 1


@kernel
def full_mode(cps, base, base_table, added, added_table, has_added, space, keep_space):
    """The full-mode tokens of ``cps`` (code points) with the words of
    ``base`` (a forward automaton, words marked by ``base_table``, see
    :func:`segkit.engine.prefixes.key_table`) and, when ``has_added``, of
    ``added``: ``(out, n)``, ``out[:, :n]`` rows ``start, end, join`` (join:
    1 when the span is glued to the token before, jieba's ``eng_buf``).
    Whitespace tokens are left out unless ``keep_space``."""
    n = cps.size
    out = np.empty((3, max(16, n)), np.int64)
    k_out = 0
    e1 = np.empty(n + 1, np.int64)
    e2 = np.empty(n + 1, np.int64)
    merged = np.empty(n + 1, np.int64)
    glued = np.empty((2, n + 1), np.int64)  # the spans of jieba's eng_buf
    i = 0
    while i < n:
        c = cps[i]
        if _in_block(c):
            b = i
            while b < n and _in_block(cps[b]):
                b += 1
            old_j = i - 1  # the last position covered (jieba's old_j)
            g = 0
            for k in range(i, b):
                eng = _is_eng(cps[k])
                if g and not eng:
                    for q in range(g):
                        out, k_out = _emit(out, k_out, glued[0, q], glued[1, q], 1 if q else 0)
                    g = 0
                n1 = key_ends(base, base_table, cps, k, b, e1)
                ends = e1
                m = n1
                if has_added:
                    n2 = key_ends(added, added_table, cps, k, b, e2)
                    if n2:
                        p = q = m = 0
                        while p < n1 or q < n2:
                            if q == n2 or (p < n1 and e1[p] < e2[q]):
                                v = e1[p]
                                p += 1
                            elif p == n1 or e2[q] < e1[p]:
                                v = e2[q]
                                q += 1
                            else:
                                v = e1[p]
                                p += 1
                                q += 1
                            merged[m] = v
                            m += 1
                        ends = merged
                if m == 0:
                    ends = merged
                    ends[0] = k + 1
                    m = 1
                if m == 1 and k > old_j:
                    if eng:
                        glued[0, g] = k
                        glued[1, g] = ends[0]
                        g += 1
                    else:
                        out, k_out = _emit(out, k_out, k, ends[0], 0)
                    old_j = ends[0] - 1
                else:
                    for q in range(m):
                        if ends[q] - 1 > k:
                            out, k_out = _emit(out, k_out, k, ends[q], 0)
                            old_j = ends[q] - 1
            for q in range(g):
                out, k_out = _emit(out, k_out, glued[0, q], glued[1, q], 1 if q else 0)
            i = b
        elif _is_space(c, space):
            w = 2 if (c == 13 and i + 1 < n and cps[i + 1] == 10) else 1
            if keep_space:
                out, k_out = _emit(out, k_out, i, i + w, 0)
            i += w
        else:
            b = i + 1
            while b < n and not _in_block(cps[b]) and not _is_space(cps[b], space):
                b += 1
            out, k_out = _emit(out, k_out, i, b, 0)
            i = b
    return out, k_out


@lru_cache(maxsize=1)
def python_white_space() -> np.ndarray:
    """A read-only bool table: ``table[c]`` for the code points ``c`` that
    Python's ``\\s`` matches in a str pattern (what jieba splits on), up to
    the largest of them."""
    everything = "".join(map(chr, range(0x110000)))
    cps = [m.start() for m in re.finditer(r"\s", everything)]
    table = np.zeros(max(cps) + 1, np.bool_)
    table[cps] = True
    table.setflags(write=False)
    return table


def words_of(text: str, out: np.ndarray, n: int) -> list[str]:
    """The tokens of :func:`full_mode`'s output, as strings of ``text``."""
    starts, ends, joins = out[0, :n].tolist(), out[1, :n].tolist(), out[2, :n]
    if not joins.any():
        return [text[s:e] for s, e in zip(starts, ends)]
    words: list[str] = []
    for s, e, j in zip(starts, ends, joins.tolist()):
        if j:
            words[-1] += text[s:e]
        else:
            words.append(text[s:e])
    return words
