"""SentencePiece BPE models (issue 31): segkit's own reader of ``.model``
files and an exact compiled encoder (:mod:`.kernels`)."""

from .preset import SentencePieceBPE

__all__ = ["SentencePieceBPE"]
