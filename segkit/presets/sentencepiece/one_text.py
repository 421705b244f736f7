"""One text to a Python list of ids in one compiled call: UTF-8, the
normalizer, the merges (word by word through the word cache) and the list.

:meth:`segkit.SentencePieceBPE.encode` is called once per text, often on
short texts, so what surrounds the merges costs as much as they do: an
encode to bytes, a dispatch, a NumPy result and a ``tolist`` that makes a
Python int per id.  Here the ``str`` is read where it lies
(:func:`segkit.engine.utf8.encode_str_range`) and the list is made with
CPython's C API from ints made once and shared
(:mod:`segkit.runtime.boxing`), as :mod:`segkit.presets.maxmatch.one_text`
does; the model's arguments are bound once to the compiled entry point.

The GIL is held throughout (the list is a Python object), so the word
cache passed here is the model's per-call cache, which only this function
uses: two threads never run it at once.  The C API is called only after
the cache is left (an allocation may run a collection, whose finalizers
may run Python code).
"""

from __future__ import annotations

import numpy as np

from ...engine.utf8 import encode_str_range
from ...runtime.boxing import _decref, _incref, _new_int, _new_list, _set_list_item, as_new_ref
from ...runtime.jit import kernel
from . import kernels as K


@kernel(nogil=False)
def str_ids(mb, mi, ints, cache, text):
    """The list of the ids of ``text`` (a ``str``), or the int ``1 + i``
    when character ``i`` is a lone surrogate (no UTF-8); MemoryError when
    memory runs out.  ``mb, mi``: :func:`.kernels.pack`'s arrays;
    ``ints``: addresses of shared int objects ``0..ints.size - 1``, kept
    alive by the caller; ``cache``: a word cache that only this function
    uses (or an empty array)."""
    n = len(text)
    buf = np.empty(4 * n + 1, np.uint8)
    m = encode_str_range(text, 0, n, buf)
    if m < 0:
        return as_new_ref(_new_int(-m))  # 1 + the position of the surrogate
    one = np.empty(0, np.int64)  # (no offsets: one text; no row ends)
    ids, k = K.encode_rows(buf[:m], one, mb, mi, cache, np.empty(m + 16, np.int32), one)
    out = _new_list(k)
    if out == 0:
        return as_new_ref(out)  # (MemoryError set)
    for q in range(k):
        v = np.int64(ids[q])
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
