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

from .arrays import copy_prefix, full, grow

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


@kernel(inline="always")
def _room(arr, need):
    """``arr`` itself, or a larger copy when it has fewer than ``need`` items."""
    if need <= arr.size:
        return arr
    return grow(arr, need)


@kernel
def compute_failure(parent, sym, tok, slot, base, check, bfs, sroot):
    """Algorithm 2 (breadth-first failure links and pops), in slot space,
    with the pops lists laid out so that they take linear space.

    Returns the (n_slots, 2) failure table (failure link, pops reference)
    and the pops pool.  Most failures pop exactly one token (the node's
    own); such a single pop is stored in the node itself as ``r = -1 -
    ((id + 1) << 8 | covered)``, so the matching loop never touches the pool
    for it (ids < 2**23 - 1, at most 255 characters).  A reference ``r >= 1``
    points to a header in the pool: ``pool[r]`` is the number of pops and
    ``pool[r + 1]`` where their (token id, characters covered) pairs start.
    ``pool[0]`` is 0.  ``sroot`` is the slot of the continuation root (0
    when the suffix indicator is empty).

    Why headers: for a node ``v`` that ends no key, ``F(v) = F(u) + Z`` (``u``
    its parent, ``Z`` the pops of the failure links followed from ``f(u)``),
    so a list extends its parent's.  Written out one list per node, a key of
    ``n`` repeated characters (``"q" * n`` with ``"q"`` and ``"##q"``) needs
    ``n**2 / 2`` pairs.  Here the lists are written in depth-first order:
    a node's first child extends its parent's run of pairs in place (the
    run still ends the pool), its other children copy the parent's run,
    and a child that adds nothing shares its parent's header.  The copies
    cost at most the depth of the parent per child after the first, which
    sums to at most the total length of the keys; so do the ``Z`` parts
    (each failure link followed while collecting them leaves a node at
    least one character shallower, and the depth of ``f(v)`` grows by at
    most one per character of a key).  Space and time are linear in the
    total key length.

    Two passes: breadth first, the failure links and each node's own part
    (its key's pop, or its ``Z``), kept in a scratch pool with, per node,
    the node whose part precedes it; then depth first (children in slot
    order, so that a stored automaton's pool is recomputed identically by
    :mod:`segkit.engine.verify`), the runs and headers.
    """
    size = base.size
    table = np.empty((size, 2), np.int32)
    for v in range(size):
        table[v, FAIL] = -1
        table[v, POPS] = 0
    depth = full(size, np.int32(0), np.int32)
    # Pass 1.  own_at/own_cnt: the node's own pairs in zpool; owner: the
    # last node whose own part is non-empty along F's chain of parts; prev:
    # the owner of the part before it (-1: none); total: |F(v)| (0: no F).
    own_at = full(size, np.int64(0), np.int64)
    own_cnt = full(size, np.int64(0), np.int64)
    owner = full(size, np.int32(-1), np.int32)
    prev = full(size, np.int32(-1), np.int32)
    total = full(size, np.int64(0), np.int64)
    zpool = np.empty(1024, np.int32)
    zlen = 0
    seg = np.empty(64, np.int32)  # the parts of one list, last first
    for h in range(2, bfs.size):
        node = bfs[h]
        v = slot[node]
        u = slot[parent[node]]
        c = sym[node]
        depth[v] = depth[u] + 1
        if tok[node] != NO_TOKEN:
            # A key ends here: pop it, then continue from the continuation root.
            zpool = _room(zpool, zlen + 2)
            zpool[zlen] = tok[node]
            zpool[zlen + 1] = depth[v]
            own_at[v] = zlen
            own_cnt[v] = 1
            zlen += 2
            owner[v] = v
            total[v] = 1
            table[v, FAIL] = sroot
            continue
        # F(v) = F(u) + the pops collected while following f from f(u).
        z = table[u, FAIL]
        if z < 0:
            continue
        start = zlen
        zc = -1
        while True:
            zc = _child(base, check, z, c)
            if zc >= 0:
                break
            if total[z] > 0:  # append F(z), its parts in order
                n = 0
                w = owner[z]
                while w >= 0:
                    if n >= seg.size:
                        seg = grow(seg, n + 1)
                    seg[n] = w
                    n += 1
                    w = prev[w]
                zpool = _room(zpool, zlen + 2 * total[z])
                for q in range(n - 1, -1, -1):
                    w = seg[q]
                    a = own_at[w]
                    for e in range(2 * own_cnt[w]):
                        zpool[zlen] = zpool[a + e]
                        zlen += 1
            z = table[z, FAIL]
            if z < 0:
                break
        if zc < 0:
            zlen = start
            continue
        table[v, FAIL] = zc
        own_at[v] = start
        own_cnt[v] = (zlen - start) // 2
        prev[v] = owner[u]
        owner[v] = v if own_cnt[v] > 0 else owner[u]
        total[v] = total[u] + own_cnt[v]

    # Pass 2: children of every slot in slot order (bfs is by depth, then
    # by slot), visited depth first.
    first = full(size + 1, np.int64(0), np.int64)
    for h in range(2, bfs.size):
        first[slot[parent[bfs[h]]] + 1] += 1
    for t in range(size):
        first[t + 1] += first[t]
    kids = np.empty(max(bfs.size - 2, 0), np.int32)
    fill = np.empty(size, np.int64)
    copy_prefix(fill, first, size)
    for h in range(2, bfs.size):
        p = slot[parent[bfs[h]]]
        kids[fill[p]] = slot[bfs[h]]
        fill[p] += 1
    run_at = full(size, np.int64(-1), np.int64)  # where F(v)'s pairs start in runs (-1: inline)
    runs = np.empty(1024, np.int32)
    rlen = 0
    heads = np.empty(256, np.int64)  # (count, run start) per list
    nh = 0
    stack = np.empty(max(bfs.size, 2), np.int32)
    stack[0] = 1
    stack[1] = 0
    top = 2
    while top > 0:
        top -= 1
        v = stack[top]
        for q in range(first[v + 1] - 1, first[v] - 1, -1):
            stack[top] = kids[q]
            top += 1
        if total[v] == 0 or v < 2:
            continue
        u = check[v]
        if own_cnt[v] == 0:  # F(v) = F(u): the same list
            table[v, POPS] = table[u, POPS]
            run_at[v] = run_at[u]
            continue
        cnt = total[v]
        if cnt == 1:  # a key's own pop
            tid = zpool[own_at[v]]
            cov = zpool[own_at[v] + 1]
            if _fits_inline(tid, cov):
                table[v, POPS] = -1 - (((tid + 1) << 8) | cov)
                continue
            at = rlen
            runs = _room(runs, rlen + 2)
            runs[rlen] = tid
            runs[rlen + 1] = cov
            rlen += 2
        else:
            nu = total[u]
            ru = run_at[u]
            if ru >= 0 and ru + 2 * nu == rlen:  # u's run ends the pool: extend it
                at = ru
                runs = _room(runs, rlen + 2 * own_cnt[v])
            else:
                at = rlen
                runs = _room(runs, rlen + 2 * cnt)
                if ru >= 0:
                    for e in range(2 * nu):
                        runs[rlen + e] = runs[ru + e]
                else:  # u's single pop is inline
                    w = owner[u]
                    runs[rlen] = zpool[own_at[w]]
                    runs[rlen + 1] = zpool[own_at[w] + 1]
                rlen += 2 * nu
            a = own_at[v]
            for e in range(2 * own_cnt[v]):
                runs[rlen + e] = zpool[a + e]
            rlen += 2 * own_cnt[v]
        run_at[v] = at
        if 2 * nh + 2 > heads.size:
            heads = grow(heads, 2 * nh + 2)
        heads[2 * nh] = cnt
        heads[2 * nh + 1] = at
        table[v, POPS] = 1 + 2 * nh
        nh += 1
    base_at = 1 + 2 * nh
    pool = np.empty(base_at + rlen, np.int32)
    pool[0] = 0
    for k in range(nh):
        pool[1 + 2 * k] = heads[2 * k]
        pool[2 + 2 * k] = heads[2 * k + 1] + base_at
    for e in range(rlen):
        pool[base_at + e] = runs[e]
    return table, pool


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
