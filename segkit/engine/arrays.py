"""Small compiled array helpers shared by the kernels.

They exist for compile time, which a cold Numba cache pays on first use:

* copies are loops: Numba compiles a slice assignment between two arrays
  together with the message of its shape-mismatch error, which pulls in its
  string formatting machinery (seconds, for a copy);
* ``np.full``, ``np.zeros`` and ``np.arange`` each compile an implementation
  per signature; :func:`full` is a loop over ``np.empty``.  Callers pass the
  fill value as ``np.int32(v)``/``np.int64(v)``, not a literal constant.
* all are inlined into their callers (``inline="always"``): a function
  compiled on its own costs its own type inference, optimization and code
  generation, and again in every caller it is linked into.  None is called
  per character (an inlined call with array arguments costs atomic
  reference counting).
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel


@kernel(inline="always")
def copy_prefix(dst, src, n):
    """``dst[:n] = src[:n]`` for 1-d arrays."""
    for i in range(n):
        dst[i] = src[i]


@kernel(inline="always")
def copy_rows_prefix(dst, src, n):
    """``dst[:, :n] = src[:, :n]`` for 2-d arrays with as many rows."""
    for r in range(src.shape[0]):
        for i in range(n):
            dst[r, i] = src[r, i]


@kernel(inline="always")
def grow(arr, need):
    """A copy of the 1-d ``arr`` with room for at least ``need`` items
    (at least twice as large)."""
    out = np.empty(max(2 * arr.size, need + 16), arr.dtype)
    copy_prefix(out, arr, arr.size)
    return out


@kernel(inline="always")
def full(n, value, dtype):
    """``np.full(n, value, dtype)``."""
    out = np.empty(n, dtype)
    for i in range(n):
        out[i] = value
    return out
