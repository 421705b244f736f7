"""Ctrl-C during compiled work: a clean ``KeyboardInterrupt``, promptly.

Why a plain call is not enough
------------------------------
Python runs signal handlers on the main thread only, whenever that thread
next executes bytecode.  Numba boxes a compiled function's result holding
the GIL, and boxing an array calls a Python function (Numba's
``serialize._numba_unpickle``, which returns the array's Python type).  A
Ctrl-C that arrived while the kernel ran is handled *there*, and the
``KeyboardInterrupt`` is raised inside Numba's boxing, which does not check
for it inside a tuple: the call returns a tuple holding NULL with the
exception set (Python reports ``SystemError: CPUDispatcher(...) returned a
result with an exception set``), or, when boxing a later element of the
tuple catches an exception of its own (the first boxing of a type in the
process does), the interrupt is lost and the tuple with NULL comes back as
if valid: unpacking it crashes the interpreter (SIGSEGV).  Nothing in
segkit's code or data is wrong at that point; the signal simply must not
reach Python while a kernel's result is boxed on the main thread.

The rule
--------
Long work started on the main thread runs on a helper thread (:func:`offload`,
or the :func:`interruptible` decorator on public entry points), where no
signal handler ever runs; the main thread waits in an interruptible wait.
When the wait is interrupted, the work is asked to stop (its *job* is
cancelled), the main thread gives it :data:`GRACE_SECONDS` to do so, then
re-raises the interrupt.  The work stops at its next :func:`checkpoint`
(between bounded chunks: blocks of texts, corpus pieces) or, inside a long
kernel, where the kernel polls :func:`stop_requested` on the array of
:func:`stop_flag`.  Buffers stay alive until the kernel returns: the helper
thread holds every reference the work took.  Calls off the main thread run
as they are (no handler can run there).

Short calls (under :data:`OFFLOAD_CHARS` characters) stay on the calling
thread, where a hand-off (about 10 microseconds) would cost more than the
call; the interrupt that lands inside one and surfaces as Numba's
``SystemError`` is turned back into the handler's exception
(:func:`reraise_signal`; single-text entry points, where even a wrapper's
call would show, do that in their own body, and send a long text to a
decorated batch function).  What remains is the crash described above for
a short call on the main thread whose result's boxing is the first of its
kind in the process: a window of microseconds once per kernel, which only
Numba can close (its tuple boxing would have to check each element).

Cost: one hand-off per long call, a flag test per chunk, and one load per
iteration of a polling kernel's outer loop.
"""

from __future__ import annotations

import functools
import inspect
import os
import queue
import signal
import threading
from threading import get_ident
from typing import Any, Callable, TypeVar

import numpy as np

from .jit import intrinsic

__all__ = [
    "GRACE_SECONDS",
    "OFFLOAD_CHARS",
    "Stopped",
    "bind",
    "block_signals",
    "cancellable",
    "chars_of",
    "checkpoint",
    "interruptible",
    "offload",
    "on_main_thread",
    "reraise_signal",
    "size_of_source",
    "stop_flag",
    "stop_requested",
]

#: Work estimated at this many characters or more leaves the main thread.
OFFLOAD_CHARS = 1 << 16
#: After an interrupt, how long the main thread waits for the work to stop.
GRACE_SECONDS = 0.5
#: The main thread's wait wakes this often even if no signal interrupts it.
_WAKE_SECONDS = 0.25

F = TypeVar("F", bound=Callable[..., Any])


class Stopped(BaseException):
    """Raised inside cancelled work (on a helper thread) by :func:`checkpoint`;
    the caller on the main thread raises the interrupt itself."""


class _Job:
    """One piece of offloaded work: its stop flag and its outcome."""

    __slots__ = ("stop", "done", "result", "error")

    def __init__(self) -> None:
        self.stop = np.zeros(1, np.uint8)  # polled by kernels: 1 = stop
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


_local = threading.local()  # .job: the job this thread works for
#: The stop flag of work that belongs to no job (it is never set).
_NEVER = np.zeros(1, np.uint8)


def _job() -> _Job | None:
    return getattr(_local, "job", None)


def stop_flag() -> np.ndarray:
    """The uint8 array a kernel polls with :func:`stop_requested`: the
    current job's stop flag, or one that is never set."""
    job = _job()
    return _NEVER if job is None else job.stop


def cancellable() -> bool:
    """Whether the calling thread works for a job that can be cancelled
    (then long work should reach :func:`checkpoint` often)."""
    return _job() is not None


def checkpoint() -> None:
    """Raise :class:`Stopped` if this thread's work was cancelled (call it
    between bounded chunks of work)."""
    job = _job()
    if job is not None and job.stop[0]:
        raise Stopped


def bind(func: F) -> F:
    """``func`` made to run for the calling thread's job on whatever thread
    calls it (for work handed to pool threads), so that its checkpoints and
    stop flags follow the job."""
    job = _job()
    if job is None:
        return func

    @functools.wraps(func)
    def bound(*args: Any, **kwargs: Any) -> Any:
        previous = _job()
        _local.job = job
        try:
            return func(*args, **kwargs)
        finally:
            _local.job = previous

    return bound  # type: ignore[return-value]


# --------------------------------------------------------------- helpers
_BLOCKED = {getattr(signal, name)
            for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2")
            if hasattr(signal, name)}


def block_signals() -> None:
    """Keep asynchronous signals away from the calling (helper) thread, so the
    kernel delivers them to a thread that waits interruptibly: the main one."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)


class _Helper(threading.Thread):
    """A daemon thread that runs offloaded jobs one after the other."""

    def __init__(self) -> None:
        super().__init__(name="segkit-offload", daemon=True)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()

    def run(self) -> None:
        block_signals()
        while True:
            job, func, args, kwargs = self.inbox.get()
            _local.job = job
            result = error = None
            try:
                result = func(*args, **kwargs)
            except BaseException as e:  # handed to the waiting caller
                error = e
            _local.job = None
            job.result, job.error = result, error
            del func, args, kwargs, result, error  # nothing of the work stays referenced here
            with _LOCK:
                _IDLE.append(self)  # before done: the caller's next job reuses this thread
            job.done.set()
            del job


_LOCK = threading.Lock()
_IDLE: list[_Helper] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_IDLE.clear)  # the child has none of these threads


def _submit(job: _Job, func, args, kwargs) -> None:
    with _LOCK:
        helper = _IDLE.pop() if _IDLE else None
    if helper is None:
        helper = _Helper()
        helper.start()
    helper.inbox.put((job, func, args, kwargs))


_MAIN = threading.main_thread().ident


def on_main_thread() -> bool:
    """Whether signal handlers can run on the calling thread.  (Offloaded
    work never runs on the main thread, so a job there is impossible.)"""
    return get_ident() == _MAIN


def offload(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``, run on a helper thread when called on the
    main thread (directly otherwise).  An interrupt of the wait cancels the
    job, waits up to :data:`GRACE_SECONDS` for it to stop, and is re-raised;
    the work's own exception is raised as it is."""
    if get_ident() != _MAIN:
        return func(*args, **kwargs)
    job = _Job()
    submitted = False
    try:
        _submit(job, func, args, kwargs)
        submitted = True
        while not job.done.wait(_WAKE_SECONDS):
            pass
    except BaseException:
        job.stop[0] = 1
        if submitted:
            job.done.wait(GRACE_SECONDS)
        raise
    error, job.error = job.error, None
    if error is not None:
        try:
            raise error
        finally:
            del error
    result, job.result = job.result, None
    return result


def _signal_cause(e: SystemError) -> BaseException | None:
    """The exception a signal handler raised inside Numba's boxing, if that is
    what ``e`` reports."""
    # Boxing the next element of a tuple calls Numba's Python function again
    # with the exception still set, which adds a SystemError of its own:
    # the handler's exception is at the end of the chain.
    while isinstance(e, SystemError) and "returned a result with an exception set" in str(e):
        e = e.__cause__
    return None if e is None or isinstance(e, SystemError) else e


def reraise_signal(e: SystemError) -> None:
    """Raise the exception a signal handler raised inside Numba's boxing (a
    Ctrl-C: KeyboardInterrupt) if that is what ``e`` reports; else return.

    For latency-critical entry points, which cannot afford a wrapper::

        try:
            ...
        except SystemError as e:
            interrupts.reraise_signal(e)
            raise
    """
    cause = _signal_cause(e)
    if cause is not None:
        raise cause from None


def interruptible(*texts: str, source: str | None = None) -> Callable[[F], F]:
    """Decorator for an entry point that may run compiled work for long.

    On the main thread, a call runs through :func:`offload` when its work is
    estimated at :data:`OFFLOAD_CHARS` or more: the characters of the
    parameters named in ``texts`` (a str, a list of str or of pairs or
    words, an Arrow array: see :func:`chars_of`), plus the size of the file
    or the characters of the list in parameter ``source``.  With neither,
    every call is long.  A shorter call runs in place, with Numba's
    ``SystemError`` for an interrupt during boxing turned back into the
    interrupt.  Off the main thread the call runs as it is.

    >>> import threading
    >>> @interruptible("texts")
    ... def where(texts):
    ...     return threading.current_thread() is threading.main_thread()
    >>> where(["a short batch"]), where(["x" * 100] * 1000)  # 100,000 characters: long
    (True, False)
    """
    names = list(texts) + ([source] if source is not None else [])

    def decorate(func: F) -> F:
        params = list(inspect.signature(func).parameters)
        spots = tuple((params.index(name), name, chars_of if name != source else size_of_source) for name in names)
        always = not spots

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if get_ident() != _MAIN:
                return func(*args, **kwargs)
            work = 0
            for i, name, measure in spots:
                work += measure(args[i] if i < len(args) else kwargs.get(name))
            if always or work >= OFFLOAD_CHARS:
                return offload(func, *args, **kwargs)
            try:
                return func(*args, **kwargs)
            except SystemError as e:
                reraise_signal(e)
                raise

        return wrapper  # type: ignore[return-value]

    return decorate


#: Lists longer than this count as long work without being measured.
_MANY = 4096


def chars_of(texts: Any) -> int:
    """An estimate of the characters of ``texts``: a str or bytes, a list or
    tuple of them, of pairs or of lists of words (from a few items), or
    anything with ``nbytes`` (an Arrow array); 0 for anything else (the call
    then reports what is wrong with it).  Cheap: it runs before every call."""
    t = type(texts)
    if t is str or t is bytes:
        return len(texts)
    if t is list or t is tuple:
        n = len(texts)
        if n > _MANY:
            return OFFLOAD_CHARS
        if n == 0:
            return 0
        step = (n >> 3) or 1
        total = 0
        picked = 0
        for item in texts[::step]:
            picked += 1
            ti = type(item)
            if ti is str or ti is bytes:
                total += len(item)
            elif ti is list or ti is tuple:
                for x in item:
                    if type(x) is str:
                        total += len(x)
        return total * n // picked
    if texts is None:
        return 0
    try:
        nbytes = texts.nbytes
    except Exception:
        return 0
    return nbytes if isinstance(nbytes, int) else 0


def size_of_source(source: Any) -> int:
    """An estimate of the work of building from ``source``: a file's size in
    bytes (a path), else :func:`chars_of` (a list of tokens or words)."""
    if isinstance(source, (str, os.PathLike)):
        try:
            return os.stat(source).st_size
        except (OSError, ValueError, TypeError):
            return 0
    return chars_of(source)


# ----------------------------------------------------------------- kernels
@intrinsic
def stop_requested(typingctx, flag):
    """In a kernel: whether ``flag[0]`` (the uint8 array of :func:`stop_flag`)
    is set.  An atomic (monotonic) load, so that the compiler cannot hoist
    it out of the loop that polls it: another thread sets the flag."""
    from llvmlite import ir
    from numba import types

    if not (isinstance(flag, types.Array) and flag.dtype == types.uint8 and flag.ndim == 1):
        return None
    sig = types.boolean(flag)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        value = builder.load_atomic(ary.data, "monotonic", 1)
        return builder.icmp_unsigned("!=", value, ir.Constant(ir.IntType(8), 0))

    return sig, codegen
