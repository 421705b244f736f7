"""The bundled default dictionary (jieba's, MIT), stored as a marisa-trie.

The first use of a mode builds its automaton and stores the whole segmenter
in segkit's model cache (:mod:`segkit.cache`); later processes map that file
and start without a build.  Large user dictionary files are cached the same
way (:func:`cached_segmenter`).
"""

from __future__ import annotations

from pathlib import Path

import marisa_trie
import numpy as np

from segkit.resources import vocabularies_dir
from segkit.vocab import Vocabulary

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


def default_segmenter(mode: str):
    """A ChineseMaxMatch over the default dictionary, from the cache when possible."""
    return cached_segmenter("chinese-default", default_dictionary_path().read_bytes(), mode, default_vocabulary)


def cached_segmenter(kind: str, source: bytes, mode: str, vocabulary):
    """A ChineseMaxMatch (automata of ``mode`` built) over ``vocabulary()``,
    kept in segkit's model cache under the dictionary file's bytes ``source``."""
    from segkit.cache import cache_key, cached
    from segkit.models import load

    from .segmenter import ChineseMaxMatch

    def build():
        seg = ChineseMaxMatch.__new__(ChineseMaxMatch)
        seg._assemble(vocabulary(), mode, True, {})
        for d in seg._directions():
            seg._automaton(d)
        return seg

    return cached(cache_key(f"{kind}-{mode}", {}, source), build, load)
