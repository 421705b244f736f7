"""The packed int32 array that holds a BPE model's tables, and the names
of its sections.

One array instead of six keeps a compiled call cheap (each array argument
costs Numba about half a microsecond to unbox).  ``model[0:HEADER]`` holds
section offsets; sections:

``TRANS`` (slots, 2): the double array (``base``, ``check``) of the engine's
          trie over the tokens' bytes (:class:`segkit.engine.Automaton`),
          the transition from slot ``u`` on symbol ``c`` being
          ``t = base[u] + c`` when ``check[t] == u``;
``INFO``  (tokens, 4): byte length, priority, left part, right part
          (:mod:`~segkit.presets.bpe.splits`);
``NEXT``  per token: the longest shorter reachable token that is a prefix
          of it, or -1;
``SLOT``  per automaton slot: the token that ends there (its id when BPE can
          output it, ``-2 - id`` when it cannot, -1 for none);
``PAIRS`` the split table (:mod:`~segkit.presets.bpe.pairs`);
``BYTESYM`` 256 values: the automaton symbol of each byte (``c + 1`` in the
          engine's byte alphabet);
``FILTER`` a bit set over hashes of the split pairs (one bit per pair,
          about 16 bits of set per pair): most pairs the pair test looks up
          are not splits, and this set, small enough to stay in a core's
          cache, rules them out without touching the larger table;
``BIGRAM`` 256 x 256 bits (2048 int32 words): bit ``(u, v)`` set when
          some token's split puts byte ``u`` last in its left part and byte
          ``v`` first in its right part.  Every pair the pair test looks up
          at a boundary between two tokens straddles the same two bytes
          (the bytes either side of the boundary in the text), so where
          the bit is clear no pair there can be a split and the test passes
          at once (a third of the tests on the multilingual corpus);
``EDGE``  (tokens, 2): the priority of the first merge on the token's left
          edge (the merge that gave its first byte a right neighbour;
          ``2**31 - 1`` for a single byte) and on its right edge (-1 for a
          single byte);
``BYTEPRIO`` 256 x 256 values: the priority of the merge of byte ``u`` and
          byte ``v`` (the two-byte token ``uv``), ``2**31 - 1`` for none;
``PARAMS`` scalars, see ``P_*``.
"""

from __future__ import annotations

import numpy as np

TRANS, INFO, NEXT, SLOT, PAIRS, BYTESYM, FILTER, BIGRAM, EDGE, BYTEPRIO, PARAMS, END = range(12)
HEADER = 16

#: parameters: number of token ids; 1 when priorities grow along every BPE
#: run (the backtracking encoder is exact), else 0 (the heap encoder runs);
#: 1 when a piece equal to any token (reachable or not) is that token
#: (tiktoken; HF with ``ignore_merges``); log2 of the filter's bits
P_NTOK, P_MONOTONE, P_WHOLE_ANY, P_FILTER_BITS = range(4)
N_PARAMS = 4


def allocate(sizes: list[int]) -> np.ndarray:
    """An int32 array with the header for sections of these sizes (in the
    order of the constants); the caller fills them through :func:`section`."""
    offsets = np.cumsum([HEADER] + list(sizes))
    out = np.empty(int(offsets[-1]), dtype=np.int32)
    out[:HEADER] = 0
    out[: len(offsets)] = offsets
    return out


def section(model: np.ndarray, which: int) -> np.ndarray:
    """A view of one section."""
    return model[model[which] : model[which + 1]]
