"""segkit: linear-time maximum-matching segmentation.

Public API
----------
:class:`WordPiece`
    BERT's WordPiece tokenizer (greedy longest-match-first), end to end.
:class:`Encoding`, :class:`BatchEncoding`
    Results of ``encode`` / ``encode_batch``.
:class:`Vocabulary`, :class:`VocabularyError`
    Token <-> id tables and the error raised for unreadable vocabularies.
:class:`Automaton`, :class:`EngineConfig`
    The preset-agnostic LinMaxMatch engine, for writing new segmenters.
"""

from .encoding import BatchEncoding, Encoding
from .engine import Automaton, EngineConfig
from .vocab import Vocabulary, VocabularyError
from .wordpiece import WordPiece

__version__ = "0.1.0"

__all__ = [
    "WordPiece",
    "Encoding",
    "BatchEncoding",
    "Vocabulary",
    "VocabularyError",
    "Automaton",
    "EngineConfig",
    "__version__",
]
