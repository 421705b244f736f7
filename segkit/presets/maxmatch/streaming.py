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

import numpy as np


def check_errors(errors: object) -> str:
    """``errors`` if it names an error handler of :meth:`bytes.decode`
    (``"strict"``, ``"replace"``, ``"ignore"``, ...), else ValueError: Python
    looks the handler up only at the first undecodable byte, so a wrong name
    would pass unnoticed until then."""
    if errors in ("strict", "replace"):
        return errors
    if not isinstance(errors, str):
        raise TypeError(f"errors must be a str naming an error handler of bytes.decode, found "
                        f"{type(errors).__name__} {errors!r:.40}")
    try:
        codecs.lookup_error(errors)
    except (LookupError, UnicodeError, ValueError):  # (a lone surrogate or a NUL in the name: not one either)
        raise ValueError(f"errors must name an error handler of bytes.decode ('strict', 'replace', 'ignore', "
                         f"'backslashreplace', ...), found {errors!r:.40}") from None
    return errors


def id_range(by_id: list) -> str:
    """Which ids have a token, for messages: ``"ids with a token are 1..65529"``
    (with the count when some ids in between have none)."""
    have = [i for i, t in enumerate(by_id) if t is not None]
    if not have:
        return "no id has a token"
    lo, hi = have[0], have[-1]
    if len(have) == hi - lo + 1:
        return f"ids with a token are {lo}..{hi}"
    return f"{len(have)} ids between {lo} and {hi} have a token"


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
        self._errors = check_errors(errors)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    def _bytes(self, i: object) -> bytes:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"expected a token id (an int), found {type(i).__name__} {i!r:.40}")
        t = self._by_id[i] if 0 <= i < len(self._by_id) else None
        if t is None:
            raise ValueError(f"id {i} has no token ({id_range(self._by_id)})")
        return t if isinstance(t, bytes) else t.encode("utf-8")

    def step(self, token_id: int) -> str:
        """The text completed by ``token_id`` (``""`` while a character is
        unfinished); an id that is not an int is a TypeError, one with no
        token a ValueError, as in ``decode``."""
        return self._decoder.decode(self._bytes(token_id))

    def feed(self, ids: Iterable[int]) -> str:
        """:meth:`step` over several ids: the text they complete together."""
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError(f"expected a sequence of token ids, found {type(ids).__name__} {ids!r:.40}")
        return self._decoder.decode(b"".join([self._bytes(i) for i in ids]))

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
            check_errors(errors)
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
