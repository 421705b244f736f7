"""The WordPiece preset: BERT's subword tokenizer on the LinMaxMatch engine."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from ..encoding import BatchEncoding, Encoding
from ..engine import Automaton, EngineConfig
from ..engine.automaton import _MAX_SCRATCH, join_code_points, to_code_points
from ..engine.byte_offsets import to_byte_offsets
from ..engine.dispatch import resolve_entry
from ..engine.kernels import token_rows
from ..engine.rewrite import (
    SCRATCH_ROWS,
    build_rewrite_table,
    pack_rewrite,
    segment_batch_rewritten,
    segment_rewritten_into,
)
from ..cache import cache_key, cacheable_file, cached
from ..parallel import concat_segments, map_text_runs
from ..vocab import Vocabulary, VocabSource
from .normalization import bert_rewrite_table
from .options import PostProcessor, check_post_settings
from .postprocess import N_ROWS, O_PAD_TYPE, SINGLE_CUT, SINGLE_FAILED, encode_single
from .template import bert_template, normalize_template, template_slots
from .call import VERY_LARGE_INTEGER, ModelInputs, call, call_single
from .inputs import as_words, encode_mixed, segment_words, split_batch
from .pretokenize import bert_classes

#: Special tokens of BERT vocabularies: never split when they occur in text.
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# Settings that, with the vocabulary, define a WordPiece (saved in model files).
_SETTINGS = (
    "suffix_indicator",
    "unk_token",
    "max_input_chars_per_word",
    "cjk",
    "lowercase",
    "strip_accents",
    "clean_text",
    "handle_chinese_chars",
    "special_tokens",
    "template",
    "cls_token",
    "sep_token",
    "pad_token",
    "truncation",
    "padding",
    "flavour",
)

_DECODE_CLEANUP = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" do not", " don't"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)

TextOrPair = Union[str, tuple[str, str], list]


class WordPiece:
    """WordPiece tokenization (greedy longest-match-first), in linear time.

    Parameters
    ----------
    vocab
        Path to a ``vocab.txt`` (one token per line, id = line index), a
        sequence of tokens (id = index) or a mapping token -> id.  A file of
        64 KiB or more is built once and then kept in segkit's model cache
        (:mod:`segkit.cache`; ``SEGKIT_CACHE_DIR=off`` disables it), keyed
        by the file's bytes and every setting: later processes map the
        built model instead of building it again.
    suffix_indicator
        Prefix of the vocabulary's continuation pieces: ``"##"`` for BERT;
        any string, including ``""``.
    unk_token
        Token emitted for a word that cannot be tokenized; it must be in the
        vocabulary.
    max_input_chars_per_word
        Words longer than this (in characters) become ``unk_token``.
    lowercase
        Lowercase the text (each character's Unicode lowercase mapping).
    strip_accents
        Remove accents (NFD, then drop nonspacing marks).  None (default):
        follow ``lowercase``, as BERT does.
    clean_text
        Drop NUL, U+FFFD and control characters.
    handle_chinese_chars
        Make every CJK ideograph a word of its own (BERT's behaviour).
    cjk
        Which CJK ideograph ranges: ``"hf"`` (HuggingFace's, the default) or
        ``"bert"`` (Google's; they differ for U+2B820..U+2B91F).
    special_tokens
        Tokens that are never split when they occur in the text (matched
        on the raw text, leftmost-longest).  None (default): those of
        ``[PAD] [UNK] [CLS] [SEP] [MASK]`` that are in the vocabulary.
    template
        ``"bert"``: :meth:`encode` adds ``[CLS] A [SEP]`` or
        ``[CLS] A [SEP] B [SEP]``; None (default): no special tokens are
        added; or a dict in HuggingFace's ``TemplateProcessing`` syntax,
        ``{"single": "<s> $A </s>", "pair": "<s> $A </s> </s> $B </s>"}``
        (``:N`` after a piece sets its type id; optional
        ``"special_tokens": {name: id or [ids]}`` for names that are not
        vocabulary tokens; pairs default to ``"$A:0 $B:1"``).
    cls_token, sep_token, pad_token
        The tokens the template and padding use.
    truncation, padding
        Defaults for :meth:`encode` (see there); None: off.  Keys of
        ``truncation``: ``max_length``, ``strategy``, ``stride``,
        ``direction`` (``"right"``/``"left"``); of ``padding``: ``length``
        (None: the longest), ``pad_to_multiple_of``, ``direction``,
        ``pad_type_id``.
    flavour
        ``"hf"`` (default): HuggingFace ``tokenizers``.  ``"tf_text"``:
        TensorFlow Text's ``FastWordpieceTokenizer``: Google's CJK ranges,
        ``max_input_chars_per_word`` counts UTF-8 bytes (TF's
        ``max_bytes_per_word``) and offsets are UTF-8 byte offsets.
    duplicates
        How repeated vocabulary tokens are handled (see
        :meth:`segkit.Vocabulary.load`).

    Notes
    -----
    Output equals the original WordPiece: text is split on Unicode
    whitespace, every punctuation character (ASCII 33-47, 58-64, 91-96,
    123-126 or Unicode category P*) and every CJK ideograph is a word of its
    own; each word is split greedily into the longest vocabulary pieces,
    pieces after the first carrying ``suffix_indicator``; a word with any
    unmatchable part, or longer than ``max_input_chars_per_word``, becomes a
    single ``unk_token`` spanning the word.  With the defaults no
    normalization is applied; :meth:`bert`, :meth:`from_pretrained` and
    :meth:`from_tokenizer_json` configure BERT's.  Offsets always refer to the
    original text.

    Examples
    --------
    >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "!"])
    >>> wp.tokenize("unaffable!")
    ['un', '##aff', '##able', '!']
    >>> wp.encode("unaffable xyz").offsets
    [(0, 2), (2, 5), (5, 9), (10, 13)]
    """

    def __init__(
        self,
        vocab: VocabSource | Vocabulary,
        *,
        suffix_indicator: str = "##",
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        lowercase: bool = False,
        strip_accents: bool | None = None,
        clean_text: bool = False,
        handle_chinese_chars: bool = True,
        cjk: str = "hf",
        special_tokens: Sequence[str] | None = None,
        template: str | None = None,
        cls_token: str = "[CLS]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        truncation: dict | None = None,
        padding: dict | None = None,
        flavour: str = "hf",
        duplicates: str = "error",
    ) -> None:
        settings = {
            "suffix_indicator": suffix_indicator,
            "unk_token": unk_token,
            "max_input_chars_per_word": max_input_chars_per_word,
            "cjk": cjk,
            "lowercase": bool(lowercase),
            "strip_accents": strip_accents,
            "clean_text": bool(clean_text),
            "handle_chinese_chars": bool(handle_chinese_chars),
            "special_tokens": None if special_tokens is None else list(special_tokens),
            "template": normalize_template(template),
            "cls_token": cls_token,
            "sep_token": sep_token,
            "pad_token": pad_token,
            "truncation": truncation,
            "padding": padding,
            "flavour": flavour,
        }
        source = cacheable_file(vocab)
        if source is not None:
            # A large vocabulary file: the built model is kept in segkit's
            # model cache, so the next process maps it instead of building.
            from ..models import load

            try:
                key = cache_key("wordpiece-file", {**settings, "duplicates": duplicates}, source)
            except (TypeError, ValueError):  # settings that are not JSON: no caching
                key = None
            if key is not None:
                built = cached(key, lambda: WordPiece(Vocabulary.load(vocab, duplicates=duplicates), **settings), load)
                if isinstance(built, WordPiece) and built._settings == settings:
                    self._assemble(built.vocab, built.automaton, settings, built._rewrite, built._derived)
                    return
        vocab = Vocabulary.load(vocab, duplicates=duplicates)
        _check_settings(settings, vocab)
        config = _engine_config(settings, vocab)
        automaton = Automaton.build(vocab.tokens, vocab.ids, config, _classes(settings))
        self._assemble(vocab, automaton, settings, None)

    # ------------------------------------------------------------ assembly
    def _assemble(self, vocab: Vocabulary, automaton: Automaton, settings: dict, rewrite, derived=None) -> None:
        self.vocab = vocab
        self.automaton = automaton
        self._packed = automaton.packed  # read on every call
        self._settings = dict(settings)
        for k in _SETTINGS:
            setattr(self, k, settings[k])
        self.unk_id = automaton.config.unk_id
        if derived is None:
            # Ids of the special, template and padding tokens (looked up once;
            # pickles carry them, so unpickling needs no vocabulary lookup).
            if self.special_tokens is None:
                specials = [t for t in BERT_SPECIAL_TOKENS if t in vocab]
            else:
                specials = list(self.special_tokens)
            pad = vocab.id(self.pad_token)
            derived = (specials, [vocab.id(t) for t in specials], 0 if pad is None else pad,
                       vocab.id(self.cls_token), vocab.id(self.sep_token))
        specials, special_ids, self.pad_id, self.cls_id, self.sep_id = derived
        self._derived = derived
        self.special_token_list = list(specials)
        self.special_ids = frozenset(special_ids)
        if rewrite is None:
            strip = self.lowercase if self.strip_accents is None else bool(self.strip_accents)
            tables = "current" if self.flavour == "tf_text" else "hf"
            # An identity table when nothing is normalized: every text then
            # goes through the same compiled path (one to compile, not two).
            table = bert_rewrite_table(self.clean_text, strip, self.lowercase, tables) or _identity_table()
            rewrite = pack_rewrite(table[0], table[1], specials, list(special_ids))
            rewrite.setflags(write=False)
        self._rewrite = rewrite
        self._local = threading.local()
        self._post = _post_processor(settings, vocab, derived)
        self._encode_entry = None  # see _encode_single
        self._segment_entry = None

    @classmethod
    def bert(
        cls,
        vocab: VocabSource | Vocabulary,
        *,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        **kwargs: Any,
    ) -> "WordPiece":
        """BERT's full pipeline, with the defaults of HuggingFace's
        ``BertWordPieceTokenizer``: BERT normalization (lowercasing unless
        ``lowercase=False``), special tokens kept whole, and the
        ``[CLS] ... [SEP]`` template.

        >>> wp = WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world"])
        >>> wp.encode("Hello WORLD").tokens
        ['[CLS]', 'hello', 'world', '[SEP]']
        """
        kwargs.setdefault("template", "bert")
        return cls(
            vocab,
            lowercase=lowercase,
            strip_accents=strip_accents,
            clean_text=clean_text,
            handle_chinese_chars=handle_chinese_chars,
            **kwargs,
        )

    # ---------------------------------------------------- saving and loading
    @classmethod
    def from_pretrained(cls, name: str) -> "WordPiece":
        """A bundled BERT tokenizer by name, with its casing (no network access).

        ``bert-base-uncased`` lowercases and strips accents;
        ``bert-base-multilingual-cased`` does neither; ``bert-base-chinese``
        lowercases (its vocabulary has no uppercase Latin tokens).  All use
        BERT's normalization, special tokens and template.  Built once, then
        kept in segkit's model cache (:mod:`segkit.cache`), as every large
        vocabulary file is.

        >>> WordPiece.from_pretrained("bert-base-uncased").tokenize("Hello!")
        ['hello', '!']
        """
        from ..resources import BUNDLED_LOWERCASE, bundled_vocabulary

        path = bundled_vocabulary(name)
        return cls.bert(path, lowercase=BUNDLED_LOWERCASE[name])

    @classmethod
    def from_tokenizer_json(cls, path: str | os.PathLike) -> "WordPiece":
        """Load a HuggingFace ``tokenizer.json`` whose model is WordPiece.

        The vocabulary, unk token, continuation prefix, word length limit,
        ``BertNormalizer`` settings, special (added) tokens, the
        post-processor (``TemplateProcessing`` or ``BertProcessing`` of
        BERT's shape) and default truncation/padding are read from it.
        Raises ValueError naming the problem for anything segkit cannot
        reproduce exactly (another model type, another normalizer or
        pre-tokenizer, another template).
        """
        from .tokenizer_json import read_tokenizer_json

        vocab, kwargs = read_tokenizer_json(path)
        try:
            return cls(vocab, **kwargs)
        except ValueError as e:  # a setting or the vocabulary: name the file
            raise type(e)(f"{path}: {e}") from None

    def save_tokenizer_json(self, path: str | os.PathLike) -> None:
        """Write a HuggingFace ``tokenizer.json`` that gives this tokenizer's
        ids, offsets and type ids on raw text.

        It holds the WordPiece model (vocabulary, unk token, continuation
        prefix, word length limit), ``BertNormalizer`` with these settings
        (none when nothing is normalized), ``BertPreTokenizer``, the special
        tokens as added tokens, BERT's template as ``TemplateProcessing``,
        the default truncation and padding, and the WordPiece decoder.
        ``tokenizers.Tokenizer.from_file`` and transformers'
        ``PreTrainedTokenizerFast(tokenizer_file=...)`` load it, and
        :meth:`from_tokenizer_json` reads it back to an equal tokenizer.
        ValueError for settings HF cannot reproduce (``flavour="tf_text"``,
        ``cjk="bert"``).

        >>> import json, os, tempfile
        >>> wp = WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "un", "##able"], lowercase=True)
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        >>> wp.save_tokenizer_json(path)
        >>> WordPiece.from_tokenizer_json(path).encode("Unable").tokens
        ['[CLS]', 'un', '##able', '[SEP]']
        """
        from .tokenizer_json import write_tokenizer_json

        write_tokenizer_json(self, path)

    def save(self, path: str | os.PathLike) -> None:
        """Write this tokenizer to one file; :func:`segkit.load` reads it back
        in tens of milliseconds (read and checked, nothing rebuilt)."""
        from ..models import save

        save(self, path)

    def _model_state(self):
        from ..models import automaton_arrays, vocabulary_state

        aconf, arrays = automaton_arrays(self.automaton, "automaton")
        varrays, blobs = vocabulary_state(self.vocab)
        arrays.update(varrays)
        arrays["rewrite.packed"] = self._rewrite
        config = {k: getattr(self, k) for k in _SETTINGS}
        config["automaton"] = aconf
        config["has_rewrite"] = True
        return config, arrays, blobs

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        """A WordPiece from a model file's parts, everything validated: the
        settings as the constructor checks them, the vocabulary, the
        automaton (structure, ids, and an engine configuration equal to the
        one the settings imply).  The normalization tables are rebuilt from
        the settings (cached per process) and must equal the stored ones."""
        from ..models import automaton_from_arrays, valid_id_mask, vocabulary_from_state, vocabulary_keys

        missing = [k for k in _SETTINGS if k not in config]
        if missing:
            raise ValueError(f"{source}: settings {missing} are missing")
        settings = {k: config[k] for k in _SETTINGS}
        _check_setting_types(settings)
        vocab = vocabulary_from_state(arrays, blobs, source=source)
        _check_settings(settings, vocab)
        automaton = automaton_from_arrays(
            config["automaton"], arrays, "automaton", source, valid_id_mask(vocab), vocabulary_keys(vocab),
            _classes(settings),
        )
        expected = _engine_config(settings, vocab)
        if automaton.config != expected:
            raise ValueError(f"{source}: the automaton's configuration {automaton.config} does not match the "
                             f"settings, which imply {expected}")
        obj = cls.__new__(cls)
        obj._assemble(vocab, automaton, settings, None)
        stored = arrays.get("rewrite.packed")
        if stored is not None and not np.array_equal(stored, obj._rewrite):
            raise ValueError(f"{source}: invalid normalization tables: they are not the ones the settings give")
        return obj

    def __reduce__(self):
        # Pickles as arrays (automaton, tables) and a packed vocabulary: no rebuild.
        return (_wordpiece_from_parts, (self.vocab, self.automaton, self._settings, self._rewrite, self._derived))

    # ------------------------------------------------------------- tokenize
    def _segment(self, texts: Sequence[str], num_threads: int | None = None):
        """(4, n) tokens (ids, starts, ends, words; offsets in the original
        texts) and row splits, after normalization and special tokens."""
        return concat_segments(*self._segment_parts(texts, num_threads))

    def _segment_parts(self, texts: Sequence[str], num_threads: int | None = None):
        """:meth:`_segment` as ``(parts, threads used)``: one ``(tokens,
        row splits)`` part per run of texts a thread matched (one part when
        the batch was not split)."""
        if num_threads is not None and num_threads != 1:
            # Each thread matches its runs as one thread matches a batch (a
            # block of texts at a time, its code points still in cache).
            return map_text_runs(self._segment_one_thread, texts, num_threads)
        return [self._segment_one_thread(texts)], 1

    def _segment_one_thread(self, texts: Sequence[str]):
        n = len(texts)
        if n <= _BLOCK_TEXTS:  # one block: none of the blocks' bookkeeping
            return self._segment_cps(*join_code_points(texts))
        # One thread: the texts are measured, joined into code points and
        # matched a block at a time, all appended to one output.  Measuring a
        # block just before joining it reads each text object once from
        # memory, not once per pass over the whole batch (a cache miss per
        # text: about 15 ms on the 83,000 texts of the corpus), and a
        # block's code points are reused memory, still in cache.
        rows = np.empty(n + 1, dtype=np.int64)
        rows[0] = 0
        out = None
        k = 0
        for a in range(0, n, _BLOCK_TEXTS):
            cps, bounds = join_code_points(texts[a : a + _BLOCK_TEXTS])
            if out is None:  # room for the whole batch if the texts are alike (grown if not)
                out = token_rows(cps.size * (n // _BLOCK_TEXTS + 1) * 5 // 4)
            out, k = self._match(cps, bounds, out, k, rows[a:])
        return out[:, :k], rows

    def _segment_cps(self, cps: np.ndarray, bounds: np.ndarray):
        """:meth:`_segment` of texts joined by :func:`join_code_points`."""
        rows = np.empty(bounds.size, dtype=np.int64)
        rows[0] = 0
        out, k = self._match(cps, bounds, token_rows(cps.size), 0, rows)
        return out[:, :k], rows

    def _match(self, cps: np.ndarray, bounds: np.ndarray, out: np.ndarray, k: int, rows: np.ndarray):
        """Tokens of the joined texts appended to ``out`` from slot ``k`` on
        (``rows[t + 1]``: the slot after text ``t``); returns ``(out, k)``."""
        out, k = segment_batch_rewritten(cps, bounds, self._packed, self._rewrite, _CLSMASK, out, k, rows)
        if self.flavour == "tf_text":
            to_byte_offsets(cps, bounds, out, rows[: bounds.size])
        return out, k

    def _segment_one(self, text: str) -> np.ndarray:
        """(4, n) tokens of one text: one compiled call, per-thread buffers."""
        if len(text) > _MAX_SCRATCH:
            out, _ = self._segment([text])
            return out
        cps = to_code_points(text)
        buf = self._buffers(cps.size + 16)
        while True:
            entry = self._segment_entry  # fixed argument types, as in _encode_single
            if entry is None:
                k, self._segment_entry = resolve_entry(segment_rewritten_into, cps, self._packed, self._rewrite, _CLSMASK, buf)
            else:
                k = entry(cps, self._packed, self._rewrite, _CLSMASK, buf)
            if k >= 0:
                out = buf[:4, :k].copy()
                break
            buf = self._buffers(-k + 16)  # the rewritten text is longer than the original
        if self.flavour == "tf_text":
            to_byte_offsets(cps, np.array([0, cps.size], dtype=np.int64), out, np.array([0, k], dtype=np.int64))
        return out

    def tokenize(self, text: str) -> list[str]:
        """Normalize (as configured), pre-tokenize and WordPiece ``text``.

        >>> WordPiece(["[UNK]", "a", "##b", ","]).tokenize("ab, c")
        ['a', '##b', ',', '[UNK]']
        """
        itos = self.vocab.id_to_token
        return [itos[i] for i in self._segment_one(_check_text(text))[0].tolist()]

    def tokenize_word(self, word: str) -> list[str]:
        """WordPiece one word as it is (no normalization, no pre-tokenization).

        One call costs a few microseconds, mostly Python call overhead; for
        many words, ``self.automaton.segment_batch(words, pretokenize=False)``
        returns the ids of all of them from one compiled call (about 0.5 us
        a word on the multilingual corpus).

        >>> WordPiece(["[UNK]", "a", "##.", "##b"]).tokenize_word("a.b")
        ['a', '##.', '##b']
        """
        itos = self.vocab.id_to_token
        return [itos[i] for i in self.automaton.segment_id_list(word, pretokenize=False)]

    def encode_ids(self, text: str) -> list[int]:
        """Just the token ids of ``text``, no template (the fastest path)."""
        return self._segment_one(_check_text(text))[0].tolist()

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

        >>> wp = WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> e = wp.encode("a b", "b", max_length=8, padding="max_length")
        >>> e.ids, e.type_ids, e.attention_mask
        ([2, 4, 5, 3, 5, 3, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 0, 0])
        """
        if type(text) is not str or is_pretokenized:
            if is_pretokenized:
                for seq in (text, pair):
                    if seq is not None and as_words(seq) is None:
                        raise TypeError(f"is_pretokenized=True expects a list of words (a list, tuple or 1-D numpy "
                                        f"array of str), found {type(seq).__name__} {seq!r:.60}")
                return self.encode_batch([text if pair is None else (text, pair)], is_pretokenized=True,
                                         add_special_tokens=add_special_tokens, max_length=max_length,
                                         truncation=truncation, padding=padding, pad_to_multiple_of=pad_to_multiple_of,
                                         stride=stride, truncation_side=truncation_side, padding_side=padding_side)[0]
            _check_text(text)
        post = self._post
        key = (pair is not None, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
               truncation_side, padding_side, True)
        opts = post.cache.get(key)
        if opts is None:
            opts = post.options(*key)
        if pair is None and self.flavour == "hf":
            data, ovf = self._encode_single(text, opts)
            return Encoding(data, self.vocab, 1, ovf)
        if pair is not None:
            _check_text(pair)
        if pair is None:
            if post.is_plain(opts):
                return Encoding(self._segment_one(text), self.vocab)
            tok = self._segment_one(text)
            rows = np.array([0, tok.shape[1]], dtype=np.int64)
        else:
            tok, rows = self._segment([text, pair])
        out, _, ovf = post.apply(tok, rows, 1, pair is not None, opts)
        return Encoding(out, self.vocab, 1 if pair is None else 2, _one_overflow(ovf))

    def _buffers(self, need: int) -> np.ndarray:
        """Per-thread scratch for single texts (grown, never shared): one
        int32 array, rows as :func:`encode_single` expects them."""
        loc = self._local
        buf = getattr(loc, "buf", None)
        if buf is None or buf.shape[1] < need:
            buf = loc.buf = np.empty((SCRATCH_ROWS + N_ROWS, max(need + 8, 512)), np.int32)
        return buf

    def _encode_single(self, text: str, opts: np.ndarray):
        """``(data, overflow)`` of one text: its (8, n) encoding, in one
        compiled call (per-thread buffers) unless truncation cuts and
        overflow is asked for."""
        if len(text) > _MAX_SCRATCH:
            tok, rows = self._segment([text])
            if self._post.is_plain(opts):
                return tok, None
            return self._post_one(tok, rows, opts)
        cps = to_code_points(text)
        buf = getattr(self._local, "buf", None)
        if buf is None:  # (too small: the kernel says so, and how much it needs)
            buf = self._buffers(len(text) + 16)
        while True:
            # Always the same argument types (a read-only uint32 text, the
            # preset's arrays, cached read-only int64 options, an int32
            # scratch), so the specialization is resolved once.
            entry = self._encode_entry
            if entry is None:
                n, self._encode_entry = resolve_entry(encode_single, cps, self._packed, self._rewrite, opts, buf)
            else:
                n = entry(cps, self._packed, self._rewrite, opts, buf)
            if n >= 0:
                return buf[SCRATCH_ROWS:, :n].copy(), None
            if n == SINGLE_FAILED:
                raise ValueError("cannot truncate as asked: max_length leaves no room for the text")
            if n <= SINGLE_CUT:  # cut with overflow: the tokens are in the scratch
                k = SINGLE_CUT - n
                return self._post_one(buf[:4, :k], np.array([0, k], dtype=np.int64), opts)
            buf = self._buffers(-n + 16)

    def _post_one(self, tok, rows, opts):
        out, _, ovf = self._post.apply(tok, rows, 1, False, opts)
        return out, _one_overflow(ovf)

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
        :mod:`segkit.wordpiece.inputs`): texts and pairs may be mixed, a pair
        is a tuple, a list or a numpy row of two texts; with
        ``is_pretokenized=True`` an item is a list of words (or a pair of
        them), each word encoded on its own, offsets relative to the word.
        """
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a sequence of texts, found a single str; use encode()")
        texts = list(texts)
        mixed_options = dict(add_special_tokens=add_special_tokens, max_length=max_length, truncation=truncation,
                             padding=padding, pad_to_multiple_of=pad_to_multiple_of, stride=stride,
                             truncation_side=truncation_side, padding_side=padding_side, num_threads=num_threads)
        if is_pretokenized or (texts and type(texts[0]) is not str):  # HF's input forms (segkit/wordpiece/inputs.py)
            joined, seconds, mixed = split_batch(texts, is_pretokenized)
            if mixed is not None:
                return encode_mixed(self, texts, mixed, is_pretokenized, mixed_options)
            paired = seconds is not None
            if paired:
                joined = joined + seconds
        else:
            paired = False
            joined = texts  # each item is checked by the join (str.join raises TypeError)
        opts = self._post.options(paired, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of,
                                  stride, truncation_side, padding_side)
        try:
            if is_pretokenized:
                parts, used = [segment_words(self, joined, num_threads)], 1
            else:
                parts, used = self._segment_parts(joined, num_threads)
        except TypeError:
            if paired or is_pretokenized:
                raise
            # Not all texts: a batch mixing texts and pairs, or an error naming the item.
            mixed = split_batch(texts, False)[2]
            if mixed is None:
                raise
            return encode_mixed(self, texts, mixed, False, mixed_options)
        if not paired and self._post.is_plain(opts):  # per-thread parts are not copied into one array unless asked for
            return BatchEncoding._from_parts(parts, self.vocab, self.pad_id)
        tok, rows = concat_segments(parts, used)
        out, out_rows, ovf = self._post.apply(tok, rows, len(texts), paired, opts)
        return BatchEncoding(out, out_rows, self.vocab, self.pad_id, 2 if paired else 1, overflow=ovf,
                             pad_type_id=int(opts[O_PAD_TYPE]), padding_side=self._post.padding_side(opts))

    #: transformers' settings that :meth:`__call__` reads: the length of
    #: ``truncation=True`` / ``padding="max_length"`` without ``max_length``
    #: (transformers' "no limit" by default, as for a tokenizer made from a
    #: vocabulary file; e.g. 512 to match ``from_pretrained``), and the keys
    #: returned by default.
    model_max_length: int = VERY_LARGE_INTEGER
    model_input_names: tuple = ("input_ids", "token_type_ids", "attention_mask")

    def __call__(self, text, text_pair=None, **options: Any) -> ModelInputs:
        """Encode as ``transformers.BertTokenizerFast(...)(text, text_pair, ...)``:
        the same arguments, keys and values (see :mod:`segkit.wordpiece.call`).

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

        >>> wp = WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> wp("a b")
        {'input_ids': [2, 4, 5, 3], 'token_type_ids': [0, 0, 0, 0], 'attention_mask': [1, 1, 1, 1]}
        >>> wp(["a", "b a"], padding=True, return_tensors="np").input_ids
        array([[2, 4, 3, 0],
               [2, 5, 4, 3]])
        """
        if not options and text_pair is None and type(text) is str:
            return call_single(self, text)
        return call(self, text, text_pair, **options)

    def encode_pairs(self, texts: Sequence[str], pairs: Sequence[str], **options: Any) -> BatchEncoding:
        """:meth:`encode_batch` for two parallel lists (of equal length)."""
        if len(texts) != len(pairs):
            raise ValueError(f"encode_pairs: {len(texts)} texts but {len(pairs)} pairs; the lists must match")
        return self.encode_batch(list(zip(texts, pairs)), **options)

    # --------------------------------------------------------------- decode
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True, cleanup: bool = True) -> str:
        """Text from token ids, as HuggingFace's WordPiece decoder.

        Special tokens are dropped unless ``skip_special_tokens=False``;
        continuation pieces lose the suffix indicator and attach to the
        previous piece, other tokens are preceded by a space; with
        ``cleanup`` the spaces before ``. ? ! ,`` and in English
        contractions are removed (per token, as HuggingFace does).

        >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "!"])
        >>> wp.decode(wp.encode("unaffable !").ids)
        'unaffable!'
        """
        sfx = self.suffix_indicator
        ls = len(sfx)
        special = self.special_ids
        parts: list[str] = []
        for i in ids:
            i = int(i)
            if skip_special_tokens and i in special:
                continue
            try:
                tok = self.vocab.token(i)
            except IndexError:
                raise IndexError(f"decode: no token has id {i} (vocabulary of {len(self.vocab)} tokens)") from None
            if parts:
                tok = tok[ls:] if sfx and tok.startswith(sfx) else " " + tok
            if cleanup:
                for a, b in _DECODE_CLEANUP:
                    tok = tok.replace(a, b)
            parts.append(tok)
        return "".join(parts)

    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True, cleanup: bool = True
    ) -> list[str]:
        """:meth:`decode` of every id sequence (HF ``Tokenizer.decode_batch``;
        a numpy matrix gives one text per row).

        >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "!"])
        >>> wp.decode_batch([[1, 2, 3], [4, 1]])
        ['unaffable', '! un']
        """
        if isinstance(sequences, (str, bytes)):
            raise TypeError(f"decode_batch expects a sequence of id sequences, found {type(sequences).__name__}")
        return [self.decode(ids, skip_special_tokens=skip_special_tokens, cleanup=cleanup) for ids in sequences]

    # ------------------------------------------------------------ vocabulary
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """The vocabulary as a new ``{token: id}`` dict (HF ``get_vocab``;
        segkit has no added tokens apart from the vocabulary's own, so
        ``with_added_tokens`` changes nothing).

        >>> WordPiece(["[UNK]", "un", "##able"]).get_vocab()
        {'[UNK]': 0, 'un': 1, '##able': 2}
        """
        return {t: i for i, t in enumerate(self.vocab.id_to_token) if t is not None}

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """Number of tokens (HF ``get_vocab_size``).

        >>> WordPiece(["[UNK]", "un", "##able"]).get_vocab_size()
        3
        """
        return len(self.vocab)

    def token_to_id(self, token: str) -> int | None:
        """Id of ``token`` or None."""
        return self.vocab.id(token)

    def id_to_token(self, id: int) -> str:
        """Token of ``id``."""
        return self.vocab.token(id)

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab_size={len(self.vocab)}, suffix_indicator={self.suffix_indicator!r}, "
            f"lowercase={self.lowercase}, template={self.template!r})"
        )


# ---------------------------------------------------------------- helpers
def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected text as str, found {type(text).__name__}: {text!r:.80}")
    return text


def _classes(s: dict) -> np.ndarray:
    """The boundary class of every code point the settings imply."""
    tf = s["flavour"] == "tf_text"
    return bert_classes(("bert" if tf else s["cjk"]) if s["handle_chinese_chars"] else None, "current" if tf else "hf")


def _engine_config(s: dict, vocab: Vocabulary) -> EngineConfig:
    """The engine configuration the settings imply."""
    tf = s["flavour"] == "tf_text"
    m = s["max_input_chars_per_word"]
    return EngineConfig(
        suffix_indicator=s["suffix_indicator"],
        unknown="word",
        unk_id=vocab.id(s["unk_token"]),
        max_word_chars=None if tf else m,
        max_word_bytes=m if tf else None,
    )


def _check_setting_types(s: dict) -> None:
    """Types of the settings a model file stores (the constructor's
    arguments are checked by their use; a file's are checked here)."""
    for key in ("suffix_indicator", "unk_token", "cls_token", "sep_token", "pad_token", "cjk", "flavour"):
        if not isinstance(s[key], str):
            raise ValueError(f"setting {key} must be a str, found {s[key]!r:.80}")
    for key in ("lowercase", "clean_text", "handle_chinese_chars"):
        if not isinstance(s[key], bool):
            raise ValueError(f"setting {key} must be True or False, found {s[key]!r:.80}")
    if s["strip_accents"] is not None and not isinstance(s["strip_accents"], bool):
        raise ValueError(f"setting strip_accents must be True, False or None, found {s['strip_accents']!r:.80}")
    try:
        ok = normalize_template(s["template"]) == s["template"]
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"setting template must be None, 'bert' or a template in canonical form, found {s['template']!r:.80}")
    if s["special_tokens"] is not None and not isinstance(s["special_tokens"], list):
        raise ValueError(f"setting special_tokens must be a list or None, found {s['special_tokens']!r:.80}")


def _check_settings(s: dict, vocab: Vocabulary) -> None:
    if vocab.id(s["unk_token"]) is None:
        raise ValueError(
            f"unk_token {s['unk_token']!r} is not in the vocabulary ({len(vocab)} tokens); "
            "pass the vocabulary's unknown token as unk_token="
        )
    m = s["max_input_chars_per_word"]
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"max_input_chars_per_word must be a positive int, found {m!r}")
    if s["flavour"] not in ("hf", "tf_text"):
        raise ValueError(f"flavour must be 'hf' or 'tf_text', found {s['flavour']!r}")
    if s["cjk"] not in ("hf", "bert"):
        raise ValueError(f"cjk must be 'hf' or 'bert', found {s['cjk']!r}")
    if s["template"] == "bert":
        for key in ("cls_token", "sep_token"):
            if vocab.id(s[key]) is None:
                raise ValueError(f"{key} {s[key]!r} is not in the vocabulary; the 'bert' template needs it")
    elif s["template"] is not None:
        for which in ("single", "pair"):
            template_slots(s["template"], vocab, which)
    for t in s["special_tokens"] or ():
        if not isinstance(t, str) or not t:
            raise ValueError(f"special tokens must be non-empty strings, found {t!r}")
        if vocab.id(t) is None:
            raise ValueError(f"special token {t!r} is not in the vocabulary")
    check_post_settings(s)


#: Texts measured, joined and matched at a time by a one-thread batch.
_BLOCK_TEXTS = 2048
_CLSMASK = np.int64(3)  # honour the boundary classes of the char map
_IDENTITY = None


def _identity_table():
    global _IDENTITY
    if _IDENTITY is None:
        _IDENTITY = build_rewrite_table({})
    return _IDENTITY


def _post_processor(s: dict, vocab: Vocabulary, derived: tuple) -> PostProcessor:
    """The post-processing stage the settings imply."""
    template = s["template"]
    if template == "bert":
        template = bert_template(s["cls_token"], s["sep_token"])
    known = {s["sep_token"]: derived[4], s["cls_token"]: derived[3]}
    slots = {(pair, add): template_slots(template, vocab, "pair" if pair else "single", add, known)
             for pair in (False, True) for add in (False, True)}
    pad_id = derived[2]
    return PostProcessor(slots, s["truncation"], s["padding"], pad_id)


def _one_overflow(ovf):
    """The overflow of a one-text batch as :class:`Encoding` takes it."""
    data, rows, texts = ovf
    return (data, rows, 0, int(texts[1])) if texts[1] > 0 else None


def _wordpiece_from_parts(vocab, automaton, settings, rewrite, derived=None) -> WordPiece:
    obj = WordPiece.__new__(WordPiece)
    obj._assemble(vocab, automaton, settings, rewrite, derived)
    return obj
