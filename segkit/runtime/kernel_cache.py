"""Where compiled kernels are found: Numba's cache, keyed so that it survives
installation, plus machine code shipped in the package.

Numba's own cache keys an entry by the source file's stamp and by the CPU it
was compiled for, and looks for it next to the source file.  Code compiled
when the wheel is built therefore never matches after ``pip install``: the
CPU of the user's machine differs (or is not known at build time), and older
Numba versions stamped a file by its modification time.  Here an entry of a
segkit kernel is keyed by

* the signature, the kernel's bytecode and closure (as Numba does);
* the Numba version and the Python version (as Numba does);
* a digest of the *contents* of every source file that compiled code can
  depend on (:func:`source_digest`): the files that declare kernels and the
  package files they import from, so that a change in one file invalidates
  the kernels of another that inline or call it (Numba's per-file stamp
  misses that);
* the machine: the target triple and the CPU name and features.

Lookups go to the folder where this process would write (``$NUMBA_CACHE_DIR``,
else ``__pycache__`` beside the source if it is writable, else the user's
cache folder, as Numba does), for code compiled on this machine, then to the
package's ``segkit/runtime/compiled`` folder for code compiled at build time
for a *generic* CPU of the same architecture (:data:`PORTABLE_CPU`), which
runs on any machine of that architecture.  That second lookup serves
segkit's kernels only: the CPU Numba compiles everything else in the
process for is unchanged.

Loading an entry does not load Numba's typing and lowering registries (a
quarter of a second in a fresh process): only its runtime (NRT) is
initialized, which is all loaded machine code needs.  A kernel that has to
be compiled goes through Numba's compiler, which loads them itself.

Environment: ``SEGKIT_JIT_SHIPPED=0`` ignores the shipped code (a folder
path: look there instead); ``SEGKIT_JIT_WRITE=DIR`` makes ``DIR`` the only
folder read and written (the build step); ``SEGKIT_JIT_REPORT=1`` prints at
exit how many kernels were loaded and compiled.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba.core import caching, compiler, config
from numba.core.serialize import dumps

#: The CPU name shipped code is compiled for (``NUMBA_CPU_NAME`` at build
#: time): the baseline of the architecture, no optional features.
PORTABLE_CPU = "generic"

#: The folder of the code compiled at build time.
SHIPPED_DIR = Path(__file__).resolve().parent / "compiled"

#: What happened in this process (tests and benchmarks read it).
STATS: dict[str, Any] = {"loaded": 0, "loaded_portable": 0, "compiled": 0, "compile_seconds": 0.0,
                         "load_seconds": 0.0, "compiled_names": []}

_lock = threading.Lock()

#: Top-level imports (where a kernel's globals come from; imports inside
#: functions serve Python code): ``from .x.y import a, b`` / ``import a.b``.
_IMPORT = re.compile(rb"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w, \t]+))|^import[ \t]+([\w.]+)",
                     re.M)
#: What makes a file one whose contents compiled code depends on: a kernel,
#: a Numba extension, or Numba internals bound when Numba loads.
_MARKER = re.compile(rb"^[ \t]*@(?:kernel|intrinsic|overload|(?:jit\.)?on_load)\b", re.M)


# ------------------------------------------------------------------ stamps
def _package_sources(root: str) -> tuple[dict[str, bytes], set[str]]:
    """Dotted module name -> source bytes of every module of the package at
    ``root`` (one scan of the folder, no other file system calls), and the
    names that are packages (``__init__.py``)."""
    package = os.path.basename(root)
    found: dict[str, bytes] = {}
    packages: set[str] = set()
    todo = [(root, package)]
    while todo:
        folder, dotted = todo.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__" and not e.name.startswith("."):
                        todo.append((e.path, f"{dotted}.{e.name}"))
                elif e.name.endswith(".py"):
                    stem = e.name[:-3]
                    if stem == "__init__":
                        packages.add(dotted)
                    with open(e.path, "rb") as fh:
                        found[dotted if stem == "__init__" else f"{dotted}.{stem}"] = fh.read()
    return found, packages


def _imported_modules(module: str, is_package: bool, text: bytes, known: dict) -> set[str]:
    """The modules of ``known`` that ``module``'s top-level imports name."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    out: set[str] = set()
    for m in _IMPORT.finditer(text):
        if m.group(5) is not None:
            target = m.group(5).decode()
            names: list[str] = []
        else:
            dots, name = len(m.group(1)), m.group(2).decode()
            base = here[: len(here) - (dots - 1)] if dots else []
            target = ".".join([*base, name] if name else base)
            names = re.findall(r"\w+", (m.group(3) or m.group(4)).decode())
        for candidate in [target, *(f"{target}.{n}" for n in names)]:  # ``from . import x``: x may be a module
            if candidate in known:
                out.add(candidate)
    return out


@lru_cache(maxsize=None)
def source_digest(root: str) -> str:
    """Digest of the files of the package at ``root`` that compiled code can
    depend on: those declaring kernels or Numba extensions (``@kernel``,
    ``@intrinsic``, ``@overload``, ``@on_load``) and, transitively, the
    package files they import from at top level (constants and inlined
    helpers come from there).  Every kernel file of the package is in it,
    so the code cached for one kernel is invalidated when a kernel it
    calls changes, wherever that callee is declared.  One read of the
    package's sources; a few milliseconds."""
    sources, packages = _package_sources(root)
    todo = [m for m, text in sources.items() if _MARKER.search(text)]
    closure: set[str] = set()
    while todo:
        m = todo.pop()
        if m in closure:
            continue
        closure.add(m)
        todo.extend(_imported_modules(m, m in packages, sources[m], sources) - closure)
    h = hashlib.sha256()
    for m in sorted(closure):
        h.update(m.encode())
        h.update(b"\0")
        h.update(hashlib.sha256(sources[m]).digest())
    return h.hexdigest()


def _package_root(py_file: str, module: str) -> Path:
    """The folder of the top-level package of ``module`` (defined in ``py_file``)."""
    path = Path(py_file).resolve()
    depth = module.count(".") - 1 + (path.name == "__init__.py")
    return path.parents[depth]


#: The folder of the segkit package.
SEGKIT_ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _stamp(package_root: str) -> tuple:
    own = str(SEGKIT_ROOT)
    parts = [("segkit", source_digest(own))]
    if package_root != own:
        parts.append((Path(package_root).name, source_digest(package_root)))
    return ("segkit-kernels-1", tuple(parts))


# ----------------------------------------------------------------- folders
@lru_cache(maxsize=None)
def _writable(folder: str) -> bool:
    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def _local_folder(py_file: str) -> str | None:
    """The folder Numba would use for this source file."""
    forced = os.environ.get("SEGKIT_JIT_WRITE")  # the build step: write where the wheel takes it from
    if forced:
        return forced if _writable(forced) else None
    sub = caching._CacheLocator.get_suitable_cache_subpath(py_file)
    candidates = []
    if config.CACHE_DIR:
        candidates.append(os.path.join(config.CACHE_DIR, sub))
    else:
        candidates.append(os.path.join(os.path.dirname(py_file), "__pycache__"))
        from numba.misc.appdirs import AppDirs

        candidates.append(os.path.join(AppDirs(appname="numba", appauthor=False).user_cache_dir, sub))
    for c in candidates:
        if _writable(c):
            return c
    return None


def _shipped_dir() -> Path | None:
    """The folder of code compiled at build time: the package's, or
    ``$SEGKIT_JIT_SHIPPED`` (``0`` or ``off``: none)."""
    if os.environ.get("SEGKIT_JIT_WRITE"):
        return None
    env = os.environ.get("SEGKIT_JIT_SHIPPED")
    if env is None:
        return SHIPPED_DIR
    if env.strip().lower() in ("", "0", "off", "no", "false"):
        return None
    return Path(env)


# ------------------------------------------------------------------- cache
class KernelCache(caching._Cache):
    """Numba's cache interface for one segkit kernel (see the module doc);
    nothing is read or created until the kernel is first called."""

    def __init__(self, py_func: Any, on_compile: Any) -> None:
        self._py_func = py_func
        self._on_compile = on_compile
        self._name = repr(py_func)
        self._enabled = True
        self._files: tuple | None = None

    def _setup(self) -> tuple:
        if self._files is None:
            f = self._py_func
            py_file = os.path.abspath(f.__code__.co_filename)
            qual = f.__qualname__.replace("<", "").replace(">", "")
            base = "%s.%s-%d.py%d%d%s" % (f.__module__, qual, f.__code__.co_firstlineno, sys.version_info[0],
                                          sys.version_info[1], getattr(sys, "abiflags", ""))
            stamp = _stamp(str(_package_root(py_file, f.__module__)))
            folder = _local_folder(py_file)
            local = caching.IndexDataCacheFile(folder, base, stamp) if folder else None
            shipped = None
            where = _shipped_dir()
            if where is not None and (where / f"{base}.nbi").is_file():
                shipped = caching.IndexDataCacheFile(str(where), base, stamp)
            self._files = (folder, local, shipped)
        return self._files

    @property
    def cache_path(self) -> str:
        return self._setup()[0] or ""

    def enable(self) -> None:
        self._enabled = True

    def disable(self) -> None:
        self._enabled = False

    def flush(self) -> None:
        local = self._setup()[1]
        if local is not None:
            local.flush()

    def _key(self, sig: Any, magic: tuple) -> tuple:
        f = self._py_func
        closure = b""
        if f.__closure__ is not None:
            closure = dumps(tuple(c.cell_contents for c in f.__closure__))
        return (sig, magic, (hashlib.sha256(f.__code__.co_code).hexdigest(), hashlib.sha256(closure).hexdigest()))

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        if not self._enabled:
            return None
        t0 = time.perf_counter()
        _initialize_runtime(target_context)
        _, local, shipped = self._setup()
        magic = target_context.codegen().magic_tuple()
        tries = []
        if local is not None:
            tries.append((local, magic))
        if shipped is not None:
            tries.append((shipped, (magic[0], PORTABLE_CPU, "")))
        for files, m in tries:
            try:
                data = files.load(self._key(sig, m))
            except Exception:  # an unreadable entry is a miss: compile again
                data = None
            if data is not None:
                cres = compiler.CompileResult._rebuild(target_context, *data)
                with _lock:
                    STATS["loaded"] += 1
                    STATS["loaded_portable"] += files is shipped
                    STATS["load_seconds"] += time.perf_counter() - t0
                return cres
        # Numba compiles it now.
        with _lock:
            STATS["compiled"] += 1
            STATS["compiled_names"].append(f"{self._py_func.__module__}.{self._py_func.__qualname__}")
        self._on_compile()
        return None

    def save_overload(self, sig: Any, cres: Any) -> None:
        if not self._enabled or any(not x.can_cache for x in cres.lifted) or cres.library.has_dynamic_globals:
            return
        local = self._setup()[1]
        if local is None:
            return
        key, data = self._key(sig, cres.codegen.magic_tuple()), cres._reduce()
        try:
            local.save(key, data)
        except OSError:
            pass  # a read-only or full disk: compiled again next time
        except Exception:  # a damaged index (it cannot be read): start it afresh
            try:
                local.flush()
                local.save(key, data)
            except Exception:
                pass


_runtime_ready = False


def _initialize_runtime(target_context: Any) -> None:
    """What loaded machine code needs: Numba's runtime (NRT), not the
    typing and lowering registries that ``refresh()`` imports for the
    compiler (about 0.25 s)."""
    global _runtime_ready
    if _runtime_ready:
        return
    try:
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
    except Exception:  # another Numba: do what Numba's own cache does
        target_context.refresh()
    _runtime_ready = True


def _report() -> None:
    names = STATS["compiled_names"]
    print(f"segkit kernels: {STATS['loaded']} loaded ({STATS['loaded_portable']} compiled at build time), "
          f"{STATS['compiled']} compiled here in {STATS['compile_seconds']:.1f} s"
          + (f": {', '.join(names)}" if names else ""), file=sys.stderr)


if os.environ.get("SEGKIT_JIT_REPORT"):  # benchmarks and the build check: what this process compiled
    import atexit

    atexit.register(_report)


def attach(dispatcher: Any, on_compile: Any) -> None:
    """Give a dispatcher segkit's cache; ``on_compile()`` is called before
    Numba compiles one of its specializations."""
    dispatcher._cache = KernelCache(dispatcher.py_func, on_compile)


class _CompileClock:
    """Adds the time of each outermost compile (of anything, in any thread)
    to ``STATS["compile_seconds"]``."""

    def __init__(self) -> None:
        self._local = threading.local()

    def on_start(self, event: Any) -> None:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._local.t0 = time.perf_counter()
        self._local.depth = depth + 1

    def on_end(self, event: Any) -> None:
        self._local.depth -= 1
        if self._local.depth == 0:
            with _lock:
                STATS["compile_seconds"] += time.perf_counter() - self._local.t0


def install_listeners() -> None:
    """Time compiles (:data:`STATS`) through Numba's event API."""
    from numba.core import event

    clock = _CompileClock()

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            clock.on_start(ev)

        def on_end(self, ev: Any) -> None:
            clock.on_end(ev)

    event.register("numba:compile", Listener())


def install_typeof(stand_in: type, resolve: Any) -> None:
    """Let Numba type a ``stand_in`` object that a kernel's globals still
    hold (a reference made in a way :func:`segkit.runtime.jit.materialize`
    does not rebind) as ``resolve(it)``, the object it stands for."""
    from numba.core.typing.typeof import typeof_impl

    @typeof_impl.register(stand_in)
    def _typeof_stand_in(val: Any, c: Any) -> Any:
        return typeof_impl(resolve(val), c)
