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
import queue
import re
import threading
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Sequence, Union

import numpy as np
from ..runtime.jit import kernel

from ..runtime.interrupts import bind, block_signals, checkpoint
from ..runtime.regular_files import check_regular, open_regular
from ..runtime.surrogates import check_text, surrogate_message

Corpus = Union[str, "os.PathLike[str]", Sequence["os.PathLike[str]"], Iterable[str]]

#: bytes read per chunk from a file
CHUNK_BYTES = 1 << 18
#: bytes at the end of a file's buffer checked as UTF-8 by the thread reading
#: it, for the cut to look at (the counting threads check the rest)
_CUT_WINDOW = 1 << 14
#: documents are grouped into batches of about this many bytes (the counting
#: table reserves one entry per byte of a batch, so this also bounds its slack)
BATCH_BYTES = 1 << 18


class CorpusError(ValueError):
    """A corpus that cannot be read: invalid UTF-8 (with file and byte offset),
    a document that is not a string, ..."""


def check_special_tokens(special_tokens: Iterable[str]) -> list[str]:
    """The special tokens as a list (the checks of both trainers).

    Raises
    ------
    TypeError
        A single string instead of a list, or a token that is not a str.
    ValueError
        An empty token, a token given twice, or one holding a lone surrogate.

    >>> check_special_tokens(["[UNK]", ""])
    Traceback (most recent call last):
    ...
    ValueError: special token 1 must be a non-empty str, found ''
    """
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(f"special_tokens must be a list of str, found the {type(special_tokens).__name__} "
                        f"{special_tokens!r:.80}")
    if not isinstance(special_tokens, Iterable):
        raise TypeError(f"special_tokens must be a list of str, found {type(special_tokens).__name__}")
    out: list[str] = []
    seen: set[str] = set()  # (a set: ten thousand special tokens are checked in milliseconds)
    for i, tok in enumerate(special_tokens):
        if not isinstance(tok, str):
            raise TypeError(f"special token {i} must be a non-empty str, found {type(tok).__name__} {tok!r:.80}")
        if not tok:
            raise ValueError(f"special token {i} must be a non-empty str, found ''")
        if tok in seen:
            raise ValueError(f"special token {i} ({tok!r:.80}) is given twice")
        seen.add(tok)
        check_text(tok, f"special token {i} ({tok!r:.40})")
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
        check_file(p)
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
    with open_corpus_file(path) as f:
        while True:
            raw = f.read(chunk_size)
            final = not raw
            pending = len(dec.getstate()[0])
            try:
                text = dec.decode(raw, final)
            except UnicodeDecodeError as e:
                raise utf8_error(path, fed - pending, e) from None
            fed += len(raw)
            if on_bytes is not None and raw:
                on_bytes(len(raw))
            if text:
                yield text
            if final:
                return


def utf8_error(path, base: int, e: UnicodeDecodeError) -> CorpusError:
    """The error for invalid UTF-8 found by decoding bytes that start at byte
    ``base`` of file ``path``."""
    bad = e.object[e.start : e.start + 1]
    return CorpusError(
        f"{path}: not valid UTF-8 at byte offset {base + e.start} (byte {bad.hex() or 'end of file'}; "
        f"{e.reason}); pass errors='replace' to substitute U+FFFD"
    )


def check_file(path: Path) -> None:
    """FileNotFoundError / IsADirectoryError naming ``path`` unless it is a
    regular file; a FIFO, a device (``/dev/zero``) or a socket is a
    :class:`CorpusError`, before anything opens it."""
    if path.is_dir():
        raise IsADirectoryError(f"training corpus is a directory, not a file: {path}")
    check_regular(path, "training", CorpusError)


def open_corpus_file(path) -> BinaryIO:
    """A training file opened for reading (regular files only: see
    :mod:`segkit.runtime.regular_files`)."""
    return open_regular(path, "training", CorpusError)


def doc_batches(docs: Iterable[Any], target_chars: int) -> Iterator[tuple[int, list]]:
    """``(index of the first, items)``: the items of ``docs`` in lists of
    about ``target_chars`` characters, sized from the previous list (a sample
    of its items' lengths).  Nothing is done per item in Python: the thread
    handing lists out holds the GIL briefly; the items are checked by
    whoever uses them."""
    it = iter(docs)
    k = max(1, min(16, target_chars // 256))
    first = 0
    while True:
        batch = list(islice(it, k))
        if not batch:
            return
        yield first, batch
        first += len(batch)
        sample = batch[:: max(1, len(batch) // 32)]
        try:
            size = sum(map(len, sample)) * len(batch) // len(sample)
        except TypeError:  # not all str: keep the size
            continue
        k = max(1, min(2 * k, k * target_chars // max(size, 1)))


def run_parallel(items: Iterable[Any], work: Callable[[int, Any], None], num_threads: int,
                 on_item: Callable[[Any], None] | None = None) -> None:
    """``work(t, item)`` for every item, on ``num_threads`` threads (``t``:
    the thread's number, for state of its own).  A thread takes the next item
    whenever it is free (a busy or descheduled thread holds up no other); at
    most two items per thread wait.  ``on_item(item)`` runs as an item is
    handed out.  The exception of the earliest failing item is raised (every
    item before it has been processed; later ones are skipped), so errors do
    not depend on the number of threads.

    >>> seen = []
    >>> run_parallel(range(5), lambda t, x: seen.append(x * x), 2)
    >>> sorted(seen)
    [0, 1, 4, 9, 16]
    """
    if num_threads <= 1:
        for item in items:
            checkpoint()  # a cancelled call stops between items (segkit.interrupts)
            if on_item is not None:
                on_item(item)
            work(0, item)
        return
    work = bind(work)
    q: queue.Queue = queue.Queue(maxsize=2 * num_threads)
    failed: dict[int, BaseException] = {}
    lock = threading.Lock()

    def worker(t: int) -> None:
        block_signals()
        while True:
            got = q.get()
            if got is None:
                return
            j, item = got
            with lock:
                skip = bool(failed) and j > min(failed)
            if skip:
                continue
            try:
                work(t, item)
            except BaseException as e:  # re-raised by the caller's thread
                with lock:
                    failed[j] = e

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(num_threads)]
    for th in threads:
        th.start()
    main_error = None
    try:
        for j, item in enumerate(items):
            checkpoint()
            if failed:
                break
            if on_item is not None:
                on_item(item)
            q.put((j, item))
    except BaseException as e:  # an item that cannot be made: after the earlier items' errors
        main_error = e
    finally:
        for _ in threads:
            q.put(None)
        for th in threads:
            th.join()
    if failed:
        raise failed[min(failed)]
    if main_error is not None:
        raise main_error


def parallel_calls(calls: Sequence[Callable[[], Any]]) -> list:
    """Results of the ``calls``, each run on a thread of its own (for GIL-free
    kernels); the first exception is raised."""
    if len(calls) == 1:
        return [calls[0]()]
    out: list = [None] * len(calls)
    errors: list[BaseException] = []

    calls = [bind(c) for c in calls]

    def run(i: int) -> None:
        block_signals()
        try:
            out[i] = calls[i]()
        except BaseException as e:  # re-raised below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(calls))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return out


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
    for job in segment_jobs(corpus, special_tokens, cut=cut, errors=errors, chunk_size=chunk_size,
                            on_bytes=on_bytes):
        batch = job_segments(job)
        if batch is not None:
            yield batch


def segment_jobs(
    corpus: Corpus,
    special_tokens: Sequence[str] = (),
    *,
    cut: Callable[[np.ndarray, int, int], int] | None,
    errors: str = "strict",
    chunk_size: int | None = None,
    on_bytes: Callable[[int], None] | None = None,
    raw_cut: bool = False,
) -> Iterator[tuple]:
    """The work of :func:`segment_batches` in pieces that
    :func:`job_segments` turns into batches, so that counting threads can
    do that part themselves: a file's batches come ready (the carry between
    chunks is sequential), documents come as lists, encoded and split later
    (no Python step per document here).  With ``raw_cut`` (``cut`` works on
    any valid UTF-8 prefix) and ``errors="strict"``, a file's bytes are not
    decoded and re-encoded in Python: a compiled pass checks them, and only
    invalid bytes are decoded again, for the error naming the offset."""
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', found {errors!r}")
    special, maxlen = _special_regex(special_tokens)
    paths = corpus_paths(corpus)
    if paths is not None:
        for path in paths:
            raw = raw_cut and errors == "strict"
            for batch in _file_batches(path, special, maxlen, cut, errors, chunk_size, on_bytes, raw):
                yield batch if raw else ("batch", batch)
        return
    if isinstance(corpus, (bytes, bytearray)) or not isinstance(corpus, Iterable):
        raise TypeError("corpus must be a path, a list of paths or an iterable of str documents, "
                        f"found {type(corpus).__name__}")
    for first, docs in doc_batches(corpus, BATCH_BYTES):
        yield ("docs", first, docs, special, errors, on_bytes)


def job_segments(job: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The batch of a job of :func:`segment_jobs` (None: no text in it)."""
    if job[0] == "batch":
        return job[1]
    if job[0] == "check":  # a file's bytes, not yet checked as UTF-8
        _, path, base, buf, used, starts, ends = job
        if utf8_check(buf[:used])[0] >= 0:
            _raise_utf8_error(path, base)
        return (buf, starts, ends) if len(starts) else None
    _, first, docs, special, errors, on_bytes = job
    if special is None:
        try:  # all at once: one join and one encoding for the whole list
            data = "".join(docs).encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            pass  # a non-str document or a lone surrogate: one by one below, for the error or the replacement
        else:
            if on_bytes is not None:
                on_bytes(len(data))
            buf = np.frombuffer(data, dtype=np.uint8)
            ends = _byte_ends(buf, np.cumsum(np.fromiter(map(len, docs), np.int64, len(docs))))
            starts = np.concatenate([np.zeros(1, np.int64), ends[:-1]])
            keep = ends > starts
            if not keep.any():
                return None
            return buf, starts[keep], ends[keep]
    parts: list[bytes] = []
    lens: list[int] = []
    for i, doc in enumerate(docs, first):
        if not isinstance(doc, str):
            raise CorpusError(f"document {i} must be a str, found {type(doc).__name__}")
        try:
            data = doc.encode("utf-8")
        except UnicodeEncodeError as e:
            if errors == "strict":  # one rule for lone surrogates: segkit.runtime.surrogates
                raise CorpusError(surrogate_message(f"document {i}", doc, e.start)) from None
            data = doc.encode("utf-8", "replace")
        if on_bytes is not None:
            on_bytes(len(data))
        for piece in (data,) if special is None else special.split(data):
            if piece:
                parts.append(piece)
                lens.append(len(piece))
    return _batch(parts, lens) if parts else None


@kernel
def _byte_ends(buf, char_ends):
    """Byte offsets in UTF-8 ``buf`` of the character offsets ``char_ends``
    (non-decreasing)."""
    out = np.empty(char_ends.size, np.int64)
    j = 0
    c = 0
    for i in range(buf.size):
        if (buf[i] & 0xC0) != 0x80:  # character c starts here
            while j < char_ends.size and char_ends[j] == c:
                out[j] = i
                j += 1
            c += 1
    while j < char_ends.size:
        out[j] = buf.size
        j += 1
    return out


def _batch(parts: list[bytes], lens: list[int]):
    buf = np.frombuffer(b"".join(parts), dtype=np.uint8)
    ends = np.cumsum(np.asarray(lens, dtype=np.int64))
    starts = ends - np.asarray(lens, dtype=np.int64)
    return buf, starts, ends


def _raw_chunks(path: Path, chunk_size: int | None, on_bytes):
    """A file's bytes as read, undecoded."""
    with open_corpus_file(path) as f:
        while True:
            raw = f.read(chunk_size or CHUNK_BYTES)
            if not raw:
                return
            if on_bytes is not None:
                on_bytes(len(raw))
            yield raw


def _file_batches(path, special, maxlen, cut, errors, chunk_size, on_bytes, raw=False, chunks=None):
    """Batches of a file; with ``raw`` (strict UTF-8) the bytes are checked
    by :func:`utf8_check` instead of being decoded and encoded again, and
    jobs ``("check", path, file offset, buf, bytes used, starts, ends)`` are
    yielded for :func:`job_segments`.  ``chunks`` (not with ``raw``): the
    file's valid UTF-8 bytes in pieces, if not all of it (a byte range; see
    ``ranges.py``)."""
    carry = b""
    if chunks is not None:
        pass
    elif raw:
        chunks = _raw_chunks(path, chunk_size, on_bytes)
    else:
        chunks = (t.encode("utf-8") for t in iter_file_text(path, errors, chunk_size, on_bytes))
    base = 0  # file offset of carry[0] (raw mode)
    final = False
    while not final:
        piece = next(chunks, None)
        if piece is None:
            final = True
            data = carry
        else:
            data = carry + piece
        if not data:
            continue
        buf = np.frombuffer(data, dtype=np.uint8)
        end = len(data)
        lo = 0
        if raw:
            # the cut decodes what it looks at: check the last _CUT_WINDOW
            # bytes here (from a character start) and let it look at no
            # more; the rest is checked by the counting thread (job_segments)
            lo = max(0, end - _CUT_WINDOW)
            while 0 < lo < end and (data[lo] & 0xC0) == 0x80:
                lo += 1
            bad, truncated = utf8_check(buf[lo:])
            if bad >= 0:
                if final or not truncated:
                    _raise_utf8_error(path, base)
                end = lo + bad  # a character continued in the next chunk
        if final:
            segs, s0 = _split(data, special, 0, len(data) + 1)
            segs.append((s0, len(data)))
            used = len(data)
        else:
            limit = end - maxlen + 1 if special is not None else end
            segs, s0 = _split(data, special, 0, max(limit, 0))
            c0 = max(s0, lo)
            c = cut(buf[:end], c0, max(limit, c0)) if limit > c0 else -1
            if c > s0:
                segs.append((s0, c))
                used = c
            else:
                used = s0
        carry = data[used:]
        segs = [(s, e) for s, e in segs if e > s]
        if raw and used:
            arr = np.asarray(segs, dtype=np.int64).reshape(-1, 2)
            yield ("check", path, base, buf, used, arr[:, 0].copy(), arr[:, 1].copy())
        elif segs:
            arr = np.asarray(segs, dtype=np.int64)
            yield buf, arr[:, 0].copy(), arr[:, 1].copy()
        base += used


@kernel
def utf8_check(buf):
    """``(i, truncated)``: ``i`` the first byte of ``buf`` that starts no
    valid UTF-8 sequence (what Python's strict decoder rejects: overlong
    forms, surrogates, code points above U+10FFFF), -1 if none;
    ``truncated``: the sequence at ``i`` is valid so far but runs past the
    end (it may go on in the next chunk)."""
    n = buf.size
    i = 0
    while i < n:
        b = buf[i]
        if b < 0x80:
            i += 1
            continue
        if b < 0xC2 or b > 0xF4:
            return i, False
        lo = 0x80
        hi = 0xBF
        if b < 0xE0:
            need = 1
        elif b < 0xF0:
            need = 2
            if b == 0xE0:
                lo = 0xA0
            elif b == 0xED:
                hi = 0x9F
        else:
            need = 3
            if b == 0xF0:
                lo = 0x90
            elif b == 0xF4:
                hi = 0x8F
        for k in range(1, need + 1):
            if i + k >= n:
                return i, True
            c = buf[i + k]
            if k == 1:
                if c < lo or c > hi:
                    return i, False
            elif (c & 0xC0) != 0x80:
                return i, False
        i += need + 1
    return -1, False


def _raise_utf8_error(path: Path, base: int) -> None:
    """Decode ``path`` from byte ``base`` (a character boundary) to the
    first invalid byte and raise its error, as :func:`iter_file_text` would."""
    dec = codecs.getincrementaldecoder("utf-8")("strict")
    fed = base
    with open_corpus_file(path) as f:
        f.seek(base)
        while True:
            raw = f.read(CHUNK_BYTES)
            pending = len(dec.getstate()[0])
            try:
                dec.decode(raw, not raw)
            except UnicodeDecodeError as e:
                raise utf8_error(path, fed - pending, e) from None
            if not raw:  # pragma: no cover - called only for invalid bytes
                raise CorpusError(f"{path}: not valid UTF-8 after byte offset {base}")
            fed += len(raw)

