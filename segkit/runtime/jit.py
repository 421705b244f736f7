"""Compiled kernels: the one decorator every kernel uses, and when Numba runs.

Every compiled function of segkit (and of its plugins) is declared with
:func:`kernel` instead of ``numba.njit``, so that the policy lives here:

* **Nothing at import.**  ``@kernel`` returns a stand-in and does not import
  Numba.  The first call of any kernel (or the first look at a Numba
  attribute of one) imports Numba and turns every stand-in into a real
  dispatcher at once, rebinding the module globals that name them, so that
  kernels calling each other see dispatchers when they compile and Python
  callers call the dispatchers directly from then on.  ``import segkit``
  therefore costs no Numba import, and a process that never segments never
  pays for it.  Numba extensions a kernel relies on (``intrinsic``,
  ``overload``) and Numba functions used inside kernels (``literally``) are
  declared through this module for the same reason.
* **Caching that survives installation** (:mod:`segkit.runtime.kernel_cache`):
  compiled code is looked up first where it is written at run time (Numba's
  usual folders), then in the package's own ``compiled`` folder, where
  ``pip install`` puts machine code compiled for a generic CPU when the
  wheel was built (:mod:`segkit.cli.precompile`).  Entries are keyed by
  a digest of the kernels' source files, not by modification times, so
  they stay valid after a copy.  A generic entry is used only by segkit's
  kernels: Numba's settings for the rest of the process do not change.
* **Never silent.**  When a kernel has to be compiled in a process after
  all, one line says so on standard error if it is a terminal
  (:func:`compile_notice`), before it happens; commands that show progress
  bars compile their kernels first (:func:`prepare`), so that a bar never
  sits still while Numba works.

Cost: the stand-ins cost nothing once Numba is loaded (the globals hold the
dispatchers); a reference kept elsewhere (an attribute, a closure) forwards
each call, one Python call more.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Iterable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: Options every kernel is compiled with (``nogil`` may be turned off per
#: kernel: functions that call the C API of CPython need the GIL).
BASE_OPTIONS = {"nogil": True, "cache": False}  # caching: our own cache class, set per dispatcher

_lock = threading.RLock()
_ready = False
_stand_ins: list["_StandIn"] = []
_packages: set[str] = set()


class _StandIn:
    """Something Numba provides, made when Numba is first needed."""

    __slots__ = ("_make", "real", "__weakref__")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self.real = None

    def materialize(self) -> Any:
        if self.real is None:
            self.real = self._make()
        return self.real


class Kernel(_StandIn):
    """A compiled function before Numba is loaded: calling it (or asking it
    for a Numba attribute such as ``overloads``) loads Numba and makes every
    kernel's dispatcher, then forwards to its own."""

    def __init__(self, py_func: Callable[..., Any], options: dict[str, Any]) -> None:
        super().__init__(lambda: _dispatcher(py_func, options, self.literal))
        self.literal: tuple[str, ...] = ()
        self.py_func = py_func
        self.__wrapped__ = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.options = options

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return dispatcher_of(self)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # introspection (doctest, pickle, pytest) does not load Numba
            raise AttributeError(name)
        return getattr(dispatcher_of(self), name)

    def __repr__(self) -> str:
        return f"<segkit kernel {self.__module__}.{self.__qualname__}>"

    def __reduce__(self):
        # By name, as functions pickle: the receiving process imports it.
        return (_kernel_named, (self.__module__, self.__qualname__))


def _kernel_named(module: str, qualname: str) -> Any:
    import importlib

    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def dispatcher_of(obj: Any) -> Any:
    """The Numba dispatcher of a kernel (loading Numba if needed); anything
    else is returned as it is."""
    if isinstance(obj, _StandIn):
        if obj.real is None:
            materialize()
        return obj.real
    return obj


def _register(stand_in: _StandIn, module: str) -> _StandIn | Any:
    with _lock:
        _packages.add(module.partition(".")[0])
        if _ready:
            return stand_in.materialize()
        _stand_ins.append(stand_in)
        return stand_in


def kernel(fn: F | None = None, *, nogil: bool = True, inline: str = "never", literal: tuple[str, ...] = (),
           **options: Any) -> F:
    """Declare a compiled kernel (``numba.njit`` with segkit's policy).

    ``@kernel`` or ``@kernel(inline="always")``; ``nogil=False`` for the
    rare kernel that calls CPython's C API.  Other keyword arguments go to
    Numba as they are (``boundscheck``, ``fastmath``...).

    Called from other kernels, a kernel is compiled for the *types* of its
    arguments, never for their constant values: Numba would otherwise
    compile one more specialization for ``f(x, 0)`` than for ``f(x, n)``,
    and another for each intermediate type its type inference tries (a
    loop counter starting at ``0``), each taking as long to compile as the
    first.  ``literal`` names the parameters that are meant to be
    compile-time constants (the function calls ``literally`` on them).
    """
    opts = dict(BASE_OPTIONS, nogil=nogil, **options)
    if inline != "never":
        opts["inline"] = inline

    def wrap(f: F) -> F:
        stand_in = Kernel(f, opts)
        stand_in.literal = tuple(literal)
        return _register(stand_in, f.__module__)  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap  # type: ignore[return-value]


def intrinsic(fn: F) -> F:
    """``numba.extending.intrinsic``, applied when Numba is loaded.  The
    typer may import Numba's modules it needs inside its body."""

    def make() -> Any:
        from numba.extending import intrinsic as numba_intrinsic

        return numba_intrinsic(fn)

    return _register(_StandIn(make), fn.__module__)  # type: ignore[return-value]


def overload(target: Callable[..., Any], **options: Any) -> Callable[[F], F]:
    """``numba.extending.overload(target)``, registered when Numba is loaded
    (before any kernel compiles).  Returns the implementation unchanged."""

    def wrap(impl: F) -> F:
        def make() -> Any:
            from numba.extending import overload as numba_overload

            numba_overload(target, **options)(impl)
            return impl

        _register(_StandIn(make), impl.__module__)
        return impl

    return wrap


def _numba_function(name: str) -> Any:
    """A function of the ``numba`` namespace for use inside kernels, bound
    when Numba loads."""

    def make() -> Any:
        import numba

        return getattr(numba, name)

    return _register(_StandIn(make), __name__)


#: ``numba.literally``, for kernels (``from segkit.runtime.jit import literally``).
literally = _numba_function("literally")


_on_load: list[Callable[[], Any]] = []


def on_load(fn: F) -> F:
    """Run ``fn()`` when Numba is loaded for the kernels (before any is
    made), or now if it is: to bind Numba internals that compiled code uses
    as module globals (a module cannot import them at import time)."""
    with _lock:
        if not _ready:
            _on_load.append(fn)
            return fn
    fn()
    return fn


def _dispatcher(py_func: Callable[..., Any], options: dict[str, Any], literal: tuple[str, ...] = ()) -> Any:
    import inspect

    from numba.core import types
    from numba.core.decorators import njit

    from . import kernel_cache

    disp = njit(**options)(py_func)
    kernel_cache.attach(disp, compile_notice)
    names = list(inspect.signature(py_func).parameters)
    keep = {names.index(n) for n in literal}
    typed_by_value = disp.get_call_template

    def get_call_template(args, kws):
        # Called from another kernel: the arguments' types without their
        # constant values (except the ``literal`` ones).
        args = tuple(a if i in keep else types.unliteral(a) for i, a in enumerate(args))
        kws = {k: (v if k in literal else types.unliteral(v)) for k, v in kws.items()}
        return typed_by_value(args, kws)

    disp.get_call_template = get_call_template
    return disp


def materialize() -> None:
    """Load Numba, register the extensions and make every kernel's
    dispatcher; rebind the module globals that hold stand-ins."""
    global _ready
    if _ready:
        return
    with _lock:
        if _ready:
            return
        import numba  # noqa: F401

        from . import kernel_cache

        kernel_cache.install_typeof(_StandIn, dispatcher_of)
        kernel_cache.install_listeners()
        for fn in _on_load:
            fn()
        _on_load.clear()
        pending = list(_stand_ins)
        # Extensions first: a kernel may be compiled as soon as it exists.
        for s in pending:
            if not isinstance(s, Kernel):
                s.materialize()
        for s in pending:
            if isinstance(s, Kernel):
                s.materialize()
        _rebind()
        _stand_ins.clear()
        _ready = True


def _rebind() -> None:
    for name, module in list(sys.modules.items()):
        if module is None or name.partition(".")[0] not in _packages:
            continue
        namespace = getattr(module, "__dict__", None)
        if not namespace:
            continue
        for key, value in list(namespace.items()):
            if isinstance(value, _StandIn) and value.real is not None:
                namespace[key] = value.real


def is_loaded() -> bool:
    """Whether Numba has been loaded for segkit's kernels in this process."""
    return _ready


# ------------------------------------------------------------------ notices
_notice_lock = threading.Lock()
_noticed = False
#: Seconds the next compile notice announces (set by :func:`prepare`).
_estimate = threading.local()
DEFAULT_ESTIMATE = 10


def compile_notice(seconds: float | None = None) -> None:
    """Say once per process, on a terminal's standard error, that kernels
    are being compiled (called by the cache just before Numba compiles)."""
    global _noticed
    if _noticed:
        return
    with _notice_lock:
        if _noticed:
            return
        _noticed = True
    if seconds is None:
        seconds = getattr(_estimate, "seconds", None) or DEFAULT_ESTIMATE
    stream = sys.stderr
    try:
        if stream is None or not stream.isatty() or os.environ.get("SEGKIT_QUIET_COMPILE"):
            return
        from .notices import say

        say(f"segkit: compiling kernels (first run only, ~{max(1, round(seconds))} s)", stream)
    except (OSError, ValueError, AttributeError):
        pass


def prepare(calls: Iterable[Callable[[], Any]], seconds: float) -> float:
    """Run ``calls`` (tiny calls of the kernels a command will use), so that
    any compiling happens now, announced once as taking about ``seconds``
    (the compile time measured for these kernels); returns the seconds spent.
    Commands with progress bars call this before their first bar."""
    t0 = time.perf_counter()
    _estimate.seconds = seconds
    try:
        for call in calls:
            call()
    finally:
        _estimate.seconds = None
    return time.perf_counter() - t0
