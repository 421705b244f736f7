"""Segmenter plugins: classes registered in the entry-point group ``segkit.plugins``.

A package makes a segmenter available as ``segkit.<Name>`` by declaring, in
its ``pyproject.toml``::

    [project.entry-points."segkit.plugins"]
    MySegmenter = "my_package.module:MySegmenter"

``segkit.MySegmenter`` then imports ``my_package.module`` on first access
(nothing is imported before).  segkit's own Chinese segmenter is registered
this way (``ChineseMaxMatch = "segkit_cjk:ChineseMaxMatch"``).
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

GROUP = "segkit.plugins"

# segkit_cjk ships in the same distribution; this covers running from a
# source checkout that was never installed (so has no entry points).
_BUILTIN = {"ChineseMaxMatch": "segkit_cjk:ChineseMaxMatch"}

_loaded: dict[str, Any] = {}


def available() -> dict[str, str]:
    """Registered plugin names -> ``"module:attribute"`` targets."""
    found = dict(_BUILTIN)
    for ep in metadata.entry_points(group=GROUP):
        found[ep.name] = ep.value
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
        When no plugin of that name is registered (the message lists those that are).
    """
    if name in _loaded:
        return _loaded[name]
    targets = available()
    if name not in targets:
        known = ", ".join(sorted(targets)) or "none"
        raise AttributeError(f"module 'segkit' has no attribute {name!r} (registered plugins: {known})")
    obj = _import_target(name, targets[name])
    _loaded[name] = obj
    return obj


def refresh() -> None:
    """Forget loaded plugins, so newly installed ones are found."""
    _loaded.clear()
