"""Results of encoding: one :class:`Encoding` per text, and a lazy batch.

Both hold int32 arrays; Python lists are made only for the attribute that
is read.  Rows of the underlying array: ids, type ids, attention mask,
special tokens mask, starts, ends, word indices, sequence indices (-1 for
none); results of one sequence without truncation or padding (plain
tokenization, and a batch of single texts with BERT's template) keep only
ids, starts, ends and word indices, the other rows being implied (template
tokens: word index -1).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import Iterator, overload

import numpy as np
from ..runtime.jit import kernel

from ..runtime.boxing import int_lists_of
from ..runtime.gcpause import paused_gc
from ..runtime import interrupts

_FULL = 8


def _itos(source):
    """An id -> token list from a Vocabulary (made on first need) or a list."""
    return source.id_to_token if hasattr(source, "id_to_token") else source


def _rows(data: np.ndarray):
    """(ids, type, attention, special, starts, ends, words, sequences) of either layout.

    The short layout holds one sequence without padding: type ids 0,
    attention 1, and the tokens without a word (template tokens such as
    ``[CLS]`` and ``[SEP]``, which the batch kernel may put there) are the
    special ones, of no sequence (-1); the others are of sequence 0."""
    if data.shape[0] == _FULL:
        return tuple(data)
    n = data.shape[1]
    nowords = data[3] < 0
    special = nowords.view(np.int8).astype(np.int32)
    return data[0], np.zeros(n, dtype=np.int32), np.ones(n, dtype=np.int32), special, data[1], data[2], data[3], -special


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
        As the template says; BERT's: 0 for the first sequence (with
        ``[CLS]`` and the first ``[SEP]``), 1 for the second.
    attention_mask : list[int]
        1 for real tokens, 0 for padding.
    special_tokens_mask : list[int]
        1 for tokens added by the template and for padding.
    word_ids : list[int | None]
        Index of the pre-tokenized word each token comes from (per sequence),
        None for template and padding tokens.
    n_sequences : int
        1 for a text, 2 for a pair.
    sequence_ids : list[int | None]
        0 or 1: the sequence each token comes from; None for template and
        padding tokens.
    overflowing : list[Encoding]
        When truncation cut the text: the encodings of the pieces that did
        not fit, each with the template (HuggingFace's ``overflowing``;
        consecutive pieces share ``stride`` tokens).  Empty otherwise.

    Notes
    -----
    The navigation methods (:meth:`token_to_chars`, :meth:`word_to_tokens`,
    :meth:`char_to_token`, ...) answer as HuggingFace ``tokenizers``'
    ``Encoding`` does, with one difference: a negative index raises
    :class:`ValueError` (HF raises ``OverflowError``).  A
    ``sequence_index`` the encoding does not have searches the whole
    encoding, as HF does.

    Examples
    --------
    >>> import segkit
    >>> wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "un", "##able", "to", "go"], lowercase=True)
    >>> e = wp.encode("Unable to", "go")
    >>> e.tokens, e.sequence_ids
    (['[CLS]', 'un', '##able', 'to', '[SEP]', 'go', '[SEP]'], [None, 0, 0, 0, None, 1, None])
    >>> e.word_to_tokens(0), e.word_to_chars(0), e.char_to_token(3), e.char_to_word(7)
    ((1, 3), (0, 6), 2, 1)
    >>> e.token_to_chars(5), e.token_to_sequence(5), e.char_to_token(0, sequence_index=1)
    ((0, 2), 1, 5)
    """

    __slots__ = ("_data", "_id_to_token", "_n_seq", "_ovf", "_ids", "_rows_of", "_source")

    def __init__(self, data: np.ndarray, id_to_token: Sequence, n_sequences: int = 1, overflow=None):
        self._data = data
        self._id_to_token = id_to_token
        self._n_seq = n_sequences
        # None, or (data, row splits, first, end): the overflowing
        # encodings are pieces first:end of an overflow batch.
        self._ovf = overflow
        self._ids = None
        # None, or ({id: (lstrip, rstrip, spaces, single_word)} of added tokens that
        # take spaces, (text, pair)): their token strings are the text they
        # matched, spaces included, as HF's (see _matched_strings).
        self._source = None

    @classmethod
    def _of_ids(cls, ids: list, id_to_token: Sequence, rows_of: tuple) -> "Encoding":
        """The encoding of one plain text (one sequence, no template,
        truncation or padding) whose ids are known and whose rows (offsets,
        word ids) are made only when first read: ``rows_of`` is ``(matcher,
        text, opts, post)``, and ``matcher.plain_rows(text, opts, post)``
        gives the (4, n) rows whose first row is ``ids``.  A per-call
        ``encode(t).ids`` then costs what the ids alone cost (one tuple, no
        closure: a per-call allocation shows)."""
        e = cls.__new__(cls)
        e._ids = ids
        e._rows_of = rows_of
        e._id_to_token = id_to_token
        e._n_seq = 1
        e._ovf = None
        e._source = None
        return e

    def __getattr__(self, name: str):
        # Reached only for an unset slot: ``_data`` of an encoding made by
        # _of_ids, made now from its text.
        if name != "_data":
            raise AttributeError(name)
        try:
            rows_of = object.__getattribute__(self, "_rows_of")
        except AttributeError:
            raise AttributeError(name) from None
        m, text, opts, post = rows_of
        data = m.plain_rows(text, opts, post)
        self._data = data
        self._rows_of = None
        return data

    def __reduce__(self):
        return (_rebuilt, (self._data, self._id_to_token, self._n_seq, self._ovf, self._source))

    @property
    def overflowing(self) -> list["Encoding"]:
        if self._ovf is None:
            return []
        data, rows, p0, p1 = self._ovf
        out = [Encoding(data[:, rows[p] : rows[p + 1]], self._id_to_token, self._n_seq) for p in range(p0, p1)]
        for e in out:
            e._source = self._source
        return out

    @property
    def ids(self) -> list[int]:
        ids = self._ids
        return self._data[0].tolist() if ids is None else ids[:]

    @property
    def tokens(self) -> list[str]:
        itos = _itos(self._id_to_token)
        ids = self._ids
        tokens = [itos[i] for i in (self._data[0].tolist() if ids is None else ids)]
        if self._source is not None:
            fix, texts = self._source
            if type(fix) is dict:
                _matched_strings(tokens, _rows(self._data), fix, texts)
            else:
                fix.fix(tokens, _rows(self._data), texts)
        return tokens

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
        ids = self._ids
        return int(self._data.shape[1]) if ids is None else len(ids)

    def __repr__(self) -> str:
        more = "..." if len(self) > 8 else ""
        return f"Encoding(num_tokens={len(self)}, tokens={self.tokens[:8]!r}{more})"

    # ------------------------------------------------------------ navigation
    @property
    def n_sequences(self) -> int:
        return self._n_seq

    def _sequence_row(self) -> np.ndarray:
        """The sequence of every token, -1 for template and padding tokens."""
        return _rows(self._data)[7]

    @property
    def sequence_ids(self) -> list[int | None]:
        return [None if q < 0 else q for q in self._sequence_row().tolist()]

    def _token(self, token_index: int) -> int | None:
        i = _index("token_index", token_index)
        return i if i < len(self) else None

    def _range(self, sequence_index: int) -> tuple[int, int]:
        """Tokens ``a:b`` of a sequence (the whole encoding for a sequence
        the encoding does not have, as HF)."""
        q = _index("sequence_index", sequence_index)
        if q >= self._n_seq:
            return 0, len(self)
        at = np.flatnonzero(self._sequence_row() == q)
        return (int(at[0]), int(at[-1]) + 1) if at.size else (0, 0)

    def token_to_sequence(self, token_index: int) -> int | None:
        """The sequence (0 or 1) of a token; None for template and padding
        tokens and past the end."""
        i = self._token(token_index)
        if i is None:
            return None
        q = int(self._sequence_row()[i])
        return None if q < 0 else q

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """``(start, end)`` character offsets of a token in its own text;
        None for template and padding tokens and past the end."""
        if self.token_to_sequence(token_index) is None:
            return None
        r = _rows(self._data)
        return int(r[4][token_index]), int(r[5][token_index])

    def token_to_word(self, token_index: int) -> int | None:
        """The index of the word a token belongs to, in its own sequence."""
        i = self._token(token_index)
        if i is None:
            return None
        w = int(_rows(self._data)[6][i])
        return None if w < 0 else w

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """Tokens ``start:end`` of a word of a sequence, or None.

        As HF, the search reads the sequence's tokens in order and stops at
        the first word after ``word_index``; this matters only for a
        sequence index the encoding does not have (then the whole encoding
        is one range, and a word of the first sequence is found, not the
        second's)."""
        w = _index("word_index", word_index)
        a, b = self._range(sequence_index)
        words = _rows(self._data)[6][a:b]
        later = np.flatnonzero(words > w) if w < 2**31 else np.empty(0, np.int64)
        if later.size:
            words = words[: later[0]]
        at = np.flatnonzero(words == w) if w < 2**31 else np.empty(0, np.int64)
        return (a + int(at[0]), a + int(at[-1]) + 1) if at.size else None

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """``(start, end)`` character offsets of a word of a sequence, or None."""
        span = self.word_to_tokens(word_index, sequence_index)
        if span is None:
            return None
        r = _rows(self._data)
        return int(r[4][span[0]]), int(r[5][span[1] - 1])

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The first token of a sequence whose offsets hold the character
        ``char_pos`` of that sequence's text; None if none does (a space, a
        removed character, past the end)."""
        c = _index("char_pos", char_pos)
        a, b = self._range(sequence_index)
        r = _rows(self._data)
        at = np.flatnonzero((r[4][a:b] <= c) & (c < r[5][a:b]))
        return a + int(at[0]) if at.size else None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The word of the token :meth:`char_to_token` finds, or None."""
        i = self.char_to_token(char_pos, sequence_index)
        return None if i is None else self.token_to_word(i)


def _rebuilt(data, id_to_token, n_seq, ovf, source) -> Encoding:
    e = Encoding(data, id_to_token, n_seq, ovf)
    e._source = source
    return e


def _white(c: str) -> bool:
    """Rust's ``char::is_whitespace`` (Unicode White_Space), which HF's
    ``lstrip``/``rstrip`` take; Python's ``isspace`` also takes U+001C-001F."""
    return c.isspace() and not "\x1c" <= c <= "\x1f"


class MatchedStrings:
    """HF's token strings of added tokens, exactly, for an encoding's
    ``tokens`` (where the text a token matched is not its name:
    ``lstrip``/``rstrip`` spaces, a normalizer's text around it).

    ``strings_of(text)`` gives ``{(id, start, end): string}`` of every added
    token matched in a text (offsets in the text; the string as HF's
    encoding holds it).  ``ids``: the ids whose strings may differ from
    their names.  ``model_names``: ``{id: string}`` where an added token
    took an id of the model's vocabulary under another name; a token of
    that id the model gave (no match there) shows the vocabulary's string,
    as HF's does.  Template tokens keep their names.
    """

    __slots__ = ("strings_of", "ids", "model_names")

    def __init__(self, strings_of: Callable[[str], dict], ids: Iterable[int], model_names: dict[int, str]) -> None:
        self.strings_of = strings_of
        self.ids = np.fromiter(sorted(set(ids) | set(model_names)), dtype=np.int64)
        self.model_names = model_names

    def fix(self, tokens: list, rows: tuple, texts: tuple) -> None:
        ids, starts, ends, seqs = rows[0], rows[4], rows[5], rows[7]
        hits = np.flatnonzero(np.isin(ids, self.ids))
        found: dict[int, dict] = {}
        for k in hits.tolist():
            q = int(seqs[k])
            text = texts[q] if 0 <= q < len(texts) else None
            if not isinstance(text, str):
                continue
            got = found.get(q)
            if got is None:
                got = found[q] = self.strings_of(text)
            i, a, b = int(ids[k]), int(starts[k]), int(ends[k])
            string = got.get((i, a, b))
            if string is None:  # (offsets that trim_offsets moved inside the match)
                string = next((v for (j, c, d), v in got.items() if j == i and c <= a and b <= d and c < d), None)
            if string is None:
                string = self.model_names.get(i)
            if string is not None:
                tokens[k] = string


def _matched_strings(tokens: list, rows: tuple, strip: dict, texts: tuple) -> None:
    """HF's token string of an added token with ``lstrip`` or ``rstrip``:
    the text it matched, the white space it took included (``" <mask>"``),
    written into ``tokens`` (a ``single_word`` token, whose entry holds the
    word-character test ``(text, i) -> bool`` of HF's rule, only where it
    was matched: the model may give the same id); ``spaces`` (or None) writes each
    white-space character as the normalizer does, for a ``normalized``
    token (BERT's: a tab becomes a space).  The spaces it took are those next to its
    offsets (which ``trim_offsets`` may have moved inside them), up to the
    end of the token before it in its sequence (a token whose ``rstrip``
    took them first keeps them)."""
    ids, starts, ends, seqs = rows[0], rows[4], rows[5], rows[7]
    hits = np.flatnonzero(np.isin(ids, np.fromiter(strip, dtype=np.int64, count=len(strip))))
    if not hits.size:
        return
    taken: dict[int, int] = {}  # token index -> end of the text its string holds
    for k in hits.tolist():
        q = int(seqs[k])
        text = texts[q] if 0 <= q < len(texts) else None
        if not isinstance(text, str):
            continue
        lstrip, rstrip, spaces, single_word = strip[int(ids[k])]
        a, b = int(starts[k]), int(ends[k])
        before = np.flatnonzero(seqs[:k] == q)
        floor = 0
        if before.size:
            j = int(before[-1])
            floor = taken.get(j, int(ends[j]))
        a2, b2 = a, b
        if lstrip:
            while a2 > floor and _white(text[a2 - 1]):
                a2 -= 1
        if rstrip:
            while b2 < len(text) and _white(text[b2]):
                b2 += 1
        matched = text[a2:b2]  # (offsets may hold the spaces, or lie inside them: trim_offsets)
        lead = len(matched) - len(matched.lstrip()) if lstrip else 0
        trail = len(matched) - len(matched.rstrip()) if rstrip else 0
        c0, c1 = a2 + lead, b2 - trail  # (the token's own text: single_word looks around it)
        if single_word is not None and ((c0 > 0 and single_word(text, c0 - 1)) or
                                        (c1 < len(text) and single_word(text, c1))):
            continue  # (not a match: the model's own token of that id, HF's single_word rule)
        taken[k] = b2
        before, after = matched[:lead], matched[len(matched) - trail:]
        if spaces is not None:  # (a normalized token: its spaces as the normalizer writes them)
            before, after = "".join(map(spaces, before)), "".join(map(spaces, after))
        tokens[k] = before + tokens[k] + after


def _index(name: str, value: object) -> int:
    """A non-negative int argument (numpy integers too), else TypeError/ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, found {type(value).__name__} {value!r:.40}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, found {value}")
    return int(value)


@kernel
def _to_matrix(values, rows, width, fill, left, out):
    for t in range(rows.size - 1):
        a = rows[t]
        n = rows[t + 1] - a
        pad = width - n if left else 0
        for j in range(width):
            out[t, j] = values[a + j - pad] if pad <= j < pad + n else fill


@kernel
def _with_overflow(data, rows, ovf, ovf_rows, ovf_texts):
    """Every encoding of a batch, each text's kept one followed by its
    overflowing ones: ``(data, row splits, text of each encoding)``."""
    n_texts = rows.size - 1
    n = n_texts + ovf_rows.size - 1
    out_rows = np.empty(n + 1, np.int64)
    owner = np.empty(n, np.int64)
    out = np.empty((data.shape[0], rows[n_texts] + ovf_rows[ovf_rows.size - 1]), data.dtype)
    e = 0
    k = 0
    out_rows[0] = 0
    for t in range(n_texts):
        for p in range(ovf_texts[t] - 1, ovf_texts[t + 1]):
            src = data if p < ovf_texts[t] else ovf
            a = rows[t] if p < ovf_texts[t] else ovf_rows[p]
            b = rows[t + 1] if p < ovf_texts[t] else ovf_rows[p + 1]
            for r in range(out.shape[0]):
                out[r, k : k + b - a] = src[r, a:b]
            k += b - a
            owner[e] = t
            e += 1
            out_rows[e] = k
    return out, out_rows, owner


class BatchEncoding(Sequence):
    """The encodings of a batch, held as flat arrays.

    Behaves as a read-only sequence of :class:`Encoding` (created on
    access); :meth:`to_numpy` gives model-ready matrices without any
    per-token Python objects.

    Attributes
    ----------
    row_splits : numpy.ndarray
        Tokens of text ``t`` are ``row_splits[t]:row_splits[t+1]`` of the flat arrays.
    overflow_to_sample_mapping : numpy.ndarray
        The text of every encoding, overflowing ones included, in the order
        of ``to_numpy(include_overflowing=True)`` (transformers' key).
    """

    __slots__ = ("_flat", "_splits", "_parts", "_part_starts", "_id_to_token", "pad_id", "n_sequences", "_ovf",
                 "pad_type_id", "padding_side", "_source")

    def __init__(
        self, data: np.ndarray, row_splits: np.ndarray, id_to_token: Sequence, pad_id: int = 0, n_sequences: int = 1,
        *, overflow=None, pad_type_id: int = 0, padding_side: str = "right",
    ):
        self._flat = data
        self._splits = row_splits
        self._parts = None
        self._part_starts = None
        self._id_to_token = id_to_token
        self.pad_id = pad_id
        self.n_sequences = n_sequences  # 2: every item is a pair; an int array for a mixed batch
        # None, or (data, row splits, text -> encodings splits) of the
        # overflowing encodings (see postprocess.assemble).
        self._ovf = overflow if overflow is not None and overflow[2][-1] > 0 else None
        self.pad_type_id = pad_type_id
        self.padding_side = padding_side  # where to_numpy pads rows shorter than the longest
        # None, or ({id: (lstrip, rstrip, spaces, single_word)}, [(text, pair) per item]): see Encoding._source
        self._source = None

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
        from ..runtime.threads import concat_segments

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
        nseq = self.n_sequences
        if type(nseq) is not int:  # a batch mixing texts and pairs: one count per text
            nseq = int(nseq[i if self._parts is None else i + self._part_starts[p]])
        a, b = int(splits[i]), int(splits[i + 1])
        ovf = None
        if self._ovf is not None:
            o = self._ovf
            p0, p1 = int(o[2][i]), int(o[2][i + 1])
            if p1 > p0:
                ovf = (o[0], o[1], p0, p1)
        e = Encoding(data[:, a:b], self._id_to_token, nseq, ovf)
        if self._source is not None:
            e._source = (self._source[0], self._source[1][i if self._parts is None else i + self._part_starts[p]])
        return e

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
        include_overflowing: bool = False,
    ) -> dict[str, np.ndarray]:
        """Model inputs as (batch, length) matrices.

        Rows shorter than the longest are padded (pad id, pad type id,
        attention 0) on the side of :attr:`padding_side`.  Keys:
        ``input_ids``, ``token_type_ids``, ``attention_mask``, and on request
        ``special_tokens_mask``, ``offset_mapping`` (batch, length, 2) and
        ``word_ids`` (-1 for none).  With ``include_overflowing``, each
        text's row is followed by the rows of its overflowing encodings, and
        ``overflow_to_sample_mapping`` gives the text of every row (as
        transformers' ``return_overflowing_tokens=True``).

        >>> import segkit
        >>> wp = segkit.WordPiece(["[PAD]", "[UNK]", "a", "##b"])
        >>> wp.encode_batch(["ab", "a a a"]).to_numpy()["input_ids"]
        array([[2, 3, 0],
               [2, 2, 2]])
        """
        owner = None
        if include_overflowing:
            owner = np.arange(len(self), dtype=np.int64)
            if self._ovf is not None:
                try:
                    data, rows, owner = _with_overflow(self._data, self.row_splits, *self._ovf)
                except SystemError as e:  # Ctrl-C while Numba boxed the result (segkit.interrupts)
                    interrupts.reraise_signal(e)
                    raise
                pieces = [(0, _rows(data), rows)]
        if owner is None or self._ovf is None:
            pieces = [(t0, _rows(data), rows) for t0, data, rows in self._pieces()]
        width = max((int(np.diff(rows).max()) for _, _, rows in pieces if rows.size > 1), default=0)
        b = sum(rows.size - 1 for _, _, rows in pieces)
        left = self.padding_side == "left"
        ntok = sum(int(rows[-1]) for _, _, rows in pieces)
        uniform = b > 0 and len(pieces) == 1 and ntok == b * width  # padded: every row has the same length

        def mat(field, fill):
            if uniform:
                return pieces[0][1][field].reshape(b, width).astype(dtype)
            out = np.empty((b, width), dtype=dtype)
            for t0, r, rows in pieces:
                _to_matrix(np.ascontiguousarray(r[field]), rows, width, fill, left, out[t0 : t0 + rows.size - 1])
            return out

        result = {
            "input_ids": mat(0, self.pad_id),
            "token_type_ids": mat(1, self.pad_type_id),
            "attention_mask": mat(2, 0),
        }
        if return_special_tokens_mask:
            result["special_tokens_mask"] = mat(3, 1)
        if return_offsets:
            result["offset_mapping"] = np.stack([mat(4, 0), mat(5, 0)], axis=-1)
        if return_word_ids:
            result["word_ids"] = mat(6, -1)
        if owner is not None:
            result["overflow_to_sample_mapping"] = owner
        return result

    @property
    def overflow_to_sample_mapping(self) -> np.ndarray:
        if self._ovf is None:
            return np.arange(len(self), dtype=np.int64)
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self._ovf[2]) + 1)

    def to_arrow(self, *, offsets: bool = True):
        """The batch as a ``pyarrow.Table`` (needs pyarrow: ``segkit[arrow]``).

        Columns ``input_ids``, ``token_type_ids``, ``attention_mask``,
        ``special_tokens_mask`` (``list<int32>``) and, unless ``offsets`` is
        False, ``offset_mapping`` (``list<fixed_size_list<int32, 2>>``); one
        row per text, no padding beyond what the encoding holds.  Built from
        the flat arrays without a Python object per token; the values
        buffers are the batch's own rows (no copy), the offsets are
        interleaved (one copy); see :mod:`segkit.scale.arrow`.

        >>> import pyarrow as pa
        >>> import segkit
        >>> wp = segkit.WordPiece(["[UNK]", "a", "##b"])
        >>> t = wp.encode_batch(["ab", "a a"]).to_arrow()
        >>> t.column("input_ids").to_pylist(), t.column("offset_mapping").to_pylist()[0]
        ([[1, 2], [1, 1]], [[0, 1], [1, 2]])
        >>> t.schema.field("input_ids").type == pa.list_(pa.int32())
        True
        """
        from ..scale.arrow import batch_to_arrow

        return batch_to_arrow(self, offsets=offsets)

    def __repr__(self) -> str:
        ntok = sum(int(rows[-1]) for _, _, rows in self._pieces())
        return f"BatchEncoding(num_texts={len(self)}, num_tokens={ntok})"

