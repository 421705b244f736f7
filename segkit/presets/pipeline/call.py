"""``WordPiece.__call__``: transformers' tokenizer call.

Takes the arguments of ``transformers.BertTokenizerFast.__call__`` and
returns the same keys and values, in a :class:`ModelInputs` (a dict with
attribute access, as transformers' ``BatchEncoding``).  transformers'
rules are followed where they surprise:

- ``max_length`` alone (``padding=False``, ``truncation`` left at None)
  turns on ``"longest_first"`` truncation;
- ``truncation=True`` or ``padding="max_length"`` without ``max_length``
  use :attr:`WordPiece.model_max_length`; while that is "unlimited" (the
  default, as for a tokenizer built from a vocabulary file), they do
  nothing;
- the tokenizer's own default truncation and padding (from a
  ``tokenizer.json``) are not used: the call's arguments decide;
- one text (not a list) gives flat lists, except ``length`` (a list of
  one int) and with ``return_overflowing_tokens`` (a batch);
  ``text_pair=""`` is no pair;
- ``return_tensors="np"`` of rows of different lengths gives object
  arrays of rows; ``"pt"`` raises ValueError.

The values are made from the flat result arrays: matrices by reshaping
(tensors), lists of ints by one compiled pass per key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...runtime.boxing import int_lists_of
from ...results.encoding import _FULL, Encoding, _rows, _with_overflow
from ...runtime import interrupts

#: transformers' "no limit" model_max_length (``int(1e30)``) and the
#: threshold above which a length counts as no limit.
VERY_LARGE_INTEGER = int(1e30)
LARGE_INTEGER = int(1e20)

_PADDING = {True: "longest", "longest": "longest", "max_length": "max_length", "do_not_pad": False}
_TRUNCATION = {
    True: "longest_first",
    "longest_first": "longest_first",
    "only_first": "only_first",
    "only_second": "only_second",
    "do_not_truncate": False,
}
_ROW_KEYS = (("token_type_ids", 1), ("attention_mask", 2), ("special_tokens_mask", 3))
_RAGGED = (
    "Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' "
    "'truncation=True' to have batched tensors with the same length."
)


class ModelInputs(dict):
    """The result of :meth:`WordPiece.__call__`: a dict of model inputs
    (``input_ids``, ``token_type_ids``, ``attention_mask``, ...) whose keys
    are also attributes, as transformers' ``BatchEncoding``.

    ``encodings`` holds segkit's :class:`~segkit.Encoding` of every row
    (tokens, offsets, word and character navigation);
    :meth:`tokens`, :meth:`word_ids` and :meth:`sequence_ids` read them as
    transformers' methods of the same names do.
    """

    def __init__(self, data: dict, encodings=None):
        super().__init__(data)
        self.__dict__["_encodings"] = encodings

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __getstate__(self):
        return {"data": dict(self), "encodings": self.__dict__["_encodings"]}

    def __setstate__(self, state):
        self.update(state["data"])
        self.__dict__["_encodings"] = state["encodings"]

    def __reduce__(self):
        return (_rebuild, (dict(self), self.__dict__["_encodings"]))

    @property
    def encodings(self) -> list[Encoding] | None:
        e = self.__dict__["_encodings"]
        return None if e is None else list(e)

    def _encoding(self, batch_index: int) -> Encoding:
        e = self.__dict__["_encodings"]
        if e is None:
            raise ValueError("this result has no encodings")
        return e[batch_index]

    def tokens(self, batch_index: int = 0) -> list[str]:
        """Token strings of row ``batch_index``."""
        return self._encoding(batch_index).tokens

    def word_ids(self, batch_index: int = 0) -> list[int | None]:
        """Word index of every token of row ``batch_index`` (None for special tokens)."""
        return self._encoding(batch_index).word_ids

    def sequence_ids(self, batch_index: int = 0) -> list[int | None]:
        """Sequence (0, 1) of every token of row ``batch_index`` (None for special tokens)."""
        return self._encoding(batch_index).sequence_ids

    def to(self, device: Any) -> "ModelInputs":
        """Move torch tensors to ``device`` (as transformers' ``BatchEncoding.to``)."""
        for k, v in self.items():
            if hasattr(v, "to"):
                self[k] = v.to(device)
        return self


def _rebuild(data, encodings):
    return ModelInputs(data, encodings)


def call_single(wp, st, text: str) -> ModelInputs:
    """``wp(text)`` with every argument at its default: one compiled call
    (``st``: the state the call has read, ``wp._stages``)."""
    enc = wp._encode(st, text, None, True, None, False, False)
    data = enc._data
    ids = data[0].tolist()
    if data.shape[0] == _FULL:
        return ModelInputs(
            {"input_ids": ids, "token_type_ids": data[1].tolist(), "attention_mask": data[2].tolist()}, (enc,)
        )
    n = len(ids)
    return ModelInputs({"input_ids": ids, "token_type_ids": [0] * n, "attention_mask": [1] * n}, (enc,))


def _strategies(wp, st, padding, truncation, max_length, pad_to_multiple_of):
    """transformers' padding and truncation strategies and max_length."""
    if max_length is not None and padding is False and truncation is None:
        truncation = "longest_first"  # transformers' backward compatibility
    if padding is False:
        pad = False
    else:
        try:
            pad = _PADDING[padding]
        except (KeyError, TypeError):
            raise ValueError(
                f"padding must be True, False, 'longest', 'max_length' or 'do_not_pad', found {padding!r:.60}"
            ) from None
    if truncation is None or truncation is False:
        trunc = False
    else:
        try:
            trunc = _TRUNCATION[truncation]
        except (KeyError, TypeError):
            raise ValueError(
                "truncation must be True, False, 'longest_first', 'only_first', 'only_second' or "
                f"'do_not_truncate', found {truncation!r:.60}"
            ) from None
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0):
        raise ValueError(f"max_length must be a non-negative int or None, found {max_length!r:.60}")
    if max_length is None:
        mml = wp.model_max_length
        if pad == "max_length":
            if mml > LARGE_INTEGER:
                pad = False
            else:
                max_length = mml
        if trunc:
            if mml > LARGE_INTEGER:
                trunc = False
            else:
                max_length = mml
    pad_token = st.settings["pad_token"]
    if pad and wp.vocab.id(pad_token) is None and (st.added is None or pad_token not in st.added.ids):
        raise ValueError(f"asked to pad, but the pad token {pad_token!r} is not in the vocabulary")
    if trunc and pad and pad_to_multiple_of is not None and max_length is not None and max_length % pad_to_multiple_of:
        raise ValueError(
            f"Truncation and padding are both activated but truncation length ({max_length}) is not a multiple "
            f"of pad_to_multiple_of ({pad_to_multiple_of})."
        )
    return pad, trunc, max_length


def _valid_input(t: object) -> bool:
    """transformers' check of ``text`` / ``text_pair``."""
    if isinstance(t, str):
        return True
    if isinstance(t, (list, tuple)):
        if len(t) == 0 or isinstance(t[0], str):
            return True
        if isinstance(t[0], (list, tuple)):
            if len(t[0]) == 0 or isinstance(t[0][0], str):
                return True
            if isinstance(t[0][0], (list, tuple)):
                return len(t[0][0]) == 0 or isinstance(t[0][0][0], str)
    return False


def _tensor_module(return_tensors):
    if return_tensors is None or return_tensors == "np":
        return None
    if return_tensors == "pt":
        try:
            import torch
        except ImportError:
            raise ImportError(
                "return_tensors='pt' needs PyTorch, which is not installed (pip install torch); "
                "return_tensors='np' gives numpy arrays"
            ) from None
        return torch
    raise ValueError(f"return_tensors must be None, 'np' or 'pt', found {return_tensors!r:.60}")


@interrupts.interruptible("text", "text_pair")
def call(
    wp,
    st,
    text,
    text_pair=None,
    *,
    add_special_tokens: bool = True,
    padding: bool | str = False,
    truncation: bool | str | None = None,
    max_length: int | None = None,
    stride: int = 0,
    return_overflowing_tokens: bool = False,
    return_offsets_mapping: bool = False,
    return_special_tokens_mask: bool = False,
    return_attention_mask: bool | None = None,
    return_token_type_ids: bool | None = None,
    return_length: bool = False,
    pad_to_multiple_of: int | None = None,
    padding_side: str | None = None,
    truncation_side: str | None = None,
    return_tensors: str | None = None,
    is_split_into_words: bool = False,
) -> ModelInputs:
    """:meth:`WordPiece.__call__` (see there), with the state ``st`` (``wp._stages``, read once)."""
    torch = _tensor_module(return_tensors)
    pad, trunc, max_length = _strategies(wp, st, padding, truncation, max_length, pad_to_multiple_of)
    for name, side in (("padding_side", padding_side), ("truncation_side", truncation_side)):
        if side not in (None, "right", "left"):
            raise ValueError(f"{name} must be 'right' or 'left', found {side!r:.60}")
    if isinstance(stride, bool) or not isinstance(stride, int) or stride < 0:
        raise ValueError(f"stride must be a non-negative int, found {stride!r:.60}")
    for name, t in (("text", text), ("text_pair", text_pair)):
        if (t is not None or name == "text") and not _valid_input(t):
            raise ValueError(
                f"{name} must be a str (one text), a list of str (a batch, or one pre-tokenized text with "
                f"is_split_into_words=True) or a list of lists of str (a batch of pre-tokenized texts); "
                f"found {type(t).__name__} {t!r:.60}"
            )
    if is_split_into_words:
        batched = isinstance(text, (list, tuple)) and bool(text) and isinstance(text[0], (list, tuple))
    else:
        batched = isinstance(text, (list, tuple))
    if batched:
        if isinstance(text_pair, str):
            raise TypeError("when tokenizing batches of text, `text_pair` must be a list or tuple with the same length as `text`.")
        if text_pair is not None and len(text) != len(text_pair):
            raise ValueError(f"batch length of `text`: {len(text)} does not match batch length of `text_pair`: {len(text_pair)}.")
        items = list(zip(text, text_pair)) if text_pair is not None else list(text)
        if not items:  # (transformers fails with an IndexError)
            raise ValueError("text is an empty batch: nothing to encode")
    else:
        items = [(text, text_pair)] if text_pair else [text]

    if trunc and max_length is not None:
        # transformers sets the truncation up first, which checks the stride
        # against max_length minus the special tokens of a single text (when
        # that difference does not wrap around), for pairs too.
        single = _n_special(st, False, True)
        if max_length >= single and stride > max_length - single:
            raise ValueError(f"stride={stride} must not exceed max_length minus the template's special tokens "
                             f"({max_length} - {single})")
        paired = batched and text_pair is not None or not batched and bool(text_pair)
        if max_length < _n_special(st, paired, add_special_tokens):
            # HF tokenizers subtracts the special tokens from max_length in
            # unsigned arithmetic: a max_length below their number wraps
            # around and nothing is truncated.
            trunc = False
    if pad == "max_length" and max_length == 0:
        pad = False  # padding to length 0 pads nothing
    options: dict[str, Any] = dict(
        add_special_tokens=add_special_tokens,
        truncation=trunc,
        max_length=max_length if (trunc or pad == "max_length") else None,
        padding=pad,
        pad_to_multiple_of=(pad_to_multiple_of or 0) if pad else None,
        stride=stride,  # (checked by HF whether or not overflow is returned)
        truncation_side=truncation_side,  # None: the tokenizer's (as transformers' attribute)
        padding_side=padding_side,
        is_pretokenized=is_split_into_words,
    )
    sample = None
    if not batched and not is_split_into_words and not (return_overflowing_tokens and trunc):
        # One text or pair: encode() (its single-text path is one compiled call).
        del options["is_pretokenized"]
        enc = wp._encode(st, text, text_pair if text_pair else None, **options)
        data = enc._data
        splits = np.array([0, data.shape[1]], dtype=np.int64)
        batch = _One(enc)
        if return_overflowing_tokens:
            sample = np.zeros(1, dtype=np.int64)
    else:
        batch = wp._encode_batch(st, items, **options)
        data = batch._data
        splits = batch.row_splits
        if return_overflowing_tokens:
            data, splits, sample = _overflow_rows(batch, data, splits)
    rows = data if data.shape[0] == _FULL else _rows(data)  # (rows[r]: a row of either)
    if return_token_type_ids is None:
        return_token_type_ids = "token_type_ids" in wp.model_input_names
    if return_attention_mask is None:
        return_attention_mask = "attention_mask" in wp.model_input_names
    wanted = [("input_ids", 0)]
    for (key, r), on in zip(_ROW_KEYS, (return_token_type_ids, return_attention_mask, return_special_tokens_mask)):
        if on:
            wanted.append((key, r))
    out: dict[str, Any] = {}
    n_rows = splits.size - 1
    lengths = [data.shape[1]] if n_rows == 1 else np.diff(splits)
    if return_tensors is None:
        for key, r in wanted:
            out[key] = int_lists_of(rows[r], splits) if n_rows > 1 else [rows[r].tolist()]
        if return_offsets_mapping:
            pairs = list(zip(rows[4].tolist(), rows[5].tolist()))
            bounds = splits.tolist()
            out["offset_mapping"] = [pairs[bounds[t] : bounds[t + 1]] for t in range(n_rows)]
        if return_length:
            out["length"] = lengths if n_rows == 1 else lengths.tolist()
        if sample is not None:
            out["overflow_to_sample_mapping"] = sample.tolist()
    else:
        width = int(lengths[0]) if n_rows else 0
        uniform = n_rows == 1 or bool((lengths == width).all())
        if not uniform and torch is not None:
            raise ValueError(_RAGGED)
        for key, r in wanted:
            out[key] = _matrix(rows[r], splits, n_rows, width, uniform, torch)
        if return_offsets_mapping:
            if uniform and width == 0:  # transformers: np.asarray([[], ...]), no last axis
                out["offset_mapping"] = _vector(np.zeros((n_rows, 0)), torch)
            else:
                both = np.stack([rows[4], rows[5]], axis=-1)
                out["offset_mapping"] = _matrix(both, splits, n_rows, width, uniform, torch)
        if return_length:
            out["length"] = _vector(lengths, torch)
        if sample is not None:
            out["overflow_to_sample_mapping"] = _vector(sample, torch)
    encodings = _Encodings(data, splits, st.names, batch, sample)
    if not batched and return_tensors is None and not return_overflowing_tokens:
        out = {k: (v[0] if v and isinstance(v[0], list) else v) for k, v in out.items()}
    return ModelInputs(out, encodings)


def _n_special(st, paired: bool, add_special_tokens: bool) -> int:
    """Special tokens the template adds to a text or a pair."""
    from .postprocess import K_SPECIAL

    return sum(1 for slot in st.post.slots[(bool(paired), bool(add_special_tokens))] if slot[0] == K_SPECIAL)


def _overflow_rows(batch, data, splits):
    """Rows of every encoding followed by its overflowing encodings, and the
    index of the text each row comes from."""
    if batch._ovf is None:  # nothing overflowed: one row per text
        return data, splits, np.arange(splits.size - 1, dtype=np.int64)
    return _with_overflow(data, splits, *batch._ovf)


def _matrix(values: np.ndarray, splits: np.ndarray, n_rows: int, width: int, uniform: bool, torch):
    """(rows, width[, 2]) int64 matrix of a flat row, or transformers'
    object array of rows when the rows differ in length (numpy only)."""
    if uniform:
        m = values.reshape((n_rows, width) + values.shape[1:]).astype(np.int64)
        return m if torch is None else torch.from_numpy(m)
    rows = np.empty(n_rows, dtype=object)
    bounds = splits.tolist()
    for t in range(n_rows):
        a, b = bounds[t], bounds[t + 1]
        # (an empty row is np.asarray([]), float64, as in transformers)
        rows[t] = values[a:b].astype(np.int64) if b > a else np.asarray([])
    return rows


def _vector(values: np.ndarray, torch):
    v = np.asarray(values, dtype=np.int64)
    return v if torch is None else torch.from_numpy(v.copy())


class _One:
    """The little of a batch that :class:`_Encodings` reads, for one encoding."""

    __slots__ = ("n_sequences",)

    def __init__(self, enc: Encoding):
        self.n_sequences = enc.n_sequences


class _Encodings:
    """segkit :class:`Encoding` of every row of a call's result, made on access."""

    __slots__ = ("_data", "_splits", "_vocab", "_nseq")

    def __init__(self, data, splits, vocab, batch, sample):
        self._data = data
        self._splits = splits
        self._vocab = vocab
        nseq = batch.n_sequences
        if type(nseq) is not int and sample is not None:
            nseq = np.asarray(nseq)[sample]
        self._nseq = nseq

    def __len__(self) -> int:
        return self._splits.size - 1

    def __getitem__(self, i: int) -> Encoding:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"batch index {i} out of range for {n} rows")
        a, b = int(self._splits[i]), int(self._splits[i + 1])
        nseq = self._nseq if type(self._nseq) is int else int(self._nseq[i])
        return Encoding(self._data[:, a:b], self._vocab, nseq)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]
