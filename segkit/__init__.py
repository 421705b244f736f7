"""segkit: linear-time maximum-matching segmentation.

Public API
----------
:class:`WordPiece`
    BERT's WordPiece tokenizer (greedy longest-match-first), end to end.
:class:`AddedToken`
    A token matched in the text before WordPiece (``WordPiece.add_tokens``).
:class:`Encoding`, :class:`BatchEncoding`
    Results of ``encode`` / ``encode_batch``.
:class:`ModelInputs`
    Result of calling a :class:`WordPiece` as a transformers tokenizer.
:func:`load`, :class:`ModelFileError`
    Load any preset saved with ``.save(path)`` (every value checked; see docs/saving.rst).
:class:`Vocabulary`, :class:`VocabularyError`
    Token <-> id tables and the error raised for unreadable vocabularies.
:class:`Automaton`, :class:`EngineConfig`
    The preset-agnostic LinMaxMatch engine, for writing new segmenters.
:class:`BPE`
    Byte-level BPE (tiktoken and HuggingFace vocabularies, trained ones), exact and linear-time.
:func:`train_bpe`, :class:`TrainedBPE`
    Train byte-level BPE (GPT-2 semantics) from files or texts.
:func:`train_wordpiece`
    Learn a WordPiece vocabulary from a corpus (HuggingFace's trainer's rules).
:class:`MaxMatch`, :class:`RWKVWorld`
    Greedy longest match over any vocabulary of bytes or characters, and the
    RWKV World tokenizer on it.
``ChineseMaxMatch`` and other plugins
    Resolved lazily from the entry-point group ``segkit.plugins``
    (see :mod:`segkit.presets.registry`).
"""

from .results.encoding import BatchEncoding, Encoding
from .engine import Automaton, EngineConfig
from .models.saving import load
from .models.files import ModelFileError
from .models.vocabulary import Vocabulary, VocabularyError
from .presets.wordpiece import WordPiece
from .presets.wordpiece.call import ModelInputs
from .presets.wordpiece.added_tokens import AddedToken

from .version import __version__


def __getattr__(name: str):
    # Plugins (e.g. ChineseMaxMatch from segkit_cjk) resolve on first access.
    if name.startswith("__"):
        raise AttributeError(name)
    if name in ("train_bpe", "TrainedBPE", "train_wordpiece"):  # imported on first use: keeps ``import segkit`` fast
        from . import training

        return getattr(training, name)
    import importlib
    import importlib.util

    if importlib.util.find_spec(f"segkit.{name}") is not None:
        return importlib.import_module(f"segkit.{name}")  # a submodule, e.g. segkit.presets.registry
    return importlib.import_module("segkit.presets.registry").load(name)

__all__ = [
    "WordPiece",
    "BPE",
    "MaxMatch",
    "RWKVWorld",
    "AddedToken",
    "Encoding",
    "BatchEncoding",
    "ModelInputs",
    "Vocabulary",
    "VocabularyError",
    "Automaton",
    "EngineConfig",
    "load",
    "ModelFileError",
    "train_bpe",
    "TrainedBPE",
    "train_wordpiece",
    "__version__",
]
