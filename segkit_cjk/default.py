"""The bundled default dictionary (jieba's, MIT), stored as a marisa-trie.

The first use of a mode builds its automaton and stores the whole segmenter
in segkit's model cache (``Preset._cached``); later processes map that file
and start without a build.  Large user dictionary files are cached the same
way (:func:`cached_segmenter`).
"""

from __future__ import annotations

from pathlib import Path

import marisa_trie
import numpy as np

from segkit.presets.base import Vocabulary, slow_step, vocabularies_dir

DEFAULT_DICTIONARY = "jieba-dict.marisa"


def default_dictionary_path() -> Path:
    path = vocabularies_dir() / DEFAULT_DICTIONARY
    if not path.is_file():
        raise FileNotFoundError(f"bundled dictionary missing at {path}; reinstall segkit")
    return path


def default_vocabulary() -> Vocabulary:
    """The 349,045 words of the default dictionary (ids = marisa key ids)."""
    trie = marisa_trie.Trie()
    trie.mmap(str(default_dictionary_path()))
    ids = np.arange(len(trie), dtype=np.int32)
    return Vocabulary.from_marisa(trie, ids, ids)


def default_words() -> list[str]:
    return default_vocabulary().tokens


def default_source() -> bytes:
    """The bytes the default dictionary's models are cached under."""
    return default_dictionary_path().read_bytes()


def default_segmenter(cls, mode: str):
    """A ``cls`` (ChineseMaxMatch) over the default dictionary, from the cache when possible."""
    return cached_segmenter(cls, "chinese-default", default_source(), mode, default_vocabulary)


def cached_segmenter(cls, kind: str, source: bytes, mode: str, vocabulary):
    """A ``cls`` (ChineseMaxMatch) with the automata of ``mode`` built over
    ``vocabulary()``, kept in segkit's model cache under the dictionary
    file's bytes ``source``."""

    def build():
        from segkit.presets.base import cache_dir

        what = "with a user dictionary " if "userdict" in kind else ""
        later = ("once: later runs load them from segkit's model cache" if cache_dir() is not None
                 else "on every run: the model cache is off (SEGKIT_CACHE_DIR)")
        with slow_step(f"segkit: building the Chinese dictionary's automata {what}({mode}), {later}"):
            seg = cls.__new__(cls)
            seg._assemble(vocabulary(), mode, True, {})
            seg._snapshot(tuple(seg._directions()))
        return seg

    return cls._cached(f"{kind}-{mode}", {}, source, build)
