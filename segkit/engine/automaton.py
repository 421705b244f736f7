"""The engine: a LinMaxMatch automaton over any set of keys.

It knows tries, failure links and pops, direction and word boundaries; it
knows nothing of BERT or Chinese.  A preset gives it

* keys (strings) with their ids,
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

from . import build, kernels
from .dispatch import resolve_entry
from .charmap import MAX_CODE_POINT, build_charmap, lookup

_UNLIMITED = np.iinfo(np.int32).max
#: Single texts up to this many characters use a per-thread scratch buffer.
_MAX_SCRATCH = 1 << 16
#: Automata with at least this many double-array slots (8 MiB of
#: transitions) prefetch ahead in batches by default (:attr:`Automaton.lookahead`).
LOOKAHEAD_MIN_SLOTS = 1 << 20
#: From this many characters on, :func:`to_code_points` lets NumPy convert.
_NUMPY_CONVERSION = 1 << 16
_U32 = np.dtype(np.uint32)
_UTF32_NATIVE = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


def to_code_points(text: str) -> np.ndarray:
    """Code points of ``text`` as a uint32 array (lone surrogates kept)."""
    if not isinstance(text, str):
        raise TypeError(f"expected text as str, found {type(text).__name__}: {text!r:.80}")
    if len(text) < _NUMPY_CONVERSION:
        try:
            # "utf-32" (native byte order, after a 4-byte BOM) is a codec name
            # CPython encodes without looking the codec up: 0.09 us for a
            # word, where "utf-32-le" takes 0.34 us.
            return np.frombuffer(text.encode("utf-32"), _U32, offset=4)
        except UnicodeEncodeError:  # lone surrogates (only "surrogatepass" keeps them)
            return np.frombuffer(text.encode(_UTF32_NATIVE, "surrogatepass"), _U32)
    # Large texts: NumPy converts into memory it allocates itself, with huge
    # pages, where a bytes object of that size costs a page fault per 4 KiB
    # (whole corpus: 8,000 fewer faults, 30% less time).  Same result type:
    # a read-only, aligned, contiguous uint32 array.
    cps = np.array(text).reshape(1).view(np.uint32)
    cps.flags.writeable = False
    return cps


def _raise_not_str(texts: Sequence[object]) -> None:
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"expected a sequence of str, found {type(t).__name__} at index {i}: {t!r:.80}") from None


def text_lengths(texts: Sequence[str]) -> np.ndarray:
    """The lengths of ``texts`` (int64); TypeError naming the first item
    that is not a str when one has no length."""
    try:
        return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    except TypeError:
        _raise_not_str(texts)
        raise


def join_code_points(texts: Sequence[str], lengths: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All texts as one code point array plus ``bounds`` (length n+1).
    ``lengths``: the texts' lengths, when the caller has them already."""
    try:
        if lengths is None:
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        joined = "".join(texts)
    except TypeError:
        _raise_not_str(texts)
        raise
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    if bounds[-1] != len(joined) or (len(lengths) and lengths.min() < 0):
        raise ValueError(f"lengths do not fit the texts: they sum to {int(bounds[-1])}, the texts hold {len(joined)} "
                         "characters (or a length is negative)")
    return to_code_points(joined), bounds


@dataclass(frozen=True)
class EngineConfig:
    """How the automaton matches (everything but the keys)."""

    suffix_indicator: str = ""
    unknown: str = "word"  # "word" or "char"
    direction: str = "forward"  # "forward" or "backward"
    unk_id: int = -1
    char_id: int = -1
    max_word_chars: int | None = None
    max_word_bytes: int | None = None

    def __post_init__(self) -> None:
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
        if self.max_word_chars is not None and (
            not isinstance(self.max_word_chars, int) or self.max_word_chars < 1
        ):
            raise ValueError(f"max_word_chars must be a positive int or None, found {self.max_word_chars!r}")
        if self.max_word_bytes is not None and (not isinstance(self.max_word_bytes, int) or self.max_word_bytes < 1):
            raise ValueError(f"max_word_bytes must be a positive int or None, found {self.max_word_bytes!r}")


class Automaton:
    """A compiled LinMaxMatch automaton (immutable; safe to share across threads).

    Build one with :meth:`Automaton.build`.  All of it lives in one int32
    array, :attr:`packed` (see :mod:`segkit.engine.kernels`); the parts are
    available as views:

    ``cmap``
        code point -> ``symbol << 2 | boundary class`` (two-level table);
    ``trans``
        (slots, 2): double-array ``base`` and ``check``;
    ``fails``
        (slots, 2): failure link and failure pops (a single pop inline as a
        negative number, else an offset into ``pool``);
    ``pool``
        failure pops: a count followed by (token id, characters covered) pairs;
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
                 "_ids_entry", "lookahead")

    def __init__(self, packed: np.ndarray, config: EngineConfig, num_symbols: int):
        if packed.flags.writeable:
            packed.setflags(write=False)
        self.packed = packed
        self.cmap, self.trans, self.fails, self.pool, self.params = kernels.unpack(packed)
        self.config = config
        self.num_symbols = num_symbols
        self._local = threading.local()  # per-thread scratch for single texts
        self._backward = config.direction == "backward"
        self._ids_entry = None  # segment_ids_into's compiled entry point, once resolved
        self.lookahead = self.trans.shape[0] >= LOOKAHEAD_MIN_SLOTS

    # ------------------------------------------------------------------ build
    @classmethod
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
        character).
        """
        ids = np.asarray(ids, dtype=np.int32)
        if len(keys) != ids.size:
            raise ValueError(f"expected one id per key, found {len(keys)} keys and {ids.size} ids")
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
        parts = [(starts, ends, 0, ids)]  # (start, end, tree, token id)
        if sfx:
            ls = len(sfx)
            cont = lengths > ls
            for j, ch in enumerate(to_code_points(sfx).astype(np.int64)):
                cont[cont] = cps[starts[cont] + j] == ch
            parts.append((starts[cont] + ls, ends[cont], 1, ids[cont]))
        if config.unknown == "char":
            one = np.arange(cps.size, cps.size + nsym, dtype=np.int64)
            char_ids = np.full(nsym, config.char_id, dtype=np.int32)
            parts.append((one, one + 1, 0, char_ids))
            if sfx:
                parts.append((one, one + 1, 1, char_ids))
        key_start = np.concatenate([p[0] for p in parts])
        key_end = np.concatenate([p[1] for p in parts])
        key_tree = np.concatenate([np.full(p[0].size, p[2], dtype=np.int32) for p in parts])
        key_tok = np.concatenate([p[3] for p in parts]).astype(np.int32)
        sroot = 1 if sfx else 0
        trans, fails, pool = build.build_automaton(
            syms, key_start, key_end, key_tree, key_tok, nsym, sroot, config.direction == "backward"
        )
        if classes is None:
            classes = np.zeros(MAX_CODE_POINT + 1, dtype=np.uint8)
        cmap = build_charmap(alphabet, classes)
        params = np.zeros(kernels.N_PARAMS, dtype=np.int32)
        params[kernels.P_SROOT] = sroot
        params[kernels.P_UNK] = config.unk_id
        params[kernels.P_MAXCHARS] = _UNLIMITED if config.max_word_chars is None else config.max_word_chars
        params[kernels.P_CHARMODE] = 1 if config.unknown == "char" else 0
        params[kernels.P_CHARID] = config.char_id
        params[kernels.P_MAXBYTES] = config.max_word_bytes or 0
        return cls(kernels.pack(cmap, trans, fails, pool, params), config, nsym)

    def __reduce__(self):
        # Pickles as arrays: unpickling validates and wraps them, no rebuild.
        return _automaton_reduce(self)

    # --------------------------------------------------------------- matching
    @property
    def backward(self) -> bool:
        return self._backward

    def _scratch(self, n: int):
        loc = self._local
        buf = getattr(loc, "buf", None)
        if buf is None or buf.shape[1] < n:
            buf = np.empty((4, max(n, 256)), dtype=np.int32)
            loc.buf = buf
        return buf

    def segment(self, text: str, *, pretokenize: bool = True):
        """``(ids, starts, ends)`` int32 arrays (fresh) for one text."""
        rows = self.segment_rows(text, pretokenize=pretokenize)
        return rows[0], rows[1], rows[2]

    def segment_rows(self, text: str, *, pretokenize: bool = True) -> np.ndarray:
        """One fresh (4, n) int32 array for one text's tokens: ids, starts,
        ends (character offsets, end exclusive) and word indices."""
        return self.segment_code_points_one(to_code_points(text), pretokenize=pretokenize)

    def segment_code_points_one(self, cps: np.ndarray, *, pretokenize: bool = True) -> np.ndarray:
        """:meth:`segment_rows` on a code point array (uint32)."""
        n = cps.size
        if n > _MAX_SCRATCH:
            # Long texts: no per-thread buffer of that size is kept alive.
            out, _ = self.segment_code_points(cps, np.array([0, n], dtype=np.int64), pretokenize=pretokenize)
            return out
        buf = self._scratch(n)
        k = kernels.segment_text_into(cps, self.packed, 3 if pretokenize else 0, buf, self._backward)
        return buf[:, :k].copy()

    def segment_ids(self, text: str, *, pretokenize: bool = True) -> np.ndarray:
        """Token ids of one text (a fresh int32 array)."""
        return np.array(self.segment_id_list(text, pretokenize=pretokenize), dtype=np.int32)

    def segment_id_list(self, text: str, *, pretokenize: bool = True) -> list[int]:
        """Token ids of one text as a list (the fastest single-text path)."""
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

    def segment_batch(self, texts: Sequence[str], *, offsets: bool = True, pretokenize: bool = True):
        """All texts in one compiled call.

        Returns ``(ids, starts, ends, row_splits)`` (``starts``/``ends`` are
        ``None`` when ``offsets=False``); the tokens of text ``t`` are
        ``row_splits[t]:row_splits[t+1]``.
        """
        cps, bounds = join_code_points(texts)
        out, rows = self.segment_code_points(cps, bounds, offsets=offsets, pretokenize=pretokenize)
        if offsets:
            return out[0], out[1], out[2], rows
        return out[0], None, None, rows

    def segment_code_points(
        self, cps: np.ndarray, bounds: np.ndarray, *, offsets: bool = True, pretokenize: bool = True, out: np.ndarray | None = None
    ):
        """Texts already joined by :func:`join_code_points`: ``(out, rows)``,
        ``out`` being (4, n) (ids, starts, ends, word indices) with offsets,
        else (1, n) ids.

        ``out`` (with offsets): a (4, m) int32 array to fill, e.g. a buffer
        the caller reuses across calls (fresh memory costs a page fault per
        4 KiB written); the result is then a view of it unless it had to
        grow.  Default: rows sized for typical text (:func:`kernels.token_rows`)."""
        mask = (3 if pretokenize else 0) | (kernels.LOOKAHEAD if self.lookahead else 0)
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
    def node(self, key: str, *, continuation: bool = False) -> int:
        """Slot of the node reached by reading ``key`` from a root, or -1."""
        u = 1 if (continuation and self.config.suffix_indicator) else 0
        for ch in key:
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
        cnt = int(self.pool[ref])
        pops = self.pool[ref + 1 : ref + 1 + 2 * cnt].reshape(-1, 2)
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
    return config, {"packed": a.packed}


def automaton_from_state(config: dict, arrays: dict[str, np.ndarray], *, source: str = "automaton") -> Automaton:
    """Rebuild an :class:`Automaton` from :func:`automaton_state` output.

    Every array is validated first (dtypes, shapes and that every index the
    kernels follow stays inside its array), so a damaged or crafted file
    raises ``ValueError`` instead of making the compiled loop read out of
    bounds.
    """
    from .kernels import N_PARAMS, P_SROOT

    try:
        cfg = EngineConfig(
            suffix_indicator=config["suffix_indicator"],
            unknown=config["unknown"],
            direction=config["direction"],
            unk_id=int(config["unk_id"]),
            char_id=int(config["char_id"]),
            max_word_chars=config["max_word_chars"],
            max_word_bytes=config.get("max_word_bytes"),
        )
        nsym = int(config["num_symbols"])
        packed = arrays["packed"]
    except (KeyError, TypeError) as e:
        raise ValueError(f"{source}: incomplete automaton description ({e!r})") from None

    def bad(what: str) -> ValueError:
        return ValueError(f"{source}: invalid automaton: {what}")

    if packed.dtype != np.int32 or packed.ndim != 1 or packed.size < kernels.HEADER:
        raise bad(f"packed array has dtype {packed.dtype} and {packed.ndim} dimensions; expected 1-d int32")
    h = packed[: kernels.HEADER].astype(np.int64)
    ends = h[: kernels.H_END + 1]
    if ends[0] != kernels.HEADER or (np.diff(ends) < 0).any() or ends[-1] != packed.size:
        raise bad("section offsets do not fit the packed array")
    if (ends[2] - ends[1]) % 2 or (ends[3] - ends[2]) % 2:
        raise bad("transition or failure section has an odd length")
    cmap, trans, fails, pool, params = kernels.unpack(packed)

    for name, arr, ndim, dt in (
        ("cmap", cmap, 1, np.int32),
        ("trans", trans, 2, np.int32),
        ("fails", fails, 2, np.int32),
        ("pool", pool, 1, np.int32),
        ("params", params, 1, np.int32),
    ):
        if arr.dtype != dt or arr.ndim != ndim or not arr.flags.c_contiguous:
            raise bad(f"array {name!r} has dtype {arr.dtype}, {arr.ndim} dimensions; expected {np.dtype(dt)}, {ndim}")
    n_pages = (MAX_CODE_POINT + 1) >> 8
    size = trans.shape[0]
    if trans.shape[1] != 2 or fails.shape != trans.shape or params.size != N_PARAMS or pool.size < 1:
        raise bad("array shapes do not fit together")
    if cmap.size < n_pages + 256 or (cmap.size - n_pages) % 256:
        raise bad("character map has the wrong size")
    pages = cmap[:n_pages]
    if pages.min() < n_pages or pages.max() > cmap.size - 256 or ((pages - n_pages) % 256).any():
        raise bad("character map points outside itself")
    values = cmap[n_pages:]
    if values.min() < 0 or (values >> 2).max() > nsym:
        raise bad("character map holds symbols outside the alphabet")
    base, check = trans[:, 0], trans[:, 1]
    if size < 2 or base.min() < 0 or int(base.max()) + nsym >= size or check.min() < -2 or check.max() >= size:
        raise bad("transition table indexes outside itself")
    link, ref = fails[:, 0], fails[:, 1]
    if link.min() < -1 or link.max() >= size:
        raise bad("failure links point outside the table")
    pooled = ref[(link >= 0) & (ref >= 0)]
    if pooled.size:
        if pooled.max() >= pool.size:
            raise bad("failure pops point outside the pool")
        counts = pool[pooled]
        if counts.min() < 0 or (pooled + 1 + 2 * counts.astype(np.int64)).max() > pool.size:
            raise bad("failure pops run past the end of the pool")
    if int(params[P_SROOT]) not in (0, 1):
        raise bad("continuation root must be slot 0 or 1")
    return Automaton(packed, cfg, nsym)


def _automaton_reduce(a: Automaton):
    config, arrays = automaton_state(a)
    return (automaton_from_state, (config, {k: np.array(v) for k, v in arrays.items()}))

