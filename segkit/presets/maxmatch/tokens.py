"""The token table of a MaxMatch preset: tokens by id, and the keys matched.

A vocabulary is a list of tokens with ids: byte strings (``unit="byte"``)
or strings (``unit="char"``).  Every id decodes to its token.  Matching
needs each distinct token once: where several ids hold the same token the
highest id is matched (as the RWKV reference tokenizer does, whose later
lines win), with a :class:`DuplicateTokenWarning`.

Stored in a model file as two arrays: the UTF-8 (or raw bytes) of every
token in id order, and the end of each id's token in it (an id without a
token has an empty one; a real token is never empty).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...models.vocabulary import VocabularyError, check_ids
from .rwkv_file import DuplicateTokenWarning, warn_duplicates

__all__ = ["TokenTable", "DuplicateTokenWarning"]


class TokenTable:
    """Tokens by id and the keys the automaton matches (read-only)."""

    __slots__ = ("unit", "data", "ends", "key_ids", "_by_id", "_index", "_lengths")

    def __init__(self, unit: str, data: np.ndarray, ends: np.ndarray, key_ids: np.ndarray):
        self.unit = unit
        self.data = data  # uint8: all tokens, id order
        self.ends = ends  # int64 per id
        self.key_ids = key_ids  # int32: the ids matched (one per distinct token), ascending
        self._by_id = None
        self._index = None
        self._lengths = None

    # ----------------------------------------------------------------- build
    @classmethod
    def build(cls, tokens: Sequence[bytes | str], ids: Sequence[int] | None, unit: str,
              source: str = "tokens", warn_where=None) -> "TokenTable":
        """From tokens and their ids (None: ids are positions).

        Raises :class:`segkit.VocabularyError` for tokens of the wrong type,
        empty tokens, ids that are not distinct non-negative int32 values (or
        far sparser than the vocabulary); warns about repeated tokens.
        """
        if isinstance(tokens, (str, bytes)):
            raise TypeError(f"{source}: expected a sequence of tokens, found a single {type(tokens).__name__}")
        try:
            tokens = list(tokens)
        except TypeError:
            raise TypeError(f"{source}: expected a sequence of tokens, found {type(tokens).__name__}") from None
        if ids is None:
            ids = list(range(len(tokens)))
        else:
            try:
                ids = list(ids)
            except TypeError:
                raise TypeError(f"{source}: ids must be a sequence of ints, found {type(ids).__name__}") from None
            if len(ids) != len(tokens):
                raise VocabularyError(f"{source}: {len(tokens)} tokens but {len(ids)} ids")
            for k, i in enumerate(ids):
                if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                    raise VocabularyError(f"{source}: id at position {k} is {i!r:.40}, expected an int")
            ids = [int(i) for i in ids]
        if not tokens:
            raise VocabularyError(f"{source}: no tokens")
        raw = _as_bytes(tokens, unit, source)
        check_ids(ids, tokens, source)
        size = max(ids) + 1
        owner = np.full(size, -1, dtype=np.int64)
        order = np.asarray(ids, dtype=np.int64)
        owner[order] = np.arange(len(ids))
        if (np.bincount(order, minlength=size) > 1).any():
            dup = int(np.flatnonzero(np.bincount(order, minlength=size) > 1)[0])
            where = [k for k, i in enumerate(ids) if i == dup][:2]
            raise VocabularyError(f"{source}: id {dup} is given twice (positions {where[0]} and {where[1]})")
        best: dict[bytes, int] = {}
        for t, i in zip(raw, ids):
            if best.get(t, -1) < i:
                best[t] = i
        if len(best) != len(raw):
            warn_duplicates(tokens if unit == "char" else raw, ids, source, warn_where or (lambda k: f"position {k}"))
        by_id: list = [None] * size
        for t, i in zip(tokens if unit == "char" else raw, ids):
            by_id[i] = t
        lengths = np.zeros(size, dtype=np.int64)
        lengths[order] = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        data = np.frombuffer(b"".join(raw[k] for k in owner[owner >= 0].tolist()), np.uint8)
        table = cls(unit, data, np.cumsum(lengths), np.array(sorted(best.values()), dtype=np.int32))
        table._by_id = by_id
        return table

    # --------------------------------------------------------------- access
    @property
    def size(self) -> int:
        """One more than the largest id."""
        return int(self.ends.size)

    @property
    def by_id(self) -> list:
        """``by_id[i]``: the token of id ``i`` (bytes, or str for
        ``unit="char"``), None where the id has none."""
        if self._by_id is None:
            raw = self.data.tobytes()
            ends = self.ends.tolist()
            starts = [0] + ends[:-1]
            if self.unit == "char":
                self._by_id = [raw[a:b].decode("utf-8") if b > a else None for a, b in zip(starts, ends)]
            else:
                self._by_id = [raw[a:b] if b > a else None for a, b in zip(starts, ends)]
        return self._by_id

    def keys(self) -> list:
        """The distinct tokens matched, in the order of :attr:`key_ids`."""
        by_id = self.by_id
        return [by_id[i] for i in self.key_ids.tolist()]

    def index(self) -> dict:
        """token -> the id it is matched as."""
        if self._index is None:
            self._index = dict(zip(self.keys(), self.key_ids.tolist()))
        return self._index

    @property
    def lengths(self) -> np.ndarray:
        """The byte length of each id's token (0: no token)."""
        if self._lengths is None:
            lengths = np.empty_like(self.ends)
            lengths[0] = self.ends[0]
            np.subtract(self.ends[1:], self.ends[:-1], out=lengths[1:])
            self._lengths = lengths
        return self._lengths

    def single_bytes(self) -> int:
        """How many of the 256 single bytes are tokens (``unit="byte"``)."""
        one = self.lengths == 1
        return int(np.count_nonzero(np.bincount(self.data[self.ends[one] - 1], minlength=256)))

    # ------------------------------------------------------------ persistence
    def state(self) -> dict[str, np.ndarray]:
        return {"tokens.data": self.data, "tokens.ends": self.ends, "tokens.keys": self.key_ids}

    @classmethod
    def from_state(cls, unit: str, arrays: dict, source: str) -> "TokenTable":
        """The table stored by :meth:`state`, checked (ValueError naming the
        problem) with whole-array operations, no Python object per token:
        ends in order; keys ascending ids of real tokens; for
        ``unit="char"``, tokens of whole UTF-8 characters.  That the keys
        are the distinct tokens, each with its highest id, is checked with
        the automaton (:meth:`check_shadowed`), which must hold exactly the
        keys."""
        data = arrays["tokens.data"]
        ends = arrays["tokens.ends"]
        keys = arrays["tokens.keys"]

        def bad(what: str) -> ValueError:
            return ValueError(f"{source}: invalid token table: {what}")

        if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 1:
            raise bad("tokens.data must be a 1-d uint8 array")
        if not isinstance(ends, np.ndarray) or ends.dtype != np.int64 or ends.ndim != 1 or not ends.size:
            raise bad("tokens.ends must be a non-empty 1-d int64 array")
        if not isinstance(keys, np.ndarray) or keys.dtype != np.int32 or keys.ndim != 1 or not keys.size:
            raise bad("tokens.keys must be a non-empty 1-d int32 array")
        if ends.size > (1 << 31) - 1:
            raise bad(f"{ends.size} ids do not fit int32")
        lengths = np.diff(ends, prepend=0)
        if lengths.min() < 0 or ends[-1] != data.size:
            raise bad("token ends are not in order or do not end at the data's end")
        if keys[0] < 0 or keys[-1] >= ends.size or (np.diff(keys) <= 0).any() or (lengths[keys] == 0).any():
            raise bad("the matched ids are not ascending ids of tokens")
        if unit == "char":
            try:
                data.tobytes().decode("utf-8")
            except UnicodeDecodeError as e:
                raise bad(f"the tokens are not UTF-8 ({e.reason} at byte {e.start})") from None
            starts = (ends - lengths)[lengths > 0]
            if ((data[starts] & 0xC0) == 0x80).any():
                raise bad("a token starts inside a character")
        # Copies: nothing keeps the file's buffer alive once load returns.
        table = cls(unit, np.array(data), np.array(ends), np.array(keys))
        table._lengths = lengths
        return table

    def shadowed(self) -> tuple[np.ndarray, np.ndarray]:
        """The ids with a token that are not keys (their token must be a
        key's, of a higher id), and their tokens' lengths: ``(ids,
        lengths)``."""
        lengths = self.lengths
        present = lengths > 0
        present[self.key_ids] = False
        ids = np.flatnonzero(present)
        return ids, lengths[ids]

    def check_shadowed(self, automaton, source: str) -> None:
        """Every id with a token that is not matched must hold the token of
        a key of a higher id (ValueError if not): matching its token must
        give exactly one token, of a higher id."""
        ids, lengths = self.shadowed()
        if not ids.size:
            return
        starts = self.ends[ids] - lengths
        bounds = np.zeros(ids.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=bounds[1:])
        if self.unit == "byte":
            text = np.concatenate([self.data[a:b] for a, b in zip(starts.tolist(), self.ends[ids].tolist())])
            out, rows = automaton.segment_code_points(text, bounds, offsets=False, pretokenize=False)
        else:
            raw = self.data.tobytes()
            strs = [raw[a:b].decode("utf-8") for a, b in zip(starts.tolist(), self.ends[ids].tolist())]
            out, _, _, rows = automaton.segment_batch(strs, offsets=False, pretokenize=False)
            out = out[None, :]
        got = out[0]
        if not np.array_equal(np.diff(rows), np.ones(ids.size, dtype=np.int64)) or (got <= ids).any():
            k = int(np.flatnonzero((np.diff(rows) != 1) | (got[np.minimum(rows[:-1], got.size - 1)] <= ids))[0])
            raise ValueError(f"{source}: invalid token table: id {int(ids[k])} is not matched, yet its token is no "
                             "token of a higher id")

    def key_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The keys as ``(symbols, starts, ends, ids)`` for
        :func:`segkit.engine.automaton.check_keys_and_relink`: bytes (uint8)
        for ``unit="byte"``, code points (uint32) for ``unit="char"``."""
        ids = self.key_ids
        if self.unit == "byte":
            ends = self.ends[ids]
            starts = ends - self.lengths[ids]
            return self.data, starts, ends, ids
        keys = self.keys()
        text = "".join(keys)
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32) if text else np.zeros(0, np.uint32)
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        ends = np.cumsum(lengths)
        return cps, ends - lengths, ends, ids


def _as_bytes(tokens: list, unit: str, source: str) -> list[bytes]:
    """Each token's bytes (``unit="char"``: its UTF-8); errors name the position."""
    out = []
    for k, t in enumerate(tokens):
        if unit == "char":
            if not isinstance(t, str):
                raise VocabularyError(f"{source}: token at position {k} is {type(t).__name__} {t!r:.40}; "
                                      "unit='char' takes str tokens")
            try:
                b = t.encode("utf-8")
            except UnicodeEncodeError as e:
                raise VocabularyError(f"{source}: token at position {k} ({t!r:.40}) has a lone surrogate at "
                                      f"character {e.start}") from None
        elif isinstance(t, bytes):
            b = t
        elif isinstance(t, str):
            try:
                b = t.encode("utf-8")
            except UnicodeEncodeError as e:
                raise VocabularyError(f"{source}: token at position {k} ({t!r:.40}) has a lone surrogate at "
                                      f"character {e.start}, which has no UTF-8") from None
        elif isinstance(t, (bytearray, memoryview)):
            b = bytes(t)
        else:
            raise VocabularyError(f"{source}: token at position {k} is {type(t).__name__} {t!r:.40}, "
                                  "expected bytes or str")
        if not b:
            raise VocabularyError(f"{source}: token at position {k} is empty")
        out.append(b)
    return out
