"""Byte-level BPE training (GPT-2 semantics), compiled.

:func:`train_bpe` counts pre-tokens once (compiled GPT-2 pre-tokenizer and
hash table, optionally on several threads), then runs the incremental merge
loop of :mod:`segkit.training._bpe_kernels`. See ``docs/training.rst``.

>>> result = train_bpe(["low low low low low lower lower widest widest widest",
...                     "newest newest newest newest newest newest"], 260)
>>> result.merges[:3]
[(b's', b't'), (b'e', b'st'), (b'o', b'w')]
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..presets.bpe.char_classes import class_table as char_classes
from ..presets.bpe.pretokenize import GPT2_PATTERN
from ..presets.bpe.pretokenize_kernels import gpt2_safe_cut as _safe_cut
from ..runtime import interrupts
from ..runtime.byte_level import bytes_to_unicode
from ..runtime.threads import check_threads
from . import _bpe_kernels as K
from .corpus import Corpus, check_special_tokens, corpus_paths, job_segments, parallel_calls, run_parallel, segment_jobs

__all__ = ["train_bpe", "TrainedBPE", "bytes_to_unicode"]

#: pre-tokens longer than this many bytes are merged position by position
#: (O(1) per occurrence) instead of rescanned as a whole (see ``bpe_merge``)
_LONG_WORD = 256


def _byte_level(token: bytes) -> str:
    t = bytes_to_unicode()
    return "".join(t[b] for b in token)


@dataclass
class TrainedBPE:
    """The result of :func:`train_bpe`.

    Attributes
    ----------
    vocab : dict[int, bytes]
        id -> token bytes: the 256 single bytes (ids 0-255), then the special
        tokens (UTF-8), then one token per merge, in order.
    merges : list[tuple[bytes, bytes]]
        The merges in the order they were made.
    special_tokens : list[str]
    pattern : str
        The pre-tokenization pattern used.
    stats : dict
        Timings (seconds) of counting and merging, and sizes.
    """

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: list[str] = field(default_factory=list)
    pattern: str = GPT2_PATTERN
    stats: dict = field(default_factory=dict, repr=False, compare=False)

    def _strings(self) -> dict[int, str]:
        n_special = len(self.special_tokens)
        out = {}
        for i, tok in self.vocab.items():
            out[i] = self.special_tokens[i - 256] if 256 <= i < 256 + n_special else _byte_level(tok)
        return out

    def _vocab_json(self) -> dict[str, int]:
        vocab: dict[str, int] = {}
        for i, s in self._strings().items():
            if s in vocab:
                raise ValueError(
                    f"token {s!r} has two ids ({vocab[s]} and {i}): two merges made the same bytes, or a special "
                    f"token is spelled like a byte-level token; vocab.json cannot hold both"
                )
            vocab[s] = i
        return vocab

    def encoder(self) -> "segkit.BPE":
        """A :class:`segkit.BPE` that encodes with these merges (in order, as
        HuggingFace does), this pattern and these special tokens (matched
        when allowed, tiktoken's way: ``encode(text, allowed_special="all")``).

        >>> r = train_bpe(["aaa bbb aaa"], 258, ["<|endoftext|>"])
        >>> r.encoder().encode("aaa<|endoftext|>", allowed_special="all")
        [257, 97, 256]
        """
        from ..presets.bpe import BPE

        n_special = len(self.special_tokens)
        vocab = {i: t for i, t in self.vocab.items() if not 256 <= i < 256 + n_special}
        specials = {s: 256 + k for k, s in enumerate(self.special_tokens)}
        return BPE(vocab, self.merges, pattern=self.pattern, special_tokens=specials)

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``vocab.json`` and ``merges.txt`` (GPT-2's text format:
        bytes shown through GPT-2's byte-to-unicode table) to ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        vocab = self._vocab_json()
        with open(d / "vocab.json", "w", encoding="utf-8") as f:
            json.dump(vocab, f, ensure_ascii=False)
        with open(d / "merges.txt", "w", encoding="utf-8", newline="\n") as f:
            f.write("#version: 0.2\n")
            for a, b in self.merges:
                f.write(f"{_byte_level(a)} {_byte_level(b)}\n")

    def to_tokenizer_json(self, path: str | os.PathLike) -> None:
        """Write a HuggingFace ``tokenizer.json`` (byte-level BPE) that
        ``tokenizers.Tokenizer.from_file`` loads."""
        vocab = self._vocab_json()
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        if self.pattern == GPT2_PATTERN:
            pre = byte_level
        else:
            pre = {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": self.pattern}, "behavior": "Isolated", "invert": False},
                    dict(byte_level, use_regex=False),
                ],
            }
        data = {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [
                {"id": 256 + i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True}
                for i, tok in enumerate(self.special_tokens)
            ],
            "normalizer": None,
            "pre_tokenizer": pre,
            "post_processor": dict(byte_level, trim_offsets=False),
            "decoder": byte_level,
            "model": {
                "type": "BPE",
                "dropout": None,
                "unk_token": None,
                "continuing_subword_prefix": None,
                "end_of_word_suffix": None,
                "fuse_unk": False,
                "byte_fallback": False,
                "ignore_merges": False,
                "vocab": vocab,
                "merges": [f"{_byte_level(a)} {_byte_level(b)}" for a, b in self.merges],
            },
        }
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False)


# ------------------------------------------------------------------ counting
class _Table:
    def __init__(self):
        *arrays, self.st = K.new_table()
        self.arrays = tuple(arrays)

    def count(self, buf, starts, ends, cls):
        self.arrays = K.count_segments(buf, starts, ends, cls, *self.arrays, self.st)

    def add_pieces(self, buf, starts, ends, counts):
        self.arrays = K.count_pieces(buf, starts, ends, counts, *self.arrays, self.st)

    def entries(self):
        """(offsets, lengths, counts) of the pre-tokens, in slot order."""
        tab = self.arrays[0]
        keep = np.flatnonzero(tab[3::4] != 0)
        return tab[1::4][keep], tab[2::4][keep], tab[3::4][keep]

    def words(self):
        """(arena, offsets, lengths, counts) of the pre-tokens, most frequent first."""
        return _most_frequent_first(self.arrays[1], *self.entries())


def _most_frequent_first(arena, o, l, c):
    order = np.lexsort((o, -c))
    return arena, o[order], l[order], c[order]


def _regex_cut(pattern):
    """Cut rule for a custom pattern: before the second-to-last match (a
    match is assumed not to depend on text two matches further on)."""

    def cut(buf, lo, hi):
        text = bytes(buf[lo:hi]).decode("utf-8", "ignore")
        starts = [m.start() for m in pattern.finditer(text)]
        if len(starts) < 3:
            return -1
        return lo + len(text[: starts[-2]].encode("utf-8"))

    return cut


def _count_custom(table: _Table, pattern, buf, starts, ends):
    from collections import Counter

    counter: Counter = Counter()
    data = bytes(buf)
    for s, e in zip(starts.tolist(), ends.tolist()):
        counter.update(m.group().encode("utf-8") for m in pattern.finditer(data[s:e].decode("utf-8")))
    if counter:
        pieces = list(counter)
        lens = np.fromiter(map(len, pieces), np.int64, len(pieces))
        pe = np.cumsum(lens)
        table.add_pieces(np.frombuffer(b"".join(pieces), np.uint8), pe - lens, pe,
                         np.fromiter(counter.values(), np.int64, len(pieces)))


def _pretokenizer(pattern: str):
    """``(count, cut)`` for ``pattern``: ``count(table, buf, starts, ends)``
    adds a batch's pre-tokens to a :class:`_Table`; ``cut`` is the cut rule
    :func:`~segkit.training.corpus.segment_jobs` wants. GPT-2's pattern runs
    compiled, any other through :mod:`regex`."""
    if pattern == GPT2_PATTERN:
        cls = char_classes()

        def count(table, buf, starts, ends):
            table.count(buf, starts, ends, cls)

        return count, lambda buf, lo, hi: int(_safe_cut(buf, lo, hi, cls))
    import regex

    rx = regex.compile(pattern)

    def count_custom(table, buf, starts, ends):
        _count_custom(table, rx, buf, starts, ends)

    return count_custom, _regex_cut(rx)


def _count(corpus, special_tokens, pattern, num_threads, errors, bar):
    """The pre-token counts of the corpus (an object with ``words()``).

    With ``num_threads`` > 1 each thread takes the next job when it is free
    and does all its per-document work itself (joining, encoding, splitting
    at special tokens, counting into a table of its own; the kernels release
    the GIL); the tables are then added up on the same threads."""
    compiled = pattern == GPT2_PATTERN
    count, cut = _pretokenizer(pattern)
    on_bytes = None
    if bar is not None:
        lock = threading.Lock()

        def on_bytes(n):
            with lock:
                bar.update(n)

    jobs = segment_jobs(corpus, special_tokens, cut=cut, errors=errors, on_bytes=on_bytes, raw_cut=compiled)
    if not compiled:
        num_threads = 1
    # A thread makes its table when it first gets work: memory follows the
    # threads that counted, not num_threads.
    tables: list = [None] * num_threads

    def work(t, job):
        batch = job_segments(job)
        if batch is not None:
            if tables[t] is None:
                tables[t] = _Table()
            count(tables[t], *batch)

    run_parallel(jobs, work, num_threads)
    return _add_up([t for t in tables if t is not None] or [_Table()])


class _Sum:
    """Tables added up: the first table plus the entries new to it."""

    def __init__(self, table: _Table, extra: list) -> None:
        self.table = table
        self.extra = extra  # (bytes, hashes, lengths, counts) per share

    def words(self):
        used = int(self.table.st[1])
        o, l, c = self.table.entries()
        offs, lens, cnts = [o], [l], [c]
        arenas = [self.table.arrays[1][:used]]
        base = used
        for buf, _, ln, cn in self.extra:
            offs.append(base + np.cumsum(ln) - ln)
            lens.append(ln)
            cnts.append(cn)
            arenas.append(buf)
            base += len(buf)
        return _most_frequent_first(np.concatenate(arenas), np.concatenate(offs), np.concatenate(lens),
                                    np.concatenate(cnts))


def _add_up(tables: list):
    """The tables added up, on as many threads: each looks up a share of the
    next table's slots in the first table (adding the counts of entries it
    holds, gathering the others, which are new to it and distinct)."""
    first = tables[0]
    if len(tables) == 1:
        return first
    extra: list = []
    for t in range(1, len(tables)):
        if extra:  # the next table is looked up in the sum so far
            for buf, h, ln, cn in extra:
                first.arrays = K.insert_entries(buf, h, ln, cn, *first.arrays, first.st)
            extra = []
        s_tab, s_arena = tables[t].arrays
        slots = len(s_tab) // 4
        bounds = [slots * i // len(tables) for i in range(len(tables) + 1)]
        tab, arena = first.arrays

        def share(i, s_tab=s_tab, s_arena=s_arena, tab=tab, arena=arena):
            new = np.empty(bounds[i + 1] - bounds[i], np.int64)
            m = K.add_known(tab, arena, s_tab, s_arena, bounds[i], bounds[i + 1], new)
            return K.gather_entries(s_tab, s_arena, new[:m])

        extra = parallel_calls([lambda i=i: share(i) for i in range(len(tables))])
        tables[t] = None  # free it
    return _Sum(first, extra)


#: Compile time of the training kernels on a small machine (2 cores), for
#: the notice printed when they have to be compiled in a process.
COMPILE_SECONDS = 20


def _prepare(from_files: bool, specials, pattern, num_threads, errors) -> None:
    """Train on a tiny corpus of the same kind (files or texts) with the
    same options, without bars: whatever the real run will compile is
    compiled now, announced by :func:`segkit.runtime.jit.prepare`."""
    import tempfile

    from ..runtime import jit

    text = "ab ab ab abc"

    def tiny():
        if not from_files:
            return train_bpe([text], 258 + len(specials), specials, pattern=pattern, num_threads=num_threads,
                             show_progress=False, errors=errors)
        with tempfile.TemporaryDirectory(prefix="segkit-prepare-") as d:
            path = Path(d) / "tiny.txt"
            path.write_text(text, encoding="utf-8")
            return train_bpe([path], 258 + len(specials), specials, pattern=pattern, num_threads=num_threads,
                             show_progress=False, errors=errors)

    jit.prepare([tiny], COMPILE_SECONDS)


def _show_progress(show_progress):
    if show_progress is None:
        return sys.stderr.isatty()
    return bool(show_progress)


@interrupts.interruptible()
def train_bpe(
    corpus: Corpus,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    pattern: str | None = None,
    num_threads: int | None = None,
    show_progress: bool | None = None,
    errors: str = "strict",
) -> TrainedBPE:
    """Train a byte-level BPE vocabulary (GPT-2 semantics).

    Parameters
    ----------
    corpus
        A path, a list of :class:`os.PathLike` paths (each file is one
        document, read in chunks), or an iterable of ``str`` documents.
    vocab_size
        Total size of the vocabulary: 256 bytes + special tokens + merges.
    special_tokens
        Strings that split the text and are removed before counting (no merge
        spans or includes one); they get ids 256, 257, ...
    pattern
        Pre-tokenization regular expression (:mod:`regex` syntax); default
        GPT-2's, which runs compiled. Merges never cross pre-token boundaries.
    num_threads
        Threads for counting (default: 1).
    show_progress
        tqdm bars over bytes read and merges done; default: when stderr is a
        terminal.
    errors
        ``"strict"`` (invalid UTF-8 in a file raises
        :class:`~segkit.training.corpus.CorpusError` naming file and byte
        offset) or ``"replace"`` (U+FFFD).

    Returns
    -------
    TrainedBPE
        Each merge joins the most frequent adjacent pair (counted over all
        pre-tokens, weighted by their counts); a tie goes to the pair whose
        byte strings are greater as a tuple. Training stops at ``vocab_size``
        or when no pair is left; an empty corpus gives the base vocabulary
        and no merges.

    Examples
    --------
    >>> r = train_bpe(["aaa bbb aaa"], 258, ["<|endoftext|>"])
    >>> r.merges, r.vocab[256], r.vocab[257]
    ([(b'a', b'a')], b'<|endoftext|>', b'aa')
    """
    specials = check_special_tokens(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, found {type(vocab_size).__name__}")
    n_base = 256 + len(specials)
    if vocab_size < n_base:
        raise ValueError(
            f"vocab_size must be at least 256 + {len(specials)} special tokens = {n_base}, found {vocab_size}"
        )
    if pattern is None:
        pattern = GPT2_PATTERN
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, found {type(pattern).__name__}")
    if pattern != GPT2_PATTERN:
        import regex

        try:
            regex.compile(pattern)
        except regex.error as e:
            raise ValueError(f"pattern is not a valid regular expression: {e}") from None
    num_threads = check_threads(num_threads, all_cores=False) or 1
    progress = _show_progress(show_progress)

    paths = corpus_paths(corpus)
    if progress:  # compile (or load) the kernels before a bar starts, so that none sits still
        _prepare(paths is not None, specials, pattern, num_threads, errors)
    bar = None
    if progress:
        from tqdm import tqdm

        total = sum(p.stat().st_size for p in paths) if paths is not None else None
        bar = tqdm(total=total, unit="B", unit_scale=True, desc="counting", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        table = _count(paths if paths is not None else corpus, specials, pattern, num_threads, errors, bar)
    finally:
        if bar is not None:
            bar.close()
    arena, w_off, w_len, w_cnt = table.words()
    del table  # the hash table is not needed while merging: free it before the peak
    return _train_from_words(arena, w_off, w_len, w_cnt, vocab_size, specials, pattern, progress, time.perf_counter() - t0)


@interrupts.interruptible()
def _train_from_words(arena, w_off, w_len, w_cnt, vocab_size, specials, pattern, progress, count_seconds=0.0):
    """:func:`train_bpe` after counting: the merges from the unique
    pre-tokens ``arena[w_off[k]:w_off[k] + w_len[k]]`` seen ``w_cnt[k]``
    times (any order: the result depends on the counts only). Also the
    entry point of :func:`segkit.scale.dask.train_bpe`, which counts elsewhere."""
    n_base = 256 + len(specials)
    t1 = time.perf_counter()
    t0 = t1 - count_seconds
    arena = arena[: int((w_off + w_len).max()) if len(w_off) else 0].copy()

    # Each merge joins two adjacent symbols of at least one pre-token, so
    # there are at most sum(length - 1) of them: the tables sized by the
    # number of merges follow what the corpus can give, not vocab_size.
    possible = int(np.maximum(w_len - 1, 0).sum()) if len(w_len) else 0
    n_merges = max(0, min(int(vocab_size) - n_base, possible))
    counter = np.zeros(7, np.int64)
    stop = interrupts.stop_flag()
    if progress and n_merges > 0:
        from tqdm import tqdm

        result: list = []
        thread = threading.Thread(
            target=lambda: result.append(
                K.bpe_merge(arena, w_off, w_len, w_cnt, n_base, n_merges, counter, _LONG_WORD, stop)),
            daemon=True,
        )
        with tqdm(total=n_merges, unit=" merges", desc="merging", file=sys.stderr) as mbar:
            thread.start()
            while thread.is_alive():
                thread.join(0.1)
                mbar.update(int(counter[0]) - mbar.n)
            mbar.update(int(counter[0]) - mbar.n)
        if not result:  # pragma: no cover - the kernel raised in its thread
            raise RuntimeError("BPE merge loop failed")
        m_a, m_b = result[0]
    else:
        m_a, m_b = K.bpe_merge(arena, w_off, w_len, w_cnt, n_base, n_merges, counter, _LONG_WORD, stop)
    interrupts.checkpoint()  # the loop ended early if the call was cancelled
    t2 = time.perf_counter()

    vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    for i, tok in enumerate(specials):
        vocab[256 + i] = tok.encode("utf-8")
    merges: list[tuple[bytes, bytes]] = []
    for k, (a, b) in enumerate(zip(m_a.tolist(), m_b.tolist())):
        pair = (vocab[a], vocab[b])
        merges.append(pair)
        vocab[n_base + k] = pair[0] + pair[1]
    stats = {
        "count_seconds": t1 - t0,
        "merge_seconds": t2 - t1,
        "unique_pretokens": int(len(w_off)),
        "pretokens": int(w_cnt.sum()),
        "heap_pops": int(counter[1]),
        "stale_pops": int(counter[2]),
        "word_visits": int(counter[3]),
        "occurrences_merged": int(counter[5]),
    }
    return TrainedBPE(vocab=vocab, merges=merges, special_tokens=specials, pattern=pattern, stats=stats)


def _pretoken_counts(corpus: Corpus, special_tokens: Sequence[str] = (), *, pattern: str | None = None,
                     num_threads: int = 1, errors: str = "strict") -> dict[bytes, int]:
    """Pre-token -> count, as :func:`train_bpe` counts them (for tests and tools)."""
    specials = check_special_tokens(special_tokens)
    paths = corpus_paths(corpus)
    table = _count(paths if paths is not None else corpus, specials, pattern or GPT2_PATTERN, num_threads, errors, None)
    arena, off, ln, cnt = table.words()
    return {bytes(arena[o : o + n]): int(c) for o, n, c in zip(off.tolist(), ln.tolist(), cnt.tolist())}
