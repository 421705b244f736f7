"""Saving and loading presets: ``preset.save(path)`` and :func:`load`.

A preset (a subclass of :class:`segkit.presets.base.Preset`) provides
``_model_state(self)`` returning ``(config, arrays, blobs)`` and a
classmethod ``_from_model(config, arrays, blobs, source)``; :func:`load`
finds the class by the preset name stored in the file through
:mod:`segkit.presets.registry`, which imports only that preset.
"""

from __future__ import annotations

import os
from typing import Any


from ..runtime import interrupts
from .files import ModelFileError, read_model, write_model


def save(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` (a preset) to a model file."""
    config, arrays, blobs = obj._model_state()
    write_model(path, getattr(type(obj), "preset_name", type(obj).__name__), config, arrays, blobs)


def _preset_class(name: str):
    from ..presets.registry import preset_class

    return preset_class(name)


@interrupts.interruptible()
def load(path: str | os.PathLike, *, verify: bool = True) -> Any:
    """Load a preset saved with ``.save(path)``.

    The file is read into memory once and nothing is rebuilt: the
    automaton's arrays are used where they lie, after a validation of every
    value the compiled kernels trust (see ``docs/saving.rst``), so that any
    byte string either loads as a model that behaves like a valid one or
    raises :class:`ModelFileError`.  Loading never executes code from the
    file, and changing the file afterwards does not affect the loaded model.

    Parameters
    ----------
    path
        A file written by ``WordPiece.save``, ``ChineseMaxMatch.save`` or a
        plugin's ``save``.
    verify
        Check the data checksum (reads the file once; default True).

    Raises
    ------
    ModelFileError
        The file is not a segkit model (or not a regular file), is truncated,
        corrupted or malformed, holds values no model could hold, was
        written by a newer segkit, or names a preset that is not installed.
    FileNotFoundError
        There is no file at ``path``.

    Examples
    --------
    >>> import os, tempfile, segkit
    >>> wp = segkit.WordPiece(["[UNK]", "un", "##aff", "##able"])
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.segkit")
    >>> wp.save(path)
    >>> segkit.load(path).tokenize("unaffable")
    ['un', '##aff', '##able']
    """
    loaded = read_model(path, verify=verify)
    cls = _preset_class(loaded.preset)
    if cls is None or not hasattr(cls, "_from_model"):
        raise ModelFileError(f"{loaded.path}: preset {loaded.preset!r} is not available (is its plugin installed?)")
    try:
        return cls._from_model(loaded.config, loaded.arrays, loaded.blobs, str(loaded.path))
    except ModelFileError:
        raise
    except _DATA_ERRORS as e:
        # Whatever a preset trips over in a crafted file (a missing key, a
        # value of the wrong type, a failed check) is the file's fault.
        raise ModelFileError(f"{loaded.path}: invalid {loaded.preset} model: {type(e).__name__}: {e}") from None


_DATA_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError)
