"""Leftmost-longest search for many strings at once, in linear time.

:class:`LiteralSearch` finds, left to right, the longest of its strings
that starts at the leftmost position where any of them starts, then goes on
after it: the non-overlapping matches an alternation of the strings
(longest first) gives, as HuggingFace's added tokens are found.

The idea: the longest string *starting* at each position is the longest
string *ending* there in the reversed text, which an Aho-Corasick automaton
of the reversed strings gives for every position in one right-to-left pass
(its state is the longest suffix of what it has read that is a prefix of a
reversed string; the longest reversed string among that state's suffixes
is precomputed per state).  A left-to-right pass then takes the leftmost
match and jumps past it.

Invariant: after reading the reversed text down to position ``i``, the
state's string is the longest string read that is a trie path, so every
string starting at ``i`` is one of its suffixes, found on its failure chain.

Cost: building is linear in the total length of the strings (the trie and
its double array are the engine's, :mod:`segkit.engine.build`; failure
links take amortized constant time per trie node); a search is linear in
the text (each character moves one step down the trie and at most that many
steps up in total).  A backtracking regex instead compares a long string
again at every position it might start: ``regex`` took 7 s to search a
string of 4,000 ``q`` in a text of 4,002 characters.
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel

from .arrays import full
from .automaton import to_code_points
from .build import NO_TOKEN, breadth_first, insert_keys, place_double_array
from .charmap import MAX_CODE_POINT, build_charmap


class LiteralSearch:
    """Leftmost-longest, non-overlapping occurrences of a set of strings.

    Parameters
    ----------
    strings
        Non-empty, distinct strings; :meth:`find` reports a match by its index here.

    Examples
    --------
    >>> s = LiteralSearch(["ab", "abc", "c"])
    >>> s.find("xabcc ab")
    [(1, 4, 1), (4, 5, 2), (6, 8, 0)]
    """

    def __init__(self, strings: list[str]) -> None:
        if not strings:
            raise ValueError("LiteralSearch needs at least one string")
        cps = to_code_points("".join(strings))
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        if lengths.min() < 1:
            raise ValueError("LiteralSearch strings must be non-empty")
        ends = np.cumsum(lengths)
        alphabet = np.unique(cps)
        syms = (np.searchsorted(alphabet, cps) + 1).astype(np.int32)
        nsym = int(alphabet.size)
        self.cmap = build_charmap(alphabet, np.zeros(MAX_CODE_POINT + 1, dtype=np.uint8))
        parent, sym, tok, depth = insert_keys(
            syms, ends - lengths, ends, np.zeros(lengths.size, np.int32), np.arange(lengths.size, dtype=np.int32),
            nsym, True,
        )
        if np.count_nonzero(tok != NO_TOKEN) != lengths.size:
            raise ValueError("LiteralSearch strings must be distinct")
        slot, base, check = place_double_array(parent, sym, nsym)
        by_slot = np.argsort(slot, kind="stable")
        bfs = by_slot[breadth_first(depth[by_slot])]
        self.base, self.check = base, check
        self.fail, self.length, self.which = _links(parent, sym, tok, depth, slot, base, check, bfs)
        self.count = lengths.size

    def find_code_points(self, cps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(starts, ends, which)`` of the matches in the uint32 code
        points ``cps``, left to right (int64 arrays)."""
        return _search(np.ascontiguousarray(cps, dtype=np.uint32), self.cmap, self.base, self.check, self.fail,
                       self.length, self.which)

    def find(self, text: str) -> list[tuple[int, int, int]]:
        """``(start, end, index of the string)`` of every match in ``text``."""
        starts, ends, which = self.find_code_points(to_code_points(text))
        return list(zip(starts.tolist(), ends.tolist(), which.tolist()))


@kernel
def _links(parent, sym, tok, depth, slot, base, check, bfs):
    """Per slot: its Aho-Corasick failure link (the slot of the longest
    proper suffix of its string that is a trie path), and the length and
    index of the longest string that is a suffix of its string (0 and -1:
    none).  Breadth first: a link is found from the parent's."""
    size = base.size
    fail = full(size, np.int32(0), np.int32)
    length = full(size, np.int32(0), np.int32)
    which = full(size, np.int32(-1), np.int32)
    for h in range(2, bfs.size):
        node = bfs[h]
        v = slot[node]
        u = slot[parent[node]]
        c = sym[node]
        f = 0
        if u != 0:
            z = fail[u]
            while True:
                t = base[z] + c
                if check[t] == z:
                    f = t
                    break
                if z == 0:
                    break
                z = fail[z]
        fail[v] = f
        if tok[node] != NO_TOKEN:
            length[v] = depth[node]
            which[v] = tok[node]
        else:
            length[v] = length[f]
            which[v] = which[f]
    return fail, length, which


@kernel
def _search(cps, cmap, base, check, fail, lens, which):
    """The matches in a text: the longest string starting at each position
    (right to left, by the reversed strings' automaton), then the leftmost
    ones, each followed from its end.  ``cmap``: code point -> symbol << 2."""
    n = cps.size
    longest = np.empty(n, np.int32)
    what = np.empty(n, np.int32)
    u = 0
    for j in range(n - 1, -1, -1):
        cp = cps[j]
        c = cmap[cmap[cp >> 8] + (cp & 255)] >> 2
        if c == 0:
            u = 0
            longest[j] = 0
            continue
        while True:
            t = base[u] + c
            if check[t] == u:
                u = t
                break
            if u == 0:
                break
            u = fail[u]
        longest[j] = lens[u]
        what[j] = which[u]
    count = 0
    i = 0
    while i < n:
        if longest[i] > 0:
            count += 1
            i += longest[i]
        else:
            i += 1
    starts = np.empty(count, np.int64)
    ends = np.empty(count, np.int64)
    idx = np.empty(count, np.int64)
    k = 0
    i = 0
    while i < n:
        if longest[i] > 0:
            starts[k] = i
            ends[k] = i + longest[i]
            idx[k] = what[i]
            k += 1
            i += longest[i]
        else:
            i += 1
    return starts, ends, idx
