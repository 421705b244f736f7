"""The BPE model of HuggingFace ``tokenizers`` over characters, as tables
for :mod:`.kernels`.

:class:`CharBPE` takes what ``tokenizers.models.BPE`` takes (a vocabulary,
merges and the options of SentencePiece-converted ``tokenizer.json``
files: Llama 2, Mistral 7B, Gemma), checks it as ``tokenizers`` does when
it builds the model, and encodes batches of words (pre-tokenized pieces)
in one compiled call, with the ids and character offsets HF's
``Tokenizer.encode`` gives for each piece.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...runtime.texts import raise_not_str
from . import kernels as K

_MAX_ID = 2**31 - 1


def _table_size(n: int) -> int:
    """A power of two of at least ``2 n`` slots (and at least 2)."""
    return 1 << max(1, (2 * n).bit_length())


def _code_points(text: str) -> np.ndarray:
    """Code points of ``text`` as int32 (lone surrogates kept as they are)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), "<u4").astype(np.int32)


def _affix(name: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name}: expected a str or None, found {type(value).__name__}: {value!r:.80}")
    return value


def _merged(a: str, b: str, prefix_bytes: int) -> str | None:
    """HF's merge result: ``a`` then ``b`` without its first ``prefix_bytes``
    UTF-8 bytes (whatever they are); None when ``b`` is shorter or the cut
    is inside a character (HF panics, or finds no such token)."""
    if prefix_bytes == 0:
        return a + b
    raw = b.encode("utf-8", "surrogatepass")
    if len(raw) < prefix_bytes:
        return None
    try:
        return a + raw[prefix_bytes:].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


class CharBPE:
    """``tokenizers.models.BPE`` over characters, compiled.

    Parameters
    ----------
    vocab
        Token string -> id (ids: ints in ``0 .. 2**31 - 1``; two strings
        may share an id, as in HF).
    merges
        ``(left, right)`` pairs of token strings, by rank (first = merged
        first).  Each part and the result (``left`` + ``right`` without the
        first ``len(continuing_subword_prefix.encode())`` bytes of
        ``right``) must be in ``vocab``.  A pair listed twice keeps its
        last rank, as in HF.
    unk_token
        Token for characters not in the vocabulary (None: they are
        dropped, as HF does).  It need not be in ``vocab`` until a word
        needs it: HF raises then, and so does :meth:`encode_words`.
    byte_fallback
        Spell an unknown character as its UTF-8 bytes ``<0xNN>`` when all of
        them are tokens.
    fuse_unk
        A run of unknown characters is one unknown token.
    ignore_merges
        A word that is a token is that token.
    continuing_subword_prefix, end_of_word_suffix
        Prepended to every character but the first of a word, appended to
        the last one, before they are looked up.
    dropout
        None or 0 only: BPE dropout is random and is not supported.

    Examples
    --------
    >>> vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "abb": 4}
    >>> bpe = CharBPE(vocab, [("a", "b"), ("ab", "b")], unk_token="<unk>", fuse_unk=True)
    >>> ids, starts, ends, splits = bpe.encode_words(["abb", "xxab", ""])
    >>> ids.tolist(), starts.tolist(), ends.tolist(), splits.tolist()
    ([4, 0, 3], [0, 0, 2], [3, 2, 4], [0, 1, 3, 3])
    """

    def __init__(self, vocab: Mapping[str, int], merges: Sequence[tuple[str, str]], *,
                 unk_token: str | None = None, byte_fallback: bool = False, fuse_unk: bool = False,
                 ignore_merges: bool = False, continuing_subword_prefix: str | None = None,
                 end_of_word_suffix: str | None = None, dropout: float | None = None) -> None:
        if not isinstance(vocab, Mapping):
            raise TypeError(f"vocab: expected a dict of token -> id, found {type(vocab).__name__}")
        for name, flag in (("byte_fallback", byte_fallback), ("fuse_unk", fuse_unk), ("ignore_merges", ignore_merges)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name}: expected True or False, found {flag!r:.80}")
        if dropout is not None and not (isinstance(dropout, (int, float)) and not isinstance(dropout, bool)
                                        and dropout == 0):
            raise ValueError(f"dropout: expected None or 0 (BPE dropout is random; this encoder is exact), "
                             f"found {dropout!r:.80}")
        self.unk_token = _affix("unk_token", unk_token)
        self.continuing_subword_prefix = _affix("continuing_subword_prefix", continuing_subword_prefix)
        self.end_of_word_suffix = _affix("end_of_word_suffix", end_of_word_suffix)
        self.byte_fallback = bool(byte_fallback)
        self.fuse_unk = bool(fuse_unk)
        self.ignore_merges = bool(ignore_merges)
        self.vocab = self._checked_vocab(vocab)
        self._pairs = self._merge_table(merges)
        self._cptab = self._char_table()
        self._byte_tok = np.array([self.vocab.get(f"<0x{b:02X}>", -1) for b in range(256)], np.int32)
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        self._pre = np.frombuffer((prefix or "").encode("utf-8", "surrogatepass"), np.uint8)
        self._suf = np.frombuffer((suffix or "").encode("utf-8", "surrogatepass"), np.uint8)
        if self.ignore_merges:
            self._wbuf, self._woff, self._whash = self._word_table()
        else:
            self._wbuf = np.zeros(0, np.int32)
            self._woff = np.zeros(1, np.int64)
            self._whash = np.full(4, -1, np.int32)
        flags = np.zeros(K.N_FLAGS, np.int64)
        flags[K.F_PREFIX] = prefix is not None
        flags[K.F_SUFFIX] = suffix is not None
        flags[K.F_BYTE_FALLBACK] = self.byte_fallback
        flags[K.F_UNK] = unk_token is not None
        flags[K.F_UNK_ID] = self.vocab.get(unk_token, -1) if unk_token is not None else -1
        flags[K.F_FUSE_UNK] = self.fuse_unk
        flags[K.F_IGNORE_MERGES] = self.ignore_merges
        self._flags = flags

    # ------------------------------------------------------------- tables
    @staticmethod
    def _checked_vocab(vocab: Mapping[str, int]) -> dict[str, int]:
        keys = list(vocab.keys())
        ids = list(vocab.values())
        if not all(type(k) is str for k in keys):
            bad = next(k for k in keys if not isinstance(k, str))
            raise TypeError(f"vocab: expected str tokens, found {type(bad).__name__}: {bad!r:.80}")
        if not all(type(i) is int for i in ids):
            for k, i in zip(keys, ids):
                if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_)):
                    raise TypeError(f"vocab[{k!r:.80}]: expected an int id, found {type(i).__name__}: {i!r:.80}")
            ids = [int(i) for i in ids]
        if ids and (min(ids) < 0 or max(ids) > _MAX_ID):
            k, i = next((k, i) for k, i in zip(keys, ids) if not 0 <= i <= _MAX_ID)
            raise ValueError(f"vocab[{k!r:.80}]: expected an id in 0 .. {_MAX_ID}, found {i}")
        return dict(zip(keys, ids))

    def _merge_table(self, merges: Sequence[tuple[str, str]]) -> np.ndarray:
        if isinstance(merges, (str, bytes)) or not isinstance(merges, Sequence):
            raise TypeError(f"merges: expected a list of (left, right) pairs of str, found {type(merges).__name__}")
        vocab = self.vocab
        prefix = self.continuing_subword_prefix
        cut = len(prefix.encode("utf-8", "surrogatepass")) if prefix else 0
        n = len(merges)
        left = np.empty(n, np.int32)
        right = np.empty(n, np.int32)
        made = np.empty(n, np.int32)
        for r, pair in enumerate(merges):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(isinstance(p, str) for p in pair):
                raise TypeError(f"merges[{r}]: expected a (left, right) pair of str, found {pair!r:.80}")
            a, b = pair
            for part in (a, b):
                if part not in vocab:
                    raise ValueError(f"merges[{r}]: {pair!r:.80}: token {part!r:.80} is not in the vocabulary")
            if prefix and b.startswith(prefix):
                new = a + b[len(prefix):]
            else:
                new = _merged(a, b, cut)
            if new is None:
                raise ValueError(f"merges[{r}]: {pair!r:.80}: {b!r:.80} does not start with a whole "
                                 f"{cut}-byte continuing_subword_prefix (the right part loses its first {cut} "
                                 "bytes when merged)")
            t = vocab.get(new)
            if t is None:
                raise ValueError(f"merges[{r}]: {pair!r:.80}: the merged token {new!r:.80} is not in the vocabulary")
            left[r], right[r], made[r] = vocab[a], vocab[b], t
        return K.build_pairs(left, right, made, _table_size(n))

    def _char_table(self) -> np.ndarray:
        """Ids of ``ch``, ``prefix + ch``, ``ch + suffix``, ``prefix + ch +
        suffix`` by code point (the spellings of one character)."""
        prefix, suffix = self.continuing_subword_prefix, self.end_of_word_suffix
        lp = len(prefix) if prefix is not None else 0
        ls = len(suffix) if suffix is not None else 0
        cps: list[int] = []
        forms: list[int] = []
        ids: list[int] = []
        longest = lp + 1 + ls
        for s, t in self.vocab.items():
            n = len(s)
            if n > longest or n == 0:
                continue
            if n == 1:
                cps.append(ord(s)), forms.append(0), ids.append(t)
            if prefix is not None and n == lp + 1 and s.startswith(prefix):
                cps.append(ord(s[lp])), forms.append(1), ids.append(t)
            if suffix is not None and n == 1 + ls and s.endswith(suffix):
                cps.append(ord(s[0])), forms.append(2), ids.append(t)
            if prefix is not None and suffix is not None and n == lp + 1 + ls and s.startswith(prefix) \
                    and s.endswith(suffix):
                cps.append(ord(s[lp])), forms.append(3), ids.append(t)
        return K.build_chars(np.array(cps, np.int32), np.array(forms, np.int64), np.array(ids, np.int32),
                             _table_size(len(set(cps))))

    def _word_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        strings = list(self.vocab)
        wbuf = _code_points("".join(strings))
        woff = np.zeros(len(strings) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, strings), np.int64, len(strings)), out=woff[1:])
        ids = np.fromiter(self.vocab.values(), np.int32, len(strings))
        return wbuf, woff, K.build_words(wbuf, woff, ids, _table_size(len(strings)))

    # ----------------------------------------------------------- encoding
    def encode_words(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Encode each word (a pre-tokenized piece) on its own.

        Returns ``(ids, starts, ends, splits)``: int32 ids and character
        offsets within their word, and int64 ``splits`` (``len(words) + 1``):
        word ``w``'s tokens are ``splits[w]:splits[w + 1]``.  The offsets
        are HF's (``Tokenizer.encode(word).offsets``), which differ from the
        characters' positions where HF's do: after a dropped character (no
        ``unk_token``), and for byte tokens of affixes.

        >>> bpe = CharBPE({"<unk>": 0, "a": 1, "<0xC3>": 2, "<0xA9>": 3}, [], unk_token="<unk>",
        ...               byte_fallback=True)
        >>> [a.tolist() for a in bpe.encode_words(["aé"])]
        [[1, 2, 3], [0, 1, 1], [1, 2, 2], [0, 3]]
        """
        if isinstance(words, str):
            raise TypeError("words: expected a sequence of str, found one str (wrap it in a list)")
        try:
            lengths = np.fromiter(map(len, words), np.int64, len(words))
            joined = "".join(words)
        except TypeError:
            raise_not_str(words)
            raise
        bounds = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=bounds[1:])
        status, ids, starts, ends, splits = K.encode_batch(
            _code_points(joined), bounds, self._cptab, self._pairs, self._wbuf, self._woff, self._whash,
            self._byte_tok, self._pre, self._suf, self._flags)
        if status != K.OK:
            raise ValueError(f"words[{status}]: {words[status]!r:.80} needs the unknown token, but unk_token "
                             f"{self.unk_token!r:.80} is not in the vocabulary")
        return ids, starts, ends, splits

    def encode_shaped(self, cps: np.ndarray, text_splits: np.ndarray, part_a: np.ndarray, part_b: np.ndarray,
                      part_id: np.ndarray, part_splits: np.ndarray, rep: str, kind: int, scheme: int,
                      split: bool) -> tuple[np.ndarray, np.ndarray]:
        """Token rows of texts in a SentencePiece-converted shape, normalized,
        pre-tokenized and encoded in one compiled call
        (:func:`~.kernels.shape_rows`; the arguments are its own)."""
        status, rows, row_splits = K.shape_rows(cps, text_splits, part_a, part_b, part_id, part_splits, ord(rep),
                                                kind, scheme, bool(split), self._cptab, self._pairs, self._wbuf,
                                                self._woff, self._whash, self._byte_tok, self._pre, self._suf,
                                                self._flags)
        if status != K.OK:
            raise ValueError(f"a text needs the unknown token, but unk_token {self.unk_token!r:.80} is not in the "
                             "vocabulary")
        return rows, row_splits

    def __repr__(self) -> str:
        return (f"CharBPE({len(self.vocab)} tokens, unk_token={self.unk_token!r}, byte_fallback={self.byte_fallback}, "
                f"fuse_unk={self.fuse_unk}, ignore_merges={self.ignore_merges}, "
                f"continuing_subword_prefix={self.continuing_subword_prefix!r}, "
                f"end_of_word_suffix={self.end_of_word_suffix!r})")
