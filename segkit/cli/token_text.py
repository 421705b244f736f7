"""Output lines of token strings or ids, written with NumPy, not per token
in Python.

``segkit tokenize`` prints one line per text: its tokens (or ids) joined by
spaces.  Joining Python strings token by token ran at about 0.5 MB of text a
second for BPE; these functions build the output bytes of a whole batch with
array operations instead, a chunk of tokens at a time (memory stays bounded
for one very long line).

The layout: token ``t`` of the flat ``ids`` is written as its text followed
by a space, or by a newline when it is the last token of its row; an empty
row is a newline alone, written before the next token (or at the end).

>>> import numpy as np
>>> ids, rows = np.array([7, 42, 0, 123]), np.array([0, 2, 2, 4, 4])
>>> id_lines(ids, rows)
b'7 42\\n\\n0 123\\n\\n'
>>> data = np.frombuffer(b"ab world", np.uint8)
>>> table_lines(np.array([0, 1]), np.array([0, 2]), data, np.array([0, 2]), np.array([2, 8]))
b'ab  world\\n'
"""

from __future__ import annotations

import numpy as np

#: Tokens per chunk of output (bounded memory for one long line).
CHUNK_TOKENS = 1 << 20

_POW10 = 10 ** np.arange(19, dtype=np.int64)


def _exclusive_cumsum(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.size, dtype=np.int64)
    if a.size:
        out[0] = 0
        np.cumsum(a[:-1], out=out[1:])
    return out


def _layout(ids: np.ndarray, rows: np.ndarray):
    """Per token: its separator byte and the number of empty rows written
    before it; and the number of empty rows after the last token."""
    counts = np.diff(rows)
    sep = np.full(ids.size, 0x20, dtype=np.uint8)
    nonempty = counts > 0
    sep[rows[1:][nonempty] - 1] = 0x0A
    empty = (~nonempty).astype(np.int64)
    before = np.cumsum(empty)  # empty rows up to and including each row
    pre = np.zeros(ids.size, dtype=np.int64)
    firsts = rows[:-1][nonempty]
    prior = np.concatenate([[0], before[:-1]])[nonempty]  # empty rows before each non-empty row
    pre[firsts] = np.diff(np.concatenate([[0], prior]))
    tail = int(before[-1] - (prior[-1] if prior.size else 0)) if counts.size else 0
    return sep, pre, tail


def _assemble(raw: np.ndarray, lens: np.ndarray, sep: np.ndarray, pre: np.ndarray,
              byte_map: "tuple[np.ndarray, np.ndarray, np.ndarray] | None") -> np.ndarray:
    """The output bytes of one chunk of tokens: token ``k`` is the bytes
    ``raw[sum(lens[:k]):sum(lens[:k + 1])]`` (each byte spelled through
    ``byte_map``, a ``(length, first, second)`` table of 1- or 2-byte
    spellings), after ``pre[k]`` newlines and before ``sep[k]``."""
    k = lens.size
    first_byte = _exclusive_cumsum(lens)
    if byte_map is None:
        nb = None
        out_lens = lens
    else:
        nb = byte_map[0][raw]
        c = np.zeros(raw.size + 1, dtype=np.int64)
        np.cumsum(nb, out=c[1:])
        out_lens = c[first_byte + lens] - c[first_byte]
    item = pre + out_lens + 1
    start = _exclusive_cumsum(item)
    total = int(item.sum()) if k else 0
    out = np.empty(total, dtype=np.uint8)
    text_start = start + pre
    tok_of_byte = np.repeat(np.arange(k), lens)
    if nb is None:
        pos = text_start[tok_of_byte] + (np.arange(raw.size) - first_byte[tok_of_byte])
        out[pos] = raw
    else:
        pos = text_start[tok_of_byte] + (c[:-1] - c[first_byte][tok_of_byte])
        out[pos] = byte_map[1][raw]
        two = nb == 2
        out[pos[two] + 1] = byte_map[2][raw[two]]
    out[text_start + out_lens] = sep
    if pre.any():
        n = pre[pre > 0]
        s = start[pre > 0]
        out[np.repeat(s, n) + (np.arange(int(n.sum())) - np.repeat(_exclusive_cumsum(n), n))] = 0x0A
    return out


def _lines(ids: np.ndarray, rows: np.ndarray, pieces, byte_map) -> bytes:
    ids = np.asarray(ids, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    sep, pre, tail = _layout(ids, rows)
    parts = []
    for a in range(0, ids.size, CHUNK_TOKENS):
        b = min(a + CHUNK_TOKENS, ids.size)
        raw, lens = pieces(ids[a:b])
        parts.append(_assemble(raw, lens, sep[a:b], pre[a:b], byte_map).tobytes())
    parts.append(b"\n" * tail)
    return b"".join(parts)


def id_lines(ids: np.ndarray, rows: np.ndarray) -> bytes:
    """The lines of ``--format ids``: each row's ids in decimal, joined by
    spaces (ids are non-negative)."""

    def digits(chunk: np.ndarray):
        nd = np.searchsorted(_POW10, chunk, side="right")
        nd = np.maximum(nd, 1)
        rep = np.repeat(chunk, nd)
        ndr = np.repeat(nd, nd)
        k = np.arange(rep.size) - np.repeat(_exclusive_cumsum(nd), nd)
        raw = (rep // _POW10[ndr - 1 - k] % 10 + 48).astype(np.uint8)
        return raw, nd

    return _lines(ids, rows, digits, None)


def table_lines(ids: np.ndarray, rows: np.ndarray, data: np.ndarray, start: np.ndarray, end: np.ndarray,
                byte_map=None) -> bytes:
    """The lines of token strings: id ``i`` is ``data[start[i]:end[i]]``,
    each byte spelled through ``byte_map`` when given (see
    :func:`gpt2_byte_map`)."""

    def gather(chunk: np.ndarray):
        s = start[chunk].astype(np.int64)
        lens = end[chunk].astype(np.int64) - s
        idx = np.arange(int(lens.sum())) + np.repeat(s - _exclusive_cumsum(lens), lens)
        return data[idx], lens

    return _lines(ids, rows, gather, byte_map)


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
