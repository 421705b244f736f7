"""A tiny, obviously correct BPE encoder: the reference for segkit.BPE.

Start from the single bytes; merge the adjacent pair of lowest rank (the
leftmost of equals); repeat until no adjacent pair has a rank.  Two ways
to rank a pair, as the two families of tokenizers do:

* :func:`encode_by_rank` (tiktoken): a pair has the rank of the token that
  is its concatenation, if there is one; a piece that is itself a token is
  that token without any merging.
* :func:`encode_by_merges` (HuggingFace): a pair has the index of its line
  in the merges list (the last line, if listed twice); with
  ``ignore_merges`` a piece that is a token is that token.
"""

from __future__ import annotations


def _merge_loop(parts: list[bytes], rank_of) -> list[bytes]:
    while True:
        best = None
        for i in range(len(parts) - 1):
            r = rank_of(parts[i], parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return parts
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def encode_by_rank(ranks: dict[bytes, int], piece: bytes) -> list[int]:
    """tiktoken's semantics: ``ranks`` maps token bytes to rank (= id)."""
    if piece in ranks:
        return [ranks[piece]]
    parts = _merge_loop([piece[i : i + 1] for i in range(len(piece))], lambda a, b: ranks.get(a + b))
    return [ranks[p] for p in parts]


def encode_by_merges(vocab: dict[bytes, int], merges: list[tuple[bytes, bytes]], piece: bytes,
                     ignore_merges: bool = False) -> list[int]:
    """HuggingFace's semantics: ``vocab`` maps token bytes to id, ``merges``
    lists pairs of token bytes in priority order."""
    if ignore_merges and piece in vocab:
        return [vocab[piece]]
    index = {}
    for i, pair in enumerate(merges):
        index[pair] = i
    parts = _merge_loop([piece[i : i + 1] for i in range(len(piece))], lambda a, b: index.get((a, b)))
    return [vocab[p] for p in parts]
