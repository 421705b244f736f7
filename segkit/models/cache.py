"""An on-disk cache of built models, so that presets start without a build.

Built models are saved (see :mod:`segkit.models.files`) under a name derived from
everything that determines them: the inputs' bytes, the configuration, the
model format version and segkit's version.  The folder is
``$SEGKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/segkit``, else
``~/.cache/segkit``; ``SEGKIT_CACHE_DIR=off`` disables caching.  It holds at
most :data:`MAX_CACHED_MODELS` models (least recently used ones go).  A folder
that cannot be written simply means no caching; a damaged cache file is
rebuilt.

Other local users must not be able to feed us models: the folder is created
0700, and a folder or entry owned by someone else or writable by others is
not used (one warning; the model is built without caching).  Entries are
written to a fresh temporary file (``O_EXCL|O_NOFOLLOW``) and renamed into
place, and every entry is fully validated by :func:`segkit.load` before use.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import time
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..runtime import private_files
from .files import FORMAT_VERSION, ModelFileError


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is disabled."""
    env = os.environ.get("SEGKIT_CACHE_DIR")
    if env is not None:
        if env.strip().lower() in ("", "0", "off", "false", "no"):
            return None
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "segkit"


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """Digest of segkit's own code and data tables: a cached model built by
    other code (a fix, new tables) is never reused."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and "__pycache__" not in p.parts)
    cjk = root.parent / "segkit_cjk"
    if cjk.is_dir():
        files += sorted(cjk.rglob("*.py"))
    for p in files:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


#: Vocabulary and dictionary files at least this large are built once and
#: then kept in the cache; smaller ones build in milliseconds.
CACHE_MIN_BYTES = 1 << 16


def cacheable_file(source: object) -> bytes | None:
    """The bytes of ``source`` when it names a file worth caching (at least
    :data:`CACHE_MIN_BYTES`) and caching is on; None otherwise (the caller's
    usual loading then reports any problem with the file)."""
    if not isinstance(source, (str, os.PathLike)) or cache_dir() is None:
        return None
    try:
        path = Path(source)
        if not path.is_file() or path.stat().st_size < CACHE_MIN_BYTES:
            return None
        return path.read_bytes()
    except (OSError, ValueError):
        return None


def cache_key(kind: str, config: dict, *inputs: bytes) -> str:
    from ..version import __version__

    h = hashlib.sha256()
    h.update(json.dumps([kind, FORMAT_VERSION, __version__, _code_digest(), config], sort_keys=True).encode())
    for data in inputs:
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return f"{kind}-{h.hexdigest()[:24]}.segkit"


#: The cache keeps at most this many models; storing one more removes the
#: least recently used.
MAX_CACHED_MODELS = 64

#: Folders and entries already warned about (one warning per process each).
_WARNED: set[str] = set()


def _current_uid() -> int | None:
    """The effective user id, or None where the platform has none (then
    ownership is not checked).  A function of its own so tests can pretend
    to be another user."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else geteuid()


def _warn_once(key: str, message: str) -> None:
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, UserWarning, stacklevel=4)


def _unsafe(st: os.stat_result, what: str, path: Path) -> str | None:
    """Why ``path`` (stat ``st``) must not be trusted, or None: the rule the
    kernel cache follows too (:mod:`segkit.runtime.private_files`)."""
    return private_files.unsafe_reason(st, what, path, _current_uid())


def _private_folder(folder: Path) -> Path | None:
    """``folder``, created 0700 if missing, when only the current user can
    write to it; otherwise None with one warning (the caller then builds
    without caching: another user could plant or swap models there)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        lst = os.lstat(folder)
        st = os.stat(folder) if stat.S_ISLNK(lst.st_mode) else lst
    except OSError:
        return None  # cannot be created or read: no caching, as before
    problem = None
    if stat.S_ISLNK(lst.st_mode):
        uid = _current_uid()
        if uid is not None and lst.st_uid != uid:
            problem = f"cache folder {folder} is a symbolic link owned by user id {lst.st_uid}"
    if problem is None and not stat.S_ISDIR(st.st_mode):
        problem = f"cache folder {folder} is not a folder"
    if problem is None:
        problem = _unsafe(st, "cache folder", folder)
    if problem is not None:
        _warn_once(str(folder), f"segkit: not using the model cache: {problem}")
        return None
    return folder


def cached(name: str, build: Callable[[], Any], load: Callable[[Path], Any]) -> Any:
    """Load ``name`` from the cache, or build it and try to store it.

    The folder must belong to the current user and be writable by nobody
    else (see :func:`_private_folder`); an entry must be a regular file
    (not a link) with the same owner and no write permission for others, and
    must load completely through ``load`` (which validates the whole file).
    An entry that fails to load is rebuilt and replaced atomically, with a
    warning; an untrusted entry is left alone and the model is built without
    caching.
    """
    folder = cache_dir()
    if folder is None:
        return build()
    folder = _private_folder(folder)
    if folder is None:
        return build()
    path = folder / name
    found = _entry(path, load)
    if found is _UNTRUSTED:
        return build()
    if found is not _MISSING:
        return found
    obj = build()
    _store(obj, folder, path)
    return obj


def peek(name: str, load: Callable[[Path], Any]) -> Any | None:
    """The entry ``name`` as :func:`cached` would load it, or None where
    :func:`cached` would build (no entry, an untrusted or damaged one, no
    usable cache): for a caller that can skip work before it knows what to
    build (parsing a large file whose model is cached)."""
    folder = cache_dir()
    if folder is None:
        return None
    folder = _private_folder(folder)
    if folder is None:
        return None
    found = _entry(folder / name, load)
    return None if found is _MISSING or found is _UNTRUSTED else found


_MISSING = object()
_UNTRUSTED = object()


def _entry(path: Path, load: Callable[[Path], Any]) -> Any:
    """The loaded entry at ``path``; ``_MISSING`` when there is none or it is
    damaged (with a warning: it is then rebuilt), ``_UNTRUSTED`` when it
    must not be read (with a warning: nothing is stored there)."""
    try:
        st = os.lstat(path)
    except OSError:
        return _MISSING
    if not stat.S_ISREG(st.st_mode):
        problem = f"cache entry {path} is not a regular file"
    else:
        problem = _unsafe(st, "cache entry", path)
    if problem is not None:
        _warn_once(str(path), f"segkit: not using the model cache: {problem}")
        return _UNTRUSTED
    try:
        obj = load(path)
    except (ModelFileError, ValueError, OSError) as e:
        _warn_once(str(path), f"segkit: rebuilding a damaged model cache entry ({e})")
        return _MISSING
    try:
        os.utime(path)  # recently used: kept by _prune
    except OSError:
        pass
    return obj


def _store(obj: Any, folder: Path, path: Path) -> None:
    """Save ``obj`` to a fresh private temporary file in ``folder`` (created
    with O_EXCL and O_NOFOLLOW by :func:`tempfile.mkstemp`: a planted name or
    link is never written through), make it 0600, then rename it over
    ``path`` atomically."""
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError:
        return
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        obj.save(tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        _prune(folder, keep=path)
    except OSError:
        pass
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # renamed into place (the usual case)


#: Temporary files older than this (seconds) were left by a process that
#: died while storing a model; _prune removes them.
STALE_TMP_SECONDS = 3600


def _prune(folder: Path, keep: Path) -> None:
    """Remove the least recently used models beyond :data:`MAX_CACHED_MODELS`,
    and temporary files left by processes that died while storing one."""
    now = time.time()
    for p in folder.glob(".*.tmp"):
        try:
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TMP_SECONDS:
                p.unlink()
        except OSError:
            pass
    entries = []
    for p in folder.glob("*.segkit"):
        try:
            st = os.lstat(p)
        except OSError:
            continue  # removed meanwhile by another process
        if stat.S_ISREG(st.st_mode):
            entries.append((st.st_mtime, p))
    entries.sort(reverse=True)
    for _, p in entries[MAX_CACHED_MODELS:]:
        if p != keep:
            try:
                p.unlink()
            except OSError:
                pass
