"""Byte-level BPE (issue 25): exact BPE as longest match plus a pair test
(:mod:`.backtrack`), with compiled pre-tokenization (:mod:`.pretokenize`)."""

from .preset import BPE

__all__ = ["BPE"]
