"""Running batch work on several threads.

segkit's kernels release the GIL, so a batch split into contiguous chunks
runs on several cores from plain Python threads.  Batches below
:data:`MIN_CHARS_PER_THREAD` characters per thread stay on one thread,
where the split would cost more than it gains.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
import numpy as np

#: Below this many characters per thread a batch is not split.
MIN_CHARS_PER_THREAD = 32_768

_POOLS: dict[int, ThreadPoolExecutor] = {}


def resolve_threads(num_threads: int | None) -> int:
    """``None``/1: one thread; 0 or negative: all cores; else that many."""
    if num_threads is None:
        return 1
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"num_threads must be an int, found {type(num_threads).__name__}")
    if num_threads <= 0:
        return os.cpu_count() or 1
    return num_threads


def _pool(n: int) -> ThreadPoolExecutor:
    pool = _POOLS.get(n)
    if pool is None:
        pool = _POOLS[n] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="segkit")
    return pool


def concat_segments(results: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Join per-chunk ``(out, rows)`` results into one."""
    if len(results) == 1:
        return results[0]
    out = np.concatenate([r[0] for r in results], axis=1)
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
    if n <= 1:
        return [func(cps, bounds)]
    targets = (np.arange(1, n) * cps.size) // n
    cuts = [0, *np.searchsorted(bounds, targets).tolist(), texts]
    cuts = sorted(set(min(max(c, 0), texts) for c in cuts))
    jobs = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        base = int(bounds[a])
        jobs.append((cps[base : int(bounds[b])], bounds[a : b + 1] - base))
    return list(_pool(n).map(lambda job: func(*job), jobs))
