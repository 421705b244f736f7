"""Checking a stored automaton against the keys it must hold.

A model file stores the automaton's arrays so that loading rebuilds nothing
expensive.  Anyone can write a file with valid checksums, though, and the
compiled matching loop trusts every index it follows.  Loading therefore
checks the *primary* data (the double-array trie and the character map)
against the keys (the vocabulary's tokens and ids), and recomputes the
*derived* data (failure links and pops, :func:`segkit.engine.build.compute_failure`):

1. :func:`trie_order` checks that the double array is a trie (slots 0 and 1
   the roots, every other used slot the child of a used slot on a symbol
   ``1..nsym``, every slot reachable from a root: no cycle, no orphan) and
   returns a breadth-first order, the depths and each slot's symbol;
2. :func:`walk_keys` reads every key from its root through the transitions,
   as matching would, and marks the node it ends at with its id; a key that
   is missing, or two keys ending at one node, is an error;
3. :func:`leaves_end_keys` checks that no other path exists (every leaf ends
   a key).

After these, the trie is exactly the trie of the keys, so the failure data
computed from it equals what :meth:`segkit.engine.Automaton.build` computes:
the loaded automaton behaves exactly as the one built from the keys.  All
three are linear passes (a few milliseconds for the multilingual BERT
vocabulary's 320,000 slots).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .arrays import full
from .build import NO_TOKEN

_ix = np.uint64  # unsigned indices: no code for negative ones (see kernels._ix)

#: Status codes of the checks (0: fine).
OK = 0
BAD_ROOTS = 1
BAD_PARENT = 2
BAD_SYMBOL = 3
UNREACHABLE = 4
NO_SYMBOL = 5
MISSING_KEY = 6
SHARED_NODE = 7
EXTRA_PATH = 8

MESSAGES = {
    BAD_ROOTS: "slots 0 and 1 must be the only roots",
    BAD_PARENT: "a node's parent is not a node",
    BAD_SYMBOL: "a node is not the child of its parent on a symbol of the alphabet",
    UNREACHABLE: "some nodes cannot be reached from a root (their parents form a cycle)",
    NO_SYMBOL: "a character of a key has no symbol in the character map",
    MISSING_KEY: "a vocabulary token is missing from the trie",
    SHARED_NODE: "two vocabulary tokens end at the same node",
    EXTRA_PATH: "the trie holds a path that is no vocabulary token",
}


@njit(cache=True, nogil=True)
def trie_order(base, check, nsym):
    """``(status, bfs, depth, sym, n_children)`` of a double array (int32
    ``base``/``check``; bounds of ``base + nsym`` and ``check`` already
    checked by the caller).  ``bfs`` lists the used slots roots first, by
    depth (slot order within a depth); ``sym[t]`` is the symbol slot ``t``
    is reached on; ``depth`` is -1 for unused slots."""
    size = base.size
    depth = full(size, np.int32(-1), np.int32)
    sym = full(size, np.int32(0), np.int32)
    nkids = full(size + 1, np.int64(0), np.int64)
    bfs = np.empty(0, np.int64)
    if size < 2 or check[0] != -2 or check[1] != -2:
        return BAD_ROOTS, bfs, depth, sym, nkids
    used = 2
    for t in range(2, size):
        p = check[t]
        if p == -1:
            continue
        if p < 0:
            return BAD_ROOTS, bfs, depth, sym, nkids
        if check[p] == -1:
            return BAD_PARENT, bfs, depth, sym, nkids
        s = t - base[p]
        if s < 1 or s > nsym:
            return BAD_SYMBOL, bfs, depth, sym, nkids
        sym[t] = s
        nkids[p + 1] += 1
        used += 1
    # Children lists (counting sort by parent), then breadth-first from the roots.
    start = np.empty(size + 1, np.int64)
    start[0] = 0
    for u in range(size):
        start[u + 1] = start[u] + nkids[u + 1]
    fill = start.copy()
    kids = np.empty(max(used - 2, 0), np.int64)
    for t in range(2, size):
        p = check[t]
        if p >= 0:
            kids[fill[p]] = t
            fill[p] += 1
    bfs = np.empty(used, np.int64)
    bfs[0] = 0
    bfs[1] = 1
    depth[0] = 0
    depth[1] = 0
    n = 2
    h = 0
    while h < n:
        u = bfs[h]
        h += 1
        for q in range(start[u], start[u + 1]):
            v = kids[q]
            depth[v] = depth[u] + 1
            bfs[n] = v
            n += 1
    if n != used:
        return UNREACHABLE, bfs, depth, sym, nkids
    # Within a depth, slots in increasing order (a counting sort): the
    # failure computation then walks the tables forwards, twice as fast as
    # in the breadth-first order above.
    maxd = depth[bfs[n - 1]]
    first = full(maxd + 2, np.int64(0), np.int64)
    for t in range(size):
        if depth[t] >= 0:
            first[depth[t] + 1] += 1
    for d in range(maxd + 1):
        first[d + 1] += first[d]
    for t in range(size):
        d = depth[t]
        if d >= 0:
            bfs[first[d]] = t
            first[d] += 1
    return OK, bfs, depth, sym, nkids[1:]


@njit(cache=True, nogil=True)
def walk_keys(cps, starts, ends, ids, cmap, base, check, root, skip, reverse, tok):
    """Read key ``k`` (``cps[starts[k] + skip[k]:ends[k]]``, backwards when
    ``reverse``) from slot ``root[k]``; mark the node reached ``tok = ids[k]``.
    Returns ``(status, k)``: the first key that fails, if any.  Indices are
    unsigned (``_ix``), as in the matching loop: all are in bounds (the
    caller checked ``base + nsym`` and ``check`` against the table size)."""
    for k in range(starts.size):
        u = np.int64(root[k])
        a = starts[k] + skip[k]
        b = ends[k]
        for q in range(b - a):
            c = cps[_ix(b - 1 - q)] if reverse else cps[_ix(a + q)]
            s = cmap[_ix(cmap[_ix(c >> 8)] + (c & 255))] >> 2
            if s == 0:
                return NO_SYMBOL, k
            t = base[_ix(u)] + s
            if check[_ix(t)] != u:
                return MISSING_KEY, k
            u = t
        if tok[_ix(u)] != NO_TOKEN:
            return SHARED_NODE, k
        tok[_ix(u)] = ids[k]
    return OK, -1


@njit(cache=True, nogil=True)
def mark_characters(base, check, root, nsym, char_id, tok):
    """The one-character keys of the ``"char"`` policy: every symbol read
    from ``root`` ends a key (``char_id`` unless a key of its own is there)."""
    for s in range(1, nsym + 1):
        t = base[root] + s
        if check[t] != root:
            return MISSING_KEY
        if tok[t] == NO_TOKEN:
            tok[t] = char_id
    return OK


@njit(cache=True, nogil=True)
def leaves_end_keys(bfs, n_children, tok):
    """EXTRA_PATH when a node other than a root has no children and ends no key."""
    for h in range(2, bfs.size):
        v = bfs[h]
        if n_children[v] == 0 and tok[v] == NO_TOKEN:
            return EXTRA_PATH
    return OK
