"""SentencePiece's precompiled charsmap (``normalizer_spec.precompiled_charsmap``),
read for the SentencePiece preset and for HF's ``Precompiled`` normalizer.

Layout (SentencePiece's ``normalizer.cc``): a little-endian uint32 ``T``, the
size in bytes of a Darts-clone double-array trie, then the trie (``T / 4``
uint32 units), then the replacement strings, each ended by a NUL.  The trie
maps a UTF-8 prefix of the text to the offset of its replacement; the
normalizer takes the longest rule matching at each position.

A unit packs: bit 8 "has a leaf", bits 0-7 (and 31) the label of the edge
into it, bits 10-31 an offset (shifted left 8 more when bit 9 is set) to
xor with the position to reach the children; a leaf unit's low 31 bits are
the value.

Validation here: the sizes; every value that a leaf can give lies in the
strings blob and is followed by a NUL; every replacement is UTF-8.  The
kernel bounds-checks every read of the trie as well, so even an unchecked
array cannot make it read outside.
"""

from __future__ import annotations

import numpy as np

from ...models.files import ModelFileError


def read_charsmap(blob: bytes, source: str, field: str = "normalizer_spec.precompiled_charsmap") -> tuple[np.ndarray, np.ndarray]:
    """(trie units as uint32, replacement strings as uint8); both empty for
    an empty charsmap (the identity normalizer)."""
    if not blob:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint8)
    if len(blob) <= 4:
        raise ModelFileError(f"{source}: {field}: {len(blob)} bytes, too short for the trie size and a trie")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) or size % 4 or size == 0:
        raise ModelFileError(f"{source}: {field}: a trie of {size} bytes in a charsmap of {len(blob)} bytes "
                             "(expected a positive multiple of 4 below the charsmap's size)")
    if 4 + size > len(blob):
        raise ModelFileError(f"{source}: {field}: the trie ({size} bytes) runs past the charsmap's end")
    units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).astype(np.uint32)
    strings = np.frombuffer(blob, dtype=np.uint8, offset=4 + size).copy()
    check_charsmap(units, strings, source, field)
    return units, strings


def check_charsmap(units: np.ndarray, strings: np.ndarray, source: str, field: str) -> None:
    """Raise :class:`ModelFileError` unless every leaf's value gives a
    NUL-terminated UTF-8 replacement inside ``strings``."""
    if units.dtype != np.uint32 or strings.dtype != np.uint8 or units.ndim != 1 or strings.ndim != 1:
        raise ModelFileError(f"{source}: {field}: expected 1-D uint32 units and uint8 strings")
    if units.size == 0:
        return
    u = units.astype(np.int64)
    n = u.size
    offset = (u >> 10) << ((u & 512) >> 6)
    leafy = np.nonzero((u >> 8) & 1)[0]
    at = leafy ^ offset[leafy]
    at = at[(at >= 0) & (at < n)]
    values = np.unique(u[at] & 0x7FFFFFFF)
    if values.size and values[-1] >= strings.size:
        raise ModelFileError(f"{source}: {field}: a rule's replacement starts at byte {int(values[-1])}, "
                             f"past the {strings.size} bytes of replacements")
    nuls = np.nonzero(strings == 0)[0]
    ends = np.searchsorted(nuls, values)
    if values.size and (ends >= nuls.size).any():
        bad = int(values[ends >= nuls.size][0])
        raise ModelFileError(f"{source}: {field}: the replacement at byte {bad} has no terminating NUL")
    raw = strings.tobytes()
    for v, e in zip(values.tolist(), nuls[ends].tolist() if values.size else []):
        try:
            raw[v:e].decode("utf-8")
        except UnicodeDecodeError:
            raise ModelFileError(f"{source}: {field}: the replacement at byte {v} is not UTF-8: {raw[v:e][:40]!r}") from None
