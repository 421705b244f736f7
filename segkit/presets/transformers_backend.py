"""segkit under a transformers tokenizer: :func:`patch_transformers`.

A transformers fast tokenizer (``PreTrainedTokenizerFast``, what
``AutoTokenizer.from_pretrained`` gives for a folder with a
tokenizer.json) does its work through one object, its *backend*
(``tok._tokenizer``, an HF ``tokenizers.Tokenizer``): the call sets the
backend's truncation and padding, asks it for ``encode_batch``, and reads
each :class:`~segkit.Encoding`'s fields; ``decode`` asks it too.

:class:`SegkitBackend` stands in for that object.  It is built from the
backend's own state (``to_str()``: whatever transformers changed after
loading the file is in it), encodes and decodes with segkit, and keeps the
original backend beside it, in the same truncation and padding, for
everything else:

* what segkit does not do (``encode_special_tokens=True``, i.e.
  transformers' ``split_special_tokens``) is the original's work;
* what changes the tokenizer (``add_tokens``, ``add_special_tokens``,
  setting ``post_processor``, ``normalizer``, ``pre_tokenizer`` or
  ``decoder``) is done on the original, and segkit's side is built again
  from its new state;
* any other attribute (``get_vocab``, ``model``, ``to_str``, ``save``, ...)
  is the original's.

So results are the original's by construction where segkit does not
compute them, and segkit's (checked equal to HF in the tests) where it
does.  A file segkit cannot read leaves the tokenizer as it was.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any

#: Attributes whose assignment changes what the backend computes.
_REBUILD_ON_SET = frozenset({"post_processor", "normalizer", "pre_tokenizer", "decoder", "model"})


def tokenizer_from_str(json_text: str) -> Any:
    """The segkit pipeline a tokenizer.json *string* describes (the
    :meth:`segkit.Tokenizer.from_file` of it: a :class:`segkit.Tokenizer`,
    or a :class:`segkit.WordPiece` for a WordPiece file)."""
    from .tokenizer import Tokenizer

    if not isinstance(json_text, str):
        raise TypeError(f"expected the tokenizer.json text as str, found {type(json_text).__name__}")
    with tempfile.TemporaryDirectory(prefix="segkit-") as folder:  # (created 0700)
        path = os.path.join(folder, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(json_text)
        return Tokenizer.from_file(path)


class SegkitBackend:
    """An HF ``tokenizers.Tokenizer`` stand-in that encodes with segkit (see
    the module documentation).

    Parameters
    ----------
    original
        The backend it stands in for (``tok._tokenizer``).
    """

    def __init__(self, original: Any) -> None:
        object.__setattr__(self, "_original", original)
        object.__setattr__(self, "_segkit", tokenizer_from_str(original.to_str()))

    # ------------------------------------------------------------ encoding
    def encode_batch(self, input, add_special_tokens: bool = True, is_pretokenized: bool = False):
        if self._original.encode_special_tokens:
            return self._original.encode_batch(input, add_special_tokens=add_special_tokens,
                                               is_pretokenized=is_pretokenized)
        if len(input) == 1 and not is_pretokenized:  # transformers' call on one text: the one-text path
            item = input[0]
            if type(item) is str:
                return [self._segkit.encode(item, add_special_tokens=add_special_tokens)]
            if type(item) in (tuple, list) and len(item) == 2 and type(item[0]) is str and type(item[1]) is str:
                return [self._segkit.encode(item[0], item[1], add_special_tokens=add_special_tokens)]
        return self._segkit.encode_batch(input, add_special_tokens=add_special_tokens,
                                         is_pretokenized=is_pretokenized)

    def encode_batch_fast(self, input, add_special_tokens: bool = True, is_pretokenized: bool = False):
        return self.encode_batch(input, add_special_tokens, is_pretokenized)

    def encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True):
        if self._original.encode_special_tokens:
            return self._original.encode(sequence, pair, is_pretokenized=is_pretokenized,
                                         add_special_tokens=add_special_tokens)
        return self._segkit.encode(sequence, pair, is_pretokenized=is_pretokenized,
                                   add_special_tokens=add_special_tokens)

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self._segkit.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(s, skip_special_tokens) for s in sequences]

    # -------------------------------------------- truncation and padding
    @property
    def truncation(self):
        return self._segkit.truncation

    @property
    def padding(self):
        return self._segkit.padding

    def enable_truncation(self, max_length, stride=0, strategy="longest_first", direction="right") -> None:
        self._segkit.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        self._original.enable_truncation(max_length, stride=stride, strategy=strategy, direction=direction)

    def no_truncation(self) -> None:
        self._segkit.no_truncation()
        self._original.no_truncation()

    def enable_padding(self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]", length=None,
                       pad_to_multiple_of=None) -> None:
        kw = dict(direction=direction, pad_id=pad_id, pad_type_id=pad_type_id, pad_token=pad_token, length=length,
                  pad_to_multiple_of=pad_to_multiple_of)
        self._segkit.enable_padding(**kw)
        self._original.enable_padding(**kw)

    def no_padding(self) -> None:
        self._segkit.no_padding()
        self._original.no_padding()

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._segkit.num_special_tokens_to_add(is_pair)

    # ------------------------------------------------ changes: rebuilt
    def add_tokens(self, tokens) -> int:
        n = self._original.add_tokens(tokens)
        self._rebuild()
        return n

    def add_special_tokens(self, tokens) -> int:
        n = self._original.add_special_tokens(tokens)
        self._rebuild()
        return n

    def _rebuild(self) -> None:
        object.__setattr__(self, "_segkit", tokenizer_from_str(self._original.to_str()))

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._original, name, value)
        if name in _REBUILD_ON_SET:
            self._rebuild()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_original", "_segkit"):
            raise AttributeError(name)
        return getattr(self._original, name)

    def __repr__(self) -> str:
        return f"SegkitBackend({self._segkit!r})"


def patch_transformers(tokenizer: Any = None) -> Any:
    """Put segkit under a transformers fast tokenizer, in place; with no
    argument, under every fast tokenizer made from now on.

    Parameters
    ----------
    tokenizer
        A ``transformers.PreTrainedTokenizerFast`` (what
        ``AutoTokenizer.from_pretrained(folder)`` gives for a tokenizer.json).
        None: transformers' fast tokenizer class is patched, so that each one
        made afterwards gets segkit (:func:`unpatch_transformers` undoes it).

    Returns
    -------
    The same tokenizer (None without one): its calls (``tok(batch,
    padding=..., truncation=..., max_length=..., return_tensors=...,
    return_offsets_mapping=...)``, ``encode``, ``decode``,
    ``batch_decode``) give what they gave, computed by segkit.  A tokenizer
    whose file segkit cannot read is left as it was, with a warning naming
    the reason.

    Examples
    --------
    >>> import segkit
    >>> from transformers import AutoTokenizer            # doctest: +SKIP
    >>> tok = segkit.patch_transformers(AutoTokenizer.from_pretrained("path/to/model"))  # doctest: +SKIP
    >>> tok(["Hello world", "a second text"], padding=True, return_tensors="np")  # doctest: +SKIP
    """
    if tokenizer is None:
        _patch_class()
        return None
    original = getattr(tokenizer, "_tokenizer", None)
    if isinstance(original, SegkitBackend):
        return tokenizer
    if original is None or not hasattr(original, "to_str"):
        raise TypeError(f"patch_transformers expects a transformers fast tokenizer (PreTrainedTokenizerFast), "
                        f"found {type(tokenizer).__name__}")
    try:
        backend = SegkitBackend(original)
    except (ValueError, TypeError, NotImplementedError) as e:
        warnings.warn(f"segkit.patch_transformers: {type(tokenizer).__name__} keeps HF tokenizers: {e}", stacklevel=2)
        return tokenizer
    tokenizer._tokenizer = backend
    return tokenizer


def _fast_class():
    try:
        from transformers import PreTrainedTokenizerFast
    except ImportError:
        raise ImportError("patch_transformers() patches transformers, which is not installed "
                          "(pip install transformers)") from None
    return PreTrainedTokenizerFast


def _patch_class() -> None:
    cls = _fast_class()
    if getattr(cls.__init__, "_segkit_original", None) is not None:
        return  # patched already
    original_init = cls.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if type(getattr(self, "_tokenizer", None)).__module__.startswith("tokenizers"):
            patch_transformers(self)

    __init__._segkit_original = original_init  # type: ignore[attr-defined]
    __init__.__wrapped__ = original_init  # type: ignore[attr-defined]
    cls.__init__ = __init__


def unpatch_transformers() -> None:
    """Undo :func:`patch_transformers` with no argument: fast tokenizers made
    afterwards are transformers' own again (those made before keep segkit)."""
    cls = _fast_class()
    original_init = getattr(cls.__init__, "_segkit_original", None)
    if original_init is not None:
        cls.__init__ = original_init


__all__ = ["patch_transformers", "unpatch_transformers", "SegkitBackend", "tokenizer_from_str"]
