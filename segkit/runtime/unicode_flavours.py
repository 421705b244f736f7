r"""Character classes as each reference library's regex engine sees them.

A pre-tokenization pattern means what its reference library's regex engine
makes of it, and the engines carry different Unicode tables:

* ``"onig"``: HuggingFace ``tokenizers`` (Oniguruma, through the ``onig``
  crate), the reference for tokenizer.json files (Split regexes, ByteLevel's
  GPT-2 regex);
* ``"rust"``: tiktoken (the Rust ``regex`` crate, through ``fancy-regex``),
  the reference for tiktoken files (and Mistral Tekken files, which
  ``mistral_common`` runs with tiktoken);
* ``"regex"``: the installed :mod:`regex` module (segkit's own models).

Both peers know an older Unicode than :mod:`regex`: 17,810 code points
:mod:`regex` 2026.11 assigns (letters such as U+0558 and U+3D000, digits
such as U+11DE0, symbols such as U+1F6D8) are unassigned (``Cn``) to them,
and U+0295 is ``Ll`` to them, ``Lo`` to :mod:`regex`.
What each peer matches was measured once, code point by code point, by
``tools/gen_unicode_flavours.py`` (run it again after upgrading
``tokenizers``, tiktoken or :mod:`regex`) and is stored as differences
from :mod:`regex` in ``unicode_flavours.json`` (package data, read on
first use; no peer library is imported at run time).  The stored model:

* ``unassigned``: code points the peer treats as unassigned; for every
  property (``\p{..}``, ``\s``, ``\w``, ``\d``, ``.``, negations) such a code
  point behaves as U+0378 (unassigned everywhere) does in :mod:`regex`;
  literal characters and ranges of a class still match it by code point,
  and it has no case;
* ``recategorized``: ``[cp, proxy]``: the peer sees ``cp`` as :mod:`regex`
  sees ``proxy`` (same general category and other properties);
* ``items``: what that leaves over, per measured class item (e.g. the
  peers' ``\w`` has no ``²`` and, for Oniguruma, no ZWJ), as ranges to flip;
* ``case_classes``: the peer's case-insensitive equivalence classes
  (``(?i:...)``); ``icase_properties`` (``_in_class``): whether
  ``(?i:...)`` also closes property items on their own (in a class): the
  Rust crate: both; Oniguruma: only in a class (``(?i:\p{Lu})`` is
  ``\p{Lu}``, ``(?i:[\p{Lu}])`` has the lower case letters too).

>>> import numpy as np
>>> m = atom_mask(r"\p{L}", False, "onig")
>>> bool(m[ord("a")]), bool(m[0x0558]), bool(atom_mask(r"\p{L}", False, "regex")[0x0558])
(True, False, True)
>>> bool(atom_mask(r"[^\s\p{L}\p{N}]", False, "onig")[0x0558])
True
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from .unicode import N_CODE_POINTS, scanned

__all__ = ["FLAVOURS", "atom_mask", "check_flavour", "remap", "substitute", "substitution", "table"]

#: The flavours: ``"regex"`` (the :mod:`regex` module), ``"onig"`` (HF
#: tokenizers' Oniguruma), ``"rust"`` (tiktoken's Rust regex crate).
FLAVOURS = ("regex", "onig", "rust")
DATA_PATH = Path(__file__).with_name("unicode_flavours.json")
#: Unassigned in every Unicode version: what the peers' unassigned code points behave as.
UNASSIGNED_PROXY = 0x0378


def check_flavour(flavour: str) -> str:
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour must be one of {', '.join(map(repr, FLAVOURS))}, found {flavour!r}")
    return flavour


def _mask_of(ranges) -> np.ndarray:
    mask = np.zeros(N_CODE_POINTS, dtype=bool)
    for a, b in ranges:
        mask[a : b + 1] = True
    return mask


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(DATA_PATH.read_text(encoding="utf-8"))


class _Table:
    """One peer's measured differences (see the module docstring)."""

    def __init__(self, name: str, spec: dict) -> None:
        self.name = name
        self.source = spec["source"]
        self.unassigned = _mask_of(spec["unassigned"])
        self.unassigned.setflags(write=False)
        rec = np.array(spec["recategorized"], dtype=np.int64).reshape(-1, 2)
        self.rec_from, self.rec_to = rec[:, 0], rec[:, 1]
        self.items = {k: np.concatenate([np.arange(a, b + 1) for a, b in v]) if v else np.zeros(0, np.int64)
                      for k, v in spec["items"].items()}
        classes = spec["case_classes"]
        self.case_cps = np.array([c for k in classes for c in k], dtype=np.int64)
        self.case_starts = np.cumsum([0] + [len(k) for k in classes[:-1]]).astype(np.int64)
        self.case_index = np.repeat(np.arange(len(classes)), [len(k) for k in classes])
        self.icase_properties = bool(spec["icase_properties"])
        self.icase_properties_in_class = bool(spec["icase_properties_in_class"])
        #: code points whose classes may differ from :mod:`regex`'s
        self.special = self.unassigned.copy()
        self.special[self.rec_from] = True
        for v in self.items.values():
            self.special[v] = True
        self.special[np.array(spec["icase_differs"], dtype=np.int64)] = True

    def close(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` closed under the peer's case folding (a class holding one
        member of a case class matches all of it)."""
        if not self.case_cps.size:
            return mask
        hit = np.logical_or.reduceat(mask[self.case_cps], self.case_starts)
        out = mask.copy()
        out[self.case_cps[hit[self.case_index]]] = True
        return out


@lru_cache(maxsize=None)
def table(flavour: str) -> _Table:
    """The measured differences of a peer flavour (``"onig"`` or ``"rust"``)."""
    check_flavour(flavour)
    if flavour == "regex":
        raise ValueError("the regex flavour is the regex module itself: it has no table of differences")
    return _Table(flavour, _data()[flavour])


def remap(values: np.ndarray, flavour: str) -> np.ndarray:
    """Per-code-point ``values`` (a :mod:`regex` property, or class codes)
    as the peer sees them: its unassigned code points take U+0378's value,
    its recategorized ones their proxy's."""
    if flavour == "regex":
        return values
    t = table(flavour)
    out = np.array(values, copy=True)
    out[t.unassigned] = values[UNASSIGNED_PROXY]
    out[t.rec_from] = values[t.rec_to]
    return out


# ------------------------------------------------------------------ class items
_PROPERTY_ESCAPES = {"s": r"\s", "S": r"\s", "d": r"\d", "D": r"\d", "w": r"\w", "W": r"\w"}
_CHAR_ESCAPES = {"r": "\r", "n": "\n", "t": "\t", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}


class _NotAClass(Exception):
    pass


def _item(text: str, i: int):
    """``(kind, value, next i)`` of the class item at ``text[i]``: kind
    ``"char"`` (value: the code point) or ``"prop"`` (value: ``(item,
    negated)``)."""
    c = text[i]
    if c != "\\":
        return "char", ord(c), i + 1
    if i + 1 >= len(text):
        raise _NotAClass
    e = text[i + 1]
    if e in "pP":
        if i + 2 < len(text) and text[i + 2] == "{":
            j = text.index("}", i + 3)
            body = text[i + 3 : j]
        else:
            j = i + 2
            body = text[j]
        negated = e == "P"
        if body.startswith("^"):
            body, negated = body[1:], not negated
        return "prop", (rf"\p{{{body}}}", negated), j + 1
    if e in _PROPERTY_ESCAPES:
        return "prop", (_PROPERTY_ESCAPES[e], e.isupper()), i + 2
    if e in _CHAR_ESCAPES:
        return "char", ord(_CHAR_ESCAPES[e]), i + 2
    if e == "x":
        if i + 2 < len(text) and text[i + 2] == "{":
            j = text.index("}", i + 3)
            return "char", int(text[i + 3 : j], 16), j + 1
        return "char", int(text[i + 2 : i + 4], 16), i + 4
    if e in "uU":
        n = 4 if e == "u" else 8
        return "char", int(text[i + 2 : i + 2 + n], 16), i + 2 + n
    if e.isalnum():
        raise _NotAClass
    return "char", ord(e), i + 2


def _parse(text: str):
    """``(in a class, negated, ranges, properties)`` of a one-character
    atom: a class ``[...]``, an escape, ``.`` or a literal; _NotAClass for
    anything else (nested or POSIX classes, set operations)."""
    if text == ".":
        return False, False, [], [(".", False)]
    if not text.startswith("["):
        kind, value, end = _item(text, 0)
        if end != len(text):
            raise _NotAClass
        return False, False, ([(value, value)] if kind == "char" else []), ([value] if kind == "prop" else [])
    body = text[1:-1]
    negated = body.startswith("^")
    i = 1 if negated else 0
    ranges: list[tuple[int, int]] = []
    props: list[tuple[str, bool]] = []
    first = True
    while i < len(body):
        if body[i] == "]" and first:
            kind, value, i = "char", ord("]"), i + 1
        elif body[i] == "[" or body.startswith("&&", i):
            raise _NotAClass
        else:
            kind, value, i = _item(body, i)
        first = False
        if kind == "prop":
            props.append(value)
            continue
        if i + 1 < len(body) and body[i] == "-" and body[i + 1] != "]":
            kind2, hi, i = _item(body, i + 1)
            if kind2 != "char":
                raise _NotAClass
            ranges.append((value, hi))
        else:
            ranges.append((value, value))
    return True, negated, ranges, props


def _item_mask(item: str, negated: bool, icase: bool, in_class: bool, t: _Table, cache: dict) -> np.ndarray:
    """One property item (Oniguruma's differ on their own and in a class:
    its ``[\\w]`` is not its ``\\w``, and ``(?i:...)`` closes a class's
    properties, not a lone one's)."""
    key = (item, negated, icase, in_class)
    got = cache.get(key)
    if got is None:
        base = remap(scanned(f"[{item}]" if in_class and item != "." else item), t.name)
        flips = t.items.get(f"[{item}]" if in_class else item)
        if flips is not None and flips.size:
            base[flips] ^= True
        if icase and (t.icase_properties_in_class if in_class else t.icase_properties):
            base = t.close(base)
        got = cache[key] = ~base if negated else base
    return got


def atom_mask(text: str, icase: bool, flavour: str, cache: dict | None = None) -> np.ndarray:
    """The code points the one-character atom ``text`` (a class ``[...]``,
    an escape such as ``\\p{L}`` or ``\\s``, ``.`` or a literal) matches in
    ``flavour``, inside ``(?i:...)`` when ``icase`` (bool array over all
    code points).  ``cache``: a dict shared by the atoms of one pattern."""
    check_flavour(flavour)
    if flavour == "regex":
        return scanned(f"(?i:{text})" if icase else text)
    t = table(flavour)
    cache = {} if cache is None else cache
    try:
        in_class, negated, ranges, props = _parse(text)
    except (_NotAClass, ValueError, IndexError):
        # Outside what is parsed here: the regex module's view, remapped.
        return remap(scanned(f"(?i:{text})" if icase else text), flavour)
    mask = np.zeros(N_CODE_POINTS, dtype=bool)
    for a, b in ranges:
        mask[a : b + 1] = True
    if icase and ranges:
        mask = t.close(mask)
    for item, neg in props:
        mask |= _item_mask(item, neg, icase, in_class, t, cache)
    return ~mask if negated else mask


def special(flavour: str) -> np.ndarray:
    """Code points whose classes may differ between ``flavour`` and :mod:`regex`."""
    return table(flavour).special


@lru_cache(maxsize=None)
def substitution(flavour: str) -> dict[int, int]:
    """``str.translate`` table giving each code point the one the
    :mod:`regex` module sees as the peer sees it (its unassigned code points
    become U+0378, its recategorized ones their proxy): the :mod:`regex`
    path's approximation of the peer (exact for properties; a literal of
    the pattern that is such a code point no longer matches)."""
    t = table(flavour)
    out = dict.fromkeys(np.flatnonzero(t.unassigned).tolist(), UNASSIGNED_PROXY)
    out.update(zip(t.rec_from.tolist(), t.rec_to.tolist()))
    return out


def substitute(text: str, flavour: str) -> str:
    """``text`` with :func:`substitution` applied (itself for ``"regex"``)."""
    if flavour == "regex":
        return text
    return text.translate(substitution(flavour))
