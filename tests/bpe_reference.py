"""A tiny, obviously correct byte-level BPE trainer: the reference for
:func:`segkit.train_bpe`.

It pre-tokenizes with the :mod:`regex` package, then recounts every pair of
every word after every merge (no incremental bookkeeping at all).
"""

from __future__ import annotations

import re
from collections import Counter

import regex

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def pretoken_counts(documents, special_tokens=(), pattern=GPT2_PATTERN) -> Counter:
    """Counter of pre-token bytes over the documents, special tokens removed."""
    counts: Counter = Counter()
    splitter = None
    if special_tokens:
        alternatives = sorted(special_tokens, key=len, reverse=True)  # longest first at a position
        splitter = re.compile("|".join(re.escape(t) for t in alternatives))
    for doc in documents:
        pieces = splitter.split(doc) if splitter else [doc]
        for piece in pieces:
            for m in regex.finditer(pattern, piece):
                counts[m.group().encode("utf-8")] += 1
    return counts


def train_bpe_reference(documents, vocab_size, special_tokens=(), pattern=GPT2_PATTERN):
    """(vocab, merges) exactly as the spec says, slowly."""
    vocab = {i: bytes([i]) for i in range(256)}
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    counts = pretoken_counts(documents, special_tokens, pattern)
    words = {w: list(w) for w in counts}  # bytes -> list of token ids
    merges = []
    while len(vocab) < vocab_size:
        pairs: Counter = Counter()
        for w, c in counts.items():
            toks = words[w]
            for x, y in zip(toks, toks[1:]):
                pairs[(x, y)] += c
        if not pairs:
            break
        # most frequent; ties: greater (bytes, bytes); then (same bytes from two merges) smaller ids
        a, b = max(pairs, key=lambda p: (pairs[p], vocab[p[0]], vocab[p[1]], -p[0], -p[1]))
        new = len(vocab)
        vocab[new] = vocab[a] + vocab[b]
        merges.append((vocab[a], vocab[b]))
        for w, toks in words.items():
            out = []
            i = 0
            while i < len(toks):
                if i + 1 < len(toks) and toks[i] == a and toks[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(toks[i])
                    i += 1
            words[w] = out
    return vocab, merges
