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

from ..runtime import interrupts
from ..engine.charmap import two_level
from ..presets.wordpiece import WordPiece
from ..presets.wordpiece.normalization import bert_rewrite_table
from ..presets.wordpiece.pretokenize import bert_classes
from ..runtime.surrogates import check_text
from ..runtime.threads import check_threads
from . import _wordpiece_kernels as K
from .corpus import (CorpusError, check_file, check_special_tokens, doc_batches, open_corpus_file, parallel_calls,
                     run_parallel, utf8_check, utf8_error)

Corpus = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

#: Characters of documents per piece of work (joined, encoded and counted
#: in one go by one counting thread): small enough for pieces to spread
#: evenly over threads, large enough that handing them out costs little.
_CHUNK_CHARS = 1 << 18
_NEWLINE = np.array([10], dtype=np.uint32)
#: Bytes read from a file at a time (a piece of work, cut after whitespace).
_CHUNK_BYTES = 1 << 20


@interrupts.interruptible()
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
    errors: str = "strict",
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
    errors
        ``"strict"`` (invalid UTF-8 in a file raises
        :class:`~segkit.training.corpus.CorpusError` naming the file and the
        byte offset) or ``"replace"`` (U+FFFD).

    Returns
    -------
    WordPiece
        With BERT's pipeline (:meth:`segkit.WordPiece.bert`, the
        normalization of ``from_pretrained`` for this ``lowercase``).

    Raises
    ------
    TypeError
        Special tokens that are not a list of str.
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
    if show_progress:  # compile (or load) the kernels before a bar starts, so that none sits still
        _prepare(corpus, lowercase, specials, suffix_indicator, num_threads, errors)
    words, starts, counts = count_corpus_words(corpus, lowercase, show_progress, num_threads or 1, errors)
    return _wordpiece_from_counts(words, starts, counts, vocab_size, lowercase, specials, min_frequency,
                                  limit_alphabet, suffix_indicator, show_progress)


#: Compile time of the training kernels on a small machine (2 cores), for
#: the notice printed when they have to be compiled in a process.
COMPILE_SECONDS = 20


def _prepare(corpus, lowercase, specials, suffix_indicator, num_threads, errors) -> None:
    """Train on a tiny corpus of the same kind (files or texts) with the
    same options, without bars: whatever the real run will compile is
    compiled now, announced by :func:`segkit.runtime.jit.prepare`."""
    import tempfile

    from ..runtime import jit

    text = "low lower lowest newer newest"
    from_files = isinstance(corpus, (str, os.PathLike)) or (  # as corpus_paths tells them apart
        isinstance(corpus, (list, tuple)) and bool(corpus) and all(isinstance(p, os.PathLike) for p in corpus))

    def tiny():
        kw = dict(lowercase=lowercase, special_tokens=specials, suffix_indicator=suffix_indicator,
                  num_threads=num_threads, show_progress=False, errors=errors)
        if not from_files:
            return train_wordpiece([text], len(specials) + 40, **kw)
        with tempfile.TemporaryDirectory(prefix="segkit-prepare-") as d:
            path = Path(d) / "tiny.txt"
            path.write_text(text, encoding="utf-8")
            return train_wordpiece([path], len(specials) + 40, **kw)

    jit.prepare([tiny], COMPILE_SECONDS)


@interrupts.interruptible()
def _wordpiece_from_counts(words, starts, counts, vocab_size, lowercase, specials, min_frequency, limit_alphabet,
                           suffix_indicator, show_progress) -> WordPiece:
    """:func:`train_wordpiece` after counting (also the entry point of
    :func:`segkit.scale.dask.train_wordpiece`, which counts elsewhere)."""
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
    check_threads(num_threads, all_cores=False)
    if not isinstance(suffix_indicator, str):
        raise ValueError(f"suffix_indicator must be a str, found {suffix_indicator!r}")
    check_text(suffix_indicator, "suffix_indicator")
    specials = check_special_tokens(special_tokens)
    if "[UNK]" not in specials:
        raise ValueError(f"special_tokens must contain '[UNK]' (WordPiece's unknown token), found {specials!r}")
    if len(specials) > vocab_size:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(specials)} special tokens")
    return specials


# ------------------------------------------------------------------ corpus


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


def _iter_items(corpus: Corpus, errors: str = "strict"):
    """Work items of the corpus for the counting threads, each with a
    progress unit count: ``("docs", items, first index, errors)`` (documents,
    joined by newlines by the thread that counts them; see
    :func:`_count_item`) and ``("bytes", data, path, offset, errors)`` (a
    piece of a file cut after a space or newline, so that no word spans two
    pieces; decoded by the thread that counts it).  Everything per document
    or character happens in the counting threads: this generator, run by the
    thread handing the items out, does no Python step per document."""
    if _is_path(corpus):
        yield from _file_pieces(os.fspath(corpus), errors)
        return
    if isinstance(corpus, (bytes, bytearray)) or not isinstance(corpus, Iterable):
        raise TypeError(f"corpus must be a path, paths or str documents, found {type(corpus).__name__}")
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        for p in corpus:  # files: read here, their pieces spread over the threads
            yield from _file_pieces(os.fspath(p), errors)
        return
    for first, batch in doc_batches(corpus, _CHUNK_CHARS):
        yield ("docs", batch, first, errors), len(batch)


def _file_pieces(path: str, errors: str):
    """Pieces of a file's bytes (``_CHUNK_BYTES`` read at a time) cut after
    the last space or newline, with the bytes read for each.  Both are ASCII,
    so a cut never splits a UTF-8 sequence and every piece decodes on its
    own exactly as within the whole file."""
    check_file(Path(path))
    carry = bytearray()
    offset = 0  # file offset of carry[0]
    read = 0  # bytes read since the last piece was handed out
    with open_corpus_file(path) as f:
        while True:
            raw = f.read(_CHUNK_BYTES)
            if not raw:
                break
            read += len(raw)
            carry += raw
            k = max(carry.rfind(b"\n", len(carry) - len(raw)), carry.rfind(b" ", len(carry) - len(raw)))
            if k < 0:  # no break yet: keep collecting
                continue
            yield ("bytes", bytes(carry[: k + 1]), path, offset, errors), read
            del carry[: k + 1]
            offset += k + 1
            read = 0
    if carry or read:
        yield ("bytes", bytes(carry), path, offset, errors), read


def _count_item(table: "_WordTable", item) -> None:
    """Count a work item of :func:`_iter_items` into ``table``.  A list of
    documents holding a path (not a str) counts that file here, piece by
    piece (the rare mixed corpus is not spread over threads)."""
    if item[0] == "bytes":
        table.feed(_file_code_points(*item[1:]))
        return
    _, docs, first, errors = item
    try:
        text = "\n".join(docs)
    except TypeError:
        pass
    else:
        try:
            data = text.encode("utf-32-le")
        except UnicodeEncodeError:  # a lone surrogate: refused or replaced (segkit.runtime.surrogates)
            data = "\n".join(_utf8_documents(docs, first, errors)).encode("utf-32-le")
        table.feed(np.frombuffer(data, dtype=np.uint32))
        return
    run: list[str] = []
    run_first = first
    for i, doc in enumerate(docs, first):
        if isinstance(doc, str):
            if not run:
                run_first = i
            run.append(doc)
            continue
        if run:
            _count_item(table, ("docs", run, run_first, errors))
            run = []
        if not isinstance(doc, os.PathLike):
            raise TypeError(f"corpus item {i} must be a str document or an os.PathLike path, found {type(doc).__name__}")
        for piece, _ in _file_pieces(os.fspath(doc), errors):
            _count_item(table, piece)
    if run:
        _count_item(table, ("docs", run, run_first, errors))


def _utf8_documents(docs: list[str], first: int, errors: str):
    """The documents, each checked for lone surrogates: a
    :class:`~segkit.training.corpus.CorpusError` naming the first (document
    index and character) with ``errors="strict"``; replaced by ``"?"`` with
    ``"replace"``, as :func:`segkit.train_bpe` replaces them."""
    for i, doc in enumerate(docs, first):
        if errors == "strict":
            yield check_text(doc, f"document {i}", CorpusError)
        else:
            yield doc.encode("utf-8", "replace").decode("utf-8")


def _file_code_points(data: bytes, path: str, offset: int, errors: str) -> np.ndarray:
    """The code points (uint32) of a piece of a file.  Valid UTF-8 is
    checked and decoded in compiled code, without the GIL; invalid bytes are
    decoded by Python, for the error or the U+FFFD."""
    buf = np.frombuffer(data, dtype=np.uint8)
    if utf8_check(buf)[0] < 0:
        return K.utf8_code_points(buf)
    try:
        text = data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise utf8_error(path, offset, e) from None
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


@lru_cache(maxsize=None)
def _char_table(lowercase: bool):
    """BERT's normalization (as from_pretrained with this ``lowercase``)
    and pre-tokenization classes in one table (see
    :func:`segkit.training._wordpiece_kernels.count_words`)."""
    table, pool = bert_rewrite_table(True, lowercase, lowercase, "hf")
    classes = bert_classes("hf", "hf")
    cp = np.arange(0x110000)
    fate = table[table[cp >> 8] + (cp & 255)]
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

    def feed(self, code_points: np.ndarray) -> None:
        """Count the words of one chunk (uint32 code points; chunks end
        between words)."""
        state = self.state
        state[:] = 0
        # then a newline ends the chunk's last word
        for cps in (code_points, _NEWLINE):
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

    def result(self):
        n = self.n
        return self.store[: self.starts[n]].copy(), self.starts[: n + 1].copy(), self.counts[:n].copy()


def count_corpus_words(corpus: Corpus, lowercase: bool, show_progress: bool = False, num_threads: int = 1,
                       errors: str = "strict"):
    """Unique words of the corpus after BERT normalization and
    pre-tokenization: ``(code points, starts, counts)``; word ``k`` is
    ``cps[starts[k]:starts[k + 1]]``, seen ``counts[k]`` times.

    With ``num_threads`` > 1, each thread takes the next piece of the corpus
    when it is free, joins or decodes it and counts its words into a table
    of its own (the kernel releases the GIL; the thread handing out pieces
    does no work per document or character).  The tables are then added up
    in parallel too: words are split by hash into ``num_threads`` parts, and
    each thread adds up one part of every table.  The word order differs,
    the counts do not (and training does not depend on the order)."""
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', found {errors!r}")
    tables = _char_table(bool(lowercase))
    nthreads = max(1, num_threads)
    # A thread makes its table when it first gets work: memory follows the
    # threads that counted, not num_threads.
    counters: list = [None] * nthreads

    def count(t: int, item) -> None:
        if counters[t] is None:
            counters[t] = _WordTable(tables)
        _count_item(counters[t], item)

    bar = None
    if show_progress:
        from tqdm import tqdm

        bar = tqdm(desc="count words", file=sys.stderr, **_bar_units(corpus))
    try:
        run_parallel(
            _iter_progress(_iter_items(corpus, errors), bar),
            count,
            nthreads,
        )
    finally:
        if bar is not None:
            bar.close()
    counters = [c for c in counters if c is not None] or [_WordTable(tables)]
    if len(counters) == 1:
        return counters[0].result()
    return _add_up(counters)


def _bar_units(corpus) -> dict:
    """tqdm's total and unit for counting ``corpus`` (the units of
    :func:`_iter_items`): the files' bytes, or the number of documents of a
    list, so that the bar shows how far it is and an ETA."""
    paths = None
    if _is_path(corpus):
        paths = [corpus]
    elif isinstance(corpus, (list, tuple)) and corpus and all(isinstance(p, os.PathLike) for p in corpus):
        paths = list(corpus)
    if paths is not None:
        try:
            total = sum(os.path.getsize(p) for p in paths)
        except OSError:
            total = None
        return {"total": total, "unit": "B", "unit_scale": True}
    total = len(corpus) if isinstance(corpus, (list, tuple)) else None
    return {"total": total, "unit": " docs"}


def _iter_progress(items, bar):
    """The items of ``(item, units)`` pairs, advancing ``bar`` by the units."""
    for item, units in items:
        yield item
        if bar is not None:
            bar.update(units)


def _add_up(counters: list) -> tuple:
    """The per-thread tables added up, on as many threads: each looks up a
    share of the next table's words in the sum so far (adding the counts of
    words it holds, listing the others, which are new to it and distinct),
    then the new words are appended."""
    nthreads = len(counters)
    first = counters[0]
    n = first.n
    slots, store, starts, counts = first.slots, first.store[: first.starts[n]], first.starts[: n + 1], first.counts[:n]
    for t, other in enumerate(counters[1:], 1):
        m = other.n
        b = (other.store, other.starts, other.counts)
        bounds = [m * i // nthreads for i in range(nthreads + 1)]

        def share(i: int):
            new = np.empty(bounds[i + 1] - bounds[i], dtype=np.int64)
            k = K.add_known_words(slots, store, starts, counts, *b, bounds[i], bounds[i + 1], new)
            return K.gather_words(*b, new[:k])

        parts = parallel_calls([lambda i=i: share(i) for i in range(nthreads)])
        counters[t] = None  # free the thread's table
        store = np.concatenate([store] + [p[0] for p in parts])
        lengths = np.concatenate([p[1] for p in parts])
        starts = np.concatenate([starts, starts[-1] + np.cumsum(lengths)])
        counts = np.concatenate([counts] + [p[2] for p in parts])
        if t + 1 < nthreads:  # the next table is looked up in this sum
            size = 1024
            while size < 2 * counts.size:
                size *= 2
            slots = K._span_rehash(np.empty(size, dtype=np.int64), store, starts, counts.size)
    if nthreads == 1:
        return first.result()
    return store, starts, counts


# ----------------------------------------------------------------- training


def initial_vocabulary(cps, starts, counts, specials, limit_alphabet, suffix_indicator, later_order=None):
    """``(tokens, first_id, cont_id)``: the initial token list and, per code
    point, the id of the character as a word's first symbol and as a later
    symbol (-1: not in the alphabet).  ``later_order`` (for tests): a
    ranking function of the continuation characters instead of their code
    points, to replay another numbering (e.g. HuggingFace's)."""
    tokens = list(specials)
    index = {t: i for i, t in enumerate(tokens)}
    freq, later_mask = K.char_stats(cps, starts, counts)
    chars = np.flatnonzero(freq)
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
    later = np.flatnonzero(later_mask)
    later = later[first_id[later] >= 0].tolist()
    if later_order is not None:
        later.sort(key=later_order)
    for c in later:
        s = suffix_indicator + chr(c)
        if s not in index:
            index[s] = len(tokens)
            tokens.append(s)
        cont_id[c] = index[s]
    return tokens, first_id, cont_id


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
    tokens, first_id, cont_id = initial_vocabulary(cps, starts, counts, specials, limit_alphabet, suffix_indicator,
                                                   later_order)
    if len(tokens) > vocab_size:
        raise ValueError(
            f"vocab_size {vocab_size} is too small: the special tokens and the corpus's alphabet already make "
            f"{len(tokens)} tokens ({len(specials)} special, {len(tokens) - len(specials)} characters and "
            f"continuation characters); raise vocab_size or set limit_alphabet"
        )
    if cps.size == 0:
        return (tokens, np.zeros((0, 4), dtype=np.int64)) if with_merges else tokens
    ws, wstart, wlen, wcount = K.word_symbols(cps, starts, counts, first_id, cont_id)
    # Each merge joins two adjacent symbols of a word, so at most
    # sum(length - 1) merges can add a token: the tables sized by the
    # vocabulary follow what the corpus can give, not vocab_size.
    vocab_size = min(int(vocab_size), len(tokens) + int((wlen - 1).sum()))
    # (counts are int64: a larger min_frequency stops as early as this one)
    min_frequency = min(max(1, int(min_frequency)), np.iinfo(np.int64).max)
    tcps, tstarts = _to_code_points(tokens)
    tslots = np.full(1024, -1, dtype=np.int64)
    while tslots.size < 4 * (vocab_size + 16):
        tslots = np.full(tslots.size * 2, -1, dtype=np.int64)
    tslots = K._span_rehash(tslots[: tslots.size // 2], tcps, tstarts, len(tokens))
    prefix = np.frombuffer(suffix_indicator.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    tcps = np.concatenate([tcps, np.zeros(max(1024, tcps.size), dtype=np.int32)])
    tstarts = np.concatenate([tstarts, np.zeros(vocab_size + 16, dtype=np.int64)])
    args = (ws, wstart, wlen, wcount, tslots, tcps, tstarts, len(tokens), prefix, vocab_size, min_frequency)
    progress = np.zeros(1, dtype=np.int64)
    stop = interrupts.stop_flag()
    if show_progress:
        _, tstore, tstarts, ntok, merges = _with_progress(K.merge_loop, args + (progress, stop), progress, len(tokens),
                                                          vocab_size)
    else:
        _, tstore, tstarts, ntok, merges = K.merge_loop(*args, progress, stop)
    interrupts.checkpoint()  # the loop ended early if the call was cancelled
    new = tstore[tstarts[len(tokens)] : tstarts[ntok]]
    text = new.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    bounds = (tstarts[len(tokens) : ntok + 1] - tstarts[len(tokens)]).tolist()
    tokens.extend(text[bounds[i] : bounds[i + 1]] for i in range(ntok - len(tokens)))
    return (tokens, merges) if with_merges else tokens
