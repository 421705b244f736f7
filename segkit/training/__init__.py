"""Training vocabularies: byte-level BPE (:func:`train_bpe`) and WordPiece
(:func:`train_wordpiece`)."""

from .bpe import TrainedBPE, train_bpe
from .corpus import CorpusError
from .wordpiece import train_wordpiece

__all__ = ["train_bpe", "TrainedBPE", "train_wordpiece", "CorpusError"]
