r"""Pre-tokenization patterns compiled to a small program for a Numba matcher.

The published pre-tokenization patterns (GPT-2, cl100k/Llama 3, o200k/GPT-OSS,
Qwen2, Qwen 3.5, DeepSeek's Split patterns, Mistral Tekken) use a small part
of regular-expression syntax: alternation, concatenation, non-capturing and
case-insensitive groups, one-character atoms (literals, escapes such as
``\s`` or ``\p{L}``, ``.`` and character classes) with quantifiers, a
one-character lookahead, atomic groups (``(?>\p{N}{1,3})``, as HF writes
cl100k's possessive quantifier) and the anchors ``^`` / ``$`` / ``\A`` /
``\z``.  :func:`compile_pattern`
turns such a pattern into a :class:`Program` that
:mod:`.regex_kernels` runs without :mod:`regex`; a pattern outside the
subset gives ``None``, and the caller keeps using :mod:`regex`
(:func:`outside_subset` says why; the BPE preset warns once per pattern).

>>> p = compile_pattern(r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|\s+(?!\S)|\s+")
>>> text = "I'LL pay 12345  now"
>>> [text[a:b] for a, b in p.spans(text).tolist()]
['I', "'LL", ' pay', ' ', '123', '45', ' ', ' now']
>>> compile_pattern(r"(\w)\1") is None  # a back reference: not in the subset
True

Meaning
-------
What an atom matches is not re-implemented: the code points each atom
matches are read from the installed :mod:`regex` (the atom's own text, with
``(?i:...)`` around it in a case-insensitive group, scanned over all of
Unicode with :func:`segkit.runtime.unicode.property_mask`), so the Unicode
version and the case folding are those of the :mod:`regex` path the program
replaces.  With ``flavour="onig"`` (HF tokenizers' Oniguruma: tokenizer.json
files) or ``"rust"`` (tiktoken's Rust regex crate: tiktoken files) they are
the reference engine's instead, measured from it and stored as differences
from :mod:`regex` (:mod:`segkit.runtime.unicode_flavours`): those engines
know an older Unicode, in which e.g. U+0558 is unassigned, not a letter.

>>> onig = compile_pattern(r"\p{L}+|[^\p{L}]+", flavour="onig")
>>> onig.spans("ab\u0558cd").tolist()
[[0, 2], [2, 3], [3, 5]]
>>> compile_pattern(r"\p{L}+|[^\p{L}]+").spans("ab\u0558cd").tolist()
[[0, 5]]

The matcher is a backtracking one, as :mod:`regex` is
(leftmost-first alternation, greedy quantifiers that give characters back,
possessive ones that do not), and its matches follow the Rust iterators'
rules of :func:`segkit.presets.bpe.pieces.matches`.

Program
-------
* ``pages`` (int32, 4352) and ``blocks`` (uint64): a two-level table over
  all code points, ``blocks[pages[c >> 8] + (c & 255)]`` the bit mask of
  the atoms (at most 64 distinct ones) that match ``c``; identical
  256-entry pages are stored once.
* ``code`` (int64, ``(n, 4)``): the instructions ``(op, a, b, c)``; every
  jump goes forward, so a run of the program visits each instruction at
  most once and the backtracking stack needs at most ``n`` entries.

  ``RUN set min max`` (``OP_RUN`` greedy, ``OP_RUN_POSSESSIVE``): ``min`` to
  ``max`` (``-1``: no limit) characters in ``sets[set]``;
  ``SPLIT x y filter``: try ``x``, then ``y`` (``filter >= 0``: ``x`` can
  only match if the next character is in ``sets[filter]``);
  ``JUMP x``; ``LOOK set negate``: the next character is (not) in the set
  (none at the end of the text); ``BEGIN multiline`` (``^``, ``\A``:
  ``0``) / ``END kind`` (``$``: ``0``, ``$`` with MULTILINE: ``1``,
  ``\z``: ``2``); ``ATOMIC`` / ``CUT start``: an atomic group, whose
  ``CUT`` drops the backtracking entries pushed since its ``ATOMIC`` at
  ``start``; ``MATCH``.
* ``sets`` (uint64): bit masks over atoms (a set is the union of its bits).
* ``first``: index in ``sets`` of the characters a match can start with,
  or ``-1`` when the pattern can match the empty string.

Limits (``None``): captures are treated as groups, but back references,
lookbehind, lazy quantifiers, quantified groups other than ``(?:...)?``
and ``(?>...)?`` (and ``{0,1}`` / ``{1}``), inline flags other than
``(?i:``, lookaheads of more than one atom, ``\b``, ``\Z`` (the end to
:mod:`regex`, before a final newline to Oniguruma and Rust) and the other
zero-width escapes, nested or POSIX classes, more than 64 distinct atoms.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .regex_kernels import (OP_ATOMIC, OP_BEGIN, OP_CUT, OP_END, OP_JUMP, OP_LOOK, OP_MATCH, OP_RUN,
                            OP_RUN_POSSESSIVE, OP_SPLIT)

__all__ = ["Program", "compile_pattern"]

N_CODE_POINTS = 0x110000
_N_PAGES = N_CODE_POINTS >> 8
MAX_ATOMS = 64


class _Unsupported(Exception):
    """The pattern is outside the subset (compile_pattern returns None)."""


# ------------------------------------------------------------------ parsing
# Nodes: ("atom", key, min, max, possessive) with key = (text, icase);
# ("look", key, negate); ("begin", absolute); ("end", kind) with kind
# "$", "\\z"; ("seq", [nodes]); ("alt", [nodes]); ("opt", node);
# ("atomic", node).

_SINGLE_ESCAPES = set("dDsSwWrntfvae")
_ZERO_WIDTH_OR_OTHER = set("bBAZzGK")


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def parse(self):
        node = self.alternation(False)
        if self.i != len(self.s):  # an unbalanced ")": regex.compile raised already
            raise _Unsupported("unexpected ')'")
        return node

    def alternation(self, icase: bool):
        alts = [self.sequence(icase)]
        while self.peek() == "|":
            self.i += 1
            alts.append(self.sequence(icase))
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def sequence(self, icase: bool):
        items = []
        while self.i < len(self.s) and self.peek() not in "|)":
            items.append(self.quantified(icase))
        return items[0] if len(items) == 1 else ("seq", items)

    def quantified(self, icase: bool):
        node = self.primary(icase)
        q = self.quantifier()
        if q is None:
            return node
        lo, hi, possessive = q
        if node[0] == "atom":
            if node[2] != 1 or node[3] != 1:  # "a{2}{3}": a quantified quantifier
                raise _Unsupported("quantified quantifier")
            return ("atom", node[1], lo, hi, possessive)
        if node[0] in ("look", "begin", "end"):
            raise _Unsupported("quantified assertion")
        if (lo, hi) == (1, 1) and not possessive:
            return node
        if (lo, hi) == (0, 1) and not possessive:
            return ("opt", node)
        raise _Unsupported("quantified group")

    def quantifier(self):
        c = self.peek()
        if c == "?":
            lo, hi = 0, 1
            self.i += 1
        elif c == "*":
            lo, hi = 0, -1
            self.i += 1
        elif c == "+":
            lo, hi = 1, -1
            self.i += 1
        elif c == "{":
            j = self.s.find("}", self.i)
            body = self.s[self.i + 1 : j] if j > 0 else ""
            parts = body.split(",")
            if j < 0 or len(parts) > 2 or not all(p.isdigit() or p == "" for p in parts) or parts[0] == "" and (
                len(parts) == 1
            ):
                raise _Unsupported("'{' that is not a quantifier")
            lo = int(parts[0]) if parts[0] else 0
            hi = lo if len(parts) == 1 else (int(parts[1]) if parts[1] else -1)
            if hi >= 0 and hi < lo:
                raise _Unsupported("bad counted quantifier")
            self.i = j + 1
        else:
            return None
        possessive = False
        c = self.peek()
        if c == "+":
            possessive = True
            self.i += 1
        elif c == "?":
            raise _Unsupported("lazy quantifier")
        if self.peek() in ("?", "*", "+", "{") and self.peek() != "":
            raise _Unsupported("quantified quantifier")
        return lo, hi, possessive

    def primary(self, icase: bool):
        s, i = self.s, self.i
        c = s[i]
        if c == "(":
            if s.startswith("(?:", i):
                self.i += 3
                return self.group(icase)
            if s.startswith("(?i:", i):
                self.i += 4
                return self.group(True)
            if s.startswith("(?=", i) or s.startswith("(?!", i):
                negate = s[i + 2] == "!"
                self.i += 3
                inner = self.group(icase)
                if inner[0] != "atom" or inner[2] != 1 or inner[3] != 1:
                    raise _Unsupported("lookahead of more than one character")
                return ("look", inner[1], negate)
            if s.startswith("(?>", i):
                self.i += 3
                inner = self.group(icase)
                if inner[0] == "atom":  # (?>a{1,3}) is a{1,3}+
                    return ("atom", inner[1], inner[2], inner[3], True)
                return ("atomic", inner)
            if s.startswith("(?", i):
                raise _Unsupported(f"group kind {s[i:i + 3]!r}")
            self.i += 1  # a capture: the spans do not depend on it
            return self.group(icase)
        if c == "[":
            return self.atom(self.char_class(), icase)
        if c == "\\":
            if s.startswith("\\A", i) or s.startswith("\\z", i):
                self.i += 2
                return ("begin", True) if s[i + 1] == "A" else ("end", "\\z")
            return self.atom(self.escape(), icase)
        if c == "^":
            self.i += 1
            return ("begin", False)
        if c == "$":
            self.i += 1
            return ("end", "$")
        if c in "*+?{)|":
            raise _Unsupported(f"unexpected {c!r}")
        self.i += 1
        return self.atom(c, icase)  # "." too: its code points come from regex

    def group(self, icase: bool):
        node = self.alternation(icase)
        if self.peek() != ")":
            raise _Unsupported("unclosed group")
        self.i += 1
        return node

    @staticmethod
    def atom(text: str, icase: bool):
        return ("atom", (text, icase), 1, 1, False)

    def escape(self) -> str:
        s, i = self.s, self.i
        if i + 1 >= len(s):
            raise _Unsupported("trailing backslash")
        c = s[i + 1]
        if c in "pP":
            if i + 2 < len(s) and s[i + 2] == "{":
                j = s.find("}", i + 3)
                if j < 0:
                    raise _Unsupported("unclosed \\p{")
                end = j + 1
            else:
                end = i + 3
        elif c == "x":
            if i + 2 < len(s) and s[i + 2] == "{":
                j = s.find("}", i + 3)
                if j < 0:
                    raise _Unsupported("unclosed \\x{")
                end = j + 1
            else:
                end = i + 4
        elif c == "u":
            end = i + 6
        elif c == "U":
            end = i + 10
        elif c in _SINGLE_ESCAPES:
            end = i + 2
        elif c.isalnum() or c in _ZERO_WIDTH_OR_OTHER:
            raise _Unsupported(f"escape \\{c}")
        else:
            end = i + 2  # an escaped punctuation or space character: itself
        if end > len(s):
            raise _Unsupported("truncated escape")
        self.i = end
        return s[i:end]

    def char_class(self) -> str:
        s, start = self.s, self.i
        j = start + 1
        if j < len(s) and s[j] == "^":
            j += 1
        if j < len(s) and s[j] == "]":
            j += 1  # a leading "]" is itself
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
            elif c == "[":
                raise _Unsupported("nested class or POSIX class")
            elif c == "]":
                self.i = j + 1
                return s[start : j + 1]
            else:
                j += 1
        raise _Unsupported("unclosed class")


# ------------------------------------------------------------------ compiling
def _first(node, bit):
    """``(atom bits a match of node can start with, can it match empty)``."""
    kind = node[0]
    if kind == "atom":
        return 1 << bit[node[1]], node[2] == 0
    if kind in ("look", "begin", "end"):
        return 0, True
    if kind == "atomic":
        return _first(node[1], bit)
    if kind == "opt":
        return _first(node[1], bit)[0], True
    if kind == "seq":
        bits = 0
        for item in node[1]:
            b, empty = _first(item, bit)
            bits |= b
            if not empty:
                return bits, False
        return bits, True
    bits, empty = 0, False  # alt
    for item in node[1]:
        b, e = _first(item, bit)
        bits |= b
        empty = empty or e
    return bits, empty


def _atoms(node, out: dict) -> None:
    kind = node[0]
    if kind in ("atom", "look"):
        out.setdefault(node[1], len(out))
    elif kind in ("opt", "atomic"):
        _atoms(node[1], out)
    elif kind in ("seq", "alt"):
        for item in node[1]:
            _atoms(item, out)


class _Emitter:
    def __init__(self, bit: dict, multiline: bool) -> None:
        self.bit = bit
        self.multiline = multiline
        self.code: list[list[int]] = []
        self.sets: list[int] = []

    def set_index(self, bits: int) -> int:
        if bits not in self.sets:
            self.sets.append(bits)
        return self.sets.index(bits)

    def filter_for(self, node) -> int:
        bits, empty = _first(node, self.bit)
        return -1 if empty else self.set_index(bits)

    def emit(self, op: int, a: int = 0, b: int = 0, c: int = 0) -> int:
        self.code.append([op, a, b, c])
        return len(self.code) - 1

    def node(self, node) -> None:
        kind = node[0]
        if kind == "atom":
            _, key, lo, hi, possessive = node
            self.emit(OP_RUN_POSSESSIVE if possessive else OP_RUN, self.set_index(1 << self.bit[key]), lo, hi)
        elif kind == "look":
            self.emit(OP_LOOK, self.set_index(1 << self.bit[node[1]]), int(node[2]))
        elif kind == "begin":
            self.emit(OP_BEGIN, int(self.multiline and not node[1]))
        elif kind == "end":
            self.emit(OP_END, 2 if node[1] == "\\z" else int(self.multiline))
        elif kind == "atomic":
            start = self.emit(OP_ATOMIC)
            self.node(node[1])
            self.emit(OP_CUT, start)
        elif kind == "seq":
            for item in node[1]:
                self.node(item)
        elif kind == "opt":
            split = self.emit(OP_SPLIT, 0, 0, self.filter_for(node[1]))
            self.code[split][1] = len(self.code)
            self.node(node[1])
            self.code[split][2] = len(self.code)
        else:  # alt
            jumps = []
            alts = node[1]
            for k, item in enumerate(alts):
                if k < len(alts) - 1:
                    split = self.emit(OP_SPLIT, 0, 0, self.filter_for(item))
                    self.code[split][1] = len(self.code)
                    self.node(item)
                    jumps.append(self.emit(OP_JUMP))
                    self.code[split][2] = len(self.code)
                else:
                    self.node(item)
            for j in jumps:
                self.code[j][1] = len(self.code)


def _atom_mask(key: tuple[str, bool], flavour: str = "regex", cache: dict | None = None) -> np.ndarray:
    """Code points the one-character atom ``key`` matches, read from :mod:`regex`
    (``flavour="regex"``) or from the measured tables of HF's Oniguruma
    (``"onig"``) or tiktoken's Rust regex crate (``"rust"``)."""
    from ...runtime.unicode_flavours import atom_mask

    text, icase = key
    if not icase and len(text) == 1 and text != ".":
        mask = np.zeros(N_CODE_POINTS, dtype=bool)
        mask[ord(text)] = True
        return mask
    # Not property_mask (which keeps every mask it made, 1.1 MB each: right
    # for segkit's fixed tables, not for the atoms of any pattern a user
    # brings): atom_mask's scans are kept packed and bounded
    # (runtime.unicode.scanned).
    return atom_mask(text, icase, flavour, cache)


def _regex_mask_at(key: tuple[str, bool], code_points: np.ndarray, text: str) -> np.ndarray:
    """``_atom_mask(key, "regex")[code_points]``, scanning only ``text`` (the
    code points as one str): a one-character atom reads no context."""
    from ...runtime.unicode import matched_in

    atom, icase = key
    if not icase and len(atom) == 1 and atom != ".":
        return code_points == ord(atom)
    return matched_in(f"(?i:{atom})" if icase else atom, text)


def _two_level(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pages = flat.reshape(_N_PAGES, 256)
    blocks: dict[bytes, int] = {}
    page_offset = np.empty(_N_PAGES, dtype=np.int32)
    for i in range(_N_PAGES):
        page_offset[i] = 256 * blocks.setdefault(pages[i].tobytes(), len(blocks))
    data = np.frombuffer(b"".join(blocks), dtype=np.uint64).copy()
    return page_offset, data


# ------------------------------------------------------------------ the program
@dataclass(frozen=True, eq=False)
class Program:
    """A compiled pattern: the arrays :mod:`.regex_kernels` runs (see the module docstring).

    >>> p = compile_pattern(r"\\s+(?!\\S)|\\s+|\\S+")
    >>> p.spans("a   b").tolist()
    [[0, 1], [1, 3], [3, 4], [4, 5]]
    """

    pattern: str
    multiline: bool
    pages: np.ndarray  # int32: offset in blocks of each page of 256 code points
    blocks: np.ndarray  # uint64: atom bit mask per code point
    code: np.ndarray  # int64 (n, 4): op, a, b, c
    sets: np.ndarray  # uint64: unions of atom bits
    first: int  # index in sets of the possible first characters, -1: none
    flavour: str = "regex"  # whose character classes: "regex", "onig" or "rust"
    #: Code points where the atoms' classes differ from the regex module's
    #: (sorted int64; empty for the regex flavour): a text without any runs
    #: the same through :mod:`regex`.
    differs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def regex_agrees(self, text: str) -> bool:
        """Whether :mod:`regex` (the pattern itself) cuts ``text`` as this
        program does: no character of ``text`` is in :attr:`differs`."""
        if not self.differs.size or not text or ord(max(text)) < self.differs[0]:
            return True
        rx = self.__dict__.get("_differs_rx")
        if rx is None:
            import regex

            runs = np.split(self.differs, np.flatnonzero(np.diff(self.differs) != 1) + 1)
            body = "".join(f"\\U{int(r[0]):08x}-\\U{int(r[-1]):08x}" for r in runs)
            rx = self.__dict__["_differs_rx"] = regex.compile(f"[{body}]")
        return rx.search(text) is None

    def spans(self, text: str) -> np.ndarray:
        """``(start, end)`` of the matches in ``text`` (str indices, int64 ``(n, 2)``),
        as :func:`segkit.presets.bpe.pieces.matches` reports them.

        >>> compile_pattern(r"\\p{N}{1,3}").spans("ab 12345").tolist()
        [[3, 6], [6, 8]]
        """
        if not isinstance(text, str):
            raise TypeError(f"Program.spans takes a str, found {type(text).__name__}")
        from .regex_kernels import match_rows

        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        n = len(cps)
        out = np.empty((n + 1, 2), dtype=np.int64)
        k = match_rows(cps, np.array([0, n], dtype=np.int64), self.pages, self.blocks, self.code, self.sets,
                       self.first, out, np.empty(2, dtype=np.int64))
        return out[:k]

    def spans_batch(self, cps: np.ndarray, row_splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Matches of every row of joined code points.

        Parameters
        ----------
        cps
            uint32 code points of all rows, joined.
        row_splits
            int64, rising from 0 to ``len(cps)``: row ``r`` is
            ``cps[row_splits[r]:row_splits[r + 1]]``.

        Returns
        -------
        spans, span_splits
            int64 ``(n, 2)`` spans as offsets into ``cps`` (not into the row),
            and int64 row splits over spans (row ``r``'s matches are
            ``spans[span_splits[r]:span_splits[r + 1]]``).

        >>> p = compile_pattern(r"\\S+")
        >>> cps = np.frombuffer("ab c".encode("utf-32-le"), dtype=np.uint32)
        >>> spans, splits = p.spans_batch(cps, np.array([0, 1, 4]))
        >>> spans.tolist(), splits.tolist()
        ([[0, 1], [1, 2], [3, 4]], [0, 1, 3])
        """
        from .regex_kernels import match_rows

        cps = np.ascontiguousarray(cps)
        if cps.dtype != np.uint32 or cps.ndim != 1:
            raise TypeError(f"cps must be a 1-d uint32 array of code points, found {cps.dtype} with shape {cps.shape}")
        row_splits = np.ascontiguousarray(row_splits, dtype=np.int64)
        if row_splits.ndim != 1 or len(row_splits) < 1 or row_splits[0] != 0 or row_splits[-1] != len(cps) or (
            np.any(np.diff(row_splits) < 0)
        ):
            raise ValueError(f"row_splits must rise from 0 to len(cps) = {len(cps)}, found {row_splits[:8]}...")
        if len(cps) and int(cps.max()) > 0x10FFFF:
            bad = int(np.argmax(cps > 0x10FFFF))
            raise ValueError(f"cps[{bad}] = {int(cps[bad])} is not a code point (above 0x10FFFF)")
        n_rows = len(row_splits) - 1
        out = np.empty((len(cps) + n_rows, 2), dtype=np.int64)
        span_splits = np.empty(n_rows + 1, dtype=np.int64)
        n = match_rows(cps, row_splits, self.pages, self.blocks, self.code, self.sets, self.first, out, span_splits)
        return out[:n].copy(), span_splits


def outside_subset(pattern: str) -> str | None:
    """What keeps ``pattern`` out of the compiled subset, in words (the
    construct and its place), or None when :func:`compile_pattern` takes it.

    >>> outside_subset(r"\\p{L}+|(?:ab)+") is None
    False
    >>> outside_subset(r"\\p{L}+|(?:ab)+")
    "quantified group (near position 14: '\\\\\\\\p{L}+|(?:ab)+')"
    >>> outside_subset(r"(?>\\p{N}{1,3})|\\s+\\z") is None
    True
    """
    parser = _Parser(pattern)
    try:
        tree = parser.parse()
    except _Unsupported as e:
        i = min(parser.i, len(pattern))
        return f"{e} (near position {i}: {pattern[max(0, i - 16) : i + 16]!r})"
    keys: dict = {}
    _atoms(tree, keys)
    if len(keys) > MAX_ATOMS:
        return f"{len(keys)} distinct character classes (at most {MAX_ATOMS})"
    return None


@lru_cache(maxsize=64)
def compile_pattern(pattern: str, multiline: bool = False, flavour: str = "regex") -> Program | None:
    """The :class:`Program` of ``pattern``, or ``None`` when the pattern is
    outside the subset (see the module docstring).

    Parameters
    ----------
    pattern
        A :mod:`regex` pattern (compiled with no flags; an invalid one raises
        :mod:`regex`'s error).
    multiline
        ``^`` and ``$`` anchor lines, as ``regex.MULTILINE`` (and
        HuggingFace's Oniguruma) make them.
    flavour
        Whose character classes: ``"regex"`` (the installed :mod:`regex`),
        ``"onig"`` (HF tokenizers) or ``"rust"`` (tiktoken); see
        :mod:`segkit.runtime.unicode_flavours`.

    >>> compile_pattern(r"\\p{L}+|\\p{N}") is not None
    True
    >>> compile_pattern(r"(?:ab)+") is None  # a quantified group
    True
    """
    import regex

    from ...runtime.unicode_flavours import check_flavour

    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, found {type(pattern).__name__}")
    check_flavour(flavour)
    regex.compile(pattern, regex.MULTILINE if multiline else 0)  # invalid: regex's own error
    try:
        tree = _Parser(pattern).parse()
    except _Unsupported:
        return None
    keys: dict = {}
    _atoms(tree, keys)
    if len(keys) > MAX_ATOMS:
        return None
    flat = np.zeros(N_CODE_POINTS, dtype=np.uint64)
    differs = np.zeros(N_CODE_POINTS, dtype=bool)
    cache: dict = {}  # class items shared by the atoms
    if flavour != "regex":  # (a flavour's classes differ from regex's only at its special code points)
        from ...runtime.unicode_flavours import special

        where = np.flatnonzero(special(flavour))
        where_text = "".join(map(chr, where.tolist()))
    for key, bit in keys.items():
        mask = _atom_mask(key, flavour, cache)
        flat[mask] |= np.uint64(1 << bit)
        if flavour != "regex":
            differs[where] |= mask[where] != _regex_mask_at(key, where, where_text)
    emitter = _Emitter(keys, multiline)
    emitter.node(tree)
    emitter.emit(OP_MATCH)
    first = emitter.filter_for(tree)
    pages, blocks = _two_level(flat)
    code = np.array(emitter.code, dtype=np.int64).reshape(-1, 4)
    sets = np.array(emitter.sets or [0], dtype=np.uint64)
    for a in (pages, blocks, code, sets):
        a.setflags(write=False)
    differs_at = np.flatnonzero(differs).astype(np.int64)
    differs_at.setflags(write=False)
    return Program(pattern, multiline, pages, blocks, code, sets, first, flavour, differs_at)
