"""An on-disk cache of built models, so bundled presets start without a build.

Built models are saved (see :mod:`segkit.storage`) under a name derived from
everything that determines them: the inputs' bytes, the configuration, the
model format version and segkit's version.  The folder is
``$SEGKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/segkit``, else
``~/.cache/segkit``; ``SEGKIT_CACHE_DIR=off`` disables caching.  A folder
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


def cache_key(kind: str, config: dict, *inputs: bytes) -> str:
    from . import __version__

    h = hashlib.sha256()
    h.update(json.dumps([kind, FORMAT_VERSION, __version__, _code_digest(), config], sort_keys=True).encode())
    for data in inputs:
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return f"{kind}-{h.hexdigest()[:24]}.segkit"


def cached(name: str, build: Callable[[], Any], load: Callable[[Path], Any]) -> Any:
    """Load ``name`` from the cache, or build it and try to store it."""
    folder = cache_dir()
    if folder is None:
        return build()
    path = folder / name
    if path.is_file():
        try:
            return load(path)
        except (ModelFileError, ValueError, OSError):
            pass  # damaged or stale: rebuild below
    obj = build()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        obj.save(path)
    except OSError:
        pass
    return obj
