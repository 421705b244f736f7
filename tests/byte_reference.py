"""Obviously correct greedy longest match over bytes (the reference the byte
alphabet of the engine is tested against).

Forward: at each position take the longest vocabulary key that starts
there; if there is none, the byte there becomes ``unknown``.  Backward: the
same from the end, taking the longest key that *ends* at the position.
Quadratic in the worst case; only for tests.
"""

from __future__ import annotations


def greedy_forward(vocab: dict[bytes, int], text: bytes, unknown: int = -1) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` of each token, left to right."""
    longest = max(map(len, vocab), default=0)
    out = []
    i = 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 0, -1):
            piece = text[i : i + n]
            if piece in vocab:
                out.append((vocab[piece], i, i + n))
                i += n
                break
        else:
            out.append((unknown, i, i + 1))
            i += 1
    return out


def greedy_backward(vocab: dict[bytes, int], text: bytes, unknown: int = -1) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` of each token, in text order, matched right to left."""
    longest = max(map(len, vocab), default=0)
    out = []
    j = len(text)
    while j > 0:
        for n in range(min(longest, j), 0, -1):
            piece = text[j - n : j]
            if piece in vocab:
                out.append((vocab[piece], j - n, j))
                j -= n
                break
        else:
            out.append((unknown, j - 1, j))
            j -= 1
    return out[::-1]


def greedy(vocab: dict[bytes, int], text: bytes, direction: str = "forward", unknown: int = -1):
    """:func:`greedy_forward` or :func:`greedy_backward`."""
    return (greedy_forward if direction == "forward" else greedy_backward)(vocab, text, unknown)


def char_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The characters of ``text`` that the UTF-8 bytes ``start:end`` touch
    (a byte range inside a character covers the whole character)."""
    pos = 0
    first = last = None
    for i, ch in enumerate(text):
        n = len(ch.encode("utf-8"))
        if first is None and pos + n > start:
            first = i
        if pos < end:
            last = i
        pos += n
    return first, last + 1
