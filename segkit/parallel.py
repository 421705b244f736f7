"""Running batch work on several threads.

segkit's kernels release the GIL, so a batch split into contiguous chunks
runs on several cores from plain Python threads.  Batches below
:data:`MIN_CHARS_PER_THREAD` characters per thread stay on one thread,
where the split would cost more than it gains.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import numpy as np

T = TypeVar("T")

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


def split_points(texts: Sequence[str], parts: int) -> list[int]:
    """Indices cutting ``texts`` into ``parts`` runs of about equal length."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    cum = np.cumsum(lengths)
    total = int(cum[-1]) if cum.size else 0
    cuts = [0]
    for k in range(1, parts):
        cuts.append(int(np.searchsorted(cum, total * k / parts)))
    cuts.append(len(texts))
    return sorted(set(cuts))


def map_chunks(func: Callable[[Sequence[str]], T], texts: Sequence[str], num_threads: int | None) -> list[T]:
    """``func`` over contiguous chunks of ``texts``, on up to ``num_threads`` threads."""
    n = resolve_threads(num_threads)
    if n > 1:
        total = sum(map(len, texts))
        n = min(n, max(1, total // MIN_CHARS_PER_THREAD), len(texts))
    if n <= 1:
        return [func(texts)]
    cuts = split_points(texts, n)
    chunks = [texts[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
    return list(_pool(n).map(func, chunks))


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
