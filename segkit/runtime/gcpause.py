"""Building large results without the cyclic garbage collector.

A batch result is many small Python objects (lists of strings) that cannot
form reference cycles.  Allocating them still triggers collections, and a
full collection walks every object of the process: with Numba loaded that
alone can cost as much as building the result.  :func:`paused_gc` switches
the collector off while such a result is built and restores it after
(collection then resumes as usual).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable cyclic garbage collection in the block (when it was enabled)."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
