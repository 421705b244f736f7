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
from ..pipeline.postprocess import (O_BUDGET, O_MODE, O_MULT, O_NSPEC, O_OVERFLOW, O_PAD_TO, O_STRIDE,
                                    O_TRUNC_LEFT, SINGLE_CUT, SINGLE_FAILED, _put_encoding, _truncated_lengths)


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
    tok = scratch[:4]
    res = scratch[SCRATCH_ROWS:]
    # Not literal constants (0, False: k >= 0 here): assemble shares the specialization.
    la, lb, ok = _truncated_lengths(k, np.int64(0), k < 0, opts[O_BUDGET], opts[O_MODE])
    if not ok:
        return SINGLE_FAILED
    if la < k and (opts[O_OVERFLOW] or opts[O_STRIDE]):
        return SINGLE_CUT - k
    n = la + opts[O_NSPEC]
    # As assemble (HF's pad_encodings): the padded length is the fixed
    # length, or this encoding's for "longest", rounded up to the multiple;
    # an encoding already longer keeps its length (it is not rounded).
    target = n
    if opts[O_PAD_TO] >= 0:
        if opts[O_PAD_TO] > 0:
            target = opts[O_PAD_TO]
        mult = opts[O_MULT]
        if mult > 1 and target % mult:
            target += mult - target % mult
        if target < n:
            target = n
    if target > res.shape[1]:
        return -target
    a0 = k - la if opts[O_TRUNC_LEFT] else np.int64(0)
    _put_encoding(res, np.int64(0), tok, opts, a0, a0 + la, True, np.int64(0), np.int64(0), True, target)
    return target

