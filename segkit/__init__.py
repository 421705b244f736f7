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
:func:`from_pretrained`, :func:`from_tokenizer_json`
    One loader: a bundled name, a HF model folder, a tokenizer.json, a
    tiktoken file, an RWKV vocabulary or a vocab.txt, recognised by content.
:func:`load`, :class:`ModelFileError`
    Load any preset saved with ``.save(path)`` (every value checked; see docs/saving.rst).
:class:`Vocabulary`, :class:`VocabularyError`
    Token <-> id tables and the error raised for unreadable vocabularies.
:class:`Automaton`, :class:`EngineConfig`
    The preset-agnostic LinMaxMatch engine, for writing new segmenters.
:class:`BPE`
    Byte-level BPE (tiktoken and HuggingFace vocabularies, trained ones), exact and linear-time.
:class:`SentencePieceBPE`
    SentencePiece BPE models (``.model`` files: Llama 2, Mistral), exact.
:func:`train_bpe`, :class:`TrainedBPE`
    Train byte-level BPE (GPT-2 semantics) from files or texts.
:func:`encoding_for_model`, :func:`list_encoding_names`
    tiktoken's functions: the :class:`BPE` of an OpenAI model, and the
    encoding names ``BPE.from_pretrained`` takes.
:func:`train_wordpiece`
    Learn a WordPiece vocabulary from a corpus (HuggingFace's trainer's rules).
:class:`MaxMatch`, :class:`RWKVWorld`
    Greedy longest match over any vocabulary of bytes or characters, and the
    RWKV World tokenizer on it.
``ChineseMaxMatch`` and other plugins
    Resolved lazily from the entry-point group ``segkit.plugins``
    (see :mod:`segkit.presets.registry`).
"""

from .version import __version__

#: Public names -> the module that defines them, imported on first access:
#: ``import segkit`` loads neither NumPy nor Numba (nor anything but this
#: table), and ``segkit.WordPiece`` imports what WordPiece needs.
_PUBLIC = {
    "BatchEncoding": "segkit.results.encoding",
    "Encoding": "segkit.results.encoding",
    "Automaton": "segkit.engine",
    "EngineConfig": "segkit.engine",
    "load": "segkit.models.saving",
    "ModelFileError": "segkit.models.files",
    "Vocabulary": "segkit.models.vocabulary",
    "VocabularyError": "segkit.models.vocabulary",
    "WordPiece": "segkit.presets.wordpiece",
    "ModelInputs": "segkit.presets.pipeline.call",
    "Tokenizer": "segkit.presets.tokenizer",
    "patch_transformers": "segkit.presets.transformers_backend",
    "unpatch_transformers": "segkit.presets.transformers_backend",
    "AddedToken": "segkit.presets.wordpiece.added_tokens",
    "SentencePieceBPE": "segkit.presets.sentencepiece",
    "train_bpe": "segkit.training",
    "TrainedBPE": "segkit.training",
    "train_wordpiece": "segkit.training",
    "from_pretrained": "segkit.presets.loader",
    "from_tokenizer_json": "segkit.presets.loader",
    "encoding_for_model": "segkit.presets.bpe.for_model",
    "list_encoding_names": "segkit.presets.bpe.encodings",
}


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    module = _PUBLIC.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # found directly from now on
        return value
    import importlib.util

    if importlib.util.find_spec(f"segkit.{name}") is not None:
        return importlib.import_module(f"segkit.{name}")  # a submodule, e.g. segkit.presets.registry
    # Plugins (e.g. ChineseMaxMatch from segkit_cjk) resolve on first access.
    return importlib.import_module("segkit.presets.registry").load(name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC) | set(__all__))


__all__ = [
    "WordPiece",
    "Tokenizer",
    "patch_transformers",
    "unpatch_transformers",
    "BPE",
    "MaxMatch",
    "RWKVWorld",
    "SentencePieceBPE",
    "AddedToken",
    "Encoding",
    "BatchEncoding",
    "ModelInputs",
    "Vocabulary",
    "VocabularyError",
    "Automaton",
    "EngineConfig",
    "load",
    "from_pretrained",
    "from_tokenizer_json",
    "ModelFileError",
    "train_bpe",
    "TrainedBPE",
    "train_wordpiece",
    "encoding_for_model",
    "list_encoding_names",
    "__version__",
]
