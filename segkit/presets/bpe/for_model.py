"""``segkit.encoding_for_model``: the :class:`segkit.BPE` of an OpenAI model
name (kept apart from :mod:`.encodings`, which the loader of the bundled
encodings imports, so that no module imports the class it serves)."""

from __future__ import annotations

from .encodings import encoding_name_for_model
from .preset import BPE


def encoding_for_model(model_name: str):
    """The :class:`segkit.BPE` of an OpenAI model (tiktoken's
    ``encoding_for_model``).

    >>> import segkit
    >>> enc = segkit.encoding_for_model("gpt-4o-mini")
    >>> enc.name, enc.encode("hello world")
    ('o200k_base', [24912, 2375])
    """
    return BPE.from_pretrained(encoding_name_for_model(model_name))
