"""Running batch work on several threads.

segkit's kernels release the GIL, so a batch split into contiguous chunks
runs on several cores from plain Python threads.  Batches below
:data:`MIN_CHARS_PER_THREAD` characters per thread stay on one thread,
where the split would cost more than it gains.

Turning texts into code points holds the GIL, so :func:`map_text_runs`
cuts a batch into a few runs per thread and lets each thread measure and
convert its own run: one thread's conversion then overlaps the others'
kernels instead of running before all of them.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .texts import text_lengths
from .interrupts import bind, block_signals, cancellable, checkpoint

#: Below this many characters per thread a batch is not split.  Measured on
#: the shuffled multilingual corpus (2 cores, WordPiece, median of 25
#: rounds), two threads against one: 0.94x at 99,000 characters, 1.46x at
#: 199,000; a hand-off to the pool costs a few hundred microseconds.
MIN_CHARS_PER_THREAD = 65_536
#: Cancellable work is cut into runs of at most this many characters.
CANCEL_RUN_CHARS = 1 << 21

_POOLS: dict[int, Any] = {}  # ThreadPoolExecutor by size (concurrent.futures imported on first use)
if hasattr(os, "register_at_fork"):
    # A forked child has none of the parent's threads: a pool inherited from
    # the parent would queue work that nothing runs (a hang).  The child
    # starts its own pools on first use.
    os.register_at_fork(after_in_child=_POOLS.clear)


#: The most threads any ``num_threads`` may ask for.  More threads than
#: cores gain nothing, and each thread of a trainer holds tables of a few
#: megabytes: ten thousand of them would exhaust memory before starting.
MAX_THREADS = 256


def check_threads(num_threads: object, *, all_cores: bool = True, name: str = "num_threads") -> int | None:
    """``num_threads`` checked (the one check of every API that takes it).

    An int from 1 to :data:`MAX_THREADS`, or None; with ``all_cores``, 0
    and negative values too (they mean all cores).

    >>> check_threads(10_000)
    Traceback (most recent call last):
    ...
    ValueError: num_threads must be at most 256, found 10000
    """
    if num_threads is None:
        return None
    if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TypeError(f"{name} must be an int, found {type(num_threads).__name__}")
    n = int(num_threads)
    if n > MAX_THREADS:
        raise ValueError(f"{name} must be at most {MAX_THREADS}, found {n}")
    if n < 1 and not all_cores:
        raise ValueError(f"{name} must be a positive int, found {n}")
    return n


def resolve_threads(num_threads: int | None) -> int:
    """``None``/1: one thread; 0 or negative: all cores; else that many
    (checked by :func:`check_threads`)."""
    n = check_threads(num_threads)
    if n is None:
        return 1
    if n <= 0:
        return min(os.cpu_count() or 1, MAX_THREADS)
    return n


def _pool(n: int):
    pool = _POOLS.get(n)
    if pool is None:
        # Signals go to the main thread, which waits interruptibly (see
        # segkit.interrupts), never to a pool thread running a kernel.
        from concurrent.futures import ThreadPoolExecutor

        pool = _POOLS[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="segkit", initializer=block_signals)
    return pool


def concat_segments(results: list[tuple[np.ndarray, np.ndarray]], num_threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Join per-chunk ``(out, rows)`` results into one; the copies run on
    ``num_threads`` threads (NumPy releases the GIL while copying)."""
    if len(results) == 1:
        return results[0]
    sizes = [r[0].shape[1] for r in results]
    starts = np.cumsum([0, *sizes]).tolist()
    out = np.empty((results[0][0].shape[0], starts[-1]), dtype=results[0][0].dtype)

    def put(i: int) -> None:
        out[:, starts[i] : starts[i + 1]] = results[i][0]

    if num_threads > 1:
        list(_pool(num_threads).map(bind(put), range(len(results))))
    else:
        for i in range(len(results)):
            put(i)
    rows = [np.zeros(1, dtype=np.int64)]
    shift = 0
    for _, r in results:
        rows.append(r[1:] + shift)
        shift += int(r[-1])
    return out, np.concatenate(rows)


def map_code_point_chunks(func, cps: np.ndarray, bounds: np.ndarray, num_threads: int | None) -> list:
    """``func(cps_chunk, bounds_chunk)`` over contiguous runs of texts of an
    already joined batch (views: nothing is copied or re-encoded), on up to
    ``num_threads`` threads.  ``bounds_chunk`` starts at 0."""
    n = resolve_threads(num_threads)
    texts = bounds.size - 1
    if n > 1:
        n = min(n, max(1, int(cps.size) // MIN_CHARS_PER_THREAD), texts)
    # Work that can be cancelled (see segkit.interrupts) goes in runs of at
    # most CANCEL_RUN_CHARS, so that it stops soon after it is asked to.
    runs = n
    if cancellable() and texts > 1:
        runs = min(max(n, -(-int(cps.size) // CANCEL_RUN_CHARS)), texts)
    if runs <= 1:
        return [func(cps, bounds)]
    targets = (np.arange(1, runs) * cps.size) // runs
    cuts = [0, *np.searchsorted(bounds, targets).tolist(), texts]
    cuts = sorted(set(min(max(c, 0), texts) for c in cuts))
    jobs = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        base = int(bounds[a])
        jobs.append((cps[base : int(bounds[b])], bounds[a : b + 1] - base))
    if n <= 1:
        return [_checked(func, *job) for job in jobs]
    return list(_pool(n).map(bind(lambda job: _checked(func, *job)), jobs))


def _checked(func, *args):
    """``func(*args)`` unless the work was cancelled (see :mod:`segkit.interrupts`)."""
    checkpoint()
    return func(*args)


#: Texts measured to plan the split of a large batch.
_SAMPLE = 1024


def _length_profile(texts) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, cum)``: ``cum[i]`` estimates the characters of
    ``texts[:positions[i + 1]]`` (``positions`` ends with ``len(texts)``).
    Exact for small batches; for large ones estimated from an evenly spread
    sample, since measuring every text costs a cache miss per text object on
    the thread that holds the GIL."""
    n = len(texts)
    m = min(n, _SAMPLE)
    positions = np.arange(m + 1, dtype=np.int64) * n // m
    sample = texts if m == n else [texts[i] for i in positions[:-1].tolist()]
    return positions, np.cumsum(text_lengths(sample) * np.diff(positions))


def map_text_runs(func, texts, num_threads: int | None, per_thread: int = 4) -> tuple[list, int]:
    """``func(run)`` over contiguous runs of ``texts`` of about equal
    characters, on up to ``num_threads`` threads (``per_thread`` runs each,
    so that a thread slowed by other work hands runs to the other).  ``func``
    measures and converts its own run, holding the GIL only for that, so
    one thread's conversion overlaps the others' kernels.  Returns the
    results in order and the thread count used (1: ``texts`` went through
    ``func`` whole)."""
    n = resolve_threads(num_threads)
    count = len(texts)
    if n > 1 and count > 1:
        positions, cum = _length_profile(texts)
        total = int(cum[-1])
        n = min(n, max(1, total // MIN_CHARS_PER_THREAD), count)
    if n <= 1 or count <= 1:
        return [func(texts)], 1
    # A few runs of about equal characters per thread, none much below
    # MIN_CHARS_PER_THREAD (small batches get one run per thread: each run
    # costs a hand-off).
    k = max(n, min(n * per_thread, total // (2 * MIN_CHARS_PER_THREAD), count))
    at = np.searchsorted(cum, (np.arange(1, k) * total) // k, side="right")
    cuts = sorted(set([0, *positions[at].tolist(), count]))
    jobs = list(zip(cuts[:-1], cuts[1:]))
    return list(_pool(n).map(bind(lambda ab: _checked(func, texts[ab[0] : ab[1]])), jobs)), n
