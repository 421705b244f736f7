"""Vocabularies: token <-> id, read from files, sequences or mappings."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Union

import numpy as np

from ..runtime.regular_files import read_regular
from ..runtime.surrogates import check_text, first_surrogate

VocabSource = Union[str, "os.PathLike[str]", Iterable[str], Mapping[str, int]]


class VocabularyError(ValueError):
    """A vocabulary could not be read; the message names file, line and value."""


#: Ids are stored as int32.
MAX_ID = 2**31 - 1


def _check_tokens(tokens: list) -> None:
    """VocabularyError naming the first token that holds a lone surrogate
    (see :mod:`segkit.runtime.surrogates`); one encoding of all tokens."""
    try:
        joined = "".join(tokens)
    except TypeError:  # not all str: reported by the caller
        return
    if first_surrogate(joined) < 0:
        return
    for i, t in enumerate(tokens):
        if isinstance(t, str):
            check_text(t, f"vocabulary token {i} ({t!r:.40})", VocabularyError)

#: Ids may leave gaps, but a vocabulary of n tokens may not use ids beyond
#: ``SPARSE_FACTOR * n + SPARSE_SLACK``: tables indexed by id are allocated
#: up to the largest id, so one huge id (2**31, 3e9) would otherwise ask for
#: gigabytes before anything else is checked.
SPARSE_FACTOR = 16
SPARSE_SLACK = 1 << 16


def check_ids(ids: list[int], tokens: list, where: str) -> None:
    """Raise :class:`VocabularyError` unless every id fits int32 and the
    ids are dense enough (see :data:`SPARSE_FACTOR`) to allocate tables
    indexed by id.  ``where`` names the source in messages."""
    if not ids:
        return
    low = min(ids)
    if low < 0:
        raise VocabularyError(f"{where}: token {tokens[ids.index(low)]!r:.60} has id {low}, expected a non-negative int")
    top = max(ids)
    k = ids.index(top)
    if top > MAX_ID:
        raise VocabularyError(f"{where}: token {tokens[k]!r:.60} has id {top}, which does not fit int32 (at most {MAX_ID})")
    if top > len(ids) * SPARSE_FACTOR + SPARSE_SLACK:
        raise VocabularyError(
            f"{where}: token {tokens[k]!r:.60} has id {top}, but there are only {len(ids)} tokens; ids must be "
            f"dense enough to index tables (at most {SPARSE_FACTOR} x tokens + {SPARSE_SLACK})"
        )


class Vocabulary:
    """An immutable token <-> id mapping.

    Two storage forms behind one interface: plain Python lists and a dict
    (the fastest lookups; what :meth:`load` builds), or a marisa-trie with an
    id mapping (compact; what saved models and large dictionaries use), from
    which the plain form is materialized on first need.

    Parameters
    ----------
    tokens
        ``tokens[i]`` is the token with id ``ids[i]``.
    ids
        Non-negative, distinct ids (default: ``0..len(tokens)-1``).
    """

    __slots__ = ("_tokens", "_ids", "_index", "_by_id", "_trie", "_mid_to_id", "_id_to_mid", "_blob", "_packed",
                 "_lookups")

    def __init__(self, tokens: list[str], ids: list[int] | None = None):
        self._trie = None
        self._mid_to_id = None
        self._id_to_mid = None
        self._blob = None
        self._packed = None
        self._lookups = 0
        self._tokens: list[str] | None = list(tokens)
        _check_tokens(self._tokens)
        self._ids: list[int] | None = list(range(len(self._tokens))) if ids is None else list(ids)
        self._index: dict[str, int] | None = dict(zip(self._tokens, self._ids))
        if ids is None:
            self._by_id: list[str | None] | None = list(self._tokens)
        else:
            check_ids(self._ids, self._tokens, "vocabulary")
            size = (max(self._ids) + 1) if self._ids else 0
            by_id: list[str | None] = [None] * size
            for t, i in zip(self._tokens, self._ids):
                by_id[i] = t
            self._by_id = by_id

    # ------------------------------------------------------- marisa backing
    @classmethod
    def from_marisa(cls, trie, mid_to_id: np.ndarray, id_to_mid: np.ndarray, tokens_blob=None) -> "Vocabulary":
        r"""A vocabulary backed by a ``marisa_trie.Trie``.

        ``mid_to_id[k]`` is the vocabulary id of marisa key ``k``;
        ``id_to_mid[i]`` is the marisa key of id ``i`` (-1 for an unused id;
        several ids may share a key when the vocabulary had duplicates).
        ``tokens_blob`` optionally holds the tokens of all ids joined by
        ``"\n"`` in UTF-8 (see :meth:`tokens_blob`), which makes restoring the
        plain form fast.
        """
        v = cls.__new__(cls)
        v._trie = trie
        v._mid_to_id = np.asarray(mid_to_id, dtype=np.int32)
        v._id_to_mid = np.asarray(id_to_mid, dtype=np.int32)
        v._blob = tokens_blob
        v._packed = None
        v._lookups = 0
        v._tokens = v._ids = v._index = v._by_id = None
        return v

    def tokens_blob(self) -> bytes | None:
        r"""The token of every id joined by ``"\n"`` (UTF-8), or None when a
        token contains a newline."""
        by_id = self.id_to_token
        parts = by_id if None not in by_id else [t or "" for t in by_id]
        joined = "\n".join(parts)
        if joined.count("\n") != len(parts) - 1:  # some token holds a newline
            return None
        return joined.encode("utf-8")

    def to_marisa(self):
        """``(trie, mid_to_id, id_to_mid)``: the compact form (built if needed)."""
        if self._trie is None:
            self._materialize()
            import marisa_trie

            trie = marisa_trie.Trie(self._tokens)
            mid_to_id = np.empty(len(trie), dtype=np.int32)
            index = self._index
            for t, k in trie.items():
                mid_to_id[k] = index[t]
            by_id = self._by_id
            id_to_mid = np.full(len(by_id), -1, dtype=np.int32)
            get = trie.get
            id_to_mid[:] = [-1 if t is None else get(t) for t in by_id]
            return trie, mid_to_id, id_to_mid
        return self._trie, self._mid_to_id, self._id_to_mid

    def _materialize(self) -> None:
        if self._tokens is not None:
            return
        trie, mid_to_id, id_to_mid = self._trie, self._mid_to_id, self._id_to_mid
        ids_sorted = np.sort(mid_to_id).tolist()
        if self._blob is not None:
            by_id = bytes(self._blob).decode("utf-8").split("\n")
            if len(by_id) != id_to_mid.size:
                raise ValueError(f"vocabulary blob holds {len(by_id)} tokens, expected {id_to_mid.size}")
            for i in np.flatnonzero(id_to_mid < 0).tolist():
                by_id[i] = None
        else:
            items = trie.items()
            key_of = np.empty(len(items) + 1, dtype=object)  # last slot: None for unused ids
            key_of[np.fromiter((k for _, k in items), dtype=np.int64, count=len(items))] = [t for t, _ in items]
            by_id = key_of[np.where(id_to_mid >= 0, id_to_mid, len(items))].tolist()
        tokens = [by_id[i] for i in ids_sorted]
        self._index = dict(zip(tokens, ids_sorted))
        self._ids = ids_sorted
        self._by_id = by_id
        self._tokens = tokens

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
        trailing whitespace (Unicode ``White_Space``, so also the ``"\\r"``
        of ``"\\r\\n"`` endings) is removed from every line, as HF
        ``tokenizers`` does; leading whitespace is kept.  An empty line keeps
        its id but can never match.  A final newline does not add a token.

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
            check_ids(ids, tokens, "vocabulary mapping")
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
        first: dict[str, int] = {}  # token -> position in keep_*
        keep_tokens: list[str] = []
        keep_ids: list[int] = []
        for t, i in zip(tokens, ids):
            if t in first:
                if t == "":
                    continue  # blank lines keep their ids; they are not duplicates
                if duplicates == "error":
                    i0 = keep_ids[first[t]]
                    place = f"{where}: lines {i0 + 1} and {i + 1}" if where else f"ids {i0} and {i}"
                    raise VocabularyError(
                        f"duplicate token {t!r} ({place}); pass duplicates='first' or 'last' to accept it"
                    )
                if duplicates == "last":
                    keep_ids[first[t]] = i
                continue
            first[t] = len(keep_tokens)
            keep_tokens.append(t)
            keep_ids.append(i)
        v = cls(keep_tokens, keep_ids)
        # Every id still decodes to its token, the dropped occurrences too.
        size = max(ids) + 1 if ids else 0
        if len(v._by_id) < size:
            v._by_id.extend([None] * (size - len(v._by_id)))
        for t, i in zip(tokens, ids):
            v._by_id[i] = t
        return v

    # ---------------------------------------------------------------- access
    def __len__(self) -> int:
        """Number of ids that have a token (a vocab.txt's line count: blank
        lines and repeated tokens count, like rows of a model's embeddings)."""
        if self._by_id is None:
            return int(np.count_nonzero(self._id_to_mid >= 0))
        return len(self._by_id) - self._by_id.count(None)

    def __contains__(self, token: object) -> bool:
        if self._tokens is None:
            if self._trie is None:
                return self.id(token) is not None  # type: ignore[arg-type]
            return isinstance(token, str) and token in self._trie
        return token in self._index

    def __reduce__(self):
        # Cheap: arrays and bytes, never a rebuild of anything.
        if self._trie is not None:
            blob = self._blob if self._by_id is None else self.tokens_blob()
            return (
                _vocabulary_from_bytes,
                (self._trie.tobytes(), self._mid_to_id, self._id_to_mid, None if blob is None else bytes(blob)),
            )
        if self._packed is None:  # computed once: vocabularies are immutable
            blob = self.tokens_blob() if self._by_id is not None else self._blob
            if blob is None:
                return (Vocabulary, (self.tokens, self.ids))
            present = np.zeros(self.size, dtype=np.int32)
            present[[i for i, t in enumerate(self.id_to_token) if t is None]] = -1
            # id -> position in ``ids``: the blob lookups before the mapping
            # is rebuilt (``_blob_id``) need it to tell a token's own id.
            present[np.asarray(self.ids, dtype=np.int64)] = np.arange(len(self.ids), dtype=np.int32)
            self._packed = (None, np.asarray(self.ids, dtype=np.int32), present, bytes(blob))
        return (_vocabulary_from_bytes, self._packed)

    @property
    def tokens(self) -> list[str]:
        """The distinct tokens (in id order)."""
        self._materialize()
        return self._tokens

    @property
    def ids(self) -> list[int]:
        """``ids[i]`` is the id of ``tokens[i]``."""
        self._materialize()
        return self._ids

    def id(self, token: str) -> int | None:
        """The id of ``token``, or None."""
        if self._index is None and self._trie is None:
            if self._blob is not None and self._lookups < _BLOB_LOOKUPS:
                # A loaded model's few lookups (unk and special tokens) read
                # the token list without building the whole mapping; more
                # lookups than that build it (a search reads the whole list).
                self._lookups += 1
                return _blob_id(self._blob, token, self._mid_to_id, self._id_to_mid) if isinstance(token, str) else None
            self._materialize()
        if self._index is None:
            k = self._trie.get(token) if isinstance(token, str) else None
            return None if k is None else int(self._mid_to_id[k])
        return self._index.get(token)

    def token(self, id: int) -> str:
        """The token with id ``id`` (IndexError for an unknown id)."""
        if self._by_id is None and self._trie is None:
            self._materialize()
        if self._by_id is None:
            if 0 <= id < self._id_to_mid.size and self._id_to_mid[id] >= 0:
                return self._trie.restore_key(int(self._id_to_mid[id]))
        elif 0 <= id < len(self._by_id):
            t = self._by_id[id]
            if t is not None:
                return t
        raise IndexError(f"no token has id {id} (vocabulary of {len(self)} tokens)")

    def has_id(self, id: int) -> bool:
        """Whether some token has id ``id`` (without building the token list
        of a loaded vocabulary)."""
        if self._by_id is not None:
            return 0 <= id < len(self._by_id) and self._by_id[id] is not None
        return 0 <= id < self._id_to_mid.size and bool(self._id_to_mid[id] >= 0)

    @property
    def id_to_token(self) -> list[str | None]:
        """List indexed by id (None where an id is unused)."""
        self._materialize()
        return self._by_id

    @property
    def size(self) -> int:
        """One more than the largest id."""
        return self._id_to_mid.size if self._by_id is None else len(self._by_id)

    def to_dict(self) -> dict[str, int]:
        """A copy of the mapping token -> id."""
        self._materialize()
        return dict(self._index)


#: Lookups answered by searching a loaded vocabulary's token list before the
#: token -> id mapping is built (loading a BERT model makes about a dozen).
_BLOB_LOOKUPS = 64


def _blob_id(blob, token: str, mid_to_id: np.ndarray, id_to_mid: np.ndarray) -> int | None:
    r"""``Vocabulary.id(token)`` read from a ``"\n"``-joined token list: the
    first id whose token is ``token`` among the ids ``mid_to_id`` lists
    (which name distinct tokens), found by searching the bytes rather than
    building the mapping (a model's special tokens come first: microseconds)."""
    raw = blob if isinstance(blob, bytes) else bytes(blob)
    t = token.encode("utf-8", "surrogatepass")

    def chosen(i: int) -> bool:
        k = int(id_to_mid[i]) if i < id_to_mid.size else -1
        return k >= 0 and int(mid_to_id[k]) == i

    if (raw == t or raw.startswith(t + b"\n")) and chosen(0):
        return 0
    needle = b"\n" + t + b"\n"
    pos = raw.find(needle)
    while pos >= 0:
        i = raw.count(b"\n", 0, pos + 1)
        if chosen(i):
            return i
        pos = raw.find(needle, pos + 1)
    if len(raw) > len(t) and raw.endswith(b"\n" + t):
        i = raw.count(b"\n")
        if chosen(i):
            return i
    return None


def _vocabulary_from_bytes(raw: bytes | None, mid_to_id, id_to_mid, blob=None) -> Vocabulary:
    # Unpickling helper.  ``raw is None``: a packed vocabulary without a trie
    # (ids of the distinct tokens, -1 marks for unused ids, and the blob).
    trie = None
    if raw is not None:
        import marisa_trie

        trie = marisa_trie.Trie()
        trie.frombytes(raw)
    return Vocabulary.from_marisa(trie, mid_to_id, id_to_mid, blob)


def read_utf8_file(path: Path, what: str) -> str:
    """The text of a UTF-8 file, a leading byte order mark dropped.

    Errors name the file (and, for bad UTF-8, the line): FileNotFoundError,
    or :class:`VocabularyError` for a directory, a FIFO, a device or
    undecodable bytes.
    ``what`` names the kind of file in messages (``"vocabulary"``, ...).
    """
    # a regular file only: a FIFO would block, a device would be read until
    # memory runs out (see segkit.runtime.regular_files)
    data = read_regular(path, what, VocabularyError)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise VocabularyError(
            f"{path}: line {line}: not valid UTF-8 (byte {data[e.start]:#04x} at offset {e.start}); "
            f"{what} files must be UTF-8"
        ) from None


_WHITE_SPACE: str | None = None


def _white_space_chars() -> str:
    """Every Unicode ``White_Space`` character, for ``str.rstrip``."""
    global _WHITE_SPACE
    if _WHITE_SPACE is None:
        from ..runtime.unicode import white_space

        _WHITE_SPACE = "".join(map(chr, np.flatnonzero(white_space()).tolist()))
    return _WHITE_SPACE


def vocab_txt_problem(token: str, first: bool = False) -> str | None:
    """Why ``token`` would not read back from a line of a ``vocab.txt``
    (as :meth:`Vocabulary.load` and HF read one), or None when it would;
    ``first``: the token is the file's first line.

    >>> vocab_txt_problem("[CLS]"), vocab_txt_problem("<eot> ")
    (None, 'it ends in whitespace, which vocab.txt readers strip (HF tokenizers too)')
    """
    if "\n" in token:
        return "it holds a newline, which ends a line of vocab.txt"
    if not token:
        return "it is empty (an empty line never matches)"
    if token != token.rstrip(_white_space_chars()):
        return "it ends in whitespace, which vocab.txt readers strip (HF tokenizers too)"
    if first and token.startswith("\ufeff"):
        return "it starts with a byte order mark, which vocab.txt readers drop"
    return None


def _read_vocab_file(path: Path) -> tuple[list[str], str]:
    text = read_utf8_file(path, "vocabulary")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # As HF tokenizers' WordPiece.from_file (Rust's trim_end): trailing
    # Unicode White_Space, "\r" included, is not part of the token; leading
    # whitespace is kept.
    ws = _white_space_chars()
    lines = [t.rstrip(ws) for t in lines]
    return lines, str(path)
