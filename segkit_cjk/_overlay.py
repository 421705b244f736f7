"""Words added to (or removed from) a built dictionary without rebuilding it.

``add_word`` used to rebuild the whole dictionary automaton (349,045 words,
both directions: about a second) on the next call after every change, and
each call copied the vocabulary (0.1-0.4 s).  A jieba user's loop of 200
``add_word`` calls then cost over a minute.  Instead a dictionary state now
keeps the automata of its *base* words as they are, plus

* the words added since (a small automaton of their own, built on first use:
  milliseconds for a few hundred words), and
* the base words deleted since (a mask over the base ids),

and :func:`overlay_tokens` corrects the base automaton's tokens.  The
result is exactly MaxMatch over the dictionary ``base - deleted + added``:

Forward MaxMatch takes, at each token start ``p``, the longest dictionary
word starting at ``p`` (else one character).  The base automaton's token at
``p`` *is* the longest base word there, so as long as the corrected tokens
start where base tokens start ("in step"), only the added words starting at
``p`` need a look (a walk down the small automaton's trie), and the base
token only a look when it is a deleted word (then the longest live base
word is found by walking the base trie from ``p``).  When the chosen word
ends elsewhere than the base token, the tokens are out of step: from there
each token start gets both walks, until a token ends where a base token
starts again.  Text without added (or deleted) words costs one failed
first-character lookup per token.  Backward MaxMatch is the same over the
reversed text with the backward automata (whose tries hold the reversed
words), so :func:`mirrored` turns a backward result into a forward one of
the reversed text and back.

A walk visits at most one node per character of the longest word, so a
token costs O(longest word) when out of step; steps out of step are rare in
real text (they need an added or deleted word, and end at the next common
boundary, usually within a word or two).

Only for automata built as :class:`segkit_cjk.ChineseMaxMatch` builds them:
no suffix indicator (root and continuation root are slot 0), unknown
characters as one-character tokens of ``NOT_A_WORD``, no length limits,
boundary classes only ``SPACE``.
"""

from __future__ import annotations

import numpy as np

from segkit.engine import kernel

_MAX_CODE_POINT = 0x10FFFF


@kernel(inline="always")
def _longest(cps, p, b, auto, dead, ndead):
    """The longest live key of ``auto`` that starts at ``cps[p]`` and ends
    by ``b`` (the text's end), not crossing whitespace: ``(length, id)``,
    ``(0, 0)`` when there is none.  A key is live unless its id is below
    ``ndead`` and ``dead[id]`` is set; the one-character keys of unknown
    characters (negative ids) do not count.

    A node ends a key exactly when its failure link is the root (slot 0)
    (:func:`segkit.engine.build.compute_failure`); its one pop (inline, or
    the first pair of its pool list) holds the key's id.
    """
    cmap = auto[auto[0] : auto[1]]
    trans = auto[auto[1] : auto[2]]
    fails = auto[auto[2] : auto[3]]
    pool = auto[auto[3] : auto[4]]
    u = 0
    best = 0
    best_id = 0
    j = p
    while j < b:
        c = cps[j]
        if c > _MAX_CODE_POINT:
            break
        v = cmap[cmap[c >> 8] + (c & 255)]
        if (v & 3) != 0:
            break  # whitespace: no word crosses it
        sym = v >> 2
        if sym == 0:
            break  # a character of no key
        t = trans[2 * u] + sym
        if trans[2 * t + 1] != u:
            break
        u = t
        j += 1
        if fails[2 * u] == 0:
            ref = fails[2 * u + 1]
            if ref < 0:
                tid = ((-1 - ref) >> 8) - 1
            else:
                tid = pool[pool[ref + 1]]
            if tid >= 0 and (tid >= ndead or not dead[tid]):
                best = j - p
                best_id = tid
    return best, best_id


@kernel
def overlay_tokens(cps, bounds, ids, st, en, rows, base, added, dead, charid):
    """Forward MaxMatch tokens over ``base`` keys minus ``dead`` plus
    ``added`` keys, from the tokens ``(ids, st, en, rows)`` of ``base``
    alone (offsets relative to each text ``cps[bounds[t]:bounds[t + 1]]``,
    text ``t``'s tokens in ``rows[t]:rows[t + 1]``).  ``dead`` is a bool
    mask over base ids (size 0: none deleted); ``charid`` the id of a
    one-character token of no word.  Returns fresh ``(ids, st, en, rows)``.
    (See the module docstring.)"""
    nt = bounds.size - 1
    ndead = dead.size
    cap = max(ids.size, 16)
    oid = np.empty(cap, np.int32)
    ost = np.empty(cap, np.int32)
    oen = np.empty(cap, np.int32)
    orows = np.empty(nt + 1, np.int64)
    acmap = added[added[0] : added[1]]
    k = 0
    for t in range(nt):
        a = bounds[t]
        b = bounds[t + 1]
        orows[t] = k
        q = rows[t]
        qe = rows[t + 1]
        while q < qe:
            # In step: a base token starts at s.
            s = st[q]
            e = en[q]
            tid = ids[q]
            # Most tokens start with a character no added word starts with:
            # one lookup, and no call (a call costs reference counting).
            c = cps[a + s]
            la = 0
            aid = 0
            if c <= _MAX_CODE_POINT and (acmap[acmap[c >> 8] + (c & 255)] >> 2) != 0:
                la, aid = _longest(cps, a + s, b, added, dead, 0)
            if 0 <= tid < ndead and dead[tid]:
                lb, bid = _longest(cps, a + s, b, base, dead, ndead)
                if lb == 0:
                    lb = 1
                    bid = charid
            else:
                lb = e - s
                bid = tid
            if la > lb or (la == lb and bid == charid):
                length = la
                wid = aid
            else:
                length = lb
                wid = bid
            if k >= cap:
                cap *= 2
                oid = _grown(oid, cap)
                ost = _grown(ost, cap)
                oen = _grown(oen, cap)
            oid[k] = wid
            ost[k] = s
            oen[k] = s + length
            k += 1
            p = s + length
            if p == e:
                q += 1
                continue
            # Out of step: both walks at every token start until a token
            # ends where a base token starts (or the text's tokens end).
            while True:
                while q < qe and en[q] <= p:
                    q += 1
                if q >= qe or st[q] >= p:
                    break
                la, aid = _longest(cps, a + p, b, added, dead, 0)
                lb, bid = _longest(cps, a + p, b, base, dead, ndead)
                if lb == 0:
                    lb = 1
                    bid = charid
                if la > lb or (la == lb and bid == charid):
                    length = la
                    wid = aid
                else:
                    length = lb
                    wid = bid
                if k >= cap:
                    cap *= 2
                    oid = _grown(oid, cap)
                    ost = _grown(ost, cap)
                    oen = _grown(oen, cap)
                oid[k] = wid
                ost[k] = p
                oen[k] = p + length
                k += 1
                p += length
    orows[nt] = k
    return oid[:k], ost[:k], oen[:k], orows


@kernel
def _grown(arr, size):
    out = np.empty(size, arr.dtype)
    out[: arr.size] = arr
    return out


def mirrored(n_cps: int, bounds: np.ndarray, ids, st, en, rows):
    """Tokens of texts as tokens of the reversed joined text (and back:
    the mapping is its own inverse): the texts in reverse order, each
    reversed, their tokens in reverse order with mirrored offsets.
    ``bounds`` are the texts' bounds in the joined text of ``n_cps`` code
    points; returns ``(bounds, ids, st, en, rows)`` of the reversed one."""
    lengths = np.diff(bounds).astype(np.int32)
    per_token = np.repeat(lengths, np.diff(rows))
    rbounds = np.ascontiguousarray(n_cps - bounds[::-1])
    rids = np.ascontiguousarray(ids[::-1])
    rst = np.ascontiguousarray((per_token - en)[::-1])
    ren = np.ascontiguousarray((per_token - st)[::-1])
    rrows = np.ascontiguousarray(rows[-1] - rows[::-1])
    return rbounds, rids, rst, ren, rrows
