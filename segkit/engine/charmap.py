"""Code point -> (symbol, boundary class) table, in one flat int32 array.

The automaton's alphabet is the set of code points that occur in vocabulary
keys; each gets a dense *symbol* id ``1..K`` (``0`` means "in no key").  The
preset additionally gives every code point a *boundary class* that drives
pre-tokenization inside the compiled pass:

``WORD`` (0)
    part of a word;
``SPACE`` (1)
    separates words and is dropped;
``ISOLATED`` (2)
    a word on its own (BERT's punctuation and CJK ideographs).

Both are packed into one value ``symbol << 2 | class`` and stored in a
two-level table: ``table[cp >> 8]`` is the offset of a 256-entry block,
``table[offset + (cp & 255)]`` the value.  Identical blocks are shared, so
the table for a 120k-token vocabulary is a few hundred KiB instead of the
4.4 MiB of a flat array over all of Unicode.
"""

from __future__ import annotations

import numpy as np

WORD = 0
SPACE = 1
ISOLATED = 2

MAX_CODE_POINT = 0x10FFFF
_N_PAGES = (MAX_CODE_POINT + 1) >> 8


def build_charmap(alphabet: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Pack symbols and boundary classes into the two-level lookup table.

    Parameters
    ----------
    alphabet
        Code points in symbol order: ``alphabet[k]`` gets symbol ``k + 1``.
    classes
        uint8 array of length ``0x110000`` with the boundary class of every
        code point.

    Returns
    -------
    numpy.ndarray
        int32 table; ``lookup(table, cp)`` gives ``symbol << 2 | class``.
    """
    flat = classes.astype(np.int32, copy=True)
    flat[alphabet] |= np.arange(1, len(alphabet) + 1, dtype=np.int32) << 2
    return two_level(flat)


def two_level(flat: np.ndarray) -> np.ndarray:
    """Pack an int32 value per code point (length 0x110000) into a two-level
    table: ``table[table[cp >> 8] + (cp & 255)]`` is ``flat[cp]``, identical
    256-entry pages stored once."""
    pages = np.ascontiguousarray(flat, dtype=np.int32).reshape(_N_PAGES, 256)
    blocks: dict[bytes, int] = {}
    page_block = np.empty(_N_PAGES, dtype=np.int32)
    zero = bytes(1024)
    used = pages.any(axis=1).tolist()  # most pages are all zero: no bytes made for them
    for i, nonzero in enumerate(used):
        page_block[i] = blocks.setdefault(pages[i].tobytes() if nonzero else zero, len(blocks))
    table = np.empty(_N_PAGES + 256 * len(blocks), dtype=np.int32)
    table[:_N_PAGES] = _N_PAGES + page_block * 256
    table[_N_PAGES:] = np.frombuffer(b"".join(blocks), dtype=np.int32)
    return table


def lookup(table: np.ndarray, cps: np.ndarray) -> np.ndarray:
    """Vectorized lookup (for building and tests; kernels inline it)."""
    cps = np.asarray(cps, dtype=np.int64)
    return table[table[cps >> 8] + (cps & 255)]
