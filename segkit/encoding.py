"""Results of encoding: one :class:`Encoding` per text, and a lazy batch.

Both hold int32 arrays; Python lists are made only for the attribute that
is read.  Rows of the underlying array: ids, type ids, attention mask,
special tokens mask, starts, ends, word indices (-1 for none); results of
plain tokenization (no template, truncation or padding) keep only ids,
starts, ends and word indices, the other rows being implied.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Iterator, overload

import numpy as np
from numba import njit

from .boxing import int_lists_of
from .gcpause import paused_gc

_FULL = 7
_PLAIN = 4


def _itos(source):
    """An id -> token list from a Vocabulary (made on first need) or a list."""
    return source.id_to_token if hasattr(source, "id_to_token") else source


def _rows(data: np.ndarray):
    """(ids, type, attention, special, starts, ends, words) of either layout."""
    if data.shape[0] == _FULL:
        return tuple(data)
    n = data.shape[1]
    zeros = np.zeros(n, dtype=np.int32)
    return data[0], zeros, np.ones(n, dtype=np.int32), zeros, data[1], data[2], data[3]


class Encoding:
    """The tokens of one text (or text pair), with everything a model needs.

    Attributes
    ----------
    ids : list[int]
        Token ids.
    tokens : list[str]
        Token strings.
    offsets : list[tuple[int, int]]
        ``(start, end)`` character offsets into the original text (end
        exclusive); ``(0, 0)`` for template and padding tokens.  In a pair,
        offsets of the second sequence refer to the second text.
    type_ids : list[int]
        0 for the first sequence (with ``[CLS]`` and the first ``[SEP]``), 1
        for the second.
    attention_mask : list[int]
        1 for real tokens, 0 for padding.
    special_tokens_mask : list[int]
        1 for tokens added by the template and for padding.
    word_ids : list[int | None]
        Index of the pre-tokenized word each token comes from (per sequence),
        None for template and padding tokens.
    """

    __slots__ = ("_data", "_id_to_token")

    def __init__(self, data: np.ndarray, id_to_token: Sequence):
        self._data = data
        self._id_to_token = id_to_token

    @property
    def ids(self) -> list[int]:
        return self._data[0].tolist()

    @property
    def tokens(self) -> list[str]:
        itos = _itos(self._id_to_token)
        return [itos[i] for i in self._data[0].tolist()]

    @property
    def offsets(self) -> list[tuple[int, int]]:
        r = _rows(self._data)
        return list(zip(r[4].tolist(), r[5].tolist()))

    @property
    def type_ids(self) -> list[int]:
        return _rows(self._data)[1].tolist()

    @property
    def attention_mask(self) -> list[int]:
        return _rows(self._data)[2].tolist()

    @property
    def special_tokens_mask(self) -> list[int]:
        return _rows(self._data)[3].tolist()

    @property
    def word_ids(self) -> list[int | None]:
        return [None if w < 0 else w for w in _rows(self._data)[6].tolist()]

    @property
    def ids_array(self) -> np.ndarray:
        """Token ids as an int32 numpy array (no copy)."""
        return self._data[0]

    @property
    def offsets_array(self) -> np.ndarray:
        """Offsets as an (n, 2) int32 numpy array."""
        r = _rows(self._data)
        return np.stack([r[4], r[5]], axis=1)

    def __len__(self) -> int:
        return int(self._data.shape[1])

    def __repr__(self) -> str:
        more = "..." if len(self) > 8 else ""
        return f"Encoding(num_tokens={len(self)}, tokens={self.tokens[:8]!r}{more})"


@njit(cache=True, nogil=True)
def _to_matrix(values, rows, width, fill, out):
    for t in range(rows.size - 1):
        a = rows[t]
        n = rows[t + 1] - a
        for j in range(width):
            out[t, j] = values[a + j] if j < n else fill


class BatchEncoding(Sequence):
    """The encodings of a batch, held as flat arrays.

    Behaves as a read-only sequence of :class:`Encoding` (created on
    access); :meth:`to_numpy` gives model-ready matrices without any
    per-token Python objects.

    Attributes
    ----------
    row_splits : numpy.ndarray
        Tokens of text ``t`` are ``row_splits[t]:row_splits[t+1]`` of the flat arrays.
    """

    __slots__ = ("_flat", "_splits", "_parts", "_part_starts", "_id_to_token", "pad_id")

    def __init__(self, data: np.ndarray, row_splits: np.ndarray, id_to_token: Sequence, pad_id: int = 0):
        self._flat = data
        self._splits = row_splits
        self._parts = None
        self._part_starts = None
        self._id_to_token = id_to_token
        self.pad_id = pad_id

    @classmethod
    def _from_parts(cls, parts: list, id_to_token: Sequence, pad_id: int = 0) -> "BatchEncoding":
        """A batch made of consecutive ``(data, row_splits)`` parts, e.g. one
        per thread's run of texts.  Indexing, :attr:`ids` and
        :meth:`to_numpy` read the parts where they are; the flat arrays
        (:attr:`row_splits`, :attr:`ids_flat`) are joined on first use."""
        if len(parts) == 1:
            return cls(parts[0][0], parts[0][1], id_to_token, pad_id)
        obj = cls(None, None, id_to_token, pad_id)
        obj._parts = parts
        obj._part_starts = np.cumsum([0] + [p[1].size - 1 for p in parts]).tolist()
        return obj

    def _join(self) -> None:
        from .parallel import concat_segments

        self._flat, self._splits = concat_segments(self._parts)
        self._parts = self._part_starts = None

    @property
    def _data(self) -> np.ndarray:
        if self._flat is None:
            self._join()
        return self._flat

    @property
    def row_splits(self) -> np.ndarray:  # noqa: D401 (documented in the class)
        if self._splits is None:
            self._join()
        return self._splits

    def _pieces(self):
        """``(first text, data, row_splits)`` per part (one part when flat)."""
        if self._parts is None:
            return [(0, self._flat, self._splits)]
        return [(t0, d, r) for t0, (d, r) in zip(self._part_starts, self._parts)]

    def __len__(self) -> int:
        if self._parts is not None:
            return self._part_starts[-1]
        return int(self._splits.size - 1)

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
        data, splits = self._flat, self._splits
        if self._parts is not None:
            p = bisect_right(self._part_starts, i) - 1
            data, splits = self._parts[p]
            i -= self._part_starts[p]
        a, b = int(splits[i]), int(splits[i + 1])
        return Encoding(data[:, a:b], self._id_to_token)

    def __iter__(self) -> Iterator[Encoding]:
        for i in range(len(self)):
            yield self[i]

    @property
    def ids_flat(self) -> np.ndarray:
        """All token ids of the batch, concatenated (int32)."""
        return self._data[0]

    @property
    def ids(self) -> list[list[int]]:
        """Token ids of every text."""
        out: list[list[int]] = []
        with paused_gc():
            for _, data, splits in self._pieces():
                out.extend(int_lists_of(data[0], splits))  # (one compiled pass, shared ints)
        return out

    def to_numpy(
        self,
        dtype=np.int64,
        *,
        return_special_tokens_mask: bool = False,
        return_offsets: bool = False,
        return_word_ids: bool = False,
    ) -> dict[str, np.ndarray]:
        """Model inputs as (batch, length) matrices.

        Rows shorter than the longest are padded (pad id, type 0, attention
        0).  Keys: ``input_ids``, ``token_type_ids``, ``attention_mask``,
        and on request ``special_tokens_mask``, ``offset_mapping`` (batch,
        length, 2) and ``word_ids`` (-1 for none).

        >>> import segkit
        >>> wp = segkit.WordPiece(["[PAD]", "[UNK]", "a", "##b"])
        >>> wp.encode_batch(["ab", "a a a"]).to_numpy()["input_ids"]
        array([[2, 3, 0],
               [2, 2, 2]])
        """
        pieces = [(t0, _rows(data), rows) for t0, data, rows in self._pieces()]
        width = max((int(np.diff(rows).max()) for _, _, rows in pieces if rows.size > 1), default=0)
        b = len(self)
        ntok = sum(int(rows[-1]) for _, _, rows in pieces)
        uniform = b > 0 and len(pieces) == 1 and ntok == b * width  # padded: every row has the same length

        def mat(field, fill):
            if uniform:
                return pieces[0][1][field].reshape(b, width).astype(dtype)
            out = np.empty((b, width), dtype=dtype)
            for t0, r, rows in pieces:
                _to_matrix(np.ascontiguousarray(r[field]), rows, width, fill, out[t0 : t0 + rows.size - 1])
            return out

        result = {
            "input_ids": mat(0, self.pad_id),
            "token_type_ids": mat(1, 0),
            "attention_mask": mat(2, 0),
        }
        if return_special_tokens_mask:
            result["special_tokens_mask"] = mat(3, 1)
        if return_offsets:
            result["offset_mapping"] = np.stack([mat(4, 0), mat(5, 0)], axis=-1)
        if return_word_ids:
            result["word_ids"] = mat(6, -1)
        return result

    def __repr__(self) -> str:
        ntok = sum(int(rows[-1]) for _, _, rows in self._pieces())
        return f"BatchEncoding(num_texts={len(self)}, num_tokens={ntok})"

