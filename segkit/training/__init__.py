"""Training vocabularies: byte-level BPE (:func:`train_bpe`)."""

from .bpe import TrainedBPE, train_bpe
from .corpus import CorpusError

__all__ = ["train_bpe", "TrainedBPE", "CorpusError"]
