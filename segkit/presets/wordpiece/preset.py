"""The WordPiece preset: BERT's subword tokenizer on the LinMaxMatch engine.

:class:`WordPiece` assembles the stages of its pipeline and passes a call
through them, in one direction:

* :mod:`~segkit.presets.wordpiece.settings`: the settings, checked, and what they
  imply (engine configuration, boundary classes, normalization table);
* :mod:`~segkit.presets.wordpiece.matching`: the compiled pass (normalization,
  pre-tokenization, matching) from texts to token arrays;
* :mod:`~segkit.presets.pipeline.options`: the caller's post-processing options,
  resolved and applied by the kernel of :mod:`~segkit.presets.pipeline.postprocess`;
* :mod:`segkit.results.encoding`: the results, :class:`~segkit.Encoding` and
  :class:`~segkit.BatchEncoding`;
* :mod:`~segkit.presets.wordpiece.decoding`: ids back to text;
* :mod:`~segkit.presets.wordpiece.tokenizer_json`: HuggingFace ``tokenizer.json``
  in and out.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...models.cache import cacheable_file
from ...results.encoding import Encoding, _itos
from ...engine import Automaton
from ...models.vocabulary import Vocabulary, VocabSource
from ..base import Preset
from ..transformers_names import TransformersNames
from ...runtime import interrupts
from ..pipeline.encoder import ASK, HFEncoder, _check_text
from . import added_tokens as _added
from .decoding import Decoder
from .matching import Matcher
from . import model_file
from .state import TokenizerState
from ..pipeline.options import PostProcessor
from ..pipeline.stages import Stages
from ..pipeline.postprocess import K_A, K_SPECIAL, O_MODE, O_NSLOTS, O_PAD_TO, O_SLOTS
from ..pipeline.template import check_template_tokens, normalize_template
from .settings import (
    CHANGEABLE,
    SETTINGS,
    boundary_classes,
    check_settings,
    derived_ids,
    engine_config,
    packed_rewrite,
)



class WordPiece(HFEncoder, TransformersNames, TokenizerState, Preset):
    """WordPiece tokenization (greedy longest-match-first), in linear time.

    Parameters
    ----------
    vocab
        Path to a ``vocab.txt`` (one token per line, id = line index), a
        sequence of tokens (id = index) or a mapping token -> id.  The
        constructor normalizes nothing unless asked (no lowercasing: with
        an uncased BERT vocabulary, uppercase words become ``unk_token``);
        ``WordPiece.from_pretrained("path/vocab.txt")`` or
        :meth:`bert` give BERT's pipeline.  A file of
        64 KiB or more is built once and then kept in segkit's model cache
        (:mod:`segkit.models.cache`; ``SEGKIT_CACHE_DIR=off`` disables it), keyed
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

    @interrupts.interruptible(source="vocab")
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
        template: str | dict | None = None,
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
            "special_tokens": _special_list(special_tokens),
            "template": normalize_template(template),
            "cls_token": cls_token,
            "sep_token": sep_token,
            "pad_token": pad_token,
            "truncation": truncation,
            "padding": padding,
            "flavour": flavour,
        }
        declared = template  # (HF's form may list token strings: checked against the vocabulary below)
        source = cacheable_file(vocab)
        if source is not None:
            # A large vocabulary file: the built model is kept in segkit's
            # model cache, so the next process maps it instead of building.
            built = self._cached("wordpiece-file", {**settings, "duplicates": duplicates}, source,
                                 lambda: WordPiece(Vocabulary.load(vocab, duplicates=duplicates), **settings))
            if built._settings == settings:
                check_template_tokens(declared, built.vocab)
                self._assemble(built.vocab, built.automaton, settings, built._rewrite, built._derived)
                return
        vocab = Vocabulary.load(vocab, duplicates=duplicates)
        check_settings(settings, vocab)
        check_template_tokens(declared, vocab)
        config = engine_config(settings, vocab)
        automaton = Automaton.build(vocab.tokens, vocab.ids, config, boundary_classes(settings))
        self._assemble(vocab, automaton, settings, None)
        self._check_pad_id(self.pad_id, settings)


    # ------------------------------------------------------------ assembly
    def _assemble(self, vocab: Vocabulary, automaton: Automaton, settings: dict, rewrite, derived=None) -> None:
        """Set the settings and build the stages (``rewrite``, ``derived``:
        the normalization table and :func:`~segkit.presets.wordpiece.settings.derived_ids`
        when already known, else None)."""
        self.vocab = vocab
        self.automaton = automaton
        for k in SETTINGS:
            if k not in CHANGEABLE:  # (those are read from the stages, below)
                setattr(self, k, settings[k])
        self.unk_id = automaton.config.unk_id
        if derived is None:
            derived = derived_ids(settings, vocab)
        specials, special_ids, _, self.cls_id, self.sep_id = derived
        self.special_token_list = list(specials)
        self.special_ids = frozenset(special_ids)
        if rewrite is None:
            rewrite = packed_rewrite(settings, specials, special_ids)
        # The stages a call goes through, in order, published as one state
        # (see segkit.presets.pipeline.stages); changes hold the lock.
        self._lock = threading.Lock()
        matcher = Matcher(automaton.packed, rewrite, byte_offsets=self.flavour == "tf_text")
        self._stages = Stages(dict(settings), derived, matcher, matcher, PostProcessor.from_settings(settings, vocab, derived),
                              None, vocab, Decoder(vocab, self.suffix_indicator, self.special_ids))

    # The current state's parts (each read on its own: a method reads
    # self._stages once and uses that state's parts together).
    @property
    def _settings(self) -> dict:
        return self._stages.settings

    @property
    def _derived(self) -> tuple:
        return self._stages.derived

    @property
    def _matcher(self):
        return self._stages.matcher

    @property
    def _plain_matcher(self):
        return self._stages.plain_matcher

    @property
    def _post(self) -> PostProcessor:
        return self._stages.post

    @property
    def _added(self):
        return self._stages.added

    @property
    def _names(self):
        return self._stages.names

    @property
    def _decoder(self) -> Decoder:
        return self._stages.decoder

    @property
    def pad_id(self) -> int:
        """Id of the padding token (see :meth:`enable_padding`)."""
        return self._stages.derived[2]

    @property
    def truncation(self) -> dict | None:
        """The default truncation (see :meth:`enable_truncation`), or None."""
        return self._stages.settings["truncation"]

    @property
    def padding(self) -> dict | None:
        """The default padding (see :meth:`enable_padding`), or None."""
        return self._stages.settings["padding"]

    @property
    def pad_token(self) -> str:
        """The padding token."""
        return self._stages.settings["pad_token"]

    @property
    def _rewrite(self) -> np.ndarray:
        """The packed normalization table of the compiled pass."""
        return self._matcher.rewrite

    @property
    def _packed(self):
        """The automaton's packed arrays, as the compiled pass reads them."""
        return self._matcher.packed

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
    @interrupts.interruptible()
    def from_pretrained(cls, name: str | os.PathLike) -> "WordPiece":
        """A bundled BERT tokenizer by name, with its casing (no network
        access), or a HF model folder, ``tokenizer.json`` or ``vocab.txt``.

        ``bert-base-uncased`` lowercases and strips accents;
        ``bert-base-multilingual-cased`` does neither; ``bert-base-chinese``
        lowercases (its vocabulary has no uppercase Latin tokens).  All use
        BERT's normalization, special tokens and template, and know their
        ``model_max_length`` (512).  Built once, then kept in segkit's model
        cache (:mod:`segkit.models.cache`), as every large vocabulary file is.

        A folder (what transformers' ``save_pretrained`` writes) is read
        from its ``tokenizer.json``, or else its ``vocab.txt`` with BERT's
        pipeline, and its ``tokenizer_config.json`` (``model_max_length``,
        ``do_lower_case``, ``clean_up_tokenization_spaces``).  A
        ``vocab.txt`` file gets BERT's pipeline, lowercasing as
        transformers' ``BertTokenizer`` does by default.  A bundled name wins
        over a file or folder of that name unless it is written as a path
        (``./bert-base-uncased``).

        >>> wp = WordPiece.from_pretrained("bert-base-uncased")
        >>> wp.tokenize("Hello!"), wp.model_max_length
        (['hello', '!'], 512)
        """
        from .hf_folder import load_pretrained

        return load_pretrained(cls, name)

    @classmethod
    @interrupts.interruptible(source="path")
    def from_tokenizer_json(cls, path: str | os.PathLike) -> "WordPiece":
        """Load a HuggingFace ``tokenizer.json`` whose model is WordPiece.

        The vocabulary, unk token, continuation prefix, word length limit,
        ``BertNormalizer`` settings, special (added) tokens, the
        post-processor (``TemplateProcessing`` or ``BertProcessing`` of
        BERT's shape) and default truncation/padding are read from it.
        Raises ValueError naming the problem for anything segkit cannot
        reproduce exactly (another model type, another normalizer or
        pre-tokenizer, another template).  A folder: its ``tokenizer.json``,
        with its ``tokenizer_config.json``'s ``model_max_length`` (see
        :meth:`from_pretrained`).
        """
        from .tokenizer_json import read_tokenizer_json

        if isinstance(path, (str, os.PathLike)) and os.path.isdir(path):  # a model folder: its tokenizer.json and tokenizer_config.json
            from .hf_folder import apply_config, read_config

            folder = os.fspath(path)
            wp = cls.from_tokenizer_json(os.path.join(folder, "tokenizer.json"))
            return apply_config(wp, read_config(Path(folder)), os.path.join(folder, "tokenizer_config.json"))
        vocab, kwargs = read_tokenizer_json(path)
        rows, plain = kwargs.pop("added_tokens")
        # The padding id may be an added token's: set once they are there.
        pad_id = (kwargs.get("padding") or {}).pop("pad_id", None)
        try:
            wp = cls(vocab, **kwargs)
        except ValueError as e:  # a setting or the vocabulary: name the file
            raise type(e)(f"{path}: {e}") from None
        # Added tokens with flags, or not in the vocabulary, are added one by
        # one as HF adds them; either way the file's ids are compared with
        # the ids the tokens get (a warning names those that differ).
        _added.replay_added(wp, rows, plain, str(path))
        if pad_id is not None:
            try:
                wp._set_post(padding=dict(wp.padding, pad_id=pad_id))
            except ValueError as e:
                raise ValueError(f"{path}: {e}") from None
        return wp

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

    def save_pretrained(self, folder: str | os.PathLike) -> list[str]:
        """Write a folder that transformers' ``AutoTokenizer.from_pretrained``
        and :meth:`from_pretrained` load: ``tokenizer.json``
        (:meth:`save_tokenizer_json`), ``tokenizer_config.json``
        (``model_max_length``, ``do_lower_case``, the special tokens) and
        ``special_tokens_map.json``.  Returns the paths written.

        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> paths = WordPiece.from_pretrained("bert-base-uncased").save_pretrained(folder)
        >>> WordPiece.from_pretrained(folder).model_max_length
        512
        """
        from .hf_folder import save_pretrained

        return save_pretrained(self, folder)

    # transformers' names (segkit.presets.transformers_names): the contract.
    def _special_token(self, role: str) -> str | None:
        st = self._stages
        token = {"unk": st.settings["unk_token"], "cls": st.settings["cls_token"], "sep": st.settings["sep_token"],
                 "pad": st.settings["pad_token"], "mask": "[MASK]"}.get(role)
        return token if token is not None and self.token_to_id(token) is not None else None

    def _special_ids(self) -> set[int]:
        return set(self._stages.decoder.special_ids)

    def _model_state(self):
        return model_file.model_state(self)

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        return model_file.from_model(cls, config, arrays, blobs, source)

    def _parts(self) -> tuple:
        # Pickles as arrays (automaton, tables) and a packed vocabulary: no rebuild.
        st = self._stages
        return (self.vocab, self.automaton, st.settings, st.matcher.rewrite, st.derived, _added.added_state(st),
                model_file.transformers_state(self))

    @classmethod
    def _from_parts(cls, vocab, automaton, settings, rewrite, derived=None, added=None,
                    transformers=None) -> "WordPiece":
        obj = cls.__new__(cls)
        obj._assemble(vocab, automaton, settings, rewrite, derived)
        if added is not None:
            _added.restore_added(obj, added, "pickle")
        model_file.restore_transformers(obj, transformers, "pickle")
        return obj


    # ------------------------------------------------------------- tokenize
    def _segment(self, texts: Sequence[str], num_threads: int | None = None):
        """(4, n) tokens (ids, starts, ends, words; offsets in the original
        texts) and row splits, after normalization and special tokens."""
        return self._stages.matcher.segment(texts, num_threads)

    def tokenize(self, text: str) -> list[str]:
        """Normalize (as configured), pre-tokenize and WordPiece ``text``.

        >>> WordPiece(["[UNK]", "a", "##b", ","]).tokenize("ab, c")
        ['a', '##b', ',', '[UNK]']
        """
        st = self._stages
        itos = _itos(st.names)
        return [itos[i] for i in st.matcher.segment_one(_check_text(text))[0].tolist()]

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
        return self._stages.matcher.segment_one(_check_text(text))[0].tolist()

    # --------------------------------------------------------------- encode
    # (encode, encode_batch, __call__, encode_arrow: the shared HFEncoder;
    # WordPiece adds its fused paths)
    _strip_map = ASK  # (add_tokens changes them)

    def _strip_tokens(self) -> dict | None:
        added = self._stages.added
        if added is None:
            return None
        got = self.__dict__.get("_strip")
        if got is None or got[0] is not added:  # (add_tokens makes a new added vocabulary)
            took = [i for i, t in added.tokens.items() if t.lstrip or t.rstrip]
            names = self._model_names(added)
            if names or any(added.tokens[i].normalized for i in took):
                # The text's matches again, with the normalized text each
                # matched (BERT's spaces put around CJK characters included).
                from ...results.encoding import MatchedStrings

                fix = MatchedStrings(added.matched, took, names)
            else:
                from ..added_matches import word

                fix = {i: (t.lstrip, t.rstrip, None, word().match if t.single_word else None)
                       for i, t in added.tokens.items() if t.lstrip or t.rstrip}
            got = self.__dict__["_strip"] = (added, fix)
        return got[1]

    def _model_names(self, added) -> dict[int, str]:
        """``{id: string}`` of the ids an added token took from the
        vocabulary under another name (see
        :class:`~segkit.results.encoding.MatchedStrings`)."""
        itos = self._stages.names
        out = {}
        for i in added.tokens:
            if i < len(self.vocab):
                own = self.vocab.id_to_token[i]
                if own != (itos.token(i) if hasattr(itos, "token") else itos[i]):
                    out[i] = own
        return out

    def _encode_fast(self, st: Stages, text: str, opts: np.ndarray) -> Encoding | None:
        """One text in one compiled call (rewrite, match, template,
        truncation, padding: :func:`~segkit.presets.wordpiece.single.encode_single`)."""
        if self.flavour != "hf":
            return None
        data, ovf = st.matcher.encode_one(text, opts, st.post)
        return Encoding(data, st.names, 1, ovf)

    def _fused_template(self, st: Stages, opts: np.ndarray):
        """``(first id, last id)`` when the matching pass itself can put the
        template around each single text (a template of two special tokens
        around ``$A``, type ids 0, no truncation or padding, the HF flavour,
        no added tokens), else None."""
        if (opts[O_NSLOTS] != 3 or opts[O_MODE] != 0 or opts[O_PAD_TO] >= 0 or self.flavour != "hf"
                or st.added is not None):
            return None
        s = opts[O_SLOTS:O_SLOTS + 9]
        if (s[0], s[3], s[6]) != (K_SPECIAL, K_A, K_SPECIAL) or s[2] or s[5] or s[8]:
            return None
        return int(s[1]), int(s[7])

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
        return self._stages.decoder.decode(ids, skip_special_tokens, cleanup)

    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True, cleanup: bool = True
    ) -> list[str]:
        """:meth:`decode` of every id sequence (HF ``Tokenizer.decode_batch``;
        a numpy matrix gives one text per row).

        >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "!"])
        >>> wp.decode_batch([[1, 2, 3], [4, 1]])
        ['unaffable', '! un']
        """
        return self._stages.decoder.decode_batch(sequences, skip_special_tokens, cleanup)

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab_size={len(self.vocab)}, suffix_indicator={self.suffix_indicator!r}, "
            f"lowercase={self.lowercase}, template={_template_repr(self.template)})"
        )


# ---------------------------------------------------------------- helpers
def _special_list(special_tokens: object) -> list | None:
    """``special_tokens`` as a list (None stays None); a TypeError naming it
    for a single string or anything that is not a sequence."""
    if special_tokens is None:
        return None
    if isinstance(special_tokens, (str, bytes)) or not isinstance(special_tokens, Iterable):
        raise TypeError(f"special_tokens must be a list of str, found {type(special_tokens).__name__} "
                        f"{special_tokens!r:.60}")
    return list(special_tokens)


def _template_repr(template) -> str:
    """``'bert'``, ``None`` or a template in HF's string syntax, for repr."""
    if isinstance(template, dict):
        from ..pipeline.template import template_to_strings

        single, pair = template_to_strings(template)
        return repr({"single": single, "pair": pair})
    return repr(template)

