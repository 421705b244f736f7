"""Reading word lists and jieba-format dictionaries."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from segkit.presets.base import VocabularyError, check_text, read_utf8_file



def _is_tag(field: str) -> bool:
    # jieba's tag: one or more ASCII lowercase letters.
    return field.isascii() and field.isalpha() and field.islower()


def _is_freq(field: str) -> bool:
    # jieba's frequency: one or more ASCII digits.
    return field.isascii() and field.isdigit()


@lru_cache(maxsize=1)
def _white_space_search():
    import regex

    # The same property as segkit.runtime.unicode.white_space(), which separates words.
    return regex.compile(r"\p{White_Space}").search


def _has_white_space(word: str) -> bool:
    return _white_space_search()(word) is not None


def parse_line(line: str) -> str:
    """The word of one (already stripped, non-empty) dictionary line, read
    as jieba's ``load_userdict`` reads it: the line is ``word``, ``word
    freq``, ``word tag`` or ``word freq tag``, where ``freq`` is ASCII
    digits and ``tag`` ASCII lowercase letters, each after one ASCII space;
    whatever precedes them is the word, spaces included.

    >>> parse_line("Edu Trust认证 2000")
    'Edu Trust认证'
    >>> parse_line("云计算 5 n"), parse_line("创新办 i"), parse_line("台中")
    ('云计算', '创新办', '台中')
    """
    head, sep, last = line.rpartition(" ")
    if sep and head and _is_tag(last):
        line = head
        head, sep, last = line.rpartition(" ")
    if sep and head and _is_freq(last):
        line = head
    return line


#: What jieba strips from both ends of a line (Python's bytes.strip()).
_LINE_STRIP = " \t\r\x0b\x0c"


def read_dictionary(path: str | os.PathLike) -> list[str]:
    """Words of a dictionary file, in file order, without duplicates.

    Lines are read as jieba's ``load_userdict`` reads them (see
    :func:`parse_line`): ``word``, ``word freq``, ``word tag`` or ``word
    freq tag``, the word being everything before the trailing frequency
    (ASCII digits) and tag (ASCII lowercase letters), so a word may contain
    spaces (jieba's own ``test/userdict.txt`` has ``Edu Trust认证 2000``).
    A plain word list is the special case of one field per line.

    Handling of messy files: a UTF-8 byte order mark at the start is
    dropped; ASCII whitespace at both ends of a line (``"\r"`` of
    ``"\r\n"`` endings included) is removed; empty lines are skipped;
    repeated words are kept once.  A word that contains whitespace can never
    match, since whitespace always separates words: it is kept (as jieba
    keeps it) and one :class:`UserWarning` per file names the first such
    line.  A file that is not UTF-8 raises :class:`segkit.VocabularyError`
    naming file and line.
    """
    p = Path(path)
    text = read_utf8_file(p, "dictionary")
    words: dict[str, None] = {}
    spaced: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip(_LINE_STRIP).lstrip("\ufeff")  # jieba drops a BOM on any line
        if not line:
            continue
        word = parse_line(line)
        if _has_white_space(word):
            spaced.append((lineno, word))
        words[word] = None
    if spaced:
        lineno, word = spaced[0]
        parts = word.split()
        last = parts[-1] if parts else ""
        hint = ""
        if any(c.isdigit() for c in last):
            hint = f"; if {last!r} was meant as a frequency, it must be ASCII digits only"
        elif last.isascii() and last.isalpha():
            hint = f"; if {last!r} was meant as a tag, it must be lowercase ASCII letters"
        warnings.warn(
            f"{p}: {len(spaced)} word{'' if len(spaced) == 1 else 's'} containing whitespace, kept as jieba keeps "
            f"them but they can never match (first: line {lineno}, {word!r}{hint})",
            UserWarning,
            stacklevel=3,
        )
    return list(words)


def clean_words(words: Iterable[str], where: str = "dictionary", *, skip_whitespace: bool = False) -> list[str]:
    """Validate an iterable of words: strings; empty ones and repeats are
    dropped.  A word containing whitespace raises ValueError, or with
    ``skip_whitespace`` is left out with a :class:`UserWarning`."""
    if isinstance(words, str):
        raise TypeError(f"{where}: expected an iterable of words, found a single str {words!r:.40}; wrap it in a list")
    out: dict[str, None] = {}
    skipped: list[str] = []
    if not isinstance(words, Iterable):
        raise TypeError(f"{where}: expected an iterable of words, found {type(words).__name__}")
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"{where}: expected words as str, found {type(w).__name__} {w!r:.60} at index {i}")
        if not w:
            continue
        check_text(w, f"{where}: word {i}")  # (a lone surrogate: UTF-8 cannot hold it)
        if _has_white_space(w):
            if not skip_whitespace:
                raise ValueError(
                    f"{where}: word {w!r} contains whitespace, which always separates words, so it could never match"
                )
            skipped.append(w)
            continue
        out[w] = None
    if skipped:
        warnings.warn(
            f"{where}: skipped {len(skipped)} word(s) containing whitespace, which can never match "
            f"(first: {skipped[0]!r})",
            UserWarning,
            stacklevel=3,
        )
    return list(out)
