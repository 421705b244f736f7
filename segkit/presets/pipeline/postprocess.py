"""Special-token templates, truncation (with overflow) and padding, in one compiled pass.

The result of a batch is one (8, n) int32 array plus row splits; the rows
are :data:`FIELDS`.  Word and sequence indices are -1 where HuggingFace has
``None`` (template and padding tokens).  When truncation cuts, the pieces
that did not fit (HuggingFace's ``overflowing``) are a second (8, m) array
with their own row splits and a ``text -> pieces`` split.

Every setting is one int64 *option vector* (see ``O_*`` below), the
template included: a list of slots, each a special token id, sequence A or
sequence B, with its type id.  The same vector drives a batch
(:func:`assemble`) and a single text (a preset's fused kernel, e.g.
:func:`segkit.presets.wordpiece.single.encode_single`).

HuggingFace's rules, reproduced here (``tokenizers`` 0.23,
``Encoding.truncate``, ``truncate_encodings``, ``Encoding.merge_with``,
``pad_encodings``):

* The truncation budget is ``max_length`` minus the template's special
  tokens.  ``longest_first`` on a pair: the shorter sequence keeps up to
  half, the longer the rest; ``only_first`` / ``only_second`` cut one side
  and fail when it cannot keep a token; a budget of 0 empties both.
* A sequence cut to ``m > 0`` tokens is split into pieces of ``m`` tokens
  each starting ``m - stride`` after the previous one (from the end with
  ``direction="left"``); the first piece is kept, the others overflow.  Cut
  to 0, the whole sequence is one overflow piece.
* Overflowing encodings of a pair, in order: for every overflow piece
  ``i`` of A, (A_i, B_0) then (A_i, B_j) for every overflow piece ``j`` of
  B; then (A_0, B_j) (with B and A swapped when the template puts ``$B``
  first).  Each gets the template.  The type ids of a kept piece
  are its template slot's; those of an overflow piece are its sequence
  index (0 for A, 1 for B) with ``TemplateProcessing`` (whose template only
  retypes the kept part), the slot's otherwise (:data:`O_OVF_SEQ_TYPES`).
* Padding: to a fixed length or to the longest kept encoding of the batch,
  rounded up to a multiple; overflow pieces are padded to the same length.
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from .template import K_A, K_B, K_SPECIAL  # noqa: F401  (kinds of template slots, used here and by callers)

FIELDS = ("ids", "type_ids", "attention_mask", "special_tokens_mask", "starts", "ends", "word_ids", "sequence_ids")
N_ROWS = len(FIELDS)

TRUNCATION = {"longest_first": 1, "only_first": 2, "only_second": 3}

#: The longest length anything is padded to (tokens): every padded encoding
#: takes 32 bytes a position, so a larger target would ask for gigabytes per
#: text.  ``padding.length``, ``pad_to_multiple_of`` and the ``max_length``
#: of ``padding="max_length"`` above it are refused.
MAX_PAD_LENGTH = 1 << 24

# The option vector.
(
    O_BUDGET,  # truncation budget: max_length - special tokens of the template
    O_MODE,  # 0 no truncation, else TRUNCATION[strategy]
    O_STRIDE,  # tokens shared by consecutive pieces
    O_TRUNC_LEFT,  # 1: cut from the start (HF direction="left")
    O_PAD_TO,  # -1 no padding, 0 the longest of the batch, else that length
    O_MULT,  # pad to a multiple of this (0, 1: no rounding)
    O_PAD_ID,
    O_PAD_TYPE,
    O_PAD_LEFT,  # 1: padding before the tokens
    O_OVERFLOW,  # 1: make the overflowing pieces
    O_OVF_SEQ_TYPES,  # 1: overflow pieces have their sequence index as type id
    O_NSPEC,  # special token slots in the template
    O_NSLOTS,  # template slots; then O_NSLOTS triples (kind, token id, type id)
) = range(13)
O_SLOTS = 13

# Status of a failed call (with the index of the text).
E_SHORT, E_STRIDE = 1, 2
# Returns of encode_single besides a length and -need.
SINGLE_FAILED = -(1 << 40)
SINGLE_CUT = -(1 << 41)


def options_vector(slots, *, budget=0, mode=0, stride=0, trunc_left=False, pad_to=-1, mult=0, pad_id=0,
                   pad_type_id=0, pad_left=False, overflow=True, ovf_seq_types=True) -> np.ndarray:
    """The int64 option vector (read-only) of these settings.  ``slots``:
    ``(kind, token id, type id)`` triples, kind one of ``K_SPECIAL, K_A, K_B``."""
    head = [0] * O_SLOTS
    head[O_BUDGET] = budget
    head[O_MODE] = mode
    head[O_STRIDE] = stride
    head[O_TRUNC_LEFT] = int(bool(trunc_left))
    head[O_PAD_TO] = pad_to
    head[O_MULT] = mult
    head[O_PAD_ID] = pad_id
    head[O_PAD_TYPE] = pad_type_id
    head[O_PAD_LEFT] = int(bool(pad_left))
    head[O_OVERFLOW] = int(bool(overflow))
    head[O_OVF_SEQ_TYPES] = int(bool(ovf_seq_types))
    head[O_NSPEC] = sum(1 for s in slots if s[0] == K_SPECIAL)
    head[O_NSLOTS] = len(slots)
    opts = np.array(head + [v for s in slots for v in s], dtype=np.int64)
    opts.setflags(write=False)
    return opts


# The writers below fill whole ranges of rows per call: an inlined call
# with array arguments costs atomic reference counting, too much per token.


@kernel(inline="always")
def _put_special(out, k0, k1, token_id, type_id, attention):
    """Template or padding rows ``k0:k1``: no offsets, no word, no sequence, special mask 1."""
    for k in range(k0, k1):
        out[0, k] = token_id
        out[1, k] = type_id
        out[2, k] = attention
        out[3, k] = 1
        out[4, k] = 0
        out[5, k] = 0
        out[6, k] = -1
        out[7, k] = -1


@kernel(inline="always")
def _put_tokens(out, k, tok, q0, q1, type_id, seq):
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
        out[7, k] = seq
        k += 1
    return k


@kernel
def _truncated_lengths(la, lb, paired, budget, mode):
    # Returns (la, lb, ok) after truncation to ``budget`` tokens in all.
    if mode == 0 or la + lb <= budget:
        return la, lb, True
    if budget == 0:
        # No room besides the template: HuggingFace empties both sequences,
        # whatever the strategy.
        return 0, 0, True
    if not paired:
        if mode == 3:
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


@kernel
def _n_pieces(n, m, stride):
    """Pieces of a sequence of ``n`` tokens cut to ``m`` (1: not cut)."""
    if m >= n:
        return 1
    if m == 0:
        return 2  # an empty kept piece and the whole sequence
    step = m - stride
    return 1 + (n - m + step - 1) // step


@kernel
def _piece(n, m, stride, left, j):
    """Tokens ``(a, b)`` of piece ``j`` (0: the kept one) of a sequence of
    ``n`` tokens cut to ``m``."""
    if m >= n:
        return 0, n
    if m == 0:
        return (0, 0) if j == 0 else (0, n)
    step = m - stride
    if left:
        b = n - j * step
        return max(b - m, 0), b
    a = j * step
    return a, min(a + m, n)


@kernel(inline="always")
def _put_encoding(out, k, tok, opts, a0, a1, a_kept, b0, b1, b_kept, target):
    """One encoding from row ``k`` on: padding, template slots with tokens
    ``a0:a1`` (sequence A) and ``b0:b1`` (sequence B) of ``tok``, padding up
    to ``target`` (-1: none).  ``a_kept``/``b_kept``: whether the piece is
    the kept one (its type id is then its slot's).  Returns the next row."""
    n = (a1 - a0) + (b1 - b0) + opts[O_NSPEC]
    pad = target - n if target > n else 0
    left = opts[O_PAD_LEFT] != 0
    if left and pad:
        _put_special(out, k, k + pad, opts[O_PAD_ID], opts[O_PAD_TYPE], np.int64(0))
        k += pad
    seq_types = opts[O_OVF_SEQ_TYPES] != 0
    for s in range(opts[O_NSLOTS]):
        kind = opts[O_SLOTS + 3 * s]
        type_id = opts[O_SLOTS + 3 * s + 2]
        if kind == 0:  # (written here: a call per special token costs more than the writes)
            out[0, k] = opts[O_SLOTS + 3 * s + 1]
            out[1, k] = type_id
            out[2, k] = 1
            out[3, k] = 1
            out[4, k] = 0
            out[5, k] = 0
            out[6, k] = -1
            out[7, k] = -1
            k += 1
        elif kind == 1:
            k = _put_tokens(out, k, tok, a0, a1, type_id if a_kept or not seq_types else np.int64(0), np.int64(0))
        else:
            k = _put_tokens(out, k, tok, b0, b1, type_id if b_kept or not seq_types else np.int64(1), np.int64(1))
    if not left and pad:
        _put_special(out, k, k + pad, opts[O_PAD_ID], opts[O_PAD_TYPE], np.int64(0))
        k += pad
    return k


@kernel
def put_single(k, tok, res, opts):
    """The encoding of one text of ``k`` matched tokens (rows ``tok``: ids,
    starts, ends, word index) laid out in ``res`` (8 rows): truncation,
    template, padding, as :func:`assemble` does for a batch.  Returns its
    length; ``-need`` when ``res`` has too few columns;
    :data:`SINGLE_FAILED` when the text cannot be truncated as asked;
    ``SINGLE_CUT - k`` when truncation cuts the text and overflow or a
    stride is asked for (the caller goes through :func:`assemble`).  A
    preset's one-text kernel ends with it."""
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


@kernel
def _cut(rows, t, n_texts, paired, opts):
    """``(la, lb, ma, mb, status)`` of text ``t``: sequence lengths, the
    lengths they are cut to, and 0 or an ``E_*`` status."""
    la = rows[t + 1] - rows[t]
    lb = np.int64(0)
    if paired:
        lb = rows[n_texts + t + 1] - rows[n_texts + t]
    ma, mb, ok = _truncated_lengths(la, lb, paired, opts[O_BUDGET], opts[O_MODE])
    if not ok:
        return la, lb, ma, mb, E_SHORT
    stride = opts[O_STRIDE]
    if (0 < ma < la and stride >= ma) or (0 < mb < lb and stride >= mb):
        return la, lb, ma, mb, E_STRIDE
    return la, lb, ma, mb, 0


@kernel
def _combo(c, pa, pb):
    """Pieces ``(i, j)`` of A and B of overflowing encoding ``c`` of a text
    whose sequences have ``pa`` and ``pb`` pieces, in HuggingFace's order:
    (A_i, B_0), (A_i, B_1), ... for each overflow piece i of A, then
    (A_0, B_1), (A_0, B_2), ..."""
    first = (pa - 1) * pb
    if c < first:
        return 1 + c // pb, c % pb
    return 0, 1 + c - first


@kernel
def _overflow_piece(c, pa, pb, b_first, la, ma, lb, mb, stride, left):
    """``(i, j, a0, a1, b0, b1)``: the pieces of A and B of overflowing
    encoding ``c`` (:func:`_combo`, B's pieces leading when the template
    puts ``$B`` first) and their token ranges (:func:`_piece`)."""
    if b_first:
        j, i = _combo(c, pb, pa)
    else:
        i, j = _combo(c, pa, pb)
    a0, a1 = _piece(la, ma, stride, left, i)
    b0, b1 = _piece(lb, mb, stride, left, j)
    return i, j, a0, a1, b0, b1


@kernel
def _padded(n, target):
    return target if target > n else n


@kernel
def assemble(tok, rows, n_texts, paired, opts):
    """Build the encodings of a batch from segmented tokens.

    ``tok`` is (4, n): ids, starts, ends, word indices.  Text ``t``'s first
    sequence is ``rows[t]:rows[t+1]``; when ``paired``, its second is
    ``rows[n_texts + t]:rows[n_texts + t + 1]``.  ``opts``: the option
    vector.  Returns ``(out, out_rows, ovf, ovf_rows, ovf_texts, bad,
    status)``: the kept encodings and their row splits; the overflowing
    ones, their row splits, and ``ovf_texts`` (text ``t``'s overflowing
    encodings are ``ovf_texts[t]:ovf_texts[t+1]``); ``bad`` is -1 on
    success, else the index of a text that cannot be truncated as asked
    (``status`` says why: ``E_SHORT``, ``E_STRIDE``).
    """
    stride = opts[O_STRIDE]
    left = opts[O_TRUNC_LEFT] != 0
    nspec = opts[O_NSPEC]
    want_ovf = opts[O_OVERFLOW] != 0
    # The sequence the template puts first leads the overflow order.
    b_first = False
    for s in range(opts[O_NSLOTS]):
        kind = opts[O_SLOTS + 3 * s]
        if kind != K_SPECIAL:
            b_first = kind == K_B
            break
    # Pass 1: lengths before and after truncation (kept for the next
    # passes), the longest kept encoding (it sets the padding), overflow count.
    cut = np.empty((4, n_texts), np.int64)
    longest = np.int64(0)
    n_ovf = np.int64(0)
    for t in range(n_texts):
        la, lb, ma, mb, status = _cut(rows, t, n_texts, paired, opts)
        if status:
            return (np.empty((8, 0), np.int32), np.zeros(1, np.int64), np.empty((8, 0), np.int32),
                    np.zeros(1, np.int64), np.zeros(1, np.int64), t, status)
        cut[0, t] = la
        cut[1, t] = lb
        cut[2, t] = min(la, ma)
        cut[3, t] = min(lb, mb)
        n = cut[2, t] + cut[3, t] + nspec
        if n > longest:
            longest = n
        if want_ovf and (ma < la or mb < lb):
            n_ovf += _n_pieces(la, ma, stride) * _n_pieces(lb, mb, stride) - 1
    target = np.int64(-1)
    if opts[O_PAD_TO] == 0:
        target = longest
    elif opts[O_PAD_TO] > 0:
        target = opts[O_PAD_TO]
    mult = opts[O_MULT]
    if target >= 0 and mult > 1 and target % mult:
        target += mult - target % mult
    # Pass 2: sizes.
    out_rows = np.empty(n_texts + 1, np.int64)
    out_rows[0] = 0
    ovf_rows = np.empty(n_ovf + 1, np.int64)
    ovf_rows[0] = 0
    ovf_texts = np.zeros(n_texts + 1, np.int64)
    p = 0
    for t in range(n_texts):
        la, lb, ma, mb = cut[0, t], cut[1, t], cut[2, t], cut[3, t]
        out_rows[t + 1] = out_rows[t] + _padded(ma + mb + nspec, target)
        if want_ovf and (ma < la or mb < lb):
            pa = _n_pieces(la, ma, stride)
            pb = _n_pieces(lb, mb, stride)
            for c in range(pa * pb - 1):
                i, j, a0, a1, b0, b1 = _overflow_piece(c, pa, pb, b_first, la, ma, lb, mb, stride, left)
                ovf_rows[p + 1] = ovf_rows[p] + _padded(a1 - a0 + b1 - b0 + nspec, target)
                p += 1
        ovf_texts[t + 1] = p
    # Pass 3: the encodings.  Overflow order, as HuggingFace: (A_i, B_0),
    # (A_i, B_j) for each overflow piece i of A, then (A_0, B_j).
    out = np.empty((8, out_rows[n_texts]), np.int32)
    ovf = np.empty((8, ovf_rows[n_ovf]), np.int32)
    p = 0
    for t in range(n_texts):
        la, lb, ma, mb = cut[0, t], cut[1, t], cut[2, t], cut[3, t]
        ra = rows[t]
        rb = rows[n_texts + t] if paired else np.int64(0)
        a0 = la - ma if left else np.int64(0)
        b0 = lb - mb if left else np.int64(0)
        _put_encoding(out, out_rows[t], tok, opts, ra + a0, ra + a0 + ma, True, rb + b0, rb + b0 + mb, True, target)
        if want_ovf and (ma < la or mb < lb):
            pa = _n_pieces(la, ma, stride)
            pb = _n_pieces(lb, mb, stride)
            for c in range(pa * pb - 1):
                i, j, a0, a1, b0, b1 = _overflow_piece(c, pa, pb, b_first, la, ma, lb, mb, stride, left)
                _put_encoding(ovf, ovf_rows[p], tok, opts, ra + a0, ra + a1, i == 0, rb + b0, rb + b1, j == 0, target)
                p += 1
    return out, out_rows, ovf, ovf_rows, ovf_texts, -1, 0
