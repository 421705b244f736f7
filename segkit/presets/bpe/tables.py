"""All precomputation of a BPE model, in one place.

:func:`build_tables` takes the vocabulary (token bytes by id) and the merge
semantics, builds the engine's trie over the tokens' bytes, runs
:func:`~segkit.presets.bpe.splits.derive_splits` and fills the packed
model array (:mod:`~segkit.presets.bpe.layout`) that the encode kernels
read.  Nothing here runs per text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ...engine import Automaton, EngineConfig
from . import layout as L
from . import pairs as P
from .splits import LEN, derive_splits, first_non_monotone


class VocabularyError(ValueError):
    """A BPE vocabulary cannot be used (the message says why)."""


@dataclass(frozen=True)
class Tables:
    """What the kernels use (the model array) and the token bytes."""

    model: np.ndarray
    tok_bytes: np.ndarray  # uint8, all tokens' bytes concatenated
    tok_start: np.ndarray  # int64, ids + 1 offsets into tok_bytes
    reach: np.ndarray  # uint8 per id: BPE can output it
    non_monotone: int  # a token breaking growing priorities, or -1


def token_arrays(tokens: list) -> tuple[np.ndarray, np.ndarray]:
    """``(tok_bytes, tok_start)`` of a list of bytes (None: no token)."""
    lengths = np.fromiter((0 if t is None else len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    start = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    data = np.frombuffer(b"".join(t for t in tokens if t), dtype=np.uint8)
    return data, start


def build_tables(
    tokens: list,
    *,
    ranks: np.ndarray | None = None,
    merges: list[tuple[int, int]] | None = None,
    whole_any: bool,
) -> Tables:
    """Tables for ``tokens`` (bytes or None, indexed by id).

    Every byte that occurs in UTF-8 text must be a token (0xC0, 0xC1 and
    0xF5..0xFF never do, and GPT-NeoX's vocabulary lacks them).

    Exactly one of ``ranks`` (tiktoken: a pair merges when its concatenation
    is a token, lowest rank first) and ``merges`` (HuggingFace: listed pairs
    of ids merge, lowest index first; a pair listed twice keeps its last
    index, as HuggingFace's merge map does) is given.  ``whole_any``: a piece
    that equals a token is that token even when BPE would not make it.
    """
    n = len(tokens)
    tok_bytes, tok_start = token_arrays(tokens)
    lengths = np.diff(tok_start)
    ids = np.flatnonzero(lengths > 0)
    # Single bytes: all 256 must be tokens.
    ones = ids[lengths[ids] == 1]
    byte_tok = np.full(256, -1, dtype=np.int32)
    byte_tok[tok_bytes[tok_start[ones]]] = ones
    missing = np.flatnonzero(byte_tok < 0)
    needed = missing[(missing < 0xC0) | ((missing > 0xC1) & (missing < 0xF5))]
    if needed.size:
        raise VocabularyError(
            f"the vocabulary lacks {needed.size} of the single bytes that occur in UTF-8 text (first: "
            f"{int(needed[0]):#04x}); byte-level BPE needs each of them as a token"
        )
    # The engine's trie over the tokens' bytes (code points 0..255).
    keys = [tokens[i].decode("latin-1") for i in ids.tolist()]
    auto = Automaton.build(keys, ids.astype(np.int32), EngineConfig())
    cmap = auto.cmap
    bsym = (cmap[cmap[0] + np.arange(256)] >> 2).astype(np.int32)

    order = ids[np.argsort(lengths[ids], kind="stable")].astype(np.int64)
    pairs = P.new_table(n)
    if merges is not None:
        mtab = P.new_table(len(merges))
        m = np.asarray(merges, dtype=np.int32).reshape(-1, 2)
        _put_all(mtab, m[:, 0], m[:, 1], np.arange(len(m), dtype=np.int32))
        rank = np.zeros(0, dtype=np.int32)
    else:
        mtab = P.new_table(0)
        rank = np.asarray(ranks, dtype=np.int32)
    info, reach = derive_splits(tok_bytes, tok_start, order, byte_tok, rank, mtab, merges is not None, pairs)
    bad = first_non_monotone(info, reach)
    trans = np.ascontiguousarray(auto.trans).ravel()
    slot, nextp = _slots(tok_bytes, tok_start, ids.astype(np.int64), reach, trans, bsym)
    fbits = P.filter_bits(int(reach.sum()))
    filt = P.build_filter(pairs, fbits)
    params = np.zeros(L.N_PARAMS, dtype=np.int32)
    params[L.P_NTOK] = n
    params[L.P_MONOTONE] = 1 if bad < 0 else 0
    params[L.P_WHOLE_ANY] = 1 if whole_any else 0
    params[L.P_FILTER_BITS] = fbits
    model = L.pack([trans, info, nextp, slot, pairs, bsym, filt, params])
    return Tables(model, tok_bytes, tok_start, reach, int(bad))


@njit(cache=True, nogil=True)
def _put_all(table, a, b, v):
    for i in range(a.size):
        P.pair_put(table, a[i], b[i], v[i])


@njit(cache=True, nogil=True)
def _slots(tok_bytes, tok_start, ids, reach, trans, bsym):
    """Per slot, the token ending there (id, or ``-2 - id`` when BPE cannot
    output it); per token, its longest proper prefix that BPE can output."""
    size = trans.size // 2
    slot = np.full(size, -1, np.int32)
    n = tok_start.size - 1
    nextp = np.full(n, -1, np.int32)
    for k in range(ids.size):
        t = ids[k]
        node = 0
        for j in range(tok_start[t], tok_start[t + 1]):
            node = trans[2 * node] + bsym[tok_bytes[j]]
        slot[node] = t if reach[t] else -2 - t
    for k in range(ids.size):
        t = ids[k]
        node = 0
        best = -1
        for j in range(tok_start[t], tok_start[t + 1] - 1):
            node = trans[2 * node] + bsym[tok_bytes[j]]
            if slot[node] >= 0:
                best = slot[node]
        nextp[t] = best
    return slot, nextp
