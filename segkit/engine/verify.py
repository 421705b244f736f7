"""Checking a stored automaton against the keys it must hold.

A model file stores the automaton's arrays so that loading rebuilds nothing
expensive.  Anyone can write a file with valid checksums, though, and the
compiled matching loop trusts every index it follows.  Loading therefore
checks the *primary* data (the double-array trie and the character map)
against the keys (the vocabulary's tokens and ids), and recomputes the
*derived* data (failure links and pops, :func:`segkit.engine.build.compute_failure`):

1. :func:`trie_order` checks that the double array is a trie (slots 0 and 1
   the roots, every other used slot the child of a used slot on a symbol
   ``1..nsym``, parents leading to a root: no cycle) and returns the slots
   ordered by depth, the depths and each slot's symbol;
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

4. :func:`stored_failure_holds` then checks the *stored* failure links and
   pops node by node, breadth first, against their definition (Algorithm
   2): a node ending a key links to the continuation root and pops its key;
   any other node ``v`` (parent ``u``, symbol ``c``) links to the first
   child on ``c`` along ``f(u), f(f(u)), ...`` and pops ``F(u)`` followed
   by ``F(z)`` of every ``z`` passed on the way.  Breadth first, every node
   it reads (``u`` and the ``z``) is shallower and already checked, so one
   pass proves every list equal to the builder's, read as the matching
   loop reads it (header, count, pairs; single pops inline).  It costs the
   failure-link walk plus the pairs compared; pairs a list shares with its
   parent's run (the builder's layout: a first child extends its parent's
   run in place) are not compared again, so for files of this builder the
   compares are bounded by the keys' total length, as the builder's copies
   are.  A crafted layout could make them quadratic: past a linear budget
   the check gives up and :func:`compute_failure` decides, as it does for
   any mismatch (older layouts).  This is 3 to 5 times cheaper than
   recomputing the arrays (no scratch pools, no depth-first pass).

Numba's on-disk cache keys a compiled function by its own file only, yet
:func:`check_and_relink` compiles :func:`segkit.engine.build.compute_failure`
into itself: a change to that function (its pops layout) must change this
file too, or a stale cache recomputes the old layout (the last such change:
pops lists with headers, sharing their pairs).
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel

from .arrays import full
from .build import NO_TOKEN, _fits_inline, compute_failure
from .kernels import byte_text

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


@kernel
def trie_order(base, check, nsym):
    """``(status, bfs, depth, sym, n_children)`` of a double array (int32
    ``base``/``check``; bounds of ``base + nsym`` and ``check`` already
    checked by the caller).  ``bfs`` lists the used slots roots first, by
    depth, in slot order within a depth (the order
    :func:`segkit.engine.build.build_automaton` computes failure links in);
    ``sym[t]`` is the symbol slot ``t`` is reached on; ``depth`` is -1 for
    unused slots; ``n_children[t]`` is 0 for a leaf, 1 otherwise.

    Depths come from walking up parents until a known depth (each slot is
    walked once); a walk that meets itself is a cycle."""
    size = base.size
    depth = full(size, np.int32(-1), np.int32)
    sym = full(size, np.int32(0), np.int32)
    has_kids = full(size, np.int8(0), np.int8)
    bfs = np.empty(0, np.int64)
    if size < 2 or check[0] != -2 or check[1] != -2:
        return BAD_ROOTS, bfs, depth, sym, has_kids
    depth[0] = 0
    depth[1] = 0
    stack = np.empty(size, np.int64)
    used = 2
    maxd = 0
    for t in range(2, size):
        p = check[t]
        if p == -1:
            continue
        if p < 0:
            return BAD_ROOTS, bfs, depth, sym, has_kids
        if check[p] == -1:
            return BAD_PARENT, bfs, depth, sym, has_kids
        s = t - base[p]
        if s < 1 or s > nsym:
            return BAD_SYMBOL, bfs, depth, sym, has_kids
        sym[t] = s
        has_kids[p] = 1
        used += 1
        if depth[t] >= 0:
            continue
        n = 0
        u = np.int64(t)
        while depth[u] < 0:
            if depth[u] == -2:  # met a slot of this walk again
                return UNREACHABLE, bfs, depth, sym, has_kids
            if check[u] < 0:  # an unused slot (-1); the real roots have depths
                return BAD_PARENT, bfs, depth, sym, has_kids
            depth[u] = -2
            stack[n] = u
            n += 1
            u = check[u]
        d = depth[u]
        while n > 0:
            n -= 1
            d += 1
            depth[stack[n]] = d
        if d > maxd:
            maxd = d
    # Counting sort by depth, slots in increasing order within a depth.
    first = full(maxd + 2, np.int64(0), np.int64)
    for t in range(size):
        if depth[t] >= 0:
            first[depth[t] + 1] += 1
    for d in range(maxd + 1):
        first[d + 1] += first[d]
    bfs = np.empty(used, np.int64)
    for t in range(size):
        d = depth[t]
        if d >= 0:
            bfs[first[d]] = t
            first[d] += 1
    return OK, bfs, depth, sym, has_kids


@kernel
def walk_keys(cps, starts, ends, ids, cmap, base, check, root, skip, reverse, tok):
    """Read key ``k`` (``cps[starts[k] + skip[k]:ends[k]]``, backwards when
    ``reverse``) from slot ``root[k]``; mark the node reached ``tok = ids[k]``.
    ``cps`` holds code points (uint32, looked up in ``cmap``) or bytes
    (uint8: byte ``c`` is symbol ``c + 1``; ``cmap`` is not read).
    Returns ``(status, k)``: the first key that fails, if any.  Indices are
    unsigned (``_ix``), as in the matching loop: all are in bounds (the
    caller checked ``base + nsym`` and ``check`` against the table size)."""
    for k in range(starts.size):
        u = np.int64(root[k])
        a = starts[k] + skip[k]
        b = ends[k]
        for q in range(b - a):
            c = cps[_ix(b - 1 - q)] if reverse else cps[_ix(a + q)]
            if byte_text(c):
                s = np.int32(c + 1)  # the byte alphabet: no char map
            else:
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


@kernel
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


@kernel
def leaves_end_keys(bfs, n_children, tok):
    """EXTRA_PATH when a node other than a root has no children and ends no key."""
    for h in range(2, bfs.size):
        v = bfs[h]
        if n_children[v] == 0 and tok[v] == NO_TOKEN:
            return EXTRA_PATH
    return OK


@kernel(inline="always")
def _pop_at(ref, pool, e):
    """Pair ``e`` (token id, characters) of the pops list at ``ref`` (``ref <
    0``: the single pop stored inline; else a header whose bounds the caller
    checked), decoded as the matching loop decodes it."""
    if ref < 0:
        packed = np.int64(-1) - ref
        return (packed >> 8) - 1, packed & 255
    at = np.int64(pool[ref + 1]) + 2 * e
    return np.int64(pool[at]), np.int64(pool[at + 1])


@kernel(inline="always")
def _pop_count(ref, pool):
    if ref < 0:
        return np.int64(1)
    if ref == 0:
        return np.int64(0)
    return np.int64(pool[ref])


@kernel(inline="always")
def _header_fits(ref, cnt, pool):
    """A header at ``ref`` announcing ``cnt`` pairs that lie inside ``pool``."""
    n = pool.size
    if ref < 1 or ref + 1 >= n or pool[ref] != cnt:
        return False
    at = np.int64(pool[ref + 1])
    return 0 <= at and at + 2 * cnt <= n


@kernel
def stored_failure_holds(base, check, sym, tok, depth, bfs, fails, pool, sroot, budget):
    """Whether the stored links and pops (``fails``: flat ``(link, ref)``
    pairs per slot; ``pool``) are exactly those :func:`compute_failure`
    gives the checked trie, list by list (see step 4 above).  False when they
    are not, or when comparing would take more than ``budget`` steps: the
    caller then recomputes them.  ``depth``: -1 for unused slots (from
    :func:`trie_order`, whose ``bfs`` is by depth)."""
    size = base.size
    for t in range(size):  # no link, no pops: the roots and unused slots
        if (t < 2 or depth[t] < 0) and (fails[2 * t] != -1 or fails[2 * t + 1] != 0):
            return False
    work = np.int64(0)
    for h in range(2, bfs.size):
        v = bfs[h]
        u = check[v]
        c = sym[v]
        f = fails[2 * v]
        ref = np.int64(fails[2 * v + 1])
        if tok[v] != NO_TOKEN:
            # A key ends here: pop it, continue from the continuation root.
            tid = np.int64(tok[v])
            cov = np.int64(depth[v])
            if f != sroot:
                return False
            if _fits_inline(tid, cov):
                if ref != -1 - (((tid + 1) << 8) | cov):
                    return False
            elif not _header_fits(ref, 1, pool) or _pop_at(ref, pool, 0) != (tid, cov):
                return False
            continue
        # The link: the first child on c along f(u), f(f(u)), ...; the pops:
        # F(u), then F(z) of every z passed (all shallower: checked already).
        ref_u = np.int64(fails[2 * u + 1])
        n_u = _pop_count(ref_u, pool)
        total = n_u
        z = np.int64(fails[2 * u])
        zc = -1
        while z >= 0:
            work += 1
            if work > budget:
                return False
            t = base[z] + c
            if check[t] == z:
                zc = t
                break
            total += _pop_count(np.int64(fails[2 * z + 1]), pool)
            z = fails[2 * z]
        if zc < 0:
            if f != -1 or ref != 0:
                return False
            continue
        if f != zc:
            return False
        if total == 0:
            if ref != 0:
                return False
            continue
        if ref < 0:
            if total != 1:
                return False
        elif not _header_fits(ref, total, pool):
            return False
        # F(u): free when v's list is u's or starts where u's run does.
        e = np.int64(0)
        if not (ref == ref_u or (ref > 0 and ref_u > 0 and pool[ref + 1] == pool[ref_u + 1])):
            work += n_u
            if work > budget:
                return False
            for q in range(n_u):
                if _pop_at(ref, pool, q) != _pop_at(ref_u, pool, q):
                    return False
        e = n_u
        if e < total:
            z = np.int64(fails[2 * u])
            while z >= 0:
                t = base[z] + c
                if check[t] == z:
                    break
                ref_z = np.int64(fails[2 * z + 1])
                n_z = _pop_count(ref_z, pool)
                work += n_z
                if work > budget or e + n_z > total:
                    return False
                for q in range(n_z):
                    if _pop_at(ref, pool, e) != _pop_at(ref_z, pool, q):
                        return False
                    e += 1
                z = fails[2 * z]
    return True


UNUSED_SYMBOL = 9
NO_CHARACTER_TOKEN = 10
MESSAGES[UNUSED_SYMBOL] = "the alphabet has symbols no token uses"
MESSAGES[NO_CHARACTER_TOKEN] = "a character of the alphabet has no one-character token"


@kernel
def check_and_relink(base, check, nsym, cmap, cps, starts, ends, ids, roots, skip, reverse, charmode, char_id, sroot,
                     fixed_alphabet, stored_fails, stored_pool, budget):
    """All the checks in order, then the stored failure links and pops
    checked (:func:`stored_failure_holds`) or else recomputed:
    ``(status, key, fails, pool, stored_hold)`` (``key``: the key that failed,
    or -1; ``stored_hold``: the stored arrays are right, ``fails`` and
    ``pool`` are empty).
    ``fixed_alphabet``: the alphabet is not made of the keys' characters
    (the byte alphabet: always 256 symbols), so symbols no key uses are
    fine.  One compiled entry point, so a fresh process loads one function
    from Numba's cache, not five."""
    no_fails = np.empty((0, 2), np.int32)
    no_pool = np.empty(0, np.int32)
    status, bfs, depth, sym, has_kids = trie_order(base, check, nsym)
    if status:
        return status, -1, no_fails, no_pool, False
    tok = full(base.size, np.int32(NO_TOKEN), np.int32)
    status, k = walk_keys(cps, starts, ends, ids, cmap, base, check, roots, skip, reverse, tok)
    if status:
        return status, k, no_fails, no_pool, False
    if charmode:
        for root in range(2 if sroot else 1):
            if mark_characters(base, check, root, nsym, char_id, tok):
                return NO_CHARACTER_TOKEN, -1, no_fails, no_pool, False
    status = leaves_end_keys(bfs, has_kids, tok)
    if status:
        return status, -1, no_fails, no_pool, False
    # Every symbol is read somewhere: with the count of characters that have
    # a symbol (checked by the caller), the character map gives exactly the
    # keys' characters distinct symbols.
    seen = full(nsym + 1, np.int8(0), np.int8)
    for h in range(2, bfs.size):
        seen[sym[bfs[h]]] = 1
    for s in range(1, nsym + 1):
        if seen[s] == 0 and not fixed_alphabet:
            return UNUSED_SYMBOL, -1, no_fails, no_pool, False
    if stored_failure_holds(base, check, sym, tok, depth, bfs, stored_fails, stored_pool, sroot, budget):
        return OK, -1, no_fails, no_pool, True
    slots = np.arange(base.size).astype(np.int32)
    # In slot space a node's parent is its check value (the roots' -2 is
    # never read: the pass starts after them).
    fails, pool = compute_failure(check, sym, tok, slots, base, check, bfs, sroot)
    return OK, -1, fails, pool, False
