"""The engine: a LinMaxMatch automaton over any set of keys.

It knows tries, failure links and pops, direction and word boundaries; it
knows nothing of BERT or Chinese.  A preset gives it

* an alphabet: ``"char"`` (keys and texts are code points, looked up in a
  char map that also gives each a boundary class) or ``"byte"`` (keys and
  texts are bytes, a ``str`` matched as its UTF-8; the 256 byte values are
  the symbols, there is no char map and no boundary: the whole text is one
  word, offsets count bytes),
* keys (strings, or byte strings for the byte alphabet) with their ids,
* a suffix indicator (any string, possibly empty): keys that start with it
  also match as continuations, with the indicator stripped,
* a boundary class per code point (see :mod:`segkit.engine.charmap`),
* what to do with what cannot be matched: ``"word"`` (the whole word becomes
  the unk id) or ``"char"`` (every unseen character becomes a one-character
  token),
* a direction: ``"forward"`` (longest prefix first) or ``"backward"``
  (longest suffix first, run as forward matching of the reversed word with
  reversed keys; the outputs are mapped back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import sys
import threading

import numpy as np

from ..runtime import interrupts
from ..runtime.surrogates import check_texts, surrogate_message
from ..runtime.texts import raise_not_str, text_lengths
from . import build, kernels
from .dispatch import resolve_entry
from .charmap import MAX_CODE_POINT, build_charmap, lookup
from . import utf8

_UNLIMITED = np.iinfo(np.int32).max
#: Single texts up to this many characters use a per-thread scratch buffer.
_MAX_SCRATCH = 1 << 16
#: Automata with at least this many double-array slots (8 MiB of
#: transitions) prefetch ahead in batches by default (:attr:`Automaton.lookahead`).
LOOKAHEAD_MIN_SLOTS = 1 << 20
#: The same for the byte alphabet, whose tokens start anywhere (no word
#: boundaries), so that a prefetch for "a token starting 32 bytes ahead"
#: warms the first nodes of most tokens: the RWKV World automaton (127,000
#: slots, 2 MB) matches the multilingual corpus about 1.1x faster with it.
LOOKAHEAD_MIN_SLOTS_BYTES = 1 << 16
#: The ``clsmask`` of a byte alphabet kernel, without and with prefetching.
_MASKS = (np.int64(0), np.int64(kernels.LOOKAHEAD))
#: Texts a byte alphabet batch of ``str`` joins and encodes at a time.
_BLOCK_TEXTS = 2048
#: From this many characters on, :func:`to_code_points` lets NumPy convert.
_NUMPY_CONVERSION = 1 << 16
_U32 = np.dtype(np.uint32)
_UTF32_NATIVE = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


def to_code_points(text: str, what: str = "text") -> np.ndarray:
    """Code points of ``text`` as a uint32 array.  A lone surrogate is a
    ValueError naming ``what`` and its position (segkit takes only text
    that UTF-8 can encode: see :mod:`segkit.runtime.surrogates`)."""
    if not isinstance(text, str):
        raise TypeError(f"expected text as str, found {type(text).__name__}: {text!r:.80}")
    if len(text) < _NUMPY_CONVERSION:
        try:
            # "utf-32" (native byte order, after a 4-byte BOM) is a codec name
            # CPython encodes without looking the codec up: 0.09 us for a
            # word, where "utf-32-le" takes 0.34 us.  It refuses lone
            # surrogates, which is the check.
            return np.frombuffer(text.encode("utf-32"), _U32, offset=4)
        except UnicodeEncodeError as e:
            raise ValueError(surrogate_message(what, text, e.start)) from None
    # Large texts: NumPy converts into memory it allocates itself, with huge
    # pages, where a bytes object of that size costs a page fault per 4 KiB
    # (whole corpus: 8,000 fewer faults, 30% less time).  Same result type:
    # a read-only, aligned, contiguous uint32 array.
    cps = np.array(text).reshape(1).view(np.uint32)
    if not text.isascii():
        bad = np.flatnonzero((cps >= 0xD800) & (cps <= 0xDFFF))
        if bad.size:
            raise ValueError(surrogate_message(what, text, int(bad[0])))
    cps.flags.writeable = False
    return cps


def key_bytes(keys: Sequence[bytes | str]) -> list[bytes]:
    """Keys of the byte alphabet as bytes: a ``str`` stands for its UTF-8
    (TypeError for anything else, ValueError naming a key that cannot be
    encoded)."""
    out = []
    for i, k in enumerate(keys):
        if isinstance(k, bytes):
            out.append(k)
        elif isinstance(k, str):
            try:
                out.append(k.encode("utf-8"))
            except UnicodeEncodeError as e:
                raise ValueError(f"key {i} ({k!r:.60}) has a lone surrogate at position {e.start}: "
                                 "it has no UTF-8") from None
        elif isinstance(k, (bytearray, memoryview)):
            out.append(bytes(k))
        else:
            raise TypeError(f"expected keys as bytes or str, found {type(k).__name__} at index {i}: {k!r:.80}")
    return out


def join_code_points(texts: Sequence[str], lengths: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All texts as one code point array plus ``bounds`` (length n+1).
    ``lengths``: the texts' lengths, when the caller has them already."""
    try:
        if lengths is None:
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        joined = "".join(texts)
    except TypeError:
        raise_not_str(texts)
        raise
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    if bounds[-1] != len(joined) or (len(lengths) and lengths.min() < 0):
        raise ValueError(f"lengths do not fit the texts: they sum to {int(bounds[-1])}, the texts hold {len(joined)} "
                         "characters (or a length is negative)")
    try:
        return to_code_points(joined), bounds
    except ValueError:  # a lone surrogate: name the text it is in
        check_texts(texts, "texts")
        raise


#: Symbols of the byte alphabet: byte ``c`` is symbol ``c + 1``.
BYTE_SYMBOLS = 256


@dataclass(frozen=True)
class EngineConfig:
    """How the automaton matches (everything but the keys).

    ``alphabet``: ``"char"`` (code points; the default) or ``"byte"``
    (bytes: keys are byte strings, texts bytes or the UTF-8 of a ``str``,
    offsets in bytes, no boundary classes; ``max_word_chars`` then counts
    bytes and ``max_word_bytes`` must be None).  With ``unknown="char"`` a
    byte no key starts with becomes a one-byte token of ``char_id``; with
    ``"word"`` it makes the whole text (one word) the unk id.

    Examples
    --------
    >>> from segkit import Automaton, EngineConfig
    >>> cfg = EngineConfig(alphabet="byte", unknown="char", char_id=-1)
    >>> a = Automaton.build([b"a", b"ab", "é".encode()], [0, 1, 2], cfg)
    >>> a.segment_id_list("abaé!")  # the UTF-8 of the text; "!" is no key
    [1, 0, 2, -1]
    """

    suffix_indicator: str = ""
    unknown: str = "word"  # "word" or "char"
    direction: str = "forward"  # "forward" or "backward"
    unk_id: int = -1
    char_id: int = -1
    max_word_chars: int | None = None
    max_word_bytes: int | None = None
    alphabet: str = "char"  # "char" or "byte"

    def __post_init__(self) -> None:
        if self.alphabet not in ("char", "byte"):
            raise ValueError(f"alphabet must be 'char' or 'byte', found {self.alphabet!r}")
        if self.alphabet == "byte" and self.max_word_bytes is not None:
            raise ValueError(
                "max_word_bytes is for the char alphabet; with alphabet='byte' max_word_chars counts bytes, "
                f"found max_word_bytes={self.max_word_bytes!r}"
            )
        if not isinstance(self.suffix_indicator, str):
            raise TypeError(
                f"suffix_indicator must be a str, found {type(self.suffix_indicator).__name__}"
            )
        if self.unknown not in ("word", "char"):
            raise ValueError(f"unknown must be 'word' or 'char', found {self.unknown!r}")
        if self.direction not in ("forward", "backward"):
            raise ValueError(f"direction must be 'forward' or 'backward', found {self.direction!r}")
        if self.direction == "backward" and self.suffix_indicator:
            raise ValueError(
                "backward matching is defined for an empty suffix indicator only, "
                f"found {self.suffix_indicator!r}"
            )
        for name in ("unk_id", "char_id"):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not -(1 << 31) <= x < (1 << 31):
                raise ValueError(f"{name} must be an int32 value, found {x!r}")
        if self.max_word_chars is not None and (
            isinstance(self.max_word_chars, bool) or not isinstance(self.max_word_chars, int)
            or not 1 <= self.max_word_chars < (1 << 31)
        ):
            raise ValueError(f"max_word_chars must be a positive int or None, found {self.max_word_chars!r}")
        if self.max_word_bytes is not None and (
            isinstance(self.max_word_bytes, bool) or not isinstance(self.max_word_bytes, int)
            or not 1 <= self.max_word_bytes < (1 << 31)
        ):
            raise ValueError(f"max_word_bytes must be a positive int or None, found {self.max_word_bytes!r}")


class Automaton:
    """A compiled LinMaxMatch automaton (immutable; safe to share across threads).

    Build one with :meth:`Automaton.build`.  All of it lives in one int32
    array, :attr:`packed` (see :mod:`segkit.engine.kernels`); the parts are
    available as views:

    ``cmap``
        code point -> ``symbol << 2 | boundary class`` (two-level table;
        empty for the byte alphabet, where byte ``c`` is symbol ``c + 1``);
    ``trans``
        (slots, 2): double-array ``base`` and ``check``;
    ``fails``
        (slots, 2): failure link and failure pops (a single pop inline as a
        negative number, else an offset into ``pool``);
    ``pool``
        failure pops: per list a header (count, start) and, from the start,
        (token id, characters covered) pairs; lists share pairs (a list
        often extends another, see :func:`segkit.engine.build.compute_failure`);
    ``params``
        scalars of :mod:`segkit.engine.kernels`.

    Attributes
    ----------
    lookahead : bool
        Whether batch matching (:meth:`segment_code_points` and the calls
        built on it) prefetches the transitions of positions ahead of the
        one being matched (see :func:`segkit.engine.kernels._segment_range`).
        It never changes a result.  Default: True for automata of at least
        :data:`LOOKAHEAD_MIN_SLOTS` slots, whose transitions do not fit a
        core's cache (the default Chinese dictionary: 1.2 million slots,
        about 1.4x faster with it); smaller ones run faster without (the
        multilingual BERT vocabulary, 370,000 slots: 0.75x with it).
    """

    __slots__ = ("packed", "cmap", "trans", "fails", "pool", "params", "config", "num_symbols", "_local", "_backward",
                 "_ids_entry", "lookahead", "_bytes", "_str_entry")

    def __init__(self, packed: np.ndarray, config: EngineConfig, num_symbols: int):
        if packed.flags.writeable:
            packed.setflags(write=False)
        self.packed = packed
        self.cmap, self.trans, self.fails, self.pool, self.params = kernels.unpack(packed)
        self.config = config
        self.num_symbols = num_symbols
        self._local = threading.local()  # per-thread scratch for single texts
        self._backward = config.direction == "backward"
        self._bytes = config.alphabet == "byte"
        self._ids_entry = None  # segment_ids_into's compiled entry point, once resolved
        self._str_entry = None  # the byte alphabet's str kernel, once resolved
        self.lookahead = self.trans.shape[0] >= (LOOKAHEAD_MIN_SLOTS_BYTES if self._bytes else LOOKAHEAD_MIN_SLOTS)

    # ------------------------------------------------------------------ build
    @classmethod
    @interrupts.interruptible(source="keys")
    def build(
        cls,
        keys: Sequence[str],
        ids: Sequence[int] | np.ndarray,
        config: EngineConfig,
        classes: np.ndarray | None = None,
    ) -> "Automaton":
        """Build the automaton for ``keys`` (``keys[i]`` has id ``ids[i]``).

        Empty keys are ignored; keys must be distinct.  ``classes`` is a uint8
        array over all code points (``None``: every character is a word
        character).  With ``config.alphabet == "byte"`` the keys are bytes
        (a ``str`` key stands for its UTF-8) and ``classes`` must be None.
        """
        ids = np.asarray(ids, dtype=np.int32)
        if len(keys) != ids.size:
            raise ValueError(f"expected one id per key, found {len(keys)} keys and {ids.size} ids")
        if config.alphabet == "byte":
            if classes is not None:
                raise ValueError("the byte alphabet has no boundary classes: classes must be None")
            return cls._build_bytes(keys, ids, config)
        sfx = config.suffix_indicator
        cps = to_code_points("".join(keys))
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        counts = np.bincount(cps, minlength=MAX_CODE_POINT + 1)
        alphabet = np.flatnonzero(counts)
        # Frequent characters get small symbols: denser double-array rows.
        alphabet = alphabet[np.argsort(-counts[alphabet], kind="stable")]
        nsym = int(alphabet.size)
        sym_of_cp = np.zeros(MAX_CODE_POINT + 1, dtype=np.int32)
        sym_of_cp[alphabet] = np.arange(1, nsym + 1, dtype=np.int32)
        # Symbols of all keys, then one extra symbol per alphabet character
        # (the one-character keys of the "char" unknown policy).
        syms = np.concatenate([sym_of_cp[cps], np.arange(1, nsym + 1, dtype=np.int32)])
        sfx_units = to_code_points(sfx).astype(np.int64) if sfx else ()
        keys = _keys_by_tree(cps, starts, ends, lengths, ids, sfx_units, nsym, config)
        trans, fails, pool = build.build_automaton(syms, *keys, nsym, 1 if sfx else 0, config.direction == "backward")
        if classes is None:
            classes = np.zeros(MAX_CODE_POINT + 1, dtype=np.uint8)
        cmap = build_charmap(alphabet, classes)
        params = expected_params(config)
        return cls(kernels.pack(cmap, trans, fails, pool, params), config, nsym)

    @classmethod
    def _build_bytes(cls, keys: Sequence[bytes | str], ids: np.ndarray, config: EngineConfig) -> "Automaton":
        """:meth:`build` for the byte alphabet: symbol of byte ``c`` is
        ``c + 1``, all 256 of them (no char map)."""
        raw = key_bytes(keys)
        data = np.frombuffer(b"".join(raw), np.uint8)
        lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        nsym = BYTE_SYMBOLS
        syms = np.concatenate([data.astype(np.int32) + 1, np.arange(1, nsym + 1, dtype=np.int32)])
        sfx = config.suffix_indicator.encode("utf-8")
        keys = _keys_by_tree(data, starts, ends, lengths, ids, tuple(sfx), nsym, config)
        trans, fails, pool = build.build_automaton(syms, *keys, nsym, 1 if sfx else 0, config.direction == "backward")
        cmap = np.zeros(0, dtype=np.int32)  # the byte alphabet has none
        return cls(kernels.pack(cmap, trans, fails, pool, expected_params(config)), config, nsym)

    def __reduce__(self):
        # Pickles as arrays: unpickling validates and wraps them, no rebuild.
        return _automaton_reduce(self)

    # --------------------------------------------------------------- matching
    @property
    def backward(self) -> bool:
        return self._backward

    def _flat_scratch(self, n: int) -> np.ndarray:
        """A 1-d int32 scratch of at least ``n`` items, of this thread."""
        loc = self._local
        buf = getattr(loc, "flat", None)
        if buf is None or buf.size < n:
            buf = loc.flat = np.empty(max(n, 1024), dtype=np.int32)
        return buf

    def _scratch(self, n: int, rows: int = 4):
        loc = self._local
        buf = getattr(loc, "buf", None)
        if buf is None or buf.shape[1] < n or buf.shape[0] < rows:
            buf = np.empty((max(rows, 5 if self._bytes else 4), max(n, 256)), dtype=np.int32)
            loc.buf = buf
        return buf

    @property
    def alphabet(self) -> str:
        """``"char"`` or ``"byte"`` (see :class:`EngineConfig`)."""
        return self.config.alphabet

    def segment(self, text: str | bytes, *, pretokenize: bool = True, char_offsets: bool = False):
        """``(ids, starts, ends)`` int32 arrays (fresh) for one text."""
        rows = self.segment_rows(text, pretokenize=pretokenize, char_offsets=char_offsets)
        return rows[0], rows[1], rows[2]

    def segment_rows(self, text: str | bytes, *, pretokenize: bool = True, char_offsets: bool = False) -> np.ndarray:
        """One fresh (4, n) int32 array for one text's tokens: ids, starts,
        ends (offsets, end exclusive) and word indices.

        Offsets count characters; for the byte alphabet they count bytes of
        the text (the UTF-8 of a ``str``), or with ``char_offsets`` the
        characters of a ``str`` (a token that starts or ends inside a
        character covers all of it)."""
        if self._bytes:
            return self._byte_rows(text, char_offsets)
        return self.segment_code_points_one(to_code_points(text), pretokenize=pretokenize)

    def _byte_rows(self, text: str | bytes, char_offsets: bool) -> np.ndarray:
        if isinstance(text, str) and utf8.reads_str():
            n = 4 * len(text)
            if n <= _MAX_SCRATCH:
                scratch = self._scratch(n, 5)
                k = utf8.segment_str_rows(text, self.packed, scratch, self._backward, char_offsets)
                if k < 0:
                    utf8.raise_surrogate(text, -1 - k)
                return scratch[:4, :k].copy()
        data = utf8.text_bytes(text)
        rows = self.segment_code_points_one(data)
        if char_offsets and isinstance(text, str):
            splits = np.array([0, rows.shape[1]], dtype=np.int64)
            utf8.to_char_offsets(data, np.array([0, data.size], dtype=np.int64), rows[1], rows[2], splits)
        return rows

    def _check_symbols(self, cps: np.ndarray) -> None:
        """The text array must have the dtype of the alphabet: the kernels
        index the automaton with its elements."""
        want = np.uint8 if self._bytes else np.uint32
        if not isinstance(cps, np.ndarray) or cps.dtype != want or cps.ndim != 1:
            raise TypeError(
                f"expected a 1-d {np.dtype(want).name} array for the {self.config.alphabet} alphabet, found "
                f"{type(cps).__name__} {getattr(cps, 'dtype', '')}"
            )

    def segment_code_points_one(self, cps: np.ndarray, *, pretokenize: bool = True) -> np.ndarray:
        """:meth:`segment_rows` on a code point array (uint32), or a byte
        array (uint8) for the byte alphabet."""
        self._check_symbols(cps)
        n = cps.size
        if n > _MAX_SCRATCH:
            # Long texts: no per-thread buffer of that size is kept alive.
            out, _ = self.segment_code_points(cps, np.array([0, n], dtype=np.int64), pretokenize=pretokenize)
            return out
        buf = self._scratch(n)
        k = kernels.segment_text_into(cps, self.packed, 3 if pretokenize else 0, buf, self._backward)
        return buf[:, :k].copy()

    def segment_ids(self, text: str | bytes, *, pretokenize: bool = True) -> np.ndarray:
        """Token ids of one text (a fresh int32 array)."""
        return np.array(self.segment_id_list(text, pretokenize=pretokenize), dtype=np.int32)

    def segment_id_list(self, text: str | bytes, *, pretokenize: bool = True) -> list[int]:
        """Token ids of one text as a list (the fastest single-text path)."""
        if self._bytes:
            return self._byte_id_list(text)
        cps = to_code_points(text)
        mask = 3 if pretokenize else 0
        if cps.size > _MAX_SCRATCH:
            out, _ = self.segment_code_points(cps, np.array([0, cps.size], dtype=np.int64), offsets=False, pretokenize=pretokenize)
            return out[0].tolist()
        ids = self._scratch(cps.size)[0]
        if self._backward:
            k = kernels.segment_ids_into(cps[::-1].copy(), self.packed, mask, ids)
            return ids[:k][::-1].tolist()
        # Always the same argument types (a read-only uint32 text, the packed
        # automaton, an int, a row of the int32 scratch): resolved once.
        entry = self._ids_entry
        if entry is None:
            k, self._ids_entry = resolve_entry(kernels.segment_ids_into, cps, self.packed, mask, ids)
        else:
            k = entry(cps, self.packed, mask, ids)
        return ids[:k].tolist()

    def _byte_id_list(self, text: str | bytes) -> list[int]:
        """:meth:`segment_id_list` for the byte alphabet: a ``str`` is read,
        encoded, matched and made a list by one compiled call (entry point
        resolved once: the argument types never change)."""
        if type(text) is str and utf8.reads_str() and len(text) <= _MAX_SCRATCH:
            scratch = self._flat_scratch(5 * len(text))
            entry = self._str_entry
            mask = _MASKS[self.lookahead]
            if entry is None:
                ids, self._str_entry = resolve_entry(utf8.segment_str_list, text, self.packed, scratch, self._backward,
                                                     mask)
            else:
                ids = entry(text, self.packed, scratch, self._backward, mask)
            if not ids and text:
                utf8.raise_surrogate(text, -1 - int(scratch[0]))
            return ids
        data = utf8.text_bytes(text)
        if data.size > _MAX_SCRATCH:
            out, _ = self.segment_code_points(data, np.array([0, data.size], dtype=np.int64), offsets=False)
            return out[0].tolist()
        ids = self._scratch(data.size)[0]
        if self._backward:
            k = kernels.segment_ids_into(data[::-1].copy(), self.packed, 0, ids)
            return ids[:k][::-1].tolist()
        k = kernels.segment_ids_into(data, self.packed, 0, ids)
        return ids[:k].tolist()

    def segment_batch(self, texts: Sequence[str] | Sequence[bytes], *, offsets: bool = True, pretokenize: bool = True,
                      char_offsets: bool = False):
        """All texts in one compiled call.

        Returns ``(ids, starts, ends, row_splits)`` (``starts``/``ends`` are
        ``None`` when ``offsets=False``); the tokens of text ``t`` are
        ``row_splits[t]:row_splits[t+1]``.  For the byte alphabet texts are
        ``str`` (matched as UTF-8) or bytes, and offsets count bytes, or
        with ``char_offsets`` the characters of the ``str`` texts.
        """
        if self._bytes:
            if utf8.reads_str() and texts and all(type(t) is str for t in texts):
                return self._str_batch(texts, offsets, char_offsets)
            cps, bounds = utf8.join_texts_bytes(texts)
        else:
            cps, bounds = join_code_points(texts)
        out, rows = self.segment_code_points(cps, bounds, offsets=offsets, pretokenize=pretokenize)
        if offsets:
            if self._bytes and char_offsets:
                self.to_char_offsets(texts, cps, bounds, out, rows)
            return out[0], out[1], out[2], rows
        return out[0], None, None, rows

    def _str_batch(self, texts: Sequence[str], offsets: bool, char_offsets: bool):
        """:meth:`segment_batch` of the byte alphabet for ``str`` texts: a
        block of texts at a time joined (by CPython, into a ``str`` that
        stays small) and encoded and matched by one compiled call, which
        never stores the batch's UTF-8 whole."""
        n = len(texts)
        lengths = text_lengths(texts)
        total = int(lengths.sum())
        out = np.empty((4 if offsets else 1, min(total // 2, kernels.MAX_INITIAL_TOKENS) + 16), np.int32)
        rows = np.empty(n + 1, dtype=np.int64)
        rows[0] = 0
        k = np.int64(0)
        mask = np.int64(kernels.LOOKAHEAD if self.lookahead else 0)
        for a in range(0, n, _BLOCK_TEXTS):
            b = min(n, a + _BLOCK_TEXTS)
            block = texts[a:b]
            cb = np.zeros(b - a + 1, dtype=np.int64)
            np.cumsum(lengths[a:b], out=cb[1:])
            out, k, bad = utf8.segment_str_batch("".join(block), cb, self.packed, mask, out, k, rows[a : b + 1],
                                                 self._backward, char_offsets)
            if bad >= 0:
                utf8.raise_surrogate(block[bad], int(rows[a + bad + 1]), a + bad)
        out = out[:, :k]
        if offsets:
            return out[0], out[1], out[2], rows
        return out[0], None, None, rows

    @staticmethod
    def to_char_offsets(texts: Sequence[object], data: np.ndarray, bounds: np.ndarray, out: np.ndarray,
                        rows: np.ndarray) -> None:
        """Byte offsets of the tokens of the ``str`` texts of a batch (rows
        1 and 2 of ``out``) turned into character offsets, in place; those
        of bytes texts stay in bytes."""
        if all(type(t) is str for t in texts):
            utf8.to_char_offsets(data, bounds, out[1], out[2], rows)
            return
        for i, t in enumerate(texts):
            if isinstance(t, str):
                utf8.to_char_offsets(data, bounds[i : i + 2], out[1], out[2], rows[i : i + 2])

    @interrupts.interruptible("cps")
    def segment_code_points(
        self, cps: np.ndarray, bounds: np.ndarray, *, offsets: bool = True, pretokenize: bool = True, out: np.ndarray | None = None
    ):
        """Texts already joined by :func:`join_code_points`: ``(out, rows)``,
        ``out`` being (4, n) (ids, starts, ends, word indices) with offsets,
        else (1, n) ids.

        ``out`` (with offsets): a (4, m) int32 array to fill, e.g. a buffer
        the caller reuses across calls (fresh memory costs a page fault per
        4 KiB written); the result is then a view of it unless it had to
        grow.  Default: rows sized for typical text (:func:`kernels.token_rows`).

        For the byte alphabet ``cps`` is a uint8 array of bytes and
        ``bounds`` count bytes."""
        self._check_symbols(cps)
        mask = (3 if pretokenize else 0) | (kernels.LOOKAHEAD if self.lookahead else 0)
        if self._bytes:
            mask &= kernels.LOOKAHEAD  # no boundary classes
        auto = self.packed
        if out is not None and not (
            isinstance(out, np.ndarray) and out.dtype == np.int32 and out.ndim == 2 and out.shape[0] == 4
            and out.flags.c_contiguous and out.flags.writeable
        ):
            raise ValueError(
                "out must be a writable, C-contiguous int32 array of shape (4, m), found "
                f"{type(out).__name__} {getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}"
            )
        if self._backward:
            n = cps.size
            rcps = cps[::-1].copy()
            rbounds = (n - bounds[::-1]).copy()
            if offsets:
                out, rows = kernels.segment_batch(rcps, rbounds, auto, mask, kernels.token_rows(n) if out is None else out)
                kernels.mirror_rows(out, rows, rbounds)
                return out, (rows[-1] - rows[::-1]).copy()
            ids, rows = kernels.segment_batch_ids(rcps, rbounds, auto, mask)
            return ids[::-1].copy()[None, :], (rows[-1] - rows[::-1]).copy()
        if offsets:
            return kernels.segment_batch(cps, bounds, auto, mask, kernels.token_rows(cps.size) if out is None else out)
        ids, rows = kernels.segment_batch_ids(cps, bounds, auto, mask)
        return ids[None, :], rows

    # ------------------------------------------------------------ inspection
    def node(self, key: str | bytes, *, continuation: bool = False) -> int:
        """Slot of the node reached by reading ``key`` from a root, or -1
        (a ``str`` key of the byte alphabet is read as its UTF-8)."""
        u = 1 if (continuation and self.config.suffix_indicator) else 0
        if self._bytes:
            key = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        for ch in key:
            if self._bytes:
                v = (ch + 1) << 2
            else:
                v = int(lookup(self.cmap, np.array([ord(ch)]))[0])
            s = int(self.trans[u, 0]) + (v >> 2)
            if (v >> 2) == 0 or s >= self.trans.shape[0] or int(self.trans[s, 1]) != u:
                return -1
            u = s
        return u

    def failure(self, slot: int) -> tuple[int, list[tuple[int, int]]]:
        """``(f(v), F(v))`` of a node: its failure link (-1 for none) and its
        failure pops as (token id, characters covered) pairs."""
        f = int(self.fails[slot, 0])
        if f < 0:
            return -1, []
        ref = int(self.fails[slot, 1])
        if ref < 0:
            packed = -1 - ref
            return f, [((packed >> 8) - 1, packed & 255)]
        cnt, at = int(self.pool[ref]), int(self.pool[ref + 1])
        pops = self.pool[at : at + 2 * cnt].reshape(-1, 2)
        return f, [(int(a), int(b)) for a, b in pops]

    @property
    def nbytes(self) -> int:
        """Memory held by the automaton's arrays."""
        return int(self.packed.nbytes)


# ---------------------------------------------------------------- persistence
def automaton_state(a: Automaton) -> tuple[dict, dict[str, np.ndarray]]:
    """``(config, arrays)`` of an automaton, for model files and pickling."""
    config = {
        "suffix_indicator": a.config.suffix_indicator,
        "unknown": a.config.unknown,
        "direction": a.config.direction,
        "unk_id": a.config.unk_id,
        "char_id": a.config.char_id,
        "max_word_chars": a.config.max_word_chars,
        "max_word_bytes": a.config.max_word_bytes,
        "num_symbols": a.num_symbols,
    }
    if a.config.alphabet != "char":  # files of code point automata stay as they were
        config["alphabet"] = a.config.alphabet
    return config, {"packed": a.packed}


def automaton_from_state(
    config: dict,
    arrays: dict[str, np.ndarray],
    *,
    source: str = "automaton",
    valid_ids: np.ndarray | None = None,
    keys: tuple | None = None,
    classes: np.ndarray | None = None,
) -> Automaton:
    """Rebuild an :class:`Automaton` from :func:`automaton_state` output.

    Every array is validated first (see :func:`validate_packed`), so a
    damaged or crafted file raises ``ValueError`` instead of making the
    compiled loop read out of bounds, loop forever or emit tokens that no
    automaton could emit.

    ``valid_ids``: booleans, ``valid_ids[i + 1]`` saying whether token id
    ``i`` (from -1 on) may be emitted, i.e. is an id of the preset's
    vocabulary or a marker such as the -1 of Chinese non-words (see
    :func:`validate_packed`).  ``None`` skips the id check (pickles, which
    are trusted: unpickling runs code anyway).  ``keys``: the keys the
    automaton must hold, ``classes`` the boundary classes of its character
    map (see :func:`check_keys_and_relink`); then the failure data is
    recomputed rather than read.
    """
    try:
        cfg = EngineConfig(
            suffix_indicator=config["suffix_indicator"],
            unknown=config["unknown"],
            direction=config["direction"],
            unk_id=_int(config["unk_id"]),
            char_id=_int(config["char_id"]),
            max_word_chars=config["max_word_chars"],
            max_word_bytes=config.get("max_word_bytes"),
            alphabet=config.get("alphabet", "char"),
        )
        nsym = _int(config["num_symbols"])
        packed = arrays["packed"]
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{source}: incomplete automaton description ({e!r})") from None
    if not isinstance(packed, np.ndarray):
        raise ValueError(f"{source}: invalid automaton: packed is {type(packed).__name__}, expected an array")
    if keys is None:
        validate_packed(packed, cfg, nsym, source=source, valid_ids=valid_ids)
    else:
        validate_layout(packed, cfg, nsym, source=source)
        packed = check_keys_and_relink(packed, cfg, nsym, keys, source=source, classes=classes)
        _check_fixed_ids(cfg, valid_ids, source)
    return Automaton(packed, cfg, nsym)


def _int(x: object) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"expected an int, found {x!r:.60}")
    return int(x)


def expected_params(cfg: EngineConfig) -> np.ndarray:
    """The parameter section (:mod:`segkit.engine.kernels`) an automaton
    built with ``cfg`` has."""
    params = np.zeros(kernels.N_PARAMS, dtype=np.int32)
    params[kernels.P_SROOT] = 1 if cfg.suffix_indicator else 0
    params[kernels.P_UNK] = cfg.unk_id
    params[kernels.P_MAXCHARS] = _UNLIMITED if cfg.max_word_chars is None else cfg.max_word_chars
    params[kernels.P_CHARMODE] = 1 if cfg.unknown == "char" else 0
    params[kernels.P_CHARID] = cfg.char_id
    params[kernels.P_MAXBYTES] = cfg.max_word_bytes or 0
    return params


def validate_layout(packed: np.ndarray, cfg: EngineConfig, nsym: int, *, source: str = "automaton") -> None:
    """The cheap part of :func:`validate_packed`: sections, character map
    bounds and values, parameters (ValueError if bad)."""

    def bad(what: str) -> ValueError:
        return ValueError(f"{source}: invalid automaton: {what}")

    if packed.dtype != np.int32 or packed.ndim != 1 or packed.size < kernels.HEADER or not packed.flags.c_contiguous:
        raise bad(f"packed array has dtype {packed.dtype} and {packed.ndim} dimensions; expected 1-d contiguous int32")
    h = packed[: kernels.HEADER].astype(np.int64)
    ends = h[: kernels.H_END + 1]
    if ends[0] != kernels.HEADER or (np.diff(ends) < 0).any() or ends[-1] != packed.size:
        raise bad("section offsets do not fit the packed array")
    if (ends[2] - ends[1]) % 2 or (ends[3] - ends[2]) % 2:
        raise bad("transition or failure section has an odd length")
    cmap, trans, fails, pool, params = kernels.unpack(packed)
    n_pages = (MAX_CODE_POINT + 1) >> 8
    size = trans.shape[0]
    if fails.shape != trans.shape or params.size != kernels.N_PARAMS:
        raise bad("array shapes do not fit together")
    if not 0 <= nsym < max(size, 1):
        raise bad(f"{nsym} symbols for a table of {size} slots")
    if cfg.alphabet == "byte":
        # Byte c is symbol c + 1: exactly 256 symbols and no char map.
        if nsym != BYTE_SYMBOLS or cmap.size:
            raise bad(f"a byte automaton has {BYTE_SYMBOLS} symbols and no character map, found {nsym} symbols "
                      f"and a map of {cmap.size} values")
        if not np.array_equal(params, expected_params(cfg)):
            raise bad(f"parameters {params.tolist()} do not match the configuration {expected_params(cfg).tolist()}")
        return
    if cmap.size < n_pages + 256 or (cmap.size - n_pages) % 256:
        raise bad("character map has the wrong size")
    pages = cmap[:n_pages]
    if pages.min() < n_pages or pages.max() > cmap.size - 256 or ((pages - n_pages) % 256).any():
        raise bad("character map points outside itself")
    values = cmap[n_pages:]
    if values.min() < 0 or (values >> 2).max() > nsym or ((values & 3) == 3).any():
        raise bad("character map holds symbols outside the alphabet or unknown boundary classes")
    if not np.array_equal(params, expected_params(cfg)):
        raise bad(f"parameters {params.tolist()} do not match the configuration {expected_params(cfg).tolist()}")


def _check_fixed_ids(cfg: EngineConfig, valid_ids: np.ndarray | None, source: str) -> None:
    """The unk id (and in ``"char"`` mode the character id) must be valid ids."""
    if valid_ids is None:
        return
    for name in ("unk_id",) + (("char_id",) if cfg.unknown == "char" else ()):
        i = getattr(cfg, name)
        if not -1 <= i < valid_ids.size - 1 or not valid_ids[i + 1]:
            raise ValueError(f"{source}: invalid automaton: {name} {i} is not an id of the vocabulary")


def validate_packed(
    packed: np.ndarray, cfg: EngineConfig, nsym: int, *, source: str = "automaton", valid_ids: np.ndarray | None = None
) -> None:
    """Check that ``packed`` is a well-formed LinMaxMatch automaton (ValueError if not).

    What the kernels rely on, all checked with whole-array NumPy operations
    (about 10 ms for the 320,000 slots of the multilingual BERT vocabulary):

    * the sections fit the array; the char map's pages lie inside it and its
      values are symbols ``0..nsym`` with a boundary class 0, 1 or 2;
    * the double array is a trie: slots 0 and 1 are the roots, every other
      used slot's parent is a used slot whose ``base`` plus a symbol
      ``1..nsym`` is that slot, and following parents always reaches a root
      (no cycle); every ``base + nsym`` lies inside the table;
    * every failure link points to a used slot strictly shallower than its
      node (so following links always ends), and the node's failure pops
      are at least one token, each covering at least one character, and
      together exactly the characters by which the link is shallower (so
      offsets always tile the text and never exceed it); pops lists lie
      inside the pool (lists may share pairs: the checks are differences of
      prefix sums, linear in the pool however long the lists);
    * the parameters are those ``cfg`` implies (:func:`expected_params`);
    * every token id a pop, the unk id or the character id can emit is one
      of ``valid_ids`` (when given): ``valid_ids[i + 1]`` says whether id
      ``i`` may be emitted, from ``i = -1`` on.
    """

    def bad(what: str) -> ValueError:
        return ValueError(f"{source}: invalid automaton: {what}")

    validate_layout(packed, cfg, nsym, source=source)
    cmap, trans, fails, pool, params = kernels.unpack(packed)
    size = trans.shape[0]
    # The trie.
    # Contiguous int32 copies: gathers over them are twice as fast as over
    # int64 or strided views (sizes are below 2**31: the array is int32).
    base = np.ascontiguousarray(trans[:, 0])
    check = np.ascontiguousarray(trans[:, 1])
    if size < 2 or base.min() < 0 or int(base.max()) + nsym >= size:
        raise bad("transition table indexes outside itself")
    if check[0] != -2 or check[1] != -2 or check[2:].min(initial=0) < -1 or check.max() >= size:
        raise bad("transition table: bad roots or parents outside the table")
    used = check != -1
    kids = np.flatnonzero(check >= 0)
    par = check[kids]
    sym = kids - base[par]
    if not used[par].all() or (kids.size and (sym.min() < 1 or sym.max() > nsym)):
        raise bad("transition table: a node is not the child of its parent")
    depth, top = _depths(check, bad)

    # Failure links and pops.
    link = np.ascontiguousarray(fails[:, 0])
    ref = np.ascontiguousarray(fails[:, 1])
    if link.min() < -1 or link.max() >= size:
        raise bad("failure links point outside the table")
    src = np.flatnonzero(used & (link >= 0))
    dst = link[src]
    if not used[dst].all() or (depth[dst] >= depth[src]).any():
        raise bad("a failure link does not point to a shallower node")
    drop = depth[src] - depth[dst]  # characters the pops of each node must cover
    r = ref[src]
    inline = r < 0
    packed_pop = -1 - r[inline].astype(np.int64)
    pop_ids = [(packed_pop >> 8) - 1]
    if ((packed_pop & 255) != drop[inline]).any():
        raise bad("a failure pop does not cover the characters its link drops")
    refs = r[~inline].astype(np.int64)
    if refs.size:
        # Lists share pairs, so their total length may be quadratic in the
        # pool's: every check is a difference of prefix sums over the pool.
        rdrop = drop[~inline]
        if refs.min() < 1 or refs.max() + 1 >= pool.size:
            raise bad("failure pops point outside the pool")
        p64 = pool.astype(np.int64)
        cnt, at = p64[refs], p64[refs + 1]
        stop = at + 2 * cnt
        if cnt.min() < 1 or (cnt > rdrop).any() or at.min() < 1 or stop.max() > pool.size:
            raise bad("failure pops lists are empty or run outside the pool")

        even = (np.arange(pool.size) % 2) == 0

        def per_list(values: np.ndarray, offset: int) -> np.ndarray:
            # Per list, the sum of values[at + offset + 2j] for j < count:
            # the items of [at, stop) of one parity, by prefix sums.
            by_parity = [np.concatenate([[0], np.cumsum(np.where(even == (p == 0), values, 0))]) for p in (0, 1)]
            par = (at + offset) % 2
            return np.where(par == 0, by_parity[0][stop] - by_parity[0][at], by_parity[1][stop] - by_parity[1][at])

        if per_list((p64 < 1).astype(np.int64), 1).any() or (per_list(p64, 1) != rdrop).any():
            raise bad("failure pops do not cover the characters their link drops")
        if valid_ids is not None:
            ok = np.zeros(pool.size, dtype=bool)
            inside = (p64 >= -1) & (p64 < valid_ids.size - 1)
            ok[inside] = valid_ids[p64[inside] + 1]
            wrong = np.flatnonzero(per_list((~ok).astype(np.int64), 0))
            if wrong.size:
                k = int(wrong[0])
                ids_of = p64[at[k] : stop[k] : 2]
                bad_id = int(ids_of[~ok[at[k] : stop[k] : 2]][0])
                raise bad(f"token id {bad_id} is not an id of the vocabulary ({valid_ids.size - 1} ids)")
    if valid_ids is not None:
        fixed = [cfg.unk_id] + ([cfg.char_id] if cfg.unknown == "char" else [])
        emitted = np.concatenate(pop_ids + [np.array(fixed, dtype=np.int64)])
        if emitted.size and (
            emitted.min() < -1 or emitted.max() >= valid_ids.size - 1 or not valid_ids[emitted + 1].all()
        ):
            wrong = emitted[(emitted < -1) | (emitted >= valid_ids.size - 1)]
            if not wrong.size:
                wrong = emitted[~valid_ids[emitted + 1]]
            raise bad(f"token id {int(wrong[0])} is not an id of the vocabulary ({valid_ids.size - 1} ids)")


def _depths(check: np.ndarray, bad) -> tuple[np.ndarray, np.ndarray]:
    """Depth of every slot of a double array whose parents are ``check``
    (roots: -2, unused: -1) and the root each lies under; ValueError when
    parents form a cycle.  Pointer
    jumping: each round doubles the distance looked up, so a trie of depth
    D takes about log2(D) rounds."""
    n = check.size
    top = check < 0
    anc = np.where(top, np.arange(n, dtype=check.dtype), check)
    depth = (~top).astype(np.int32)
    for _ in range(n.bit_length() + 1):
        up = anc[anc]
        if np.array_equal(up, anc):
            break
        depth += depth[anc]
        anc = up
    else:
        raise bad("the trie's parent links form a cycle")
    if (check[anc[check >= 0]] != -2).any():  # e.g. a slot that is its own parent
        raise bad("the trie's parent links form a cycle")
    return depth, anc


def _same_as_full_lists(new_fails: np.ndarray, new_pool: np.ndarray, fails: np.ndarray, pool: np.ndarray) -> bool:
    """Whether ``fails``/``pool`` (a file of an older builder: every list of
    pops written out in full as ``[count, pairs]`` at its reference) hold the
    links and pops of ``new_fails``/``new_pool`` (this builder's layout,
    lists sharing pairs).  Such a pool holds every list in full, so it is at
    least as large as the lists' total length: a smaller one is rejected
    before any list is expanded (a crafted file cannot make this compare
    more pairs than it holds)."""
    new_ref = new_fails[:, 1].astype(np.int64)
    old_ref = fails[:, 1].astype(np.int64)
    if not np.array_equal(new_fails[:, 0], fails[:, 0]):
        return False
    inline = new_ref < 0
    if not np.array_equal(new_ref[inline], old_ref[inline]):
        return False
    listed = np.flatnonzero(new_ref > 0)
    if not listed.size:
        return np.array_equal(new_ref, old_ref)
    a, b = new_ref[listed], old_ref[listed]
    cnt = new_pool[a].astype(np.int64)
    if int((1 + 2 * cnt).sum()) >= pool.size or b.min() < 1 or int(b.max()) >= pool.size:
        return False
    if not np.array_equal(pool[b], cnt) or int((b + 2 * cnt).max()) >= pool.size:
        return False
    at = new_pool[a + 1].astype(np.int64)
    first = np.cumsum(2 * cnt) - 2 * cnt
    within = np.arange(int(2 * cnt.sum()), dtype=np.int64) - np.repeat(first, 2 * cnt)
    return np.array_equal(new_pool[np.repeat(at, 2 * cnt) + within], pool[np.repeat(b + 1, 2 * cnt) + within])



def _keys_by_tree(units, starts, ends, lengths, ids, sfx_units, nsym, config):
    """The keys the builder inserts, as ``(start, end, tree, token id)``
    arrays over ``units`` (the keys' code points or bytes, one extra symbol
    per alphabet symbol assumed appended after them): every key in tree 0,
    the keys that start with the suffix indicator (``sfx_units``) without
    it in tree 1, and under the ``"char"`` unknown policy one key per
    symbol in each tree."""
    parts = [(starts, ends, 0, ids)]
    ls = len(sfx_units)
    if ls:
        cont = lengths > ls
        for j, ch in enumerate(sfx_units):
            cont[cont] = units[starts[cont] + j] == ch
        parts.append((starts[cont] + ls, ends[cont], 1, ids[cont]))
    if config.unknown == "char":
        one = np.arange(units.size, units.size + nsym, dtype=np.int64)
        char_ids = np.full(nsym, config.char_id, dtype=np.int32)
        parts.append((one, one + 1, 0, char_ids))
        if ls:
            parts.append((one, one + 1, 1, char_ids))
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([np.full(p[0].size, p[2], dtype=np.int32) for p in parts]),
        np.concatenate([p[3] for p in parts]).astype(np.int32),
    )

def _automaton_reduce(a: Automaton):
    config, arrays = automaton_state(a)
    return (_automaton_unpickle, (config, {k: np.array(v) for k, v in arrays.items()}))


def _automaton_unpickle(config: dict, arrays: dict[str, np.ndarray]) -> Automaton:
    # Unpickling runs whatever code the pickle names, so a pickle is trusted
    # as code is: only the cheap layout check, not the full validation that
    # files get (which costs 10x an unpickle for the Chinese dictionary).
    return trusted_automaton(config, arrays["packed"], source="pickled automaton")


def trusted_automaton(config: dict, packed: np.ndarray, *, source: str = "automaton") -> Automaton:
    """The automaton :func:`automaton_state` described, checked only for
    its layout (:func:`validate_layout`), not against its keys: for
    automata known to be good, such as a pickle (trusted as code is) or
    arrays whose digest is that of a verified build."""
    cfg = EngineConfig(**{k: config[k] for k in ("suffix_indicator", "unknown", "direction", "unk_id", "char_id",
                                                 "max_word_chars", "max_word_bytes")},
                       alphabet=config.get("alphabet", "char"))
    nsym = int(config["num_symbols"])
    validate_layout(packed, cfg, nsym, source=source)
    return Automaton(packed, cfg, nsym)



def check_keys_and_relink(
    packed: np.ndarray,
    cfg: EngineConfig,
    nsym: int,
    keys: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    *,
    source: str = "automaton",
    classes: np.ndarray | None = None,
) -> np.ndarray:
    """Check that the trie and character map of a packed automaton are the
    ones :meth:`Automaton.build` makes from ``keys`` (and ``classes``), and
    return the packed array with the failure links and pops recomputed from
    them (the stored ones are ignored), i.e. an automaton that behaves
    exactly like the one built from the keys.  ValueError if not.

    ``keys`` is ``(cps, starts, ends, ids)``: key ``k`` is
    ``cps[starts[k]:ends[k]]`` (non-empty, distinct) with token id
    ``ids[k]``; for the byte alphabet ``cps`` holds bytes (uint8).  The section layout, the character map's bounds and the
    parameters must have been checked (:func:`validate_layout`).  See
    :mod:`segkit.engine.verify` for the steps.
    """
    from . import verify

    def bad(what: str) -> ValueError:
        return ValueError(f"{source}: invalid automaton: {what}")

    cps, starts, ends, ids = keys
    byte_alphabet = cfg.alphabet == "byte"
    cps = np.ascontiguousarray(cps, dtype=np.uint8 if byte_alphabet else np.uint32)
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    cmap, trans, fails, pool, params = kernels.unpack(packed)
    n_pages = (MAX_CODE_POINT + 1) >> 8
    base = np.ascontiguousarray(trans[:, 0])
    check = np.ascontiguousarray(trans[:, 1])
    size = base.size
    if size < 2 or base.min() < 0 or int(base.max()) + nsym >= size or check.min() < -2 or check.max() >= size:
        raise bad("transition table indexes outside itself")

    if byte_alphabet:
        if classes is not None:
            raise bad("the byte alphabet has no boundary classes")
    else:
        # The character map: exactly nsym characters have a symbol (the walk
        # below checks that the keys' characters reach every symbol), and the
        # boundary classes are the preset's.
        blocks = cmap[n_pages:].reshape(-1, 256)
        page_block = (cmap[:n_pages] - n_pages) // 256
        if int(np.count_nonzero(blocks >> 2, axis=1)[page_block].sum()) != nsym:
            raise bad("the character map gives symbols to characters no token has")
        if classes is not None and not np.array_equal((blocks & 3).astype(np.uint8)[page_block].ravel(), classes):
            raise bad("the character map's boundary classes are not the preset's")

    sroot = 1 if cfg.suffix_indicator else 0
    # Keys from root 0, then continuation keys (after the suffix indicator)
    # from root 1, as Automaton.build inserts them.
    skip = np.zeros(starts.size, dtype=np.int64)
    roots = np.zeros(starts.size, dtype=np.int8)
    if cfg.suffix_indicator:
        sfx = cfg.suffix_indicator
        sfx_syms = np.frombuffer(sfx.encode("utf-8"), np.uint8) if byte_alphabet else to_code_points(sfx)
        ls = sfx_syms.size
        cont = (ends - starts) > ls
        for j, ch in enumerate(sfx_syms):
            cont[cont] = cps[starts[cont] + j] == ch
        starts = np.concatenate([starts, starts[cont]])
        ends = np.concatenate([ends, ends[cont]])
        ids = np.concatenate([ids, ids[cont]])
        skip = np.concatenate([skip, np.full(int(cont.sum()), ls, dtype=np.int64)])
        roots = np.concatenate([roots, np.ones(int(cont.sum()), dtype=np.int8)])
    # The budget of the stored-data check: comparisons linear in the keys'
    # length (files of this builder need at most about twice that).
    budget = 4 * (int(cps.size) + int(starts.size) + size) + 4096
    status, k, new_fails, new_pool, stored_hold = verify.check_and_relink(
        base, check, nsym, cmap, cps, starts, ends, ids, roots, skip, cfg.direction == "backward",
        cfg.unknown == "char", np.int32(cfg.char_id), sroot, byte_alphabet,
        np.ascontiguousarray(fails).reshape(-1), np.ascontiguousarray(pool), budget,
    )
    if status:
        where = ""
        if k >= 0:
            piece = cps[starts[k] + skip[k] : ends[k]]
            word = piece.tobytes() if byte_alphabet else "".join(map(chr, piece.tolist()))
            where = f" (token {word!r}, id {int(ids[k])})"
        raise bad(verify.MESSAGES[status] + where)
    # The stored links and pops must be these (damaged files are rejected,
    # not repaired).  Files of this segkit lay out the pool in the same
    # order: the arrays are equal and the stored automaton is used as it
    # is.  Older builders wrote every list out in full, ``[count, pairs]``
    # at its reference (in slot or in node order): those lists are compared
    # one by one, and the recomputed arrays are used.
    if stored_hold or (np.array_equal(new_fails, fails) and np.array_equal(new_pool, pool)):
        return packed
    if not _same_as_full_lists(new_fails, new_pool, fails, pool):
        raise bad("the stored failure links or pops are not the ones its trie gives")
    return kernels.pack(cmap, trans, new_fails, new_pool, params)
