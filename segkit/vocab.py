"""Vocabularies: token <-> id, read from files, sequences or mappings."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Union

import numpy as np

VocabSource = Union[str, "os.PathLike[str]", Iterable[str], Mapping[str, int]]


class VocabularyError(ValueError):
    """A vocabulary could not be read; the message names file, line and value."""


class Vocabulary:
    """An immutable token <-> id mapping.

    Parameters
    ----------
    tokens
        ``tokens[i]`` is the token with id ``ids[i]``.
    ids
        Non-negative, distinct ids (default: ``0..len(tokens)-1``).
    """

    __slots__ = ("_tokens", "_ids", "_index", "_by_id")

    def __init__(self, tokens: list[str], ids: list[int] | None = None):
        self._tokens = list(tokens)
        self._ids = list(range(len(self._tokens))) if ids is None else list(ids)
        self._index = dict(zip(self._tokens, self._ids))
        if ids is None:
            self._by_id: list[str | None] = list(self._tokens)
        else:
            size = (max(self._ids) + 1) if self._ids else 0
            by_id: list[str | None] = [None] * size
            for t, i in zip(self._tokens, self._ids):
                by_id[i] = t
            self._by_id = by_id

    # -------------------------------------------------------------- loading
    @classmethod
    def load(cls, source: VocabSource, *, duplicates: str = "error") -> "Vocabulary":
        """Read a vocabulary.

        Parameters
        ----------
        source
            A path to a ``vocab.txt`` (one token per line, id = line index,
            lines split on ``"\\n"`` only), a sequence of tokens (id = index)
            or a mapping token -> id.
        duplicates
            What a repeated token does: ``"error"`` (default) raises
            :class:`VocabularyError` naming both lines; ``"first"`` or
            ``"last"`` keep that occurrence's id for encoding (both ids still
            decode to the token).

        Notes
        -----
        In a file, a UTF-8 byte order mark at the start is dropped and
        ``"\\r\\n"`` line endings are accepted (the ``"\\r"`` is removed).  An
        empty line keeps its id but can never match.  A final newline does
        not add a token.

        Examples
        --------
        >>> v = Vocabulary.load(["[UNK]", "un", "##aff", "##able"])
        >>> v.id("##aff"), v.token(3)
        (2, '##able')
        """
        if duplicates not in ("error", "first", "last"):
            raise ValueError(f"duplicates must be 'error', 'first' or 'last', found {duplicates!r}")
        if isinstance(source, Vocabulary):
            return source
        if isinstance(source, (str, os.PathLike)):
            tokens, where = _read_vocab_file(Path(source))
            ids = list(range(len(tokens)))
        elif isinstance(source, Mapping):
            tokens, ids = [], []
            for t, i in source.items():
                if not isinstance(t, str):
                    raise VocabularyError(f"vocabulary mapping: expected str tokens, found {type(t).__name__} {t!r:.60}")
                if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or i < 0:
                    raise VocabularyError(f"vocabulary mapping: token {t!r} has id {i!r}, expected a non-negative int")
                tokens.append(t)
                ids.append(int(i))
            if len(set(ids)) != len(ids):
                seen: dict[int, str] = {}
                for t, i in zip(tokens, ids):
                    if i in seen:
                        raise VocabularyError(f"vocabulary mapping: id {i} is given to both {seen[i]!r} and {t!r}")
                    seen[i] = t
            where = None
        elif isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray)):
            tokens = list(source)
            for i, t in enumerate(tokens):
                if not isinstance(t, str):
                    raise VocabularyError(f"vocabulary sequence: expected str tokens, found {type(t).__name__} {t!r:.60} at index {i}")
            ids = list(range(len(tokens)))
            where = None
        else:
            raise TypeError(
                f"vocab must be a path, a sequence of tokens or a mapping token -> id, found {type(source).__name__}"
            )
        return cls._dedupe(tokens, ids, duplicates, where)

    @classmethod
    def _dedupe(cls, tokens, ids, duplicates, where) -> "Vocabulary":
        if ids == list(range(len(tokens))):
            v = cls(tokens)
            if len(v._index) == len(tokens):
                return v
        elif len(set(tokens)) == len(tokens):
            return cls(tokens, ids)
        first: dict[str, int] = {}
        keep_tokens, keep_ids = [], []
        by_id_extra = []
        for t, i in zip(tokens, ids):
            if t in first:
                if duplicates == "error":
                    place = f"{where}: lines {first[t] + 1} and {i + 1}" if where else f"ids {first[t]} and {i}"
                    raise VocabularyError(
                        f"duplicate token {t!r} ({place}); pass duplicates='first' or 'last' to accept it"
                    )
                by_id_extra.append((t, i))
                if duplicates == "last":
                    keep_ids[keep_tokens.index(t)] = i
                continue
            first[t] = i
            keep_tokens.append(t)
            keep_ids.append(i)
        v = cls(keep_tokens, keep_ids)
        for t, i in by_id_extra:
            if i >= len(v._by_id):
                v._by_id.extend([None] * (i + 1 - len(v._by_id)))
            v._by_id[i] = t
        return v

    # ---------------------------------------------------------------- access
    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token: object) -> bool:
        return token in self._index

    @property
    def tokens(self) -> list[str]:
        """The distinct tokens (in id order for files and sequences)."""
        return self._tokens

    @property
    def ids(self) -> list[int]:
        """``ids[i]`` is the id of ``tokens[i]``."""
        return self._ids

    def id(self, token: str) -> int | None:
        """The id of ``token``, or None."""
        return self._index.get(token)

    def token(self, id: int) -> str:
        """The token with id ``id`` (IndexError for an unknown id)."""
        if 0 <= id < len(self._by_id):
            t = self._by_id[id]
            if t is not None:
                return t
        raise IndexError(f"no token has id {id} (vocabulary of {len(self)} tokens)")

    @property
    def id_to_token(self) -> list[str | None]:
        """List indexed by id (None where an id is unused)."""
        return self._by_id

    def to_dict(self) -> dict[str, int]:
        """A copy of the mapping token -> id."""
        return dict(self._index)


def _read_vocab_file(path: Path) -> tuple[list[str], str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"vocabulary file not found: {path}") from None
    except IsADirectoryError:
        raise VocabularyError(f"{path}: is a directory, expected a vocab.txt file") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise VocabularyError(
            f"{path}: line {line}: not valid UTF-8 (byte {data[e.start]:#04x} at offset {e.start}); "
            "vocabulary files must be UTF-8"
        ) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [t[:-1] if t.endswith("\r") else t for t in lines]
    return lines, str(path)
