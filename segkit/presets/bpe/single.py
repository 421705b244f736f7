"""One text through a :class:`segkit.Tokenizer` over a BPE in one compiled
call: pre-tokenization, BPE, token offsets, then the shared
post-processing (template, truncation, padding:
:mod:`segkit.presets.pipeline.postprocess`).

This is the latency path of the pipeline over a BPE (the batch path is
:class:`~.rows.BPERows`, whose rules it follows: a token's offsets cover
the characters of its bytes, ByteLevel's ``trim_offsets`` leaves the
spaces at its ends out, its word index is its piece's).  Two entry points
share the rows and the post-processing:

* :func:`encode_single_rows`: the model's fused path (a compiled pattern,
  the backtracking encoder), the text's bytes in, nothing allocated;
* :func:`encode_pieces_rows`: the pieces any other pre-tokenizer made
  (a chain of Splits, compiled regex programs, added tokens as pieces).

A text that its normalizer changes takes the batch path (its offsets are
mapped back to the input's characters there).

Scratch: the int64 array of :class:`~.text.Scratch` (its ``[4]`` set to 1
for ``trim_offsets``) and an int32 result array of :data:`RES_ROWS` rows:
the token rows (ids, starts, ends, word index) in rows ``0:4``, the
encoding (8 rows, :data:`~segkit.presets.pipeline.postprocess.FIELDS`) in
rows ``4:12``.
"""

from __future__ import annotations

import numpy as np

from ...runtime.jit import kernel
from ..pipeline.postprocess import O_MODE, O_NSLOTS, O_PAD_TO, O_SLOTS, put_single
from ..pipeline.template import K_A
from . import layout as L
from .regex_kernels import chain_pieces
from .text import encode_text_pieces, encode_with_model, sections

_ix = np.uint64  # (unsigned indices: Numba drops its wrap-around code)

#: rows of the int32 result scratch: 4 token rows, then the 8 of an encoding
RES_ROWS = 12
#: the header slot of the int64 scratch that holds the trim_offsets flag
TRIM_SLOT = 4
#: the header slot the kernel sets to 1 when it returned token rows (plain options), else 0
PLAIN_SLOT = 5
#: the header slot the caller sets to 1 for a text of ASCII characters only (offsets are byte offsets)
ASCII_SLOT = 6
#: returned for a disallowed special token (never: the pipeline's plans allow or ignore each)
DISALLOWED = -(1 << 42)
#: returned for inconsistent tables (a model not built by build_tables)
INCONSISTENT = -(1 << 43)
#: returned where a chain of compiled patterns fails tiktoken's rules
CHAIN_FAILED = -(1 << 44)


@kernel
def encode_single_rows(buf, model, scratch, table, opts, res):
    """One text (UTF-8 ``bytes``, at most the scratch's capacity), whole
    pipeline.

    Returns the number of columns of the result: with plain options (no
    template slot but the text, no truncation, no padding) the token rows
    ``res[0:4, :k]``; otherwise the encoding ``res[4:12, :n]``
    (``scratch[PLAIN_SLOT]`` says which).  Negative: ``-need`` when ``res``
    has too few columns (grow it, call again); ``SINGLE_FAILED`` when the
    text cannot be truncated as asked; ``SINGLE_CUT - k`` when truncation
    cuts the text and overflow or a stride is asked for (its ``k`` token
    rows are in ``res[0:4]``); :data:`DISALLOWED`, :data:`INCONSISTENT`.
    """
    k, m = encode_text_pieces(buf, model, scratch, table)
    if k == -1:
        return INCONSISTENT
    if k < 0:
        return DISALLOWED
    if res.shape[1] < k:
        return -k
    _, ends, ids, starts, out, _ = sections(scratch)
    _token_rows(buf, starts, starts[1:], ends, ids, m, out, model, scratch[TRIM_SLOT] != 0,
                scratch[ASCII_SLOT] != 0, res)
    return _post(k, opts, res, scratch)


@kernel
def encode_pieces_rows(buf, starts, ends, piece_ids, model, opts, res, state):
    """:func:`encode_single_rows` for the pieces ``buf[starts[p]:ends[p]]``
    of one text (in text order; a piece with ``piece_ids[p] >= 0`` is that
    one token), as any pre-tokenizer makes them.  ``state`` (int64, at
    least 8): ``[TRIM_SLOT]`` the trim_offsets flag, ``[PLAIN_SLOT]`` set
    as :func:`encode_single_rows` sets it.  Same return values."""
    m = starts.size
    out = np.empty(max(len(buf), 1), np.int32)
    k, tok_ends = encode_with_model(buf, starts, ends, piece_ids, model, out)
    if k < 0:
        return INCONSISTENT
    if res.shape[1] < k:
        return -k
    _token_rows(buf, starts, ends, tok_ends, piece_ids, m, out, model, state[TRIM_SLOT] != 0,
                state[ASCII_SLOT] != 0, res)
    return _post(k, opts, res, state)


@kernel
def encode_chain_rows(cps, buf, pages_all, blocks_all, code_all, sets_all, meta, gaps, model, opts, res, state):
    """:func:`encode_single_rows` for a text with no special or added token
    in it, pre-tokenized by a chain of compiled patterns
    (:func:`~.regex_kernels.chain_pieces`; ``cps`` its code points,
    ``buf`` its UTF-8).  ``state`` as in :func:`encode_pieces_rows`.  Same
    return values, and :data:`CHAIN_FAILED` where tiktoken's rules fail
    (the caller's other path names the place)."""
    m, starts, ends = chain_pieces(cps, pages_all, blocks_all, code_all, sets_all, meta, gaps)
    if m < 0:
        return CHAIN_FAILED
    return encode_pieces_rows(buf, starts, ends, np.full(m, -1, np.int32), model, opts, res, state)


@kernel
def _token_rows(buf, starts, ends, tok_ends, piece_ids, m, out, model, trim, ascii_text, res):
    """The token rows (ids, character starts and ends, word index) of
    pieces ``0:m`` into ``res[0:4]``.  The tokens are in text order, so one
    walk over the bytes counts the characters before each (a span starting
    inside a character starts at it; one ending inside a character ends
    after it; an ASCII text's characters are its bytes); a piece's word
    index is its own index."""
    info = model[model[L.INFO] : model[L.INFO + 1]]
    r_id = res[0]
    r_start = res[1]
    r_end = res[2]
    r_word = res[3]
    x = 0  # bytes before x are counted in chars
    chars = 0
    tok = 0
    for i in range(m):
        b = starts[i]
        special = piece_ids[i] >= 0
        while tok < tok_ends[i]:
            t_id = out[tok]
            e = ends[i] if special else b + info[_ix(4 * t_id)]
            if ascii_text:
                cs = b
                ce = e
            else:
                for y in range(x, b):  # (nothing when pieces tile the text)
                    if (buf[_ix(y)] & 0xC0) != 0x80:
                        chars += 1
                cs = chars if (buf[_ix(b)] & 0xC0) != 0x80 else chars - 1
                for y in range(b, e):
                    if (buf[_ix(y)] & 0xC0) != 0x80:
                        chars += 1
                x = e
                ce = chars
            if trim and (buf[_ix(b)] == 0x20 or buf[_ix(e - 1)] == 0x20):
                lead = 0
                while b + lead < e and buf[_ix(b + lead)] == 0x20:
                    lead += 1
                trail = 0
                while e - 1 - trail >= b and buf[_ix(e - 1 - trail)] == 0x20:
                    trail += 1
                if lead:
                    cs = min(cs + lead, ce)
                if trail and ce >= trail:
                    ce = max(ce - trail, cs)
            r_id[tok] = t_id
            r_start[tok] = cs
            r_end[tok] = ce
            r_word[tok] = i
            tok += 1
            b = e


@kernel
def _post(k, opts, res, state):
    """Template, truncation and padding of the ``k`` token rows in
    ``res[0:4]`` (see :func:`encode_single_rows` for what it returns)."""
    if (opts[O_NSLOTS] == 1 and opts[O_SLOTS] == K_A and opts[O_SLOTS + 2] == 0 and opts[O_MODE] == 0
            and opts[O_PAD_TO] < 0):
        state[PLAIN_SLOT] = 1
        return k
    state[PLAIN_SLOT] = 0
    return put_single(k, res[:4], res[4:], opts)
