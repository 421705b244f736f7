"""A tiny, obviously correct WordPiece trainer to check the compiled one.

Plain Python, quadratic: after every merge all pair counts are recounted
from scratch.  The rules (see segkit.training.wordpiece):

* words: the text normalized character by character with BERT's rewrite
  table, split on SPACE characters, each ISOLATED character a word;
* initial vocabulary: special tokens, alphabet in code point order (the
  ``limit_alphabet`` most frequent, ties to the smaller code point), then
  ``prefix + char`` for every alphabet char seen after a word's first
  position, in code point order;
* merge the pair with the highest count (ties: smaller first id, then
  smaller second id) in every word; the result's string is the first
  token followed by the second without a leading prefix; stop at
  ``vocab_size`` distinct tokens or when the best count is below
  ``max(1, min_frequency)``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from segkit.engine.charmap import ISOLATED, SPACE
from segkit.presets.wordpiece.normalization import bert_rewrite_table
from segkit.presets.wordpiece.pretokenize import bert_classes


def _normalize_char(c: int, table, pool) -> list[int]:
    v = int(table[table[c >> 8] + (c & 255)])
    if v == 0:
        return [c]
    if v == -1:
        return []
    return [int(x) for x in pool[v + 1 : v + 1 + pool[v]]]


def reference_words(texts, lowercase: bool) -> Counter:
    table, pool = bert_rewrite_table(True, lowercase, lowercase, "hf")
    classes = bert_classes("hf", "hf")
    counts: Counter = Counter()
    for text in texts:
        word: list[str] = []
        for ch in text:
            for c in _normalize_char(ord(ch), table, pool):
                cl = classes[c]
                if cl == SPACE or cl == ISOLATED:
                    if word:
                        counts["".join(word)] += 1
                        word = []
                    if cl == ISOLATED:
                        counts[chr(c)] += 1
                else:
                    word.append(chr(c))
        if word:
            counts["".join(word)] += 1
    return counts


def reference_train(word_counts: Counter, vocab_size, specials, min_frequency=0, limit_alphabet=None, prefix="##"):
    tokens = list(specials)
    ids = {t: i for i, t in enumerate(tokens)}
    freq: Counter = Counter()
    for w, n in word_counts.items():
        for ch in w:
            freq[ch] += n
    alphabet = sorted(freq, key=lambda ch: (-freq[ch], ord(ch)))
    if limit_alphabet is not None:
        alphabet = alphabet[:limit_alphabet]
    alphabet = sorted(alphabet)
    for ch in alphabet:
        if ch not in ids:
            ids[ch] = len(tokens)
            tokens.append(ch)
    kept = set(alphabet)
    later = sorted({ch for w in word_counts for ch in w[1:] if ch in kept})
    for ch in later:
        if prefix + ch not in ids:
            ids[prefix + ch] = len(tokens)
            tokens.append(prefix + ch)
    if len(tokens) > vocab_size:
        raise ValueError("vocab_size too small")
    words = []
    for w, n in word_counts.items():
        syms = [ids[ch] if i == 0 else ids[prefix + ch] for i, ch in enumerate(w) if ch in kept]
        words.append((syms, n))
    while len(tokens) < vocab_size:
        pairs: Counter = Counter()
        for syms, n in words:
            for x, y in zip(syms, syms[1:]):
                pairs[x, y] += n
        if not pairs:
            break
        (a, b), c = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if c < max(1, min_frequency):
            break
        sb = tokens[b]
        if prefix and sb.startswith(prefix):
            sb = sb[len(prefix) :]
        new = tokens[a] + sb
        if new not in ids:
            ids[new] = len(tokens)
            tokens.append(new)
        t = ids[new]
        for k, (syms, n) in enumerate(words):
            out = []
            i = 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(t)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[k] = (out, n)
    return tokens


def word_arrays(counts: Counter):
    """(code points, starts, counts) as segkit's word counter returns them."""
    words = list(counts)
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in words], out=starts[1:])
    cps = np.array([ord(ch) for w in words for ch in w], dtype=np.int32)
    return cps, starts, np.array([counts[w] for w in words], dtype=np.int64)
