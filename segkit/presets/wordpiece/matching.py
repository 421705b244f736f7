"""The compiled pass of a WordPiece: normalization, pre-tokenization and
matching, for batches and for single texts.

A :class:`Matcher` holds what that pass reads (the automaton's packed
arrays, the normalization table with the special tokens) and what it
writes into (per-thread scratch), and turns texts into token arrays:
``(4, n)`` int32 rows of ids, starts, ends and word indices, offsets in the
original texts (UTF-8 bytes for the TF Text flavour).  A single text can
also go through matching and post-processing in one compiled call
(:meth:`Matcher.encode_one`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ...engine.automaton import _MAX_SCRATCH, join_code_points, to_code_points
from ...engine.byte_offsets import to_byte_offsets
from ...engine.dispatch import resolve_entry
from ...engine.kernels import token_rows
from ...engine.rewrite import SCRATCH_ROWS, reads_str, segment_batch_rewritten, segment_rewritten_into
from ...runtime.threads import check_threads, concat_segments, map_text_runs
from ...runtime import interrupts
from ...runtime.interrupts import checkpoint
from ...runtime.surrogates import check_text
from ..pipeline.postprocess import N_ROWS, SINGLE_CUT, SINGLE_FAILED
from .single import encode_single

#: Texts measured, joined and matched at a time by a one-thread batch.
_BLOCK_TEXTS = 2048
_CLSMASK = np.int64(3)  # honour the boundary classes of the char map
_NONE = np.int64(-1)  # no token put around the texts


class Matcher:
    """Texts to token arrays in compiled calls.

    Parameters
    ----------
    packed
        The automaton's packed arrays (:attr:`segkit.Automaton.packed`).
    rewrite
        The packed normalization table (special tokens included).
    byte_offsets
        Give offsets in UTF-8 bytes (TF Text) instead of code points.

    Examples
    --------
    A :class:`segkit.WordPiece` holds its matcher as ``_matcher``:

    >>> from segkit import WordPiece
    >>> m = WordPiece(["[UNK]", "a", "##b"])._matcher
    >>> tok, rows = m.segment(["ab a", "b"])
    >>> tok.tolist(), rows.tolist()  # ids, starts, ends, words; text t is rows[t]:rows[t + 1]
    ([[1, 2, 1, 0], [0, 1, 3, 0], [1, 2, 4, 1], [0, 0, 1, 0]], [0, 3, 4])
    """

    def __init__(self, packed, rewrite: np.ndarray, byte_offsets: bool = False) -> None:
        self.packed = packed
        self.rewrite = rewrite
        self.byte_offsets = byte_offsets
        self._local = threading.local()  # per-thread scratch
        # Numba entries resolved on first use (fixed argument types).
        self._encode_entry = None
        self._segment_entry = None

    # ----------------------------------------------------------- batches
    def segment(self, texts: Sequence[str], num_threads: int | None = None):
        """``(tokens, rows)``: (4, n) tokens of all texts and the row splits
        (``rows[t]:rows[t + 1]`` are text ``t``'s)."""
        return concat_segments(*self.segment_parts(texts, num_threads))

    @interrupts.interruptible("texts")
    def segment_parts(self, texts: Sequence[str], num_threads: int | None = None, template=None):
        """:meth:`segment` as ``(parts, threads used)``: one ``(tokens,
        row splits)`` part per run of texts a thread matched (one part when
        the batch was not split).  ``template``: None, or ``(first id, last
        id)`` of tokens put around every text's tokens (offsets ``(0, 0)``,
        word index -1), as BERT's template puts ``[CLS]`` and ``[SEP]``
        around a single text."""
        ends = (_NONE, _NONE) if template is None else (np.int64(template[0]), np.int64(template[1]))
        num_threads = check_threads(num_threads)
        if num_threads is not None and num_threads != 1:
            # Each thread matches its runs as one thread matches a batch (a
            # block of texts at a time, its code points still in cache).
            return map_text_runs(lambda run: self._segment_one_thread(run, ends), texts, num_threads)
        return [self._segment_one_thread(texts, ends)], 1

    def _segment_one_thread(self, texts: Sequence[str], ends=None):
        n = len(texts)
        if n <= _BLOCK_TEXTS:  # one block: none of the blocks' bookkeeping
            return self.segment_code_points(*join_code_points(texts), ends)
        # One thread: the texts are measured, joined into code points and
        # matched a block at a time, all appended to one output.  Measuring a
        # block just before joining it reads each text object once from
        # memory, not once per pass over the whole batch (a cache miss per
        # text: about 15 ms on the 83,000 texts of the corpus), and a
        # block's code points are reused memory, still in cache.
        rows = np.empty(n + 1, dtype=np.int64)
        rows[0] = 0
        out = None
        k = 0
        for a in range(0, n, _BLOCK_TEXTS):
            checkpoint()  # a cancelled call stops between blocks (segkit.interrupts)
            cps, bounds = join_code_points(texts[a : a + _BLOCK_TEXTS])
            if out is None:  # room for the whole batch if the texts are alike (grown if not)
                out = token_rows(cps.size * (n // _BLOCK_TEXTS + 1) * 5 // 4)
            out, k = self._match(cps, bounds, out, k, rows[a:], ends)
        return out[:, :k], rows

    def segment_code_points(self, cps: np.ndarray, bounds: np.ndarray, ends=None):
        """:meth:`segment` of texts joined by :func:`join_code_points`."""
        rows = np.empty(bounds.size, dtype=np.int64)
        rows[0] = 0
        out, k = self._match(cps, bounds, token_rows(cps.size), 0, rows, ends)
        return out[:, :k], rows

    def _match(self, cps: np.ndarray, bounds: np.ndarray, out: np.ndarray, k: int, rows: np.ndarray, ends=None):
        """Tokens of the joined texts appended to ``out`` from slot ``k`` on
        (``rows[t + 1]``: the slot after text ``t``); returns ``(out, k)``.
        ``ends``: the int64 ids put before and after each text (-1: none)."""
        first, last = (_NONE, _NONE) if ends is None else ends
        out, k = segment_batch_rewritten(cps, bounds, self.packed, self.rewrite, _CLSMASK, out, k, rows, first, last)
        if self.byte_offsets:
            to_byte_offsets(cps, bounds, out, rows[: bounds.size])
        return out, k

    # ------------------------------------------------------- single texts
    def _buffers(self, need: int) -> np.ndarray:
        """Per-thread scratch for single texts (grown, never shared): one
        int32 array, rows as :func:`encode_single` expects them."""
        loc = self._local
        buf = getattr(loc, "buf", None)
        if buf is None or buf.shape[1] < need:
            buf = loc.buf = np.empty((SCRATCH_ROWS + N_ROWS, max(need + 8, 512)), np.int32)
        return buf

    def segment_one(self, text: str) -> np.ndarray:
        """(4, n) tokens of one text: one compiled call, per-thread buffers."""
        if len(text) > _MAX_SCRATCH:
            out, _ = self.segment([text])
            return out
        cps = to_code_points(text)
        buf = self._buffers(cps.size + 16)
        while True:
            entry = self._segment_entry  # fixed argument types, as in encode_one
            if entry is None:
                k, self._segment_entry = resolve_entry(segment_rewritten_into, cps, self.packed, self.rewrite, _CLSMASK, buf)
            else:
                k = entry(cps, self.packed, self.rewrite, _CLSMASK, buf)
            if k >= 0:
                out = buf[:4, :k].copy()
                break
            buf = self._buffers(-k + 16)  # the rewritten text is longer than the original
        if self.byte_offsets:
            to_byte_offsets(cps, np.array([0, cps.size], dtype=np.int64), out, np.array([0, k], dtype=np.int64))
        return out

    def encode_one(self, text: str, opts: np.ndarray, post):
        """``(data, overflow)`` of one text with the post-processing option
        vector ``opts`` (:meth:`segkit.presets.pipeline.options.PostProcessor.options`):
        its (8, n) encoding, matched and post-processed in one compiled call
        (per-thread buffers), and its overflowing encodings as
        :class:`~segkit.Encoding` takes them (None: none).  Code-point
        offsets only (the HF flavour).  ``post`` (the
        :class:`~segkit.presets.pipeline.options.PostProcessor`) serves texts too
        long for the scratch, which go through the batch pass, and texts
        that truncation cuts into overflowing pieces."""
        if len(text) > _MAX_SCRATCH:
            tok, rows = self.segment([check_text(text, "text")])
            if post.is_plain(opts):
                return tok, None
            out, _, ovf = post.apply(tok, rows, 1, False, opts)
            return out, post.first_overflow(ovf)
        if type(text) is not str:  # a str subclass: the kernel's argument type is fixed
            text = str.__str__(text)
        # The kernel reads the str itself (reads_str()): no conversion here,
        # so no lone surrogate check by the conversion either.
        reads = reads_str()
        if reads and not text.isascii():
            check_text(text, "text")
        cps = text if reads else to_code_points(text)
        buf = getattr(self._local, "buf", None)
        if buf is None:  # (too small: the kernel says so, and how much it needs)
            buf = self._buffers(len(text) + 16)
        while True:
            # Always the same argument types (a str, or a read-only uint32
            # text, the preset's arrays, cached read-only int64 options, an
            # int32 scratch), so the specialization is resolved once.
            entry = self._encode_entry
            if entry is None:
                n, self._encode_entry = resolve_entry(encode_single, cps, self.packed, self.rewrite, opts, buf)
            else:
                n = entry(cps, self.packed, self.rewrite, opts, buf)
            if n >= 0:
                return buf[SCRATCH_ROWS:, :n].copy(), None
            if n == SINGLE_FAILED:
                raise ValueError("cannot truncate as asked: max_length leaves no room for the text")
            if n <= SINGLE_CUT:  # cut into pieces: the tokens are in the scratch
                k = SINGLE_CUT - n
                out, _, ovf = post.apply(buf[:4, :k], np.array([0, k], dtype=np.int64), 1, False, opts)
                return out, post.first_overflow(ovf)
            buf = self._buffers(-n + 16)
