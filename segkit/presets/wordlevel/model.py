"""The WordLevel words model: a whole part is a token.

>>> m = WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]")
>>> ids, starts, ends, splits = m.encode_words(["hello", "there"])
>>> ids.tolist(), ends.tolist(), splits.tolist()
([0, 2], [5, 5], [0, 1, 2])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


class WordLevel:
    """HF's ``models.WordLevel``: a part's id, else ``unk_token``'s (a part
    with neither raises ValueError, where HF raises ``MissingUnkToken``).

    Parameters
    ----------
    vocab
        ``{token: id}``.
    unk_token
        The token for a part that is not in ``vocab`` (HF's default ``<unk>``).
    """

    def __init__(self, vocab: Mapping[str, int], unk_token: str = "<unk>") -> None:
        if not isinstance(unk_token, str):
            raise TypeError(f"WordLevel: unk_token must be a str, found {type(unk_token).__name__}")
        self.vocab = dict(vocab)
        self.unk_token = unk_token
        self._unk = self.vocab.get(unk_token)

    def encode_words(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, starts, ends, splits)``: one token per part, covering it."""
        get = self.vocab.get
        ids = np.empty(len(words), dtype=np.int32)
        for k, w in enumerate(words):
            i = get(w, self._unk)
            if i is None:
                raise ValueError(f"WordLevel: {w!r:.60} is not in the vocabulary and its unk_token "
                                 f"{self.unk_token!r:.40} is not either")
            ids[k] = i
        ends = np.fromiter((len(w) for w in words), dtype=np.int32, count=len(words))
        return ids, np.zeros(len(words), dtype=np.int32), ends, np.arange(len(words) + 1, dtype=np.int64)

    def __repr__(self) -> str:
        return f"WordLevel({len(self.vocab)} tokens, unk_token={self.unk_token!r})"
