"""Reading training corpora: paths or documents, streamed in chunks.

A corpus is a path (``str`` or :class:`os.PathLike`), a list or tuple of
:class:`os.PathLike` paths, or any other iterable of ``str`` documents. A
file counts as *one* document holding its whole content (bytes as stored: no
newline translation; a BOM is content). Files are read in chunks and decoded
incrementally, so a file of any size needs memory for one chunk only; invalid
UTF-8 raises :class:`CorpusError` naming the file and the byte offset (or is
replaced by U+FFFD with ``errors="replace"``).

:func:`segment_batches` turns a corpus into batches of *segments* for the
compiled counters: UTF-8 bytes with ``starts``/``ends``, where every segment
is a complete piece of text for the pre-tokenizer (special tokens removed,
never spanning two documents). A file's text is cut between chunks only where
a ``cut`` function proves that pre-tokens do not cross; the rest is carried
into the next chunk.

>>> batches = segment_batches(["ab<s>c", "", "d"], ["<s>"], cut=None)
>>> [bytes(buf[s:e]) for buf, starts, ends in batches for s, e in zip(starts, ends)]
[b'ab', b'c', b'd']
"""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence, Union

import numpy as np

Corpus = Union[str, "os.PathLike[str]", Sequence["os.PathLike[str]"], Iterable[str]]

#: bytes read per chunk from a file
CHUNK_BYTES = 1 << 18
#: documents are grouped into batches of about this many bytes (the counting
#: table reserves one entry per byte of a batch, so this also bounds its slack)
BATCH_BYTES = 1 << 18


class CorpusError(ValueError):
    """A corpus that cannot be read: invalid UTF-8 (with file and byte offset),
    a document that is not a string, ..."""


def check_special_tokens(special_tokens: Iterable[str]) -> list[str]:
    """The special tokens as a list; ValueError for empty, duplicate or non-str ones."""
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(f"special_tokens must be a list of strings, found a single {type(special_tokens).__name__}")
    out: list[str] = []
    for i, tok in enumerate(special_tokens):
        if not isinstance(tok, str):
            raise TypeError(f"special token {i} must be a str, found {type(tok).__name__}: {tok!r}")
        if not tok:
            raise ValueError(f"special token {i} is empty")
        if tok in out:
            raise ValueError(f"special token {tok!r} is given twice")
        try:
            tok.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"special token {i} is not encodable as UTF-8: {e}") from None
        out.append(tok)
    return out


def corpus_paths(corpus: Corpus) -> list[Path] | None:
    """The files of ``corpus`` (checked to exist), or None if it is an
    iterable of documents."""
    if isinstance(corpus, (str, os.PathLike)):
        paths = [Path(corpus)]
    elif isinstance(corpus, (list, tuple)) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        paths = [Path(p) for p in corpus]
    else:
        return None
    for p in paths:
        if not p.exists():
            raise FileNotFoundError(f"training file not found: {p}")
        if p.is_dir():
            raise IsADirectoryError(f"training corpus is a directory, not a file: {p}")
    return paths


def iter_file_text(path: Path, errors: str = "strict", chunk_size: int | None = None,
                   on_bytes: Callable[[int], None] | None = None) -> Iterator[str]:
    """Decoded text of ``path`` in pieces of about ``chunk_size`` bytes
    (joined, the pieces are the file's content).

    Raises
    ------
    CorpusError
        Invalid UTF-8 (``errors="strict"``): the message names the file and the
        byte offset of the first bad byte.
    """
    if chunk_size is None:
        chunk_size = CHUNK_BYTES
    dec = codecs.getincrementaldecoder("utf-8")(errors)
    fed = 0
    with open(path, "rb") as f:
        while True:
            raw = f.read(chunk_size)
            final = not raw
            pending = len(dec.getstate()[0])
            try:
                text = dec.decode(raw, final)
            except UnicodeDecodeError as e:
                offset = fed - pending + e.start
                bad = e.object[e.start : e.start + 1]
                raise CorpusError(
                    f"{path}: not valid UTF-8 at byte offset {offset} (byte {bad.hex() or 'end of file'}; "
                    f"{e.reason}); pass errors='replace' to substitute U+FFFD"
                ) from None
            fed += len(raw)
            if on_bytes is not None and raw:
                on_bytes(len(raw))
            if text:
                yield text
            if final:
                return


def _special_regex(special_tokens: Sequence[str]):
    if not special_tokens:
        return None, 0
    toks = sorted((t.encode("utf-8") for t in special_tokens), key=len, reverse=True)
    return re.compile(b"|".join(re.escape(t) for t in toks)), len(toks[0])


def _split(data: bytes, special, lo: int, limit: int) -> tuple[list[tuple[int, int]], int]:
    """Segments of ``data[lo:]`` between special tokens that start before
    ``limit``; returns (complete segments, start of the unfinished last one)."""
    segs = []
    s0 = lo
    if special is not None:
        for m in special.finditer(data, lo):
            if m.start() >= limit:
                break
            if m.start() > s0:
                segs.append((s0, m.start()))
            s0 = m.end()
    return segs, s0


def segment_batches(
    corpus: Corpus,
    special_tokens: Sequence[str] = (),
    *,
    cut: Callable[[np.ndarray, int, int], int] | None,
    errors: str = "strict",
    chunk_size: int | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Batches ``(buf, starts, ends)`` of complete segments of ``corpus``.

    ``cut(buf, lo, hi)`` must return the largest position ``lo < i <= hi``
    where a file's text may be cut without changing its pre-tokens, or -1
    (then the text is carried on until such a position or the end of the
    file). It is needed only for files.
    """
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', found {errors!r}")
    special, maxlen = _special_regex(special_tokens)
    paths = corpus_paths(corpus)
    if paths is not None:
        for path in paths:
            yield from _file_batches(path, special, maxlen, cut, errors, chunk_size, on_bytes)
        return
    if isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be a path, a list of paths or an iterable of str documents, found bytes")
    parts: list[bytes] = []
    lens: list[int] = []
    size = 0
    for i, doc in enumerate(corpus):
        if not isinstance(doc, str):
            raise CorpusError(f"document {i} must be a str, found {type(doc).__name__}")
        try:
            data = doc.encode("utf-8")
        except UnicodeEncodeError as e:
            if errors == "strict":
                raise CorpusError(f"document {i}: not encodable as UTF-8 at character {e.start} ({e.reason})") from None
            data = doc.encode("utf-8", "replace")
        if on_bytes is not None:
            on_bytes(len(data))
        if special is None:
            pieces = (data,)
        else:
            pieces = special.split(data)
        for piece in pieces:
            if piece:
                parts.append(piece)
                lens.append(len(piece))
                size += len(piece)
        if size >= BATCH_BYTES:
            yield _batch(parts, lens)
            parts, lens, size = [], [], 0
    if parts:
        yield _batch(parts, lens)


def _batch(parts: list[bytes], lens: list[int]):
    buf = np.frombuffer(b"".join(parts), dtype=np.uint8)
    ends = np.cumsum(np.asarray(lens, dtype=np.int64))
    starts = ends - np.asarray(lens, dtype=np.int64)
    return buf, starts, ends


def _file_batches(path, special, maxlen, cut, errors, chunk_size, on_bytes, text_iter=None):
    # text_iter: the file's text in pieces, if not all of it (a byte range; see training/ranges.py)
    carry = b""
    if text_iter is None:
        text_iter = iter_file_text(path, errors, chunk_size, on_bytes)
    final = False
    while not final:
        text = next(text_iter, None)
        if text is None:
            final = True
            data = carry
        else:
            data = carry + text.encode("utf-8")
        if not data:
            continue
        buf = np.frombuffer(data, dtype=np.uint8)
        if final:
            segs, s0 = _split(data, special, 0, len(data) + 1)
            segs.append((s0, len(data)))
            carry = b""
        else:
            limit = len(data) - maxlen + 1 if special is not None else len(data)
            segs, s0 = _split(data, special, 0, max(limit, 0))
            c = cut(buf, s0, max(limit, s0)) if limit > s0 else -1
            if c > s0:
                segs.append((s0, c))
                carry = data[c:]
            else:
                carry = data[s0:]
        segs = [(s, e) for s, e in segs if e > s]
        if segs:
            arr = np.asarray(segs, dtype=np.int64)
            yield buf, arr[:, 0].copy(), arr[:, 1].copy()
