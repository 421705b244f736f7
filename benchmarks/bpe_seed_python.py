"""The seed's incremental BPE method written plainly in Python (no compilation).

Used by ``bench_train.py`` as the "same algorithm, not compiled" baseline:
pre-tokens are counted once with :mod:`regex` and a ``Counter``; pair counts
are kept up to date through an inverted index pair -> set of words; each step
takes the maximum over all pair counts with Python's ``max`` (ties: greater
byte strings), as the seed does.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict

import regex

from segkit.presets.bpe.pretokenize import GPT2_PATTERN


def train(documents, vocab_size, special_tokens=()):
    """(merges, seconds counting, seconds merging)."""
    t0 = time.perf_counter()
    rx = regex.compile(GPT2_PATTERN)
    split = re.compile("|".join(map(re.escape, sorted(special_tokens, key=len, reverse=True)))) if special_tokens else None
    counts: Counter = Counter()
    for doc in documents:
        for piece in split.split(doc) if split else (doc,):
            counts.update(rx.findall(piece))
    t1 = time.perf_counter()

    vocab = {i: bytes([i]) for i in range(256)}
    for tok in special_tokens:
        vocab[len(vocab)] = tok.encode("utf-8")
    words = {w: list(w.encode("utf-8")) for w in counts}
    pair_counts: defaultdict = defaultdict(int)
    where: defaultdict = defaultdict(set)
    for w, c in counts.items():
        toks = words[w]
        for x, y in zip(toks, toks[1:]):
            pair_counts[(x, y)] += c
            where[(x, y)].add(w)
    merges = []
    while len(vocab) < vocab_size and pair_counts:
        best = max(pair_counts, key=lambda p: (pair_counts[p], vocab[p[0]], vocab[p[1]]))
        a, b = best
        new = len(vocab)
        vocab[new] = vocab[a] + vocab[b]
        merges.append((vocab[a], vocab[b]))
        for w in list(where[best]):
            toks = words[w]
            c = counts[w]
            for x, y in zip(toks, toks[1:]):  # take the word's pairs out ...
                pair_counts[(x, y)] -= c
                if pair_counts[(x, y)] <= 0:
                    del pair_counts[(x, y)]
                    where.pop((x, y), None)
                else:
                    where[(x, y)].discard(w)
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
            for x, y in zip(out, out[1:]):  # ... and the merged word's pairs back in
                pair_counts[(x, y)] += c
                where[(x, y)].add(w)
    t2 = time.perf_counter()
    return merges, t1 - t0, t2 - t1
