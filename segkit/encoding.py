"""Results of encoding: one :class:`Encoding` per text, and a lazy batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Iterator, overload

import numpy as np


class Encoding:
    """The tokens of one text.

    Attributes are computed from int32 arrays on first access, so building
    many encodings costs no per-token Python work until it is asked for.

    Attributes
    ----------
    ids : list[int]
        Token ids.
    tokens : list[str]
        Token strings.
    offsets : list[tuple[int, int]]
        ``(start, end)`` character offsets into the original text, end
        exclusive.
    """

    __slots__ = ("_ids", "_starts", "_ends", "_id_to_token")

    def __init__(self, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, id_to_token: Sequence):
        self._ids = ids
        self._starts = starts
        self._ends = ends
        self._id_to_token = id_to_token

    @property
    def ids(self) -> list[int]:
        return self._ids.tolist()

    @property
    def tokens(self) -> list[str]:
        itos = self._id_to_token
        return [itos[i] for i in self._ids.tolist()]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        return list(zip(self._starts.tolist(), self._ends.tolist()))

    @property
    def ids_array(self) -> np.ndarray:
        """Token ids as an int32 numpy array (no copy)."""
        return self._ids

    @property
    def offsets_array(self) -> np.ndarray:
        """Offsets as an (n, 2) int32 numpy array."""
        return np.stack([self._starts, self._ends], axis=1)

    def __len__(self) -> int:
        return int(self._ids.size)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self)}, tokens={self.tokens[:8]!r}{'...' if len(self) > 8 else ''})"


class BatchEncoding(Sequence):
    """The encodings of a batch, held as flat arrays.

    Behaves as a read-only sequence of :class:`Encoding` (created on access).
    ``ids_flat``/``row_splits`` give the whole batch without per-text objects.
    """

    __slots__ = ("ids_flat", "starts_flat", "ends_flat", "row_splits", "_id_to_token")

    def __init__(self, ids, starts, ends, row_splits, id_to_token):
        self.ids_flat = ids
        self.starts_flat = starts
        self.ends_flat = ends
        self.row_splits = row_splits
        self._id_to_token = id_to_token

    def __len__(self) -> int:
        return int(self.row_splits.size - 1)

    @overload
    def __getitem__(self, i: int) -> Encoding: ...
    @overload
    def __getitem__(self, i: slice) -> list[Encoding]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"batch index {i} out of range for {n} texts")
        a, b = int(self.row_splits[i]), int(self.row_splits[i + 1])
        return Encoding(self.ids_flat[a:b], self.starts_flat[a:b], self.ends_flat[a:b], self._id_to_token)

    def __iter__(self) -> Iterator[Encoding]:
        for i in range(len(self)):
            yield self[i]

    @property
    def ids(self) -> list[list[int]]:
        """Token ids of every text."""
        flat = self.ids_flat.tolist()
        rs = self.row_splits.tolist()
        return [flat[rs[i] : rs[i + 1]] for i in range(len(rs) - 1)]

    def __repr__(self) -> str:
        return f"BatchEncoding(num_texts={len(self)}, num_tokens={int(self.row_splits[-1])})"
