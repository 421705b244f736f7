"""BERT normalization as a per-code-point rewrite table.

HuggingFace's ``BertNormalizer`` works character by character:

* ``clean_text``: drop NUL, U+FFFD and control characters (general
  category Cc, Cf, Co, except tab, newline and carriage return) and map
  whitespace to a space;
* ``handle_chinese_chars``: put spaces around CJK ideographs;
* ``strip_accents``: canonical decomposition (NFD) then drop nonspacing
  marks (Mn); when unset it follows ``lowercase``;
* ``lowercase``: Unicode lowercase mapping of each character (no
  context-dependent rules, so a final capital sigma becomes σ).

Mapping whitespace to a space and padding CJK ideographs change nothing for
segkit's pre-tokenization (whitespace already separates words and CJK
ideographs are already words of their own), so only the deletions and the
accent/case rewrites go into the table; both are applied per character,
which keeps every output character's origin for offsets.

HuggingFace's character categories come from Unicode 8.0, older than the
tables of Python's ``unicodedata``; the few format characters assigned
since, which HuggingFace therefore keeps, are listed in
:data:`HF_KEPT_FORMAT_CHARS`.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np

from ...engine.rewrite import build_rewrite_table
from ...runtime.unicode import property_mask

#: Format characters (category Cf) assigned after Unicode 8.0: HuggingFace's
#: ``clean_text`` does not know them as control characters and keeps them.
HF_KEPT_FORMAT_CHARS = (0x0890, 0x0891, 0x08E2, 0x110CD, *range(0x13430, 0x13440))


def control_mask() -> np.ndarray:
    """What ``clean_text`` deletes: NUL, U+FFFD and Cc/Cf/Co except tab, LF, CR."""
    mask = property_mask(r"[\p{Cc}\p{Cf}\p{Co}]").copy()
    for cp in (0x09, 0x0A, 0x0D):
        mask[cp] = False
    mask[0] = True
    mask[0xFFFD] = True
    mask[list(HF_KEPT_FORMAT_CHARS)] = False
    return mask


def _strip(ch: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn")


def _lower(s: str) -> str:
    return "".join(c.lower() for c in s)


@lru_cache(maxsize=None)
def bert_rewrite_table(clean_text: bool, strip_accents: bool, lowercase: bool, tables: str = "hf"):
    """``(table, pool)`` for :func:`segkit.engine.rewrite.pack_rewrite`, or
    None when the configuration changes nothing.

    ``tables="hf"`` reproduces HuggingFace exactly (its measured Unicode 8.0
    behaviour, see :mod:`segkit.presets.wordpiece.hf_tables`); ``"current"`` applies
    the rules with Python's ``unicodedata`` and the ``regex`` module.
    """
    if not (clean_text or strip_accents or lowercase):
        return None
    if tables == "hf":
        from .hf_tables import hf_mapping, hf_mask

        delete = hf_mask("control") if clean_text else None
        return build_rewrite_table(hf_mapping(strip_accents, lowercase), delete)
    candidates = np.zeros(0x110000, dtype=bool)
    if strip_accents:
        candidates |= property_mask(r"[\p{Mn}\p{Decomposition_Type=Canonical}]")
    if lowercase:
        candidates |= property_mask(r"\p{Changes_When_Lowercased}")
        if strip_accents:
            # a decomposition may yield uppercase letters: covered above
            pass
    mapping: dict[int, str] = {}
    for cp in np.flatnonzero(candidates).tolist():
        if 0xD800 <= cp <= 0xDFFF:
            continue
        s = chr(cp)
        if strip_accents:
            s = _strip(s)
        if lowercase:
            s = _lower(s)
        if s != chr(cp):
            mapping[cp] = s
    delete = control_mask() if clean_text else None
    table, pool = build_rewrite_table(mapping, delete)
    return table, pool
