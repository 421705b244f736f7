"""A text being normalized, with where each of its characters came from:
HF ``tokenizers``' ``NormalizedString``, per character.

Every character of the normalized text keeps the span of the original
text it stands for (``starts[i]``, ``ends[i]``, character offsets into the
whole original text).  The operations change the text and these spans as
HF's do, so that the offsets of tokens made from it are HF's:

* a character that replaces one keeps that character's span;
* an inserted character takes the span of the character before it (of
  nothing, an empty span at the start, when there is none);
* removed characters leave no trace.

>>> t = NormalizedText.of("ab c")
>>> t.replace(lambda s: [(2, 3)], "\\u2581\\u2581")
>>> t.text, t.original_span(2, 4)
('ab\\u2581\\u2581c', (2, 3))
>>> t.prepend("\\u2581")
>>> t.text, t.starts[:2], t.ends[:2]
('\\u2581ab\\u2581\\u2581c', [0, 0], [1, 1])

Spans are kept per character, not per byte as HF keeps them: every byte of
one character shares its span there, so the two agree.
"""

from __future__ import annotations

from typing import Callable, Iterable

#: ``find(text) -> [(start, end), ...]``: the matches of a pattern in a
#: text, leftmost first, not overlapping (character offsets).
Finder = Callable[[str], list]

BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


class NormalizedText:
    """The normalized text of a part of an original text (see the module
    documentation).

    Attributes
    ----------
    text
        The normalized text.
    starts, ends
        Per character of ``text``: the span of the original text it comes
        from (absolute character offsets).
    shift
        Where in the original text this part starts (HF's
        ``original_shift``).
    """

    __slots__ = ("text", "starts", "ends", "shift")

    def __init__(self, text: str, starts: list[int], ends: list[int], shift: int) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        self.shift = shift

    @classmethod
    def of(cls, text: str, shift: int = 0) -> "NormalizedText":
        """``text`` unchanged: each character its own span (offsets from ``shift``)."""
        r = range(shift, shift + len(text))
        return cls(text, list(r), list(range(shift + 1, shift + len(text) + 1)), shift)

    def __repr__(self) -> str:
        return f"NormalizedText({self.text!r}, shift={self.shift})"

    # ---------------------------------------------------------- changing
    def transform(self, items: Iterable[tuple[str, int]], initial_offset: int = 0, start: int = 0,
                  stop: int | None = None) -> None:
        """Replace characters ``start:stop`` by ``items``, HF's ``transform_range``.

        ``items`` are ``(char, change)``: ``1`` a new character, ``0`` one
        that replaces the next old character, ``-n`` one that replaces the
        next old character and removes the ``n`` after it;
        ``initial_offset`` old characters are removed first.
        """
        stop = len(self.text) if stop is None else stop
        starts, ends = self.starts, self.ends
        k = start + initial_offset
        chars: list[str] = []
        new_s: list[int] = []
        new_e: list[int] = []
        for c, change in items:
            if change > 0:
                if k < 1:
                    a = b = self.shift
                else:
                    a, b = starts[k - 1], ends[k - 1]
            else:
                a, b = starts[k], ends[k]
                k += 1
                if change < 0:
                    k -= change
            chars.append(c)
            new_s.append(a)
            new_e.append(b)
        self.text = self.text[:start] + "".join(chars) + self.text[stop:]
        self.starts = starts[:start] + new_s + starts[stop:]
        self.ends = ends[:start] + new_e + ends[stop:]

    def map_chars(self, f: Callable[[str], str]) -> None:
        """Each character becomes ``f(char)`` (one or more characters: the
        first replaces it, the others are new), HF's ``lowercase``."""
        self.transform([(d, int(i > 0)) for c in self.text for i, d in enumerate(f(c))])

    def keep(self, keep: Callable[[str], bool]) -> None:
        """Remove the characters ``keep`` refuses (HF's ``filter``)."""
        items: list[tuple[str, int]] = []
        removed = 0
        removed_start = 0
        last = None
        for c in self.text:
            if keep(c):
                if last is None:
                    removed_start = removed
                else:
                    items.append((last, -removed))
                last = c
                removed = 0
            else:
                removed += 1
        if last is not None:
            items.append((last, -removed))
            self.transform(items, removed_start)
        else:
            self.text, self.starts, self.ends = "", [], []

    def prepend(self, s: str) -> None:
        """Put ``s`` first (nothing on an empty text), HF's ``prepend``."""
        if not self.text or not s:
            return
        items = [(c, int(i != 0)) for i, c in enumerate(s)] + [(self.text[0], 1)]
        self.transform(items, 0, 0, 1)

    def append(self, s: str) -> None:
        """Put ``s`` last, HF's ``append``."""
        if not s:
            return
        if self.text:
            self.transform([(self.text[-1], 0)] + [(c, 1) for c in s], 0, len(self.text) - 1)
        else:
            self.transform([(c, 1) for c in s])

    def replace(self, find: Finder, content: str) -> None:
        """Replace every match of ``find`` by ``content``, HF's ``replace``:
        the new characters all take the span of the match's last character."""
        spans = find(self.text)
        if not spans:
            return
        chars: list[str] = []
        new_s: list[int] = []
        new_e: list[int] = []
        text, starts, ends = self.text, self.starts, self.ends
        last = 0
        for a, b in spans:
            chars.append(text[last:a])
            new_s.extend(starts[last:a])
            new_e.extend(ends[last:a])
            if b < 1:
                sa = sb = self.shift
            else:
                sa, sb = starts[b - 1], ends[b - 1]
            chars.append(content)
            new_s.extend([sa] * len(content))
            new_e.extend([sb] * len(content))
            last = b
        chars.append(text[last:])
        new_s.extend(starts[last:])
        new_e.extend(ends[last:])
        self.text, self.starts, self.ends = "".join(chars), new_s, new_e

    def strip(self, left: bool, right: bool, is_space: Callable[[str], bool]) -> None:
        """Remove the white space at the start and/or the end, HF's ``lrstrip``."""
        text = self.text
        n = len(text)
        lead = 0
        if left:
            while lead < n and is_space(text[lead]):
                lead += 1
        trail = 0
        if right:
            while trail < n - lead and is_space(text[n - 1 - trail]):
                trail += 1
        if lead == 0 and trail == 0:
            return
        self.text = text[lead:n - trail]
        self.starts = self.starts[lead:n - trail]
        self.ends = self.ends[lead:n - trail]

    # ----------------------------------------------------------- reading
    def original_span(self, a: int, b: int) -> tuple[int, int]:
        """The original span of normalized characters ``a:b`` (``a < b``)."""
        return self.starts[a], self.ends[b - 1]

    def slice(self, a: int, b: int) -> "NormalizedText":
        """Characters ``a:b`` (``a < b``) as a part of their own."""
        return NormalizedText(self.text[a:b], self.starts[a:b], self.ends[a:b], self.starts[a])

    def split(self, matches: list[tuple[int, int]], behavior: str, invert: bool = False) -> list["NormalizedText"]:
        """The parts HF's ``NormalizedString::split`` makes of the text at
        ``matches`` (leftmost first, not overlapping), empty parts left out.

        >>> t = NormalizedText.of("a-b--c")
        >>> [p.text for p in t.split([(1, 2), (3, 4), (4, 5)], "contiguous")]
        ['a', '-', 'b', '--', 'c']
        >>> [p.text for p in t.split([(1, 2), (3, 4), (4, 5)], "merged_with_next")]
        ['a', '-b', '-', '-c']
        """
        pieces = with_gaps(matches, len(self.text))
        if invert:
            pieces = [(a, b, not m) for a, b, m in pieces]
        out: list[list] = []
        if behavior == "isolated":
            out = [[a, b, False] for a, b, _ in pieces]
        elif behavior == "removed":
            out = [[a, b, m] for a, b, m in pieces]
        elif behavior == "contiguous":
            prev = False
            for a, b, m in pieces:
                if m == prev and out:
                    out[-1][1] = b
                else:
                    out.append([a, b, False])
                prev = m
        elif behavior == "merged_with_previous":
            prev = False
            for a, b, m in pieces:
                if m and not prev and out:
                    out[-1][1] = b
                else:
                    out.append([a, b, False])
                prev = m
        elif behavior == "merged_with_next":
            prev = False
            for a, b, m in reversed(pieces):
                if m and not prev and out:
                    out[-1][0] = a
                else:
                    out.append([a, b, False])
                prev = m
            out.reverse()
        else:
            raise ValueError(f"split behavior must be one of {', '.join(BEHAVIORS)}, found {behavior!r:.60}")
        return [self.slice(a, b) for a, b, removed in out if not removed and b > a]


def with_gaps(matches: list[tuple[int, int]], n: int) -> list[tuple[int, int, bool]]:
    """``(start, end, is_match)`` covering ``0:n``: the matches and the text
    between them (HF's ``find_matches``; an empty text is one empty gap).

    >>> with_gaps([(1, 2)], 4)
    [(0, 1, False), (1, 2, True), (2, 4, False)]
    """
    if n == 0:
        return [(0, 0, False)]
    out = []
    prev = 0
    for a, b in matches:
        if prev != a:
            out.append((prev, a, False))
        out.append((a, b, True))
        prev = b
    if prev != n:
        out.append((prev, n, False))
    return out
