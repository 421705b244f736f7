"""Which model ``segkit tokenize --model X`` means, decided before anything
is loaded.

``--model`` takes every bundled model by name (the BERT vocabularies, the
byte-level BPE encodings, RWKV World) and every file or folder
:func:`segkit.from_pretrained` reads, recognised by content: segkit's
``save()`` files, HuggingFace ``tokenizer.json`` files (BPE or WordPiece)
and model folders, tiktoken files, SentencePiece ``.model`` files, Mistral
Tekken files, RWKV vocabularies and ``vocab.txt``.  A bundled name
wins over a file of the same name in the current folder, unless the
argument is written as a path (``./cl100k_base``, ``/models/x``, anything
with a folder separator): a name typed to mean the bundled encoding must
not silently pick up whatever file happens to sit in the current folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..models.bundled import written_as_a_path
from .io import CliError, shown_path

#: Models ``--model`` takes by name besides the BERT and BPE vocabularies:
#: name -> (module, class), built with no arguments.
NAMED_MODELS = {
    "rwkv-world": ("segkit.presets.maxmatch", "RWKVWorld"),
}


@dataclass(frozen=True)
class ModelChoice:
    """``kind`` is ``"bert"``, ``"bpe"``, ``"named"`` (a name of
    :data:`NAMED_MODELS`) or ``"file"``; ``value`` the name or the path."""

    kind: str
    value: str


def bundled_names() -> dict[str, str]:
    """Every name ``--model`` takes -> its kind, in a stable order."""
    from ..models.bundled import BUNDLED_VOCABULARIES
    from ..presets.bpe.encodings import list_encoding_names

    names = {n: "bert" for n in sorted(BUNDLED_VOCABULARIES)}
    names.update({n: "bpe" for n in list_encoding_names()})
    names.update({n: "named" for n in NAMED_MODELS})
    return names


def choose(arg: str, option: str = "--model") -> ModelChoice:
    """The model ``arg`` names (nothing is read).

    >>> choose("cl100k_base")
    ModelChoice(kind='bpe', value='cl100k_base')
    """
    names = bundled_names()
    if not written_as_a_path(arg):
        kind = names.get(arg)
        if kind is not None:
            return ModelChoice(kind, arg)
    path = os.path.expanduser(arg)
    if os.path.exists(path):
        return ModelChoice("file", path)
    if written_as_a_path(arg):
        raise CliError(f"{option} {shown_path(arg)}: model file not found")
    raise CliError(f"{option} {shown_path(arg)}: not a bundled model and no file of that name; bundled models: "
                   f"{', '.join(names)} (or give a model file's path)")


def note_shadowed_file(choice: ModelChoice) -> str | None:
    """The note to print when a bundled name was chosen although a file of
    that name exists in the current folder, else None."""
    if choice.kind != "file" and os.path.exists(choice.value):
        return (f"segkit: note: --model {choice.value} is the bundled model; for the file of that name "
                f"give ./{choice.value}")
    return None


def load(choice: ModelChoice):
    """The tokenizer ``choice`` names."""
    if choice.kind == "bert":
        from ..presets.wordpiece import WordPiece

        return WordPiece.from_pretrained(choice.value)
    if choice.kind == "bpe":
        from ..presets.bpe import BPE

        return BPE.from_pretrained(choice.value)
    if choice.kind == "named":
        import importlib

        module, cls = NAMED_MODELS[choice.value]
        return getattr(importlib.import_module(module), cls)()
    from ..presets.loader import from_pretrained

    return from_pretrained(path_argument(choice.value))


def path_argument(path: str) -> str:
    """A path as the one loader takes it: written as a path (``./name``
    for a bare file name), so that a file is never taken for the bundled
    model of the same name (:func:`choose` decided that already)."""
    return path if written_as_a_path(path) else os.path.join(".", path)
