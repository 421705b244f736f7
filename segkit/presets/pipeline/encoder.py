"""The HF ``Tokenizer`` calls every pipeline preset shares: ``encode``,
``encode_batch``, ``encode_pairs``, transformers' ``__call__``, Arrow and
``datasets`` output.

:class:`HFEncoder` is written once over a preset's *stages*
(:class:`~segkit.presets.pipeline.stages.Stages`, read once per call):

* ``st.matcher``, the preset's own stage, gives tokens as (4, n) int32 rows
  (ids, starts, ends, word index; offsets into the original text) and row
  splits: ``segment_one(text)``, ``segment(texts, num_threads)`` and
  ``segment_parts(texts, num_threads)`` (per-thread parts);
* ``st.post`` (:class:`~segkit.presets.pipeline.options.PostProcessor`)
  resolves a call's options into one option vector and applies template,
  truncation, overflow and padding in one compiled pass
  (:mod:`~segkit.presets.pipeline.postprocess`);
* the result is an :class:`~segkit.Encoding` or a
  :class:`~segkit.BatchEncoding` over those rows (no copy).

A preset may add a faster path for one text (:meth:`HFEncoder._encode_fast`)
or let its matching stage put the template around each text of a batch
(:meth:`HFEncoder._fused_template`); :class:`segkit.WordPiece` does both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from ...results.encoding import BatchEncoding, Encoding
from ...runtime import interrupts
from ...runtime.surrogates import check_text
from ...runtime.threads import concat_segments
from .call import VERY_LARGE_INTEGER, ModelInputs, call, call_single
from .inputs import as_words, encode_mixed, segment_words, split_batch
from .postprocess import O_PAD_TYPE
from .stages import Stages

TextOrPair = Union[str, tuple[str, str], list]


#: See :attr:`HFEncoder._strip_map`.
ASK = object()


def _check_text(text: object, what: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected {what} as str, found {type(text).__name__}: {text!r:.80}")
    return text


class HFEncoder:
    """Mixin: HF ``Tokenizer``'s encode calls and transformers' ``__call__``
    over ``self._stages`` (see the module documentation)."""

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """Tokens the template adds to a text or a pair (HF
        ``num_special_tokens_to_add``).

        >>> import segkit
        >>> segkit.WordPiece.from_pretrained("bert-base-uncased").num_special_tokens_to_add(True)
        3
        """
        return sum(1 for kind, _, _ in self._stages.post.slots[(bool(is_pair), True)] if kind == 0)

    # --------------------------------------------------------------- encode
    def encode(
        self,
        text: str,
        pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        max_length: int | None = None,
        truncation: bool | str | None = None,
        padding: bool | str | None = None,
        pad_to_multiple_of: int | None = None,
        stride: int | None = None,
        truncation_side: str | None = None,
        padding_side: str | None = None,
        is_pretokenized: bool = False,
    ) -> Encoding:
        """Encode a text or a pair of texts, as HuggingFace ``Tokenizer.encode``.

        Parameters
        ----------
        text, pair
            The text, and optionally a second text (sentence pairs).
        add_special_tokens
            Apply the template (when the tokenizer has one).
        max_length
            Length limit for truncation and ``padding="max_length"``,
            template tokens included.
        truncation
            False, True (= ``"longest_first"``), ``"longest_first"``,
            ``"only_first"`` or ``"only_second"``; None: the tokenizer's
            default.
        padding
            False, True/``"longest"`` (a no-op for one text) or
            ``"max_length"``; None: the tokenizer's default.
        pad_to_multiple_of
            Round padded lengths up to a multiple of this.
        is_pretokenized
            ``text`` (and ``pair``) are lists of words, as HF's
            ``is_pretokenized=True``: each word is encoded on its own, its
            offsets relative to the word, word index = index of the word.
        stride
            When truncation cuts a sequence, the pieces that do not fit
            become :attr:`Encoding.overflowing` encodings (each with the
            template); consecutive pieces share ``stride`` tokens.  It must
            be smaller than the length a sequence is cut to.
        truncation_side, padding_side
            ``"right"`` (default) or ``"left"``: cut tokens from the end or
            from the start; pad after the tokens or before them.

        Each keyword left to None takes the tokenizer's default (its
        ``truncation`` and ``padding`` settings; ``padding`` may also set
        ``pad_type_id``).

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> e = wp.encode("a b", "b", max_length=8, padding="max_length")
        >>> e.ids, e.type_ids, e.attention_mask
        ([2, 4, 5, 3, 5, 3, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 0, 0])
        """
        st = self._stages
        if (type(text) is str and pair is None and max_length is None and truncation is None and padding is None
                and stride is None
                and add_special_tokens is True and is_pretokenized is False and pad_to_multiple_of is None
                and truncation_side is None and padding_side is None):
            # The call with every default, as per-call users make it: the
            # ids alone when nothing is post-processed (rows made when first
            # read), else the preset's latency path, with the option vector
            # resolved once.
            plain = st.ids_only
            ids = None if plain is None else plain[0](text)
            if ids is not None:
                e = Encoding._of_ids(ids, plain[1], (st.matcher, text, plain[2], plain[3]))
            else:
                e = self._encode_fast(st, text, st.post.single_defaults)
                if e is None:
                    e = self._encode(st, text, None, tried_fast=True)  # (the path declined this text: not again)
        else:
            e = self._encode(st, text, pair, add_special_tokens, max_length, truncation, padding,
                             pad_to_multiple_of, stride, truncation_side, padding_side, is_pretokenized)
        strip = self._strip_map
        if strip is ASK:
            strip = self._strip_tokens()
        if strip and not is_pretokenized:
            e._source = (strip, (text, pair))
        return e

    #: :meth:`_strip_tokens` when known for the tokenizer's life (a dict or
    #: None, read per call), or ``ASK``: call it (added tokens may change).
    _strip_map: Any = None

    def _strip_tokens(self) -> dict | None:
        """``{id: (lstrip, rstrip, spaces, single_word)}`` of the added
        tokens that take the white space next to them, whose token strings
        are the text they matched, spaces included (:attr:`Encoding.tokens`,
        as HF's).  ``spaces``: None, or how the normalizer writes a
        white-space character (a ``normalized`` token); ``single_word``:
        HF's word-character test, or None.  None: no such token."""
        return None

    def _encode(self, st: Stages, text, pair, add_special_tokens=True, max_length=None, truncation=None, padding=None,
                pad_to_multiple_of=None, stride=None, truncation_side=None, padding_side=None,
                is_pretokenized=False, tried_fast=False) -> Encoding:
        """:meth:`encode` with the state ``st`` (the one a call has read);
        ``tried_fast``: the preset's latency path declined the text already."""
        if type(text) is not str or is_pretokenized:
            if is_pretokenized:
                for seq in (text, pair):
                    if seq is not None and as_words(seq) is None:
                        raise TypeError(f"is_pretokenized=True expects a list of words (a list, tuple or 1-D numpy "
                                        f"array of str), found {type(seq).__name__} {seq!r:.60}")
                return self._encode_batch(st, [text if pair is None else (text, pair)], is_pretokenized=True,
                                         add_special_tokens=add_special_tokens, max_length=max_length,
                                         truncation=truncation, padding=padding, pad_to_multiple_of=pad_to_multiple_of,
                                         stride=stride, truncation_side=truncation_side, padding_side=padding_side)[0]
            _check_text(text)
        post = st.post
        key = (pair is not None, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
               truncation_side, padding_side, True)
        try:
            opts = post.cache.get(key)
        except TypeError:  # an unhashable argument: options() names it
            opts = None
        if opts is None:
            opts = post.options(*key)
        if pair is None and not tried_fast:
            # The latency path (a preset's own, e.g. one compiled call): a cached option vector.
            fast = self._encode_fast(st, text, opts)
            if fast is not None:
                return fast
        if pair is not None:
            check_text(_check_text(pair, "pair"), "pair")
        if pair is None:
            if post.is_plain(opts):
                return Encoding(st.matcher.segment_one(text), st.names)
            tok = st.matcher.segment_one(text)
            rows = np.array([0, tok.shape[1]], dtype=np.int64)
        else:
            tok, rows = st.matcher.segment([text, pair])
        out, _, ovf = post.apply(tok, rows, 1, pair is not None, opts)
        return Encoding(out, st.names, 1 if pair is None else 2, post.first_overflow(ovf))

    @interrupts.interruptible("texts")
    def encode_batch(
        self,
        texts: Sequence[TextOrPair],
        *,
        add_special_tokens: bool = True,
        max_length: int | None = None,
        truncation: bool | str | None = None,
        padding: bool | str | None = None,
        pad_to_multiple_of: int | None = None,
        stride: int | None = None,
        truncation_side: str | None = None,
        padding_side: str | None = None,
        num_threads: int | None = None,
        is_pretokenized: bool = False,
    ) -> BatchEncoding:
        """Encode many texts or pairs ``(text, pair)`` in a few compiled calls.

        Takes the same options as :meth:`encode`; ``padding=True`` pads to
        the longest encoding of the batch (overflowing encodings, if any,
        are padded to the same length; their lengths do not count).  ``num_threads`` (default one; 0
        for all cores) splits large batches over threads (the compiled
        kernels release the GIL); small batches stay on one thread.  Returns a
        :class:`BatchEncoding` (a sequence of :class:`Encoding`;
        ``.to_numpy()`` gives matrices).

        Items are read as HF ``encode_batch`` reads them (see
        :mod:`segkit.presets.pipeline.inputs`): texts and pairs may be mixed, a pair
        is a tuple, a list or a numpy row of two texts; with
        ``is_pretokenized=True`` an item is a list of words (or a pair of
        them), each word encoded on its own, offsets relative to the word.
        """
        strip = None if is_pretokenized else (self._strip_tokens() if self._strip_map is ASK else self._strip_map)
        if strip and not isinstance(texts, (str, bytes, bytearray)):
            try:
                texts = list(texts)
            except TypeError:
                pass  # (named by _encode_batch)
        out = self._encode_batch(self._stages, texts, add_special_tokens=add_special_tokens, max_length=max_length,
                                 truncation=truncation, padding=padding, pad_to_multiple_of=pad_to_multiple_of,
                                 stride=stride, truncation_side=truncation_side, padding_side=padding_side,
                                 num_threads=num_threads, is_pretokenized=is_pretokenized)
        if strip:
            out._source = (strip, [(t, None) if type(t) is str else tuple(t) for t in texts])
        return out

    def _encode_batch(self, st: Stages, texts, *, add_special_tokens=True, max_length=None, truncation=None,
                      padding=None, pad_to_multiple_of=None, stride=None, truncation_side=None, padding_side=None,
                      num_threads=None, is_pretokenized=False) -> BatchEncoding:
        """:meth:`encode_batch` with the state ``st`` (the one a call has read)."""
        if isinstance(texts, (str, bytes, bytearray)):
            raise TypeError(f"encode_batch expects a sequence of texts, found a single {type(texts).__name__}; "
                            "use encode()")
        try:
            texts = list(texts)
        except TypeError:
            raise TypeError(f"encode_batch expects a sequence of texts, found {type(texts).__name__}") from None
        mixed_options = dict(add_special_tokens=add_special_tokens, max_length=max_length, truncation=truncation,
                             padding=padding, pad_to_multiple_of=pad_to_multiple_of, stride=stride,
                             truncation_side=truncation_side, padding_side=padding_side, num_threads=num_threads)
        if is_pretokenized or (texts and type(texts[0]) is not str):  # HF's input forms (segkit/presets/pipeline/inputs.py)
            joined, seconds, mixed = split_batch(texts, is_pretokenized)
            if mixed is not None:
                return encode_mixed(self, st, texts, mixed, is_pretokenized, mixed_options)
            paired = seconds is not None
            if paired:
                joined = joined + seconds
        else:
            paired = False
            joined = texts  # each item is checked by the join (str.join raises TypeError)
        n = len(texts)
        post = st.post
        opts = post.options(paired, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
                            truncation_side, padding_side)
        # Single texts with BERT's template and nothing else to do: the
        # matching pass puts [CLS] and [SEP] around each text (no second pass).
        fused = None if paired or is_pretokenized else self._fused_template(st, opts)
        try:
            if is_pretokenized:
                parts, used = [segment_words(st, joined, num_threads)], 1
            elif fused is not None:
                parts, used = st.matcher.segment_parts(joined, num_threads, fused)
            else:
                parts, used = st.matcher.segment_parts(joined, num_threads)
        except TypeError:
            if paired or is_pretokenized:
                raise
            # Not all texts: a batch mixing texts and pairs, or an error naming the item.
            mixed = split_batch(texts, False)[2]
            if mixed is None:
                raise
            return encode_mixed(self, st, texts, mixed, False, mixed_options)
        return self._batch_result(st, parts, used, n, paired, opts, fused is not None)

    def _fused_template(self, st: Stages, opts: np.ndarray):
        """``(first id, last id)`` when the matching stage itself can put the
        template around each single text of a batch (a preset's fused path),
        else None (the default: post-processing makes the template)."""
        return None

    def _encode_fast(self, st: Stages, text: str, opts: np.ndarray) -> Encoding | None:
        """The preset's own path for one text with the option vector
        ``opts`` (e.g. one compiled call), or None: then the matching stage's
        tokens go through :meth:`PostProcessor.apply`."""
        return None

    def _batch_result(self, st: Stages, parts, used: int, n: int, paired: bool, opts: np.ndarray,
                      fused: bool = False) -> BatchEncoding:
        """The post-processing stage of a batch the matching stage gave as
        per-thread ``parts`` (``n`` texts or pairs; see :meth:`encode_batch`);
        ``fused``: the matching stage already put the template around each
        text (:meth:`_fused_template`), nothing is left to do."""
        post = st.post
        if fused or (not paired and post.is_plain(opts)):  # per-thread parts are not copied into one array unless asked for
            return BatchEncoding._from_parts(parts, st.names, st.pad_id)
        tok, rows = concat_segments(parts, used)
        out, out_rows, ovf = post.apply(tok, rows, n, paired, opts)
        return BatchEncoding(out, out_rows, st.names, st.pad_id, 2 if paired else 1, overflow=ovf,
                             pad_type_id=int(opts[O_PAD_TYPE]), padding_side=post.padding_side(opts))

    #: transformers' settings that :meth:`__call__` reads: the length of
    #: ``truncation=True`` / ``padding="max_length"`` without ``max_length``
    #: (transformers' "no limit" by default, as for a tokenizer made from a
    #: vocabulary file; e.g. 512 to match ``from_pretrained``), and the keys
    #: returned by default.
    model_max_length: int = VERY_LARGE_INTEGER
    model_input_names: tuple = ("input_ids", "token_type_ids", "attention_mask")

    def __call__(self, text, text_pair=None, **options: Any) -> ModelInputs:
        """Encode as ``transformers.BertTokenizerFast(...)(text, text_pair, ...)``:
        the same arguments, keys and values (see :mod:`segkit.presets.pipeline.call`).

        Parameters
        ----------
        text, text_pair
            A text, a list of texts (a batch), or with
            ``is_split_into_words=True`` a list of words or a list of lists
            of words; ``text_pair`` likewise (pairs).
        add_special_tokens, padding, truncation, max_length, stride, pad_to_multiple_of, padding_side, truncation_side, is_split_into_words
            As in transformers: ``padding`` is False, True, ``"longest"``,
            ``"max_length"`` or ``"do_not_pad"``; ``truncation`` is None,
            False, True, ``"longest_first"``, ``"only_first"``,
            ``"only_second"`` or ``"do_not_truncate"``.
        return_tensors
            None (lists), ``"np"`` (int64 arrays) or ``"pt"`` (torch
            tensors; ImportError without PyTorch).
        return_overflowing_tokens, return_offsets_mapping, return_special_tokens_mask, return_attention_mask, return_token_type_ids, return_length
            The keys to return, as in transformers.

        Returns
        -------
        ModelInputs
            A dict (keys also attributes) of ``input_ids``,
            ``token_type_ids``, ``attention_mask`` and those asked for.

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> wp("a b")
        {'input_ids': [2, 4, 5, 3], 'token_type_ids': [0, 0, 0, 0], 'attention_mask': [1, 1, 1, 1]}
        >>> wp(["a", "b a"], padding=True, return_tensors="np").input_ids
        array([[2, 4, 3, 0],
               [2, 5, 4, 3]])
        """
        st = self._stages  # the whole call uses this state
        if not options and text_pair is None and type(text) is str:
            return call_single(self, st, text)
        return call(self, st, text, text_pair, **options)

    @interrupts.interruptible("texts", "pairs")
    def encode_arrow(self, texts: Any, pairs: Any = None, *, null: str = "error", offsets: bool = True, **options: Any):
        """:meth:`encode_batch` of an Arrow string column, as a ``pyarrow.Table``
        (see :meth:`BatchEncoding.to_arrow`); needs pyarrow (``segkit[arrow]``).

        ``texts`` (and ``pairs``, a parallel column): a pyarrow ``StringArray``,
        ``LargeStringArray`` or ``ChunkedArray`` of them (their UTF-8 buffers
        are read where they are, no Python str per row), a pandas Series, or
        a sequence of str.  ``null="error"``: a null row raises ValueError
        naming it; ``"empty"``: it is encoded as an empty text.  ``options``:
        those of :meth:`encode_batch`.  Equal to
        ``encode_batch(texts).to_arrow()`` for the same texts as str.

        >>> import pyarrow as pa, segkit
        >>> wp = segkit.WordPiece(["[UNK]", "a", "##b"])
        >>> wp.encode_arrow(pa.array(["ab", "a a"])).column("input_ids").to_pylist()
        [[1, 2], [1, 1]]
        """
        from ...scale.arrow import encode_arrow_batch

        return encode_arrow_batch(self, texts, pairs, null=null, **options).to_arrow(offsets=offsets)

    def as_datasets_map(self, column: str = "text", pair_column: str | None = None, **options: Any):
        """A function for HF ``datasets.Dataset.map(..., batched=True)`` that
        adds the columns of :meth:`encode_arrow` (needs pyarrow).

        It reads ``column`` (and ``pair_column``) of each batch as Arrow, with
        no Python str per row, and returns the batch's table with the
        encoding columns appended.  ``remove_columns=[...]`` drops input
        columns (pass it here: ``map`` ignores its own ``remove_columns``
        for functions that return a table); ``null``, ``offsets`` and the
        options of :meth:`encode_batch` are passed on.

        >>> import datasets, segkit
        >>> wp = segkit.WordPiece(["[UNK]", "a", "##b"])
        >>> ds = datasets.Dataset.from_dict({"text": ["ab", "a a"]})
        >>> datasets.disable_progress_bars()
        >>> ds.map(wp.as_datasets_map("text"), batched=True)[1]
        {'text': 'a a', 'input_ids': [1, 1], 'token_type_ids': [0, 0], 'attention_mask': [1, 1], 'special_tokens_mask': [0, 0], 'offset_mapping': [[0, 1], [2, 3]]}
        """
        from ...scale.arrow import datasets_map_function

        return datasets_map_function(self, column, pair_column, **options)

    def encode_pairs(self, texts: Sequence[str], pairs: Sequence[str], **options: Any) -> BatchEncoding:
        """:meth:`encode_batch` for two parallel lists (of equal length)."""
        if len(texts) != len(pairs):
            raise ValueError(f"encode_pairs: {len(texts)} texts but {len(pairs)} pairs; the lists must match")
        return self.encode_batch(list(zip(texts, pairs)), **options)
