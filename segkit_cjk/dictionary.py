"""Reading word lists and jieba-format dictionaries."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from segkit.vocab import VocabularyError, read_utf8_file



def _is_tag(field: str) -> bool:
    return field.isascii() and field.isalpha()


def _has_white_space(word: str) -> bool:
    from segkit.unicode import white_space

    ws = white_space()
    return any(ws[ord(ch)] for ch in word)


def read_dictionary(path: str | os.PathLike) -> list[str]:
    """Words of a dictionary file, in file order, without duplicates.

    Accepted line formats (jieba's): ``word``, ``word freq``, ``word tag``
    or ``word freq tag``; fields are separated by ASCII spaces or tabs,
    ``freq`` is a non-negative integer and ``tag`` a run of ASCII letters.

    Handling of messy files: a UTF-8 byte order mark at the start is
    dropped; ``"\r\n"`` endings and leading/trailing spaces are accepted;
    empty lines are skipped; repeated words are kept once.  A word that
    contains other whitespace (e.g. U+3000) could never match, since
    whitespace always separates words: such lines are skipped with a
    :class:`UserWarning` naming the file and the first such line.  A line
    that does not fit the format (a non-numeric frequency, too many fields)
    raises :class:`segkit.VocabularyError` naming file and line, as does a
    file that is not UTF-8.
    """
    p = Path(path)
    text = read_utf8_file(p, "dictionary")
    words: dict[str, None] = {}
    skipped: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip(" \t\r")
        if not line:
            continue
        fields = [f for f in line.replace("\t", " ").split(" ") if f]  # ASCII separators only
        if len(fields) == 2 and not (fields[1].isdigit() or _is_tag(fields[1])):
            raise VocabularyError(
                f"{p}: line {lineno}: expected 'word [freq] [tag]', found {line!r:.80} "
                f"({fields[1]!r} is neither a frequency (integer) nor a tag (letters); words cannot contain spaces)"
            )
        if len(fields) == 3 and not (fields[1].isdigit() and _is_tag(fields[2])):
            raise VocabularyError(
                f"{p}: line {lineno}: expected 'word freq tag', found {line!r:.80} "
                f"(frequency {fields[1]!r} must be an integer, tag {fields[2]!r} letters)"
            )
        if len(fields) > 3:
            raise VocabularyError(
                f"{p}: line {lineno}: expected 'word [freq] [tag]', found {len(fields)} fields in {line!r:.80}"
            )
        word = fields[0]
        if _has_white_space(word):
            skipped.append((lineno, word))
            continue
        words[word] = None
    if skipped:
        lineno, word = skipped[0]
        warnings.warn(
            f"{p}: skipped {len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'} containing whitespace, "
            f"which can never match (first: line {lineno}, {word!r})",
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
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"{where}: expected words as str, found {type(w).__name__} {w!r:.60} at index {i}")
        if not w:
            continue
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
