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
    stretch is one piece."""

    def __init__(self, pattern: str | None, gaps: bool = False) -> None:
        import regex

        self.pattern = pattern
        self.rx = regex.compile(pattern) if pattern is not None else None
        self.gaps = gaps

    def spans(self, s: str) -> list[tuple[int, int]]:
        if self.rx is None:
            return [(0, len(s))] if s else []
        out = []
        p = 0
        gaps = self.gaps
        for a, b in matches(self.rx, s):
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

    def pieces(self, rows: list[list[tuple[int, str]]], first_index: int = 0) -> Pieces:
        """Pieces of texts given as ``(id, string)`` stretches."""
        chunks: list[bytes] = []
        starts: list[int] = []
        ends: list[int] = []
        ids: list[int] = []
        splits = [0]
        pos = 0
        for r, row in enumerate(rows):
            for tid, s in row:
                raw = utf8(s, first_index + r if len(rows) > 1 else None)
                if tid >= 0:
                    starts.append(pos)
                    ends.append(pos + len(raw))
                    ids.append(tid)
                else:
                    if s.isascii():
                        for a, b in self.spans(s):
                            starts.append(pos + a)
                            ends.append(pos + b)
                            ids.append(-1)
                    else:
                        cps = np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)
                        size = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
                        cum = np.zeros(cps.size + 1, dtype=np.int64)
                        np.cumsum(size, out=cum[1:])
                        for a, b in self.spans(s):
                            starts.append(pos + int(cum[a]))
                            ends.append(pos + int(cum[b]))
                            ids.append(-1)
                chunks.append(raw)
                pos += len(raw)
            splits.append(len(starts))
        return Pieces(
            np.frombuffer(b"".join(chunks), dtype=np.uint8),
            np.array(starts, dtype=np.int64),
            np.array(ends, dtype=np.int64),
            np.array(ids, dtype=np.int32),
            np.array(splits, dtype=np.int64),
        )
