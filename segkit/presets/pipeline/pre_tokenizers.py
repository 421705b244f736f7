"""HF ``tokenizers``' pre-tokenizers, read from a tokenizer.json, over
:class:`~.normalized.NormalizedText` parts.

Read here: ``Sequence``, ``Metaspace`` (``replacement``,
``prepend_scheme``, ``split``), ``ByteLevel`` (``add_prefix_space``,
``use_regex``), ``Split`` (String or Regex, every behavior,
``invert``), ``Whitespace``, ``WhitespaceSplit``, ``Punctuation``,
``Digits``, ``BertPreTokenizer``, ``CharDelimiterSplit`` and
``UnicodeScripts`` (its script table measured from HF into
``hf_scripts.json``, see :func:`script_classes`).  A pre-tokenizer turns
one part into the parts the model sees (empty ones left out), in order.

>>> pre = read_pre_tokenizer({"type": "Metaspace", "replacement": "\\u2581",
...                           "prepend_scheme": "first", "split": True}, "tokenizer.json")
>>> [p.text for p in pre(NormalizedText.of("Hey  you"))]
['\\u2581Hey', '\\u2581', '\\u2581you']
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .normalized import BEHAVIORS, NormalizedText, with_gaps
from .normalizers import bad, read_pattern, read_steps, shown

PreTokenizer = Callable[[NormalizedText], list]

_BEHAVIOR_NAMES = {"Removed": "removed", "Isolated": "isolated", "MergedWithPrevious": "merged_with_previous",
                   "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}


def _behavior(value: Any) -> str | None:
    """A Split behavior's name as :meth:`NormalizedText.split` takes it, or None."""
    return _BEHAVIOR_NAMES.get(value) if isinstance(value, str) else None


@lru_cache(maxsize=None)
def _mask(name: str) -> np.ndarray:
    from ...runtime import unicode

    if name == "space":
        return unicode.white_space()
    if name == "punct":  # Rust: is_ascii_punctuation || unicode punctuation (P*)
        m = unicode.property_mask(r"\p{P}").copy()
        for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
            m[ord(c)] = True
        return m
    if name == "numeric":  # Rust's char::is_numeric: Nd, Nl, No
        return unicode.property_mask(r"\p{N}")
    raise KeyError(name)


def _char_matches(mask: np.ndarray) -> Callable[[str], list]:
    """Each character in ``mask`` as a match of its own."""
    def find(text: str) -> list:
        return [(i, i + 1) for i, c in enumerate(text) if mask[ord(c)]]

    return find


@lru_cache(maxsize=1)
def _words():
    """HF's ``Whitespace`` pattern ``\\w+|[^\\w\\s]+`` with Rust's ``\\w`` and ``\\s``."""
    import regex

    w = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
    return regex.compile(rf"[{w}]+|[^{w}\p{{White_Space}}]+")


def read_pre_tokenizer(spec: Any, source: str, where: str = "pre_tokenizer") -> PreTokenizer | None:
    """The pre-tokenizer a tokenizer.json's ``pre_tokenizer`` describes
    (None: none).  Raises ValueError naming ``source``, the JSON path and
    the component for anything else."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise bad(source, where, f"expected an object or null, found {shown(spec)}")
    kind = spec.get("type")
    if kind == "Sequence":
        steps = read_steps(spec, "pretokenizers", read_pre_tokenizer, source, where)

        def sequence(t: NormalizedText) -> list:
            parts = [t]
            for step in steps:
                parts = [q for p in parts for q in step(p)]
            return parts

        return sequence
    if kind == "Metaspace":
        return _metaspace(spec, source, where)
    if kind == "ByteLevel":
        flags = {}
        for key in ("add_prefix_space", "use_regex", "trim_offsets"):
            v = spec.get(key, True)
            if not isinstance(v, bool):
                raise bad(source, f"{where}.{key}", f"expected true or false, found {shown(v)}")
            flags[key] = v
        return byte_level(flags["add_prefix_space"], flags["use_regex"])
    if kind == "Split":
        find, _ = read_pattern(spec.get("pattern"), source, f"{where}.pattern")
        behavior = _behavior(spec.get("behavior"))
        if behavior is None:
            raise bad(source, f"{where}.behavior", f"expected one of {', '.join(_BEHAVIOR_NAMES)}, found "
                      f"{shown(spec.get('behavior'))}")
        invert = spec.get("invert", False)
        if not isinstance(invert, bool):
            raise bad(source, f"{where}.invert", f"expected true or false, found {shown(invert)}")
        return lambda t: t.split(find(t.text), behavior, invert)
    if kind == "Whitespace":
        words = _words()
        return lambda t: t.split([m.span() for m in words.finditer(t.text)], "removed", True)
    if kind == "WhitespaceSplit":
        space = _char_matches(_mask("space"))
        return lambda t: t.split(space(t.text), "removed")
    if kind == "BertPreTokenizer":
        space = _char_matches(_mask("space"))
        punct = _char_matches(_mask("punct"))
        return lambda t: [q for p in t.split(space(t.text), "removed") for q in p.split(punct(p.text), "isolated")]
    if kind == "Punctuation":
        behavior = _behavior(spec.get("behavior", "Isolated"))
        if behavior is None:
            raise bad(source, f"{where}.behavior", f"expected one of {', '.join(_BEHAVIOR_NAMES)}, found "
                      f"{shown(spec.get('behavior'))}")
        punct = _char_matches(_mask("punct"))
        return lambda t: t.split(punct(t.text), behavior)
    if kind == "Digits":
        individual = spec.get("individual_digits", False)
        if not isinstance(individual, bool):
            raise bad(source, f"{where}.individual_digits", f"expected true or false, found {shown(individual)}")
        numeric = _char_matches(_mask("numeric"))
        behavior = "isolated" if individual else "contiguous"
        return lambda t: t.split(numeric(t.text), behavior)
    if kind == "CharDelimiterSplit":
        d = spec.get("delimiter")
        if not isinstance(d, str) or len(d) != 1:
            raise bad(source, f"{where}.delimiter", f"expected one character, found {shown(d)}")
        return lambda t: t.split([(i, i + 1) for i, c in enumerate(t.text) if c == d], "removed")
    if kind == "UnicodeScripts":
        script_classes()  # (the table, read once: now, where a file uses it)
        return unicode_scripts
    raise bad(source, f"{where}.type", "this pipeline runs the pre-tokenizers Sequence, Metaspace, ByteLevel, Split, "
              "Whitespace, WhitespaceSplit, Punctuation, Digits, BertPreTokenizer, CharDelimiterSplit and "
              f"UnicodeScripts; found {shown(kind)}")


_SCRIPTS = Path(__file__).with_name("hf_scripts.json")


@lru_cache(maxsize=1)
def script_classes() -> np.ndarray:
    """The script class of every code point as HF's ``UnicodeScripts`` sees
    it (read-only), from ``hf_scripts.json``.

    HF's table is its own (SentencePiece's, an older Unicode than Python's),
    folded as its ``fixed_script`` folds it: Hiragana, Katakana and U+30FC
    are Han.  Class 0 is HF's ``Any``: U+0020 and every code point the table
    does not list (the surrogates, which HF cannot receive, too).  Only the
    partition is known, not the scripts' names: ``tools/gen_hf_scripts.py``
    measures which code points split from which through HF's own
    ``pre_tokenize_str``, on every code point (the file names the
    ``tokenizers`` version; ``tests/test_unicode_scripts.py`` measures
    again and compares).

    >>> c = script_classes()
    >>> han = {int(c[ord(x)]) for x in "\\u3042\\u30a2\\u30fc\\u4e2d"}  # Hiragana, Katakana, U+30FC, Han
    >>> int(c[ord(" ")]), len(han), bool(c[ord("a")] == c[ord("1")])
    (0, 1, False)
    """
    with open(_SCRIPTS, encoding="utf-8") as fh:
        data = json.load(fh)
    starts = np.asarray(data["starts"], dtype=np.int64)
    classes = np.asarray(data["classes"], dtype=np.int64)
    dtype = np.uint8 if classes.max() < 256 else np.uint16
    table = np.repeat(classes.astype(dtype), np.diff(np.r_[starts, 0x110000]))
    table.setflags(write=False)
    return table


def unicode_scripts(t: NormalizedText) -> list:
    """HF's ``UnicodeScripts``: a new part at each character whose script
    class is not that of the last character before it that is not ``Any``
    (and at the first one that is not ``Any``).  ``Any`` characters (a
    space, an unlisted code point) stay in the part before them; those at
    the start of ``t`` are dropped, and a part of ``Any`` only is dropped.

    >>> [p.text for p in unicode_scripts(NormalizedText.of("  Apples are \\u308a\\u3093\\u3054 \\u6797\\u6a8e!"))]
    ['Apples are ', '\\u308a\\u3093\\u3054 \\u6797\\u6a8e', '!']
    """
    n = len(t.text)
    if not n:
        return []
    cls = script_classes()[np.frombuffer(t.text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)]
    at = np.flatnonzero(cls)
    if not len(at):
        return []
    seen = cls[at]
    heads = at[np.r_[True, seen[1:] != seen[:-1]]].tolist()
    return [t.slice(a, b) for a, b in zip(heads, heads[1:] + [n])]


def _metaspace(spec: dict, source: str, where: str) -> PreTokenizer:
    rep = spec.get("replacement")
    if not isinstance(rep, str) or len(rep) != 1:
        raise bad(source, f"{where}.replacement", f"expected one character, found {shown(rep)}")
    scheme = spec.get("prepend_scheme", "always")
    if scheme not in ("always", "first", "never"):
        raise bad(source, f"{where}.prepend_scheme", f"expected 'always', 'first' or 'never', found {shown(scheme)}")
    add = spec.get("add_prefix_space")
    if add is not None and not isinstance(add, bool):
        raise bad(source, f"{where}.add_prefix_space", f"expected true, false or null, found {shown(add)}")
    if add is False:
        if scheme != "never":  # (HF: prepend_scheme defaults to "always" here too)
            raise bad(source, f"{where}.add_prefix_space", "false does not match the declared prepend_scheme "
                      f"{shown(scheme)}")
        scheme = "never"
    split = spec.get("split", True)
    if not isinstance(split, bool):
        raise bad(source, f"{where}.split", f"expected true or false, found {shown(split)}")
    return metaspace(rep, scheme, split)


#: GPT-2's pattern, HF ByteLevel's ``use_regex``
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def byte_level(add_prefix_space: bool, use_regex: bool) -> PreTokenizer:
    """HF's ``ByteLevel``: a space first (``add_prefix_space``, when the part
    does not start with one), GPT-2's pattern (``use_regex``), then every
    byte of a part as its character of GPT-2's byte alphabet (the first
    byte of a character replaces it, the others are new: they all keep the
    character's span)."""
    from ...runtime.byte_level import bytes_to_unicode
    from .normalizers import regex_finder

    table = bytes_to_unicode()
    find = regex_finder(GPT2_PATTERN)

    def pre(t: NormalizedText) -> list:
        if add_prefix_space and not t.text.startswith(" "):
            t.prepend(" ")
        parts = t.split(find(t.text), "isolated") if use_regex else ([t] if t.text else [])
        for p in parts:
            p.transform([(table[b], int(i > 0)) for c in p.text for i, b in enumerate(c.encode("utf-8", "surrogatepass"))])
        return parts

    return pre


def metaspace(rep: str, scheme: str, split: bool) -> PreTokenizer:
    """HF's ``Metaspace``: spaces become ``rep``, ``rep`` is put first
    (``always``; ``first``: only on the part at the start of the text),
    then the text is cut before each ``rep`` when ``split``."""
    def pre(t: NormalizedText) -> list:
        if " " in t.text:
            t.replace(lambda s: [(i, i + 1) for i, c in enumerate(s) if c == " "], rep)
        if scheme == "always" or (scheme == "first" and t.shift == 0):
            if not t.text.startswith(rep):
                t.prepend(rep)
        if not split:
            return [t] if t.text else []
        return t.split([(i, i + 1) for i, c in enumerate(t.text) if c == rep], "merged_with_next")

    return pre


__all__ = ["BEHAVIORS", "PreTokenizer", "metaspace", "read_pre_tokenizer", "script_classes", "unicode_scripts",
           "with_gaps"]
