"""Preset classes by name: segkit's own and those of plugins.

Model files name their preset (``WordPiece``, ``ChineseMaxMatch``, ...);
:func:`segkit.load` asks this registry for the class, and ``segkit.<Name>``
resolves plugin names through it.  The registry holds *targets*
(``"module:attribute"`` strings) and imports a target only when its class is
first asked for, so neither ``import segkit`` nor the loader imports any
preset it does not need.

It is filled from three places:

* segkit's built-in presets (:data:`BUILTIN`);
* the entry-point group ``segkit.plugins``: a package makes a preset
  available as ``segkit.<Name>`` by declaring, in its ``pyproject.toml``::

      [project.entry-points."segkit.plugins"]
      MySegmenter = "my_package.module:MySegmenter"

  (segkit's own Chinese segmenter is registered this way:
  ``ChineseMaxMatch = "segkit_cjk:ChineseMaxMatch"``);
* :func:`register`, at run time (a class or a target).
"""

from __future__ import annotations

import importlib
from typing import Any

GROUP = "segkit.plugins"

#: segkit's own presets.  ``ChineseMaxMatch`` is also an entry point of the
#: distribution; naming it here covers a source checkout that was never
#: installed (so has no entry points).  :func:`load` resolves these names
#: without reading the entry points (an entry point of another distribution
#: does not replace them; :func:`register` does).
BUILTIN = {
    "WordPiece": "segkit.presets.wordpiece:WordPiece",
    "BPE": "segkit.presets.bpe:BPE",
    "ChineseMaxMatch": "segkit_cjk:ChineseMaxMatch",
    "MaxMatch": "segkit.presets.maxmatch:MaxMatch",
    "RWKVWorld": "segkit.presets.maxmatch:RWKVWorld",
    "SentencePieceBPE": "segkit.presets.sentencepiece:SentencePieceBPE",
    "Tokenizer": "segkit.presets.tokenizer:Tokenizer",  # (the loader builds one for a staged tokenizer.json)
}

_registered: dict[str, Any] = {}
_loaded: dict[str, Any] = {}


def register(name: str, target: Any) -> None:
    """Make ``target`` (a class, or a ``"module:attribute"`` string imported
    on first use) available under ``name`` for :func:`load` and
    :func:`segkit.load`.  A later registration of the same name wins."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a preset name must be an identifier, found {name!r}")
    if isinstance(target, str) and ":" not in target:
        raise ValueError(f"a preset target must be 'module:attribute', found {target!r}")
    _registered[name] = target
    _loaded.pop(name, None)


def available() -> dict[str, str]:
    """Registered names -> ``"module:attribute"`` targets (built-ins,
    entry points, then run-time registrations)."""
    from importlib import metadata  # here, not at import: about 25 ms

    found = dict(BUILTIN)
    for ep in metadata.entry_points(group=GROUP):
        found[ep.name] = ep.value
    for name, target in _registered.items():
        found[name] = target if isinstance(target, str) else f"{target.__module__}:{target.__qualname__}"
    return found


def _import_target(name: str, target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
        for part in filter(None, attr.split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ImportError(f"segkit plugin {name!r} is registered as {target!r} but could not be loaded: {e}") from e
    return obj


def load(name: str) -> Any:
    """The object registered under ``name`` (imported on first use).

    Raises
    ------
    AttributeError
        When no preset of that name is registered (the message lists those
        that are).
    ImportError
        When the registered target cannot be imported.
    """
    if name in _loaded:
        return _loaded[name]
    direct = _registered.get(name)
    if direct is not None and not isinstance(direct, str):
        _loaded[name] = direct
        return direct
    if direct is None and name in BUILTIN:
        # segkit's own presets: no scan of every installed distribution's
        # entry points (tens of milliseconds in a large environment).
        obj = _import_target(name, BUILTIN[name])
        _loaded[name] = obj
        return obj
    targets = available()
    if name not in targets:
        known = ", ".join(sorted(targets)) or "none"
        raise AttributeError(f"module 'segkit' has no attribute {name!r} (registered plugins: {known})")
    obj = _import_target(name, targets[name])
    _loaded[name] = obj
    return obj


def preset_class(name: str) -> type | None:
    """The preset class a model file names, or None when none is available."""
    try:
        cls = load(name)
    except (AttributeError, ImportError):
        return None
    return cls if isinstance(cls, type) else None


def refresh() -> None:
    """Forget loaded plugins, so newly installed ones are found."""
    _loaded.clear()
