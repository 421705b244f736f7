r"""Pre-tokenization for byte-level BPE: tiktoken's patterns, compiled.

Byte-level BPE never merges across the pieces a regular expression cuts the
text into.  This module cuts UTF-8 bytes into those pieces:

* GPT-2's pattern (tiktoken's ``r50k_base``/``p50k_base``, HF's ByteLevel;
  :data:`GPT2_PATTERN` and its equivalent spellings :data:`R50K_PATTERN`,
  :data:`GPT2_ORIGINAL_PATTERN`), :data:`CL100K_PATTERN` and
  :data:`O200K_PATTERN` run as compiled matchers
  (:mod:`.pretokenize_kernels`), identical to :mod:`regex` with the same
  pattern (the test-suite checks it under hypothesis and on a corpus);
* any other pattern runs through :mod:`regex` (:class:`Pretokenizer`
  chooses), with the same output, several times more slowly.

>>> Pretokenizer(CL100K_PATTERN).findall("I'LL pay $1234.50 for 2 cafés!\n\n")
['I', "'LL", ' pay', ' $', '123', '4', '.', '50', ' for', ' ', '2', ' cafés', '!\n\n']

Output
------
Batches are UTF-8 bytes plus row splits (row ``r`` is
``buf[row_splits[r]:row_splits[r + 1]]``), and so are the pieces
(:class:`Pieces`): flat ``starts``, ``ends`` (byte offsets into the
buffer), ``ids`` (-1 for text to encode, else the id of a special token)
and ``row_splits`` over pieces.  No Python object is made per piece and the
compiled path releases the GIL.

Text must be valid UTF-8: ``str`` input is encoded here and a lone
surrogate (which has no UTF-8 form) is a ValueError naming the text and
the position; tiktoken instead replaces it with U+FFFD before encoding,
silently changing the text.  segkit reports it, so that what is encoded is
what was given.

For an encoder's own compiled loop (:mod:`.pretokenize_kernels`):
:func:`~.pretokenize_kernels.split_row` ``(kind, buf, p, end, table, plan,
ends, ids, n)`` writes the pieces of one text into arrays the caller owns;
``gpt2_match_end`` / ``cl100k_match_end`` / ``o200k_match_end`` ``(buf, p,
end, table)`` give the end of the piece starting at byte ``p`` (inline one
per compiled loop: a loop holding all three compiles several times
longer); ``kind`` is :attr:`Pretokenizer.kind`, ``table`` is
:func:`~.char_classes.class_table` ``()`` and ``plan`` comes from
:meth:`~.special_tokens.SpecialTokens.plan`.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ...runtime.unicode_flavours import substitute
from .char_classes import class_table
from .pretokenize_kernels import (
    DISALLOWED_FOUND,
    KIND_CL100K,
    KIND_GPT2,
    KIND_LLAMA3,
    KIND_O200K,
    KIND_QWEN2,
    KIND_REGEX,
    regex_layout,
    split_batch,
    split_row,
)
from .special_tokens import NO_SPECIALS, SpecialTokens, disallowed_error, token_string

__all__ = [
    "CL100K_PATTERN",
    "COMPILED_PATTERNS",
    "GPT2_ORIGINAL_PATTERN",
    "GPT2_PATTERN",
    "LLAMA3_PATTERN",
    "NO_SPECIALS",
    "O200K_PATTERN",
    "QWEN2_PATTERN",
    "R50K_PATTERN",
    "TIKTOKEN_PATTERNS",
    "Pieces",
    "Pretokenizer",
    "SpecialTokens",
    "check_buffer",
    "encode_texts",
    "pattern_kind",
]

#: GPT-2's pattern as segkit's trainer writes it (``train_bpe``'s default).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: The same pattern as tiktoken 0.14 writes it (``r50k_base``, ``p50k_base``):
#: possessive runs, ``\s++$|\s+(?!\S)|\s`` for white space; the same pieces.
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
#: The same pattern as GPT-2's release and HF ``tokenizers``' ByteLevel write it.
GPT2_ORIGINAL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: tiktoken 0.14's ``cl100k_base`` pattern.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
#: tiktoken 0.14's ``o200k_base`` pattern.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
#: Llama 3 (cl100k's pattern before tiktoken rewrote it: no possessive
#: quantifiers, ``\s*[\r\n]+`` for newlines).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)
#: Qwen2 / Qwen2.5 / Qwen3 (Llama 3's with one digit per piece).
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)

#: Patterns that run compiled, and the matcher each runs.
COMPILED_PATTERNS: dict[str, int] = {
    GPT2_PATTERN: KIND_GPT2,
    R50K_PATTERN: KIND_GPT2,
    GPT2_ORIGINAL_PATTERN: KIND_GPT2,
    CL100K_PATTERN: KIND_CL100K,
    O200K_PATTERN: KIND_O200K,
    LLAMA3_PATTERN: KIND_LLAMA3,
    QWEN2_PATTERN: KIND_QWEN2,
}
#: The pattern of each tiktoken encoding name.
TIKTOKEN_PATTERNS: dict[str, str] = {
    "gpt2": R50K_PATTERN,
    "r50k_base": R50K_PATTERN,
    "p50k_base": R50K_PATTERN,
    "cl100k_base": CL100K_PATTERN,
    "o200k_base": O200K_PATTERN,
}

# stands for the class table where the regex path needs none (the same
# Numba type as the real one: no second compilation)
_NO_TABLE = np.zeros(1, dtype=np.uint8)
_NO_TABLE.setflags(write=False)

# Pretokenizer.split writes into per-thread scratch arrays (a compiled
# function returning arrays costs about a microsecond per array); texts
# longer than this take the batch path, which allocates.
_SCRATCH_BYTES = 1 << 16
_scratch = threading.local()


def _scratch_arrays(n: int) -> tuple[np.ndarray, np.ndarray]:
    ends = getattr(_scratch, "ends", None)
    if ends is None or len(ends) < n:
        _scratch.ends = ends = np.empty(max(n, 1024), np.int64)
        _scratch.ids = np.empty(max(n, 1024), np.int32)
    return ends, _scratch.ids


def pattern_kind(pattern: str) -> int:
    r"""The compiled matcher for ``pattern`` (``KIND_GPT2``, ``KIND_CL100K``,
    ``KIND_O200K``), or ``KIND_REGEX`` for a pattern :mod:`regex` must run.
    Only the exact strings of :data:`COMPILED_PATTERNS` are recognized.

    >>> pattern_kind(CL100K_PATTERN) == KIND_CL100K, pattern_kind(r"\w+") == KIND_REGEX
    (True, True)
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a pre-tokenization pattern must be a str, found {type(pattern).__name__}")
    return COMPILED_PATTERNS.get(pattern, KIND_REGEX)


class Pieces(NamedTuple):
    """Pieces of a batch of texts (see the module docstring).

    ``data`` holds the UTF-8 bytes; piece ``i`` is
    ``data[starts[i]:ends[i]]``, with id ``ids[i]`` (-1: text); the pieces
    of row ``r`` are ``row_splits[r]:row_splits[r + 1]``.
    """

    data: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    ids: np.ndarray
    row_splits: np.ndarray

    def strings(self, row: int = 0) -> list[str]:
        """The pieces of one row as strings (for tests and inspection)."""
        lo, hi = int(self.row_splits[row]), int(self.row_splits[row + 1])
        if lo == hi:
            return []
        base = int(self.starts[lo])
        raw = self.data[base : int(self.ends[hi - 1])].tobytes()
        return [
            raw[s - base : e - base].decode("utf-8")
            for s, e in zip(self.starts[lo:hi].tolist(), self.ends[lo:hi].tolist())
        ]


def encode_texts(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of ``texts`` as one buffer and row splits.

    A lone surrogate is a ValueError naming the text and position.

    >>> buf, splits = encode_texts(["ab", "é"])
    >>> buf.tolist(), splits.tolist()
    ([97, 98, 195, 169], [0, 2, 4])
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, found a single str (wrap it in a list)")
    parts = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be a str, found {type(t).__name__}")
        try:
            parts.append(t.encode("utf-8"))
        except UnicodeEncodeError as e:
            raise ValueError(
                f"texts[{i}] has a lone surrogate {t[e.start]!r} at position {e.start}: it is not valid "
                f"UTF-8 (tiktoken would silently replace it with U+FFFD)"
            ) from None
    splits = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=splits[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), splits


def _encode_one(text: str) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, found {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"the text has a lone surrogate {text[e.start]!r} at position {e.start}: it is not valid UTF-8 "
            f"(tiktoken would silently replace it with U+FFFD)"
        ) from None


def check_buffer(buf: np.ndarray, row_splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``buf`` and ``row_splits`` as the kernels need them, or a ValueError:
    uint8 bytes, valid UTF-8, rows splitting it at character boundaries."""
    buf = np.ascontiguousarray(buf)
    if buf.dtype != np.uint8 or buf.ndim != 1:
        raise TypeError(f"buf must be a 1-d uint8 array, found {buf.dtype} with {buf.ndim} dimensions")
    rs = np.asarray(row_splits)
    if rs.ndim != 1 or rs.size < 1 or not np.issubdtype(rs.dtype, np.integer):
        raise ValueError(f"row_splits must be a non-empty 1-d integer array, found {rs.dtype} of shape {rs.shape}")
    rs = rs.astype(np.int64)
    if rs[0] < 0 or rs[-1] > buf.size or np.any(np.diff(rs) < 0):
        raise ValueError(f"row_splits must rise from >= 0 to <= len(buf) = {buf.size}, found {rs[:8].tolist()}...")
    try:
        codecs.utf_8_decode(memoryview(buf[rs[0] : rs[-1]]), "strict", True)
    except UnicodeDecodeError as e:
        raise ValueError(f"buf is not valid UTF-8: byte {int(rs[0]) + e.start} ({e.reason})") from None
    inner = rs[(rs > rs[0]) & (rs < rs[-1])]
    if np.any((buf[inner] & 0xC0) == 0x80):
        bad = int(inner[(buf[inner] & 0xC0) == 0x80][0])
        raise ValueError(f"row_splits cuts a character in two at byte {bad}")
    return buf, rs


class Pretokenizer:
    """Cuts text into pre-tokens by ``pattern``: compiled for GPT-2's,
    cl100k's and o200k's patterns (:data:`COMPILED_PATTERNS`), through
    :mod:`regex` for any other.

    Parameters
    ----------
    pattern
        The regular expression (:mod:`regex` syntax), e.g. :data:`O200K_PATTERN`.
    flavour
        Whose character classes the pattern means: ``"regex"`` (the
        installed :mod:`regex`), ``"onig"`` (HF tokenizers: tokenizer.json
        files) or ``"rust"`` (tiktoken: tiktoken files); see
        :mod:`segkit.runtime.unicode_flavours`.

    Notes
    -----
    With :mod:`regex`, pieces are the pattern's non-empty matches
    (``regex.finditer``); text no match covers belongs to no piece, as in
    tiktoken (the compiled patterns cover all text).  Its cost: see
    ``benchmarks/bench_pretokenize.py``.

    Examples
    --------
    >>> pre = Pretokenizer(O200K_PATTERN)
    >>> pre.compiled, pre.findall("HTTPServer's 12345 x")
    (True, ["HTTPServer's", ' ', '123', '45', ' x'])
    >>> pieces = pre.split_batch(["a b", "<|endoftext|>c"], SpecialTokens({"<|endoftext|>": 9}).plan("all"))
    >>> pieces.starts.tolist(), pieces.ends.tolist(), pieces.ids.tolist(), pieces.row_splits.tolist()
    ([0, 1, 3, 16], [1, 3, 16, 17], [-1, -1, 9, -1], [0, 2, 4])
    >>> Pretokenizer(r"\\d+").findall("a1b22")
    ['1', '22']
    """

    def __init__(self, pattern: str = GPT2_PATTERN, flavour: str = "regex") -> None:
        from ...runtime.unicode_flavours import check_flavour

        self.kind = pattern_kind(pattern)
        self.pattern = pattern
        #: whose character classes the compiled matchers use: "regex" (the
        #: installed regex module), "onig" (HF tokenizers), "rust" (tiktoken)
        self.flavour = check_flavour(flavour)
        self._rx = None
        if self.kind == KIND_REGEX:
            import regex

            try:
                self._rx = regex.compile(pattern)
            except regex.error as e:
                raise ValueError(f"the pre-tokenization pattern {pattern!r} is not a valid regex: {e}") from None

    @property
    def compiled(self) -> bool:
        """Whether the pattern runs compiled (else :mod:`regex` runs it)."""
        return self.kind != KIND_REGEX

    def __repr__(self) -> str:
        if self.flavour != "regex":
            return f"Pretokenizer({self.pattern!r}, flavour={self.flavour!r})"
        return f"Pretokenizer({self.pattern!r})"

    def __reduce__(self):
        return (Pretokenizer, (self.pattern, self.flavour))

    def __eq__(self, other) -> bool:
        return isinstance(other, Pretokenizer) and (other.pattern, other.flavour) == (self.pattern, self.flavour)

    def __hash__(self) -> int:
        return hash((self.pattern, self.flavour))

    def split_buffer(self, buf: np.ndarray, row_splits: np.ndarray, plan: np.ndarray = NO_SPECIALS) -> Pieces:
        """Pieces of the rows of a UTF-8 buffer (checked: :func:`check_buffer`),
        cut at the allowed special tokens of ``plan``
        (:meth:`~.special_tokens.SpecialTokens.plan`; a disallowed one is a
        ValueError naming the row, the position and the token)."""
        buf, rs = check_buffer(buf, row_splits)
        return self._split(buf, rs, plan)

    def split_batch(self, texts: Sequence[str], plan: np.ndarray = NO_SPECIALS) -> Pieces:
        """Pieces of a list of texts (see :meth:`split_buffer`)."""
        buf, rs = encode_texts(texts)
        return self._split(buf, rs, plan)

    def split(self, text: str, plan: np.ndarray = NO_SPECIALS) -> Pieces:
        """Pieces of one text (a batch of one row)."""
        data = np.frombuffer(_encode_one(text), dtype=np.uint8)
        n = data.size
        if n > _SCRATCH_BYTES:
            return self._split(data, np.array([0, n], dtype=np.int64), plan, single=True)
        table = class_table(self.flavour) if self.kind != KIND_REGEX else _NO_TABLE
        ends, ids = _scratch_arrays(n)
        status, pos, k, t = split_row(self.kind, data, 0, n, table, plan, ends, ids, 0)
        if status == DISALLOWED_FOUND:
            raise disallowed_error(token_string(plan, t), len(data[:pos].tobytes().decode("utf-8")))
        ends = ends[:k].copy()
        ids = ids[:k].copy()
        starts = np.empty(k, dtype=np.int64)
        if k:
            starts[0] = 0
            starts[1:] = ends[:-1]
        splits = np.array([0, k], dtype=np.int64)
        if self.kind == KIND_REGEX:
            rs = np.array([0, n], dtype=np.int64)
            starts, ends, ids, splits = _regex_pieces(self._rx, data, rs, starts, ends, ids, splits, self.flavour)
        return Pieces(data, starts, ends, ids, splits)

    def findall(self, text: str) -> list[str]:
        """The pieces of ``text`` as strings: ``regex.findall(pattern, text)``
        for texts without special tokens (and without empty matches)."""
        return self.split(text).strings(0)

    def _split(self, buf: np.ndarray, rs: np.ndarray, plan: np.ndarray, single: bool = False) -> Pieces:
        table = class_table(self.flavour) if self.kind != KIND_REGEX else _NO_TABLE
        status, state, starts, ends, ids, splits = split_batch(self.kind, buf, rs, table, plan)
        if status == DISALLOWED_FOUND:
            row, pos, t = (int(x) for x in state)
            position = len(buf[rs[row] : pos].tobytes().decode("utf-8"))
            raise disallowed_error(token_string(plan, t), position, None if single else row)
        if self.kind == KIND_REGEX:
            starts, ends, ids, splits = _regex_pieces(self._rx, buf, rs, starts, ends, ids, splits, self.flavour)
        return Pieces(buf, starts, ends, ids, splits)


def _regex_pieces(rx, buf, rs, seg_starts, seg_ends, seg_ids, seg_splits, flavour: str = "regex"):
    """Expand the stretches of text between special tokens into the
    pattern's non-empty matches (``regex.finditer``), as byte offsets
    (another flavour than ``"regex"``: on the text as that flavour's
    engine sees it, :func:`~segkit.runtime.unicode_flavours.substitute`).

    Python only collects each stretch's match offsets (in characters);
    one compiled pass turns them into byte offsets and lays the pieces out.
    """
    raw = buf.tobytes()
    offsets: list[int] = []
    counts = np.zeros(len(seg_ends), dtype=np.int64)
    for i, (s, e, tid) in enumerate(zip(seg_starts.tolist(), seg_ends.tolist(), seg_ids.tolist())):
        if tid >= 0:
            continue
        k = len(offsets)
        for m in rx.finditer(substitute(raw[s:e].decode("utf-8"), flavour)):
            a, b = m.span()
            if b > a:
                offsets += (a, b)
        counts[i] = (len(offsets) - k) // 2
    return regex_layout(buf, seg_starts, seg_ends, seg_ids, seg_splits, counts, np.array(offsets, dtype=np.int64))
