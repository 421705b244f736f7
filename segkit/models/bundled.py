"""Locating the bundled vocabularies (installed or in a source checkout)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

#: Bundled WordPiece vocabularies: name -> file in ``vocabularies/``.
BUNDLED_VOCABULARIES = {
    "bert-base-uncased": "bert-base-uncased.txt",
    "bert-base-multilingual-cased": "bert-base-multilingual-cased.txt",
    "bert-base-chinese": "bert-base-chinese.txt",
}


#: Whether each bundled BERT model lowercases (and so strips accents).
#: bert-base-chinese has no uppercase Latin tokens: it is effectively uncased.
BUNDLED_LOWERCASE = {
    "bert-base-uncased": True,
    "bert-base-multilingual-cased": False,
    "bert-base-chinese": True,
}


def written_as_a_path(name: str) -> bool:
    """Whether ``name`` is written as a path, not a bundled model's name: it
    holds a folder separator or starts with ``.`` or ``~``.  A bundled name
    wins over a file of that name in the current folder otherwise."""
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    return any(s in name for s in seps) or name.startswith((".", "~"))


def vocabularies_dir() -> Path:
    """The folder of bundled vocabularies.

    Installed, it is the package ``segkit.vocabularies``; in a source
    checkout it is the top-level ``vocabularies/`` folder.
    """
    try:
        return Path(str(resources.files("segkit.vocabularies")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "vocabularies"


def bundled_vocabulary(name: str) -> Path:
    """Path of a bundled vocabulary by name (ValueError lists the known names)."""
    try:
        filename = BUNDLED_VOCABULARIES[name]
    except KeyError:
        known = ", ".join(sorted(BUNDLED_VOCABULARIES))
        raise ValueError(f"unknown pretrained name {name!r}; known names: {known}") from None
    path = vocabularies_dir() / filename
    if not path.is_file():
        raise FileNotFoundError(f"bundled vocabulary {name!r} is missing at {path}; reinstall segkit")
    return path
