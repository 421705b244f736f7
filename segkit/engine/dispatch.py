"""Calling one compiled specialization directly from per-text hot paths.

A Numba dispatcher works out the type of every argument on each call and
looks up the matching specialization: about a third of a microsecond for a
kernel with five array arguments, a noticeable share of encoding one short
sentence.  Per-text paths call one kernel with arguments of fixed types (the
same dtypes, dimensions, layouts and flags every time), so they resolve the
specialization once, with :func:`resolve_entry`, and then call its compiled
entry point, which only unboxes the arguments.
"""

from __future__ import annotations

from typing import Any, Callable

from ..runtime.jit import dispatcher_of


def resolve_entry(dispatcher: Any, *args: Any) -> tuple[Any, Callable[..., Any]]:
    """Call ``dispatcher(*args)`` and return ``(result, entry)``.

    ``entry`` is the compiled entry point of exactly the specialization for
    the types of ``args`` (it must only ever be called with arguments of
    those same types), or ``dispatcher`` itself when Numba does not expose
    one (then nothing is gained, nothing breaks).
    """
    result = dispatcher(*args)
    try:
        from numba import typeof  # loaded by the call above

        dispatcher = dispatcher_of(dispatcher)
        entry = dispatcher.overloads[tuple(typeof(a) for a in args)].entry_point
    except Exception:  # another Numba version: keep the dispatcher
        entry = dispatcher
    return result, entry
