"""Counting a corpus in independent pieces, for trainers that run on a cluster.

:mod:`segkit.scale.dask` splits training corpora into tasks, one per file or per
byte range of a file, counts each on a worker and adds the counts up; the
merges then run on the client. Nothing here imports a cluster library: the
functions take and return plain numpy arrays, so any engine (Dask, Ray,
multiprocessing) can call them.

A file is cut only where the text on both sides counts as it does in the
whole file: for BPE at a position where GPT-2's pre-tokens never cross
(:func:`segkit.presets.bpe.pretokenize_kernels.gpt2_safe_cut`'s rule) and that lies
inside no occurrence of a special token; for WordPiece right after a space
or newline (where :func:`segkit.training.wordpiece.count_corpus_words` cuts
its own chunks). Both sides of a range compute a boundary the same way from
the same nominal position, so the ranges of a file tile it exactly.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
>>> _ = open(path, "w").write("low lower newest " * 50)
>>> parts = [count_bpe_range(p, a, b) for p, a, b in plan_ranges([path], 100)]
>>> len(parts)
9
>>> pieces = combine_bpe(parts)
>>> sorted(zip(_pieces_as_bytes(pieces), pieces[2].tolist()))[:3]
[(b' ', 1), (b' low', 49), (b' lower', 50)]
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from .corpus import CHUNK_BYTES, CorpusError, _file_batches, _special_regex, check_file, check_special_tokens, open_corpus_file

#: default size of the byte ranges a large file is split into
SPLIT_BYTES = 64 << 20
#: bytes read at a time while looking for a boundary
_WINDOW = 4096

Pieces = tuple  # (blob uint8, lengths int64, counts int64): unique pieces and their counts


def corpus_files(paths) -> list[str]:
    """The files of ``paths`` (a path or a list/tuple of paths), checked to exist."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise TypeError(f"paths must be a path or a list of paths, found {type(paths).__name__}")
    out = []
    for i, p in enumerate(paths):
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"path {i} must be a str or os.PathLike, found {type(p).__name__}: {p!r:.80}")
        p = os.fspath(p)
        check_file(Path(p))  # a regular file (not a FIFO or a device): see segkit.runtime.regular_files
        out.append(p)
    return out


def plan_ranges(paths, split_bytes: int | None = SPLIT_BYTES) -> list[tuple[str, int, int]]:
    """``(path, start, stop)`` nominal byte ranges: each file in pieces of
    ``split_bytes`` (None: one piece per file). The counting functions move
    both ends to the next boundary of the file."""
    if split_bytes is not None and (isinstance(split_bytes, bool) or not isinstance(split_bytes, int) or split_bytes < 1):
        raise ValueError(f"split_bytes must be a positive int or None, found {split_bytes!r}")
    out = []
    for p in corpus_files(paths):
        size = os.path.getsize(p)
        step = size if split_bytes is None else split_bytes
        starts = list(range(0, size, max(step, 1))) or [0]
        for a in starts:
            out.append((p, a, min(size, a + step) if size else 0))
    return out


def _read(f, pos: int, n: int) -> bytes:
    f.seek(pos)
    return f.read(n)


#: the most bytes read at a time while looking for a boundary (the window
#: doubles from _WINDOW while none is found)
_MAX_WINDOW = 1 << 20


def bpe_boundary(path: str, pos: int, special_tokens: Sequence[str] = ()) -> int:
    """The first position at or after ``pos`` where the file may be cut for
    BPE counting (0 and the file size are boundaries).

    One compiled pass per window finds the next cut; windows double while
    none is found, so text with no cut for megabytes (one long run of a
    letter, or of CJK ideographs) costs a few reads, not a call per byte."""
    from ..presets.bpe.char_classes import class_table as char_classes
    from ..presets.bpe.pretokenize_kernels import gpt2_first_cut as _first_cut

    size = os.path.getsize(path)
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    cls = char_classes()
    specials = [t.encode("utf-8") for t in special_tokens]
    longest = max(map(len, specials), default=1)
    window = _WINDOW
    with open_corpus_file(path) as f:
        base = max(0, pos - 4)  # context for the character before the cut
        while True:
            data = _read(f, base, pos - base + window + 4)
            buf = np.frombuffer(data, dtype=np.uint8)
            at_eof = base + len(data) >= size
            last = len(buf) if at_eof else len(buf) - 4  # leave the next character known
            i = pos - base
            while True:
                i = int(_first_cut(buf, i, last, cls))
                if i < 0:
                    break
                c = base + i
                if not (specials and _inside_special(f, c, specials, longest)):
                    return c
                i += 1
            if at_eof:
                return size
            base = base + last - 4
            pos = base + 4
            window = min(2 * window, _MAX_WINDOW)


def _inside_special(f, c: int, specials: list[bytes], longest: int) -> bool:
    lo = max(0, c - longest + 1)
    around = _read(f, lo, c - lo + longest - 1)
    for tok in specials:
        k = around.find(tok)
        while k >= 0:
            if lo + k < c < lo + k + len(tok):
                return True
            k = around.find(tok, k + 1)
    return False


def wordpiece_boundary(path: str, pos: int) -> int:
    """The first position at or after ``pos`` that follows a space or a
    newline (0 and the file size are boundaries)."""
    size = os.path.getsize(path)
    if pos <= 0 or pos >= size:
        return min(max(pos, 0), size)
    window = _WINDOW
    with open_corpus_file(path) as f:
        at = pos - 1
        while at < size:
            data = _read(f, at, window)
            k = min((i for i in (data.find(b" "), data.find(b"\n")) if i >= 0), default=-1)
            if k >= 0:
                return at + k + 1
            at += len(data)
            window = min(2 * window, _MAX_WINDOW)
    return size


def iter_range_text(path: str, start: int, stop: int, errors: str = "strict",
                    chunk_size: int = CHUNK_BYTES) -> Iterator[str]:
    """Decoded text of bytes ``start:stop`` of ``path`` (a range that starts
    and ends on character boundaries), in pieces; invalid UTF-8 raises
    :class:`CorpusError` with the file's byte offset."""
    dec = codecs.getincrementaldecoder("utf-8")(errors)
    fed = start
    with open_corpus_file(path) as f:
        f.seek(start)
        while True:
            raw = f.read(min(chunk_size, stop - fed)) if fed < stop else b""
            final = not raw
            pending = len(dec.getstate()[0])
            try:
                text = dec.decode(raw, final)
            except UnicodeDecodeError as e:
                offset = fed - pending + e.start
                raise CorpusError(
                    f"{path}: not valid UTF-8 at byte offset {offset} ({e.reason}); "
                    f"pass errors='replace' to substitute U+FFFD"
                ) from None
            fed += len(raw)
            if text:
                yield text
            if final:
                return


# ------------------------------------------------------------------ BPE
def count_bpe_range(path: str, start: int, stop: int, special_tokens: Sequence[str] = (),
                    pattern: str | None = None, errors: str = "strict") -> Pieces:
    """Pre-token counts of one byte range (nominal ends, see
    :func:`plan_ranges`), as :func:`segkit.train_bpe` counts the whole file."""
    from .bpe import _pretokenizer, _Table
    from ..presets.bpe.pretokenize import GPT2_PATTERN

    specials = check_special_tokens(special_tokens)
    pattern = pattern or GPT2_PATTERN
    size = os.path.getsize(path)
    compiled = pattern == GPT2_PATTERN
    if not compiled and (start, stop) != (0, size):
        raise ValueError("a custom pattern counts whole files only (split_bytes=None)")
    a = bpe_boundary(path, start, specials) if compiled else 0
    b = bpe_boundary(path, stop, specials) if compiled else size
    table = _Table()
    if b <= a:
        return _table_pieces(table)
    count, cut = _pretokenizer(pattern)
    special, maxlen = _special_regex(specials)
    chunks = (t.encode("utf-8") for t in iter_range_text(path, a, b, errors))
    for buf, starts, ends in _file_batches(Path(path), special, maxlen, cut, errors, None, None, chunks=chunks):
        count(table, buf, starts, ends)
    return _table_pieces(table)


def _table_pieces(table) -> Pieces:
    arena, off, ln, cnt = table.words()
    total = int(ln.sum())
    first = np.cumsum(ln) - ln
    idx = np.arange(total, dtype=np.int64) + np.repeat(off - first, ln)
    return arena[idx].copy(), ln.astype(np.int64), cnt.astype(np.int64)


def _pieces_as_bytes(pieces: Pieces) -> list[bytes]:
    blob, ln, _ = pieces
    ends = np.cumsum(ln).tolist()
    data = blob.tobytes()
    return [data[e - n : e] for e, n in zip(ends, ln.tolist())]


def combine_bpe(parts: Sequence[Pieces]) -> Pieces:
    """The sum of several ranges' pre-token counts."""
    from .bpe import _Table

    if len(parts) == 1:
        return parts[0]
    table = _Table()
    for blob, ln, cnt in parts:
        if ln.size:
            ends = np.cumsum(ln)
            table.add_pieces(blob, ends - ln, ends, cnt)
    return _table_pieces(table)


def train_bpe_from_pieces(pieces: Pieces, vocab_size: int, special_tokens: Sequence[str] = (),
                          pattern: str | None = None, show_progress: bool = False):
    """:func:`segkit.train_bpe`'s merges from counted pre-tokens."""
    from .bpe import _train_from_words
    from ..presets.bpe.pretokenize import GPT2_PATTERN

    blob, ln, cnt = pieces
    off = np.cumsum(ln) - ln
    return _train_from_words(blob, off, ln, cnt, vocab_size, list(special_tokens), pattern or GPT2_PATTERN,
                             bool(show_progress))


# ------------------------------------------------------------------ WordPiece
def count_wordpiece_range(path: str, start: int, stop: int, lowercase: bool = True):
    """Word counts ``(code points, starts, counts)`` of one byte range, as
    :func:`segkit.training.wordpiece.count_corpus_words` counts the whole
    file."""
    from .wordpiece import count_corpus_words

    a = wordpiece_boundary(path, start)
    b = wordpiece_boundary(path, stop)
    # Pieces of text cut after whitespace are counted as documents: the
    # newline that joins two documents ends a word that had already ended.
    return count_corpus_words(_whitespace_cut(iter_range_text(path, a, b)), lowercase)


def _whitespace_cut(pieces: Iterator[str]) -> Iterator[str]:
    tail = ""
    for text in pieces:
        text = tail + text
        k = max(text.rfind("\n"), text.rfind(" "))
        if k < 0:
            tail = text
            continue
        tail = text[k + 1 :]
        yield text[: k + 1]
    if tail:
        yield tail


def combine_wordpiece(parts: Sequence[tuple], lowercase: bool = True):
    """The sum of several ranges' word counts (``lowercase`` is accepted for
    symmetry with the counting; the words are already normalized)."""
    if len(parts) == 1:
        return parts[0]
    total: dict[bytes, int] = {}
    get = total.get
    for cps, starts, counts in parts:
        data = np.ascontiguousarray(cps, dtype=np.int32).tobytes()
        bounds = (starts * 4).tolist()
        for k, c in enumerate(counts.tolist()):
            key = data[bounds[k] : bounds[k + 1]]
            total[key] = get(key, 0) + c
    words = list(total)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words)) // 4
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    cps = np.frombuffer(b"".join(words), dtype=np.int32).copy()
    return cps, starts, np.fromiter(total.values(), dtype=np.int64, count=len(words))
