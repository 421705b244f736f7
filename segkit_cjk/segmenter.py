"""Chinese word segmentation by forward, backward or bidirectional MaxMatch."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any
from itertools import chain

import numpy as np

from segkit.engine import LOOKAHEAD, SPACE, Automaton, EngineConfig, join_code_points, resolve_entry, to_code_points
from segkit.presets.base import (
    NO_OBJECTS,
    Preset,
    Vocabulary,
    automaton_arrays,
    automaton_from_arrays,
    cacheable_file,
    interruptible,
    list_of,
    lists_of,
    map_code_point_chunks,
    paused_gc,
    triple_list_of,
    triples_of,
    valid_id_mask,
    vocabulary_and_keys,
    vocabulary_state,
    white_space,
)

from . import _kernels, _overlay
from .dictionary import clean_words, read_dictionary
from .scratch import MAX_ONE_CHARS, SCRATCH

MODES = ("forward", "backward", "bidirectional")

#: Id of tokens that are not dictionary words (unseen characters, merged runs).
NOT_A_WORD = -1


def _classes() -> np.ndarray:
    classes = np.zeros(0x110000, dtype=np.uint8)
    classes[white_space()] = SPACE
    return classes


#: transformers' names that are about ids (see
#: :mod:`segkit.presets.transformers_names`): a word segmenter has none.
_ID_NAMES = frozenset({
    "encode", "encode_batch", "decode", "batch_decode", "decode_batch", "convert_ids_to_tokens",
    "convert_tokens_to_ids", "vocab_size", "get_vocab", "get_vocab_size", "token_to_id", "id_to_token",
    "pad_token_id", "unk_token_id", "cls_token_id", "sep_token_id", "bos_token_id", "eos_token_id",
    "mask_token_id", "save_pretrained"})


class ChineseMaxMatch(Preset):
    """Dictionary-based Chinese word segmentation with MaxMatch, in linear time.

    Parameters
    ----------
    dictionary
        A path to a word list (one word per line) or a jieba-format dictionary
        (``word [freq] [tag]``), an iterable of words, or None for the bundled
        default (jieba's dictionary, 349,045 words, MIT licence).  A file of
        64 KiB or more is built once and then kept in segkit's model cache
        (:mod:`segkit.models.cache`; ``SEGKIT_CACHE_DIR=off`` disables it).
    mode
        ``"forward"`` (longest word starting at the current position),
        ``"backward"`` (longest word ending at the current position, scanning
        from the end) or ``"bidirectional"`` (the default: both, then per
        ambiguous stretch the result with fewer words, then fewer
        one-character words, then the backward one; a stretch is the text
        between two positions where both results have a word boundary).
        Bidirectional has the best F1 of the three on all four SIGHAN 2005
        corpora (see :doc:`/chinese`) and costs about twice as much as one
        direction.
    alnum_runs
        True: runs of Latin letters and digits (half- or full-width, with a
        decimal point between digits and a trailing percent sign) become one
        token, as jieba users expect.  False: the textbook algorithm, where
        every character that starts no dictionary word is a token of its own.
    keep_whitespace
        False: whitespace separates words and is dropped.  True: whitespace
        is kept as tokens where jieba makes them (each whitespace character
        is a token, ``"\\r\\n"`` one token), so every character of the text
        is in exactly one token and ``"".join(cut(text)) == text``.

    Notes
    -----
    Whitespace (Unicode ``White_Space``) separates words and, by default,
    is not part of any token: ``"".join(cut(text))`` is ``text`` without
    its whitespace, and :meth:`tokenize` gives each token's character
    offsets in ``text``.  With ``keep_whitespace=True`` the whitespace
    characters are tokens too (see :doc:`/chinese` for what then matches
    jieba exactly).
    Punctuation is matched like any other character (a dictionary entry can
    contain it); an unmatched punctuation mark is a one-character token.
    Characters of other scripts pass through the same way: a run of letters
    is kept whole with ``alnum_runs=True`` only for Latin letters and digits.

    Examples
    --------
    >>> seg = ChineseMaxMatch(["研究", "研究生", "生命", "命", "起源"], mode="forward")
    >>> seg.cut("研究生命起源")
    ['研究生', '命', '起源']
    >>> ChineseMaxMatch(["研究", "研究生", "生命", "命", "起源"], mode="backward").cut("研究生命起源")
    ['研究', '生命', '起源']
    """

    @interruptible(source="dictionary")
    def __init__(
        self,
        dictionary: str | os.PathLike | Iterable[str] | None = None,
        *,
        mode: str = "bidirectional",
        alnum_runs: bool = True,
        keep_whitespace: bool = False,
    ) -> None:
        ws = _check_flag("keep_whitespace", keep_whitespace)
        if dictionary is None:
            from .default import default_segmenter

            from .default import default_source

            loaded = default_segmenter(ChineseMaxMatch, _check_mode(mode))
            self._assemble(loaded._vocab, mode, alnum_runs, loaded._automata, ws)
            self._source = ("chinese-default", default_source())
            return
        source = cacheable_file(dictionary)
        if source is not None:
            from .default import cached_segmenter

            mode = _check_mode(mode)
            loaded = cached_segmenter(ChineseMaxMatch, "chinese-file", source, mode,
                                      lambda: Vocabulary(read_dictionary(dictionary)))
            if isinstance(loaded, ChineseMaxMatch) and loaded.mode == mode:
                self._assemble(loaded._vocab, mode, alnum_runs, loaded._automata, ws)
                self._source = ("chinese-file", source)
                return
        if isinstance(dictionary, (str, os.PathLike)):
            words = read_dictionary(dictionary)
        else:
            words = clean_words(dictionary)
        self._assemble(Vocabulary(words), _check_mode(mode), alnum_runs, {}, ws)

    def _assemble(
        self, vocab: Vocabulary, mode: str, alnum_runs: bool, automata: dict, keep_whitespace: bool = False
    ) -> None:
        self.mode = mode
        self.alnum_runs = _check_flag("alnum_runs", alnum_runs)
        self.keep_whitespace = _check_flag("keep_whitespace", keep_whitespace)
        self._lock = threading.Lock()  # serializes changes and automaton builds
        # (kind, bytes) the unchanged dictionary was cached under (None: not cached), see load_userdict
        self._source: tuple[str, bytes] | None = None
        self._dict = _Dictionary(vocab, automata)

    # One dictionary state, read once per call (see _Dictionary).
    @property
    def _vocab(self) -> Vocabulary:
        """The vocabulary of the current words (added and deleted ones
        folded in)."""
        return self._dict.folded().vocab

    @property
    def _automata(self) -> dict:
        return self._dict.automata

    @property
    def _strings(self) -> "_WordCache":
        return self._dict.strings

    def _directions(self) -> tuple[str, ...]:
        return ("forward", "backward") if self.mode == "bidirectional" else (self.mode,)

    def __getattr__(self, name: str) -> Any:
        # (reached only for a missing attribute)
        if name in _ID_NAMES:
            raise AttributeError(
                f"ChineseMaxMatch has no {name}: it cuts text into words (cut, tokenize, cut_batch), as jieba "
                "does, and gives no token ids, so transformers' id names do not apply; for a BERT model's ids use "
                "segkit.from_pretrained('bert-base-chinese'), or map the words through your own vocabulary")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ------------------------------------------------------------ dictionary
    @property
    def words(self) -> list[str]:
        """The dictionary words (a copy)."""
        return self._dict.words()

    def add_word(self, word: str) -> None:
        """Add a word; it takes effect from the next call on.

        Cheap: the dictionary's automata are kept, and the words added since
        go in a small automaton of their own, built on the next call (see
        :mod:`segkit_cjk._overlay`), so a loop of ``add_word`` calls then a
        cut costs milliseconds, with the results of a dictionary that had
        the words from the start.  Safe while other threads segment: a call
        already running finishes with the dictionary it started with (its
        automata and word strings together, see :class:`_Dictionary`).

        >>> seg = ChineseMaxMatch(["北京", "大学"])
        >>> seg.add_word("北京大学")
        >>> seg.cut("北京大学")
        ['北京大学']
        """
        self.add_words([word])

    @interruptible("words")
    def add_words(self, words: Iterable[str]) -> None:
        """Add several words (see :meth:`add_word`)."""
        self._add_clean(clean_words(words, "add_word"))

    def _add_clean(self, new: list[str]) -> None:
        self._source = None  # changed: no longer the cached dictionary
        with self._lock:
            state = self._dict
            fresh = [w for w in dict.fromkeys(new) if not state.has(w)]
            if fresh:
                self._dict = state.with_added(fresh)  # published whole

    def del_word(self, word: str) -> None:
        """Remove a word; it takes effect from the next call on (like
        :meth:`add_word`, as cheap, and as safe to call while other threads
        segment).

        A word not in the dictionary is ignored, as jieba's ``del_word``
        ignores it (no error).  Its characters are then matched as any
        others: removing ``"北京大学"`` leaves ``"北京"`` and ``"大学"``.

        >>> seg = ChineseMaxMatch(["北京", "大学", "北京大学"])
        >>> seg.del_word("北京大学")
        >>> seg.cut("北京大学")
        ['北京', '大学']
        >>> seg.del_word("不在词典里")  # not a word of the dictionary: nothing happens
        """
        if not isinstance(word, str):
            raise TypeError(f"del_word: expected a word as str, found {type(word).__name__} {word!r:.60}")
        with self._lock:
            state = self._dict
            if state.has(word):
                self._dict = state.without(word)  # published whole

    @interruptible(source="path")
    def load_userdict(self, path: str | os.PathLike) -> None:
        """Add the words of a user dictionary file (word list or jieba format).

        Read as jieba reads it (see :func:`segkit_cjk.dictionary.read_dictionary`):
        a word containing spaces (``Edu Trust认证 2000``) is kept, with one
        warning per file, though it can never match.

        A large file (more words than are kept beside the dictionary, see
        :data:`FOLD_WORDS`) added to a dictionary that came from segkit's
        model cache (the default one, or a large file) gives a dictionary
        that is cached too, under both sources' bytes: the next process
        with the same files loads it instead of building it.
        """
        words = read_dictionary(path)
        source = self._source
        with self._lock:
            state = self._dict
            fresh = [w for w in dict.fromkeys(words) if not state.has(w)]
            big = len(fresh) + state.n_added > max(FOLD_WORDS, state.vocab.size // 8)
            if not (big and source is not None and not state.changed):
                self._source = None
            else:
                from pathlib import Path

                from .default import cached_segmenter

                merged = source[1] + b"\0userdict\0" + Path(path).read_bytes()
                loaded = cached_segmenter(ChineseMaxMatch, f"{source[0]}+userdict", merged, self.mode,
                                          lambda: Vocabulary(state.words() + fresh))
                if isinstance(loaded, ChineseMaxMatch) and loaded.mode == self.mode:
                    self._dict = _Dictionary(loaded._vocab, loaded._automata)
                    self._source = (f"{source[0]}+userdict", merged)
                    return
                self._source = None
        self._add_clean(words)

    def _automaton(self, direction: str) -> Automaton:
        return self._snapshot((direction,), self._dict)[0]

    def _snapshot(self, directions: tuple[str, ...], state: "_Dictionary | None" = None) -> list[Automaton]:
        """The automata of the dictionary ``state`` (default: the current
        one), built if needed and then kept in that state."""
        if state is None:
            state = self._dict
        automata = state.automata
        if all(d in automata for d in directions):
            return [automata[d] for d in directions]
        with self._lock:
            automata = dict(state.automata)
            vocab = state.vocab
            missing = [d for d in directions if d not in automata]

            def build(d: str) -> Automaton:
                return Automaton.build(vocab.tokens, vocab.ids, _engine_config(d), _classes())

            if len(missing) == 2:  # both directions: their compiled steps release the GIL, build at once
                from concurrent.futures import ThreadPoolExecutor

                vocab.tokens  # noqa: B018 - made once, before the threads read it
                with ThreadPoolExecutor(2) as pool:
                    automata.update(zip(missing, pool.map(build, missing)))
            else:
                automata.update((d, build(d)) for d in missing)
            state.automata = automata  # (more automata of the same dictionary: the state stays one state)
            return [automata[d] for d in directions]

    # ---------------------------------------------------- saving and loading
    def _model_state(self):
        state = self._dict.folded()  # the dictionary and automata of one state, even with add_word running
        vocab = state.vocab
        automata = self._snapshot(self._directions(), state)
        arrays, blobs = vocabulary_state(vocab)
        configs = {}
        for d, automaton in zip(self._directions(), automata):
            conf, arr = automaton_arrays(automaton, d)
            configs[d] = conf
            arrays.update(arr)
        config = {"mode": self.mode, "alnum_runs": self.alnum_runs, "automata": configs}
        if self.keep_whitespace:  # (absent: False, as in files written before it existed)
            config["keep_whitespace"] = True
        return config, arrays, blobs

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        """A segmenter from a model file's parts, validated: the mode's
        automata and nothing else, each a well-formed automaton whose ids
        are dictionary ids (or :data:`NOT_A_WORD`) and whose configuration
        is the one this class builds."""
        mode = _check_mode(config["mode"])
        stored = config["automata"]
        obj = cls.__new__(cls)
        directions = ("forward", "backward") if mode == "bidirectional" else (mode,)
        if not isinstance(stored, dict) or set(stored) != set(directions):
            raise ValueError(f"{source}: mode {mode!r} needs automata {list(directions)}, found {list(stored)!r:.80}")
        vocab, keys = vocabulary_and_keys(arrays, blobs, source=source)
        ids = valid_id_mask(vocab, minus_one=True)
        classes = _classes()

        def checked(d: str) -> Automaton:
            a = automaton_from_arrays(stored[d], arrays, d, source, ids, keys, classes)
            if a.config != _engine_config(d):
                raise ValueError(f"{source}: the {d} automaton's configuration {a.config} is not {_engine_config(d)}")
            return a

        if len(directions) == 2:
            # The checks are compiled and release the GIL: both automata at once.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(2) as pool:
                automata = dict(zip(directions, pool.map(checked, directions)))
        else:
            automata = {directions[0]: checked(directions[0])}
        obj._assemble(vocab, mode, config["alnum_runs"], automata, config.get("keep_whitespace", False))
        return obj

    def _parts(self) -> tuple:
        state = self._dict.folded()
        return (state.vocab, self.mode, self.alnum_runs, dict(state.automata), self.keep_whitespace)

    @classmethod
    def _from_parts(cls, vocab, mode, alnum_runs, automata, keep_whitespace=False) -> "ChineseMaxMatch":
        obj = cls.__new__(cls)
        obj._assemble(vocab, mode, alnum_runs, automata, keep_whitespace)
        return obj

    # ---------------------------------------------------------- segmentation
    def _segment_cps(self, cps, bounds, plan):
        """Tokens of joined texts by ``plan`` (:meth:`_state`: this mode's
        automata and changes of one dictionary state), before runs of
        letters and digits are merged: ``(ids, starts, ends, rows)``; with
        one direction and no changes, views of this thread's scratch (see
        :class:`_Scratch`), valid until its next call."""
        automata, changes = plan
        if self.mode == "bidirectional":
            fa, ba = automata
            f = _split(fa.segment_code_points(cps, bounds, out=SCRATCH.token_rows(cps.size)))
            b = _split(ba.segment_code_points(cps, bounds, out=SCRATCH.token_rows(cps.size, second=True)))
            if changes is not None:
                f = _changed(cps, bounds, f, fa, changes, 0)
                b = _changed(cps, bounds, b, ba, changes, 1)
            return _kernels.choose_bidirectional(*f, *b)
        # One direction: a text of n characters has at most n tokens, so
        # rows for all of them never grow (and, reused, never fault).
        out = SCRATCH.token_rows(cps.size)
        tokens = _split(automata[0].segment_code_points(cps, bounds, out=out))
        return tokens if changes is None else _changed(cps, bounds, tokens, automata[0], changes, 0)

    def _tokens_cps(self, cps, bounds, automata):
        """:meth:`_segment_cps`, with ``keep_whitespace`` the whitespace
        between the tokens made tokens too: ``(ids, starts, ends, rows)``."""
        segmented = self._segment_cps(cps, bounds, automata)
        if self.keep_whitespace:
            segmented = _kernels.fill_gaps(cps, bounds, *segmented)
        return segmented

    def _state(self, n_chars: int = 0) -> tuple[tuple, "_WordCache"]:
        """What segments by one dictionary state (the state read once), and
        its string cache: taken once per call, so that a call, and the
        threads of one call, never mix two dictionaries when add_word or
        del_word runs meanwhile.  The first is ``(automata, changes)``: the
        base automata of this mode's directions and None, or the added
        words' automata and the deleted mask (see :func:`_changed`)."""
        state = self._dict
        if state.changed and n_chars:
            # Correcting tokens costs about as much again as matching them:
            # once a state has corrected as many characters as a rebuild
            # costs, fold the changes in (one rebuild, then full speed).
            state.corrected += n_chars
            if state.corrected > FOLD_CHARS + FOLD_CHARS_PER_WORD * state.vocab.size:
                with self._lock:
                    if self._dict is state:
                        self._dict = state.folded()
                state = self._dict
        automata = self._snapshot(self._directions(), state)
        changes = None
        if state.changed:
            changes = (self._overlay(state), state.dead)
        cache = state.strings
        if self.keep_whitespace:
            cache.hold_newlines()
        return (automata, changes), cache

    def _overlay(self, state: "_Dictionary") -> list[Automaton]:
        """The automata of the words added in ``state`` (this mode's
        directions), built if needed and then kept in that state."""
        directions = self._directions()
        overlay = state.overlay
        if all(d in overlay for d in directions):
            return [overlay[d] for d in directions]
        with self._lock:
            overlay = dict(state.overlay)
            words = state.added[: state.n_added]
            ids = np.arange(state.vocab.size, state.vocab.size + len(words), dtype=np.int32)
            for d in directions:
                if d not in overlay:
                    overlay[d] = Automaton.build(words, ids, _engine_config(d), _classes())
            state.overlay = overlay
            return [overlay[d] for d in directions]

    def _by_runs(self, offsets: bool, texts: Sequence[str], num_threads: int | None) -> list:
        """The words of the joined ``texts`` (with ``offsets``: ``(word,
        start, end)``), by runs on up to ``num_threads`` threads, each run's
        results (one per text) in order.  Each thread segments its run and
        makes its Python objects with its own scratch; the GIL is held only
        while making objects.  All threads use one dictionary state."""
        texts = _check_batch(texts)
        cps, bounds = join_code_points(texts)
        automata, cache = self._state(cps.size)

        def run(cps, bounds):
            return _word_results(cps, bounds, *self._tokens_cps(cps, bounds, automata), self.alnum_runs, cache,
                                 offsets)

        with paused_gc():
            parts = map_code_point_chunks(run, cps, bounds, num_threads)
        return parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))

    def _one(self, text: object, offsets: bool) -> list | None:
        """The words of one text (with ``offsets``: ``(word, start, end)``),
        by :func:`_kernels.segment_one`; ``None`` for a long text, which
        takes the batch path."""
        if len(_check_text(text)) > MAX_ONE_CHARS:
            return None
        current = self._dict
        if current.changed:
            return None  # words added or deleted: the batch path corrects the tokens (see _changed)
        cps = to_code_points(text)
        state = current.one
        if state is None:
            state = current.one = self._make_one_state(current)
        settings, cache, entries = state
        scratch, seen, stamp = SCRATCH.take_one(cps.size)
        try:
            args = (cps, *settings, cache.slot_of(), seen, stamp, scratch)
            # One specialization per kind of code point array (the automata's
            # arrays, and everything else, keep their types for this state).
            entry = entries.get(cps.flags.writeable)
            if entry is None:
                (w, r, k, u), entries[cps.flags.writeable] = resolve_entry(_kernels.segment_one, *args)
            else:
                w, r, k, u = entry(*args)
            if not w:
                return []
            return _results(cache, scratch[8, :w], scratch[9, :r], scratch[10, :k], u,
                            scratch[11, :w], scratch[12, :w], None, offsets)
        finally:
            SCRATCH.give_back(scratch)

    def _make_one_state(self, state: "_Dictionary") -> tuple:
        """What :meth:`_one` passes on, worked out once per dictionary state
        (and kept in it): ``((forward, backward, mode, flags, alnum_runs,
        vocab_size, keep_whitespace), cache, resolved entry points)``."""
        automata = self._snapshot(self._directions(), state)
        cache = state.strings
        if self.keep_whitespace:
            cache.hold_newlines()
        flags = 3 | (LOOKAHEAD if automata[0].lookahead else 0)
        settings = (automata[0].packed, automata[-1].packed, _MODE_CODES[self.mode], flags, self.alnum_runs,
                    cache.vocab_size, self.keep_whitespace)
        return settings, cache, {}

    @interruptible("texts")
    def tokenize_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[tuple[str, int, int]]]:
        """:meth:`tokenize` for many texts, in one compiled call per direction
        (``num_threads``: see :meth:`cut_batch`)."""
        return self._by_runs(True, texts, num_threads)

    @interruptible("texts")
    def cut_batch(self, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[str]]:
        """:meth:`cut` for many texts, in one compiled call per direction.

        ``num_threads`` (default one; 0 for all cores) splits large batches
        over threads; the compiled kernels release the GIL.
        """
        return self._by_runs(False, texts, num_threads)

    @interruptible("texts")
    def cut_arrow(self, texts: Any, *, null: str = "error", num_threads: int | None = None):
        """:meth:`cut_batch` of an Arrow string column, as a pyarrow
        ``list<string>`` array (needs pyarrow: ``segkit[arrow]``).

        ``texts``: a pyarrow ``StringArray``, ``LargeStringArray`` or
        ``ChunkedArray``, a pandas Series or a sequence of str; the UTF-8
        buffers are read where they are and the words' bytes written by a
        compiled pass (no Python str per text or word).  ``null="error"``: a
        null row raises ValueError naming it; ``"empty"``: it gives an empty
        list.

        >>> import pyarrow as pa
        >>> ChineseMaxMatch(["北京", "大学"]).cut_arrow(pa.array(["北京大学", "好"])).to_pylist()
        [['北京', '大学'], ['好']]
        """
        from .arrow import cut_arrow

        return cut_arrow(self, texts, null=null, num_threads=num_threads)

    @interruptible("texts")
    def tokenize_arrow(self, texts: Any, *, null: str = "error", num_threads: int | None = None):
        """:meth:`tokenize_batch` of an Arrow string column, as a
        ``pyarrow.Table`` with columns ``tokens`` (``list<string>``, as
        :meth:`cut_arrow`) and ``offsets`` (``list<fixed_size_list<int32,
        2>>``: each word's ``(start, end)`` character offsets), one row per text.

        >>> import pyarrow as pa
        >>> t = ChineseMaxMatch(["你好"]).tokenize_arrow(pa.array(["你好 world"]))
        >>> t.column("tokens").to_pylist(), t.column("offsets").to_pylist()
        ([['你好', 'world']], [[[0, 2], [3, 8]]])
        """
        from .arrow import tokenize_arrow

        return tokenize_arrow(self, texts, null=null, num_threads=num_threads)

    def cut(self, text: str) -> list[str]:
        """The words of ``text``.

        >>> ChineseMaxMatch(["北京", "大学", "北京大学"]).cut("我在北京大学读书")
        ['我', '在', '北京大学', '读', '书']
        """
        words = self._one(text, False)
        return self.cut_batch([text])[0] if words is None else words

    def lcut(self, text: str) -> list[str]:
        """The same as :meth:`cut` (which already returns a list), so that
        code written for ``jieba.lcut`` runs unchanged.

        >>> seg = ChineseMaxMatch(["你好", "世界"], keep_whitespace=True)
        >>> seg.lcut("你好  世界\\r\\n")
        ['你好', ' ', ' ', '世界', '\\r\\n']
        """
        return self.cut(text)

    @interruptible("text")
    def cut_all(self, text: str) -> list[str]:
        """Every dictionary word found in ``text``, overlapping: jieba's full
        mode (``jieba.lcut(text, cut_all=True)``, identical words in the same
        order, with the same dictionary).

        It lists words rather than choosing a segmentation, so ``mode`` and
        ``alnum_runs`` play no part: the rules are jieba's (see
        :mod:`segkit_cjk.full_mode`).  Runs of other characters
        (punctuation, other scripts) are one token each, as in jieba.  Whitespace
        tokens are kept with ``keep_whitespace=True`` only; the empty strings
        jieba yields beside them never are.  Words added or deleted count
        from the next call on, as in :meth:`cut`.

        >>> seg = ChineseMaxMatch(["我", "来到", "北京", "清华", "清华大学", "华大", "大学"])
        >>> seg.cut_all("我来到北京清华大学")
        ['我', '来到', '北京', '清华', '清华大学', '华大', '大学']
        >>> seg.cut_all("清华大学, hello world!")
        ['清华', '清华大学', '华大', '大学', ',', 'hello', 'world', '!']
        """
        from segkit.engine import key_table

        from . import full_mode

        cps = to_code_points(_check_text(text))
        state = self._dict
        tables = state.full
        if tables is None:
            forward = self._snapshot(("forward",), state)[0]
            vocab = state.vocab
            ids = np.asarray(vocab.ids, dtype=np.int32)
            if state.n_dead:
                ids = np.where(state.dead[ids], -1, ids).astype(np.int32)
            base_table = key_table(forward, vocab.tokens, ids)
            added = base_table_added = None
            if state.n_added:
                words = state.added[: state.n_added]
                added_ids = np.arange(vocab.size, vocab.size + len(words), dtype=np.int32)
                added = Automaton.build(words, added_ids, _engine_config("forward"), _classes())
                base_table_added = key_table(added, words, added_ids)
            tables = state.full = (forward, base_table, added, base_table_added)
        forward, base_table, added, added_table = tables
        if added is None:
            added, added_table = forward, base_table
        out, n = full_mode.full_mode(cps, forward.packed, base_table, added.packed, added_table,
                                     added is not forward, full_mode.python_white_space(), self.keep_whitespace)
        return full_mode.words_of(text, out, n)

    def tokenize(self, text: str) -> list[tuple[str, int, int]]:
        """The words of ``text`` with their character offsets ``(word, start, end)``.

        >>> ChineseMaxMatch(["你好"]).tokenize("你好 world 3.5%")
        [('你好', 0, 2), ('world', 3, 8), ('3.5%', 9, 13)]
        """
        words = self._one(text, True)
        return self.tokenize_batch([text])[0] if words is None else words

    def __repr__(self) -> str:
        ws = ", keep_whitespace=True" if self.keep_whitespace else ""
        state = self._dict
        n = len(state.vocab) - state.n_dead + state.n_added
        return f"ChineseMaxMatch(words={n}, mode={self.mode!r}, alnum_runs={self.alnum_runs}{ws})"


_MODE_CODES = {"forward": _kernels.FORWARD, "backward": _kernels.BACKWARD, "bidirectional": _kernels.BIDIRECTIONAL}


class _Dictionary:
    """One state of a segmenter's dictionary: the base vocabulary, its
    automata (built on first use, by direction), the words added and the
    base words deleted since (see :mod:`segkit_cjk._overlay`; the added
    words' automata built on first use too) and its word strings (ids of
    this state -> str, :class:`_WordCache`).  Base word ``i`` has id ``i``
    (ids of the base vocabulary), added word ``j`` id ``vocab.size + j``.

    A change (``add_word``, ``del_word``) publishes a new state as one
    attribute (``ChineseMaxMatch._dict``); a call reads that attribute once
    and uses that state's automata and strings together.  Reading them from
    the segmenter one by one once let a call match with one dictionary's
    automaton and name the words with the other's strings: after
    ``del_word`` the ids move, and ``北京`` came back as ``词294``.
    Automata a state builds later are of its own words, so adding them
    keeps it one state.

    The added words of successive states share one list, which only grows
    (a state sees its first :attr:`n_added`), so ``n`` calls of ``add_word``
    cost O(n), not O(n**2); removing an added word copies it.  Once the
    added words are many (:data:`FOLD_WORDS`, or an eighth of the base),
    they are folded into a new base (one rebuild), so that a call never
    pays for matching a large overlay or rebuilding its automata.
    """

    __slots__ = ("vocab", "automata", "strings", "one", "added", "added_at", "n_added", "dead", "n_dead",
                 "overlay", "_folded", "corrected", "full")

    def __init__(self, vocab: Vocabulary, automata: dict | None = None, added: list[str] | None = None,
                 added_at: dict[str, int] | None = None, n_added: int = 0, dead: np.ndarray | None = None,
                 n_dead: int = 0) -> None:
        self.vocab = vocab
        self.automata: dict[str, Automaton] = dict(automata or {})
        self.added = [] if added is None else added
        self.added_at = {} if added_at is None else added_at  # word -> index in added (of the newest state)
        self.n_added = n_added
        self.dead = NO_DEAD if dead is None else dead  # bool mask over base ids (size 0: none deleted)
        self.n_dead = n_dead
        self.overlay: dict[str, Automaton] = {}
        self.strings = _WordCache(vocab.size + n_added)
        self.one = None  # what ChineseMaxMatch._one needs, made on first use
        self._folded: "_Dictionary | None" = None
        self.corrected = 0  # characters segmented with the changes kept apart (see ChineseMaxMatch._state)
        self.full = None  # what ChineseMaxMatch.cut_all needs, made on first use

    @property
    def changed(self) -> bool:
        """Whether words were added or deleted since the base was built."""
        return self.n_added > 0 or self.n_dead > 0

    def has(self, word: str) -> bool:
        """Whether ``word`` is a word of this state (call with the lock held:
        ``added_at`` is the newest state's)."""
        i = self.added_at.get(word)
        if i is not None and i < self.n_added:
            return True
        wid = self.vocab.id(word)
        return wid is not None and not (self.n_dead and self.dead[wid])

    def with_added(self, fresh: list[str]) -> "_Dictionary":
        """This state with ``fresh`` (words not in it) added."""
        added, added_at, n = self.added, self.added_at, self.n_added
        if len(added) != n:  # an older state: its list has grown since (cannot happen under the lock)
            added, added_at = added[:n], {w: i for i, w in enumerate(added[:n])}
        for w in fresh:
            added_at[w] = len(added)
            added.append(w)
        state = _Dictionary(self.vocab, self.automata, added, added_at, len(added), self.dead, self.n_dead)
        if state.n_added > max(FOLD_WORDS, self.vocab.size // 8):
            return state.folded()
        return state

    def without(self, word: str) -> "_Dictionary":
        """This state without ``word`` (a word of it)."""
        i = self.added_at.get(word)
        if i is not None and i < self.n_added:
            rest = self.added[:i] + self.added[i + 1 : self.n_added]
            return _Dictionary(self.vocab, self.automata, rest, {w: j for j, w in enumerate(rest)}, len(rest),
                               self.dead, self.n_dead)
        dead = np.zeros(self.vocab.size, dtype=np.bool_) if not self.n_dead else self.dead.copy()
        dead[self.vocab.id(word)] = True
        dead.setflags(write=False)
        return _Dictionary(self.vocab, self.automata, self.added, self.added_at, self.n_added, dead,
                           self.n_dead + 1)

    def words(self) -> list[str]:
        """The words, base words first (in base order), then the added ones."""
        tokens = self.vocab.tokens
        if self.n_dead:
            dead = self.dead
            ids = self.vocab.ids
            tokens = [w for w, i in zip(tokens, ids) if not dead[i]]
        return tokens + self.added[: self.n_added] if self.n_added else list(tokens)

    def folded(self) -> "_Dictionary":
        """The same dictionary as a state with no changes (a new base; its
        automata are built on first use), made once."""
        if not self.changed:
            return self
        if self._folded is None:
            self._folded = _Dictionary(Vocabulary(self.words()))
        return self._folded


#: Added words kept apart from the base dictionary's automata at most (or
#: an eighth of the base, if more) before they are folded into a new base.
FOLD_WORDS = 20_000

#: Characters segmented with changes kept apart, at most, before they are
#: folded in: ``FOLD_CHARS + FOLD_CHARS_PER_WORD * words`` of the base.  A
#: rebuild costs about as much as correcting the tokens of 7-18 characters
#: per dictionary word, plus a constant (measured on 2 cores, SIGHAN pku
#: test with 200 added words: 1,000 words, 7 ms or 40,000 characters;
#: 100,000 words, 124 ms or 1.0 M; the default's 349,045, 0.6 s or 6.3 M),
#: so what a state spends correcting stays within about once a rebuild.
FOLD_CHARS = 100_000
FOLD_CHARS_PER_WORD = 16

NO_DEAD = np.zeros(0, dtype=np.bool_)
NO_DEAD.setflags(write=False)  # read-only as every deleted mask: one specialization of the kernel


class _WordCache:
    """A dictionary's Python strings, made once and shared by every call.

    Key ``i < vocab_size`` is dictionary word ``i``; ``vocab_size + c`` the
    unseen character ``chr(c)`` for ``c`` < :data:`_kernels.CACHED_CHARS`;
    ``vocab_size`` + :data:`_kernels.CRLF_KEY` the whitespace token
    ``"\\r\\n"``.
    A string is made the first time a call produces its word and is kept:
    ``strings[slot_of[key]]``, slots in the order words were first seen, so
    that frequent words share a small, cache-friendly part of ``strings``.
    At most one string per dictionary word and per such character is kept
    (``slot_of``: 4 bytes per key, 1.6 MB for the default dictionary,
    allocated on first use).  Text repeats its words: pku+msr has 210,000
    words of 27,000 distinct ones, so a warm cache leaves a call nothing to
    hash or create but the odd new word.  ``addr[slot]`` is the string's
    ``id()``: results are built from these addresses by one compiled pass
    (:mod:`segkit.runtime.boxing`), while ``strings`` keeps the strings alive.

    Slots are published in ``slot_of`` only after their strings are stored,
    and stored and read under :attr:`lock` (which also covers replacing
    ``strings`` and ``addr`` by larger arrays, and building results), so a
    compiled pass that finds a slot can rely on its string being there.
    """

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        # Re-entrant: building a result may run a collection, whose finalizers
        # could segment with this segmenter again in the same thread.
        self.lock = threading.RLock()
        self.count = 0
        self.strings = np.empty(0, dtype=object)
        self.addr = np.zeros(0, np.int64)  # id() of each string (0: no string yet)
        self._slot_of: np.ndarray | None = None

    def slot_of(self) -> np.ndarray:
        slot_of = self._slot_of
        if slot_of is None:
            with self.lock:
                if self._slot_of is None:
                    self._slot_of = np.full(self.vocab_size + _kernels.EXTRA_KEYS, -1, np.int32)
                slot_of = self._slot_of
        return slot_of

    def hold_newlines(self) -> None:
        """Cache the whitespace tokens ``"\\n"`` and ``"\\r\\n"`` (which only
        ``keep_whitespace`` makes), so that no call ever has to spell them
        out: words are spelled ``"\\n"``-separated (see :func:`_results`)."""
        slot_of = self.slot_of()
        keys = np.array([self.vocab_size + 10, self.vocab_size + _kernels.CRLF_KEY], np.int64)
        if (slot_of[keys] < 0).any():
            with self.lock:
                self.add(keys, np.array(["\n", "\r\n"], dtype=object))

    def add(self, keys: np.ndarray, strings: np.ndarray) -> None:
        """Cache ``strings`` under distinct ``keys`` (holding :attr:`lock`);
        keys another thread has cached meanwhile keep their slot."""
        fresh = self._slot_of[keys] < 0
        if not fresh.all():
            keys, strings = keys[fresh], strings[fresh]
        n = self.count + keys.size
        if n > self.strings.size:
            size = max(n, 2 * self.strings.size, 4096)
            bigger = np.empty(size, dtype=object)
            bigger[: self.count] = self.strings[: self.count]
            addr = np.zeros(size, np.int64)
            addr[: self.count] = self.addr[: self.count]
            self.strings, self.addr = bigger, addr
        self.strings[self.count : n] = strings
        self.addr[self.count : n] = np.fromiter(map(id, strings), np.int64, keys.size)
        self._slot_of[keys] = np.arange(self.count, n, dtype=np.int32)
        self.count = n


def _word_results(cps, bounds, ids, st, en, rows, alnum: bool, cache: _WordCache, offsets: bool) -> list[list]:
    """The words of a batch's tokens, one list per text: strings, or with
    ``offsets`` tuples ``(word, start, end)``.  One compiled pass finds
    each word's cached string (see :func:`_kernels.word_keys`); words not
    cached yet, and merged runs, are spelled out and made by one
    ``str.split``; one compiled pass builds the lists (see
    :mod:`segkit.runtime.boxing`).  No Python work per word."""
    n_tokens = int(rows[-1])
    text, out, seen, stamp = SCRATCH.words(cps.size, n_tokens)
    keys, spelled, wst, wen = out[0], out[1], out[2], out[3]
    w, wrows, r, k, u, seen = _kernels.word_keys(
        cps, bounds, ids, st, en, rows, alnum, cache.vocab_size, cache.slot_of(), seen, stamp, keys, text, spelled, wst, wen
    )
    SCRATCH.keep_seen(seen)
    return _results(cache, keys[:w], spelled[:r], text[:k], u, wst[:w], wen[:w], wrows, offsets)


def _results(cache: _WordCache, keys, spelled, text, new_keys: int, starts, ends, wrows, offsets: bool) -> list:
    """The result lists from the output of :func:`_kernels.word_keys`:
    one list per text of ``wrows`` (``None``: one text, its list), of
    strings or, with ``offsets``, of ``(word, start, end)``.

    The words spelled out are made first, from their code points ``text``
    (``\n``-separated, 4 bytes each) by one ``str.split``; their keys are
    ``spelled`` (-1: none), ``new_keys`` of them not cached yet: those
    strings are cached now.  ``made`` keeps them alive until the lists that
    refer to them are built (:mod:`segkit.runtime.boxing`)."""
    with cache.lock:
        extra = NO_OBJECTS
        if spelled.size:
            made = str(text, "utf-32-le", "surrogatepass").split("\n")
            if new_keys:
                fresh = spelled >= 0
                cache.add(spelled[fresh], np.array(made, dtype=object)[fresh])
            extra = np.fromiter(map(id, made), np.int64, len(made))
        if wrows is None:
            if offsets:
                return triple_list_of(cache.addr, keys, starts, ends, extra)
            return list_of(cache.addr, keys, extra)
        if offsets:
            return triples_of(cache.addr, keys, starts, ends, wrows, extra)
        return lists_of(cache.addr, keys, wrows, extra)


def _changed(cps, bounds, tokens, base: Automaton, changes, i: int):
    """The ``tokens`` (ids, starts, ends, rows) of ``base`` (the base
    automaton of one direction) corrected for the words added and deleted
    since (``changes``: the added words' automata, by direction as
    ``base``'s mode lists them, and the deleted mask); ``i`` says which
    direction.  Backward tokens are corrected as forward tokens of the
    reversed text (see :mod:`segkit_cjk._overlay`)."""
    overlay, dead = changes
    added = overlay[i]
    ids, st, en, rows = tokens
    if not base.backward:
        return _overlay.overlay_tokens(cps, bounds, ids, st, en, rows, base.packed, added.packed, dead, NOT_A_WORD)
    n = int(bounds[-1])
    rcps = cps[:n][::-1].copy()
    rb, rid, rst, ren, rrows = _overlay.mirrored(n, bounds, ids, st, en, rows)
    oid, ost, oen, orows = _overlay.overlay_tokens(rcps, rb, rid, rst, ren, rrows, base.packed, added.packed, dead,
                                                   NOT_A_WORD)
    _, oid, ost, oen, orows = _overlay.mirrored(n, rb, oid, ost, oen, orows)
    return oid, ost, oen, orows


def _split(result):
    out, rows = result
    return out[0], out[1], out[2], rows


def _engine_config(direction: str) -> EngineConfig:
    return EngineConfig(unknown="char", direction=direction, char_id=NOT_A_WORD)


def _check_mode(mode: object) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, found {mode!r}")
    return mode  # type: ignore[return-value]


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, found {value!r}")
    return bool(value)


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected text as str, found {type(text).__name__}: {text!r:.80}")
    return text


def _check_batch(texts: object) -> Sequence[str]:
    if isinstance(texts, (str, bytes, bytearray)):
        raise TypeError(f"expected a sequence of texts, found a single {type(texts).__name__}; use cut()/tokenize()")
    if not isinstance(texts, Sequence):
        try:
            texts = list(texts)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"expected a sequence of texts, found {type(texts).__name__}: {texts!r:.80}") from None
    return texts  # type: ignore[return-value]
