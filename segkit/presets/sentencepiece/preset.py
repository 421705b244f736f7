"""``segkit.SentencePieceBPE``: SentencePiece BPE models (``.model`` files),
exact (ids equal ``sentencepiece.SentencePieceProcessor.encode``).

The file is read by segkit's own protobuf reader (:mod:`.proto`) and checked
(:mod:`.tables`); the normalizer and the merges run compiled, a whole batch
per call (:mod:`.kernels`).  Saving, :func:`segkit.load` and pickling come
from :class:`~segkit.presets.base.Preset`.
"""

from __future__ import annotations

import functools
import os
from typing import Iterable, Sequence

import numpy as np

from ...models.files import ModelFileError
from ..transformers_names import TransformersNames
from ...engine import utf8
from ...runtime.boxing import _shared_ints
from ..base import Preset, check_text, int_lists_of, map_text_runs
from . import kernels as K
from .one_text import str_ids
from .proto import read_model_proto
from .tables import TYPE_CODES, Tables, build_tables, packed, tables_from_proto

_TYPE_NAMES = {v: k for k, v in TYPE_CODES.items()}
_SPACE = "\u2581"
#: A text of at most this many characters is encoded by one compiled call
#: that returns its list (one_text.str_ids); longer ones by the batch kernel.
_ONE_TEXT = 1 << 14
#: Word caches kept for the batch kernels (more concurrent calls make more, then drop them)
_KEPT_CACHES = 4
_NO_CACHE = np.zeros(0, np.int32)


class SentencePieceBPE(TransformersNames, Preset):
    """A SentencePiece BPE model: ``SentencePieceBPE(path)`` or
    :meth:`from_file`.

    Runs what SentencePiece runs for BPE: the normalizer (identity or a
    precompiled charsmap such as ``nmt_nfkc``; ``add_dummy_prefix``,
    ``remove_extra_whitespaces``, ``escape_whitespaces``,
    ``treat_whitespace_as_suffix``), user-defined symbols matched first,
    merges by score (ties: leftmost), unused pieces resegmented, byte
    fallback (``<0xNN>``) or ``unk`` for characters outside the vocabulary.
    ``split_digits`` and the other trainer options shape the vocabulary only:
    encoding follows from the pieces.  Unigram models are refused (see
    :doc:`/sentencepiece`).

    Where no piece has a ``▁`` right after another character, texts are
    merged word by word and words' ids are kept in bounded caches across
    calls (4 MiB each: one for :meth:`encode`, at most four for batches);
    the ids are the same either way.

    Parameters
    ----------
    path
        A SentencePiece ``.model`` file (a serialized ``ModelProto``).

    Raises
    ------
    ModelFileError
        The file cannot be read or is not a valid BPE model; the message
        names the file and the field (``trainer_spec.model_type``).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        source = os.fspath(path)
        try:
            with open(source, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise ModelFileError(f"{source}: cannot read the model file: {e.strerror or e}") from None
        self._set(tables_from_proto(read_model_proto(data, source), source))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "SentencePieceBPE":
        """The model in a SentencePiece ``.model`` file (as the constructor)."""
        return cls(path)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "<bytes>") -> "SentencePieceBPE":
        """The model serialized in ``data`` (``source`` names it in errors)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data: expected bytes, found {type(data).__name__}")
        obj = cls.__new__(cls)
        obj._set(tables_from_proto(read_model_proto(bytes(data), source), source))
        return obj

    def _set(self, t: Tables) -> None:
        self._t = t
        if t.pieces is None:
            offs = t.poff.tolist()
            # piece strings from their UTF-8 bytes
            raw = t.pbuf.tobytes()
            t.pieces = [raw[offs[i] : offs[i + 1]].decode("utf-8") for i in range(len(offs) - 1)]
        self._ids = {p: i for i, p in enumerate(t.pieces)}
        self._types = t.ptype.tolist()
        self._args = packed(t)
        self._one = None  # str_ids' compiled entry point with the model bound, once resolved
        self._ints = _shared_ints(len(t.pieces))
        # Word caches (kernels.CACHE_ROWS): one for the per-call path, used
        # only under the GIL (one_text.str_ids), and a pool for the batch
        # kernels, each taken by one call at a time.
        self._one_cache = self._new_cache()
        self._caches: list[np.ndarray] = []

    # ------------------------------------------------------------ vocabulary
    @property
    def vocab_size(self) -> int:
        """The number of pieces (SentencePiece's ``get_piece_size()``)."""
        return len(self._t.pieces)

    def __len__(self) -> int:
        return self.vocab_size

    def id_to_piece(self, i: int) -> str:
        """The piece of id ``i``."""
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < self.vocab_size:
            raise ValueError(f"id: expected an int in [0, {self.vocab_size}), found {i!r}")
        return self._t.pieces[int(i)]

    def piece_to_id(self, piece: str) -> int:
        """The id of ``piece``, or the ``unk`` id when it is no piece (as SentencePiece)."""
        if not isinstance(piece, str):
            raise TypeError(f"piece: expected a str, found {type(piece).__name__}")
        return self._ids.get(piece, self.unk_id)

    def piece_type(self, i: int) -> str:
        """``"NORMAL"``, ``"UNKNOWN"``, ``"CONTROL"``, ``"USER_DEFINED"``, ``"UNUSED"`` or ``"BYTE"``."""
        self.id_to_piece(i)
        return _TYPE_NAMES[self._types[int(i)]]

    def score(self, i: int) -> float:
        """The score of id ``i`` (merges prefer higher scores)."""
        self.id_to_piece(i)
        return float(self._t.scores[int(i)])

    @property
    def unk_id(self) -> int:
        return int(self._t.flags[K.F_UNK])

    def _control(self, name: str) -> int:
        i = self._ids.get(name, -1)
        return i if i >= 0 and self._types[i] == TYPE_CODES["CONTROL"] else -1

    @property
    def bos_id(self) -> int:
        """The id of ``<s>`` when it is a control piece, else -1."""
        return self._control("<s>")

    @property
    def eos_id(self) -> int:
        """The id of ``</s>`` when it is a control piece, else -1."""
        return self._control("</s>")

    @property
    def settings(self) -> dict:
        """The normalizer and trainer settings the model runs with."""
        return dict(self._t.settings)

    # transformers' names (TransformersNames): the contract
    def id_to_token(self, i: int) -> str | None:
        """The piece of id ``i``, or None for an id that is no piece."""
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < self.vocab_size:
            return None
        return self._t.pieces[int(i)]

    def token_to_id(self, token: str) -> int | None:
        """The id of a piece, or None (not the ``unk`` id: see :meth:`piece_to_id`)."""
        return self._ids.get(token) if isinstance(token, str) else None

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """:attr:`vocab_size` (user-defined symbols are pieces)."""
        return self.vocab_size

    def _special_token(self, role: str) -> str | None:
        i = {"unk": self.unk_id, "bos": self.bos_id, "eos": self.eos_id, "pad": self._control("<pad>")}.get(role, -1)
        return self._t.pieces[i] if i >= 0 else None

    def _special_ids(self) -> set[int]:
        return {i for i in range(self.vocab_size) if self._types[i] == TYPE_CODES["CONTROL"]}

    def __repr__(self) -> str:
        s = self._t.settings
        return (f"SentencePieceBPE(vocab_size={self.vocab_size}, normalizer={s['normalizer_name'] or 'identity'!r}, "
                f"byte_fallback={s['byte_fallback']})")

    # -------------------------------------------------------------- encoding
    def _new_cache(self) -> np.ndarray:
        """A word cache, empty (an empty array when the model has no word mode)."""
        if not self._t.flags[K.F_SPLIT]:
            return _NO_CACHE
        return np.zeros(K.CACHE_ROWS * K.CACHE_ROW, np.int32)

    def _clear_caches(self) -> None:
        """Forget every word the caches hold (for benchmarks of a cold start)."""
        self._one_cache.fill(0)
        self._caches.clear()

    def _run(self, texts: list) -> tuple[np.ndarray, np.ndarray]:
        encoded = []
        for i, t in enumerate(texts):
            try:
                encoded.append(t.encode("utf-8"))
            except (UnicodeEncodeError, AttributeError):
                self._check(t, f"texts[{i}]")  # raises, naming the text
                raise
        offs = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=offs[1:])
        try:
            cache = self._caches.pop()  # (atomic: each cache is with one call at a time)
        except IndexError:
            cache = self._new_cache()
        try:
            return K.encode_batch(np.frombuffer(b"".join(encoded), np.uint8), offs, *self._args, cache)
        finally:
            if len(self._caches) < _KEPT_CACHES:
                self._caches.append(cache)

    def _check(self, text: object, what: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"{what}: expected a str, found {type(text).__name__}")
        return check_text(text, what)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``, as ``SentencePieceProcessor.encode(text)``.

        Raises
        ------
        TypeError
            ``text`` is not a str.
        ValueError
            ``text`` has a lone surrogate (no UTF-8 spells it).
        """
        one = self._one
        if one is not None and type(text) is str and len(text) <= _ONE_TEXT:
            ids = one(text)
            if type(ids) is not list:
                self._check(text, "text")  # raises, naming the position
            return ids
        return self._encode_other(text)

    def _encode_other(self, text: object) -> list[int]:
        """:meth:`encode` of what the bound one-text call does not take
        (long texts; the first short one resolves and binds that call)."""
        if type(text) is not str:
            self._check(text, "text")
        if len(text) <= _ONE_TEXT and utf8.reads_str():
            from ...engine.dispatch import resolve_entry

            ids, entry = resolve_entry(str_ids, *self._args, self._ints, self._one_cache, text)
            self._one = functools.partial(entry, *self._args, self._ints, self._one_cache)
            if type(ids) is not list:
                self._check(text, "text")
            return ids
        self._check(text, "text")
        ids, ends = self._run([text])
        return int_lists_of(ids, np.array([0, ids.size], np.int64))[0]

    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode` of each text, one compiled call per run of texts
        (``num_threads`` runs at once; None: one thread)."""
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(f"texts: expected a list of str, found {type(texts).__name__}")
        texts = list(texts)

        def run(part: list) -> list[list[int]]:
            ids, ends = self._run(part)
            rows = np.zeros(len(part) + 1, np.int64)
            rows[1:] = ends
            return int_lists_of(ids, rows)

        if not texts:
            return []
        try:
            parts, _ = map_text_runs(run, texts, num_threads)
        except (TypeError, ValueError):
            for i, t in enumerate(texts):  # name the text by its index in the whole batch
                self._check(t, f"texts[{i}]")
            raise
        return [row for part in parts for row in part]

    def tokenize(self, text: str) -> list[str]:
        """The pieces of the ids of ``text`` (``id_to_piece`` of each).

        As ``encode(text, out_type=str)`` except for ``unk``: SentencePiece
        gives the text it covers, this gives the ``unk`` piece (``<unk>``).
        """
        pieces = self._t.pieces
        return [pieces[i] for i in self.encode(text)]

    # -------------------------------------------------------------- decoding
    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """The text of ``ids``, as ``SentencePieceProcessor.decode``: control
        pieces vanish, ``▁`` becomes a space (the first one dropped when the
        model adds a dummy prefix), runs of byte pieces are decoded as UTF-8
        (a malformed byte: U+FFFD), ``unk`` is ``trainer_spec.unk_surface``.
        ``skip_special_tokens=False`` (transformers' ``batch_decode``
        default) writes control pieces (``<s>``) as their text instead.

        Raises
        ------
        ValueError
            An id outside ``[0, vocab_size)``.
        """
        if ids is None or isinstance(ids, (str, bytes)):
            raise TypeError(f"ids: expected a list of ints, found {type(ids).__name__}")
        ids = list(ids)
        n = self.vocab_size
        for i in ids:
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < n:
                raise ValueError(f"ids: expected ints in [0, {n}), found {i!r}")
        pieces, types = self._t.pieces, self._types
        s = self._t.settings
        strip_first = s["add_dummy_prefix"] or s["remove_extra_whitespaces"]
        remove_extra = s["remove_extra_whitespaces"]
        out: list[str] = []
        text_len = 0
        is_bos_ws = True
        bos_ws_seen = False
        pending = bytearray()

        def flush() -> None:
            nonlocal text_len
            if pending:
                decoded = _decode_bytes(bytes(pending))
                out.append(decoded)
                text_len += len(decoded)
                pending.clear()

        byte_type, control, unknown = TYPE_CODES["BYTE"], TYPE_CODES["CONTROL"], TYPE_CODES["UNKNOWN"]
        for i in ids:
            ty = types[i]
            if ty == byte_type:
                pending.append(int(pieces[i][3:5], 16))
                continue
            flush()
            if bos_ws_seen or text_len:
                is_bos_ws = False
            if ty == control:
                piece, bos_ws_seen = ("" if skip_special_tokens else pieces[i]), False
            elif ty == unknown:
                piece, bos_ws_seen = s["unk_surface"], False
            else:
                piece = pieces[i]
                bos_ws_seen = False
                if is_bos_ws and strip_first and piece.startswith(_SPACE):
                    piece = piece[1:]
                    bos_ws_seen = not remove_extra
                piece = piece.replace(_SPACE, " ")
            out.append(piece)
            text_len += len(piece)
        flush()
        return "".join(out)

    # ------------------------------------------------------- saving, pickling
    def _model_state(self):
        t = self._t
        config = {"settings": t.settings}
        arrays = {"poff": t.poff, "scores": t.scores.view(np.uint32),  # float32 bits: the file stores ints
                   "ptype": t.ptype, "darts": t.darts, "nblob": t.nblob}
        return config, arrays, {"pieces": t.pbuf.tobytes()}

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        if not isinstance(config, dict) or not isinstance(config.get("settings"), dict):
            raise ModelFileError(f"{source}: settings: expected an object")
        for key in ("poff", "scores", "ptype", "darts", "nblob"):
            if key not in arrays:
                raise ModelFileError(f"{source}: array {key!r} is missing")
        if not isinstance(blobs.get("pieces"), (bytes, bytearray, memoryview)):
            raise ModelFileError(f"{source}: blob 'pieces' is missing")
        pbuf = np.frombuffer(bytes(blobs["pieces"]), np.uint8)
        scores = np.asarray(arrays["scores"])
        if scores.dtype != np.uint32 or scores.ndim != 1:
            raise ModelFileError(f"{source}: array 'scores': expected 1-D uint32 (float32 bits), found {scores.dtype}")
        t = build_tables(pbuf, np.asarray(arrays["poff"]), scores.view(np.float32), np.asarray(arrays["ptype"]),
                         np.asarray(arrays["darts"]), np.asarray(arrays["nblob"]), config["settings"], source)
        obj = cls.__new__(cls)
        obj._set(t)
        return obj


def _decode_bytes(raw: bytes) -> str:
    """UTF-8 of a run of byte pieces, each malformed byte as U+FFFD (as
    SentencePiece: one replacement per byte, never per sequence)."""
    out = []
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        size = 1 if c < 0x80 else 2 if 0xC2 <= c < 0xE0 else 3 if 0xE0 <= c < 0xF0 else 4 if 0xF0 <= c < 0xF5 else 0
        if size:
            try:
                out.append(raw[i : i + size].decode("utf-8"))
                i += size
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)
