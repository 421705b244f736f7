"""Saving and loading presets: ``preset.save(path)`` and :func:`load`.

A preset class takes part by providing ``_model_state(self)`` returning
``(config, arrays, blobs)`` and a classmethod ``_from_model(config, arrays,
blobs, source)``; :func:`load` finds the class by the preset name stored in
the file (``WordPiece`` or a plugin name such as ``ChineseMaxMatch``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .engine.automaton import Automaton, automaton_from_state, automaton_state
from .storage import ModelFileError, read_model, write_model
from .vocab import Vocabulary


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a preset) to a model file."""
    config, arrays, blobs = obj._model_state()
    write_model(path, type(obj).__name__, config, arrays, blobs)


def _preset_class(name: str):
    from .wordpiece import WordPiece

    if name == "WordPiece":
        return WordPiece
    from . import plugins

    try:
        return plugins.load(name)
    except (AttributeError, ImportError):
        return None


def load(path: str | os.PathLike, *, verify: bool = True) -> Any:
    """Load a preset saved with ``.save(path)``.

    The file is memory-mapped and nothing is rebuilt: the automaton's arrays
    are used where they lie (after a bounds check of every index they hold).
    Loading never executes code from the file.

    Parameters
    ----------
    path
        A file written by ``WordPiece.save``, ``ChineseMaxMatch.save`` or a
        plugin's ``save``.
    verify
        Check the data checksum (reads the file once; default True).

    Raises
    ------
    ModelFileError
        The file is not a segkit model, is truncated or corrupted, was written
        by a newer segkit, or names a preset that is not installed.

    Examples
    --------
    >>> import os, tempfile, segkit
    >>> wp = segkit.WordPiece(["[UNK]", "un", "##aff", "##able"])
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.segkit")
    >>> wp.save(path)
    >>> segkit.load(path).tokenize("unaffable")
    ['un', '##aff', '##able']
    """
    loaded = read_model(path, verify=verify)
    cls = _preset_class(loaded.preset)
    if cls is None or not hasattr(cls, "_from_model"):
        raise ModelFileError(f"{loaded.path}: preset {loaded.preset!r} is not available (is its plugin installed?)")
    try:
        return cls._from_model(loaded.config, loaded.arrays, loaded.blobs, str(loaded.path))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ModelFileError):
            raise
        raise ModelFileError(f"{loaded.path}: invalid {loaded.preset} model: {e}") from None


# ------------------------------------------------------------- shared parts
def vocabulary_state(vocab: Vocabulary, prefix: str = "vocab") -> tuple[dict, dict]:
    """Arrays and blobs that store a vocabulary (marisa-trie + id maps + tokens)."""
    trie, mid_to_id, id_to_mid = vocab.to_marisa()
    arrays = {f"{prefix}.mid_to_id": mid_to_id, f"{prefix}.id_to_mid": id_to_mid}
    blobs = {f"{prefix}.marisa": trie.tobytes()}
    tokens = vocab.tokens_blob()
    if tokens is not None:
        blobs[f"{prefix}.tokens"] = tokens
    return arrays, blobs


def vocabulary_from_state(arrays: dict, blobs: dict, prefix: str = "vocab", source: str = "model") -> Vocabulary:
    import marisa_trie

    trie = marisa_trie.Trie()
    try:
        trie.frombytes(bytes(blobs[f"{prefix}.marisa"]))
    except KeyError:
        raise
    except Exception as e:  # marisa raises its own errors for damaged data
        raise ValueError(f"{source}: damaged vocabulary trie ({e})") from None
    mid_to_id = np.asarray(arrays[f"{prefix}.mid_to_id"])
    id_to_mid = np.asarray(arrays[f"{prefix}.id_to_mid"])
    if mid_to_id.size != len(trie) or (mid_to_id.size and (mid_to_id.min() < 0 or mid_to_id.max() >= id_to_mid.size)):
        raise ValueError(f"{source}: vocabulary id map does not match its trie")
    if id_to_mid.size and (id_to_mid.min() < -1 or id_to_mid.max() >= len(trie)):
        raise ValueError(f"{source}: vocabulary id map does not match its trie")
    return Vocabulary.from_marisa(trie, mid_to_id, id_to_mid, blobs.get(f"{prefix}.tokens"))


def automaton_arrays(a: Automaton, prefix: str) -> tuple[dict, dict]:
    config, arrays = automaton_state(a)
    return config, {f"{prefix}.{k}": v for k, v in arrays.items()}


def automaton_from_arrays(config: dict, arrays: dict, prefix: str, source: str) -> Automaton:
    sub = {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + ".")}
    return automaton_from_state(config, sub, source=source)
