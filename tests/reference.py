"""Naive reference implementations: the oracle for segkit's tests.

Everything here is written for clarity, not speed (quadratic algorithms,
Python loops, one character at a time).  It follows the textbook
definitions directly and shares no code with segkit:

* :func:`wordpiece_word` is the original greedy longest-match-first
  WordPiece of BERT's ``WordpieceTokenizer`` on one word;
* :func:`bert_pretokenize` is BERT's basic splitting (Unicode whitespace,
  punctuation, CJK ideographs);
* :func:`wordpiece_text` combines the two and adds character offsets;
* :func:`forward_maxmatch`, :func:`backward_maxmatch` and
  :func:`forward_maxmatch_word` are naive maximum matching over a key -> id
  mapping, with the "char" unknown policy (an unmatched position becomes a
  one-character token) or the "word" policy (any unmatched position makes
  the whole input one unknown token).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import regex

#: CJK ideograph ranges of HuggingFace ``tokenizers`` (inclusive).
HF_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

#: Google BERT's ``_is_chinese_char`` ranges: as above but 0x2B820 for the
#: sixth range.
BERT_CJK = tuple((0x2B820, b) if a == 0x2B920 else (a, b) for a, b in HF_CJK)

_WHITE_SPACE = regex.compile(r"\p{White_Space}")
_UNICODE_PUNCT = regex.compile(r"\p{P}")
_ASCII_PUNCT = ((33, 47), (58, 64), (91, 96), (123, 126))

Span = tuple[str, int, int]


# ----------------------------------------------------------------- WordPiece
def _greedy_spans(word, vocab, suffix_indicator, max_chars):
    """BERT's loop; ``None`` when the word cannot be tokenized."""
    if len(word) > max_chars:
        return None
    spans: list[Span] = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end]
            if start > 0:
                piece = suffix_indicator + piece
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return None
        spans.append((found, start, end))
        start = end
    return spans


def wordpiece_word(
    word: str,
    vocab: Collection[str],
    suffix_indicator: str = "##",
    unk: str = "[UNK]",
    max_chars: int = 100,
) -> list[str]:
    """Greedy longest-match-first WordPiece of one word (BERT's original loop):
    the longest prefix in ``vocab``, then repeatedly the longest
    ``suffix_indicator + piece`` in ``vocab``; any failure, or a word longer
    than ``max_chars`` characters, gives ``[unk]``; an empty word gives []."""
    spans = _greedy_spans(word, vocab, suffix_indicator, max_chars)
    return [unk] if spans is None else [p for p, _, _ in spans]


def wordpiece_word_spans(
    word: str,
    vocab: Collection[str],
    suffix_indicator: str = "##",
    unk: str = "[UNK]",
    max_chars: int = 100,
) -> list[Span]:
    """:func:`wordpiece_word` with (start, end) character offsets in ``word``;
    an unknown word is one token spanning the whole word."""
    spans = _greedy_spans(word, vocab, suffix_indicator, max_chars)
    return [(unk, 0, len(word))] if spans is None else spans


# ---------------------------------------------------------- pre-tokenization
def is_bert_punctuation(ch: str) -> bool:
    """ASCII 33-47, 58-64, 91-96, 123-126, or Unicode general category P*."""
    cp = ord(ch)
    if any(a <= cp <= b for a, b in _ASCII_PUNCT):
        return True
    return _UNICODE_PUNCT.fullmatch(ch) is not None


def is_white_space(ch: str) -> bool:
    """Unicode ``White_Space`` property."""
    return _WHITE_SPACE.fullmatch(ch) is not None


def in_ranges(ch: str, ranges: Sequence[tuple[int, int]]) -> bool:
    return any(a <= ord(ch) <= b for a, b in ranges)


def bert_pretokenize(text: str, cjk_ranges: Sequence[tuple[int, int]] = HF_CJK) -> list[Span]:
    """Split ``text`` into ``(word, start, end)``: whitespace separates words and
    is dropped; each punctuation character and each CJK ideograph (within
    ``cjk_ranges``) is a word of its own."""
    words: list[Span] = []
    start = None
    for i, ch in enumerate(text):
        if is_white_space(ch):
            if start is not None:
                words.append((text[start:i], start, i))
                start = None
        elif is_bert_punctuation(ch) or in_ranges(ch, cjk_ranges):
            if start is not None:
                words.append((text[start:i], start, i))
                start = None
            words.append((ch, i, i + 1))
        elif start is None:
            start = i
    if start is not None:
        words.append((text[start:], start, len(text)))
    return words


def wordpiece_text(
    text: str,
    vocab: Collection[str],
    suffix_indicator: str = "##",
    unk: str = "[UNK]",
    max_chars: int = 100,
    cjk_ranges: Sequence[tuple[int, int]] = HF_CJK,
) -> list[Span]:
    """BERT pre-tokenization then WordPiece: ``(token, start, end)`` with
    character offsets into ``text``."""
    out: list[Span] = []
    for word, ws, _we in bert_pretokenize(text, cjk_ranges):
        for piece, a, b in wordpiece_word_spans(word, vocab, suffix_indicator, unk, max_chars):
            out.append((piece, ws + a, ws + b))
    return out


# ------------------------------------------------------------------ MaxMatch
IdSpan = tuple[int, int, int]


def forward_maxmatch(text: str, keys: Mapping[str, int], char_id: int) -> list[IdSpan]:
    """Forward maximum matching, "char" policy: at each position take the
    longest key starting there; if there is none, a one-character token
    with ``char_id``.  Returns ``(id, start, end)``."""
    out: list[IdSpan] = []
    i = 0
    while i < len(text):
        for j in range(len(text), i, -1):
            if text[i:j] in keys:
                out.append((keys[text[i:j]], i, j))
                i = j
                break
        else:
            out.append((char_id, i, i + 1))
            i += 1
    return out


def backward_maxmatch(text: str, keys: Mapping[str, int], char_id: int) -> list[IdSpan]:
    """Backward maximum matching, "char" policy: from the end, take the
    longest key ending at the current position; if none, a one-character
    token.  Returned in text order."""
    out: list[IdSpan] = []
    j = len(text)
    while j > 0:
        for i in range(0, j):
            if text[i:j] in keys:
                out.append((keys[text[i:j]], i, j))
                j = i
                break
        else:
            out.append((char_id, j - 1, j))
            j -= 1
    out.reverse()
    return out


def forward_maxmatch_word(
    text: str, keys: Mapping[str, int], unk_id: int, max_chars: int | None = None
) -> list[IdSpan]:
    """Forward maximum matching, "word" policy: if some position has no key
    starting there (or the text is longer than ``max_chars``), the result is
    one ``unk_id`` token spanning all of ``text``.  Empty text -> []."""
    if not text:
        return []
    if max_chars is not None and len(text) > max_chars:
        return [(unk_id, 0, len(text))]
    out: list[IdSpan] = []
    i = 0
    while i < len(text):
        for j in range(len(text), i, -1):
            if text[i:j] in keys:
                out.append((keys[text[i:j]], i, j))
                i = j
                break
        else:
            return [(unk_id, 0, len(text))]
    return out


def split_by_classes(text: str, space: Collection[str], isolated: Collection[str]) -> list[Span]:
    """Generic pre-tokenization: characters in ``space`` separate words and are
    dropped, characters in ``isolated`` are words of their own."""
    words: list[Span] = []
    start = None
    for i, ch in enumerate(text):
        if ch in space or ch in isolated:
            if start is not None:
                words.append((text[start:i], start, i))
                start = None
            if ch in isolated:
                words.append((ch, i, i + 1))
        elif start is None:
            start = i
    if start is not None:
        words.append((text[start:], start, len(text)))
    return words


# ------------------------------------------------- failure links and pops
def trie_nodes(vocab: Collection[str], suffix_indicator: str) -> tuple[set[str], set[str]]:
    """Strings of the nodes of segkit's two tries: every prefix of every
    token (word-start trie; tokens are inserted literally), and every
    prefix of every continuation token with the indicator stripped
    (continuation trie).  Both include the root ``""``."""
    sfx = suffix_indicator
    word = {t[:j] for t in vocab for j in range(len(t) + 1)}
    conts = [t[len(sfx):] for t in vocab if len(t) > len(sfx) and t.startswith(sfx)]
    cont = {c[:j] for c in conts for j in range(len(c) + 1)} | {""}
    return word | {""}, cont


def naive_failure(
    chi: str, continuation: bool, vocab: Collection[str], suffix_indicator: str, cont_nodes: Collection[str]
) -> tuple[str | None, list[tuple[str, int]]]:
    """Definition 1 of Song et al. (2021), literally: pop longest-matching
    tokens off the front of ``chi`` (the first from the word-start
    vocabulary unless ``continuation``, later ones as ``suffix_indicator +
    piece``) until what is left is a node of the continuation trie.

    Returns ``(rest, pops)`` with pops as ``(token, characters covered)``;
    ``(None, [])`` when no non-empty list of pops exists (f(v) is null).
    """
    pops: list[tuple[str, int]] = []
    rest = chi
    first = not continuation
    while True:
        for j in range(len(rest), 0, -1):
            token = rest[:j] if first else suffix_indicator + rest[:j]
            if token in vocab:
                break
        else:
            return None, []
        pops.append((token, j))
        rest = rest[j:]
        first = False
        if rest in cont_nodes:
            return rest, pops


# ------------------------------------------------------------ literal search
def leftmost_longest(text: str, strings: Collection[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping occurrences of ``strings`` in ``text``, left to right:
    at each position the longest string that starts there, then on after
    it (the matches of a regex alternation of the strings, longest first)."""
    out = []
    i = 0
    while i < len(text):
        found = max((s for s in strings if text.startswith(s, i)), key=len, default=None)
        if found:
            out.append((i, i + len(found), found))
            i += len(found)
        else:
            i += 1
    return out
