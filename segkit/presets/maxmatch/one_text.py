"""One text to a Python list of ids in one compiled call: UTF-8, matching,
and the list.

The idea: :meth:`segkit.MaxMatch.encode` is called once per text, often on
short texts, so what surrounds the matching costs as much as the matching:
an encode to bytes, a NumPy array, a ``tolist`` that makes a Python int per
token.  Here the ``str`` is read where it lies and encoded into scratch
(:func:`segkit.engine.utf8.encode_str_range`), matched by the engine's loop
(byte alphabet), and the list is made with CPython's C API from ints made
once and shared (:mod:`segkit.runtime.boxing`): a reference per token, no
allocation but the list, which is the call's result itself
(:func:`~segkit.runtime.boxing.as_new_ref`).  The model's arguments are
bound once to the compiled entry point, so a call costs the unboxing of the
text and little else.

The invariant: ids are below the shared table's size or get a new int;
the list is complete before it is returned.  Cost: linear in the text;
the GIL is held (the list is a Python object).

The functions here compile the engine's matching loop into themselves
(:func:`segkit.engine.kernels._segment_range`, its pops layout included);
segkit's kernel cache (:mod:`segkit.runtime.kernel_cache`) keys them by the
contents of every file they import from, so a change to that loop compiles
them again (Numba's own cache looked at this file only).
"""

from __future__ import annotations

import numpy as np

from ...engine.kernels import _run_ids
from ...engine.utf8 import encode_str_range
from ...runtime.jit import kernel
from ...runtime.boxing import _decref, _incref, _new_int, _new_list, _set_list_item, as_new_ref

#: Bit of :func:`str_ids`'s ``mode`` asking for backward matching (the
#: other bits are the engine's ``clsmask``, e.g. its lookahead flag).
BACKWARD = 1 << 8


@kernel(nogil=False)
def str_ids(auto, ints, mode, text):
    """The list of the ids of ``text`` (a ``str``), or the int ``1 + i``
    when character ``i`` is a lone surrogate (no UTF-8); MemoryError
    when memory runs out.

    The arguments the caller binds once come first (``auto``; ``ints``:
    addresses of shared int objects ``0..ints.size - 1``, kept alive by
    the caller; ``mode``: the engine's ``clsmask`` plus
    :data:`BACKWARD`), so that a ``functools.partial`` of the compiled
    entry point is the whole per-call path.  The scratch (ids, then the
    UTF-8 read as bytes) is allocated here: that costs less than
    passing a per-thread buffer in."""
    n = len(text)
    scratch = np.empty(5 * n, np.int32)
    ids = scratch[: 4 * n]
    buf = scratch[4 * n :].view(np.uint8)
    m = encode_str_range(text, 0, n, buf)
    if m < 0:
        return as_new_ref(_new_int(-m))  # 1 + the position of the surrogate
    backward = (mode & BACKWARD) != 0
    if backward:
        lo = 0
        hi = m - 1
        while lo < hi:
            x = buf[lo]
            buf[lo] = buf[hi]
            buf[hi] = x
            lo += 1
            hi -= 1
    i, k, word, done = _run_ids(buf, np.int64(0), np.int64(m), auto, mode & (BACKWARD - 1), ids, np.int64(0))
    out = _new_list(k)
    if out == 0:
        return as_new_ref(out)  # (MemoryError set)
    for q in range(k):
        v = np.int64(ids[k - 1 - q] if backward else ids[q])
        if 0 <= v < ints.size:
            p = ints[v]
            _incref(p)
        else:
            p = _new_int(v)
            if p == 0:
                _decref(out)  # (items not set yet are NULL, which a list allows)
                return as_new_ref(p)  # (MemoryError set)
        _set_list_item(out, q, p)
    return as_new_ref(out)
