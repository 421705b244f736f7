"""One text through a WordPiece's whole pipeline in one compiled call:
rewrite (normalization), matching, then the shared post-processing
(template, truncation, padding: :mod:`segkit.presets.pipeline.postprocess`).

This is WordPiece's latency path: the matching pass writes its tokens into
the first rows of a scratch array, and the encoding is laid out from them
by the same helpers :func:`~segkit.presets.pipeline.postprocess.assemble`
uses, so a single text and a batch follow one set of rules.

Numba's on-disk cache keys a compiled function by its own file only, yet the
functions here compile the engine's matching loop into themselves
(:func:`segkit.engine.kernels._segment_range`, its pops layout included):
a change to that loop must change this file too, or a stale cache keeps the
old loop (the last such change: failure pops read through list headers).
"""

from __future__ import annotations

import numpy as np

from ...engine.rewrite import SCRATCH_ROWS, segment_rewritten_into
from ...runtime.jit import kernel
from ..pipeline.postprocess import put_single


@kernel
def encode_single(cps, auto, rw, opts, scratch):
    """One text, whole pipeline: rewrite, match, template, truncation, padding.

    ``scratch`` has :data:`SCRATCH_ROWS` + 8 rows of at least m columns (m:
    the rewritten length, or the padded length when larger): the first rows
    serve :func:`segment_rewritten_into`, the last 8 receive the encoding.
    Returns its length; ``-need`` when ``scratch`` is too small (the caller
    grows it and calls again); :data:`SINGLE_FAILED` when the text cannot be
    truncated as asked; ``SINGLE_CUT - k`` when truncation cuts the text
    and overflow or a stride is asked for: its ``k`` tokens are in the first
    4 rows of ``scratch``, for :func:`assemble`.
    """
    # Always through the rewrite pass (an identity table when the preset has
    # none): one specialization of the matching loop to compile, not two.
    k = segment_rewritten_into(cps, auto, rw, np.int64(3), scratch)
    if k < 0:
        return k
    return put_single(k, scratch[:4], scratch[SCRATCH_ROWS:], opts)

