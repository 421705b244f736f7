"""ChineseMaxMatch on Arrow string columns (needs pyarrow: ``segkit[arrow]``).

The texts' UTF-8 buffers are decoded by :class:`segkit.scale.arrow.Utf8Rows`
(no Python str per row); the words are found as :meth:`cut_batch` finds
them (the same segmentation, run merging and whitespace handling), and
their UTF-8 bytes are written by a compiled pass straight into the values
buffer of the result (:func:`segkit.scale.arrow._spans_to_utf8`): no Python str
per word either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from segkit.presets.base import Utf8Rows, map_code_point_chunks, offset_lists, spans_to_utf8, string_lists
from segkit.presets.base import arrow_module as _pa

from . import _kernels
from .scratch import SCRATCH


def _word_spans(seg, automata, cache, cps, bounds):
    """``(starts, ends, rows)`` of the words of the joined texts, as
    :meth:`ChineseMaxMatch.cut_batch` makes them (starts and ends relative
    to each text; views of this thread's scratch)."""
    ids, st, en, rows = seg._tokens_cps(cps, bounds, automata)
    text, out, seen, stamp = SCRATCH.words(cps.size, int(rows[-1]))
    keys, spelled, wst, wen = out[0], out[1], out[2], out[3]
    # (word_keys also finds each word's cached string, which is not needed
    # here; its run merging is what cut_batch applies)
    w, wrows, _, _, _, seen = _kernels.word_keys(
        cps, bounds, ids, st, en, rows, seg.alnum_runs, cache.vocab_size, cache.slot_of(), seen, stamp,
        keys, text, spelled, wst, wen,
    )
    SCRATCH.keep_seen(seen)
    return wst[:w], wen[:w], wrows


def _segment(seg, texts: Any, null: str, num_threads: int | None, offsets: bool):
    values, voffs, rows, spans = word_buffers(seg, Utf8Rows.of(texts, "texts", null), num_threads, offsets)
    words = string_lists(values, voffs, rows)
    if not offsets:
        return words
    return _pa().table({"tokens": words, "offsets": offset_lists(spans[0], spans[1], rows)})


def word_buffers(seg, src: Utf8Rows, num_threads: int | None, offsets: bool):
    """``(values, offsets, rows, spans)``: the words of the rows of ``src``
    as one UTF-8 buffer with int64 offsets, the words' row splits and (with
    ``offsets``) their ``(starts, ends)``; NumPy only, so ``segkit precompile``
    can run it without pyarrow."""
    cps, bounds = src.decode(0, len(src))
    automata, cache = seg._state()

    def run(cps, bounds):
        st, en, rows = _word_spans(seg, automata, cache, cps, bounds)
        values, voffs = spans_to_utf8(cps, bounds, st, en, rows)
        return values, voffs, rows, (st.copy(), en.copy()) if offsets else None

    parts = map_code_point_chunks(run, cps, bounds, num_threads)
    if len(parts) == 1:
        values, voffs, rows, spans = parts[0]
    else:  # join the threads' parts (one copy)
        values = np.concatenate([p[0] for p in parts])
        vbase = np.cumsum([0] + [int(p[1][-1]) for p in parts])
        voffs = np.concatenate([[0]] + [p[1][1:] + b for p, b in zip(parts, vbase)])
        wbase = np.cumsum([0] + [int(p[2][-1]) for p in parts])
        rows = np.concatenate([[0]] + [p[2][1:] + b for p, b in zip(parts, wbase)])
        spans = None
        if offsets:
            spans = (np.concatenate([p[3][0] for p in parts]), np.concatenate([p[3][1] for p in parts]))
    return values, voffs, rows, spans


def cut_arrow(seg, texts: Any, *, null: str = "error", num_threads: int | None = None):
    """See :meth:`segkit_cjk.ChineseMaxMatch.cut_arrow`."""
    return _segment(seg, texts, null, num_threads, False)


def tokenize_arrow(seg, texts: Any, *, null: str = "error", num_threads: int | None = None):
    """See :meth:`segkit_cjk.ChineseMaxMatch.tokenize_arrow`."""
    return _segment(seg, texts, null, num_threads, True)
