"""GPT-2's byte-level alphabet: a printable character for each byte, the
spelling of byte-level vocabularies (GPT-2's ``encoder.py``, HF's
``ByteLevel``), written once for every preset, the pipeline and training.

Bytes ``!``..``~``, ``¡``..``¬`` and ``®``..``ÿ`` stand for themselves; the
other 68 for U+0100, U+0101, ... in byte order.

>>> bytes_to_unicode()[ord(" ")], byte_decoder()["Ġ"], len(byte_decoder())
('Ġ', 32, 256)
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """byte -> its printable stand-in character."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """stand-in character -> byte (the inverse of :func:`bytes_to_unicode`)."""
    return {c: b for b, c in bytes_to_unicode().items()}
