"""BERT's pre-tokenization, expressed as boundary classes for the engine.

BERT splits text on whitespace and makes every punctuation character and
every CJK ideograph a word of its own.  In segkit that is a table: each code
point is ``WORD``, ``SPACE`` or ``ISOLATED`` (see
:mod:`segkit.engine.charmap`), and the engine applies it inside its single
compiled pass.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...engine.charmap import ISOLATED, SPACE
from ...runtime.unicode import punctuation, ranges_mask, white_space

#: CJK ideograph ranges of Google's BERT (``_is_chinese_char``).
BERT_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

#: The same ranges as HuggingFace ``tokenizers`` has them: its fifth range
#: starts at 0x2B920, so U+2B820..U+2B91F are not treated as CJK there.
HF_CJK_RANGES = tuple((0x2B920, b) if a == 0x2B820 else (a, b) for a, b in BERT_CJK_RANGES)

CJK_RANGES = {"hf": HF_CJK_RANGES, "bert": BERT_CJK_RANGES}


def bert_punctuation(tables: str = "current") -> np.ndarray:
    """ASCII 33-47, 58-64, 91-96, 123-126 and Unicode category P*.

    ``tables="hf"``: the set HuggingFace tokenizers uses (its Unicode 8.0
    categories, measured; see :mod:`segkit.presets.wordpiece.hf_tables`);
    ``"current"``: the ``regex`` module's Unicode version.
    """
    if tables == "hf":
        from .hf_tables import hf_mask

        return hf_mask("punctuation").copy()
    mask = punctuation().copy()
    for a, b in ((33, 47), (58, 64), (91, 96), (123, 126)):
        mask[a : b + 1] = True
    return mask


@lru_cache(maxsize=None)
def bert_classes(cjk: str | None = "hf", tables: str = "hf") -> np.ndarray:
    """Boundary class of every code point for BERT pre-tokenization.

    Parameters
    ----------
    cjk
        ``"hf"`` (HuggingFace's ranges, the default), ``"bert"`` (Google's) or
        ``None`` (CJK ideographs are ordinary word characters).
    tables
        Punctuation per HuggingFace (``"hf"``) or per current Unicode
        (``"current"``, what TensorFlow Text's ICU is closest to).
    """
    if cjk is not None and cjk not in CJK_RANGES:
        raise ValueError(f"cjk must be 'hf', 'bert' or None, found {cjk!r}")
    classes = np.zeros(0x110000, dtype=np.uint8)
    iso = bert_punctuation(tables)
    if cjk is not None:
        iso = iso | ranges_mask(CJK_RANGES[cjk])
    classes[iso] = ISOLATED
    classes[white_space()] = SPACE
    classes.setflags(write=False)
    return classes
