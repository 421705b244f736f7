"""A batch of texts as the compiled calls take it: lengths, and the error
that names the first item that is not a str."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def raise_not_str(texts: Sequence[object]) -> None:
    """TypeError naming the first item of ``texts`` that is not a str (none
    raised when all are)."""
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"expected texts as a sequence of str, found {type(t).__name__} at index {i}: {t!r:.80}") from None


def text_lengths(texts: Sequence[str]) -> np.ndarray:
    """The lengths of ``texts`` (int64); TypeError naming the first item
    that is not a str when one has no length.

    >>> text_lengths(["ab", "", "é"]).tolist()
    [2, 0, 1]
    """
    try:
        return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    except TypeError:
        raise_not_str(texts)
        raise
