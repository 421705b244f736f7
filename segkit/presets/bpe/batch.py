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


def uses_backtrack(model: np.ndarray) -> bool:
    """Whether ``model`` is encoded by the backtracking kernel (the one with
    a fused single-text path).  Decided from the model, not by comparing
    kernel objects: a kernel is a stand-in until Numba loads, then the
    module global naming it is rebound to its dispatcher, so the same kernel
    can be two different objects in two places."""
    return bool(model[model[L.PARAMS] + L.P_MONOTONE])


def kernel_for(model: np.ndarray):
    """The encode kernel for ``model``."""
    return _backtrack if uses_backtrack(model) else _heap


def encode_pieces(buf, starts, ends, piece_ids, model, out):
    """Encode pieces with the kernel the model needs (see the kernels)."""
    return kernel_for(model)(buf, starts, ends, piece_ids, model, out)
