"""Training WordPiece vocabularies (HuggingFace ``WordPieceTrainer`` semantics).

The pipeline:

1. every document is normalized as :meth:`segkit.WordPiece.from_pretrained`
   normalizes text (BERT's ``clean_text``, accents stripped and lowercased
   when ``lowercase``) and split into words as BERT pre-tokenizes (on
   whitespace; each punctuation character and CJK ideograph a word of its
   own); the words are counted in compiled code;
2. the initial vocabulary is the special tokens, then the alphabet (every
   character of the words, or the ``limit_alphabet`` most frequent) in code
   point order, then the continuation form (``suffix_indicator`` + character)
   of every alphabet character seen after a word's first character, in code
   point order;
3. pairs of adjacent symbols are merged, most frequent pair first, until the
   vocabulary has ``vocab_size`` distinct tokens (or no pair has a count of
   at least ``max(1, min_frequency)``).  Merging ``x`` and ``y`` gives ``x``'s
   string followed by ``y``'s without its leading ``suffix_indicator``
   (``un`` + ``##able`` -> ``unable``, ``##ab`` + ``##le`` -> ``##able``).
   A merge whose result is already a token adds nothing to the vocabulary.
   Ties between pairs of equal count go to the pair whose first symbol has
   the smaller id, then whose second symbol has the smaller id.

Token ids follow the order in which tokens enter the vocabulary: special
tokens, alphabet, continuation characters, merge results.  HuggingFace uses
the same rules but numbers the continuation characters in hash-table order,
different in every process; which is why its ids (and, where counts tie,
the tokens of the last merges) vary from run to run while segkit's do not.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import Union

import numpy as np

from ..engine.charmap import two_level
from ..wordpiece import WordPiece
from ..wordpiece.normalization import bert_rewrite_table
from ..wordpiece.pretokenize import bert_classes
from . import _wordpiece_kernels as K

Corpus = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

#: Characters per compiled word-counting call.
_CHUNK_CHARS = 1 << 22
_NEWLINE = np.array([10], dtype=np.uint32)
#: Bytes read from a file at a time.
_CHUNK_BYTES = 1 << 22


def train_wordpiece(
    corpus: Corpus,
    vocab_size: int = 30522,
    *,
    lowercase: bool = True,
    special_tokens: Sequence[str] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    suffix_indicator: str = "##",
    num_threads: int | None = None,
    show_progress: bool | None = None,
) -> WordPiece:
    """Learn a WordPiece vocabulary; returns a ready :class:`segkit.WordPiece`.

    The vocabulary equals, as a set, the one of HuggingFace's
    ``WordPieceTrainer`` behind ``BertNormalizer(lowercase=lowercase)`` and
    ``BertPreTokenizer`` with the same settings, wherever HuggingFace's own
    result does not depend on its hash order (see :doc:`/training_wordpiece`).

    Parameters
    ----------
    corpus
        A path (``str`` or :class:`os.PathLike`), an iterable of
        :class:`os.PathLike` paths (e.g. :class:`pathlib.Path`), or an
        iterable of ``str`` documents.  Files are read as UTF-8 in chunks.
    vocab_size
        Number of tokens wanted, special tokens included.  Fewer come out
        when the corpus runs out of pairs to merge.
    lowercase
        Lowercase and strip accents, as ``bert-base-uncased``; False keeps
        case and accents, as ``bert-base-multilingual-cased``.
    special_tokens
        Tokens placed first (ids 0, 1, ...); must contain ``"[UNK]"``.
    min_frequency
        Stop merging when the best pair occurs fewer times than this.
    limit_alphabet
        Keep only this many characters (the most frequent; equal counts:
        the smaller code point).  Other characters are dropped from words.
    suffix_indicator
        Prefix of continuation pieces.
    num_threads
        Threads for counting words (default: 1); the merges run on one.
    show_progress
        tqdm progress bars on stderr; None: when stderr is a terminal.

    Returns
    -------
    WordPiece
        With BERT's pipeline (:meth:`segkit.WordPiece.bert`, the
        normalization of ``from_pretrained`` for this ``lowercase``).

    Raises
    ------
    ValueError
        Bad settings, duplicate or empty special tokens, a ``vocab_size``
        smaller than the initial vocabulary (special tokens and alphabet),
        or a file that is not UTF-8 (naming the file and byte offset).
    FileNotFoundError
        A corpus file that does not exist.

    Examples
    --------
    >>> wp = train_wordpiece(["low lower lowest", "newer newest"], 40, show_progress=False)
    >>> wp.vocab.tokens[:6]
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'e']
    >>> wp.tokenize("Lowest newer")
    ['lowest', 'newer']
    >>> train_wordpiece([], 10, show_progress=False).vocab.tokens
    ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    """
    specials = _check_args(vocab_size, special_tokens, min_frequency, limit_alphabet, suffix_indicator, num_threads)
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    words, starts, counts = count_corpus_words(corpus, lowercase, show_progress, num_threads or 1)
    return _wordpiece_from_counts(words, starts, counts, vocab_size, lowercase, specials, min_frequency,
                                  limit_alphabet, suffix_indicator, show_progress)


def _wordpiece_from_counts(words, starts, counts, vocab_size, lowercase, specials, min_frequency, limit_alphabet,
                           suffix_indicator, show_progress) -> WordPiece:
    """:func:`train_wordpiece` after counting (also the entry point of
    :func:`segkit.dask.train_wordpiece`, which counts elsewhere)."""
    tokens = train_from_word_counts(
        words, starts, counts, vocab_size, specials, min_frequency, limit_alphabet, suffix_indicator,
        show_progress=show_progress,
    )
    kwargs = {}
    if not ("[CLS]" in specials and "[SEP]" in specials):
        kwargs["template"] = None
    return WordPiece.bert(
        tokens,
        lowercase=bool(lowercase),
        suffix_indicator=suffix_indicator,
        special_tokens=list(specials),
        pad_token="[PAD]" if "[PAD]" in specials else specials[0],
        **kwargs,
    )


def _check_args(vocab_size, special_tokens, min_frequency, limit_alphabet, suffix_indicator, num_threads) -> list[str]:
    def int_at_least(name, v, lo):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}, found {v!r}")

    int_at_least("vocab_size", vocab_size, 1)
    int_at_least("min_frequency", min_frequency, 0)
    if limit_alphabet is not None:
        int_at_least("limit_alphabet", limit_alphabet, 0)
    if num_threads is not None:
        int_at_least("num_threads", num_threads, 1)
    if not isinstance(suffix_indicator, str):
        raise ValueError(f"suffix_indicator must be a str, found {suffix_indicator!r}")
    if isinstance(special_tokens, str):
        raise ValueError(f"special_tokens must be a sequence of str, found the str {special_tokens!r}")
    specials = list(special_tokens)
    seen = set()
    for t in specials:
        if not isinstance(t, str) or not t:
            raise ValueError(f"special tokens must be non-empty strings, found {t!r}")
        if t in seen:
            raise ValueError(f"special token {t!r} is given twice")
        seen.add(t)
    if "[UNK]" not in seen:
        raise ValueError(f"special_tokens must contain '[UNK]' (WordPiece's unknown token), found {specials!r}")
    if len(specials) > vocab_size:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(specials)} special tokens")
    return specials


# ------------------------------------------------------------------ corpus


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


def _iter_chunks(corpus: Corpus):
    """Text chunks of the corpus (documents joined by newlines; a chunk
    never splits a word) and a progress unit count for each."""
    if _is_path(corpus):
        yield from _file_chunks(os.fspath(corpus))
        return
    if isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be a path, paths or str documents, found bytes")
    batch: list[str] = []
    size = 0
    for i, item in enumerate(corpus):
        if type(item) is not str and isinstance(item, os.PathLike):
            if batch:
                yield "\n".join(batch), len(batch)
                batch, size = [], 0
            yield from _file_chunks(os.fspath(item))
            continue
        if not isinstance(item, str):
            raise TypeError(f"corpus item {i} must be a str document or an os.PathLike path, found {type(item).__name__}")
        batch.append(item)
        size += len(item) + 1
        if size >= _CHUNK_CHARS:
            yield "\n".join(batch), len(batch)
            batch, size = [], 0
    if batch:
        yield "\n".join(batch), len(batch)


def _file_chunks(path: str):
    """Decoded chunks of a UTF-8 file (read by :func:`.corpus.iter_file_text`,
    which names the file and byte offset of invalid UTF-8), cut after
    whitespace so that no word spans two chunks; with the bytes read for each."""
    from .corpus import iter_file_text

    if not os.path.exists(path):
        raise FileNotFoundError(f"corpus file not found: {path}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"corpus path is a directory, not a file: {path}")
    read = [0]  # bytes read since the last chunk was yielded

    def on_bytes(n: int) -> None:
        read[0] += n

    tail = ""  # text after the last whitespace, for the next chunk
    for text in iter_file_text(Path(path), chunk_size=_CHUNK_BYTES, on_bytes=on_bytes):
        text = tail + text
        k = max(text.rfind("\n"), text.rfind(" "))
        if k < 0:  # no break yet: keep collecting
            tail = text
            continue
        tail = text[k + 1 :]
        yield text[: k + 1], read[0]
        read[0] = 0
    if tail or read[0]:
        yield tail, read[0]


@lru_cache(maxsize=None)
def _char_table(lowercase: bool):
    """BERT's normalization (as from_pretrained with this ``lowercase``)
    and pre-tokenization classes in one table (see
    :func:`segkit.training._wordpiece_kernels.count_words`)."""
    table, pool = bert_rewrite_table(True, lowercase, lowercase, "hf")
    classes = bert_classes("hf", "hf")
    fate = table[table[np.arange(0x110000) >> 8] + (np.arange(0x110000) & 255)]
    flat = classes.astype(np.int32)
    flat[fate == -1] = -1
    flat[fate > 0] = fate[fate > 0] + 2
    return two_level(flat), pool, classes


class _WordTable:
    """One counting thread's table of words (see :func:`count_corpus_words`)."""

    def __init__(self, tables) -> None:
        self.ctab, self.pool, self.classes = tables
        self.slots = np.full(1 << 16, -1, dtype=np.int64)
        self.store = np.empty(1 << 16, dtype=np.int32)
        self.starts = np.zeros(1 << 14, dtype=np.int64)
        self.counts = np.zeros(1 << 14, dtype=np.int64)
        self.buf = np.empty(1024, dtype=np.int32)
        self.state = np.zeros(3, dtype=np.int64)
        self.n = 0

    def feed(self, text: str) -> None:
        """Count the words of one chunk (chunks end between words)."""
        state = self.state
        state[:] = 0
        # then a newline ends the chunk's last word
        for cps in (np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), _NEWLINE):
            state[:2] = 0  # from the first code point; state[2]: the open word
            while True:
                status, self.n = K.count_words(
                    cps, self.ctab, self.pool, self.classes, self.slots, self.store, self.starts, self.counts,
                    self.n, self.buf, state,
                )
                if status == 0:
                    break
                if status == 2:
                    self.buf = np.concatenate([self.buf, np.empty_like(self.buf)])
                    continue
                n = self.n
                if n + 2 > min(self.starts.size - 2, self.counts.size - 1):
                    self.starts = np.concatenate([self.starts, np.zeros_like(self.starts)])
                    self.counts = np.concatenate([self.counts, np.zeros_like(self.counts)])
                if self.starts[n] + state[2] + 1 > self.store.size:
                    self.store = np.concatenate(
                        [self.store, np.empty(max(self.store.size, int(state[2]) + 1), dtype=np.int32)]
                    )
                if 2 * (n + 2) > self.slots.size:
                    self.slots = K._span_rehash(self.slots, self.store, self.starts, n)

    def absorb(self, other: "_WordTable") -> None:
        """Add another thread's counts to this table."""
        m = other.n
        self.slots, self.store, self.starts, self.counts, self.n = K.merge_word_tables(
            self.slots, self.store, self.starts, self.counts, self.n,
            other.store[: other.starts[m]], other.starts[: m + 1], other.counts[:m],
        )

    def result(self):
        n = self.n
        return self.store[: self.starts[n]].copy(), self.starts[: n + 1].copy(), self.counts[:n].copy()


def count_corpus_words(corpus: Corpus, lowercase: bool, show_progress: bool = False, num_threads: int = 1):
    """Unique words of the corpus after BERT normalization and
    pre-tokenization: ``(code points, starts, counts)``; word ``k`` is
    ``cps[starts[k]:starts[k + 1]]``, seen ``counts[k]`` times.  With
    ``num_threads`` > 1, chunks go to that many threads, each counting into
    a table of its own (the kernel releases the GIL); the tables are then
    added up.  The word order differs, the counts do not (and training does
    not depend on the order)."""
    tables = _char_table(bool(lowercase))
    counters = [_WordTable(tables) for _ in range(max(1, num_threads))]
    bar = None
    if show_progress:
        from tqdm import tqdm

        bar = tqdm(desc="count words", unit=" units", file=sys.stderr)
    try:
        if len(counters) == 1:
            for text, units in _iter_chunks(corpus):
                counters[0].feed(text)
                if bar is not None:
                    bar.update(units)
        else:
            _count_threaded(counters, _iter_chunks(corpus), bar)
    finally:
        if bar is not None:
            bar.close()
    for other in counters[1:]:
        counters[0].absorb(other)
    return counters[0].result()


def _count_threaded(counters: list, chunks, bar) -> None:
    import queue
    import threading

    queues = [queue.Queue(maxsize=2) for _ in counters]
    failures: list[BaseException] = []

    def worker(i: int) -> None:
        while True:
            text = queues[i].get()
            if text is None:
                return
            if failures:
                continue  # drain after a failure elsewhere
            try:
                counters[i].feed(text)
            except BaseException as e:  # e.g. MemoryError while growing
                failures.append(e)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(len(counters))]
    for t in threads:
        t.start()
    try:
        for j, (text, units) in enumerate(chunks):
            if failures:
                break
            queues[j % len(counters)].put(text)
            if bar is not None:
                bar.update(units)
    finally:
        for q in queues:
            q.put(None)
        for t in threads:
            t.join()
    if failures:
        raise failures[0]


# ----------------------------------------------------------------- training


def initial_vocabulary(cps, starts, counts, specials, limit_alphabet, suffix_indicator, later_order=None):
    """``(tokens, first_id, cont_id, nonfirst)``: the initial token list and,
    per code point, the id of the character as a word's first symbol and as
    a later symbol (-1: not in the alphabet); ``nonfirst`` marks the word
    characters after a word's first.  ``later_order`` (for tests): a
    ranking function of the continuation characters instead of their code
    points, to replay another numbering (e.g. HuggingFace's)."""
    tokens = list(specials)
    index = {t: i for i, t in enumerate(tokens)}
    lengths = np.diff(starts)
    if cps.size:
        freq = np.bincount(cps, weights=np.repeat(counts, lengths).astype(np.float64))
        chars = np.flatnonzero(freq)
    else:
        freq = np.zeros(0)
        chars = np.zeros(0, dtype=np.int64)
    if limit_alphabet is not None and chars.size > limit_alphabet:
        order = np.lexsort((chars, -freq[chars]))  # count desc, code point asc
        chars = np.sort(chars[order[:limit_alphabet]])
    first_id = np.full(0x110000, -1, dtype=np.int32)
    cont_id = np.full(0x110000, -1, dtype=np.int32)
    for c in chars.tolist():
        s = chr(c)
        if s not in index:
            index[s] = len(tokens)
            tokens.append(s)
        first_id[c] = index[s]
    nonfirst = np.ones(cps.size, dtype=bool)
    nonfirst[starts[:-1][lengths > 0]] = False
    later = np.flatnonzero(np.bincount(cps[nonfirst]))
    later = later[first_id[later] >= 0].tolist()
    if later_order is not None:
        later.sort(key=later_order)
    for c in later:
        s = suffix_indicator + chr(c)
        if s not in index:
            index[s] = len(tokens)
            tokens.append(s)
        cont_id[c] = index[s]
    return tokens, first_id, cont_id, nonfirst


def _with_progress(kernel, args, progress, start: int, total: int):
    """Run a GIL-releasing kernel in a thread while a tqdm bar follows
    ``progress[0]``."""
    import threading

    from tqdm import tqdm

    result: list = []
    error: list = []

    def work():
        try:
            result.append(kernel(*args))
        except BaseException as e:  # pragma: no cover - re-raised below
            error.append(e)

    th = threading.Thread(target=work, daemon=True)
    with tqdm(desc="merge pairs", total=total, initial=start, unit=" tokens", file=sys.stderr) as bar:
        th.start()
        while th.is_alive():
            th.join(0.1)
            bar.update(max(0, int(progress[0]) - bar.n))
        if result:
            bar.update(max(0, result[0][3] - bar.n))
    if error:
        raise error[0]
    return result[0]


def _to_code_points(strings: list[str]):
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    st = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=st[1:])
    cps = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    return cps, st


def train_from_word_counts(
    cps, starts, counts, vocab_size, specials, min_frequency, limit_alphabet, suffix_indicator, with_merges=False,
    later_order=None, show_progress=False,
):
    """The trained token list (id order) from unique words and counts
    (with ``with_merges``: and the merges, rows of first id, second id,
    result id and the pair's count when merged)."""
    tokens, first_id, cont_id, nonfirst = initial_vocabulary(
        cps, starts, counts, specials, limit_alphabet, suffix_indicator, later_order
    )
    if len(tokens) > vocab_size:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the special tokens and the corpus's alphabet already make "
            f"{len(tokens)} tokens ({len(specials)} special, {len(tokens) - len(specials)} characters and "
            f"continuation characters); raise vocab_size or set limit_alphabet"
        )
    if cps.size == 0:
        return (tokens, np.zeros((0, 4), dtype=np.int64)) if with_merges else tokens
    sym = np.where(nonfirst, cont_id[cps], first_id[cps])
    keep = sym >= 0
    word_of = np.repeat(np.arange(counts.size), np.diff(starts))
    new_len = np.bincount(word_of[keep], minlength=counts.size)
    multi = new_len >= 2  # words of one symbol have no pairs
    keep &= multi[word_of]
    ws = sym[keep].astype(np.int32)
    wlen = new_len[multi].astype(np.int64)
    wstart = np.zeros(wlen.size + 1, dtype=np.int64)
    np.cumsum(wlen, out=wstart[1:])
    wcount = counts[multi].astype(np.int64)
    tcps, tstarts = _to_code_points(tokens)
    tslots = np.full(1024, -1, dtype=np.int64)
    while tslots.size < 4 * (vocab_size + 16):
        tslots = np.full(tslots.size * 2, -1, dtype=np.int64)
    tslots = K._span_rehash(tslots[: tslots.size // 2], tcps, tstarts, len(tokens))
    prefix = np.frombuffer(suffix_indicator.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    tcps = np.concatenate([tcps, np.zeros(max(1024, tcps.size), dtype=np.int32)])
    tstarts = np.concatenate([tstarts, np.zeros(vocab_size + 16, dtype=np.int64)])
    args = (ws, wstart, wlen, wcount, tslots, tcps, tstarts, len(tokens), prefix, vocab_size, max(1, int(min_frequency)))
    progress = np.zeros(1, dtype=np.int64)
    if show_progress:
        _, tstore, tstarts, ntok, merges = _with_progress(K.merge_loop, args + (progress,), progress, len(tokens), vocab_size)
    else:
        _, tstore, tstarts, ntok, merges = K.merge_loop(*args, progress)
    new = tstore[tstarts[len(tokens)] : tstarts[ntok]]
    text = new.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    bounds = (tstarts[len(tokens) : ntok + 1] - tstarts[len(tokens)]).tolist()
    tokens.extend(text[bounds[i] : bounds[i + 1]] for i in range(ntok - len(tokens)))
    return (tokens, merges) if with_merges else tokens
