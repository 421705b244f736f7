"""Decoding: token ids back to text, as HuggingFace's WordPiece decoder."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ...models.vocabulary import Vocabulary

# HuggingFace's cleanup: spaces before punctuation and in English contractions.
_CLEANUP = (
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


class Decoder:
    """Ids to text for a vocabulary whose continuation pieces start with
    ``suffix_indicator``; ``special_ids`` are dropped when asked."""

    def __init__(self, vocab: Vocabulary, suffix_indicator: str, special_ids: frozenset) -> None:
        self.vocab = vocab
        self.suffix_indicator = suffix_indicator
        self.special_ids = special_ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True, cleanup: bool = True) -> str:
        """See :meth:`segkit.WordPiece.decode`."""
        sfx = self.suffix_indicator
        ls = len(sfx)
        special = self.special_ids
        vocab = self.vocab
        parts: list[str] = []
        if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Iterable):
            raise TypeError(f"decode: ids must be a sequence of ints, found {type(ids).__name__}")
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise TypeError(f"decode: ids must be ints, found {type(i).__name__} {i!r:.40}")
            i = int(i)
            if skip_special_tokens and i in special:
                continue
            try:
                tok = vocab.token(i)
            except IndexError:
                raise IndexError(f"decode: no token has id {i} (vocabulary of {len(vocab)} tokens)") from None
            if parts:
                tok = tok[ls:] if sfx and tok.startswith(sfx) else " " + tok
            if cleanup:
                for a, b in _CLEANUP:
                    tok = tok.replace(a, b)
            parts.append(tok)
        return "".join(parts)

    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True, cleanup: bool = True
    ) -> list[str]:
        """See :meth:`segkit.WordPiece.decode_batch`."""
        if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Iterable):
            raise TypeError(f"decode_batch expects a sequence of id sequences, found {type(sequences).__name__}")
        decode = self.decode
        return [decode(ids, skip_special_tokens, cleanup) for ids in sequences]
