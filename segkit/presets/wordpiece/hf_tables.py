"""HuggingFace tokenizers' character tables, measured (``hf_unicode.json``).

HF classifies characters with Unicode 8.0 data, older than Python's
``unicodedata`` and the ``regex`` module, so about 150 code points
pre-tokenize and several hundred normalize differently under current
tables.  ``tools/gen_hf_unicode.py`` measures HF's behaviour on every code
point, one at a time, into ``hf_unicode.json`` (data, loaded with
``json``): punctuation, the control characters ``clean_text`` deletes, and
the per-character results of ``strip_accents`` and ``lowercase``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

_PATH = Path(__file__).with_name("hf_unicode.json")


@lru_cache(maxsize=1)
def hf_tables() -> dict:
    with open(_PATH, encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=None)
def hf_mask(name: str) -> np.ndarray:
    """Boolean mask over all code points of ``"punctuation"`` or ``"control"``."""
    mask = np.zeros(0x110000, dtype=bool)
    for a, b in hf_tables()[name]:
        mask[a : b + 1] = True
    mask.setflags(write=False)
    return mask


def _hangul(cp: int) -> str:
    # Canonical decomposition of a precomposed Hangul syllable (arithmetic).
    s = cp - 0xAC00
    out = chr(0x1100 + s // 588) + chr(0x1161 + (s % 588) // 28)
    if s % 28:
        out += chr(0x11A7 + s % 28)
    return out


@lru_cache(maxsize=1)
def _hangul_syllables() -> dict[int, str]:
    """Every precomposed Hangul syllable's decomposition into jamo."""
    return {cp: _hangul(cp) for cp in range(0xAC00, 0xD7A4)}


def hf_mapping(strip_accents: bool, lowercase: bool) -> dict[int, str]:
    """Code point -> what HF's strip_accents (then lowercase) makes of it,
    for the code points that change."""
    t = hf_tables()
    strip = {int(k): v for k, v in t["strip"].items()} if strip_accents else {}
    lower = {int(k): v for k, v in t["lower"].items()} if lowercase else {}
    hangul = _hangul_syllables() if strip_accents else {}
    # The 11,172 syllables decompose into jamo, which lowercasing keeps (the
    # usual case, checked): they are taken as they are, not one by one.
    jamo_kept = not any(0x1100 <= cp <= 0x11FF for cp in lower)
    out: dict[int, str] = dict(hangul) if jamo_kept else {}
    for cp in set(strip) | set(lower) | (set() if jamo_kept else set(hangul)):
        s = chr(cp)
        if strip_accents:
            s = hangul[cp] if 0xAC00 <= cp <= 0xD7A3 else strip.get(cp, s)
        if lowercase:
            s = "".join(lower.get(ord(ch), ch) for ch in s)
        if s != chr(cp):
            out[cp] = s
    return out
