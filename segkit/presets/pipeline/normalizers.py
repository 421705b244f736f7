"""HF ``tokenizers``' normalizers, read from a tokenizer.json, over a
:class:`~.normalized.NormalizedText` (offsets kept as HF keeps them).

Read here: ``Sequence``, ``Prepend``, ``Replace`` (String or Regex),
``Lowercase``, ``Strip``, ``StripAccents``, ``NFC``, ``NFD``, ``NFKC``,
``NFKD``, ``BertNormalizer`` and ``Precompiled`` (SentencePiece's charsmap;
the last four with HF's alignments, :mod:`.unicode_forms`).  Any other
normalizer is refused by name when the file is read.

>>> norm = read_normalizer({"type": "Sequence", "normalizers": [
...     {"type": "Prepend", "prepend": "\\u2581"},
...     {"type": "Replace", "pattern": {"String": " "}, "content": "\\u2581"}]}, "tokenizer.json")
>>> t = NormalizedText.of("Hi there")
>>> norm(t)
>>> t.text
'\\u2581Hi\\u2581there'
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

from .normalized import Finder, NormalizedText

Normalizer = Callable[[NormalizedText], None]


def bad(source: str, where: str, what: str) -> ValueError:
    """The reader's error: the file, the JSON path, what was expected and found."""
    return ValueError(f"{source}: {where}: {what}")


def shown(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:80]
    except (TypeError, ValueError):
        return repr(value)[:80]


def read_steps(spec: dict, key: str, read: Callable, source: str, where: str) -> list:
    """The components a ``Sequence`` lists under ``key``, each read with
    ``read(part, source, where)`` (those that are None left out)."""
    parts = spec.get(key)
    if not isinstance(parts, list):
        raise bad(source, f"{where}.{key}", f"expected a list, found {shown(parts)}")
    steps = [read(p, source, f"{where}.{key}[{i}]") for i, p in enumerate(parts)]
    return [s for s in steps if s is not None]


def _string(spec: dict, key: str, source: str, where: str) -> str:
    v = spec.get(key)
    if not isinstance(v, str):
        raise bad(source, f"{where}.{key}", f"expected a string, found {shown(v)}")
    return v


def _bool(spec: dict, key: str, source: str, where: str, default: bool) -> bool:
    v = spec.get(key, default)
    if not isinstance(v, bool):
        raise bad(source, f"{where}.{key}", f"expected true or false, found {shown(v)}")
    return v


@lru_cache(maxsize=1)
def _rust_space() -> Callable[[str], bool]:
    """Rust's ``char::is_whitespace`` (Unicode ``White_Space``)."""
    from ..added_matches import spaces

    return spaces().__contains__


@lru_cache(maxsize=256)
def _compiled(pattern: str):
    import regex

    return regex.compile(pattern)


def literal_finder(s: str) -> Finder:
    """Every occurrence of ``s``, leftmost first, not overlapping (none when empty)."""
    def find(text: str) -> list:
        out = []
        if not s:
            return out
        i = text.find(s)
        while i >= 0:
            out.append((i, i + len(s)))
            i = text.find(s, i + len(s))
        return out

    return find


def regex_finder(pattern: str, flavour: str = "onig") -> Finder:
    """Every match of ``pattern`` (the ``regex`` module), leftmost first,
    with the character classes of ``flavour``
    (:mod:`segkit.runtime.unicode_flavours`): a tokenizer.json's patterns
    mean what HF tokenizers' Oniguruma makes of them, so ``"onig"``:
    ``regex`` runs on the text with each code point Oniguruma sees
    otherwise (one it does not know yet such as U+0558, or U+0295, a lower
    case letter to it) replaced by one ``regex`` sees as Oniguruma does (exact for properties; not for Oniguruma's
    own ``\\w``, which lacks ``²³¹¼½¾``, the compiled path's business).

    >>> regex_finder(r"\\p{L}+")("ab\\u0558cd"), regex_finder(r"\\p{L}+", "regex")("ab\\u0558cd")
    ([(0, 2), (3, 5)], [(0, 5)])
    """
    rx = _compiled(pattern)
    if flavour == "regex":
        return lambda text: [m.span() for m in rx.finditer(text)]
    from ...runtime.unicode_flavours import check_flavour, substitute

    check_flavour(flavour)
    return lambda text: [m.span() for m in rx.finditer(substitute(text, flavour))]


def read_pattern(spec: Any, source: str, where: str) -> tuple[Finder, str]:
    """``{"String": s}`` or ``{"Regex": r}`` as a :data:`Finder`, and its kind."""
    if isinstance(spec, dict) and len(spec) == 1:
        (kind, value), = spec.items()
        if kind == "String" and isinstance(value, str):
            return literal_finder(value), kind
        if kind == "Regex" and isinstance(value, str):
            import regex

            try:
                regex.compile(value)
            except regex.error as e:
                raise bad(source, f"{where}.Regex", f"not a valid regular expression: {e}") from None
            return regex_finder(value), kind
    raise bad(source, where, f'expected {{"String": ...}} or {{"Regex": ...}}, found {shown(spec)}')


def read_normalizer(spec: Any, source: str, where: str = "normalizer") -> Normalizer | None:
    """The normalizer a tokenizer.json's ``normalizer`` describes (None: none).

    Raises ValueError naming ``source``, the JSON path and the component
    for anything else.
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise bad(source, where, f"expected an object or null, found {shown(spec)}")
    kind = spec.get("type")
    if kind == "Sequence":
        steps = read_steps(spec, "normalizers", read_normalizer, source, where)

        def sequence(t: NormalizedText) -> None:
            for step in steps:
                step(t)

        return sequence
    if kind == "Prepend":
        s = _string(spec, "prepend", source, where)
        return lambda t: t.prepend(s)
    if kind == "Replace":
        find, _ = read_pattern(spec.get("pattern"), source, f"{where}.pattern")
        content = _string(spec, "content", source, where)
        return lambda t: t.replace(find, content)
    if kind == "Lowercase":
        return lambda t: t.map_chars(str.lower)
    if kind == "Strip":
        left = _bool(spec, "strip_left", source, where, True)
        right = _bool(spec, "strip_right", source, where, True)
        space = _rust_space()
        return lambda t: t.strip(left, right, space)
    if kind == "StripAccents":
        from .unicode_forms import is_combining_mark

        return lambda t: t.keep(lambda c: not is_combining_mark(c))
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        from .unicode_forms import nf_normalizer

        return nf_normalizer(kind)
    if kind == "BertNormalizer":
        from .unicode_forms import bert_normalizer

        sa = spec.get("strip_accents")
        if sa is not None and not isinstance(sa, bool):
            raise bad(source, f"{where}.strip_accents", f"expected true, false or null, found {shown(sa)}")
        return bert_normalizer(_bool(spec, "clean_text", source, where, True),
                               _bool(spec, "handle_chinese_chars", source, where, True), sa,
                               _bool(spec, "lowercase", source, where, True))
    if kind == "Precompiled":
        import base64
        import binascii

        from .unicode_forms import precompiled

        b64 = _string(spec, "precompiled_charsmap", source, where)
        try:
            blob = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError) as e:
            raise bad(source, f"{where}.precompiled_charsmap", f"expected base64, found {shown(b64)} ({e})") from None
        try:
            return precompiled(blob)
        except ValueError as e:
            raise bad(source, f"{where}.precompiled_charsmap", str(e)) from None
    raise bad(source, f"{where}.type", f"this pipeline runs the normalizers Sequence, Prepend, Replace, Lowercase, "
              f"Strip, StripAccents, NFC, NFD, NFKC, NFKD, BertNormalizer and Precompiled; found {shown(kind)}")
