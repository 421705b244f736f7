"""A SentencePiece BPE model as flat arrays for :mod:`.kernels`, checked.

:func:`tables_from_proto` takes the parsed ``ModelProto``
(:mod:`.proto`), :func:`build_tables` the pieces and settings, however
they came (a ``.model`` file, a saved segkit model, a pickle): each refuses,
with a :class:`~segkit.models.files.ModelFileError` naming the file and the
field, what SentencePiece would refuse to load (no ``unk`` or two, a
piece given twice, empty or with a NUL or of 8000 bytes or more, byte
pieces without ``byte_fallback`` or not all 256 with it) and what segkit
does not run (Unigram, word and char models, a denormalizer, NaN scores).
"""

from __future__ import annotations

import re

import numpy as np

from ...models.files import ModelFileError
from ...runtime.jit import kernel
from . import kernels as K
from .longest import build_longest
from ..pipeline.charsmap import check_charsmap, read_charsmap

TYPE_CODES = {"NORMAL": 1, "UNKNOWN": 2, "CONTROL": 3, "USER_DEFINED": 4, "UNUSED": 5, "BYTE": 6}
_BYTE_PIECE = re.compile(rb"<0x([0-9A-F]{2})>")
MAX_PIECE_BYTES = 8000  # SentencePiece's kMaxPieceSize


@kernel
def _hash_table(pbuf, poff, size):
    """Open-addressing table of piece ids by their bytes; (table, -1) or
    (table, id of a piece whose bytes an earlier piece has)."""
    htab = np.full(size, -1, np.int32)
    mask = np.uint64(size - 1)
    n = poff.size - 1
    for t in range(n):
        a = poff[t]
        b = poff[t + 1]
        if K.lookup(pbuf, a, b, pbuf, poff, htab) >= 0:
            return htab, t
        h = K.span_hash(pbuf, a, b) & mask
        while htab[np.int64(h)] >= 0:
            h = (h + np.uint64(1)) & mask
        htab[np.int64(h)] = t
    return htab, -1


class Tables:
    """The arrays the kernels read, and the settings (see :func:`build_tables`)."""

    __slots__ = ("pbuf", "poff", "scores", "ptype", "prank", "htab", "ustart", "uids", "darts", "nblob",
                 "byte_ids", "flags", "settings", "pieces", "char_ids", "pkey", "pval", "trie", "tinfo")


SETTINGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "treat_whitespace_as_suffix",
            "byte_fallback", "split_digits", "unk_surface", "normalizer_name")


def build_tables(pbuf: np.ndarray, poff: np.ndarray, scores: np.ndarray, ptype: np.ndarray,
                 darts: np.ndarray, nblob: np.ndarray, settings: dict, source: str) -> Tables:
    """Check everything and assemble :class:`Tables`."""
    if pbuf.dtype != np.uint8 or pbuf.ndim != 1:
        raise ModelFileError(f"{source}: pieces: expected 1-D uint8 bytes, found {pbuf.dtype} {pbuf.shape}")
    n = ptype.size
    if poff.dtype != np.int64 or poff.shape != (n + 1,) or scores.dtype != np.float32 or scores.shape != (n,) \
            or ptype.dtype != np.int8 or ptype.ndim != 1:
        raise ModelFileError(f"{source}: pieces: expected {n + 1} int64 offsets, {n} float32 scores and int8 types, "
                             f"found {poff.dtype} {poff.shape}, {scores.dtype} {scores.shape}, {ptype.dtype}")
    if n == 0:
        raise ModelFileError(f"{source}: pieces: the model has no pieces")
    if n >= 2**31 - 1:
        raise ModelFileError(f"{source}: pieces: {n} pieces, more than int32 ids allow")
    if poff[0] != 0 or poff[-1] != pbuf.size or (np.diff(poff) <= 0).any():
        bad = int(np.argmax(np.diff(poff) <= 0)) if (np.diff(poff) <= 0).any() else 0
        raise ModelFileError(f"{source}: pieces[{bad}].piece: empty (a piece must not be empty), "
                             "or the piece offsets are not increasing from 0 to the bytes' size")
    lengths = np.diff(poff)
    if (lengths >= MAX_PIECE_BYTES).any():
        bad = int(np.argmax(lengths >= MAX_PIECE_BYTES))
        raise ModelFileError(f"{source}: pieces[{bad}].piece: {int(lengths[bad])} bytes, "
                             f"expected fewer than {MAX_PIECE_BYTES}")
    if (pbuf == 0).any():
        at = int(np.searchsorted(poff, int(np.argmax(pbuf == 0)), side="right") - 1)
        raise ModelFileError(f"{source}: pieces[{at}].piece: contains a NUL character")
    if ((ptype < 1) | (ptype > 6)).any():
        bad = int(np.argmax((ptype < 1) | (ptype > 6)))
        raise ModelFileError(f"{source}: pieces[{bad}].type: expected 1-6 (NORMAL ... BYTE), found {int(ptype[bad])}")
    if np.isnan(scores).any():
        bad = int(np.argmax(np.isnan(scores)))
        raise ModelFileError(f"{source}: pieces[{bad}].score: NaN (scores must be ordered numbers)")
    raw = pbuf.tobytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        at = int(np.searchsorted(poff, e.start, side="right") - 1)
        raise ModelFileError(f"{source}: pieces[{at}].piece: not UTF-8") from None
    for key in SETTINGS:
        if key not in settings:
            raise ModelFileError(f"{source}: settings: missing {key!r}")
    for key in SETTINGS[:6]:
        if not isinstance(settings[key], bool):
            raise ModelFileError(f"{source}: {key}: expected true or false, found {settings[key]!r}")
    if not isinstance(settings["unk_surface"], str) or not isinstance(settings["normalizer_name"], str):
        raise ModelFileError(f"{source}: trainer_spec.unk_surface / normalizer_spec.name: expected strings")
    unks = np.nonzero(ptype == TYPE_CODES["UNKNOWN"])[0]
    if unks.size != 1:
        raise ModelFileError(f"{source}: pieces: expected one piece of type UNKNOWN, found {unks.size}")
    t = Tables()
    t.pbuf, t.poff, t.scores, t.ptype = pbuf, poff, scores, ptype
    size = 1 << max(4, int(2 * n).bit_length())
    htab, dup = _hash_table(pbuf, poff, size)
    if dup >= 0:
        piece = raw[poff[dup] : poff[dup + 1]].decode("utf-8")
        raise ModelFileError(f"{source}: pieces[{dup}].piece: {piece!r} is already defined")
    t.htab = htab
    byte_ids = np.full(256, -1, np.int32)
    byte_fallback = settings["byte_fallback"]
    for i in np.nonzero(ptype == TYPE_CODES["BYTE"])[0].tolist():
        piece = raw[poff[i] : poff[i + 1]]
        if not byte_fallback:
            raise ModelFileError(f"{source}: pieces[{i}]: byte piece {piece.decode()!r} is found although "
                                 "trainer_spec.byte_fallback is false")
        m = _BYTE_PIECE.fullmatch(piece)
        if m is None:
            raise ModelFileError(f"{source}: pieces[{i}].piece: a BYTE piece must be <0xNN> (NN upper-case hex), "
                                 f"found {piece.decode()!r}")
        byte_ids[int(m.group(1), 16)] = i
    if byte_fallback and (byte_ids < 0).any():
        raise ModelFileError(f"{source}: pieces: trainer_spec.byte_fallback is true but {int((byte_ids < 0).sum())} "
                             f"of the 256 byte pieces are missing (first <0x{int(np.argmax(byte_ids < 0)):02X}>)")
    t.byte_ids = byte_ids
    _, rank = np.unique(-scores.astype(np.float64), return_inverse=True)
    t.prank = rank.astype(np.int32).reshape(-1)
    users = np.nonzero(ptype == TYPE_CODES["USER_DEFINED"])[0].astype(np.int32)
    first = pbuf[poff[users]] if users.size else np.zeros(0, np.uint8)
    order = np.argsort(first, kind="stable")
    t.uids = users[order]
    t.ustart = np.searchsorted(first[order], np.arange(257)).astype(np.int64)
    check_charsmap(darts, nblob, source, "normalizer_spec.precompiled_charsmap")
    t.darts, t.nblob = darts, nblob
    flags = np.zeros(K.N_FLAGS, np.int64)
    flags[K.F_ADD_DUMMY] = settings["add_dummy_prefix"]
    flags[K.F_REMOVE_EXTRA] = settings["remove_extra_whitespaces"]
    flags[K.F_ESCAPE] = settings["escape_whitespaces"]
    flags[K.F_SUFFIX] = settings["treat_whitespace_as_suffix"]
    flags[K.F_BYTE_FALLBACK] = byte_fallback
    flags[K.F_UNK] = int(unks[0])
    flags[K.F_HAS_UNUSED] = bool((ptype == TYPE_CODES["UNUSED"]).any())
    t.char_ids, t.pkey, t.pval, bits, fast = K.build_pairs(pbuf, poff, ptype, t.prank, htab)
    flags[K.F_FAST] = bool(fast)
    flags[K.F_PAIR_BITS] = int(bits)
    # Word mode (kernels.split_mode): not with UNUSED pieces, whose
    # resegmentation reads the last registration anywhere in the text.
    flags[K.F_SPLIT] = 0 if flags[K.F_HAS_UNUSED] else int(K.split_mode(pbuf, poff, ptype))
    # Longest match plus the pair test (.longest): on the id encoder's
    # models without UNUSED pieces.
    t.trie, t.tinfo = np.full(1, -1, np.int64), np.zeros(0, np.int64)
    if fast and not flags[K.F_HAS_UNUSED]:
        order = np.argsort(lengths, kind="stable").astype(np.int64)
        trie, tinfo, max_chars, ok = build_longest(pbuf, poff, ptype, t.prank, htab, t.char_ids, t.pkey, bits, order)
        if ok:
            t.trie, t.tinfo = trie, tinfo
            flags[K.F_LONGEST] = 1
            flags[K.F_MAX_CHARS] = int(max_chars)
    t.flags = flags
    t.settings = dict(settings)
    t.pieces = None
    return t


def packed(t: Tables) -> tuple:
    """The two arrays :func:`.kernels.encode_batch` reads."""
    return K.pack(t.pbuf, t.nblob, [t.poff, t.ptype, t.prank, t.htab, t.ustart, t.uids, t.darts, t.byte_ids, t.flags,
                                    t.char_ids, t.pkey, t.pval, t.trie, t.tinfo])


def tables_from_proto(model: dict, source: str) -> Tables:
    """:class:`Tables` of a parsed ``ModelProto`` (see :func:`.proto.read_model_proto`)."""
    trainer = model["trainer_spec"]
    if not model["pieces"]:
        raise ModelFileError(f"{source}: pieces: the model has no pieces (an empty file, or not a .model file)")
    kind = trainer["model_type"]
    if kind == "UNIGRAM":
        raise ModelFileError(f"{source}: trainer_spec.model_type: model_type UNIGRAM is not supported yet "
                             "(segkit.SentencePieceBPE reads BPE models; T5, ALBERT and XLM-R use Unigram)")
    if kind != "BPE":
        raise ModelFileError(f"{source}: trainer_spec.model_type: model_type {kind} is not supported "
                             "(segkit.SentencePieceBPE reads BPE models)")
    denorm = model["denormalizer_spec"]
    if denorm is not None and denorm["precompiled_charsmap"]:
        raise ModelFileError(f"{source}: denormalizer_spec.precompiled_charsmap: a denormalizer is not supported")
    norm = model["normalizer_spec"]
    pieces = model["pieces"]
    encoded = [p["piece"].encode("utf-8") for p in pieces]
    poff = np.zeros(len(pieces) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=poff[1:])
    pbuf = np.frombuffer(b"".join(encoded), np.uint8).copy()
    scores = np.array([p["score"] for p in pieces], np.float32)
    ptype = np.array([TYPE_CODES[p["type"]] for p in pieces], np.int8)
    darts, nblob = read_charsmap(norm["precompiled_charsmap"], source)
    settings = {
        "add_dummy_prefix": norm["add_dummy_prefix"],
        "remove_extra_whitespaces": norm["remove_extra_whitespaces"],
        "escape_whitespaces": norm["escape_whitespaces"],
        "treat_whitespace_as_suffix": trainer["treat_whitespace_as_suffix"],
        "byte_fallback": trainer["byte_fallback"],
        "split_digits": trainer["split_digits"],
        "unk_surface": trainer["unk_surface"],
        "normalizer_name": norm["name"],
    }
    t = build_tables(pbuf, poff, scores, ptype, darts, nblob, settings, source)
    t.pieces = [p["piece"] for p in pieces]
    return t
