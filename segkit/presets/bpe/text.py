"""One text in one compiled call: pre-tokenization and BPE together.

The per-text path of :class:`segkit.BPE` for the compiled patterns: the
text's UTF-8 ``bytes`` go in as they are (Numba takes ``bytes`` for less than
an array costs to make), :func:`~.pretokenize_kernels.split_row` cuts them
into pieces (special tokens by the call's plan) and
:func:`~.backtrack.encode_range` encodes the pieces, all in arrays of one
per-thread scratch (:class:`Scratch`), so that nothing is allocated and the
call has four arguments (each array argument costs Numba about a tenth of a
microsecond to unbox).

Scratch layout (int64): ``[0]`` the pattern's kind, ``[1]`` the plan's
end, ``[2]`` the capacity ``c`` in bytes, ``[3]`` a disallowed token's
index in the plan (set when one is found); from :data:`HEADER` the plan,
then five sections of ``c + 1``: piece ends, piece ids, piece starts, ids
out, dead flags.
"""

from __future__ import annotations

import threading

import numpy as np
from ...runtime.jit import kernel

from . import layout as L
from .backtrack import encode_pieces, encode_range
from .heap import encode_pieces_heap
from .pretokenize_kernels import DISALLOWED_FOUND, split_row
from .regex_kernels import chain_pieces

HEADER = 8


@kernel
def sections(scratch):
    """The views of a scratch array: ``(plan, piece ends, piece ids, piece
    starts, ids out, dead flags)`` (see the module documentation)."""
    pe = scratch[1]
    c = scratch[2] + 1
    return (scratch[HEADER:pe], scratch[pe : pe + c], scratch[pe + c : pe + 2 * c], scratch[pe + 2 * c : pe + 3 * c],
            scratch[pe + 3 * c : pe + 4 * c], scratch[pe + 4 * c : pe + 5 * c])


@kernel
def encode_text_pieces(buf, model, scratch, table):
    """:func:`encode_text`, also returning the number of pieces ``m``:
    ``(k, m)``.  The pieces tile the text, piece ``i`` starting at
    ``starts[i]`` and ending where ``i + 1`` starts (``starts[m]`` is the
    end); the piece ends section then holds each piece's token end."""
    n = len(buf)
    plan, ends, ids, starts, out, dead = sections(scratch)
    status, p, m, t = split_row(scratch[0], buf, 0, n, table, plan, ends, ids, 0)
    if status == DISALLOWED_FOUND:
        scratch[3] = t
        return -2 - p, m
    q = 0
    for i in range(m):
        starts[i] = q
        q = ends[i]
    starts[m] = q
    # piece_ends may alias ends: a piece's end is read before its entry is written
    return encode_range(buf, starts, ends, ids, 0, m, model, out, 0, dead, ends), m


@kernel
def encode_text(buf, model, scratch, table):
    """Ids of ``buf`` (bytes or uint8 array, at most the scratch's capacity)
    into the scratch's out section: returns their number; -1 for
    inconsistent tables; ``-2 - p`` when the disallowed string
    ``scratch[3]`` of the plan starts at byte ``p``."""
    return encode_text_pieces(buf, model, scratch, table)[0]


class Scratch:
    """Per-thread scratch arrays of one tokenizer and one plan."""

    def __init__(self, kind: int, plan: np.ndarray) -> None:
        self.kind = int(kind)
        self.plan = plan
        self.local = threading.local()

    def get(self, nbytes: int) -> tuple[np.ndarray, int, int]:
        """``(array, offset of the ids out, capacity)`` for this thread, with
        room for ``nbytes``."""
        got = getattr(self.local, "got", None)
        if got is None or got[2] < nbytes:
            cap = max(nbytes, 4096)
            pe = HEADER + self.plan.size
            arr = np.zeros(pe + 5 * (cap + 1), dtype=np.int64)
            arr[0] = self.kind
            arr[1] = pe
            arr[2] = cap
            arr[HEADER:pe] = self.plan
            got = self.local.got = (arr, pe + 3 * (cap + 1), cap)
        return got


@kernel
def encode_with_model(buf, starts, ends, piece_ids, model, out):
    """:func:`~.backtrack.encode_pieces` with the encoder the model needs:
    backtracking, or the heap for a vocabulary whose priorities do not grow
    along every merge (:func:`~.batch.uses_backtrack`), inside a kernel."""
    if model[model[L.PARAMS] + L.P_MONOTONE]:
        return encode_pieces(buf, starts, ends, piece_ids, model, out)
    return encode_pieces_heap(buf, starts, ends, piece_ids, model, out)


@kernel
def encode_chain_text(cps, buf, pages_all, blocks_all, code_all, sets_all, meta, gaps, model):
    """Ids of one text with no special or added token in it, pre-tokenized
    by a chain of compiled patterns (:func:`~.regex_kernels.chain_pieces`;
    ``cps`` its code points, ``buf`` its UTF-8) and encoded by the model's
    encoder (:func:`encode_with_model`), in one call.  Returns ``(k, ids)``:
    ``k < 0`` where tiktoken's rules fail (-1) or the tables are
    inconsistent (-2)."""
    m, starts, ends = chain_pieces(cps, pages_all, blocks_all, code_all, sets_all, meta, gaps)
    out = np.empty(max(len(buf), 1), np.int32)
    if m < 0:
        return np.int64(-1), out
    k, _ = encode_with_model(buf, starts, ends, np.full(m, -1, np.int32), model, out)
    if k < 0:
        return np.int64(-2), out
    return np.int64(k), out
