"""Decoding token by token, for generation: text comes out only once its
UTF-8 is complete.

A byte-level vocabulary cuts characters: RWKV World has tokens that are the
first two bytes of a three-byte character, others that are its last byte.
Decoding each token on its own gives replacement characters or errors;
:class:`StreamDecoder` keeps the bytes of an unfinished character until
the token that completes it arrives (Python's incremental UTF-8 decoder
does the bookkeeping).
"""

from __future__ import annotations

import codecs
from typing import Iterable


class StreamDecoder:
    """Turns ids into text as they are generated.

    Made by :meth:`segkit.MaxMatch.stream_decoder` (and so
    :meth:`segkit.RWKVWorld.stream_decoder`).  :meth:`step` takes one id and
    returns the text it completes (often ``""`` in the middle of a
    character); :meth:`flush` ends the stream.  ``errors`` is that of
    :meth:`bytes.decode`: ``"strict"`` raises ``UnicodeDecodeError`` on
    bytes that can never become UTF-8, ``"replace"`` makes them U+FFFD.

    Examples
    --------
    >>> import segkit
    >>> tok = segkit.MaxMatch([b"\\xe4", b"\\xbd", b"\\xa0", b"\\xe4\\xbd", b"ok"])
    >>> dec = tok.stream_decoder()
    >>> ids = tok.encode("你ok")
    >>> ids, tok.tokenize("你ok")
    ([3, 2, 4], [b'\\xe4\\xbd', b'\\xa0', b'ok'])
    >>> [dec.step(i) for i in ids]
    ['', '你', 'ok']
    >>> dec.step(3), dec.pending, dec.flush(errors="replace")
    ('', b'\\xe4\\xbd', '�')
    """

    __slots__ = ("_by_id", "_decoder", "_errors")

    def __init__(self, by_id: list, errors: str = "strict") -> None:
        self._by_id = by_id
        self._errors = errors
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def _bytes(self, i: int) -> bytes:
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise ValueError(f"expected a token id (a non-negative int), found {i!r:.40}")
        try:
            t = self._by_id[i]
        except IndexError:
            t = None
        if t is None:
            raise ValueError(f"id {i} has no token (the vocabulary has {len(self._by_id)} ids)")
        return t if isinstance(t, bytes) else t.encode("utf-8")

    def step(self, token_id: int) -> str:
        """The text completed by ``token_id`` (``""`` while a character is unfinished)."""
        return self._decoder.decode(self._bytes(int(token_id) if not isinstance(token_id, int) else token_id))

    def feed(self, ids: Iterable[int]) -> str:
        """:meth:`step` over several ids: the text they complete together."""
        return self._decoder.decode(b"".join(self._bytes(int(i)) for i in ids))

    @property
    def pending(self) -> bytes:
        """The bytes of the unfinished character, if any."""
        return self._decoder.getstate()[0]

    def flush(self, errors: str | None = None) -> str:
        """End the stream: bytes still pending are an incomplete character
        (``UnicodeDecodeError`` with ``errors="strict"``, U+FFFD with
        ``"replace"``).  The decoder is then empty and can be reused.
        ``errors``: for this call only (default: the decoder's)."""
        if errors is not None and errors != self._errors:
            pending = self.pending
            self.reset()
            return pending.decode("utf-8", errors)
        try:
            return self._decoder.decode(b"", final=True)
        finally:
            self._decoder.reset()

    def reset(self) -> None:
        """Drop pending bytes."""
        self._decoder.reset()
