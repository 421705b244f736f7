"""Every key that starts at a position, not only the longest: the trie of
an automaton read on its own, without failure links.

MaxMatch needs the longest key; some callers need all of them (jieba's
"full mode" lists every dictionary word found in the text, overlapping).
These kernels give them from the same packed automaton
(:mod:`segkit.engine.kernels`), so no second structure is built:

* :func:`key_table` marks the node of each key with its id (a table over the
  automaton's slots, made once per vocabulary);
* :func:`key_ends`, callable from a plugin's compiled code, lists the ends
  of the keys that start at one position, shortest first.

Only keys read from the root count (a suffix indicator's continuation keys
are not prefixes of the text); a forward automaton reads them as written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..runtime.jit import kernel
from .kernels import H_CMAP, H_FAILS, H_TRANS, byte_text

if TYPE_CHECKING:
    from .automaton import Automaton

_ix = np.uint64


@kernel(inline="always")
def _child(auto, u, c):
    """The slot reached from slot ``u`` by symbol ``c`` read from the text
    (a code point, or a byte), or -1."""
    t0 = auto[H_TRANS]
    n_slots = (auto[H_FAILS] - t0) >> 1
    if byte_text(c):
        s = np.int64(c) + 1
    else:
        m = auto[H_CMAP]
        s = np.int64(auto[_ix(m + auto[_ix(m + (c >> 8))] + (c & 255))] >> 2)
    if s == 0:
        return -1
    t = np.int64(auto[_ix(t0 + 2 * u)]) + s
    if t >= n_slots or auto[_ix(t0 + 2 * t + 1)] != u:
        return -1
    return t


@kernel
def _key_slots(auto, cps, bounds, ids, table):
    """Mark in ``table`` the slot of key ``k`` (``cps[bounds[k]:bounds[k+1]]``,
    read from the root) with ``ids[k]``; keys not in the trie mark nothing.
    Returns how many keys were found."""
    found = 0
    for k in range(bounds.size - 1):
        u = np.int64(0)
        for i in range(bounds[k], bounds[k + 1]):
            u = _child(auto, u, cps[i])
            if u < 0:
                break
        if u > 0:
            table[u] = ids[k]
            found += 1
    return found


def key_table(automaton: "Automaton", keys: list, ids: np.ndarray) -> np.ndarray:
    """A read-only int32 table over ``automaton``'s slots: ``ids[k]`` at the
    node of ``keys[k]`` (str, read from the root), -1 elsewhere.  A key the
    trie does not hold (longer than the automaton matches) marks nothing.

    >>> from segkit.engine import Automaton, EngineConfig
    >>> a = Automaton.build(["ab", "abc"], [7, 9], EngineConfig(unknown="char", char_id=-1))
    >>> t = key_table(a, ["ab", "abc"], np.array([7, 9], np.int32))
    >>> sorted(int(v) for v in t[t >= 0])
    [7, 9]
    """
    from .automaton import join_code_points

    if automaton.backward:
        raise ValueError("key_table reads keys from the root as written: it needs a forward automaton")
    table = np.full(automaton.trans.shape[0], -1, np.int32)
    if keys:
        cps, bounds = join_code_points(keys)
        _key_slots(automaton.packed, cps, bounds, np.ascontiguousarray(ids, np.int32), table)
    table.setflags(write=False)
    return table


@kernel(inline="always")
def key_ends(auto, table, cps, k, b, out):
    """Write to ``out`` the ends ``e`` (``k < e <= b``) of the keys
    ``cps[k:e]`` that ``table`` (see :func:`key_table`) marks, in
    increasing order; returns how many (``out`` holds ``b - k`` at least)."""
    n = 0
    u = np.int64(0)
    for i in range(k, b):
        u = _child(auto, u, cps[i])
        if u < 0:
            break
        if table[u] >= 0:
            out[n] = i + 1
            n += 1
    return n
