"""Byte-level BPE (issue 25): exact BPE as longest match plus a pair test."""

from .preset import BPE

__all__ = ["BPE"]
