"""Cutting texts into the pieces BPE runs on, in Python with :mod:`regex`.

The compiled pre-tokenizers (:mod:`.pretokenize`) cut text for tiktoken's
three patterns.  This module is the path for everything else: any other
pattern (with HuggingFace's ``Split`` behaviour of keeping the text between
matches as pieces, where the model says so), and the texts of a
tokenizer.json model in which an added token occurs (HF's splitting is
Python, :mod:`.added`).  Its output has the compiled path's layout: texts
become one UTF-8 buffer and pieces given by byte offsets (``starts``,
``ends``), each with an id (-1: text to encode; else a special or added
token found in the text) and row splits over pieces per text.  Cost: a
Python loop over the pattern's matches, several times the compiled path.

Special tokens, tiktoken's way (:func:`tiktoken_segments`): any disallowed
string anywhere in the text is a ValueError naming it and its position;
otherwise the text is cut at its allowed special tokens (leftmost, the
longest where several start at one position) and the text between is
pre-tokenized on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import warnings

import numpy as np


@dataclass(frozen=True)
class Pieces:
    data: np.ndarray  # uint8
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    ids: np.ndarray  # int32, -1 for text
    row_splits: np.ndarray  # int64, pieces per text


def disallowed_error(token: str, position: int, text_index: int | None = None) -> ValueError:
    where = "the text" if text_index is None else f"text {text_index}"
    return ValueError(
        f"{where} contains the special token {token!r} at position {position}, which disallowed_special "
        f"forbids: pass allowed_special={{{token!r}}} (or allowed_special='all') to encode it as a special "
        f"token, or disallowed_special=() to encode it as ordinary text"
    )


class SpecialPlan:
    """The special-token rules of one call: allowed tokens (string -> id) and
    disallowed strings."""

    def __init__(self, allowed: dict[str, int], disallowed: frozenset) -> None:
        import regex

        self.allowed = allowed
        self.disallowed = disallowed
        alts = sorted(allowed, key=lambda s: (-len(s), s))
        self.allowed_re = regex.compile("|".join(map(regex.escape, alts))) if alts else None
        dis = sorted(disallowed, key=lambda s: (-len(s), s))
        self.disallowed_re = regex.compile("|".join(map(regex.escape, dis))) if dis else None

    def segments(self, text: str, text_index: int | None = None) -> list[tuple[int, str]]:
        if self.disallowed_re is not None:
            m = self.disallowed_re.search(text)
            if m:
                raise disallowed_error(m.group(), m.start(), text_index)
        if self.allowed_re is None:
            return [(-1, text)] if text else []
        out: list[tuple[int, str]] = []
        p = 0
        for m in self.allowed_re.finditer(text):
            if m.start() > p:
                out.append((-1, text[p : m.start()]))
            out.append((self.allowed[m.group()], m.group()))
            p = m.end()
        if p < len(text):
            out.append((-1, text[p:]))
        return out


def make_plan(specials: dict[str, int], allowed_special, disallowed_special) -> SpecialPlan:
    """tiktoken's rules: ``"all"`` allowed = every special token; ``"all"``
    disallowed = every special token not allowed; other strings in
    ``allowed_special`` are ignored."""
    if isinstance(allowed_special, str):
        if allowed_special != "all":
            raise ValueError(f"allowed_special must be 'all' or a collection of strings, found {allowed_special!r}")
        allowed = dict(specials)
    else:
        try:
            wanted = frozenset(allowed_special)
        except TypeError:
            raise TypeError(f"allowed_special must be 'all' or a collection of strings, found "
                            f"{type(allowed_special).__name__}") from None
        allowed = {s: specials[s] for s in wanted if s in specials}
    if isinstance(disallowed_special, str):
        if disallowed_special != "all":
            raise ValueError(f"disallowed_special must be 'all' or a collection of strings, found "
                             f"{disallowed_special!r}")
        disallowed = frozenset(specials) - frozenset(allowed)
    else:
        try:
            disallowed = frozenset(disallowed_special)
        except TypeError:
            raise TypeError(f"disallowed_special must be 'all' or a collection of strings, found "
                            f"{type(disallowed_special).__name__}") from None
        for s in disallowed:
            if not isinstance(s, str) or not s:
                raise ValueError(f"disallowed_special must hold non-empty strings, found {s!r}")
    return SpecialPlan(allowed, disallowed)


#: Batches of at least this many texts, or this many characters, are split
#: by the compiled programs (measured on the corpus: per call, one short
#: text, regex is faster; DeepSeek's and Llama 3's patterns).
COMPILED_MIN_ROWS = 16
COMPILED_MIN_CHARS = 2048


#: Patterns already warned about (once per process each).
_SLOW_PATTERNS: set[str] = set()


class SlowPatternWarning(UserWarning):
    """A pre-tokenization pattern is outside the compiled subset: the
    :mod:`regex` module runs it (the same pieces, more slowly)."""


def _program(pattern: str, lines: bool, flavour: str = "regex"):
    """The compiled program of ``pattern`` (:func:`.regex_program.compile_pattern`)
    with ``flavour``'s character classes, kept in the model cache
    (:mod:`.program_cache`), or None (outside its subset: then one
    :class:`SlowPatternWarning` per pattern names the construct)."""
    from .program_cache import cached_program
    from .regex_program import compile_pattern, outside_subset

    try:
        program = cached_program(pattern, lines, flavour, lambda: compile_pattern(pattern, lines, flavour))
    except Exception:  # noqa: BLE001 - anything it cannot take, regex runs
        program = None
    if program is None and pattern not in _SLOW_PATTERNS:
        _SLOW_PATTERNS.add(pattern)
        try:
            why = outside_subset(pattern) or "it could not be compiled"
        except Exception:  # noqa: BLE001
            why = "it could not be compiled"
        warnings.warn(f"segkit: the pre-tokenization pattern {pattern!r:.120} runs through the regex module, "
                      f"which is slower than a compiled pattern: {why}", SlowPatternWarning, stacklevel=2)
    return program


def _pack(programs: list) -> tuple:
    """The programs of a chain as the packed arrays
    :func:`~.regex_kernels.chain_pieces` takes: ``(pages, blocks, code,
    sets, meta)``, each program's pages shifted to its blocks."""
    pages, blocks, code, sets, meta = [], [], [], [], []
    at = [0, 0, 0, 0]  # pages, blocks, code, sets
    for p in programs:
        pages.append((p.pages.astype(np.int64) + at[1]).astype(p.pages.dtype))
        blocks.append(p.blocks)
        code.append(p.code)
        sets.append(p.sets)
        meta.append([at[0], at[0] + p.pages.size, at[2], at[2] + p.code.shape[0], at[3], at[3] + p.sets.size,
                     p.first])
        at = [at[0] + p.pages.size, at[1] + p.blocks.size, at[2] + p.code.shape[0], at[3] + p.sets.size]
    return (np.concatenate(pages), np.concatenate(blocks), np.ascontiguousarray(np.concatenate(code)),
            np.concatenate(sets), np.array(meta, dtype=np.int64))


def _cuts(bounds: np.ndarray, spans: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The piece boundaries after a split: the pieces' ``bounds`` (rising,
    tiling the text), with the ends of the ``spans`` that lie in a piece
    where ``keep`` is true added (HF's Isolated split: a match and the text
    between matches are pieces; an empty match only cuts)."""
    if spans.size:
        row = np.searchsorted(bounds, spans[:, 0], side="right") - 1
        spans = spans[keep[np.minimum(row, keep.size - 1)]]
    return np.unique(np.concatenate([bounds, spans.ravel()]))


def _joined_utf8(joined: str, rows: list, first_index: int) -> bytes:
    """UTF-8 of the stretches of ``rows`` joined; a lone surrogate is the
    ValueError of :func:`utf8` naming its text and position."""
    try:
        return joined.encode("utf-8")
    except UnicodeEncodeError:
        for r, row in enumerate(rows):
            for _, s in row:
                utf8(s, first_index + r if len(rows) > 1 else None)
        raise


def _byte_offsets(cps: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Character offsets into the code points ``cps`` as UTF-8 byte offsets."""
    cum = np.zeros(cps.size + 1, dtype=np.int64)
    np.cumsum(1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000), out=cum[1:])
    return cum[starts], cum[ends]


def _segment_of(seg_bounds: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.searchsorted(seg_bounds, starts, side="right") - 1


def utf8(text: str, text_index: int | None = None) -> bytes:
    """UTF-8 of ``text``; a lone surrogate is a ValueError naming its position."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        where = "the text" if text_index is None else f"text {text_index}"
        raise ValueError(
            f"{where} has a lone surrogate {text[e.start]!r} at position {e.start}: it has no UTF-8 form "
            "(tiktoken would silently replace it with U+FFFD; segkit encodes only what it was given)"
        ) from None


def matches(rx, s: str):
    """The ``(start, end)`` spans of the matches of ``rx`` in ``s``, as the
    Rust iterators of tiktoken (fancy-regex) and HuggingFace tokenizers
    (Oniguruma) report them: after a match the search goes on where it
    ended; an empty match moves the search one character on, and an empty
    match right where the previous match ended is not reported.  (Python's
    ``finditer`` differs: it can report a non-empty match at the place of
    an empty one.)"""
    pos = 0
    last = -1
    n = len(s)
    search = rx.search
    while pos <= n:
        m = search(s, pos)
        if m is None:
            return
        a, b = m.span()
        if a == b:
            pos = b + 1
            if b == last:
                continue
        else:
            pos = b
        last = b
        yield a, b


class RegexSplitter:
    """Pre-tokenization with :mod:`regex`: pieces are the pattern's
    matches (:func:`matches`).  ``gaps=True``: the text between matches
    forms pieces too, and an empty match only cuts the text there, as
    HuggingFace's Split(behavior=Isolated) does.  ``gaps=False``
    (tiktoken's semantics): text no match covers is a ValueError where
    tiktoken would drop it silently, and so is an empty match (tiktoken
    panics there).  ``pattern=None``: each
    stretch is one piece.  A tuple of patterns (with ``gaps=True``) is a
    chain, as HuggingFace's Sequence of Split pre-tokenizers: each pattern
    splits every piece of the one before, as a string of its own (so
    lookarounds and anchors see the piece's ends, not its neighbours).
    ``lines=True``: ``^`` and ``$`` anchor lines, as they do in
    HuggingFace's regex engine (Oniguruma, Ruby syntax).  ``flavour``:
    whose character classes the patterns mean (:mod:`segkit.runtime.unicode_flavours`:
    ``"onig"`` for tokenizer.json files, ``"rust"`` for tiktoken files,
    ``"regex"`` the installed :mod:`regex`).  The compiled programs carry
    the flavour's tables; :mod:`regex` (short batches, patterns outside the
    compiled subset) runs only on texts where its classes agree with the
    flavour's, else on the text with each code point the flavour sees
    otherwise replaced by one :mod:`regex` sees the same way
    (:func:`~segkit.runtime.unicode_flavours.substitute`).

    >>> RegexSplitter((r"\\d{1,3}", r"\\s+|\\S+"), gaps=True).spans("ab 12345 c")
    [(0, 2), (2, 3), (3, 6), (6, 8), (8, 9), (9, 10)]
    """

    def __init__(self, pattern: str | tuple[str, ...] | None, gaps: bool = False, lines: bool = False,
                 prefix_at: int | None = None, flavour: str = "regex") -> None:
        import regex

        from ...runtime.unicode_flavours import check_flavour

        self.pattern = pattern
        self.flavour = check_flavour(flavour)
        if isinstance(pattern, tuple):
            if not gaps or not pattern:
                raise ValueError("a chain of patterns splits as HuggingFace's Split does (gaps=True), "
                                 f"found {len(pattern)} pattern(s) with gaps={gaps}")
            self.chain = [RegexSplitter(p, True, lines, flavour=flavour) for p in pattern]
            self.rx = self.chain[0].rx
            programs = [step.program for step in self.chain]
        else:
            self.chain = None
            # lines: ^ and $ anchor lines, as in a tokenizer.json's patterns
            # (Oniguruma's Ruby syntax, which HF tokenizers runs).
            self.rx = regex.compile(pattern, regex.MULTILINE if lines else 0) if pattern is not None else None
            programs = [_program(pattern, lines, flavour)] if pattern is not None else [None]
        self.gaps = gaps
        #: The compiled programs of the patterns, in order (see
        #: :mod:`.regex_program`), or None when one is outside its subset:
        #: then :mod:`regex` runs them.
        self.program = programs[0] if len(programs) == 1 else None
        self.programs = programs if all(p is not None for p in programs) else None
        self._packed = _pack(self.programs) if self.programs is not None else None
        self.prefix_at = prefix_at
        if prefix_at is not None:  # HF ByteLevel's add_prefix_space: the patterns before it, and after
            patterns = list(pattern) if isinstance(pattern, tuple) else [] if pattern is None else [pattern]
            if not gaps or not 0 <= prefix_at <= len(patterns):
                raise ValueError(f"prefix_at must be between 0 and {len(patterns)} with gaps=True, found {prefix_at}")

            def part(ps: list[str]) -> "RegexSplitter | None":
                return None if not ps else RegexSplitter(ps[0] if len(ps) == 1 else tuple(ps), True, lines,
                                                          flavour=flavour)

            self._head, self._tail = part(patterns[:prefix_at]), part(patterns[prefix_at:])

    def prefixed(self, s: str) -> list[str]:
        """With ``prefix_at``: the pieces of ``s`` after the patterns
        before it, each with a leading space if it has none, as
        HuggingFace's ByteLevel(add_prefix_space=true) makes them.

        >>> RegexSplitter((r"\\d+",), True, prefix_at=1).prefixed("ab12 cd")
        [' ab', ' 12', ' cd']
        """
        if not s:
            return []
        spans = self._head.spans(s) if self._head is not None else [(0, len(s))]
        return [s[a:b] if s[a] == " " else " " + s[a:b] for a, b in spans]

    def spans(self, s: str) -> list[tuple[int, int]]:
        if self.chain is not None:
            spans = self.chain[0].spans(s)
            for step in self.chain[1:]:
                split = step.spans
                out = []
                for a, b in spans:
                    if a == 0 and b == len(s):
                        out.extend(split(s))
                    else:
                        out.extend((a + x, a + y) for x, y in split(s[a:b]))
                spans = out
            return spans
        if self.rx is None:
            return [(0, len(s))] if s else []
        t = s  # the text regex runs on
        found = None  # the compiled program's matches, where regex's classes are not the flavour's
        if self.flavour != "regex":
            program = self.program
            if program is None:
                from ...runtime.unicode_flavours import substitute

                t = substitute(s, self.flavour)
            elif not program.regex_agrees(s):
                found = [tuple(m) for m in program.spans(s).tolist()]
        if self.gaps and found is None:
            # Python's finditer finds what the Rust iterators find as long as
            # no match is empty (they differ only after an empty one): one
            # pass in C, and the careful loop below only where one is.
            out = []
            p = 0
            for m in self.rx.finditer(t):
                a, b = m.span()
                if a == b:
                    break
                if a > p:
                    out.append((p, a))
                out.append((a, b))
                p = b
            else:
                if p < len(s):
                    out.append((p, len(s)))
                return out
        out = []
        p = 0
        gaps = self.gaps
        for a, b in matches(self.rx, t) if found is None else found:
            if b == a and not gaps:
                raise ValueError(
                    f"the pattern {self.pattern!r:.80} matches the empty string at character {a} of "
                    f"{s!r:.60}; with tiktoken's semantics an empty match is an error (tiktoken panics): use a "
                    "pattern whose every match is non-empty (e.g. x+ rather than x*)")
            if a > p:
                if not gaps:
                    raise ValueError(self._unmatched(s, p, a))
                out.append((p, a))
            if b > a:
                out.append((a, b))
            p = b
        if p < len(s):
            if not gaps:
                raise ValueError(self._unmatched(s, p, len(s)))
            out.append((p, len(s)))
        return out

    def _unmatched(self, s: str, a: int, b: int) -> str:
        return (f"the pattern {self.pattern!r:.80} matches no part of {s[a:b]!r:.40} at characters {a}-{b} of "
                f"{s!r:.60}; with tiktoken's semantics unmatched text would be dropped (tiktoken drops it "
                "silently), so segkit refuses: use a pattern that matches every character (e.g. add |\\s+|. "
                "as a last alternative)")

    def _compiled_pieces(self, rows: list[list[tuple[int, str]]], first_index: int) -> Pieces | None:
        """:meth:`pieces` by the compiled programs, in whole-batch steps:
        each pattern's matches over every piece at once
        (:meth:`.regex_program.Program.spans_batch`), the pieces' boundaries
        gathered with NumPy.  None when tiktoken's semantics would raise
        (an empty match, text no match covers): the regex path says where."""
        strings: list[str] = []
        tids: list[int] = []
        per_row: list[int] = []
        for row in rows:
            for tid, s in row:
                strings.append(s)
                tids.append(tid)
            per_row.append(len(row))
        joined = "".join(strings)
        raw = _joined_utf8(joined, rows, first_index)
        cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        n_seg = len(strings)
        seg_bounds = np.zeros(n_seg + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, strings), np.int64, n_seg), out=seg_bounds[1:])
        tid = np.array(tids, dtype=np.int32)
        text_seg = tid < 0
        bounds = seg_bounds
        for program in self.programs:
            keep = text_seg[_segment_of(seg_bounds, bounds[:-1])] if bounds.size > 1 else text_seg
            spans, _ = program.spans_batch(cps, bounds)
            if not self.gaps:  # tiktoken: every character matched, by non-empty matches
                in_text = keep[np.minimum(np.searchsorted(bounds, spans[:, 0], side="right") - 1, keep.size - 1)] \
                    if spans.size else np.zeros(0, bool)
                lengths = spans[in_text, 1] - spans[in_text, 0]
                if (lengths == 0).any() or int(lengths.sum()) != int(np.diff(seg_bounds)[text_seg].sum()):
                    return None
            bounds = _cuts(bounds, spans, keep)
        starts, ends = bounds[:-1], bounds[1:]
        nonempty = ends > starts
        starts, ends = starts[nonempty], ends[nonempty]
        seg = _segment_of(seg_bounds, starts)
        ids = tid[seg]
        row_of_seg = np.repeat(np.arange(len(rows), dtype=np.int64), np.array(per_row, dtype=np.int64))
        counts = np.bincount(row_of_seg[seg], minlength=len(rows)) if seg.size else np.zeros(len(rows), np.int64)
        splits = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=splits[1:])
        if len(raw) != len(joined):  # characters beyond ASCII: offsets in bytes
            starts, ends = _byte_offsets(cps, starts, ends)
        return Pieces(np.frombuffer(raw, dtype=np.uint8), starts.astype(np.int64), ends.astype(np.int64),
                      ids.astype(np.int32), splits)

    def pieces_one(self, text: str) -> Pieces | None:
        """The pieces of one text in one compiled call
        (:func:`~.regex_kernels.chain_pieces`): None when a pattern is not
        compiled, where tiktoken's rules fail (the regex path names the
        place) or for a lone surrogate (its error is the regex path's)."""
        packed = self._packed
        if packed is None or self.prefix_at is not None:
            return None
        try:
            cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        from .regex_kernels import chain_pieces

        k, starts, ends = chain_pieces(cps, *packed, self.gaps)
        if k < 0:
            return None
        return Pieces(np.frombuffer(raw, dtype=np.uint8), starts, ends, np.full(k, -1, dtype=np.int32),
                      np.array([0, k], dtype=np.int64))

    def pieces(self, rows: list[list[tuple[int, str]]], first_index: int = 0) -> Pieces:
        """Pieces of texts given as ``(id, string)`` stretches.  The spans
        are gathered in characters of all the stretches joined, then turned
        into UTF-8 offsets in one pass (no Python work per piece but the
        span itself)."""
        if len(rows) == 1 and len(rows[0]) == 1 and rows[0][0][0] < 0 and self._packed is not None:
            done = self.pieces_one(rows[0][0][1])  # one text, no added token: one compiled call
            if done is not None:
                return done
        # The compiled programs pay a fixed cost per call (arrays, NumPy
        # steps) that regex does not: they take batches and long texts.
        if self.programs is not None and self.prefix_at is None and (
                len(rows) >= COMPILED_MIN_ROWS or sum(len(s) for row in rows for _, s in row) >= COMPILED_MIN_CHARS):
            done = self._compiled_pieces(rows, first_index)
            if done is not None:
                return done
        strings: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        special_at: list[int] = []  # index (in starts) of each added/special token's piece
        special_ids: list[int] = []
        splits = [0]
        pos = 0
        spans = self.spans
        for row in rows:
            for tid, s in row:
                if tid >= 0:
                    special_at.append(len(starts))
                    special_ids.append(tid)
                    starts.append(pos)
                    ends.append(pos + len(s))
                elif self.prefix_at is not None:  # spaces put in: the pieces are new strings
                    tail = self._tail
                    for part in self.prefixed(s):
                        for a, b in (tail.spans(part) if tail is not None else ((0, len(part)),)):
                            starts.append(pos + a)
                            ends.append(pos + b)
                        strings.append(part)
                        pos += len(part)
                    continue
                elif pos:
                    for a, b in spans(s):
                        starts.append(pos + a)
                        ends.append(pos + b)
                else:
                    for a, b in spans(s):
                        starts.append(a)
                        ends.append(b)
                strings.append(s)
                pos += len(s)
            splits.append(len(starts))
        joined = "".join(strings)
        raw = _joined_utf8(joined, rows, first_index)
        st = np.array(starts, dtype=np.int64)
        en = np.array(ends, dtype=np.int64)
        if len(raw) != len(joined):  # characters beyond ASCII: offsets in bytes
            st, en = _byte_offsets(np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32), st, en)
        ids = np.full(st.size, -1, dtype=np.int32)
        if special_at:
            ids[np.array(special_at, dtype=np.int64)] = special_ids
        return Pieces(np.frombuffer(raw, dtype=np.uint8), st, en, ids, np.array(splits, dtype=np.int64))
