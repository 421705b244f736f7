"""Running a test's work on several threads at once."""

from __future__ import annotations

import threading
from typing import Callable


def run_in_threads(work: Callable[[int], None], n: int = 8) -> None:
    """Start ``work(k)`` for k = 0 .. n-1, each on its own thread, all at
    once, and wait for them all."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
