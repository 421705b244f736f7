"""Reading word lists and jieba-format dictionaries."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from segkit.vocab import VocabularyError

_SPACE = (" ", "\t", "\u3000")


def read_dictionary(path: str | os.PathLike) -> list[str]:
    """Words of a dictionary file, in file order, without duplicates.

    Accepted line formats (jieba's): ``word``, ``word freq`` or
    ``word freq tag``, fields separated by spaces or tabs, ``freq`` a
    non-negative integer.

    Handling of messy files: a UTF-8 byte order mark at the start is
    dropped; ``"\\r\\n"`` endings and leading/trailing spaces are accepted;
    empty lines are skipped; repeated words are kept once.  A line whose
    second field is not an integer raises :class:`segkit.VocabularyError`
    naming file and line (so does a file that is not UTF-8): words cannot
    contain spaces, since whitespace always separates words.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"dictionary file not found: {p}") from None
    except IsADirectoryError:
        raise VocabularyError(f"{p}: is a directory, expected a dictionary file") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise VocabularyError(
            f"{p}: line {line}: not valid UTF-8 (byte {data[e.start]:#04x} at offset {e.start}); "
            "dictionaries must be UTF-8"
        ) from None
    words: dict[str, None] = {}
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.strip(" \t\r\ufeff")
        if not line:
            continue
        fields = line.split()
        if len(fields) > 1 and not fields[1].isdigit():
            raise VocabularyError(
                f"{p}: line {lineno}: expected 'word [freq] [tag]', found {line!r:.80} "
                f"(frequency {fields[1]!r} is not a non-negative integer; words cannot contain spaces)"
            )
        if len(fields) > 3:
            raise VocabularyError(
                f"{p}: line {lineno}: expected 'word [freq] [tag]', found {len(fields)} fields in {line!r:.80}"
            )
        words[fields[0]] = None
    return list(words)


def clean_words(words: Iterable[str], where: str = "dictionary") -> list[str]:
    """Validate an iterable of words: strings without whitespace; empty ones
    and repeats are dropped."""
    out: dict[str, None] = {}
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"{where}: expected words as str, found {type(w).__name__} {w!r:.60} at index {i}")
        if not w:
            continue
        if any(ch.isspace() for ch in w):
            raise ValueError(f"{where}: word {w!r} contains whitespace, which always separates words, so it could never match")
        out[w] = None
    return list(out)
