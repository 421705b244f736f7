"""Special-token templates, truncation and padding, in one compiled pass.

The result of a batch is one (7, n) int32 array plus row splits; the rows
are :data:`FIELDS`.  Word indices are -1 where HuggingFace has ``None``
(template and padding tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..engine.arrays import full
from ..engine.rewrite import SCRATCH_ROWS, segment_rewritten_into

FIELDS = ("ids", "type_ids", "attention_mask", "special_tokens_mask", "starts", "ends", "word_ids")
R_IDS, R_TYPE, R_ATT, R_SPECIAL, R_START, R_END, R_WORD = range(7)

TRUNCATION = {"longest_first": 1, "only_first": 2, "only_second": 3}


@dataclass(frozen=True)
class Template:
    """BERT's template: ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``
    (type id 0 up to the first ``[SEP]``, 1 after)."""

    cls_id: int
    sep_id: int

    def num_special(self, pair: bool) -> int:
        return 3 if pair else 2


# The writers below fill whole ranges of rows per call: an inlined call
# with array arguments costs atomic reference counting, too much per token.
# Constant arguments are passed as np.int64(...) so that every call site
# shares one compiled specialization.


@njit(cache=True, nogil=True)
def _put_special(out, k0, k1, token_id, type_id, attention):
    """Template or padding rows ``k0:k1``: no offsets, no word, special mask 1."""
    for k in range(k0, k1):
        out[0, k] = token_id
        out[1, k] = type_id
        out[2, k] = attention
        out[3, k] = 1
        out[4, k] = 0
        out[5, k] = 0
        out[6, k] = -1


@njit(cache=True, nogil=True)
def _put_tokens(out, k, tok, q0, q1, type_id):
    """Rows from ``k`` on for tokens ``q0:q1`` of ``tok`` (ids, starts, ends,
    words); returns the next free row."""
    for q in range(q0, q1):
        out[0, k] = tok[0, q]
        out[1, k] = type_id
        out[2, k] = 1
        out[3, k] = 0
        out[4, k] = tok[1, q]
        out[5, k] = tok[2, q]
        out[6, k] = tok[3, q]
        k += 1
    return k


@njit(cache=True, nogil=True)
def _truncated_lengths(la, lb, paired, budget, mode):
    # Returns (la, lb, ok) after truncation to ``budget`` tokens in all.
    if mode == 0 or la + lb <= budget:
        return la, lb, True
    if budget == 0:
        # No room besides the template: HuggingFace empties both sequences,
        # whatever the strategy.
        return 0, 0, True
    if not paired:
        if mode == 3 or (mode == 2 and budget == 0):
            return la, lb, False
        return budget, 0, True
    # only_first / only_second keep at least one token of the truncated side
    # and raise when they cannot (as HuggingFace does when the budget is not 0).
    if mode == 2:
        if lb >= budget:
            return la, lb, False
        return budget - lb, lb, True
    if mode == 3:
        if la >= budget:
            return la, lb, False
        return la, budget - la, True
    # longest_first, as HuggingFace: the shorter side keeps as much as it
    # can up to half, the longer side gets the rest.
    n1 = la
    n2 = lb
    swap = False
    if n1 > n2:
        swap = True
        n1, n2 = n2, n1
    if n1 > budget:
        n2 = n1
    else:
        n2 = max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swap:
        n1, n2 = n2, n1
    return min(la, n1), min(lb, n2), True


@njit(cache=True, nogil=True)
def assemble(tok, rows, n_texts, paired, template, cls_id, sep_id, budget, trunc_mode, pad_to, pad_multiple, pad_id):
    """Build encodings from segmented tokens.

    ``tok`` is (4, n): ids, starts, ends, word indices.  Text ``t``'s first
    sequence is ``rows[t]:rows[t+1]``; when ``paired``, its second is
    ``rows[n_texts + t]:rows[n_texts + t + 1]``.  ``budget`` is the
    truncation length without template tokens (ignored when
    ``trunc_mode`` is 0).  ``pad_to``: -1 no padding, 0 the longest in the
    batch, else that length.  Returns ``(out, out_rows, status)``; status
    is -1 on success or the index of a text that cannot be truncated as asked.
    """
    la = np.empty(n_texts, np.int64)
    lb = full(n_texts, np.int64(0), np.int64)
    nspec = 0
    if template:
        nspec = 3 if paired else 2
    longest = 0
    for t in range(n_texts):
        a = rows[t + 1] - rows[t]
        b = 0
        if paired:
            b = rows[n_texts + t + 1] - rows[n_texts + t]
        a, b, ok = _truncated_lengths(a, b, paired, budget, trunc_mode)
        if not ok:
            return np.empty((7, 0), np.int32), full(1, np.int64(0), np.int64), t
        la[t] = a
        lb[t] = b
        if a + b + nspec > longest:
            longest = a + b + nspec
    target = -1
    if pad_to == 0:
        target = longest
    elif pad_to > 0:
        target = pad_to
    if target >= 0 and pad_multiple > 1 and target % pad_multiple:
        target += pad_multiple - target % pad_multiple
    out_rows = np.empty(n_texts + 1, np.int64)
    out_rows[0] = 0
    for t in range(n_texts):
        n = la[t] + lb[t] + nspec
        if target > n:
            n = target
        out_rows[t + 1] = out_rows[t] + n
    out = np.empty((7, out_rows[n_texts]), np.int32)
    for t in range(n_texts):
        k = out_rows[t]
        if template:
            _put_special(out, k, k + 1, cls_id, np.int64(0), np.int64(1))
            k += 1
        k = _put_tokens(out, k, tok, rows[t], rows[t] + la[t], np.int64(0))
        if template:
            _put_special(out, k, k + 1, sep_id, np.int64(0), np.int64(1))
            k += 1
        if paired:
            k = _put_tokens(out, k, tok, rows[n_texts + t], rows[n_texts + t] + lb[t], np.int64(1))
            if template:
                _put_special(out, k, k + 1, sep_id, np.int64(1), np.int64(1))
                k += 1
        _put_special(out, k, out_rows[t + 1], pad_id, np.int64(0), np.int64(0))
    return out, out_rows, -1


# Options of a single-text encoding, packed for one compiled call.
O_TEMPLATE, O_CLS, O_SEP, O_BUDGET, O_PAD_TO, O_MULT, O_PAD_ID, O_MODE = range(8)
N_OPTIONS = 8


@njit(cache=True, nogil=True)
def encode_single(cps, auto, rw, opts, scratch):
    """One text, whole pipeline: rewrite, match, template, truncation, padding.

    ``scratch`` has :data:`SCRATCH_ROWS` + 7 rows of at least m columns (m:
    the rewritten length, or the padded length when larger): the first rows
    serve :func:`segment_rewritten_into`, the last 7 receive the encoding.
    Returns its length, or ``-need`` when ``scratch`` is too small (the
    caller grows it and calls again).
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
        return -(1 << 40)
    nspec = 2 if opts[O_TEMPLATE] else 0
    n = la + nspec
    target = n
    if opts[O_PAD_TO] > n:
        target = opts[O_PAD_TO]
    mult = opts[O_MULT]
    if opts[O_PAD_TO] >= 0 and mult > 1 and target % mult:
        target += mult - target % mult
    if target > res.shape[1]:
        return -target
    q = 0
    if nspec:
        _put_special(res, np.int64(0), np.int64(1), opts[O_CLS], np.int64(0), np.int64(1))
        q = 1
    q = _put_tokens(res, q, tok, np.int64(0), la, np.int64(0))
    if nspec:
        _put_special(res, q, q + 1, opts[O_SEP], np.int64(0), np.int64(1))
        q += 1
    _put_special(res, q, target, opts[O_PAD_ID], np.int64(0), np.int64(0))
    return target
