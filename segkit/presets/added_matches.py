"""Where a match of an added token counts, and what it takes: HuggingFace's
rules (``AddedVocabulary``'s ``find_matches``), shared by the presets that
read a tokenizer.json's added tokens.

``single_word`` drops a match with a word character right before or after
it; ``lstrip`` / ``rstrip`` make the whitespace before / after a kept match
part of it (never reaching back into the previous match).  Word characters
are Rust ``regex``'s Unicode ``\\w``, whitespace its ``\\s`` (Unicode
``White_Space``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

import numpy as np


@lru_cache(maxsize=1)
def spaces() -> frozenset:
    """Unicode ``White_Space`` characters (Rust's ``\\s``), from the mask the
    pre-tokenizer already built (:func:`segkit.runtime.unicode.white_space`)."""
    from ..runtime.unicode import white_space

    return frozenset(map(chr, np.flatnonzero(white_space()).tolist()))


@lru_cache(maxsize=1)
def word():
    """A word character, as HF's ``single_word`` sees one (``regex`` is
    imported on first use: about 20 ms)."""
    import regex

    return regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")


def find_matches(
    text: str,
    matches: Iterable[tuple[int, int, int]],
    token_of: Callable[[int], object],
    token: Callable[[int, int, int], None],
    plain: Callable[[int, int], None],
) -> None:
    """Apply the rules to ``matches`` (``(start, stop, id)``, leftmost first,
    not overlapping) in ``text``: ``token(id, start, stop)`` for each match
    kept, with its stripped whitespace, and ``plain(start, stop)`` for the
    text between them.  ``token_of(id)`` gives the added token (its
    ``single_word``, ``lstrip`` and ``rstrip``)."""
    n = len(text)
    start_offset = 0
    space = spaces()
    is_word = word().match
    for start, stop, i in matches:
        tok = token_of(i)
        if tok.single_word:
            if start > 0 and is_word(text, start - 1):
                continue
            if stop < n and is_word(text, stop):
                continue
        if tok.lstrip:
            s = start
            while s > 0 and text[s - 1] in space:
                s -= 1
            start = max(s, start_offset)
        if tok.rstrip:
            while stop < n and text[stop] in space:
                stop += 1
        if start_offset < start:
            plain(start_offset, start)
        token(i, start, stop)
        start_offset = stop
    if start_offset < n:
        plain(start_offset, n)
