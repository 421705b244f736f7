"""Greedy longest match over bytes or characters: :class:`MaxMatch` (any
vocabulary) and :class:`RWKVWorld` (the RWKV World tokenizer).

See ``docs/bytes.rst``.
"""

from .preset import MaxMatch
from .rwkv import RWKVWorld
from .streaming import StreamDecoder
from .tokens import DuplicateTokenWarning

__all__ = ["MaxMatch", "RWKVWorld", "StreamDecoder", "DuplicateTokenWarning"]
