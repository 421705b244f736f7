"""SentencePiece BPE as longest match plus a pair test: the tables, built at load.

BPE's output for a text (here: a run of characters that are normal pieces,
between user-defined symbols and characters outside the vocabulary) is a
sequence of pieces such that

* each piece is *reachable*: BPE of its own text alone gives the piece
  (the merges inside a final symbol's span are the ones BPE makes on that
  span alone, in the same order: the best pair inside the span is the best
  of the whole text whenever the whole text merges inside it);
* each adjacent pair is *valid*: BPE of the two pieces' text gives the two
  pieces back (the same argument on the span of the two).

And conversely, a sequence of reachable pieces whose adjacent pairs are
all valid is BPE's output, whatever the scores: run BPE on the whole text;
as long as it has merged only inside the pieces, its merges inside the
span of two neighbours are those BPE makes on the two alone, in the same
order, so a first merge across a boundary would be made by BPE of those
two as well (it is the best pair of that span, the leftmost of equal
ones), which their validity excludes.  So the output is found left to
right (:func:`.kernels.encode_rows`): keep the output of a prefix on a
stack, take the longest reachable piece at the position (a trie over code
points), push it if it forms a valid pair with the piece on top, else try
the next shorter piece that matches there; when none fits, the position is
dead (the prefix's output is unique, so it fails whenever reached: marked,
never entered again), pop the top and try its next shorter piece.  Each
position is entered at most once: linear time.

**The pair test.**  A piece's *tree* is the merges BPE makes on its text
alone; its *root* is the last (a left and a right piece), its *rank* the
piece's score rank (0: the highest score), -1 for one character.  When
every piece of both trees ranks strictly after its two parts (*monotone*:
trained models, whose merges get ever lower scores), BPE of the pair merges
in increasing (rank, position) order, and the two sides' facing edges
change one level at a time: starting from ``(x, y)``, the one of larger
rank was made last (on equal ranks, ``y``: a tie goes left, and ``y``'s
merge is right of ``x``'s); before that merge the boundary was between its
part and the other piece, and that boundary pair (a piece of rank ``q``)
would have merged first if ``q`` is below the undone rank (also on equal
ranks when ``y``'s merge was undone, the boundary being left of it).
Walking down until both sides are one character, with no such pair, and
``x + y`` itself no piece, proves the pair valid; the lookups are in the
pair table of :func:`.kernels.build_pairs`.  A piece whose tree is not
monotone (Mistral's runs of ``▁``, all of one score) is marked: a pair with
one is tested by running BPE on the two pieces' characters (scans, as the
short-word merge does), exact for any scores.

Where it runs (``flags[F_LONGEST]``): models on the id encoder
(``F_FAST``: every character of a mergeable piece is a piece, ids below
2^16) without UNUSED pieces (their resegmentation depends on the whole
text's merges), with fewer than 2^20 trie nodes.  Other models keep the heap
and the scans.
"""

from __future__ import annotations

import numpy as np

from ...runtime.jit import kernel
from . import kernels as K

#: (the layout: kernels.TRIE_CP_BITS and the constants after it)
CP_BITS = K.TRIE_CP_BITS
CHILD_BITS = K.TRIE_CHILD_BITS
CHILD_MASK = K.TRIE_CHILD_MASK
MARKED = K.TINFO_MARKED
MAX_NODES = 1 << 20

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@kernel(inline="always")
def trie_slot(key, tbits):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(64 - tbits))


@kernel
def build_longest(pbuf, poff, ptype, prank, htab, char_ids, pkey, bits, order):
    """``(trie, tinfo, max_chars, ok)`` for the longest-match encoder.

    ``order``: the pieces by increasing byte length (a piece's parts and
    prefixes come before it).  The trie holds every reachable normal piece
    (module doc); its root is node ``n`` (the number of pieces), a node that
    ends a piece is that piece's id, the others are numbered from ``n + 1``.
    ``tinfo`` has four int64 a piece: characters | MARKED | (next shorter
    prefix piece + 1) << 32, its rank (-1: one character), its root's left
    and right parts (-1: one character); all zeros for a piece that is
    not in the trie.  ``ok`` is False when the encoder cannot run
    (see the module doc)."""
    n = ptype.size
    tinfo = np.zeros(4 * n + (1 << K.BIGRAM_BITS) // 64, np.int64)
    total = 0
    max_chars = 1
    for t in range(n):
        if ptype[t] != K.T_NORMAL:
            continue
        m = 0
        for q in range(poff[t], poff[t + 1]):
            if (pbuf[q] & 0xC0) != 0x80:
                m += 1
        total += m
        max_chars = max(max_chars, m)
    tbits = 4
    while (1 << tbits) < 2 * total + 16:
        tbits += 1
    trie = np.full(1 << tbits, -1, np.int64)
    tmask = (1 << tbits) - 1
    if n > 0xFFFF or n + total + 1 >= MAX_NODES:
        return trie, tinfo, max_chars, False
    cps = np.empty(max_chars, np.int64)
    sym = np.empty(max_chars, np.int64)
    root = n
    nodes = n + 1
    for oi in range(order.size):
        t = order[oi]
        if ptype[t] != K.T_NORMAL:
            continue
        # its characters, and their pieces
        m = 0
        p = poff[t]
        b = poff[t + 1]
        good = True
        while p < b:
            c = pbuf[p]
            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            if p + used > b:
                used = b - p
            cp = np.int64(c) if used == 1 else np.int64(c) & (0x7F >> used)
            for q in range(p + 1, p + used):
                cp = (cp << 6) | (np.int64(pbuf[q]) & 0x3F)
            one = char_ids[cp] if cp < 0x10000 else K.lookup(pbuf, p, p + used, pbuf, poff, htab)
            if one < 0 or ptype[one] != K.T_NORMAL or cp >= (1 << CP_BITS):
                good = False
                break
            cps[m] = cp
            sym[m] = one
            m += 1
            p += used
        if not good:
            continue
        for j in range(m - 1):
            bg = K.bigram_bit(sym[j], sym[j + 1])
            tinfo[4 * n + (bg >> 6)] |= np.int64(1) << (bg & 63)
        rank = np.int64(-1)
        left = np.int64(-1)
        right = np.int64(-1)
        marked = 0
        if m > 1:
            # BPE of the piece's text alone: the best rank, the leftmost of equal ones
            mm = m
            while mm > 1:
                best = K._NONE
                bi = -1
                for i in range(mm - 1):
                    v = K.pair_key(sym[i], sym[i + 1], pkey, bits)
                    if v != K._NONE and (v >> 16) < (best >> 16):
                        best = v
                        bi = i
                if bi < 0:
                    break
                left = sym[bi]
                right = sym[bi + 1]
                sym[bi] = best & 0xFFFF
                for j in range(bi + 1, mm - 1):
                    sym[j] = sym[j + 1]
                mm -= 1
            if mm != 1 or sym[0] != t:
                continue  # not reachable: never in BPE's output
            rank = np.int64(prank[t])
            for part in (left, right):
                if (tinfo[4 * part] & MARKED) != 0 or tinfo[4 * part + 1] >= rank:
                    marked = MARKED
        # into the trie
        node = root
        shorter = -1
        for j in range(m):
            key = (node << CP_BITS) | cps[j]
            h = trie_slot(key, tbits)
            child = -1
            while True:
                e = trie[h]
                if e == -1:
                    break
                if (e >> CHILD_BITS) == key:
                    child = e & CHILD_MASK
                    break
                h = (h + 1) & tmask
            if j == m - 1:
                if child >= 0:
                    return trie, tinfo, max_chars, False  # (two pieces of one text: refused at load)
                trie[h] = (key << CHILD_BITS) | t
                break
            if child < 0:
                child = nodes
                nodes += 1
                trie[h] = (key << CHILD_BITS) | child
            node = child
            if node < n:
                shorter = node
        tinfo[4 * t] = m | marked | ((shorter + 1) << 32)
        tinfo[4 * t + 1] = rank
        tinfo[4 * t + 2] = left
        tinfo[4 * t + 3] = right
    # The prefix table the encoder reads: every prefix of a piece in the
    # trie by the hash of its code points (K.PREFIX_SEED, K.PREFIX_MUL),
    # so that the probes along a text do not wait on each other; a slot is
    # the hash's top 48 bits and the piece the prefix is (0xFFFF: none).
    prefixes = 0
    for h in range(trie.size):
        if trie[h] != -1:
            prefixes += 1
    sbits = 4
    while (1 << sbits) < 2 * prefixes + 16:
        sbits += 1
    table = np.full(1 << sbits, -1, np.int64)
    tnode = np.full(1 << sbits, -1, np.int64)
    smask = (1 << sbits) - 1
    for t in range(n):
        if tinfo[4 * t] == 0:
            continue
        p = poff[t]
        b = poff[t + 1]
        node = np.int64(root)
        hv = K.PREFIX_SEED
        while p < b:
            c = pbuf[p]
            used = 1 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            cp = np.int64(c) if used == 1 else np.int64(c) & (0x7F >> used)
            for q in range(p + 1, p + used):
                cp = (cp << 6) | (np.int64(pbuf[q]) & 0x3F)
            p += used
            key = (node << CP_BITS) | cp
            h = trie_slot(key, tbits)
            while (trie[h] >> CHILD_BITS) != key:
                h = (h + 1) & tmask
            node = trie[h] & CHILD_MASK
            hv = (hv ^ np.uint64(cp)) * K.PREFIX_MUL
            entry = np.int64(((hv >> np.uint64(16)) << np.uint64(16)) | np.uint64(node if node < n else 0xFFFF))
            if entry == -1:
                return table, tinfo, max_chars, False
            g = np.int64((hv * _GOLDEN) >> np.uint64(64 - sbits))
            while table[g] != -1 and (table[g] >> 16) != (entry >> 16):
                g = (g + 1) & smask
            if table[g] == -1:
                table[g] = entry
                tnode[g] = node
            elif tnode[g] != node:
                return table, tinfo, max_chars, False  # two prefixes of one hash (then the heap runs)
    return table, tinfo, max_chars, True
