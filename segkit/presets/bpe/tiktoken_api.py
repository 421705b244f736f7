"""The rest of tiktoken's ``Encoding`` API on :class:`segkit.BPE`, each
method behaving as tiktoken 0.14's (checked against it in
``tests/test_bpe_tiktoken_api.py``), plus :meth:`~TiktokenAPI.encode_bytes`
(tiktoken's ``_encode_bytes``).

Lone surrogates: tiktoken's ``encode``, ``encode_ordinary`` and their
batch forms first try the text as it is and, when it has no UTF-8 form,
encode ``text.encode("utf-16", "surrogatepass").decode("utf-16",
"replace")`` instead: a valid surrogate pair becomes its character, a lone
surrogate U+FFFD.  segkit does the same for the models that follow tiktoken
(from tiktoken files, :meth:`~segkit.BPE.from_pretrained` and Tekken files:
:data:`TIKTOKEN_MODES`); everywhere else (tokenizer.json models,
``BPE(vocab, merges)``, ``encode_with_offsets``, and ``encode_to_numpy`` and
``encode_single_token``, which tiktoken does not repair either) a lone
surrogate is a ValueError naming its position.

One difference remains, for special tokens of one's own only: tiktoken
looks for disallowed special tokens in the text before the repair, segkit
after it, so a disallowed special token that holds U+FFFD or a character
outside the BMP and appears only once the text is repaired is an error in
segkit and ordinary text in tiktoken (no encoding tiktoken ships has one).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

#: Modes whose ``encode`` repairs surrogates as tiktoken does.
TIKTOKEN_MODES = ("tiktoken", "tekken")


class UnknownTokenError(KeyError, ValueError):
    """An id (or a byte string) that is no token of the vocabulary.  A
    KeyError, as tiktoken raises, and a ValueError, as segkit's other
    argument errors."""

    def __str__(self) -> str:  # (KeyError's shows the repr of its argument)
        return str(self.args[0]) if self.args else ""


def repaired(text: str) -> str:
    """tiktoken's repair of a text with surrogates: pairs joined, lone
    ones replaced by U+FFFD.

    >>> repaired("a\\ud83d\\ude00b\\ud800")
    'a😀b\\ufffd'
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class TiktokenAPI:
    """Mixed into :class:`segkit.BPE` (which provides ``encode``,
    ``decode_bytes`` and the tables)."""

    # ------------------------------------------------------------ surrogates
    def _unpaired(self, text: str, index: int | None = None) -> str:
        """``text`` with its surrogates repaired as tiktoken does, for the
        models that follow tiktoken; for the others, the ValueError naming
        the first lone surrogate."""
        from .pieces import utf8

        if self._mode not in TIKTOKEN_MODES:
            utf8(text, index)  # raises
        return repaired(text)

    # ------------------------------------------------------------ encoding
    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose bytes (or, for a ``str``, UTF-8) are
        exactly ``text_or_bytes``, special tokens included; KeyError if
        there is none (tiktoken's ``encode_single_token``).

        >>> import segkit
        >>> enc = segkit.BPE.from_pretrained("gpt2")
        >>> enc.encode_single_token("hello"), enc.encode_single_token("<|endoftext|>")
        (31373, 50256)
        """
        from .pieces import utf8

        if isinstance(text_or_bytes, str):
            key = utf8(text_or_bytes)
        elif isinstance(text_or_bytes, bytes):
            key = text_or_bytes
        else:
            raise TypeError(f"text_or_bytes must be a str or bytes, found {type(text_or_bytes).__name__}")
        i = self._byte_ids().get(key)
        if i is not None:
            return i
        try:
            s = key.decode("utf-8")
        except UnicodeDecodeError:
            s = None
        i = self.special_tokens.get(s) if s is not None else None
        if i is None:
            raise UnknownTokenError(f"{key!r:.80} is not a token of this vocabulary")
        return i

    def _byte_ids(self) -> dict:
        """bytes -> id of every token (built on first use)."""
        table = getattr(self, "_byte_id_table", None)
        if table is None:
            t = self._tables
            data = t.tok_bytes.tobytes()
            start = t.tok_start.tolist()
            table = {data[start[i] : start[i + 1]]: i for i in range(len(start) - 1) if start[i + 1] > start[i]}
            self._byte_id_table = table
        return table

    def encode_to_numpy(self, text: str, *, allowed_special: str | Iterable[str] = (),
                        disallowed_special: str | Iterable[str] = "all") -> np.ndarray:
        """:meth:`encode` as a uint32 NumPy array (tiktoken's
        ``encode_to_numpy``; as there, a lone surrogate is an error).

        >>> import segkit
        >>> segkit.BPE.from_pretrained("cl100k_base").encode_to_numpy("hello world")
        array([15339,  1917], dtype=uint32)
        """
        from .pieces import utf8

        if isinstance(text, str):
            utf8(text)
        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return np.array(ids, dtype=np.uint32)

    def encode_bytes(self, data: bytes) -> list[int]:
        """Token ids of any byte string, valid UTF-8 or not (tiktoken's
        ``_encode_bytes``).

        UTF-8 is :meth:`encode_ordinary` of its text.  Otherwise the longest
        valid prefix is encoded as text; the tokens of its last piece (with
        the all-whitespace tokens before it, when it starts with one) are
        then taken back and their bytes, with all the bytes from the first
        invalid one on, are encoded as one piece: no pattern splits them.

        >>> import segkit
        >>> enc = segkit.BPE.from_pretrained("cl100k_base")
        >>> enc.encode_bytes(b"hello \\xe4\\xb8")
        [15339, 220, 3574]
        >>> enc.decode_bytes(enc.encode_bytes(b"\\xff\\xfe ok"))
        b'\\xff\\xfe ok'
        """
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"data must be bytes, found {type(data).__name__}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            valid = e.start
        else:
            return self.encode_ordinary(text)
        if self._mode == "tokenizer.json" and self._normalizer is not None:
            raise ValueError("encode_bytes runs on the bytes as they are; this tokenizer.json model normalizes "
                             f"its text first ({self._normalizer}), which bytes that are not UTF-8 cannot be")
        from .pieces import Pieces

        prefix = data[:valid].decode("utf-8")
        pieces = None
        if prefix:
            pieces = self._compiled_pieces([prefix], None, True, 0)
            if pieces is None:
                pieces = self._pieces([prefix], None, True)
            ids, piece_ends = self._run(pieces)
            ids = ids.tolist()
            last = int(piece_ends[-1] - (piece_ends[-2] if piece_ends.size > 1 else 0)) if piece_ends.size else 0
        else:
            ids, last = [], 0
        if last and self._all_space(ids[-last]):
            while last < len(ids) and self._all_space(ids[-last - 1]):
                last += 1
        if last:
            rest = self.decode_bytes(ids[-last:]) + data[valid:]
            del ids[-last:]
        else:
            rest = data[valid:]
        self._check_bytes(rest, len(data) - len(rest))
        buf = np.frombuffer(rest, dtype=np.uint8)
        one = Pieces(buf, np.zeros(1, np.int64), np.array([buf.size], np.int64), np.full(1, -1, np.int32),
                     np.array([0, 1], np.int64))
        tail, _ = self._run(one)
        return ids + tail.tolist()

    # tiktoken's own (private) name for it
    def _encode_bytes(self, data: bytes) -> list[int]:
        return self.encode_bytes(data)

    def _all_space(self, i: int) -> bool:
        t = self._tables
        a, b = int(t.tok_start[i]), int(t.tok_start[i + 1])
        return b > a and all(c in (32, 10, 9) for c in t.tok_bytes[a:b].tolist())

    def _check_bytes(self, data: bytes, offset: int) -> None:
        """A ValueError naming the first byte of ``data`` that is no token
        (a vocabulary may lack 0xC0, 0xC1 and 0xF5..0xFF, which UTF-8 text
        never holds)."""
        missing = getattr(self, "_missing_bytes", None)
        if missing is None:
            t = self._tables
            lengths = np.diff(t.tok_start)
            ones = np.flatnonzero(lengths == 1)
            missing = np.ones(256, dtype=bool)
            missing[t.tok_bytes[t.tok_start[ones]]] = False
            self._missing_bytes = missing
        if missing.any():
            arr = np.frombuffer(data, dtype=np.uint8)
            bad = np.flatnonzero(missing[arr])
            if bad.size:
                p = int(bad[0])
                raise ValueError(f"byte {arr[p]:#04x} at position {offset + p} is not a token of this vocabulary "
                                 "(it lacks the bytes that never occur in UTF-8 text)")

    # ------------------------------------------------------------ decoding
    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token (tiktoken's ``decode_tokens_bytes``).

        >>> import segkit
        >>> segkit.BPE.from_pretrained("gpt2").decode_tokens_bytes([31373, 995])
        [b'hello', b' world']
        """
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` and the character offset at which each
        token starts; a token that starts inside a character starts at that
        character (tiktoken's ``decode_with_offsets``: bytes that are not
        UTF-8 raise UnicodeDecodeError).

        >>> import segkit
        >>> segkit.BPE.from_pretrained("cl100k_base").decode_with_offsets([9080, 22656, 11, 1917])
        ('日本, world', [0, 1, 2, 3])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        n = 0
        for b in parts:
            cont = bool(b) and 0x80 <= b[0] < 0xC0
            offsets.append(max(0, n - cont))
            n += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list[str]:
        """:meth:`decode` of each id list (tiktoken's ``decode_batch``;
        ``num_threads`` is accepted for tiktoken's signature: decoding is a
        copy, one thread does it).

        >>> import segkit
        >>> segkit.BPE.from_pretrained("gpt2").decode_batch([[31373, 995], [50256]])
        ['hello world', '<|endoftext|>']
        """
        return [self.decode(ids, errors) for ids in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """:meth:`decode_bytes` of each id list (tiktoken's ``decode_bytes_batch``)."""
        return [self.decode_bytes(ids) for ids in batch]

    # ------------------------------------------------------------ the vocabulary
    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, in byte order (tiktoken's
        ``token_byte_values``: no special token).

        >>> import segkit
        >>> values = segkit.BPE.from_pretrained("gpt2").token_byte_values()
        >>> len(values), values[:2]
        (50256, [b'\\x00', b'\\x01'])
        """
        t = self._tables
        data = t.tok_bytes.tobytes()
        start = t.tok_start.tolist()
        return [data[start[i] : start[i + 1]] for i in t.lex.tolist()]

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (KeyError when there is none, as in tiktoken)."""
        specials = self.special_tokens
        if "<|endoftext|>" not in specials:
            raise UnknownTokenError("this vocabulary has no special token '<|endoftext|>'")
        return specials["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' strings (tiktoken's ``special_tokens_set``)."""
        return set(self.special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether id ``token`` is a special token (tiktoken's ``is_special_token``).

        >>> import segkit
        >>> enc = segkit.BPE.from_pretrained("cl100k_base")
        >>> enc.is_special_token(100257), enc.is_special_token(15339)
        (True, False)
        """
        if not isinstance(token, (int, np.integer)):
            raise TypeError(f"token must be an int id, found {type(token).__name__}")
        values = getattr(self, "_special_values", None)
        if values is None:
            values = self._special_values = frozenset(self.special_tokens.values())
        return int(token) in values

    @property
    def max_token_value(self) -> int:
        """The largest id (tiktoken's ``max_token_value``; ``n_vocab - 1``)."""
        return self._n_ids - 1
