"""Arrays each thread reuses from call to call (see :class:`Scratch`)."""

from __future__ import annotations

import threading

import numpy as np

from . import _kernels


class Scratch(threading.local):
    """Arrays a thread reuses from call to call for intermediate results.

    Writing fresh memory costs a page fault per 4 KiB, several microseconds
    each on virtual machines: on pku+msr (357,000 characters) fresh token
    rows cost about 8 ms per call, nearly as much as segmenting.  Each
    thread keeps its own arrays (grown, never shared): token rows, the
    words' cache keys, the words spelled out and their table (see
    :func:`_kernels.word_keys`).
    Nothing returned to the caller refers to them.  A batch runs with the
    garbage collector paused, so no finalizer can run (and segment again in
    this thread) between its compiled passes; a single text's array is
    taken out while in use (:meth:`take_one`).  Batches of more than
    :data:`MAX_KEPT_CHARS` characters get arrays of their own, freed after
    the call, so that one huge call does not leave a thread holding its
    buffers (at most about 20 MiB are kept, 29 MiB in bidirectional mode).
    Single texts (:meth:`ChineseMaxMatch.cut`) use one array of 13 rows of
    twice their length (at most 1.7 MiB, for :data:`MAX_ONE_CHARS`).
    """

    def __init__(self) -> None:
        self.rows = np.empty((4, 0), np.int32)
        self.rows2 = self.rows  # the backward direction's, in bidirectional mode
        self.text = np.empty(0, np.uint32)
        self.keys = np.empty((4, 0), np.int32)  # rows: keys, spelled, starts, ends
        self.seen = np.zeros(0, np.int32)
        self.stamp = 0
        self.single = _NO_SINGLE

    def token_rows(self, n_chars: int, second: bool = False) -> np.ndarray:
        """Rows for every token of ``n_chars`` characters (at most one per
        character); ``second``: a second such array (bidirectional mode
        holds both directions' tokens at once)."""
        if n_chars > MAX_KEPT_CHARS:
            return np.empty((4, n_chars + 16), np.int32)
        name = "rows2" if second else "rows"
        rows = getattr(self, name)
        if rows.shape[1] < n_chars + 16:
            rows = np.empty((4, n_chars + n_chars // 8 + 16), np.int32)
            setattr(self, name, rows)
        return rows

    def _stamped(self):
        """The table of spelled keys and a new stamp for it."""
        if not self.seen.size or self.stamp >= 0x7FFFFFFF:
            self.seen = np.zeros(2 * _kernels.TABLE_SLOTS, np.int32)
            self.stamp = 0
        self.stamp += 1
        return self.seen, self.stamp

    def words(self, n_chars: int, n_tokens: int):
        """``(text, (4, n_tokens) int32 for keys, spelled, starts and ends,
        seen, stamp)`` for :func:`_kernels.word_keys`."""
        seen, stamp = self._stamped()
        if n_chars > MAX_KEPT_CHARS:
            return np.empty(n_chars + n_tokens, np.uint32), np.empty((4, n_tokens), np.int32), seen, stamp
        if self.text.size < n_chars + n_tokens:
            self.text = np.empty(n_chars + n_tokens + (n_chars + n_tokens) // 8, np.uint32)
        if self.keys.shape[1] < n_tokens:
            self.keys = np.empty((4, n_tokens + n_tokens // 8), np.int32)
        return self.text, self.keys, seen, stamp

    def take_one(self, n_chars: int):
        """``(scratch, seen, stamp)`` for :func:`_kernels.segment_one`.

        The scratch array is taken out until :meth:`give_back`: a call made
        in between by the same thread (a finalizer run by a garbage
        collection while the result is built, say) gets an array of its own
        instead of overwriting the words the first call has yet to read."""
        seen, stamp = self._stamped()
        single = self.single
        if single.shape[1] < 2 * n_chars + 16:
            single = np.empty((13, max(2 * n_chars + 16, 256)), np.int32)
        self.single = _NO_SINGLE
        return single, seen, stamp

    def give_back(self, single: np.ndarray) -> None:
        self.single = single

    def keep_seen(self, seen: np.ndarray) -> None:
        """Keep the table of spelled keys a call grew, unless it grew past
        :data:`MAX_KEPT_SLOTS` (then it is dropped; the old one still works)."""
        if seen.size <= 2 * MAX_KEPT_SLOTS:
            self.seen = seen


#: Largest batch, in characters, whose intermediate arrays a thread keeps.
MAX_KEPT_CHARS = 1 << 19
#: Largest table of spelled keys a thread keeps (2 MiB).
MAX_KEPT_SLOTS = 1 << 18
#: Longest text that :meth:`ChineseMaxMatch.cut` and ``tokenize`` segment
#: in one call of :func:`_kernels.segment_one` (its table never has to grow
#: then); longer ones take the batch path.
MAX_ONE_CHARS = 1 << 14


_NO_SINGLE = np.empty((13, 0), np.int32)
SCRATCH = Scratch()
