"""Compiled construction of the LinMaxMatch automaton.

Three steps, all linear in the total key length (plus the placement search
of the double array):

1. :func:`insert_keys` builds a plain trie with a scratch hash table.  There
   are two roots: node 0 matches keys from the start of a word, node 1 matches
   continuation keys (the text after the suffix indicator).  Keeping the
   continuation root *separate* rather than placing it at the end of the
   literal suffix-indicator path matters: with indicator ``"xx"`` and keys
   ``{x, xxxx}``, reading ``"xx"`` from the start of a word must not land in
   the continuation state.
2. :func:`place_double_array` renumbers the nodes into double-array slots so
   that a transition is ``s = base[u] + symbol; child iff check[s] == u``.
3. :func:`compute_failure` is Algorithm 2 of Song et al. (2021): a
   breadth-first pass that gives every node its failure link ``f(v)`` and its
   failure pops ``F(v)``.  Each pop is stored as (token id, characters
   covered), so offsets come out of the matching loop for free.

Each step is one compiled function, kept small: a cold Numba cache compiles
them on a user's first build, and that time counts towards the first call.
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel

from .arrays import copy_prefix, full

NO_TOKEN = -2  # node is not the end of a key
FREE = -1  # double-array slot not in use
ROOT_CHECK = -2  # check value of the two root slots
_MAX_ANCHOR_TRIES = 2

# Columns of the (n_slots, 2) int32 failure table.
FAIL, POPS = 0, 1


@kernel
def insert_keys(syms, key_start, key_end, key_tree, key_tok, nsym, reverse):
    """Build a trie from keys given as ranges of one symbol array.

    Key ``k`` is ``syms[key_start[k]:key_end[k]]`` (read backwards when
    ``reverse``), inserted under root ``key_tree[k]`` (0 or 1).  Returns
    ``(parent, sym, tok, depth)`` per node; nodes 0 and 1 are the roots.  A
    key's end node gets ``tok = key_tok[k]`` (the first key wins).
    """
    total = 0
    for k in range(key_start.size):
        total += key_end[k] - key_start[k]
    cap = 16
    while cap < 2 * (total + 4):
        cap *= 2
    mask = cap - 1
    hkey = full(cap, np.int64(-1), np.int64)
    hval = np.empty(cap, np.int32)
    maxn = total + 2
    parent = np.empty(maxn, np.int32)
    sym = full(maxn, np.int32(0), np.int32)
    tok = full(maxn, np.int32(NO_TOKEN), np.int32)
    depth = full(maxn, np.int32(0), np.int32)
    parent[0] = -1
    parent[1] = -1
    n = 2
    stride = np.int64(nsym + 1)
    for k in range(key_start.size):
        u = np.int64(key_tree[k])
        a = key_start[k]
        b = key_end[k]
        for q in range(b - a):
            s = syms[b - 1 - q] if reverse else syms[a + q]
            key = u * stride + s
            h = ((key * np.int64(2654435761)) ^ (key >> 15)) & mask
            while hkey[h] != -1 and hkey[h] != key:
                h = (h + 1) & mask
            if hkey[h] == -1:
                hkey[h] = key
                hval[h] = n
                parent[n] = u
                sym[n] = s
                depth[n] = depth[u] + 1
                n += 1
            u = hval[h]
        if b > a and tok[u] == NO_TOKEN:
            tok[u] = key_tok[k]
    return parent[:n], sym[:n], tok[:n], depth[:n]


@kernel(inline="always")
def _children_csr(parent, n):
    counts = full(n + 1, np.int64(0), np.int64)
    for v in range(2, n):
        counts[parent[v] + 1] += 1
    for i in range(n):
        counts[i + 1] += counts[i]
    order = np.empty(max(n - 2, 0), np.int32)
    fill = np.empty(n, np.int64)
    copy_prefix(fill, counts, n)
    for v in range(2, n):
        p = parent[v]
        order[fill[p]] = v
        fill[p] += 1
    return counts, order


@kernel(inline="always")
def _find_free(nf, i):
    # Smallest free slot >= i (union-find with path halving).
    while nf[i] != i:
        nf[i] = nf[nf[i]]
        i = nf[i]
    return i


def place_double_array(parent, sym, nsym, cap=None):
    """Assign every node a slot; returns ``(slot_of_node, base, check)``.
    ``cap``: the number of slots tried first (tests force the retry path)."""
    if cap is None:
        cap = 2 * parent.size + nsym + 64
    while True:
        slot, base, check = _place(parent, sym, nsym, cap)
        if slot.size:
            return slot, base, check
        cap *= 2  # rare: the arrays ran out of room; place again in larger ones


@kernel
def _place(parent, sym, nsym, cap):
    """:func:`place_double_array` in arrays of ``cap`` slots; empty arrays
    when they are too small (growing them here would double the code Numba
    compiles on a cold start)."""
    n = parent.size
    starts, order = _children_csr(parent, n)
    base = full(cap, np.int32(0), np.int32)
    check = full(cap, np.int32(FREE), np.int32)
    nf = np.empty(cap + 1, np.int64)  # nf[i] = i; nf[cap] == cap: sentinel
    for i in range(cap + 1):
        nf[i] = i
    tries = full(cap, np.int32(0), np.int32)
    slot = full(n, np.int32(-1), np.int32)
    slot[0] = 0
    slot[1] = 1
    check[0] = ROOT_CHECK
    check[1] = ROOT_CHECK
    nf[0] = 2
    nf[1] = 2
    # Depth-first placement keeps the nodes along a word's path close together
    # in memory (breadth-first would spread them over one band per depth).
    stack = np.empty(n, np.int32)
    stack[0] = 1
    stack[1] = 0
    top = 2
    while top > 0:
        top -= 1
        u = stack[top]
        a = starts[u]
        b = starts[u + 1]
        if a == b:
            continue
        smin = nsym + 1
        smax = 0
        for q in range(a, b):
            s = sym[order[q]]
            if s < smin:
                smin = s
            if s > smax:
                smax = s
        p = _find_free(nf, smin)
        while True:
            bs = p - smin
            if bs + smax + nsym + 2 >= cap:
                return slot[:0], base[:0], check[:0]
            ok = True
            for q in range(a, b):
                if check[bs + sym[order[q]]] != FREE:
                    ok = False
                    break
            if ok:
                break
            # A slot that keeps failing as an anchor is dropped from the search
            # (it stays free for non-anchor children): this bounds the scan
            # over old holes, at the price of a few unused slots.
            tries[p] += 1
            if tries[p] >= _MAX_ANCHOR_TRIES:
                nf[p] = p + 1
            p = _find_free(nf, p + 1)
        su = slot[u]
        base[su] = bs
        for q in range(a, b):
            v = order[q]
            t = bs + sym[v]
            check[t] = su
            nf[t] = t + 1
            slot[v] = t
        # Visit children in symbol order (frequent characters first).
        for q in range(b - 1, a - 1, -1):
            stack[top] = order[q]
            top += 1
    size = 0
    for t in range(cap):
        if check[t] != FREE:
            size = t + 1
    maxbase = 0
    for t in range(size):
        if check[t] != FREE and base[t] > maxbase:
            maxbase = base[t]
    size = max(size, maxbase + nsym + 1)
    return slot, base[:size].copy(), check[:size].copy()


def breadth_first(depth):
    """Nodes ordered by depth (roots first; a stable sort keeps node order
    within a depth)."""
    return np.argsort(depth.astype(np.uint16) if depth.size and depth.max() < 1 << 16 else depth, kind="stable")


@kernel(inline="always")
def _child(base, check, z, c):
    t = base[z] + c
    if check[t] == z:
        return t
    return -1


@kernel(inline="always")
def _fits_inline(tid, cov):
    return -1 <= tid < (1 << 23) - 1 and 0 <= cov < 256


@kernel
def compute_failure(parent, sym, tok, slot, base, check, bfs, sroot):
    """Algorithm 2 (breadth-first failure links and pops), in slot space.

    Returns the (n_slots, 2) failure table (failure link, pops reference)
    and the pops pool.  A pops reference ``r >= 0`` points into the pool:
    ``pool[r]`` is the number of pops, followed by (token id, chars covered)
    pairs (``r = 0``: the shared empty list).  Most failures pop exactly one
    token (the node's own); such a single pop is stored in the node itself
    as ``r = -1 - ((id + 1) << 8 | covered)``, so the matching loop never
    touches the pool for it (ids < 2**23 - 1, at most 255 characters).
    ``sroot`` is the slot of the continuation root (0 when the suffix
    indicator is empty).
    """
    size = base.size
    table = np.empty((size, 2), np.int32)
    for v in range(size):
        table[v, FAIL] = -1
        table[v, POPS] = 0
    depth = full(size, np.int32(0), np.int32)
    pool = np.empty(1024, np.int32)
    pool[0] = 0  # the shared empty pop list
    plen = 1
    for h in range(2, bfs.size):
        node = bfs[h]
        v = slot[node]
        u = slot[parent[node]]
        c = sym[node]
        depth[v] = depth[u] + 1
        start = plen  # this node's pops are gathered at pool[start + 1:]
        cnt = 0
        zc = sroot
        if tok[node] == NO_TOKEN:
            # F(v) = F(u) + pops collected while following f from f(u).
            z = table[u, FAIL]
            if z < 0:
                continue
            grab = u
            while True:
                pg = table[grab, POPS]
                k = 1 if pg < 0 else pool[pg]
                if start + 1 + 2 * (cnt + k) > pool.size:
                    pool2 = np.empty(2 * pool.size + 2 * (cnt + k) + 2, np.int32)
                    # keep the entries already written for this node too
                    copy_prefix(pool2, pool, min(start + 1 + 2 * cnt, pool.size))
                    pool = pool2
                if pg < 0:
                    packed = -1 - pg
                    pool[start + 1 + 2 * cnt] = (packed >> 8) - 1
                    pool[start + 2 + 2 * cnt] = packed & 255
                else:
                    for e in range(2 * k):
                        pool[start + 1 + 2 * cnt + e] = pool[pg + 1 + e]
                cnt += k
                zc = _child(base, check, z, c)
                if zc >= 0:
                    break
                grab = z
                z = table[z, FAIL]
                if z < 0:
                    break
            if zc < 0:
                continue
        else:
            # A key ends here: pop it, then continue from the continuation root.
            if start + 3 > pool.size:
                pool2 = np.empty(2 * pool.size, np.int32)
                copy_prefix(pool2, pool, plen)
                pool = pool2
            pool[start + 1] = tok[node]
            pool[start + 2] = depth[v]
            cnt = 1
        table[v, FAIL] = zc
        if cnt == 1 and _fits_inline(pool[start + 1], pool[start + 2]):
            table[v, POPS] = -1 - (((pool[start + 1] + 1) << 8) | pool[start + 2])
        elif cnt == 0:
            table[v, POPS] = 0
        else:
            pool[start] = cnt
            table[v, POPS] = start
            plen = start + 1 + 2 * cnt
    return table, pool[:plen].copy()


def build_automaton(syms, key_start, key_end, key_tree, key_tok, nsym, sroot, reverse):
    """All steps: ``(trans, fails, pool)``.

    ``trans`` is the (slots, 2) double array (base, check), kept apart so the
    hot loop touches 8 bytes per node; ``fails`` is (slots, 2): failure link
    and failure pops reference.  The steps are called one by one from Python
    (a few microseconds each) rather than from one compiled wrapper, which
    would cost a cold Numba cache seconds of compiling them all again as one.
    """
    parent, sym, tok, depth = insert_keys(syms, key_start, key_end, key_tree, key_tok, nsym, reverse)
    slot, base, check = place_double_array(parent, sym, nsym)
    # Breadth first, in slot order within a depth: the pass then walks its
    # tables forwards (about twice as fast as in node order), and the pops
    # pool comes out laid out as segkit.engine.verify recomputes it on load,
    # which can then compare the stored arrays as they are.
    by_slot = np.argsort(slot, kind="stable")
    bfs = by_slot[breadth_first(depth[by_slot])]
    fails, pool = compute_failure(parent, sym, tok, slot, base, check, bfs, sroot)
    trans = np.stack([base, check], axis=1).astype(np.int32, copy=False)
    return trans, fails, pool
