"""Which encode kernel runs for a model (both take the same arguments).

The backtracking encoder (:mod:`~segkit.presets.bpe.backtrack`) is exact
when priorities grow along every merge (checked when the tables are built:
``P_MONOTONE``), the heap encoder (:mod:`~segkit.presets.bpe.heap`) always.
"""

from __future__ import annotations

import numpy as np

from . import layout as L
from .backtrack import encode_pieces as _backtrack
from .heap import encode_pieces_heap as _heap


def kernel_for(model: np.ndarray):
    """The encode kernel for ``model``."""
    return _backtrack if model[model[L.PARAMS] + L.P_MONOTONE] else _heap


kernel_for.backtrack = _backtrack  # (the kernel with a fused single-text path)


def encode_pieces(buf, starts, ends, piece_ids, model, out):
    """Encode pieces with the kernel the model needs (see the kernels)."""
    return kernel_for(model)(buf, starts, ends, piece_ids, model, out)
