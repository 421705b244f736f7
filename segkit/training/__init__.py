"""Training vocabularies: :func:`train_wordpiece`."""

from .wordpiece import train_wordpiece

__all__ = ["train_wordpiece"]
