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
from .postprocess import N_OPTIONS, O_BUDGET, O_CLS, O_MODE, O_MULT, O_PAD_ID, O_PAD_TO, O_SEP, O_TEMPLATE
from .postprocess import TRUNCATION, assemble, encode_single
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
        ``[CLS] A [SEP] B [SEP]``; None (default): no special tokens are added.
    cls_token, sep_token, pad_token
        The tokens the template and padding use.
    truncation, padding
        Defaults for :meth:`encode` (see there); None: off.
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
            "template": template,
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
        self._opts_cache: dict = {}
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
    def _post_options(self, pair: bool, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of):
        template = self.template == "bert" and add_special_tokens
        tdef = self.truncation or {}
        pdef = self.padding or {}
        if truncation is None:
            truncation = tdef.get("strategy", "longest_first") if tdef else False
        if truncation is True:
            truncation = "longest_first"
        if padding is None:
            padding = ("max_length" if pdef.get("length") else "longest") if pdef else False
        if padding is True:
            padding = "longest"
        # An explicit max_length serves truncation and padding; otherwise each
        # takes its own default length (tokenizer.json may set both).
        pad_length = max_length if max_length is not None else pdef.get("length")
        if max_length is None and truncation:
            max_length = tdef.get("max_length")
        if pad_to_multiple_of is None:
            pad_to_multiple_of = pdef.get("pad_to_multiple_of") or 0
        nspec = (3 if pair else 2) if template else 0
        mode = 0
        budget = 0
        if truncation:
            if truncation not in TRUNCATION:
                raise ValueError(f"truncation must be True, False or one of {sorted(TRUNCATION)}, found {truncation!r}")
            if max_length is None:
                raise ValueError("truncation needs max_length")
            if not isinstance(max_length, int) or max_length < nspec:
                raise ValueError(
                    f"max_length={max_length!r} is smaller than the {nspec} special tokens the template "
                    f"adds to {'a pair' if pair else 'a text'}"
                )
            mode = TRUNCATION[truncation]
            budget = max_length - nspec
        if padding is False or padding is None:
            pad_to = -1
        elif padding == "longest":
            pad_to = 0
        elif padding == "max_length":
            if not pad_length:
                raise ValueError("padding='max_length' needs max_length")
            pad_to = int(pad_length)
        else:
            raise ValueError(f"padding must be True, False, 'longest' or 'max_length', found {padding!r}")
        if template and (self.cls_id is None or self.sep_id is None):
            raise ValueError(f"the template needs {self.cls_token!r} and {self.sep_token!r} in the vocabulary")
        plain = not template and mode == 0 and pad_to == -1 and not pair
        return plain, template, budget, mode, pad_to, int(pad_to_multiple_of or 0)

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

        >>> wp = WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> e = wp.encode("a b", "b", max_length=8, padding="max_length")
        >>> e.ids, e.type_ids, e.attention_mask
        ([2, 4, 5, 3, 5, 3, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 0, 0])
        """
        if type(text) is not str:
            _check_text(text)
        if pair is None and self.flavour == "hf":
            opts = self._opts_cache.get((add_special_tokens, max_length, truncation, padding, pad_to_multiple_of))
            if opts is None:
                opts = self._single_options(add_special_tokens, max_length, truncation, padding, pad_to_multiple_of)
            return Encoding(self._encode_single(text, opts), self.vocab)
        if pair is not None:
            _check_text(pair)
        plain, template, budget, mode, pad_to, mult = self._post_options(
            pair is not None, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of
        )
        if plain:
            return Encoding(self._segment_one(text), self.vocab)
        if pair is None:
            tok = self._segment_one(text)
            rows = np.array([0, tok.shape[1]], dtype=np.int64)
        else:
            tok, rows = self._segment([text, pair])
        out, out_rows = self._assemble_out(tok, rows, 1, pair is not None, template, budget, mode, pad_to, mult)
        return Encoding(out, self.vocab, 1 if pair is None else 2)

    def _single_options(self, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of) -> np.ndarray:
        key = (add_special_tokens, max_length, truncation, padding, pad_to_multiple_of)
        cache = self._opts_cache
        opts = cache.get(key)
        if opts is None:
            plain, template, budget, mode, pad_to, mult = self._post_options(
                False, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of
            )
            opts = np.zeros(N_OPTIONS, dtype=np.int64)
            opts[O_TEMPLATE] = template
            opts[O_CLS] = self.cls_id or 0
            opts[O_SEP] = self.sep_id or 0
            opts[O_BUDGET] = budget
            opts[O_MODE] = mode
            opts[O_PAD_TO] = pad_to
            opts[O_MULT] = mult
            opts[O_PAD_ID] = self.pad_id
            opts.setflags(write=False)
            if len(cache) < 64:
                cache[key] = opts
        return opts

    def _buffers(self, need: int) -> np.ndarray:
        """Per-thread scratch for single texts (grown, never shared): one
        int32 array, rows as :func:`encode_single` expects them."""
        loc = self._local
        buf = getattr(loc, "buf", None)
        if buf is None or buf.shape[1] < need:
            buf = loc.buf = np.empty((SCRATCH_ROWS + 7, max(need + 8, 512)), np.int32)
        return buf

    def _encode_single(self, text: str, opts: np.ndarray) -> np.ndarray:
        """(7, n) encoding of one text in one compiled call (per-thread buffers)."""
        if len(text) > _MAX_SCRATCH:
            tok, rows = self._segment([text])
            plain = not opts[O_TEMPLATE] and opts[O_MODE] == 0 and opts[O_PAD_TO] < 0
            if plain:
                return tok
            out, _ = self._assemble_out(
                tok, rows, 1, False, bool(opts[O_TEMPLATE]), int(opts[O_BUDGET]), int(opts[O_MODE]), int(opts[O_PAD_TO]), int(opts[O_MULT])
            )
            return out
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
                return buf[SCRATCH_ROWS:, :n].copy()
            if n == -(1 << 40):
                raise ValueError("cannot truncate as asked: max_length leaves no room for the text")
            buf = self._buffers(-n + 16)

    def _assemble_out(self, tok, rows, n, paired, template, budget, mode, pad_to, mult):
        out, out_rows, status = assemble(
            tok, rows, n, paired, template, self.cls_id or 0, self.sep_id or 0, budget, mode, pad_to, mult, self.pad_id
        )
        if status >= 0:
            raise ValueError(
                f"text {status}: cannot truncate as asked: the sequence to truncate is too short "
                "for max_length with the other sequence and the special tokens"
            )
        return out, out_rows

    def encode_batch(
        self,
        texts: Sequence[TextOrPair],
        *,
        add_special_tokens: bool = True,
        max_length: int | None = None,
        truncation: bool | str | None = None,
        padding: bool | str | None = None,
        pad_to_multiple_of: int | None = None,
        num_threads: int | None = None,
    ) -> BatchEncoding:
        """Encode many texts or pairs ``(text, pair)`` in a few compiled calls.

        Takes the same options as :meth:`encode`; ``padding=True`` pads to
        the longest encoding of the batch.  ``num_threads`` (default one; 0
        for all cores) splits large batches over threads (the compiled
        kernels release the GIL); small batches stay on one thread.  Returns a
        :class:`BatchEncoding` (a sequence of :class:`Encoding`;
        ``.to_numpy()`` gives matrices).
        """
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a sequence of texts, found a single str; use encode()")
        texts = list(texts)
        paired = bool(texts) and isinstance(texts[0], (tuple, list))
        if paired:
            firsts, seconds = [], []
            for i, item in enumerate(texts):
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise TypeError(
                        f"encode_batch: the item at index {i} is {type(item).__name__} {item!r:.60}; a batch holds "
                        "either texts or (text, pair) tuples, not both"
                    )
                for j, part in enumerate(item):
                    if not isinstance(part, str):
                        raise TypeError(
                            f"encode_batch: the {'second' if j else 'first'} text of the pair at index {i} is "
                            f"{type(part).__name__} {part!r:.60}; expected str"
                        )
                firsts.append(item[0])
                seconds.append(item[1])
            joined = firsts + seconds
        else:
            joined = texts  # each item is checked by the join (str.join raises TypeError)
        plain, template, budget, mode, pad_to, mult = self._post_options(
            paired, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of
        )
        try:
            parts, used = self._segment_parts(joined, num_threads)
        except TypeError:
            for i, item in enumerate(texts):
                if not isinstance(item, str):
                    raise TypeError(
                        f"encode_batch: the text at index {i} is {type(item).__name__} {item!r:.60}; expected str"
                    ) from None
            raise
        if plain:  # per-thread parts are not copied into one array unless asked for
            return BatchEncoding._from_parts(parts, self.vocab, self.pad_id)
        tok, rows = concat_segments(parts, used)
        out, out_rows = self._assemble_out(tok, rows, len(texts), paired, template, budget, mode, pad_to, mult)
        return BatchEncoding(out, out_rows, self.vocab, self.pad_id, 2 if paired else 1)

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

        >>> import pyarrow as pa
        >>> wp = WordPiece(["[UNK]", "a", "##b"])
        >>> wp.encode_arrow(pa.array(["ab", "a a"])).column("input_ids").to_pylist()
        [[1, 2], [1, 1]]
        """
        from ..arrow import encode_arrow_batch

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

        >>> import datasets
        >>> wp = WordPiece(["[UNK]", "a", "##b"])
        >>> ds = datasets.Dataset.from_dict({"text": ["ab", "a a"]})
        >>> datasets.disable_progress_bars()
        >>> ds.map(wp.as_datasets_map("text"), batched=True)[1]
        {'text': 'a a', 'input_ids': [1, 1], 'token_type_ids': [0, 0], 'attention_mask': [1, 1], 'special_tokens_mask': [0, 0], 'offset_mapping': [[0, 1], [2, 3]]}
        """
        from ..arrow import datasets_map_function

        return datasets_map_function(self, column, pair_column, **options)

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
    if s["special_tokens"] is not None and not isinstance(s["special_tokens"], list):
        raise ValueError(f"setting special_tokens must be a list or None, found {s['special_tokens']!r:.80}")


def _check_post_settings(s: dict) -> None:
    """``truncation`` and ``padding``: None or dicts of the keys
    :meth:`WordPiece._post_options` reads, with values it accepts."""
    t = s["truncation"]
    if t is not None:
        if not isinstance(t, dict) or not set(t) <= {"max_length", "strategy"}:
            raise ValueError(f"truncation must be None or a dict with keys max_length, strategy; found {t!r:.80}")
        if t.get("strategy", "longest_first") not in TRUNCATION:
            raise ValueError(f"truncation strategy must be one of {sorted(TRUNCATION)}, found {t.get('strategy')!r:.80}")
        m = t.get("max_length")
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
            raise ValueError(f"truncation max_length must be a non-negative int or None, found {m!r:.80}")
    p = s["padding"]
    if p is not None:
        if not isinstance(p, dict) or not set(p) <= {"length", "pad_to_multiple_of"}:
            raise ValueError(f"padding must be None or a dict with keys length, pad_to_multiple_of; found {p!r:.80}")
        for key in ("length", "pad_to_multiple_of"):
            m = p.get(key)
            if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
                raise ValueError(f"padding {key} must be a non-negative int or None, found {m!r:.80}")


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
    if s["template"] not in (None, "bert"):
        raise ValueError(f"template must be 'bert' or None, found {s['template']!r}")
    if s["template"] == "bert":
        for key in ("cls_token", "sep_token"):
            if vocab.id(s[key]) is None:
                raise ValueError(f"{key} {s[key]!r} is not in the vocabulary; the 'bert' template needs it")
    for t in s["special_tokens"] or ():
        if not isinstance(t, str) or not t:
            raise ValueError(f"special tokens must be non-empty strings, found {t!r}")
        if vocab.id(t) is None:
            raise ValueError(f"special token {t!r} is not in the vocabulary")
    _check_post_settings(s)


#: Texts measured, joined and matched at a time by a one-thread batch.
_BLOCK_TEXTS = 2048
_CLSMASK = np.int64(3)  # honour the boundary classes of the char map
_IDENTITY = None


def _identity_table():
    global _IDENTITY
    if _IDENTITY is None:
        _IDENTITY = build_rewrite_table({})
    return _IDENTITY


def _wordpiece_from_parts(vocab, automaton, settings, rewrite, derived=None) -> WordPiece:
    obj = WordPiece.__new__(WordPiece)
    obj._assemble(vocab, automaton, settings, rewrite, derived)
    return obj
