"""Character offsets to UTF-8 byte offsets, in place, in one compiled pass.

TensorFlow Text reports token offsets in bytes of the UTF-8 text; the
engine counts characters.  :func:`to_byte_offsets` converts a batch's
token rows after matching, text by text: one branch-free pass over the
text's characters makes the byte offset of each (in a small buffer that
stays in cache), and each token's offsets are then two lookups, in any
order.
"""

from __future__ import annotations

import numpy as np
from ..runtime.jit import kernel


@kernel
def _convert(cps, bounds, out, rows):
    longest = 0
    for t in range(bounds.size - 1):
        longest = max(longest, bounds[t + 1] - bounds[t])
    pre = np.empty(longest + 1, np.int64)  # UTF-8 bytes before each character of one text
    for t in range(bounds.size - 1):
        a = bounds[t]
        n = bounds[t + 1] - a
        nb = 0
        for i in range(n):
            pre[i] = nb
            x = cps[a + i]
            nb += 1 + (x >= 0x80) + (x >= 0x800) + (x >= 0x10000)
        pre[n] = nb
        for q in range(rows[t], rows[t + 1]):
            out[1, q] = pre[out[1, q]]
            out[2, q] = pre[out[2, q]]


def to_byte_offsets(cps: np.ndarray, bounds: np.ndarray, out: np.ndarray, rows: np.ndarray) -> None:
    """Turn the character offsets of ``out`` into UTF-8 byte offsets.

    Parameters
    ----------
    cps : numpy.ndarray
        uint32 code points of the texts, joined; text ``t`` is
        ``cps[bounds[t]:bounds[t + 1]]``.
    bounds : numpy.ndarray
        int64 text boundaries (length: texts + 1).
    out : numpy.ndarray
        (4, m) int32 token rows (ids, starts, ends, words), starts and ends
        counted in characters from the start of their text; rewritten in
        place.
    rows : numpy.ndarray
        int64; the tokens of text ``t`` are columns ``rows[t]:rows[t + 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> cps = np.array([ord(c) for c in "aé€😀"], dtype=np.uint32)
    >>> out = np.array([[7, 8], [0, 1], [1, 4], [0, 0]], dtype=np.int32)
    >>> to_byte_offsets(cps, np.array([0, 4]), out, np.array([0, 2]))
    >>> out[1:3].tolist()
    [[0, 1], [1, 10]]
    """
    _convert(cps, bounds, out, rows)
