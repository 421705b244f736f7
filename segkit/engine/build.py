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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .arrays import copy_prefix, full

NO_TOKEN = -2  # node is not the end of a key
FREE = -1  # double-array slot not in use
ROOT_CHECK = -2  # check value of the two root slots
_MAX_ANCHOR_TRIES = 2

# Columns of the (n_slots, 2) int32 failure table.
FAIL, POPS = 0, 1


@njit(cache=True, nogil=True)
def insert_keys(syms, key_start, key_end, key_tree, key_tok, nsym, reverse):
    """Build a trie from keys given as ranges of one symbol array.

    Key ``k`` is ``syms[key_start[k]:key_end[k]]`` (read backwards when
    ``reverse``), inserted under root ``key_tree[k]`` (0 or 1).  Returns
    ``(parent, sym, tok)`` per node; nodes 0 and 1 are the roots.  A key's
    end node gets ``tok = key_tok[k]`` (the first key wins).
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
                n += 1
            u = hval[h]
        if b > a and tok[u] == NO_TOKEN:
            tok[u] = key_tok[k]
    return parent[:n], sym[:n], tok[:n]


@njit(cache=True, nogil=True, inline="always")
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


@njit(cache=True, nogil=True, inline="always")
def _find_free(nf, i):
    # Smallest free slot >= i (union-find with path halving).
    while nf[i] != i:
        nf[i] = nf[nf[i]]
        i = nf[i]
    return i


@njit(cache=True, nogil=True)
def place_double_array(parent, sym, nsym):
    """Assign every node a slot; returns ``(slot_of_node, base, check)``."""
    n = parent.size
    starts, order = _children_csr(parent, n)
    cap = 2 * n + nsym + 64
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
            need = bs + smax + nsym + 2
            if need >= cap:
                newcap = max(2 * cap, need + 1)
                base2 = full(newcap, np.int32(0), np.int32)
                copy_prefix(base2, base, cap)
                check2 = full(newcap, np.int32(FREE), np.int32)
                copy_prefix(check2, check, cap)
                nf2 = np.empty(newcap + 1, np.int64)
                for i in range(newcap + 1):
                    nf2[i] = i
                copy_prefix(nf2, nf, cap)
                tries2 = full(newcap, np.int32(0), np.int32)
                copy_prefix(tries2, tries, cap)
                tries = tries2
                base = base2
                check = check2
                nf = nf2
                cap = newcap
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


@njit(cache=True, nogil=True)
def breadth_first(parent):
    """Nodes ordered by depth (roots first).  Parents precede children in
    node numbering, so depths come out of one forward pass."""
    n = parent.size
    depth = full(n, np.int32(0), np.int32)
    maxd = 0
    for v in range(2, n):
        depth[v] = depth[parent[v]] + 1
        if depth[v] > maxd:
            maxd = depth[v]
    count = full(maxd + 2, np.int64(0), np.int64)
    for v in range(n):
        count[depth[v] + 1] += 1
    for d in range(maxd + 1):
        count[d + 1] += count[d]
    order = np.empty(n, np.int32)
    for v in range(n):
        order[count[depth[v]]] = v
        count[depth[v]] += 1
    return order


@njit(cache=True, nogil=True, inline="always")
def _child(base, check, z, c):
    t = base[z] + c
    if check[t] == z:
        return t
    return -1


@njit(cache=True, nogil=True)
def compute_failure(parent, sym, tok, slot, base, check, bfs, sroot):
    """Algorithm 2 (breadth-first failure links and pops), in slot space.

    Returns the (n_slots, 2) failure table (failure link, pops reference)
    and the pops pool.  ``pool[F]`` is the number of pops of a node,
    followed by (token id, chars covered) pairs.  ``sroot`` is the slot of
    the continuation root (0 when the suffix indicator is empty).
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
        if tok[node] != NO_TOKEN:
            if plen + 3 > pool.size:
                pool2 = np.empty(pool.size * 2, np.int32)
                copy_prefix(pool2, pool, plen)
                pool = pool2
            table[v, FAIL] = sroot
            table[v, POPS] = plen
            pool[plen] = 1
            pool[plen + 1] = tok[node]
            pool[plen + 2] = depth[v]
            plen += 3
            continue
        z = table[u, FAIL]
        if z < 0:
            continue
        # F(v) = F(u) + pops collected while following f from f(u).
        start = plen
        cnt = 0
        zc = -1
        grab = u
        while True:
            pg = table[grab, POPS]
            k = pool[pg]
            if start + 1 + 2 * (cnt + k) > pool.size:
                pool2 = np.empty(2 * pool.size + 2 * (cnt + k) + 2, np.int32)
                # keep the entries already written for this node too
                m = min(start + 1 + 2 * cnt, pool.size)
                copy_prefix(pool2, pool, m)
                pool = pool2
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
        if zc >= 0:
            pool[start] = cnt
            plen = start + 1 + 2 * cnt
            table[v, FAIL] = zc
            table[v, POPS] = start
    return table, pool[:plen].copy()


def build_automaton(syms, key_start, key_end, key_tree, key_tok, nsym, sroot, reverse):
    """All steps: ``(trans, fails, pool)``.

    ``trans`` is the (slots, 2) double array (base, check), kept apart so the
    hot loop touches 8 bytes per node; ``fails`` is (slots, 2): failure link
    and failure pops reference.  The steps are called one by one from Python
    (a few microseconds each) rather than from one compiled wrapper, which
    would cost a cold Numba cache seconds of compiling them all again as one.
    """
    parent, sym, tok = insert_keys(syms, key_start, key_end, key_tree, key_tok, nsym, reverse)
    slot, base, check = place_double_array(parent, sym, nsym)
    bfs = breadth_first(parent)
    fails, pool = compute_failure(parent, sym, tok, slot, base, check, bfs, sroot)
    trans = np.stack([base, check], axis=1).astype(np.int32, copy=False)
    pool = inline_single_pops(fails, pool)
    return trans, fails, pool


@njit(cache=True, nogil=True)
def inline_single_pops(fails, pool):
    """Store one-token pop lists in the node itself and compact the pool.

    A single pop is stored as ``-1 - ((id + 1) << 8 | covered)``.  Most
    failures pop exactly one token (the node's own), so the matching loop
    then never touches the pool for them.  Lists that do not fit (ids >=
    2**23 - 1, more than 255 characters) or hold several pops stay in the
    pool, which is rebuilt with only those.  Returns the new pool.
    """
    out = np.empty(pool.size, np.int32)
    out[0] = 0
    size = 1
    for v in range(fails.shape[0]):
        if fails[v, 0] < 0:
            fails[v, 1] = 0
            continue
        ref = fails[v, 1]
        cnt = pool[ref]
        if cnt == 1:
            tid = pool[ref + 1]
            cov = pool[ref + 2]
            if -1 <= tid < (1 << 23) - 1 and 0 <= cov < 256:
                fails[v, 1] = -1 - (((tid + 1) << 8) | cov)
                continue
        fails[v, 1] = size
        for e in range(1 + 2 * cnt):
            out[size + e] = pool[ref + e]
        size += 1 + 2 * cnt
    return out[:size].copy()
