"""Reading RWKV vocabulary files (``rwkv_vocab_v20230424.txt`` and any file
in its format).

One token a line: ``ID LITERAL LENGTH``, separated by single spaces, where
``ID`` is the token id (decimal), ``LITERAL`` a Python ``str`` literal (the
token is its UTF-8) or ``bytes`` literal, and ``LENGTH`` the token's length
in bytes::

    257 '\\t\\t' 2
    250 b'\\xf9' 1
    9804 '\\u2002' 3

The file is UTF-8; lines end in ``\\n`` (a ``\\r`` before it is dropped).
Literals are read by :func:`segkit.presets.maxmatch.literal.parse_literal`,
never evaluated.  Every line is checked: a line that is not of that form, a
literal whose bytes do not have the stated length, an empty token, an id
used twice or out of range is a :class:`segkit.VocabularyError` naming the
file, the line and what was found.  Two lines may hold the same bytes (the
reference tokenizer keeps the later one, which in a sorted file is the
higher id): the higher id is matched, the lower one still decodes, and a
warning says so.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

from ...models.vocabulary import VocabularyError, check_ids
from ...runtime.regular_files import read_regular
from .literal import LiteralError, parse_literal

__all__ = ["read_rwkv_vocab", "parse_rwkv_vocab", "DuplicateTokenWarning"]

_ID = re.compile(r"([0-9]+) ")
_LENGTH = re.compile(r" ([0-9]+)\Z")


class DuplicateTokenWarning(UserWarning):
    """Two ids of a vocabulary hold the same token; the higher id is matched."""


def read_rwkv_vocab(path: str | os.PathLike) -> tuple[list[bytes], list[int]]:
    """The tokens (bytes) and ids of an RWKV vocabulary file, in file order.

    Raises :class:`segkit.VocabularyError` naming the file and line of the
    first bad line; warns (:class:`DuplicateTokenWarning`) when two lines
    hold the same bytes.
    """
    path = Path(path)
    # a regular file only: a FIFO would block, a device would be read until
    # memory runs out (segkit.runtime.regular_files)
    raw = read_regular(path, "RWKV vocabulary", VocabularyError)
    return parse_rwkv_vocab(raw, str(path))


def parse_rwkv_vocab(raw: bytes, source: str = "<vocabulary>") -> tuple[list[bytes], list[int]]:
    """:func:`read_rwkv_vocab` on the file's bytes (``source`` names it in messages).

    Examples
    --------
    >>> parse_rwkv_vocab("1 'a' 1\\n2 b'\\\\xff' 1\\n3 '你' 3\\n".encode())
    ([b'a', b'\\xff', b'\\xe4\\xbd\\xa0'], [1, 2, 3])
    >>> try:
    ...     parse_rwkv_vocab(b"1 'ab' 3\\n", "v.txt")
    ... except ValueError as e:
    ...     print(e)
    v.txt: line 1: the literal 'ab' has 2 bytes, the line says 3: "1 'ab' 3"
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise VocabularyError(f"{source}: line {line}: not UTF-8 (byte {raw[e.start]:#04x} at column {col})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    tokens: list[bytes] = []
    ids: list[int] = []
    for n, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        tok, i = _parse_line(line, n, source)
        tokens.append(tok)
        ids.append(i)
    if not tokens:
        raise VocabularyError(f"{source}: no tokens (the file is empty)")
    _check(tokens, ids, source)
    return tokens, ids


def _parse_line(line: str, n: int, source: str) -> tuple[bytes, int]:
    def bad(what: str) -> VocabularyError:
        return VocabularyError(f"{source}: line {n}: {what}: {line!r:.120}")

    m = _ID.match(line)
    if m is None:
        if not line.strip():
            raise bad("an empty line, expected ID LITERAL LENGTH")
        raise bad("expected ID LITERAL LENGTH, starting with the id (decimal digits) and a space")
    try:
        value, end = parse_literal(line, m.end())
    except LiteralError as e:
        raise bad(f"bad literal ({e})") from None
    tail = _LENGTH.match(line, end)
    if tail is None:
        raise bad(f"expected a space and the length in bytes after the literal, found {line[end:]!r:.40}")
    if isinstance(value, str):
        try:
            value = value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise bad(f"the str literal holds a lone surrogate (character {e.start}), which has no UTF-8") from None
    if not value:
        raise bad("an empty token")
    length, token_id = tail.group(1), m.group(1)
    for what, digits in (("id", token_id), ("length", length)):
        if len(digits) > _MAX_DIGITS:  # (past 4,300 digits int() refuses, naming nothing)
            raise bad(f"the {what} {_shortened(digits)} is too large")
    if len(value) != int(length):
        raise bad(f"the literal {line[m.end():end]} has {len(value)} bytes, the line says {length}")
    return value, int(token_id)


#: Longest id or length read: anything longer is far beyond int32.
_MAX_DIGITS = 18


def _shortened(digits: str) -> str:
    return digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits):,} digits)"


def _check(tokens: list[bytes], ids: list[int], source: str) -> None:
    """Ids distinct and in range; warn about bytes held by two ids."""
    check_ids(ids, tokens, source)
    seen: dict[int, int] = {}
    for k, i in enumerate(ids):
        first = seen.setdefault(i, k)
        if first != k:
            raise VocabularyError(f"{source}: line {k + 1}: id {i} is used again (first on line {first + 1})")
    if len(set(tokens)) == len(tokens):
        return
    warn_duplicates(tokens, ids, source, lambda k: f"line {k + 1}")


def warn_duplicates(tokens: list, ids: list[int], source: str, where=lambda k: f"position {k}") -> None:
    """Warn (:class:`DuplicateTokenWarning`) that some tokens are held by
    several ids, naming the first; the higher id is matched."""
    first: dict = {}
    dups = 0
    example = None
    for k, t in enumerate(tokens):
        j = first.setdefault(t, k)
        if j != k:
            dups += 1
            if example is None:
                example = (t, j, k)
    if not dups:
        return
    t, j, k = example
    warnings.warn(
        f"{source}: {dups} token{'s' if dups > 1 else ''} appear{'' if dups > 1 else 's'} more than once; "
        f"the higher id is matched and every id still decodes (first: {t!r:.60} at {where(j)}, id {ids[j]}, "
        f"and {where(k)}, id {ids[k]})",
        DuplicateTokenWarning,
        stacklevel=3,
    )
