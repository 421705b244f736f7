"""Output lines of token strings or ids, built with array operations, not
per token in Python.

``segkit tokenize`` prints one line per text: its tokens (or ids) joined by
spaces.  Spelling each token in Python as it was printed (its bytes, then
GPT-2's byte-level spelling, then a str join) ran at about 0.5 MB of text a
second for BPE.  Here each id's output is made once per model for the whole
vocabulary (:func:`spelled_table`, :func:`id_table`), each followed by a
space, and a batch's output is one gather of those bytes, a chunk of tokens
at a time (memory stays bounded for one very long line); the last token of
each line gets a newline instead of its space, and an empty line is a
newline inserted before the next token (or at the end).

>>> import numpy as np
>>> ids, rows = np.array([7, 42, 0, 123]), np.array([0, 2, 2, 4, 4])
>>> table_lines(ids, rows, id_table(124))
b'7 42\\n\\n0 123\\n\\n'
>>> data, start, end = np.frombuffer(b"ab world", np.uint8), np.array([0, 2]), np.array([2, 8])
>>> table_lines(np.array([0, 1]), np.array([0, 2]), spelled_table(data, start, end, gpt2_byte_map()))
b'ab \\xc4\\xa0world\\n'
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: Tokens per chunk of output.
CHUNK_TOKENS = 1 << 20


class Table(NamedTuple):
    """Id ``i`` is written as ``data[start[i]:start[i] + length[i]]``: its
    spelling followed by one space."""

    data: np.ndarray
    start: np.ndarray
    length: np.ndarray


def _exclusive_cumsum(a: np.ndarray) -> np.ndarray:
    out = np.zeros(a.size, dtype=np.int64)
    if a.size > 1:
        np.cumsum(a[:-1], out=out[1:])
    return out


def _with_spaces(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> Table:
    lens = (end - start).astype(np.int64)
    lengths = lens + 1
    new_start = _exclusive_cumsum(lengths)
    out = np.full(int(lengths.sum()), 0x20, dtype=np.uint8)
    k = np.repeat(np.arange(lens.size), lens)
    offset = np.arange(k.size) - np.repeat(_exclusive_cumsum(lens), lens)
    out[new_start[k] + offset] = data[start[k] + offset]
    return Table(out, new_start, lengths)


def id_table(n: int) -> Table:
    """The decimal spelling of every id below ``n``."""
    blob = np.frombuffer(b"".join(b"%d" % i for i in range(n)), dtype=np.uint8)
    lens = np.array([len(b"%d" % i) for i in range(n)], dtype=np.int64)
    start = _exclusive_cumsum(lens)
    return _with_spaces(blob, start, start + lens)


def bytes_table(spellings: list) -> Table:
    """A table of the given spellings (``bytes``), id ``i`` being
    ``spellings[i]``."""
    lens = np.fromiter((len(b) for b in spellings), dtype=np.int64, count=len(spellings))
    start = _exclusive_cumsum(lens)
    return _with_spaces(np.frombuffer(b"".join(spellings), dtype=np.uint8), start, start + lens)


def spelled_table(data: np.ndarray, start: np.ndarray, end: np.ndarray, byte_map=None) -> Table:
    """Every id's spelling: id ``i`` is ``data[start[i]:end[i]]``, each byte
    spelled through ``byte_map`` (a ``(length, first, second)`` table of 1-
    or 2-byte UTF-8 spellings, see :func:`gpt2_byte_map`) when given."""
    data = np.asarray(data, dtype=np.uint8)
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    if byte_map is not None:
        length, first, second = byte_map
        nb = length[data]
        pos = np.zeros(data.size + 1, dtype=np.int64)
        np.cumsum(nb, out=pos[1:])
        out = np.empty(int(pos[-1]), dtype=np.uint8)
        out[pos[:-1]] = first[data]
        two = nb == 2
        out[pos[:-1][two] + 1] = second[data[two]]
        data, start, end = out, pos[start], pos[end]
    return _with_spaces(data, start, end)


def table_lines(ids: np.ndarray, rows: np.ndarray, table: Table) -> bytes:
    """The output lines of a batch: the ids of row ``r`` are
    ``ids[rows[r]:rows[r + 1]]``, written through ``table``."""
    ids = np.asarray(ids, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    counts = np.diff(rows)
    if counts.size == 0:
        return b""
    last = np.zeros(ids.size, dtype=bool)
    nonempty = counts > 0
    last[rows[1:][nonempty] - 1] = True
    empty_before = np.cumsum(~nonempty)  # empty rows up to each row
    prior = np.concatenate([[0], empty_before[:-1]])[nonempty]
    pre = np.zeros(ids.size, dtype=np.int64)  # newlines before each token (empty rows)
    pre[rows[:-1][nonempty]] = np.diff(np.concatenate([[0], prior]))
    tail = int(empty_before[-1] - (prior[-1] if prior.size else 0))
    parts = []
    for a in range(0, ids.size, CHUNK_TOKENS):
        chunk = ids[a : a + CHUNK_TOKENS]
        s = table.start[chunk]
        n = table.length[chunk]
        ends = np.cumsum(n)
        idx = np.arange(int(ends[-1]), dtype=np.int64)
        idx += np.repeat(s - (ends - n), n)
        out = table.data[idx]
        out[ends[last[a : a + CHUNK_TOKENS]] - 1] = 0x0A
        p = pre[a : a + CHUNK_TOKENS]
        if p.any():
            where = np.repeat(ends - n, p)
            out = np.insert(out, where, 0x0A)
        parts.append(out.tobytes())
    parts.append(b"\n" * tail)
    return b"".join(parts)


_GPT2: list = []


def gpt2_byte_map() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GPT-2's byte-level spelling of each byte as UTF-8: ``(length, first
    byte, second byte)`` arrays indexed by the byte (every stand-in
    character is below U+0800: one or two bytes)."""
    if not _GPT2:
        from ..presets.bpe.files import byte_decoder

        length = np.zeros(256, np.int64)
        first = np.zeros(256, np.uint8)
        second = np.zeros(256, np.uint8)
        for ch, b in byte_decoder().items():
            u = ch.encode("utf-8")
            length[b] = len(u)
            first[b] = u[0]
            second[b] = u[1] if len(u) > 1 else 0
        _GPT2.append((length, first, second))
    return _GPT2[0]
