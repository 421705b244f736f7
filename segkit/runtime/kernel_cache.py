"""Where compiled kernels are found: segkit's own cache of Numba's compiled
code, keyed so that it survives installation, plus machine code shipped in
the package.

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

Where entries are looked up, in this order:

1. ``host/`` of the user's kernel cache (:func:`user_root`:
   ``$NUMBA_CACHE_DIR/segkit``, else ``$XDG_CACHE_HOME/segkit/kernels``, else
   ``~/.cache/segkit/kernels``; never beside the package's sources): code
   compiled on this machine, for its CPU, and where such code is written;
2. code compiled at build time for a *generic* CPU of the same architecture
   (:data:`PORTABLE_CPU`), which runs on any machine of it: the package's
   ``segkit/runtime/compiled`` folder; the installed distribution's one when
   this process imports another copy of the same sources (a checkout, as
   pytest does from the clone root: :func:`installed_compiled_dir`); and
   ``builds/<key>/`` of the user's kernel cache, where every build of the
   package keeps its output so that the next build of the same sources
   copies it instead of compiling (:mod:`segkit.cli.precompile`).  That
   lookup serves segkit's kernels only: the CPU Numba compiles everything
   else in the process for is unchanged.

What is trusted (issue 32): an entry is segkit's own format
(:func:`entry_bytes`): a header line with the key digest and the SHA-256 and
size of the payload, then the payload, Numba's pickle of the compiled result
(``CompileResult._reduce()``), which holds the machine code.  Numba's index
pickles (``.nbi``) are never read.  A payload is unpickled only after

* the file passed the rules of :mod:`segkit.runtime.private_files`: a
  regular file (no link followed) owned by the current user and writable by
  nobody else, checked on the opened descriptor, in a folder owned by the
  user, writable by nobody else, under folders that only the user or root
  can change; the package's own folders (the first two of step 2) are
  trusted as the package's code is, and only checksummed;
* its header names the key looked up and the payload's SHA-256 and size
  match it, so a damaged entry (a flipped bit in the machine code or the
  bitcode) is never run: it is discarded (removed from the user's cache)
  and compiled again, with one line on standard error.

So a local user who can write to a folder segkit reads cannot run code in
another user's process: a file they own or could have changed is refused,
with one line on standard error.  Folders are created 0700 and entries
0600 whatever the umask, written to a temporary file and renamed into place.

Loading an entry does not load Numba's typing and lowering registries (a
quarter of a second in a fresh process): only its runtime (NRT) is
initialized, which is all loaded machine code needs.  A kernel that has to
be compiled goes through Numba's compiler, which loads them itself.

Environment: ``SEGKIT_JIT_SHIPPED=0`` ignores all code compiled at build
time (a folder path: look there instead, under the user cache's rules);
``SEGKIT_JIT_WRITE=DIR`` makes ``DIR`` the only folder read and written
(the build step; its entries are written 0644 to go into the wheel);
``SEGKIT_JIT_REPORT=1`` prints at exit how many kernels were loaded and
compiled.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import pickle
import re
import sys
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba.core import caching, compiler, config
from numba.core.serialize import dumps

from . import private_files

#: The CPU name shipped code is compiled for (``NUMBA_CPU_NAME`` at build
#: time): the baseline of the architecture, no optional features.
PORTABLE_CPU = "generic"

#: The folder of the code compiled at build time.
SHIPPED_DIR = Path(__file__).resolve().parent / "compiled"

#: What happened in this process (tests and benchmarks read it).
STATS: dict[str, Any] = {"loaded": 0, "loaded_portable": 0, "compiled": 0, "compile_seconds": 0.0,
                         "load_seconds": 0.0, "compiled_names": [], "damaged": 0}

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
    """The folder of the top-level package of ``module`` (defined in
    ``py_file``); a top-level module outside any package is its own file
    (its folder may be a home folder: never scanned)."""
    path = Path(py_file).resolve()
    depth = module.count(".") - 1 + (path.name == "__init__.py")
    return path if depth < 0 else path.parents[depth]


#: The folder of the segkit package.
SEGKIT_ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _stamp(package_root: str) -> tuple:
    own = str(SEGKIT_ROOT)
    parts = [("segkit", source_digest(own))]
    if package_root != own:
        root = Path(package_root)
        if root.is_file():  # a module of its own: its contents
            parts.append((root.name, hashlib.sha256(root.read_bytes()).hexdigest()))
        else:
            parts.append((root.name, source_digest(package_root)))
    return ("segkit-kernels-1", tuple(parts))


# ----------------------------------------------------------------- folders
#: The suffix of segkit's cache entries (never Numba's ``.nbi``/``.nbc``
#: pickles, which segkit neither reads nor writes).
SUFFIX = ".nbk"
#: Entries of this many other versions of the sources are kept per kernel
#: (about 13 MB per version of segkit) besides the current one's.
KEPT_OTHER_SOURCES = 4
#: The first line of every entry.
ENTRY_MAGIC = b"segkit-kernel-entry 1\n"


def user_root() -> Path | None:
    """The user's folder of segkit's kernel cache: ``$NUMBA_CACHE_DIR/segkit``
    when Numba's cache folder is set, else ``$XDG_CACHE_HOME/segkit/kernels``,
    else ``~/.cache/segkit/kernels`` (beside the model cache, never beside the
    package's sources).  ``host/`` holds code compiled for this machine,
    ``builds/<key>/`` the generic code of earlier builds of the package
    (:mod:`segkit.cli.precompile`)."""
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR) / "segkit"
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg) if xdg else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home folder
        return None
    return base / "segkit" / "kernels"


def _build_folder() -> Path | None:
    forced = os.environ.get("SEGKIT_JIT_WRITE")  # the build step: the only folder read and written
    return Path(forced) if forced else None


_folder_state: dict[str, str | None] = {}
_said: set[str] = set()


def _say(key: str, message: str) -> None:
    """One line on standard error, once per process for ``key``."""
    with _lock:
        if key in _said:
            return
        _said.add(key)
    try:
        print(f"segkit: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _usable(folder: Path, create: bool) -> bool:
    """Whether entries of ``folder`` may be read (and, with ``create``,
    written, the folder made 0700 if missing): see
    :mod:`segkit.runtime.private_files`.  Checked once per process; an
    untrusted folder is said once and not used."""
    key = str(folder)
    with _lock:
        state = _folder_state.get(key, "unknown")
    if state is None or (state != "unknown" and not (create and state == "missing")):
        return state is None
    if not os.path.isdir(folder):
        if not create:
            problem: str | None = "missing"
        elif private_files.make_private_folder(folder, "kernel cache folder") is not None and not os.path.isdir(folder):
            problem = "cannot be created"  # a read-only home, say: no caching, nothing to say
        else:
            problem = private_files.folder_problem(folder, "kernel cache folder")
    else:
        problem = private_files.folder_problem(folder, "kernel cache folder")
    if problem not in (None, "missing", "cannot be created"):
        _say(key, f"not using the kernel cache: {problem}")
    with _lock:
        _folder_state[key] = problem
    return problem is None


@lru_cache(maxsize=None)
def _host_folder() -> Path | None:
    """Where this process reads and writes code compiled for this machine."""
    forced = _build_folder()
    if forced is not None:
        try:
            forced.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return forced  # the build's own output: trusted as the build's sources are
    root = user_root()
    return None if root is None else root / "host"


def installed_compiled_dir() -> Path | None:
    """The ``segkit/runtime/compiled`` folder of an installed distribution of
    segkit, when this process imports another copy of the sources (a
    checkout: ``python -m pytest`` from the clone root).  Its entries serve
    here wherever the sources' digests match.  Every distribution on the
    path is looked at: a build from the clone leaves ``segkit.egg-info``
    there, which names the checkout itself."""
    try:
        from importlib import metadata

        dists = list(metadata.distributions(name="segkit"))
    except Exception:  # an odd path entry
        return None
    for dist in dists:
        try:
            found = Path(dist.locate_file("segkit/runtime/compiled"))
            if found.is_dir() and found.resolve() != SHIPPED_DIR:
                return found
        except (OSError, TypeError, ValueError):
            continue
    return None


def build_folders() -> list[Path]:
    """The generic code of earlier builds kept in the user's cache (newest
    first)."""
    root = user_root()
    if root is None:
        return []
    builds = root / "builds"
    try:
        found = [p for p in builds.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return []
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return found


@lru_cache(maxsize=None)
def _generic_folders() -> tuple[tuple[Path, bool], ...]:
    """Folders of code compiled for a generic CPU, in the order looked up,
    each with whether it is trusted as the package is (only checksummed)."""
    if _build_folder() is not None:
        return ()
    env = os.environ.get("SEGKIT_JIT_SHIPPED")
    if env is not None:
        if env.strip().lower() in ("", "0", "off", "no", "false"):
            return ()
        return ((Path(env), False),)  # a folder named by the user: held to the user cache's rules
    out: list[tuple[Path, bool]] = [(SHIPPED_DIR, True)]
    installed = installed_compiled_dir()
    if installed is not None:
        out.append((installed, True))  # in this interpreter's site-packages: trusted as the interpreter
    out.extend((p, False) for p in build_folders())
    return tuple(out)


# ----------------------------------------------------------------- entries
class DamagedEntry(ValueError):
    """A cache entry whose contents are not what its header says."""


def entry_bytes(key: str, payload: bytes) -> bytes:
    """An entry: :data:`ENTRY_MAGIC`, a JSON header line (the key digest, the
    payload's size and SHA-256), then the payload."""
    header = json.dumps({"key": key, "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()},
                        sort_keys=True).encode()
    return ENTRY_MAGIC + header + b"\n" + payload


def parse_entry(data: bytes, key: str) -> bytes:
    """The payload of the entry ``data`` for ``key``, checked against its
    header (:class:`DamagedEntry` if anything differs).  Nothing in it is
    unpickled here."""
    if not data.startswith(ENTRY_MAGIC):
        raise DamagedEntry("it does not start with segkit's entry header")
    end = data.find(b"\n", len(ENTRY_MAGIC), len(ENTRY_MAGIC) + 1024)
    if end < 0:
        raise DamagedEntry("its header line has no end")
    try:
        header = json.loads(data[len(ENTRY_MAGIC):end].decode("ascii"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DamagedEntry(f"its header is not JSON ({e})") from None
    if not isinstance(header, dict) or set(header) != {"key", "size", "sha256"}:
        raise DamagedEntry("its header does not hold exactly key, size and sha256")
    if header["key"] != key:
        raise DamagedEntry("it was stored for another key")
    payload = data[end + 1:]
    if type(header["size"]) is not int or header["size"] != len(payload):
        raise DamagedEntry(f"it holds {len(payload)} bytes after the header, not {header['size']!r}")
    if not isinstance(header["sha256"], str) or hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise DamagedEntry("its checksum (SHA-256) does not match its contents")
    return payload


def entry_key(data: bytes) -> str:
    """The key digest an entry was stored for, once the entry is checked to
    be whole (:class:`DamagedEntry` if not): to copy entries between
    folders without knowing their kernels."""
    end = data.find(b"\n", len(ENTRY_MAGIC), len(ENTRY_MAGIC) + 1024)
    try:
        key = json.loads(data[len(ENTRY_MAGIC):end].decode("ascii"))["key"] if end > 0 else None
    except (UnicodeDecodeError, ValueError, TypeError, KeyError):
        key = None
    if not isinstance(key, str):
        raise DamagedEntry("its header names no key")
    parse_entry(data, key)
    return key


def _type_name(t: Any) -> str:
    return f"{type(t).__module__}.{type(t).__qualname__}:{t}"


# ------------------------------------------------------------------- cache
class KernelCache(caching._Cache):
    """Numba's cache interface for one segkit kernel (see the module doc);
    nothing is read or created until the kernel is first called."""

    def __init__(self, py_func: Any, on_compile: Any) -> None:
        self._py_func = py_func
        self._on_compile = on_compile
        self._name = repr(py_func)
        self._enabled = True
        self._base: tuple | None = None

    def _setup(self) -> tuple:
        if self._base is None:
            f = self._py_func
            py_file = os.path.abspath(f.__code__.co_filename)
            qual = f.__qualname__.replace("<", "").replace(">", "")
            base = "%s.%s-%d.py%d%d%s" % (f.__module__, qual, f.__code__.co_firstlineno, sys.version_info[0],
                                          sys.version_info[1], getattr(sys, "abiflags", ""))
            stamp = _stamp(str(_package_root(py_file, f.__module__)))
            closure = b""
            if f.__closure__ is not None:
                closure = dumps(tuple(c.cell_contents for c in f.__closure__))
            code = [hashlib.sha256(f.__code__.co_code).hexdigest(), hashlib.sha256(closure).hexdigest()]
            stamp_tag = hashlib.sha256(json.dumps([stamp, code]).encode()).hexdigest()[:12]
            self._base = (base, stamp, code, stamp_tag)
        return self._base

    @property
    def cache_path(self) -> str:
        folder = _host_folder()
        return str(folder) if folder is not None else ""

    def enable(self) -> None:
        self._enabled = True

    def disable(self) -> None:
        self._enabled = False

    def flush(self) -> None:
        pass  # entries are per signature and replaced whole

    def _key(self, sig: Any, magic: tuple) -> tuple[str, str]:
        """The key digest of an entry and its file name."""
        import numba

        base, stamp, code, stamp_tag = self._setup()
        described = json.dumps([stamp, code, [_type_name(t) for t in sig], list(magic), numba.__version__])
        key = hashlib.sha256(described.encode()).hexdigest()
        return key, f"{base}.{stamp_tag}-{key[:24]}{SUFFIX}"

    def _read(self, sig: Any, folder: Path, trusted: bool, magic: tuple) -> bytes | None:
        """The checked payload of this entry in ``folder``, or None (a miss,
        an untrusted or a damaged entry: the last two said once)."""
        key, name = self._key(sig, magic)
        path = folder / name
        try:
            data = private_files.read_private(path, "kernel cache entry", trusted=trusted)
        except FileNotFoundError:
            return None
        except private_files.UntrustedFile as e:
            _say(str(path), f"not using a kernel cache entry: {e}")
            return None
        except OSError:
            return None
        try:
            return parse_entry(data, key)
        except DamagedEntry as e:
            _say(str(path), f"discarding the damaged kernel cache entry {path}: {e}; compiling it again")
            if not trusted:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            with _lock:
                STATS["damaged"] += 1
            return None

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        if not self._enabled:
            return None
        t0 = time.perf_counter()
        _initialize_runtime(target_context)
        magic = target_context.codegen().magic_tuple()
        tries: list[tuple[Path, bool, tuple]] = []
        host = _host_folder()
        if host is not None:
            tries.append((host, _build_folder() is not None, magic))
        generic = (magic[0], PORTABLE_CPU, "")
        for folder, trusted in _generic_folders():
            tries.append((folder, trusted, generic))
        for folder, trusted, m in tries:
            if not trusted and not _usable(folder, create=False):
                continue
            payload = self._read(sig, folder, trusted, m)
            if payload is None:
                continue
            try:
                # Only bytes whose SHA-256 matched the header of an entry
                # that passed the checks above are unpickled.
                cres = compiler.CompileResult._rebuild(target_context, *pickle.loads(payload))
            except Exception:  # another llvmlite, say: compile again
                continue
            with _lock:
                STATS["loaded"] += 1
                STATS["loaded_portable"] += m is generic
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
        folder = _host_folder()
        if folder is None:
            return
        building = _build_folder() is not None
        if not building and not _usable(folder, create=True):
            return
        key, name = self._key(sig, cres.codegen.magic_tuple())
        try:
            payload = dumps(cres._reduce())
            # The build's files go into the wheel: readable by all who use it.
            private_files.write_private(folder, name, entry_bytes(key, payload), mode=0o644 if building else 0o600)
        except OSError:
            return  # a read-only or full disk: compiled again next time
        if not building:
            self._prune(folder, name)

    def _prune(self, folder: Path, keep: str) -> None:
        """Remove this kernel's entries of sources other than the current one
        and the :data:`KEPT_OTHER_SOURCES` most recent others (checkouts
        switched back and forth, or several worktrees, keep theirs)."""
        base, _, _, stamp_tag = self._setup()
        by_tag: dict[str, list[tuple[float, Path]]] = {}
        try:
            for p in folder.glob(f"{glob.escape(base)}.*{SUFFIX}"):
                tag = p.name[len(base) + 1:].partition("-")[0]
                by_tag.setdefault(tag, []).append((p.stat().st_mtime, p))
        except OSError:
            return
        others = sorted((max(m for m, _ in v), t) for t, v in by_tag.items() if t != stamp_tag)
        for _, tag in others[:-KEPT_OTHER_SOURCES]:
            for _, p in by_tag[tag]:
                try:
                    p.unlink()
                except OSError:
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
