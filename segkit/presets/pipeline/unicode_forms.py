"""HF ``tokenizers``' Unicode normalizers over a
:class:`~.normalized.NormalizedText`: NFC, NFD, NFKC, NFKD, ``BertNormalizer``
and ``Precompiled`` (SentencePiece's charsmap), with HF's alignments.

HF computes the normalization forms with the Rust crate
``unicode-normalization-alignments`` (0.1.12), which yields every character
of the result with a ``change`` for ``NormalizedString::transform``:

* decomposition (NFD, NFKD): the first character of a character's full
  decomposition replaces it (``0``), the others are new (``1``); then each
  run of non-starters is sorted by canonical combining class (stable), and
  the changes move with their characters, so a reordered mark takes the span
  of the position it lands on, not of the character it came from;
* composition (NFC, NFKC): a character composed with a following one gets
  ``change(first) + change(second) - 1``; characters left between them
  (blocked or not composing) come after the composite.

>>> from segkit.presets.pipeline.normalized import NormalizedText
>>> nf_items("e\\u0301", "NFC")
[('\\xe9', -1)]
>>> t = NormalizedText.of("e\\u0301\\u0316x")
>>> t.transform(nf_items(t.text, "NFC"))
>>> t.text, list(zip(t.starts, t.ends))
('\\xe9\\u0316x', [(0, 1), (2, 3), (3, 4)])

(The acute's own span, 1:2, is lost there, as in HF.)

Unicode versions.  The decompositions, combining classes and compositions
come from Python's :mod:`unicodedata` (Unicode 14.0.0 on Python 3.11), but HF
does not use one Unicode version: the normalization crate has Unicode 9.0.0
tables, ``unicode_categories`` 0.1.1 (BertNormalizer's control characters and
non-spacing marks) Unicode 8.0.0, and Rust's ``char`` (white space,
lowercase) a recent one.  The few characters whose properties differ between
Python's version and HF's are listed below (found by comparing Python 3.11's
data with the crates' tables, checked over every code point against HF by
``tests/test_hf_normalizers.py``), so that the results are HF's for every
code point on Python 3.11.  On a Python with a newer Unicode, characters
assigned after 14.0 get Python's properties, which HF may not give them.
Lowercasing is Python's ``str.lower`` per character: Rust lowercases 55
characters that Unicode 14.0 does not assign (Unicode 16 and later).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from operator import itemgetter
from typing import Callable

from .normalized import NormalizedText

FORMS = ("NFC", "NFD", "NFKC", "NFKD")

#: Characters Python's unicodedata (14.0) gives a decomposition or a
#: combining class but the normalization crate (9.0) does not know: all were
#: assigned after Unicode 9.0.  HF leaves them alone (starters, no mapping).
_NF_AFTER_9 = """
7FD 898-89F 8CA-8D3 9FE C3C D3B-D3C EBA 1715 1ABF-1ACE 1DF6-1DFA 32FF A7F2-A7F4 A82C AB69
10781-10785 10787-107B0 107B2-107BA 10D24-10D27 10EAB-10EAC 10F46-10F50 10F82-10F85 11070 1133B
1145E 11839-1183A 11938 1193D-1193E 11943 119E0 11A34 11A47 11A99 11D42 11D44-11D45 11D97
16FF0-16FF1 1E130-1E136 1E2AE 1E2EC-1E2EF 1F16C 1FBF0-1FBF9
"""

#: Characters whose "non-spacing mark" (Mn) differs between Python's data
#: and ``unicode_categories`` 0.1.1 (Unicode 8.0): Mn assigned after 8.0,
#: and U+1734 (Mn in 8.0, Mc since).
_MN_FLIP_8 = """
7FD 898-89F 8CA-8E1 9FE AFA-AFF B55 C04 C3C D00 D3B-D3C D81 EBA 1734 180F 1885-1886 1ABF-1ACE
1DF6-1DFB A82C A8C5 A8FF A9BD 10D24-10D27 10EAB-10EAC 10F46-10F50 10F82-10F85 11070 11073-11074
110C2 111C9 111CF 1123E 1133B 11438-1143F 11442-11444 11446 1145E 1182F-11837 11839-1183A
1193B-1193C 1193E 11943 119D4-119D7 119DA-119DB 119E0 11A01-11A0A 11A33-11A38 11A3B-11A3E 11A47
11A51-11A56 11A59-11A5B 11A8A-11A96 11A98-11A99 11C30-11C36 11C38-11C3D 11C3F 11C92-11CA7
11CAA-11CB0 11CB2-11CB3 11CB5-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D90-11D91
11D95 11D97 11EF3-11EF4 16F4F 16FE4 1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021
1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E944-1E94A
"""

#: Format characters (Cf) assigned after Unicode 8.0: not "other" for
#: ``unicode_categories`` 0.1.1, so BertNormalizer keeps them.
_CF_AFTER_8 = "890-891 8E2 110CD 13430-13438"

#: Characters whose "mark" (M) differs between Python's data and the
#: normalization crate's (9.0): marks assigned after 9.0, and U+1CF2-U+1CF3
#: (Mc in 9.0, Lo since).  HF's ``StripAccents`` removes the crate's marks.
_MARK_FLIP_9 = """
7FD 898-89F 8CA-8D3 9FE AFA-AFF B55 C04 C3C D00 D3B-D3C D81 EBA 1715 180F 1ABF-1ACE 1CF2-1CF3
1CF7 1DF6-1DFA A82C A8FF 10D24-10D27 10EAB-10EAC 10F46-10F50 10F82-10F85 11070 11073-11074 110C2
11145-11146 111C9 111CE-111CF 1133B 1145E 1182C-1183A 11930-11935 11937-11938 1193B-1193E 11940
11942-11943 119D1-119D7 119DA-119E0 119E4 11A01-11A0A 11A33-11A39 11A3B-11A3E 11A47 11A51-11A5B
11A8A-11A99 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D8A-11D8E 11D90-11D91 11D93-11D97
11EF3-11EF6 16F4F 16F7F-16F87 16FE4 16FF0-16FF1 1CF00-1CF2D 1CF30-1CF46 1E130-1E136 1E2AE
1E2EC-1E2EF
"""

# Hangul (Unicode's "Conjoining Jamo Behavior")
_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT


def _code_points(spec: str) -> frozenset:
    """The characters of ``"7FD 898-89F ..."`` (hex, ranges inclusive)."""
    out: set[str] = set()
    for part in spec.split():
        a, _, b = part.partition("-")
        out.update(map(chr, range(int(a, 16), int(b or a, 16) + 1)))
    return frozenset(out)


@lru_cache(maxsize=None)
def _flips(name: str) -> frozenset:
    return _code_points(globals()[name])


def _ccc(c: str) -> int:
    """The canonical combining class HF's crate gives ``c``."""
    k = unicodedata.combining(c)
    if k and c in _flips("_NF_AFTER_9"):
        return 0
    return k


_DECOMPOSED: tuple[dict, dict] = ({}, {})


def _full(c: str, compat: bool) -> str:
    """The full (recursive) decomposition of ``c``, not reordered, as the
    crate's tables hold it (Hangul syllables inside are left alone)."""
    spec = unicodedata.decomposition(c)
    if not spec or c in _flips("_NF_AFTER_9"):
        return c
    parts = spec.split()
    if parts[0].startswith("<"):
        if not compat:
            return c
        parts = parts[1:]
    return "".join(_full(chr(int(p, 16)), compat) for p in parts)


def _decomposed(c: str, compat: bool) -> str:
    cache = _DECOMPOSED[compat]
    d = cache.get(c)
    if d is None:
        o = ord(c)
        if _S_BASE <= o < _S_BASE + _S_COUNT:
            i = o - _S_BASE
            d = chr(_L_BASE + i // _N_COUNT) + chr(_V_BASE + i % _N_COUNT // _T_COUNT)
            if i % _T_COUNT:
                d += chr(_T_BASE + i % _T_COUNT)
        else:
            d = _full(c, compat)
        cache[c] = d
    return d


@lru_cache(maxsize=1)
def _compositions() -> dict:
    """``(first, second) -> composite`` for the primary composites (the
    canonical pairs that are not excluded from composition)."""
    table = {}
    new = _flips("_NF_AFTER_9")
    for o in range(0x80, 0x110000):
        c = chr(o)
        spec = unicodedata.decomposition(c)
        if not spec or spec[0] == "<" or c in new:
            continue
        parts = spec.split()
        if len(parts) == 2 and unicodedata.normalize("NFC", c) == c:
            table[chr(int(parts[0], 16)), chr(int(parts[1], 16))] = c
    return table


def _compose(a: str, b: str, table: dict) -> str | None:
    ia, ib = ord(a), ord(b)
    if _L_BASE <= ia < _L_BASE + _L_COUNT and _V_BASE <= ib < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((ia - _L_BASE) * _V_COUNT + ib - _V_BASE) * _T_COUNT)
    if (_S_BASE <= ia < _S_BASE + _S_COUNT and (ia - _S_BASE) % _T_COUNT == 0
            and _T_BASE < ib < _T_BASE + _T_COUNT):
        return chr(ia + ib - _T_BASE)
    return table.get((a, b))


def _decompose(text: str, compat: bool) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    run: list[tuple[int, str, int]] = []  # non-starters waiting to be sorted
    for c in text:
        if c < "\x80":
            if run:
                run.sort(key=itemgetter(0))
                out.extend((x, ch) for _, x, ch in run)
                run = []
            out.append((c, 0))
            continue
        for i, x in enumerate(_decomposed(c, compat)):
            k = _ccc(x)
            if k:
                run.append((k, x, int(i > 0)))
                continue
            if run:
                run.sort(key=itemgetter(0))
                out.extend((y, ch) for _, y, ch in run)
                run = []
            out.append((x, int(i > 0)))
    if run:
        run.sort(key=itemgetter(0))
        out.extend((y, ch) for _, y, ch in run)
    return out


def _recompose(items: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Canonical composition of decomposed ``items``, in the order and with
    the changes the crate's ``Recompositions`` gives."""
    table = _compositions()
    out: list[tuple[str, int]] = []
    starter: tuple[str, int] | None = None   # the character being composed into
    held: list[tuple[str, int]] = []         # non-starters after it, not composed
    last = 0                                  # the class of the last held one (0: none)
    for c, ch in items:
        k = _ccc(c)
        if starter is None:
            if k:
                out.append((c, ch))
            else:
                starter = (c, ch)
            continue
        if held and last >= k:
            # blocked from the starter
            if k == 0:
                out.append(starter)
                out.extend(held)
                held = []
                last = 0
                starter = (c, ch)
            else:
                held.append((c, ch))
                last = k
            continue
        r = _compose(starter[0], c, table)
        if r is not None:
            starter = (r, starter[1] + ch - 1)
        elif k == 0:
            # not held: nothing is between the starter and c
            out.append(starter)
            starter = (c, ch)
        else:
            held.append((c, ch))
            last = k
    if starter is not None:
        out.append(starter)
    out.extend(held)
    return out


def nf_items(text: str, form: str) -> list[tuple[str, int]]:
    """The ``(char, change)`` items HF's normalizer ``form`` feeds to
    ``NormalizedString::transform`` for ``text``.

    Parameters
    ----------
    text
        The text to normalize (all of it: HF normalizes the whole string).
    form
        ``"NFC"``, ``"NFD"``, ``"NFKC"`` or ``"NFKD"``.

    Returns
    -------
    list of (str, int)
        Each character of the normalized text with its change (``1`` new,
        ``0`` replaces the next old character, ``-n`` also removes the ``n``
        after it), for :meth:`~.normalized.NormalizedText.transform`.

    Examples
    --------
    >>> nf_items("\\ufb01\\u00e9", "NFKD")
    [('f', 0), ('i', 1), ('e', 0), ('\\u0301', 1)]
    >>> nf_items("\\u1100\\u1161\\u11a8", "NFC")
    [('\\uac01', -2)]
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, found {form!r:.60}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, found {type(text).__name__}")
    items = _decompose(text, form[2] == "K")
    return _recompose(items) if form[-1] == "C" else items


def nf_normalizer(form: str) -> Callable[[NormalizedText], None]:
    """HF's normalizer ``NFC``, ``NFD``, ``NFKC`` or ``NFKD``.

    >>> t = NormalizedText.of("\\u2460x")
    >>> nf_normalizer("NFKC")(t)
    >>> t.text
    '1x'
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, found {form!r:.60}")
    return lambda t: t.transform(nf_items(t.text, form))


def is_combining_mark(c: str) -> bool:
    """Whether HF's ``StripAccents`` removes ``c``: General_Category Mark in
    the normalization crate's Unicode 9.0 (see the module documentation).

    >>> is_combining_mark("\\u0301"), is_combining_mark("a"), is_combining_mark("\\u1ac0")
    (True, False, False)
    """
    return (unicodedata.category(c)[0] == "M") != (c in _flips("_MARK_FLIP_9"))


# ------------------------------------------------------------ BertNormalizer
def _is_control(c: str) -> bool:
    """BertNormalizer's control characters: ``unicode_categories``' "other"
    (Cc, Cf, Co in Unicode 8.0) but tab, newline and carriage return."""
    if c in "\t\n\r":
        return False
    return unicodedata.category(c) in ("Cc", "Cf", "Co") and c not in _flips("_CF_AFTER_8")


def _is_nonspacing(c: str) -> bool:
    """``unicode_categories``' Mn (Unicode 8.0)."""
    return (unicodedata.category(c) == "Mn") != (c in _flips("_MN_FLIP_8"))


def is_chinese_char(c: str) -> bool:
    """BertNormalizer's "Chinese character" (the CJK ideograph blocks it lists).

    >>> is_chinese_char("\\u4e2d"), is_chinese_char("\\u3042")
    (True, False)
    """
    o = ord(c)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF
            or 0x2A700 <= o <= 0x2B73F or 0x2B740 <= o <= 0x2B81F or 0x2B920 <= o <= 0x2CEAF
            or 0xF900 <= o <= 0xFAFF or 0x2F800 <= o <= 0x2FA1F)


def _flag(value: object, name: str, none_ok: bool = False) -> None:
    if not isinstance(value, bool) and not (none_ok and value is None):
        expected = "true, false or None" if none_ok else "true or false"
        raise TypeError(f"BertNormalizer {name}: expected {expected}, found {value!r:.60}")


def bert_normalizer(clean_text: bool = True, handle_chinese_chars: bool = True,
                    strip_accents: bool | None = None,
                    lowercase: bool = True) -> Callable[[NormalizedText], None]:
    """HF's ``BertNormalizer``.

    Parameters
    ----------
    clean_text
        Remove NUL, U+FFFD and control characters (Cc, Cf, Co; not tab,
        newline, carriage return), then turn white space into ``" "``.
    handle_chinese_chars
        Put a space on each side of every CJK ideograph (the spaces take its
        span).
    strip_accents
        NFD, then remove the non-spacing marks (Mn); None: as ``lowercase``.
    lowercase
        Lowercase each character.

    Returns
    -------
    callable
        ``NormalizedText -> None``, changing the text in place.

    Examples
    --------
    >>> t = NormalizedText.of("H\\u00e9\\u4e2d\\tX")
    >>> bert_normalizer()(t)
    >>> t.text, list(zip(t.starts, t.ends))[:3]
    ('he \\u4e2d  x', [(0, 1), (1, 2), (2, 3)])
    """
    _flag(clean_text, "clean_text")
    _flag(handle_chinese_chars, "handle_chinese_chars")
    _flag(strip_accents, "strip_accents", none_ok=True)
    _flag(lowercase, "lowercase")
    strip = lowercase if strip_accents is None else strip_accents
    space = _white_space()

    def normalize(t: NormalizedText) -> None:
        if clean_text:
            t.keep(lambda c: not (c == "\0" or c == "\ufffd" or _is_control(c)))
            t.map_chars(lambda c: " " if c in space else c)
        if handle_chinese_chars and any(map(is_chinese_char, t.text)):
            items: list[tuple[str, int]] = []
            for c in t.text:
                if is_chinese_char(c):
                    items += ((" ", 0), (c, 1), (" ", 1))
                else:
                    items.append((c, 0))
            t.transform(items)
        if strip:
            t.transform(nf_items(t.text, "NFD"))
            t.keep(lambda c: not _is_nonspacing(c))
        if lowercase:
            t.map_chars(str.lower)

    return normalize


@lru_cache(maxsize=1)
def _white_space() -> frozenset:
    """BertNormalizer's white space: Rust's ``char::is_whitespace``
    (Unicode White_Space, which holds tab, newline and carriage return)."""
    from ..added_matches import spaces

    return spaces()


# ------------------------------------------------------------- Precompiled
def _graphemes():
    import regex

    return regex.compile(r"\X").findall


def precompiled(charsmap: bytes) -> Callable[[NormalizedText], None]:
    """HF's ``Precompiled`` normalizer: a SentencePiece charsmap applied as
    HF applies it (not as SentencePiece does).

    For each extended grapheme cluster (``regex``'s ``\\X``): when it is
    under 6 bytes of UTF-8 and some prefix of it is a rule, the SHORTEST
    such rule replaces the WHOLE cluster (``"\\ufb01\\u0301"`` becomes
    ``"fi"``: the accent is lost); otherwise each character that is a rule
    is replaced.  The new characters take the old ones' spans in order; extra
    new characters are new (the span of the one before); fewer new characters
    remove the rest after the last one, or, when a replacement is empty,
    after the last character already produced, so that a rule removing the
    text's first characters shifts the spans of those after (``"\\x1eab"``:
    ``a`` gets the span of ``\\x1e``, as in HF).

    Parameters
    ----------
    charsmap
        The ``precompiled_charsmap`` bytes (a tokenizer.json carries them
        base64-encoded).

    Raises
    ------
    ValueError
        For an empty or malformed charsmap (HF refuses those too).

    Examples
    --------
    >>> precompiled(b"")
    Traceback (most recent call last):
    ...
    ValueError: Precompiled precompiled_charsmap: expected a charsmap, found none (0 bytes; HF cannot parse an empty one either)
    """
    from .charsmap import read_charsmap

    if not isinstance(charsmap, (bytes, bytearray, memoryview)):
        raise TypeError(f"Precompiled precompiled_charsmap: expected bytes, found {type(charsmap).__name__}")
    charsmap = bytes(charsmap)
    if not charsmap:
        raise ValueError("Precompiled precompiled_charsmap: expected a charsmap, found none (0 bytes; "
                         "HF cannot parse an empty one either)")
    units_np, strings_np = read_charsmap(charsmap, "Precompiled", "precompiled_charsmap")
    units = units_np.tolist()
    strings = strings_np.tobytes()
    n = len(units)

    def offset(u: int) -> int:
        return (u >> 10) << ((u & 512) >> 6)

    root = offset(units[0]) if n else 0

    @lru_cache(maxsize=1 << 16)
    def rule(chunk: str) -> str | None:
        """The replacement of the shortest rule that is a prefix of ``chunk``
        (spm_precompiled's ``transform``), or None."""
        node = root
        for b in chunk.encode("utf-8", "surrogatepass"):
            if b == 0:
                return None
            node ^= b
            if node >= n:
                return None
            u = units[node]
            if u & 0x800000FF != b:
                return None
            node ^= offset(u)
            if (u >> 8) & 1:
                if node >= n:
                    return None
                at = units[node] & 0x7FFFFFFF
                end = strings.find(b"\0", at)
                return strings[at:end if end >= 0 else len(strings)].decode("utf-8")
        return None

    graphemes = _graphemes()

    def normalize(t: NormalizedText) -> None:
        items: list[tuple[str, int]] = []
        modified = False
        for g in graphemes(t.text):
            if len(g) < 6 and len(g.encode("utf-8", "surrogatepass")) < 6:
                new = rule(g)
                if new is not None:
                    modified = True
                    _replace(items, len(g), new)
                    continue
            for c in g:
                new = rule(c)
                if new is None:
                    items.append((c, 0))
                else:
                    modified = True
                    _replace(items, 1, new)
        if modified:
            t.transform(items)

    return normalize


def _replace(items: list[tuple[str, int]], old: int, new: str) -> None:
    """Add the items replacing ``old`` characters by ``new`` (HF's
    ``precompiled::replace``)."""
    items.extend((c, 0) for c in new)
    diff = len(new) - old
    if diff > 0:
        for i in range(len(items) - diff, len(items)):
            items[i] = (items[i][0], 1)
    elif diff < 0 and items:
        c, change = items[-1]
        items[-1] = (c, change + diff)
