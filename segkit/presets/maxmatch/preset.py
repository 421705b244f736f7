"""``segkit.MaxMatch``: greedy longest match over any vocabulary, bytes or
characters, on the engine's byte or code point alphabet.

The stages are few: the token table (:mod:`.tokens`), one automaton built
from its distinct tokens, and the conversions around the compiled calls
(a ``str`` is encoded to UTF-8 inside them, see
:mod:`segkit.engine.utf8`).  There is no normalization and no
pre-tokenization: the whole text is matched, left to right (or right to
left with ``direction="backward"``).
"""

from __future__ import annotations

import functools
import os
from typing import Any, Sequence

import numpy as np

from ...engine import Automaton, EngineConfig
from ...engine import utf8
from ...engine.dispatch import resolve_entry
from ...engine.kernels import LOOKAHEAD
from ...models.parts import automaton_arrays, automaton_from_arrays
from ...runtime.boxing import _shared_ints, int_lists_of
from ...runtime import interrupts
from ...runtime.gcpause import paused_gc
from ...runtime.threads import concat_segments, map_text_runs, resolve_threads
from ..transformers_names import TransformersNames
from ..base import Preset
from .one_text import BACKWARD, str_ids
from .streaming import StreamDecoder, check_errors, id_range
from .tokens import TokenTable

__all__ = ["MaxMatch"]

#: A text of at most this many characters is encoded through the per-thread
#: scratch in one compiled call; longer ones go through the batch kernels.
_ONE_TEXT = 1 << 12
#: The id the engine emits where no token matches and ``unknown="error"``.
_NO_TOKEN = -1
_UNITS = ("byte", "char")


def _check_options(unit: object, direction: object, unknown: object) -> None:
    if unit not in _UNITS:
        raise ValueError(f"unit must be 'byte' or 'char', found {unit!r}")
    if direction not in ("forward", "backward"):
        raise ValueError(f"direction must be 'forward' or 'backward', found {direction!r}")
    if unknown != "error" and (isinstance(unknown, bool) or not isinstance(unknown, (int, np.integer))
                               or not 0 <= unknown < (1 << 31) - 1):
        raise ValueError(f"unknown must be 'error' or a token id (a non-negative int32), found {unknown!r:.60}")


def _engine_config(unit: str, direction: str, unknown: str | int) -> EngineConfig:
    """Unmatchable input becomes one-byte (one-character) tokens of the
    unknown id, or of -1, which the preset turns into an error."""
    return EngineConfig(
        unknown="char",
        char_id=_NO_TOKEN if unknown == "error" else int(unknown),
        direction=direction,
        alphabet="byte" if unit == "byte" else "char",
    )


class MaxMatch(TransformersNames, Preset):
    """Greedy longest match over any list of tokens ("longest-prefix
    inference").

    At each position the longest token that starts there is taken, left to
    right (``direction="backward"``: the longest token that ends there,
    right to left).  Nothing else happens: no normalization, no splitting
    on spaces, no special tokens.  Runs in time linear in the text (failure
    links, Song et al. 2021), however the vocabulary is made: it need not
    hold every prefix of its tokens.

    Parameters
    ----------
    tokens
        The vocabulary: bytes or str (a ``str`` stands for its UTF-8 with
        ``unit="byte"``; ``unit="char"`` takes str only).  Not empty, none
        empty.
    unit
        ``"byte"``: match the UTF-8 bytes of a text (or the bytes given);
        tokens may cut characters.  ``"char"``: match characters.
    direction
        ``"forward"`` (default) or ``"backward"``.
    ids
        ``ids[k]`` is the id of ``tokens[k]`` (distinct non-negative ints);
        default: positions.  Where two ids hold the same token the higher
        one is matched (a :class:`DuplicateTokenWarning` says so); both
        decode.
    unknown
        What a byte (character) that starts no token becomes:
        ``"error"`` (default) raises ``ValueError`` naming it and its
        offset; an int is the id it becomes, one token per byte
        (character).  With ``unit="byte"`` and all 256 single bytes among
        the tokens this never happens.

    Examples
    --------
    >>> import segkit
    >>> mm = segkit.MaxMatch([b"a", b"aa", b"aaaa", b"b"])
    >>> mm.encode("aaaaaaab")  # 4 + 2 + 1, then b
    [2, 1, 0, 3]
    >>> mm.tokenize("aaab")
    [b'aa', b'a', b'b']
    >>> segkit.MaxMatch(["a", "aa", "aaaa", "b"], direction="backward").tokenize("aaaaaaab")
    [b'a', b'aa', b'aaaa', b'b']
    >>> mm.encode("abc")
    Traceback (most recent call last):
    ...
    ValueError: no token matches byte 0x63 ('c') at byte 2 (character 2) of the text; pass unknown=<id> to give such bytes an id
    >>> segkit.MaxMatch([b"a", b"b"], unknown=9).encode("abc")
    [0, 1, 9]
    >>> chars = segkit.MaxMatch(["東京", "京都", "東", "都"], unit="char")
    >>> chars.tokenize("東京都"), chars.encode_with_offsets("東京都")
    (['東京', '都'], ([0, 3], [(0, 2), (2, 3)]))
    """

    @interrupts.interruptible(source="tokens")
    def __init__(
        self,
        tokens: Sequence[bytes | str],
        *,
        unit: str = "byte",
        direction: str = "forward",
        ids: Sequence[int] | None = None,
        unknown: str | int = "error",
    ) -> None:
        _check_options(unit, direction, unknown)
        table = TokenTable.build(tokens, ids, unit, source=f"{type(self).__name__} tokens")
        self._assemble(table, unit, direction, unknown)

    @classmethod
    @interrupts.interruptible(source="path")
    def from_tokenizer_json(cls, path: str | os.PathLike, *, direction: str = "forward",
                            unknown: str | int | None = None) -> "MaxMatch":
        """Greedy longest match over the model vocabulary of a HuggingFace
        ``tokenizer.json`` ("longest-prefix inference", Uzan et al., ACL
        2024), on the whole text: no normalizer, no pre-tokenizer, no added
        tokens (but the special tokens of the model vocabulary, matched as
        spelled).
        Byte-level vocabularies (GPT-2's alphabet) and ``<0xHH>`` byte
        fallback tokens are mapped back to bytes; other tokens match their
        UTF-8 as spelled (see
        :mod:`segkit.presets.maxmatch.tokenizer_json`).  ``unknown``: as in
        the constructor; default the model's unk token if it has one, else
        ``"error"``.  ValueError naming the file for anything unreadable.
        """
        from .tokenizer_json import read_model_vocabulary

        _check_options("byte", direction, "error" if unknown is None else unknown)
        tokens, ids, unk = read_model_vocabulary(path)
        if unknown is None:
            unknown = "error" if unk is None else unk
        _check_options("byte", direction, unknown)
        obj = cls.__new__(cls)
        obj._assemble(TokenTable.build(tokens, ids, "byte", source=str(path)), "byte", direction, unknown)
        return obj

    def _assemble(self, table: TokenTable, unit: str, direction: str, unknown: str | int,
                  automaton: Automaton | None = None) -> None:
        self.unit = unit
        self.direction = direction
        self.unknown = unknown if unknown == "error" else int(unknown)
        self._table = table
        if automaton is None:
            automaton = Automaton.build(table.keys(), table.key_ids, _engine_config(unit, direction, unknown))
        self._automaton = automaton
        self._packed = automaton.packed
        self._backward = direction == "backward"
        # Whether the engine can emit the no-token marker (checked after matching).
        self._check_unknown = unknown == "error" and not (unit == "byte" and table.single_bytes() == 256)
        self._ints = _shared_ints(table.size)
        self._mask = np.int64(LOOKAHEAD if automaton.lookahead else 0)
        # One str to a list in one compiled call (byte unit): the entry
        # point with the model's arguments bound, resolved on first use.
        self._one = None

    # ------------------------------------------------------------- encode
    def encode(self, text: str | bytes) -> list[int]:
        """The ids of ``text`` (a ``str``, matched as its UTF-8 with
        ``unit="byte"``, or bytes).  A ``str`` with a lone surrogate has no
        UTF-8: ``UnicodeEncodeError`` naming its position."""
        one = self._one
        if one is not None and type(text) is str and len(text) <= _ONE_TEXT:
            ids = one(text)
            if type(ids) is not list:
                utf8.raise_surrogate(text, ids - 1)
            if self._check_unknown and _NO_TOKEN in ids:
                self._raise_unknown(text)
            return ids
        return self._encode_other(text)

    def _encode_other(self, text: str | bytes) -> list[int]:
        """:meth:`encode` of what the one-text call does not take: bytes,
        long texts, ``unit="char"``; the first short ``str`` resolves and
        binds that call (see :func:`~.one_text.str_ids`)."""
        text = self._check_text(text)
        if self.unit == "char":
            ids = self._automaton.segment_id_list(text, pretokenize=False)
        elif type(text) is str and len(text) <= _ONE_TEXT and utf8.reads_str():
            mode = np.int64(self._mask | (BACKWARD if self._backward else 0))
            ids, entry = resolve_entry(str_ids, self._packed, self._ints, mode, text)
            self._one = functools.partial(entry, self._packed, self._ints, mode)
            if type(ids) is not list:
                utf8.raise_surrogate(text, ids - 1)
        else:
            ids = self._ids_of_long(text)
        if self._check_unknown and _NO_TOKEN in ids:
            self._raise_unknown(text)
        return ids

    def _ids_of_long(self, text: str | bytes) -> list[int]:
        """The ids of a text too long for the per-thread scratch (or bytes):
        matched by the batch kernels, the list made with shared ints."""
        if isinstance(text, str):
            try:
                raw = text.encode("utf-8")
            except UnicodeEncodeError as e:
                utf8.raise_surrogate(text, e.start)
        else:
            raw = text
        data = utf8.text_bytes(raw)
        out, _ = self._automaton.segment_code_points(data, np.array([0, data.size], dtype=np.int64), offsets=False,
                                                     pretokenize=False)
        ids = out[0]
        return int_lists_of(ids, np.array([0, ids.size], dtype=np.int64))[0]

    def _check_text(self, text: object) -> str | bytes:
        if isinstance(text, str):
            return text
        if self.unit == "char":
            raise TypeError(f"unit='char' matches characters: expected text as str, found {type(text).__name__}")
        if isinstance(text, (bytes, bytearray, memoryview)):
            return text
        raise TypeError(f"expected text as str or bytes, found {type(text).__name__}: {text!r:.80}")

    def tokenize(self, text: str | bytes) -> list:
        """The tokens of ``text``: bytes (``unit="byte"``) or str."""
        by_id = self._table.by_id
        return [by_id[i] if i >= 0 and i < len(by_id) else None for i in self.encode(text)]

    def encode_with_offsets(self, text: str | bytes) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids of ``text`` and each token's ``(start, end)``: in
        characters for a ``str`` (a token that starts or ends inside a
        character covers all of it), in bytes for bytes.

        >>> import segkit
        >>> mm = segkit.MaxMatch([b"\\xe4", b"\\xbd\\xa0", b"\\xe5\\xa5\\xbd"])
        >>> mm.encode_with_offsets("你好")
        ([0, 1, 2], [(0, 1), (0, 1), (1, 2)])
        >>> mm.encode_with_offsets("你好".encode())
        ([0, 1, 2], [(0, 1), (1, 3), (3, 6)])
        """
        text = self._check_text(text)
        if self.unit == "byte":
            rows = self._automaton.segment_rows(text, char_offsets=isinstance(text, str))
        else:
            rows = self._automaton.segment_rows(text, pretokenize=False)
        ids = rows[0].tolist()
        if self._check_unknown and _NO_TOKEN in ids:
            self._raise_unknown(text)
        return ids, list(zip(rows[1].tolist(), rows[2].tolist()))

    @interrupts.interruptible("texts")
    def encode_batch(self, texts: Sequence[str] | Sequence[bytes], *, num_threads: int | None = None,
                     flat: bool = False):
        """The ids of many texts: a list of id lists, or with ``flat=True``
        a pair ``(ids, row_splits)`` of NumPy arrays (int32 and int64; text
        ``t``'s ids are ``ids[row_splits[t]:row_splits[t + 1]]``), made
        without a Python object per token.

        ``num_threads``: texts are split into runs matched on that many
        threads (None/1: this thread; 0: all cores); small batches stay on
        one.

        >>> import segkit
        >>> mm = segkit.MaxMatch([b"a", b"aa", b"b"])
        >>> mm.encode_batch(["aab", "", "ba"])
        [[1, 2], [], [2, 0]]
        >>> ids, splits = mm.encode_batch(["aab", "", "ba"], flat=True)
        >>> ids.tolist(), splits.tolist()
        ([1, 2, 2, 0], [0, 2, 2, 4])
        """
        ids, rows = self._batch(texts, num_threads, offsets=False)
        if flat:
            return ids, rows
        with paused_gc():  # many lists at once: no collection walking the process meanwhile
            return int_lists_of(ids, rows)  # made in compiled code, ids as shared ints

    @interrupts.interruptible("texts")
    def encode_batch_with_offsets(self, texts: Sequence[str] | Sequence[bytes], *, num_threads: int | None = None):
        """``(ids, starts, ends, row_splits)`` NumPy arrays for many texts;
        offsets as :meth:`encode_with_offsets` gives them (characters of a
        ``str``, bytes of bytes)."""
        out, rows = self._batch(texts, num_threads, offsets=True)
        return out[0], out[1], out[2], rows

    def _batch(self, texts, num_threads, offsets: bool):
        if isinstance(texts, np.ndarray) and texts.ndim == 1:
            texts = texts.tolist()  # (a NumPy column of str or bytes)
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise TypeError(f"expected a sequence of texts, found {type(texts).__name__}")
        resolve_threads(num_threads)  # checks its type
        byte_unit = self.unit == "byte"
        if not byte_unit:
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise TypeError(f"unit='char' matches characters: expected a sequence of str, found "
                                    f"{type(t).__name__} at index {i}")

        def run(part):
            ids, st, en, rows = self._automaton.segment_batch(part, offsets=offsets, pretokenize=False,
                                                              char_offsets=byte_unit)
            if offsets:
                return np.stack([ids, st, en]), rows
            return ids[None, :], rows

        parts, used = map_text_runs(run, texts, num_threads)
        out, rows = concat_segments(parts, used)
        if self._check_unknown and out.shape[1] and int(out[0].min()) == _NO_TOKEN:
            q = int(np.argmax(out[0] == _NO_TOKEN))
            t = int(np.searchsorted(rows, q, side="right")) - 1
            self._raise_unknown(texts[t], t)
        return (out if offsets else out[0]), rows

    def _raise_unknown(self, text: str | bytes, index: int | None = None) -> None:
        """ValueError naming the first byte (character) no token matches."""
        where = "the text" if index is None else f"text {index} of the batch"
        hint = "; pass unknown=<id> to give such {} an id"
        if self.unit == "char":
            ids, offs = self._offsets_unchecked(text)
            s = offs[ids.index(_NO_TOKEN)][0]
            ch = text[s]
            raise ValueError(f"no token matches character {ch!r} (U+{ord(ch):04X}) at character {s} of {where}"
                             + hint.format("characters"))
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        ids, offs = self._offsets_unchecked(raw)
        s = offs[ids.index(_NO_TOKEN)][0]
        b = raw[s]
        shown = f" ({chr(b)!r})" if 32 <= b < 127 else ""
        char = ""
        if isinstance(text, str):
            char = f" (character {sum(1 for x in raw[: s + 1] if x & 0xC0 != 0x80) - 1})"
        raise ValueError(f"no token matches byte {b:#04x}{shown} at byte {s}{char} of {where}" + hint.format("bytes"))

    def _offsets_unchecked(self, text):
        if self.unit == "byte":
            rows = self._automaton.segment_rows(text)
        else:
            rows = self._automaton.segment_rows(text, pretokenize=False)
        return rows[0].tolist(), list(zip(rows[1].tolist(), rows[2].tolist()))

    # ------------------------------------------------------------- decode
    def _tokens_of(self, ids) -> list:
        """The tokens of ``ids`` (any iterable of ints, consumed once);
        TypeError or ValueError naming the first id that has none."""
        by_id = self._table.by_id
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        elif not isinstance(ids, (list, tuple)):
            if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
                raise TypeError(f"expected a sequence of token ids, found {type(ids).__name__} {ids!r:.40}")
            ids = list(ids)  # an iterator: read once, here
        try:
            if ids and min(ids) < 0:
                raise IndexError
            parts = [by_id[i] for i in ids]
            if None in parts:
                raise IndexError
        except (TypeError, IndexError):
            raise self._bad_id(ids) from None
        return parts

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of the tokens ``ids`` (``unit="char"``: their UTF-8).
        ValueError naming an id that has no token."""
        parts = self._tokens_of(ids)
        if self.unit == "char":
            return "".join(parts).encode("utf-8")
        return b"".join(parts)

    def decode(self, ids: Sequence[int], errors: str = "strict", skip_special_tokens: bool = False) -> str:
        """The text of the tokens ``ids``.  With ``unit="byte"`` their bytes
        are decoded as UTF-8 with ``errors`` (as :meth:`bytes.decode`:
        ``"strict"`` raises ``UnicodeDecodeError`` where tokens do not make
        whole characters, ``"replace"`` puts U+FFFD there).  For generation,
        see :meth:`stream_decoder`.  ``skip_special_tokens``: accepted as
        transformers' calls pass it; a MaxMatch vocabulary has no special
        tokens."""
        check_errors(errors)
        if self.unit == "char":
            return "".join(self._tokens_of(ids))
        return self.decode_bytes(ids).decode("utf-8", errors)

    def _bad_id(self, ids) -> Exception:
        """The error for the first id of ``ids`` that has no token."""
        by_id = self._table.by_id
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                return TypeError(f"expected token ids (ints), found {type(i).__name__} {i!r:.40} at position {k}")
            if not 0 <= i < len(by_id) or by_id[i] is None:
                return ValueError(f"id {i} at position {k} has no token ({id_range(by_id)}){self._no_token_note(i)}")
        raise AssertionError("unreachable")  # pragma: no cover

    def _no_token_note(self, token_id: int) -> str:
        """More about an id that has no token, for the message (presets say
        what such an id stands for)."""
        return ""

    def stream_decoder(self, errors: str = "strict") -> StreamDecoder:
        """A :class:`~segkit.presets.maxmatch.streaming.StreamDecoder` for
        text generated token by token: each ``step(id)`` returns only
        complete characters.  ``errors`` must name an error handler of
        :meth:`bytes.decode` (checked here)."""
        return StreamDecoder(self._table.by_id, errors)

    # ------------------------------------------------------ vocabulary
    @property
    def vocab_size(self) -> int:
        """One more than the largest id."""
        return self._table.size

    def id_to_token(self, token_id: int) -> bytes | str | None:
        """The token of ``token_id`` (None if it has none)."""
        by_id = self._table.by_id
        return by_id[token_id] if 0 <= token_id < len(by_id) else None

    def token_to_id(self, token: bytes | str) -> int | None:
        """The id ``token`` is matched as (the highest of its ids), or None."""
        if self.unit == "byte" and isinstance(token, str):
            token = token.encode("utf-8", "surrogatepass")
        return self._table.index().get(token)

    def get_vocab(self) -> dict:
        """token -> id, for the tokens matched (each distinct token once)."""
        return dict(self._table.index())

    # transformers' names (TransformersNames): the contract
    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """:attr:`vocab_size` (there are no added tokens)."""
        return self.vocab_size

    def _special_token(self, role: str) -> str | None:
        return None  # (a MaxMatch vocabulary has no role tokens)

    def _special_ids(self) -> set[int]:
        return set()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(vocab_size={self.vocab_size}, unit={self.unit!r}, "
                f"direction={self.direction!r}, unknown={self.unknown!r})")

    # ------------------------------------------------------ Arrow
    @interrupts.interruptible("texts")
    def encode_arrow(self, texts: Any, *, num_threads: int | None = None, null: str = "error",
                     offsets: bool = False):
        """:meth:`encode_batch` of an Arrow column of strings or binaries,
        as a ``pyarrow.Table`` with a ``list<int32>`` column
        ``input_ids`` (and ``offset_mapping`` with ``offsets=True``: character
        offsets for string columns, byte offsets for binary ones).  The
        column's buffers are matched where they lie (no Python object per
        row).  ``null="error"``: a null row raises ValueError naming it;
        ``"empty"``: it reads as an empty text.  Needs pyarrow.

        >>> import pyarrow as pa, segkit
        >>> mm = segkit.MaxMatch([b"a", b"aa", b"b"])
        >>> mm.encode_arrow(pa.array(["aab", None, "ba"]), null="empty").column("input_ids").to_pylist()
        [[1, 2], [], [2, 0]]
        """
        from .arrow import encode_arrow

        return encode_arrow(self, texts, num_threads=num_threads, null=null, offsets=offsets)

    # ------------------------------------------------------ files and pickles
    # (save, load and pickling come from segkit.presets.base.Preset)
    def _settings(self) -> dict:
        return {"unit": self.unit, "direction": self.direction, "unknown": self.unknown}

    def _model_state(self):
        aconf, arrays = automaton_arrays(self._automaton, "automaton")
        arrays.update(self._table.state())
        config = self._settings()
        config["automaton"] = aconf
        return config, arrays, {}

    @classmethod
    def _from_model(cls, config: dict, arrays: dict, blobs: dict, source: str):
        """A preset from a model file's parts, everything validated: the
        settings, the token table, and the automaton, which must be the one
        the table's tokens give (trie checked against them, failure links
        recomputed)."""
        for k in ("unit", "direction", "unknown"):
            if k not in config:
                raise ValueError(f"{source}: setting {k!r} is missing")
        unit, direction, unknown = config["unit"], config["direction"], config["unknown"]
        _check_options(unit, direction, unknown)
        table = TokenTable.from_state(unit, arrays, source)
        valid = np.zeros(max(table.size, (0 if unknown == "error" else unknown + 1)) + 1, dtype=bool)
        valid[table.key_ids + 1] = True
        valid[0] = True  # -1: the no-token marker of unknown="error" (else never emitted)
        if unknown != "error":
            valid[unknown + 1] = True
        automaton = automaton_from_arrays(config["automaton"], arrays, "automaton", source, valid, table.key_arrays())
        expected = _engine_config(unit, direction, unknown)
        if automaton.config != expected:
            raise ValueError(f"{source}: the automaton's configuration {automaton.config} does not match the "
                             f"settings, which imply {expected}")
        table.check_shadowed(automaton, source)
        obj = cls.__new__(cls)
        obj._assemble(table, unit, direction, unknown, automaton)
        return obj

    def _parts(self) -> tuple:
        # Pickles as arrays (no rebuild, no validation: unpickling runs code anyway).
        return (self._table.data, self._table.ends, self._table.key_ids, self._settings(), self._automaton)

    @classmethod
    def _from_parts(cls, data, ends, key_ids, settings, automaton):
        obj = cls.__new__(cls)
        obj._assemble(TokenTable(settings["unit"], data, ends, key_ids), settings["unit"], settings["direction"],
                      settings["unknown"], automaton)
        return obj
