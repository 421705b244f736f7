"""All precomputation of a BPE model, in one place.

:func:`build_tables` takes the vocabulary (token bytes by id) and the merge
semantics, builds the engine's trie over the tokens' bytes
(:class:`segkit.engine.Automaton`; the encoder uses its double array),
runs :func:`~segkit.presets.bpe.splits.derive_splits` (the expensive part)
and then :func:`finish_tables`, which derives the rest in linear passes:
the token at each trie node, each token's longest shorter prefix token,
the split table and its filter.  A saved model stores the double array
and the splits; loading runs :func:`finish_tables` again and certifies the
splits (:mod:`~segkit.presets.bpe.verify`).  Nothing here runs per text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ...runtime.jit import kernel

from ...engine import Automaton, EngineConfig
from ...engine.intrinsics import prefetch
# A vocabulary BPE cannot use is the library's one VocabularyError
# (segkit.VocabularyError); callers add the file or argument to the message.
from ...models.vocabulary import VocabularyError
from . import layout as L
from . import pairs as P
from .splits import derive_splits, first_non_monotone


#: how many tokens ahead the load's passes fetch rows read from random places
AHEAD = 8




@dataclass(frozen=True)
class Tables:
    """What the kernels use (the model array) and what it was made from."""

    model: np.ndarray
    tok_bytes: np.ndarray  # uint8, all tokens' bytes concatenated
    tok_start: np.ndarray  # int64, ids + 1 offsets into tok_bytes
    trans: np.ndarray  # int32 (slots, 2): the engine's double array
    bsym: np.ndarray  # int32 (256,): symbol of each byte
    info: np.ndarray  # int32 (ids, 4): splits (see splits.py)
    lex: np.ndarray  # int32: the ids of all tokens in the byte order of their bytes
    non_monotone: int  # a token breaking growing priorities, or -1

    @property
    def reach(self) -> np.ndarray:
        """uint8 per id: BPE can output the token."""
        return reachable(self.info)


def token_arrays(tokens: list) -> tuple[np.ndarray, np.ndarray]:
    """``(tok_bytes, tok_start)`` of a list of bytes (None: no token)."""
    lengths = np.fromiter((0 if t is None else len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    start = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    data = np.frombuffer(b"".join(t for t in tokens if t), dtype=np.uint8)
    return data, start


def reachable(info: np.ndarray) -> np.ndarray:
    """uint8 per id: BPE can output the token (a single byte, or a token
    with a split)."""
    return ((info[:, 0] == 1) | (info[:, 2] >= 0)).astype(np.uint8)


def build_tables(
    tokens: list,
    *,
    ranks: np.ndarray | None = None,
    merges: list[tuple[int, int]] | None = None,
    whole_any: bool,
) -> Tables:
    """Tables for ``tokens`` (bytes or None, indexed by id).

    Exactly one of ``ranks`` (tiktoken: a pair merges when its concatenation
    is a token, lowest rank first) and ``merges`` (HuggingFace: listed pairs
    of ids merge, lowest index first; a pair listed twice keeps its last
    index, as HuggingFace's merge map does) is given.  ``whole_any``: a piece
    that equals a token is that token even when BPE would not make it.

    Every byte that occurs in UTF-8 text must be a token (0xC0, 0xC1 and
    0xF5..0xFF never do, and GPT-NeoX's vocabulary lacks them).
    """
    tok_bytes, tok_start = token_arrays(tokens)
    lengths = np.diff(tok_start)
    ids = np.flatnonzero(lengths > 0)
    byte_tok = np.full(256, -1, dtype=np.int32)
    ones = ids[lengths[ids] == 1]
    byte_tok[tok_bytes[tok_start[ones]]] = ones
    missing = np.flatnonzero(byte_tok < 0)
    needed = missing[(missing < 0xC0) | ((missing > 0xC1) & (missing < 0xF5))]
    if needed.size:
        raise VocabularyError(
            f"the vocabulary lacks {needed.size} of the single bytes that occur in UTF-8 text (first: "
            f"{int(needed[0]):#04x}); byte-level BPE needs each of them as a token"
        )
    # The engine's trie over the tokens' bytes (its byte alphabet: byte c is
    # symbol c + 1).
    auto = Automaton.build([tokens[i] for i in ids.tolist()], ids.astype(np.int32), EngineConfig(alphabet="byte"))
    bsym = np.arange(1, 257, dtype=np.int32)
    trans = np.ascontiguousarray(auto.trans, dtype=np.int32)

    if merges is not None:
        mtab = merge_table(np.asarray(merges, dtype=np.int32).reshape(-1, 2))
        rank = np.zeros(0, dtype=np.int32)
    else:
        mtab = P.new_table(0)
        rank = np.asarray(ranks, dtype=np.int32)
    info = splits(tok_bytes, tok_start, byte_tok, rank, mtab, merges is not None)
    lex = np.array(sorted(ids.tolist(), key=tokens.__getitem__), dtype=np.int32)
    return finish_tables(tok_bytes, tok_start, trans, bsym, info, lex, whole_any)


def splits(tok_bytes, tok_start, byte_tok, rank, mtab, use_merges: bool) -> np.ndarray:
    """Every token's split (the ``info`` table), as BPE makes it on the
    token's own bytes: by ``rank`` (tiktoken) or by the merge table
    ``mtab`` (``use_merges``).  ``byte_tok``: the id of each single byte's
    token."""
    lengths = np.diff(tok_start)
    ids = np.flatnonzero(lengths > 0)
    order = ids[np.argsort(lengths[ids], kind="stable")].astype(np.int64)
    info, _ = derive_splits(tok_bytes, tok_start, order, byte_tok, rank, mtab, use_merges,
                            P.new_table(lengths.size))
    return info


def merge_table(merges: np.ndarray) -> np.ndarray:
    """A pairs table ``(a, b) -> index`` of a (m, 2) merge list (the last
    index of a pair listed twice)."""
    mtab = P.new_table(len(merges))
    if len(merges) == 0:  # (a tiktoken model: no kernel to load in a new process)
        return mtab
    _put_all(mtab, merges[:, 0].copy(), merges[:, 1].copy(), np.arange(len(merges), dtype=np.int32))
    return mtab


def finish_tables(tok_bytes, tok_start, trans, bsym, info, lex, whole_any: bool) -> Tables:
    """The model array from the stored parts (linear passes; see the module
    doc), its sections computed in place.  ``lex``: the ids of all tokens
    in byte order (the walk through the double array then follows it
    depth first, reading each node about once).  Raises
    :class:`VocabularyError` naming the first token the double array lacks
    or gives the node of another token, or where ``lex`` is not that
    order."""
    n = tok_start.size - 1
    trans = np.ascontiguousarray(trans, dtype=np.int32)
    n_slots = trans.shape[0]
    n_splits = int(np.count_nonzero(info[:, 2] >= 0))
    fbits = P.filter_bits(n_splits)
    sizes = [2 * n_slots, 4 * n, n, n_slots, 4 * P.table_size(n_splits), 256, (1 << fbits) >> 5, 2048, 2 * n, 65536,
             L.N_PARAMS]
    model = L.allocate(sizes)
    flat = L.section(model, L.TRANS)
    flat[:] = trans.ravel()
    L.section(model, L.INFO)[:] = info.ravel()
    L.section(model, L.BYTESYM)[:] = bsym
    slot = L.section(model, L.SLOT)
    nextp = L.section(model, L.NEXT)
    reach = reachable(info)
    missing = _slots(tok_bytes, tok_start, reach, flat, bsym, lex, slot, nextp)
    if missing >= 0:
        raise VocabularyError(f"the trie lacks token {missing} or gives its node to another token, or the "
                              "token order is not the byte order of all tokens")
    pairs = L.section(model, L.PAIRS)
    pairs[:] = -1
    _put_splits(pairs, info, fbits, L.section(model, L.FILTER))
    _fill_bigrams(info, tok_bytes, tok_start, L.section(model, L.BIGRAM))
    _fill_edges(info, tok_bytes, tok_start, L.section(model, L.EDGE), L.section(model, L.BYTEPRIO))
    bad = int(first_non_monotone(info, reach))
    params = L.section(model, L.PARAMS)
    params[:] = 0
    params[L.P_NTOK] = n
    params[L.P_MONOTONE] = 1 if bad < 0 else 0
    params[L.P_WHOLE_ANY] = 1 if whole_any else 0
    params[L.P_FILTER_BITS] = fbits
    return Tables(model, tok_bytes, tok_start, trans, bsym, info, lex, bad)


@kernel
def _put_all(table, a, b, v):
    for i in range(a.size):
        P.pair_put(table, a[i], b[i], v[i], v[i])


@kernel
def _fill_bigrams(info, tok_bytes, tok_start, bits):
    """Bit ``256 * u + v``: some split has byte ``u`` last on its left and
    ``v`` first on its right (see :mod:`~segkit.presets.bpe.layout`)."""
    for i in range(bits.size):
        bits[i] = 0
    for t in range(info.shape[0]):
        l = info[t, 2]
        if l >= 0:
            u = np.int64(tok_bytes[tok_start[l + 1] - 1])
            v = np.int64(tok_bytes[tok_start[info[t, 3]]])
            b = 256 * u + v
            bits[b >> 5] |= np.int32(1) << np.int32(b & 31)


@kernel
def _fill_edges(info, tok_bytes, tok_start, edge, byteprio):
    """``edge[2t]``: the priority of the first merge on token ``t``'s left
    edge (``2**31 - 1`` for a single byte), ``edge[2t + 1]`` on its right
    edge (-1 for a single byte); ``byteprio[256u + v]``: the priority of
    the merge of bytes ``u`` and ``v`` (``2**31 - 1``: none).  Tokens in
    order of length (a counting sort), so a part is done before its token."""
    n = info.shape[0]
    none = np.int32(2147483647)
    for i in range(byteprio.size):
        byteprio[i] = none
    maxlen = 0
    for t in range(n):
        if info[t, 0] > maxlen:
            maxlen = info[t, 0]
    count = np.zeros(maxlen + 2, np.int64)
    for t in range(n):
        count[info[t, 0] + 1] += 1
    for d in range(maxlen + 1):
        count[d + 1] += count[d]
    order = np.empty(n, np.int64)
    for t in range(n):
        order[count[info[t, 0]]] = t
        count[info[t, 0]] += 1
    for i in range(n):
        t = order[i]
        l = info[t, 2]
        if l < 0:
            edge[2 * t] = none
            edge[2 * t + 1] = -1
            continue
        r = info[t, 3]
        edge[2 * t] = info[t, 1] if info[l, 0] == 1 else edge[2 * l]
        edge[2 * t + 1] = info[t, 1] if info[r, 0] == 1 else edge[2 * r + 1]
        if info[t, 0] == 2:
            a = tok_start[t]
            byteprio[256 * np.int64(tok_bytes[a]) + np.int64(tok_bytes[a + 1])] = info[t, 1]


@kernel
def _put_splits(table, info, filter_bits, filt):
    """Store every split in the split table and set its bit in the filter
    (the bits :func:`~segkit.presets.bpe.pairs.fill_filter` would set, in
    the same pass); the slots of the split AHEAD tokens further are
    prefetched (a table larger than a core's cache, written at random)."""
    for i in range(filt.size):
        filt[i] = 0
    shift = np.uint64(64 - filter_bits)
    mask = table.size // 4 - 1
    n = info.shape[0]
    for t in range(n):
        if t + AHEAD < n:
            prefetch(table, 4 * P.pair_slot(info[t + AHEAD, 2], info[t + AHEAD, 3], mask))
        if info[t, 2] >= 0:
            P.pair_put(table, info[t, 2], info[t, 3], t, info[t, 1])
            P.filter_add(filt, shift, info[t, 2], info[t, 3])


@kernel
def _slots(tok_bytes, tok_start, reach, trans, bsym, lex, slot, nextp):
    """Fill ``slot`` (per slot, the token ending there: its id, or ``-2 -
    id`` when BPE cannot output it) and ``nextp`` (per token, its longest
    proper prefix that BPE can output).

    Walks the tokens in byte order (``lex``), each from the deepest node it
    shares with the token before (a stack of the nodes on the current
    path), with the checks a lookup makes; a prefix comes before the
    tokens it starts, so its slot is known when they need it.  Returns the
    first token it cannot find, that meets another's node, or that breaks
    the order (or repeats), else -1."""
    size = trans.size // 2
    n = tok_start.size - 1
    for i in range(size):
        slot[i] = -1
    for t in range(n):
        nextp[t] = -1
    expected = 0
    for t in range(n):
        if tok_start[t + 1] > tok_start[t]:
            expected += 1
    if lex.size != expected:
        return 0 if n else -1
    maxlen = 0
    for t in range(n):
        if tok_start[t + 1] - tok_start[t] > maxlen:
            maxlen = tok_start[t + 1] - tok_start[t]
    path = np.zeros(maxlen + 1, np.int64)  # node at each depth (path[0]: the root)
    best = np.full(maxlen + 1, -1, np.int64)  # longest output token ending at depth <= d
    prev = -1
    for k in range(lex.size):
        # The token bytes come in byte order, not id order: fetch them ahead.
        if k + 2 * AHEAD < lex.size:
            prefetch(tok_start, lex[k + 2 * AHEAD])
        if k + AHEAD < lex.size:
            u = lex[k + AHEAD]
            if u >= 0 and u < n:
                prefetch(tok_bytes, tok_start[u])
        t = lex[k]
        if t < 0 or t >= n:
            return 0
        a = tok_start[t]
        size_t = tok_start[t + 1] - a
        if size_t == 0:
            return t
        depth = 0
        if prev >= 0:
            pa = tok_start[prev]
            size_p = tok_start[prev + 1] - pa
            while depth < size_p and depth < size_t and tok_bytes[pa + depth] == tok_bytes[a + depth]:
                depth += 1
            # strictly after the token before in byte order (so no repeats)
            if depth == size_t or (depth < size_p and tok_bytes[pa + depth] > tok_bytes[a + depth]):
                return t
        node = path[depth]
        for j in range(depth, size_t):
            s = bsym[tok_bytes[a + j]]
            c = trans[2 * node] + s
            if s <= 0 or c < 0 or c >= size or trans[2 * c + 1] != node:
                return t
            node = c
            path[j + 1] = node
            v = slot[node]
            best[j + 1] = v if v >= 0 else best[j]
        if slot[node] != -1:
            return t
        nextp[t] = best[size_t - 1]
        slot[node] = t if reach[t] else -2 - t
        best[size_t] = t if reach[t] else best[size_t - 1]
        prev = t
    return -1
