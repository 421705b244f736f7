"""Saying on standard error that something slow is happening, so that no
call pauses for seconds in silence.

:func:`slow_step` prints its message once per process; on a terminal a
line under it then counts the seconds while the step runs and ends with how
long it took, so a user sees it move at least once a second.  Elsewhere (a
log, a pipe) the message is one line and nothing follows it.  :func:`say`
writes a line of its own meanwhile (the compile notice does).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator

_said: set[str] = set()
_lock = threading.Lock()
#: The stream whose current line a running step's counter owns (None: none).
_open_line: list = [None]

#: Seconds between two updates of the counter on a terminal.
TICK = 1.0

#: Set while notices are silenced (see :func:`silenced`).
_quiet = threading.Event()


@contextlib.contextmanager
def silenced(quiet: bool = True) -> Iterator[None]:
    """Within the block (when ``quiet``), say nothing: the command line's
    ``-q``/``--quiet``.  Errors are not notices: they still reach the user."""
    if not quiet or _quiet.is_set():
        yield
        return
    _quiet.set()
    try:
        yield
    finally:
        _quiet.clear()


@contextlib.contextmanager
def slow_step(message: str) -> Iterator[None]:
    """Run the ``with`` block announced by ``message`` (once per process:
    a message said before is not said again, and the block runs silently).

    The message is a line of its own; on a terminal a short line under it
    counts the seconds (``  3 s``) and ends as ``  done in 3.2 s``, short so
    that a narrow terminal never wraps the line being rewritten.

    >>> with slow_step("segkit: an example step"):   # not a terminal here: one line
    ...     pass
    """
    with _lock:
        fresh = message not in _said
        _said.add(message)
    stream = sys.stderr
    if not fresh or stream is None or _quiet.is_set():
        yield
        return
    say(message, stream)
    try:
        tty = stream.isatty()
    except (ValueError, AttributeError):
        tty = False
    if not tty:
        yield
        return
    t0 = time.perf_counter()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(TICK):
            with _lock:
                _write(stream, f"\r  {time.perf_counter() - t0:.0f} s")
                _open_line[0] = stream

    ticker = threading.Thread(target=tick, name="segkit-notice", daemon=True)
    ticker.start()
    ok = False
    try:
        yield
        ok = True
    finally:
        done.set()
        ticker.join()
        end = f"done in {time.perf_counter() - t0:.1f} s" if ok else "stopped"
        with _lock:
            _write(stream, f"\r  {end}\n")
            _open_line[0] = None


def say(line: str, stream=None) -> None:
    """Write ``line`` (and a newline) to ``stream`` (standard error), on a
    line of its own: a running step's counter continues on the next one."""
    stream = sys.stderr if stream is None else stream
    if stream is None or _quiet.is_set():
        return
    with _lock:
        if _open_line[0] is stream:
            _write(stream, "\n")
            _open_line[0] = None
        _write(stream, line + "\n")


def _write(stream, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError, AttributeError):
        pass
