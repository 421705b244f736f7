"""The preset base, and the API a segmenter plugin may use.

A preset is a tokenization scheme assembled on the engine
(:mod:`segkit.engine`).  It subclasses :class:`Preset`, writes its own
stages, and gets from the base what every preset needs:

* **saving and loading**: :meth:`Preset.save` writes one ``.segkit`` file
  and :func:`segkit.load` (or ``TheClass.load``) reads it back, validated,
  without rebuilding; the preset provides ``_model_state`` and
  ``_from_model``;
* **pickling**, and with it threads, processes, Dask and Spark (a model is
  shipped to each worker process once, see :mod:`segkit.scale.shipping`):
  as the preset's parts, ``_parts`` / ``_from_parts`` (default: the model
  state, validated again when unpickled);
* **the model cache**: :meth:`Preset._cached` keeps a model built from a
  large file in segkit's cache (:mod:`segkit.models.cache`), so the next
  process maps it instead of building it;
* **a name**: ``preset_name`` (the class name unless given as
  ``class X(Preset, name="...")``) names the class in model files; the
  loader finds it through :mod:`segkit.presets.registry` (built-ins, the
  ``segkit.plugins`` entry-point group, or :func:`register`).

The plugin API
--------------

A segmenter package imports ``segkit`` (the public API), :mod:`segkit.engine`
and this module, and nothing else of segkit: every name in ``__all__`` below
is kept stable for plugins.  ``segkit_cjk`` (``segkit.ChineseMaxMatch``) is
written against exactly this API; :doc:`/plugins` shows a complete small
plugin.

* model parts: :func:`vocabulary_state`, :func:`vocabulary_from_state`,
  :func:`automaton_arrays`, :func:`automaton_from_arrays`,
  :func:`valid_id_mask`, :func:`vocabulary_keys` (both at once:
  :func:`vocabulary_and_keys`); files:
  :func:`read_utf8_file`, :func:`cacheable_file`, :func:`cache_dir`, :func:`vocabularies_dir`;
* threads: :func:`resolve_threads`, :func:`map_code_point_chunks`,
  :func:`map_text_runs`, :func:`concat_segments`;
* Ctrl-C (see :mod:`segkit.runtime.interrupts`): :func:`interruptible` for
  entry points that may run long, :func:`checkpoint` between chunks,
  :func:`stop_flag` / :func:`stop_requested` for a long kernel's loop;
* results: :func:`lists_of`, :func:`list_of`, :func:`triples_of`,
  :func:`triple_list_of`, :func:`int_lists_of` (Python lists made in
  compiled code), :data:`NO_OBJECTS`, :func:`paused_gc`;
* Unicode: :func:`white_space`, :func:`punctuation`, :func:`property_mask`,
  :func:`check_text` (the one rule for lone surrogates: refused where they
  come in, see :mod:`segkit.runtime.surrogates`);
* notices: :func:`slow_step` (a slow step announced once, with a counter
  on a terminal);
* Arrow (pyarrow is imported when these are first used):
  :func:`arrow_module`, :class:`Utf8Rows`, :func:`string_chunks`,
  :func:`string_lists`, :func:`offset_lists`, :func:`spans_to_utf8`,
  :func:`readonly` (buffers as the list paths' kernels see them).

Examples
--------
A complete preset in a few lines (saving, loading and pickling come from the
base):

>>> import numpy as np, os, tempfile
>>> import segkit
>>> from segkit.engine import SPACE
>>> from segkit.presets import base
>>> class Words(base.Preset):
...     def __init__(self, words):
...         classes = np.zeros(0x110000, dtype=np.uint8)
...         classes[ord(" ")] = SPACE
...         self.vocab = segkit.Vocabulary(words)
...         config = segkit.EngineConfig(unknown="char", char_id=-1)
...         self.automaton = segkit.Automaton.build(self.vocab.tokens, self.vocab.ids, config, classes)
...     def cut(self, text):
...         ids, starts, ends = self.automaton.segment(text)
...         return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
...     def _model_state(self):
...         config, arrays = base.automaton_arrays(self.automaton, "automaton")
...         varrays, blobs = base.vocabulary_state(self.vocab)
...         return {"automaton": config}, {**arrays, **varrays}, blobs
...     @classmethod
...     def _from_model(cls, config, arrays, blobs, source):
...         obj = cls.__new__(cls)
...         obj.vocab = base.vocabulary_from_state(arrays, blobs, source=source)
...         obj.automaton = base.automaton_from_arrays(config["automaton"], arrays, "automaton", source,
...                                                    base.valid_id_mask(obj.vocab, minus_one=True))
...         return obj
>>> base.register("Words", Words)
>>> w = Words(["ab", "abc", "d"])
>>> w.cut("abcd ab")
['abc', 'd', 'ab']
>>> path = os.path.join(tempfile.mkdtemp(), "words.segkit")
>>> w.save(path)
>>> segkit.load(path).cut("dabc")
['d', 'abc']
"""

from __future__ import annotations

import os
from typing import Any, Callable, ClassVar, TypeVar

from ..models.bundled import vocabularies_dir
from ..models.cache import cache_dir, cacheable_file
from ..models.files import ModelFileError
from ..models.parts import (
    automaton_arrays,
    automaton_from_arrays,
    valid_id_mask,
    vocabulary_and_keys,
    vocabulary_from_state,
    vocabulary_keys,
    vocabulary_state,
)
from ..models.vocabulary import Vocabulary, VocabularyError, read_utf8_file
from ..runtime.boxing import NO_OBJECTS, int_lists_of, list_of, lists_of, triple_list_of, triples_of
from ..runtime.gcpause import paused_gc
from ..runtime.interrupts import checkpoint, interruptible, stop_flag, stop_requested
from ..runtime.notices import slow_step
from ..runtime.surrogates import check_text
from ..runtime.threads import concat_segments, map_code_point_chunks, map_text_runs, resolve_threads
from ..runtime.unicode import property_mask, punctuation, white_space
from .registry import register

P = TypeVar("P", bound="Preset")


class Preset:
    """Base class of every preset (see the module documentation).

    A subclass implements

    ``_model_state(self) -> (config, arrays, blobs)``
        what a model file stores: a JSON-able dict, NumPy arrays and byte
        strings;
    ``_from_model(cls, config, arrays, blobs, source)`` (classmethod)
        the inverse, validating everything (any byte string given to the
        loader either gives a valid model or raises; ``source`` names the
        file in messages);

    and, when pickling should skip validation or carry more than the model
    file, ``_parts(self) -> tuple`` and ``_from_parts(cls, *parts)``.
    """

    #: the name model files and the registry use for this class
    preset_name: ClassVar[str] = "Preset"

    def __init_subclass__(cls, name: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.preset_name = name or cls.__name__

    # ------------------------------------------------------------ the contract
    def _model_state(self) -> tuple[dict, dict, dict]:
        raise NotImplementedError(f"{type(self).__name__} does not define _model_state")

    @classmethod
    def _from_model(cls: type[P], config: dict, arrays: dict, blobs: dict, source: str) -> P:
        raise NotImplementedError(f"{cls.__name__} does not define _from_model")

    def _parts(self) -> tuple:
        """What this preset pickles as (default: its model state)."""
        return self._model_state()

    @classmethod
    def _from_parts(cls: type[P], *parts: Any) -> P:
        config, arrays, blobs = parts
        return cls._from_model(config, arrays, blobs, "pickle")

    # --------------------------------------------------------- what it gets
    def save(self, path: str | os.PathLike) -> None:
        """Write this model to one file; :func:`segkit.load` reads it back
        (every value checked, nothing rebuilt)."""
        from ..models.saving import save

        save(self, path)

    @classmethod
    def load(cls: type[P], path: str | os.PathLike, *, verify: bool = True) -> P:
        """:func:`segkit.load`, checking that the file holds this preset.

        Raises
        ------
        ModelFileError
            As :func:`segkit.load`, and when the file holds another preset.
        """
        from ..models.saving import load

        obj = load(path, verify=verify)
        if not isinstance(obj, cls):
            raise ModelFileError(f"{path}: holds a {type(obj).preset_name} model, not a {cls.preset_name}")
        return obj

    def __reduce__(self):
        return (_rebuild, (type(self), self._parts()))

    @classmethod
    def _cached(cls: type[P], kind: str, settings: dict, source: bytes, build: Callable[[], P]) -> P:
        """``build()``, or the model it built before with the same ``kind``,
        ``settings`` (JSON-able) and ``source`` (the bytes it was built
        from), from segkit's model cache; settings that are not JSON-able,
        or a cache that cannot be used, simply mean building."""
        from ..models.cache import cache_key, cached
        from ..models.saving import load

        try:
            key = cache_key(kind, settings, source)
        except (TypeError, ValueError):  # settings that are not JSON: no caching
            return build()
        obj = cached(key, build, load)
        return obj if isinstance(obj, cls) else build()

    @classmethod
    def _cached_hit(cls: type[P], kind: str, settings: dict, source: bytes) -> P | None:
        """The model :meth:`_cached` would load for these arguments, or None
        where it would build (nothing is built or stored here)."""
        from ..models.cache import cache_key, peek
        from ..models.saving import load

        try:
            key = cache_key(kind, settings, source)
        except (TypeError, ValueError):
            return None
        obj = peek(key, load)
        return obj if isinstance(obj, cls) else None


def _rebuild(cls: type[P], parts: tuple) -> P:
    return cls._from_parts(*parts)


# Arrow helpers: the scale layer imports pyarrow on use, so they resolve lazily.
_ARROW = {
    "arrow_module": "_pa",
    "Utf8Rows": "Utf8Rows",
    "string_chunks": "string_chunks",
    "string_lists": "string_lists",
    "offset_lists": "offset_lists",
    "spans_to_utf8": "_spans_to_utf8",
    "readonly": "readonly",
}


def __getattr__(name: str) -> Any:
    if name in _ARROW:
        from ..scale import arrow

        return getattr(arrow, _ARROW[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Preset",
    "register",
    "ModelFileError",
    "Vocabulary",
    "VocabularyError",
    "read_utf8_file",
    "cacheable_file",
    "cache_dir",
    "vocabularies_dir",
    "vocabulary_state",
    "vocabulary_from_state",
    "automaton_arrays",
    "automaton_from_arrays",
    "valid_id_mask",
    "vocabulary_keys",
    "vocabulary_and_keys",
    "resolve_threads",
    "map_code_point_chunks",
    "map_text_runs",
    "concat_segments",
    "interruptible",
    "checkpoint",
    "stop_flag",
    "stop_requested",
    "lists_of",
    "list_of",
    "triples_of",
    "triple_list_of",
    "int_lists_of",
    "NO_OBJECTS",
    "paused_gc",
    "white_space",
    "punctuation",
    "property_mask",
    "check_text",
    "slow_step",
    *_ARROW,
]
