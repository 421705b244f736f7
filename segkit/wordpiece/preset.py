"""The WordPiece preset: BERT's subword tokenizer on the LinMaxMatch engine."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..encoding import BatchEncoding, Encoding
from ..engine import Automaton, EngineConfig
from ..vocab import Vocabulary, VocabSource
from .pretokenize import bert_classes

_SETTINGS = ("suffix_indicator", "unk_token", "max_input_chars_per_word", "cjk")


class WordPiece:
    """WordPiece tokenization (greedy longest-match-first), in linear time.

    Parameters
    ----------
    vocab
        Path to a ``vocab.txt`` (one token per line, id = line index), a
        sequence of tokens (id = index) or a mapping token -> id.
    suffix_indicator
        Prefix of the vocabulary's continuation pieces: ``"##"`` for BERT;
        any string, including ``""``.
    unk_token
        Token emitted for a word that cannot be tokenized; it must be in the
        vocabulary.
    max_input_chars_per_word
        Words longer than this (in characters) become ``unk_token``.
    cjk
        Which CJK ideograph ranges pre-tokenization isolates: ``"hf"``
        (HuggingFace's, default), ``"bert"`` (Google's) or ``None``.
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
    single ``unk_token`` spanning the word.  No normalization is applied.

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
        cjk: str | None = "hf",
        duplicates: str = "error",
    ) -> None:
        vocab = Vocabulary.load(vocab, duplicates=duplicates)
        unk_id = vocab.id(unk_token)
        if unk_id is None:
            raise ValueError(
                f"unk_token {unk_token!r} is not in the vocabulary ({len(vocab)} tokens); "
                "pass the vocabulary's unknown token as unk_token="
            )
        if isinstance(max_input_chars_per_word, bool) or not isinstance(max_input_chars_per_word, int) or max_input_chars_per_word < 1:
            raise ValueError(f"max_input_chars_per_word must be a positive int, found {max_input_chars_per_word!r}")
        config = EngineConfig(
            suffix_indicator=suffix_indicator,
            unknown="word",
            unk_id=unk_id,
            max_word_chars=max_input_chars_per_word,
        )
        automaton = Automaton.build(vocab.tokens, vocab.ids, config, bert_classes(cjk))
        self._assemble(vocab, automaton, suffix_indicator, unk_token, max_input_chars_per_word, cjk)

    def _assemble(self, vocab, automaton, suffix_indicator, unk_token, max_input_chars_per_word, cjk) -> None:
        self.vocab = vocab
        self.automaton = automaton
        self.suffix_indicator = suffix_indicator
        self.unk_token = unk_token
        self.unk_id = automaton.config.unk_id
        self.max_input_chars_per_word = max_input_chars_per_word
        self.cjk = cjk

    # ---------------------------------------------------- saving and loading
    @classmethod
    def from_pretrained(cls, name: str) -> "WordPiece":
        """A bundled vocabulary by name (no network access, ever).

        Built once and then kept in segkit's model cache (see
        :mod:`segkit.cache`), so later starts load it without a build.

        >>> WordPiece.from_pretrained("bert-base-multilingual-cased").tokenize("Tokenizers")
        ['To', '##ken', '##izer', '##s']
        """
        from ..cache import cache_key, cached
        from ..models import load
        from ..resources import bundled_vocabulary

        path = bundled_vocabulary(name)
        settings = {"suffix_indicator": "##", "unk_token": "[UNK]", "max_input_chars_per_word": 100, "cjk": "hf"}
        key = cache_key(f"wordpiece-{name}", settings, Path(path).read_bytes())
        return cached(key, lambda: cls(path, **settings), load)

    def save(self, path: str | os.PathLike) -> None:
        """Write this tokenizer to one file; :func:`segkit.load` reads it back
        in milliseconds (memory-mapped, nothing rebuilt)."""
        from ..models import save

        save(self, path)

    def _model_state(self):
        from ..models import automaton_arrays, vocabulary_state

        aconf, arrays = automaton_arrays(self.automaton, "automaton")
        varrays, blobs = vocabulary_state(self.vocab)
        arrays.update(varrays)
        config = {k: getattr(self, k) for k in _SETTINGS}
        config["automaton"] = aconf
        return config, arrays, blobs

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        from ..models import automaton_from_arrays, vocabulary_from_state

        vocab = vocabulary_from_state(arrays, blobs, source=source)
        automaton = automaton_from_arrays(config["automaton"], arrays, "automaton", source)
        obj = cls.__new__(cls)
        obj._assemble(vocab, automaton, *(config[k] for k in _SETTINGS))
        return obj

    def __reduce__(self):
        # Pickles as arrays (automaton) and a packed vocabulary: no rebuild.
        return (_wordpiece_from_parts, (self.vocab, self.automaton, tuple(getattr(self, k) for k in _SETTINGS)))

    # ------------------------------------------------------------- tokenize
    def tokenize(self, text: str) -> list[str]:
        """Pre-tokenize and WordPiece ``text`` (no normalization).

        >>> WordPiece(["[UNK]", "a", "##b", ","]).tokenize("ab, c")
        ['a', '##b', ',', '[UNK]']
        """
        itos = self.vocab.id_to_token
        return [itos[i] for i in self.automaton.segment_id_list(text)]

    def tokenize_word(self, word: str) -> list[str]:
        """WordPiece one word as it is (no pre-tokenization).

        >>> WordPiece(["[UNK]", "a", "##.", "##b"]).tokenize_word("a.b")
        ['a', '##.', '##b']
        """
        itos = self.vocab.id_to_token
        return [itos[i] for i in self.automaton.segment_id_list(word, pretokenize=False)]

    # --------------------------------------------------------------- encode
    def encode(self, text: str) -> Encoding:
        """Ids, tokens and character offsets of ``text``."""
        rows = self.automaton.segment_rows(text)
        return Encoding(rows[0], rows[1], rows[2], self.vocab.id_to_token)

    def encode_batch(self, texts: Sequence[str]) -> BatchEncoding:
        """Encode many texts in one compiled call; a sequence of :class:`Encoding`."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a sequence of texts, found a single str; use encode()")
        ids, st, en, rows = self.automaton.segment_batch(texts)
        return BatchEncoding(ids, st, en, rows, self.vocab.id_to_token)

    def encode_ids(self, text: str) -> list[int]:
        """Just the ids of ``text`` (the fastest path for a single text)."""
        return self.automaton.segment_id_list(text)

    # --------------------------------------------------------------- decode
    def decode(self, ids: Sequence[int]) -> str:
        """Join tokens back into text: continuation pieces lose the suffix
        indicator and attach to the previous piece; other tokens are
        separated by a space.

        >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "!"])
        >>> wp.decode(wp.encode("unaffable !").ids)
        'unaffable !'
        """
        sfx = self.suffix_indicator
        ls = len(sfx)
        parts: list[str] = []
        for k, i in enumerate(ids):
            tok = self.vocab.token(int(i))
            if k and sfx and tok.startswith(sfx):
                parts.append(tok[ls:])
            elif k:
                parts.append(" " + tok)
            else:
                parts.append(tok)
        return "".join(parts)

    # ------------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> int | None:
        """Id of ``token`` or None."""
        return self.vocab.id(token)

    def id_to_token(self, id: int) -> str:
        """Token of ``id``."""
        return self.vocab.token(id)

    def __repr__(self) -> str:
        return (
            f"WordPiece(vocab_size={len(self.vocab)}, suffix_indicator={self.suffix_indicator!r}, "
            f"unk_token={self.unk_token!r}, max_input_chars_per_word={self.max_input_chars_per_word})"
        )


def _wordpiece_from_parts(vocab, automaton, settings) -> WordPiece:
    obj = WordPiece.__new__(WordPiece)
    obj._assemble(vocab, automaton, *settings)
    return obj
