"""The bundled default dictionary (jieba's, MIT), stored as a marisa-trie."""

from __future__ import annotations

from functools import lru_cache

import marisa_trie

from segkit.resources import vocabularies_dir

DEFAULT_DICTIONARY = "jieba-dict.marisa"


@lru_cache(maxsize=1)
def _default_trie() -> marisa_trie.Trie:
    path = vocabularies_dir() / DEFAULT_DICTIONARY
    if not path.is_file():
        raise FileNotFoundError(f"bundled dictionary missing at {path}; reinstall segkit")
    trie = marisa_trie.Trie()
    trie.mmap(str(path))
    return trie


def default_words() -> list[str]:
    """The 349,045 words of the default dictionary."""
    return _default_trie().keys()
