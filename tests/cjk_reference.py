"""Naive, obviously-correct Chinese MaxMatch, for checking segkit_cjk.

Written from the specification only (not from segkit_cjk's code):

* The text is cut at Unicode ``White_Space`` characters (the fixed list in
  Unicode's ``PropList.txt``, hard-coded below); whitespace is never part
  of a token.
* Forward MaxMatch: at each position take the longest dictionary word that
  starts there (and stays inside the whitespace-free stretch), else one
  character.  Backward MaxMatch: the same from the end, with the longest
  dictionary word that *ends* at the position.
* Bidirectional: cut both results at every position where both have a
  word boundary; in each stretch between two such positions keep the
  result with fewer words, then the one with fewer one-character words,
  then the backward one.
* Alnum runs (applied to the chosen result): adjacent one-character tokens
  that are Latin letters or digits (ASCII or full-width) form one token; a
  point (``.`` / ``．``) joins the run when it follows a digit and a
  one-character digit token follows it directly; a percent sign (``%`` /
  ``％``) right after a digit joins the run and ends it.

Tokens are ``(start, end)`` character offsets (end exclusive).  The speed
comes only from a window of the longest word length (per first / last
character) and a set lookup, so the SIGHAN test sets run in seconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Span = tuple[int, int]

#: Unicode White_Space (PropList.txt): stable since Unicode 6.3.
WHITE_SPACE = frozenset(
    chr(c)
    for c in [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)

DIGITS = frozenset("0123456789") | frozenset(chr(0xFF10 + i) for i in range(10))
LETTERS = (
    frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    | frozenset(chr(0xFF21 + i) for i in range(26))
    | frozenset(chr(0xFF41 + i) for i in range(26))
)
ALNUM = DIGITS | LETTERS
POINTS = frozenset(".\uff0e")
PERCENTS = frozenset("%\uff05")


class Lexicon:
    """A set of words plus, per character, the longest word starting /
    ending with it (only to bound the search window)."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = {w for w in words if w}
        self.longest_from: dict[str, int] = {}
        self.longest_to: dict[str, int] = {}
        for w in self.words:
            n = len(w)
            if n > self.longest_from.get(w[0], 0):
                self.longest_from[w[0]] = n
            if n > self.longest_to.get(w[-1], 0):
                self.longest_to[w[-1]] = n

    def __contains__(self, word: str) -> bool:
        return word in self.words


def _lexicon(words: Lexicon | Iterable[str]) -> Lexicon:
    return words if isinstance(words, Lexicon) else Lexicon(words)


def stretches(text: str) -> list[Span]:
    """Maximal runs of non-whitespace characters."""
    out = []
    start = None
    for i, c in enumerate(text):
        if c in WHITE_SPACE:
            if start is not None:
                out.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append((start, len(text)))
    return out


def forward(text: str, words: Lexicon | Iterable[str]) -> list[Span]:
    """Forward MaxMatch spans."""
    lex = _lexicon(words)
    out: list[Span] = []
    for a, b in stretches(text):
        i = a
        while i < b:
            end = i + 1  # one character when no word starts here
            longest = min(lex.longest_from.get(text[i], 0), b - i)
            for j in range(i + longest, i + 1, -1):  # longest candidate first
                if text[i:j] in lex:
                    end = j
                    break
            out.append((i, end))
            i = end
    return out


def backward(text: str, words: Lexicon | Iterable[str]) -> list[Span]:
    """Backward MaxMatch spans (in text order)."""
    lex = _lexicon(words)
    out: list[Span] = []
    for a, b in reversed(stretches(text)):
        i = b
        while i > a:
            start = i - 1
            longest = min(lex.longest_to.get(text[i - 1], 0), i - a)
            for j in range(i - longest, i - 1):  # longest candidate first
                if text[j:i] in lex:
                    start = j
                    break
            out.append((start, i))
            i = start
    out.reverse()
    return out


def _groups(spans: list[Span], cuts: set[int]) -> list[list[Span]]:
    groups: list[list[Span]] = []
    current: list[Span] = []
    for sp in spans:
        current.append(sp)
        if sp[1] in cuts:
            groups.append(current)
            current = []
    assert not current, "the last token always ends at a common boundary"
    return groups


def bidirectional(fwd: list[Span], bwd: list[Span]) -> list[Span]:
    """Choose, per stretch between common boundaries, between the forward
    and the backward spans (fewer words, then fewer single characters,
    then backward)."""
    common = {e for _, e in fwd} & {e for _, e in bwd}
    gf, gb = _groups(fwd, common), _groups(bwd, common)
    assert len(gf) == len(gb)
    out: list[Span] = []
    for f, b in zip(gf, gb):
        kf = (len(f), sum(1 for s, e in f if e - s == 1))
        kb = (len(b), sum(1 for s, e in b if e - s == 1))
        out.extend(f if kf < kb else b)
    return out


def merge_alnum_runs(text: str, spans: list[Span]) -> list[Span]:
    """Join one-character Latin letter / digit tokens into runs (with
    decimal points between digits and a final percent sign)."""
    out: list[Span] = []
    i, n = 0, len(spans)
    while i < n:
        s, e = spans[i]
        if e - s != 1 or text[s] not in ALNUM:
            out.append((s, e))
            i += 1
            continue
        end = e
        j = i + 1
        while j < n:
            s2, e2 = spans[j]
            if s2 != end or e2 - s2 != 1:
                break
            c = text[s2]
            if c in ALNUM:
                end, j = e2, j + 1
                continue
            if (
                c in POINTS
                and text[end - 1] in DIGITS
                and j + 1 < n
                and spans[j + 1] == (e2, e2 + 1)
                and text[e2] in DIGITS
            ):
                end, j = e2, j + 1
                continue
            if c in PERCENTS and text[end - 1] in DIGITS:
                end, j = e2, j + 1
            break
        out.append((s, end))
        i = j
    return out


def segment(
    text: str, words: Lexicon | Iterable[str], mode: str = "forward", alnum_runs: bool = True
) -> list[Span]:
    """Spans of ``text`` as ``ChineseMaxMatch(words, mode=mode, alnum_runs=alnum_runs)`` should give them."""
    lex = _lexicon(words)
    if mode == "forward":
        spans = forward(text, lex)
    elif mode == "backward":
        spans = backward(text, lex)
    elif mode == "bidirectional":
        spans = bidirectional(forward(text, lex), backward(text, lex))
    else:
        raise ValueError(mode)
    if alnum_runs:
        spans = merge_alnum_runs(text, spans)
    return spans


def cut(text: str, words: Lexicon | Iterable[str], mode: str = "forward", alnum_runs: bool = True) -> list[str]:
    """Words of ``text`` (see :func:`segment`)."""
    return [text[s:e] for s, e in segment(text, words, mode, alnum_runs)]


def tokenize(
    text: str, words: Lexicon | Iterable[str], mode: str = "forward", alnum_runs: bool = True
) -> list[tuple[str, int, int]]:
    """``(word, start, end)`` triples of ``text`` (see :func:`segment`)."""
    return [(text[s:e], s, e) for s, e in segment(text, words, mode, alnum_runs)]


# ------------------------------------------------------------- full mode
# jieba's full mode (jieba 0.42.1, ``cut(text, cut_all=True)``), written
# from its description: blocks of BLOCK_CHARS (jieba's ``re_han_default``);
# in a block, per position the dictionary words starting there (the
# character alone if none); between blocks, whitespace (Python's ``\s``,
# "\r\n" as one token) and runs of other characters.  See full_mode().

BLOCK_CHARS = re.compile("([\u4E00-\u9FD5a-zA-Z0-9+#&._%\\-]+)")
SPACE_SPLIT = re.compile("(\r\n|\\s)")


def _is_eng(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def full_mode(text: str, words: Iterable[str], keep_space: bool = True) -> list[str]:
    """jieba's full-mode words of ``text`` with the dictionary ``words``,
    without jieba's empty strings (and without whitespace tokens unless
    ``keep_space``)."""
    vocab = set(words)
    out: list[str] = []
    for block in BLOCK_CHARS.split(text):
        if not block:
            continue
        if BLOCK_CHARS.fullmatch(block):
            out.extend(_full_block(block, vocab))
            continue
        for piece in SPACE_SPLIT.split(block):
            if piece and (keep_space or not SPACE_SPLIT.fullmatch(piece)):
                out.append(piece)
    return out


def _full_block(block: str, vocab: set[str]) -> list[str]:
    n = len(block)
    longest = max(map(len, vocab), default=1)
    # every word starting at k (inclusive end j), the character alone if none
    dag = [[j for j in range(k, min(n, k + longest)) if block[k : j + 1] in vocab] or [k] for k in range(n)]
    out: list[str] = []
    covered = -1  # the last position some token covers
    glue = None  # ASCII letters and digits glued together (jieba's eng_buf)
    for k, ends in enumerate(dag):
        if glue is not None and not _is_eng(block[k]):
            out.append(glue)
            glue = None
        if len(ends) == 1 and k > covered:
            word = block[k : ends[0] + 1]
            if _is_eng(word[0]):
                glue = word if glue is None else glue + word
            else:
                out.append(word)
            covered = ends[0]
        else:
            for j in ends:
                if j > k:
                    out.append(block[k : j + 1])
                    covered = j
    if glue is not None:
        out.append(glue)
    return out
