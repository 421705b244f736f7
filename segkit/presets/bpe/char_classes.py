"""The character classes of the tiktoken pre-tokenizers, in one small table.

GPT-2's, cl100k's and o200k's patterns test a character only against
``\\p{L}``, ``\\p{N}``, ``\\s``, o200k's case classes
(``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]`` and ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``)
and ``\\p{M}``, plus a few ASCII characters the matchers test by value.
These sets are unions of seven disjoint classes; every code point gets one
code (:data:`OTHER` ... :data:`LETTER_OTHER`), read from the installed
:mod:`regex` package, or as the reference engine of a file kind sees them
(:func:`class_table`'s ``flavour``: HF tokenizers' Oniguruma for
tokenizer.json files, tiktoken's Rust regex crate for tiktoken files).

Codes are chosen so that ``code & 3`` is the *group* GPT-2 and cl100k see:
0 other, 1 letter (``\\p{L}``), 2 number (``\\p{N}``), 3 white space
(``\\s``); a mark is "other" to them.  o200k's case classes are bit masks
over codes (:data:`UPPER_BITS`, :data:`LOWER_BITS`).

The table is two-level (:func:`class_table`): ``table[cp >> 8]`` is the
block of the code point's 256-character page, and
``table[PAGES + 256 * block + (cp & 255)]`` its code.  Identical pages share
a block (143 blocks for Unicode 16), so the table is about 41 KB instead of
1.1 MB; page 0 is block 0, so a code point below 256 needs one read.
Building it scans all of Unicode with :mod:`regex` once per process
(about 50 ms; see ``benchmarks/bench_pretokenize.py``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from ...runtime.jit import kernel

N_CODE_POINTS = 0x110000
#: Pages of 256 code points; the first PAGES entries of a table are blocks.
PAGES = N_CODE_POINTS >> 8

OTHER = 0  #: neither a letter, a number, white space nor a mark
LETTER_UPPER = 1  #: ``\p{Lu}`` or ``\p{Lt}``
NUMBER = 2  #: ``\p{N}``
SPACE = 3  #: ``\s``
MARK = 4  #: ``\p{M}`` (not a letter: "other" to GPT-2 and cl100k)
LETTER_LOWER = 5  #: ``\p{Ll}``
LETTER_OTHER = 9  #: ``\p{Lm}`` or ``\p{Lo}``

GROUP_MASK = 3
G_OTHER = 0
G_LETTER = 1
G_NUMBER = 2
G_SPACE = 3

#: codes in o200k's ``[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]``: ``(UPPER_BITS >> code) & 1``
UPPER_BITS = (1 << LETTER_UPPER) | (1 << LETTER_OTHER) | (1 << MARK)
#: codes in o200k's ``[\p{Ll}\p{Lm}\p{Lo}\p{M}]``
LOWER_BITS = (1 << LETTER_LOWER) | (1 << LETTER_OTHER) | (1 << MARK)

def all_code_points() -> str:
    """Every code point 0..0x10FFFF as one string (surrogates included)."""
    return np.arange(N_CODE_POINTS, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def _fill(flat: np.ndarray, rx, text: str, code: int) -> np.ndarray:
    """Set ``flat`` to ``code`` on every run ``rx`` finds in ``text``; return the runs."""
    spans = [m.span() for m in rx.finditer(text)]
    for start, end in spans:
        flat[start:end] = code
    return np.array(spans, dtype=np.int64).reshape(-1, 2)


def flat_classes() -> np.ndarray:
    """The class code of every code point (uint8, length 0x110000), from :mod:`regex`.

    Each scan looks for runs of one property (``\\p{L}+``, ``\\p{N}+``,
    ``\\p{M}+``, ``\\s+``; :mod:`regex` scans a single property several times
    faster than a set of them); letters are then split into case classes by
    scanning a string of the letters alone.
    """
    import regex  # only building the table needs it

    text = all_code_points()
    flat = np.zeros(N_CODE_POINTS, dtype=np.uint8)
    for code, prop in ((NUMBER, r"\p{N}+"), (MARK, r"\p{M}+"), (SPACE, r"\s+")):
        _fill(flat, regex.compile(prop), text, code)
    runs = _fill(flat, regex.compile(r"\p{L}+"), text, LETTER_OTHER)  # \p{Lm} or \p{Lo}: the letters left
    cps = np.concatenate([np.arange(start, end, dtype=np.uint32) for start, end in runs])
    letters = cps.tobytes().decode("utf-32-le")
    codes = np.full(cps.size, LETTER_OTHER, dtype=np.uint8)
    for code, prop in ((LETTER_UPPER, r"\p{Lu}+"), (LETTER_UPPER, r"\p{Lt}+"), (LETTER_LOWER, r"\p{Ll}+")):
        _fill(codes, regex.compile(prop), letters, code)
    flat[cps] = codes
    return flat


def two_level(flat: np.ndarray) -> np.ndarray:
    """Pack uint8 codes per code point into the two-level table (see the module docstring)."""
    pages = np.ascontiguousarray(flat, dtype=np.uint8).reshape(PAGES, 256)
    blocks: dict[bytes, int] = {}
    page_block = np.empty(PAGES, dtype=np.int64)
    for i, raw in enumerate(map(bytes, pages)):
        page_block[i] = blocks.setdefault(raw, len(blocks))
    if len(blocks) > 256:  # pragma: no cover - would need a wider page index
        raise RuntimeError(f"{len(blocks)} distinct pages of character classes; the table holds at most 256")
    table = np.empty(PAGES + 256 * len(blocks), dtype=np.uint8)
    table[:PAGES] = page_block
    table[PAGES:] = np.frombuffer(b"".join(blocks), dtype=np.uint8)
    table.setflags(write=False)
    return table


def flavour_classes(flavour: str) -> np.ndarray:
    """:func:`flat_classes` as the reference engine of ``flavour`` sees
    them (``"onig"``: HF tokenizers, ``"rust"``: tiktoken; see
    :mod:`segkit.runtime.unicode_flavours`): the measured differences
    from :mod:`regex` applied to the codes."""
    from ...runtime.unicode_flavours import check_flavour, remap, table

    flat = flat_classes()
    if check_flavour(flavour) == "regex":
        return flat
    t = table(flavour)
    used = (r"\p{L}", r"\p{N}", r"\p{M}", r"\s", r"\p{Lu}", r"\p{Lt}", r"\p{Ll}", r"\p{Lm}", r"\p{Lo}")
    flips = [t.items[k] for k in used if k in t.items and t.items[k].size]
    if flips:  # pragma: no cover - not so for the stored tables (tests/test_unicode_flavours.py)
        raise RuntimeError(f"the {flavour} tables differ from regex's beyond the model for the classes of "
                           "the compiled matchers: they need building from the items")
    return remap(flat, flavour)


@lru_cache(maxsize=None)
def class_table(flavour: str = "regex") -> np.ndarray:
    """The two-level class table of this process's :mod:`regex` (built once,
    read-only), or of HF tokenizers' Oniguruma (``flavour="onig"``) or
    tiktoken's Rust regex crate (``"rust"``).

    >>> t = class_table()
    >>> [int(classes_of(t, ord(c))) for c in "aA1 \\u0301!"]
    [5, 1, 2, 3, 4, 0]
    >>> int(classes_of(t, 0x0558)), int(classes_of(class_table("onig"), 0x0558))  # a letter to regex, not to Oniguruma
    (9, 0)
    """
    return two_level(flavour_classes(flavour))


def classes_of(table: np.ndarray, cps) -> np.ndarray:
    """Class codes of code points (vectorized; for tests and tools)."""
    cps = np.asarray(cps, dtype=np.int64)
    return table[PAGES + (table[cps >> 8].astype(np.int64) << 8) + (cps & 255)]


@kernel
def char_class(table, c):
    """Class code of code point ``c`` (0 <= c <= 0x10FFFF)."""
    if c < 256:
        return np.int64(table[PAGES + c])
    return np.int64(table[PAGES + (np.int64(table[c >> 8]) << 8) + (c & 255)])
