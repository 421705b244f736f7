r"""Python ``str`` and ``bytes`` literals, read without ``eval``.

Vocabulary files such as RWKV's spell each token as a Python literal
(``'\n\n'``, ``b'\xe4\xbd'``, ``'你好'``).  :func:`parse_literal` reads
exactly those two literal types, as Python's grammar defines them, and
nothing else: no expression, no f-string, no concatenation.

* Prefixes: none, ``u``, ``r`` (str); ``b``, ``br``, ``rb`` (bytes), in
  either case.  Quotes: ``'``, ``"``, and each of them tripled.
* Escapes (not in raw literals): ``\\ \' \" \a \b \f \n \r \t \v``,
  ``\ooo`` (one to three octal digits), ``\xhh``, and in ``str`` only
  ``\uxxxx``, ``\Uxxxxxxxx`` and ``\N{name}``; a backslash before a newline
  joins lines; any other backslash is kept with the character after it.
  Octal escapes above ``\377``, which Python deprecates (3.12) and which
  older versions read in two ways, are rejected.
* A bytes literal holds ASCII source characters only; a single-quoted
  literal holds no newline.

Errors are :class:`LiteralError` (a ``ValueError``) saying what was
expected and what was found, with the column.

Examples
--------
>>> parse_literal(r"'a\tb' 3")
('a\tb', 6)
>>> parse_literal(r"b'\xe4\xbd'")[0]
b'\xe4\xbd'
>>> parse_literal("__import__('os')")
Traceback (most recent call last):
...
segkit.presets.maxmatch.literal.LiteralError: column 1: expected a str or bytes literal (a quote, after an optional prefix b, r, u, br or rb), found "__import__('os')"
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LiteralError", "parse_literal"]


class LiteralError(ValueError):
    """A string that is not a Python ``str`` or ``bytes`` literal."""


_PREFIXES = {"": (False, False), "u": (False, False), "r": (False, True), "b": (True, False), "br": (True, True),
             "rb": (True, True)}
_SIMPLE = {"\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
           "v": "\v", "\n": ""}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCT = frozenset("01234567")
_PREFIX_RE = re.compile(r"[A-Za-z]{0,2}(?=['\"])")


def _show(s: str, limit: int = 40) -> str:
    return repr(s if len(s) <= limit else s[:limit] + "...")


def parse_literal(line: str, pos: int = 0) -> tuple[str | bytes, int]:
    """Read the literal that starts at ``line[pos]``.

    Returns ``(value, end)``: the ``str`` or ``bytes`` it denotes and the
    index just past its closing quote.  Raises :class:`LiteralError`.
    """
    m = _PREFIX_RE.match(line, pos)
    prefix = m.group(0).lower() if m else None
    if prefix not in _PREFIXES:
        found = line[pos:]
        if prefix is not None and "f" in prefix:
            what = "an f-string"
        else:
            what = _show(found) if found else "the end of the line"
        raise LiteralError(
            f"column {pos + 1}: expected a str or bytes literal (a quote, after an optional prefix b, r, u, br or rb), "
            f"found {what}"
        )
    is_bytes, raw = _PREFIXES[prefix]
    q = m.end()
    quote = line[q : q + 3] if line.startswith(line[q] * 3, q) else line[q]
    start = q + len(quote)
    # Fast path: no backslash before the closing quote.
    close = line.find(quote, start)
    slash = line.find("\\", start, close if close >= 0 else len(line))
    if close >= 0 and slash < 0:
        body = line[start:close]
        if len(quote) == 1 and "\n" in body:
            raise LiteralError(f"column {pos + 1}: a single-quoted literal holds a newline at column "
                               f"{start + body.index(chr(10)) + 1}")
        if is_bytes:
            return _ascii_bytes(body, start), close + len(quote)
        return body, close + len(quote)
    return _slow(line, pos, start, quote, is_bytes, raw)


def _ascii_bytes(body: str, start: int) -> bytes:
    try:
        return body.encode("ascii")
    except UnicodeEncodeError as e:
        raise LiteralError(
            f"column {start + e.start + 1}: a bytes literal holds ASCII characters only, found {body[e.start]!r}"
        ) from None


def _slow(line: str, pos: int, start: int, quote: str, is_bytes: bool, raw: bool) -> tuple[str | bytes, int]:
    """The literal with escapes (or unterminated): one pass, character by character."""
    out: list[str] = []
    i = start
    n = len(line)
    while True:
        if i >= n:
            raise LiteralError(f"column {pos + 1}: the literal is not closed (expected {quote}, found the end of the line)")
        c = line[i]
        if line.startswith(quote, i):
            i += len(quote)
            break
        if c == "\n" and len(quote) == 1:
            raise LiteralError(f"column {pos + 1}: a single-quoted literal holds a newline at column {i + 1}")
        if is_bytes and ord(c) > 127:
            raise LiteralError(f"column {i + 1}: a bytes literal holds ASCII characters only, found {c!r}")
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise LiteralError(f"column {pos + 1}: the literal is not closed (it ends in a backslash)")
        e = line[i + 1]
        if is_bytes and ord(e) > 127:
            raise LiteralError(f"column {i + 2}: a bytes literal holds ASCII characters only, found {e!r}")
        if raw:
            # A backslash keeps the next character (a quote does not close).
            out.append(c + e)
            i += 2
            continue
        if e in _SIMPLE:
            out.append(_SIMPLE[e])
            i += 2
        elif e in _OCT:
            j = i + 1
            while j < n and j < i + 4 and line[j] in _OCT:
                j += 1
            value = int(line[i + 1 : j], 8)
            if value > 0o377:
                raise LiteralError(f"column {i + 1}: octal escape {line[i:j]!r} is above \\377")
            out.append(chr(value))
            i = j
        elif e == "x":
            out.append(chr(_hex(line, i, 2)))
            i += 4
        elif e in "uU" and not is_bytes:
            k = 4 if e == "u" else 8
            value = _hex(line, i, k)
            if value > 0x10FFFF:
                raise LiteralError(f"column {i + 1}: escape {line[i:i + 2 + k]!r} is above U+10FFFF")
            out.append(chr(value))
            i += 2 + k
        elif e == "N" and not is_bytes:
            end = line.find("}", i + 3) if line.startswith("{", i + 2) else -1
            name = line[i + 3 : end] if end >= 0 else ""
            try:
                ch = unicodedata.lookup(name) if name and name.strip() == name else ""
            except KeyError:
                ch = ""
            if len(ch) != 1:
                found = line[i : end + 1] if end >= 0 else line[i : i + 12]
                raise LiteralError(f"column {i + 1}: expected \\N{{name}} with a Unicode character name, found {found!r}")
            out.append(ch)
            i = end + 1
        else:
            out.append(c + e)  # not an escape: Python keeps the backslash
            i += 2
    text = "".join(out)
    if is_bytes:
        return text.encode("latin-1"), i  # every character is below 256 here
    return text, i


def _hex(line: str, i: int, k: int) -> int:
    digits = line[i + 2 : i + 2 + k]
    if len(digits) != k or not all(d in _HEX for d in digits):
        raise LiteralError(f"column {i + 1}: expected {k} hex digits after {line[i:i + 2]!r}, found {digits!r}")
    return int(digits, 16)
