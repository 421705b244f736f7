"""Unicode character classes over all code points, from the ``regex`` tables.

Each function returns a boolean numpy array of length ``0x110000``.  They are
computed once per process (a few milliseconds each) and cached.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

N_CODE_POINTS = 0x110000


@lru_cache(maxsize=1)
def _all_code_points() -> str:
    """Every code point, in order, as one str.  The surrogates are joined in
    with ``chr``: decoding them with ``surrogatepass`` calls the error
    handler once per surrogate (2,048 times), which took 30 times as long
    as decoding the rest."""
    def utf32(a: int, b: int) -> str:
        return np.arange(a, b, dtype=np.uint32).tobytes().decode("utf-32-le")

    return utf32(0, 0xD800) + "".join(map(chr, range(0xD800, 0xE000))) + utf32(0xE000, N_CODE_POINTS)


@lru_cache(maxsize=None)
def property_mask(pattern: str) -> np.ndarray:
    """Code points matched by a one-character ``regex`` class, e.g. ``r"\\p{P}"``."""
    mask = matched_in(pattern, _all_code_points())
    mask.setflags(write=False)
    return mask


#: How many scans :func:`scanned` keeps, packed to a bit per code point
#: (139 kB each).
SCANS_KEPT = 64
_SCANS: dict[str, np.ndarray] = {}


def scanned(pattern: str) -> np.ndarray:
    """``property_mask(pattern)`` (read-only) for the atoms
    of any pattern a user brings: the last :data:`SCANS_KEPT` scans are
    kept packed, so that a chain of patterns or a model loaded again
    scans each class once while memory stays bounded (property_mask keeps
    every mask whole, which is right for segkit's fixed tables only)."""
    bits = _SCANS.pop(pattern, None)
    if bits is None:
        mask = property_mask.__wrapped__(pattern)
        bits = np.packbits(mask)
        if len(_SCANS) >= SCANS_KEPT:
            _SCANS.pop(next(iter(_SCANS)))
    else:
        mask = np.unpackbits(bits, count=N_CODE_POINTS).astype(bool)
        mask.setflags(write=False)
    _SCANS[pattern] = bits  # (last: most recently used)
    return mask


def matched_in(pattern: str, text: str) -> np.ndarray:
    """Which characters of ``text`` the one-character class ``pattern``
    matches (bool per character): ``property_mask`` over all code points,
    or a flavour's special code points alone."""
    import regex  # imported here: only building tables needs it

    out = np.zeros(len(text), dtype=bool)
    # Match runs, not single characters: large classes (private use) are
    # a handful of runs.
    for m in regex.finditer(f"(?:{pattern})+", text):
        out[m.start() : m.end()] = True
    return out


def white_space() -> np.ndarray:
    """Unicode ``White_Space`` (what Rust's ``char::is_whitespace`` tests)."""
    return property_mask(r"\p{White_Space}")


def punctuation() -> np.ndarray:
    """General category P* (Pc, Pd, Ps, Pe, Pi, Pf, Po)."""
    return property_mask(r"\p{P}")


def ranges_mask(ranges) -> np.ndarray:
    """Code points inside any of the inclusive ``(first, last)`` ranges."""
    mask = np.zeros(N_CODE_POINTS, dtype=bool)
    for a, b in ranges:
        mask[a : b + 1] = True
    return mask
