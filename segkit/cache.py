"""An on-disk cache of built models, so that presets start without a build.

Built models are saved (see :mod:`segkit.storage`) under a name derived from
everything that determines them: the inputs' bytes, the configuration, the
model format version and segkit's version.  The folder is
``$SEGKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/segkit``, else
``~/.cache/segkit``; ``SEGKIT_CACHE_DIR=off`` disables caching.  It holds at
most :data:`MAX_CACHED_MODELS` models (least recently used ones go).  A folder
that cannot be written simply means no caching; a damaged cache file is
rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from .storage import FORMAT_VERSION, ModelFileError


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
    from . import __version__

    h = hashlib.sha256()
    h.update(json.dumps([kind, FORMAT_VERSION, __version__, _code_digest(), config], sort_keys=True).encode())
    for data in inputs:
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return f"{kind}-{h.hexdigest()[:24]}.segkit"


#: The cache keeps at most this many models; storing one more removes the
#: least recently used.
MAX_CACHED_MODELS = 32


def cached(name: str, build: Callable[[], Any], load: Callable[[Path], Any]) -> Any:
    """Load ``name`` from the cache, or build it and try to store it."""
    folder = cache_dir()
    if folder is None:
        return build()
    path = folder / name
    if path.is_file():
        try:
            obj = load(path)
        except (ModelFileError, ValueError, OSError):
            pass  # damaged or stale: rebuild below
        else:
            try:
                os.utime(path)  # recently used: kept by _prune
            except OSError:
                pass
            return obj
    obj = build()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        obj.save(path)
        _prune(folder, keep=path)
    except OSError:
        pass
    return obj


def _prune(folder: Path, keep: Path) -> None:
    """Remove the least recently used models beyond :data:`MAX_CACHED_MODELS`."""
    entries = []
    for p in folder.glob("*.segkit"):
        try:
            entries.append((p.stat().st_mtime, p))
        except OSError:
            pass  # removed meanwhile by another process
    entries.sort(reverse=True)
    for _, p in entries[MAX_CACHED_MODELS:]:
        if p != keep:
            try:
                p.unlink()
            except OSError:
                pass
