"""The one rule for lone surrogates: rejected where they come in (the one
exception: :class:`segkit.BPE` models from tiktoken and Tekken files repair
them in ``encode`` as tiktoken does; see
:mod:`segkit.presets.bpe.tiktoken_api`).

A Python ``str`` can hold an unpaired surrogate (U+D800 to U+DFFF), e.g.
from ``bytes.decode(..., "surrogateescape")``.  UTF-8 cannot encode it, and
everything segkit writes or hands on is UTF-8 (Arrow columns, model files,
``vocab.txt``, ``tokenizer.json``, marisa-trie keys); HuggingFace
``tokenizers`` refuses such text too.  So every entry point takes only text
that UTF-8 can encode, and a lone surrogate in a text, a token, a word of a
dictionary or a training document is refused where it comes in, with the
argument and the character position (:func:`check_text`), rather than
accepted and failing later on the way out.  Checking costs nothing for ASCII
text and one encoding pass otherwise.

>>> check_text("ab\\ud800c", "text 3")
Traceback (most recent call last):
...
ValueError: text 3: lone surrogate U+D800 at character 2; segkit takes only text that UTF-8 can encode
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["check_text", "check_texts", "first_surrogate", "surrogate_message"]


def first_surrogate(text: str) -> int:
    """The position of the first lone surrogate in ``text``, or -1."""
    if text.isascii():  # (O(1): CPython knows)
        return -1
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return -1


def surrogate_message(what: str, text: str, at: int) -> str:
    return (f"{what}: lone surrogate U+{ord(text[at]):04X} at character {at}; "
            "segkit takes only text that UTF-8 can encode")


def check_text(text: str, what: str, error: Callable[[str], Exception] = ValueError) -> str:
    """``text``, or ``error`` naming ``what`` and the position of its first
    lone surrogate."""
    at = first_surrogate(text)
    if at >= 0:
        raise error(surrogate_message(what, text, at))
    return text


def check_texts(texts: Iterable[object], what: str, error: Callable[[str], Exception] = ValueError) -> None:
    """:func:`check_text` for each str of ``texts`` (other items are left
    to the caller), named ``f"{what}[{i}]"``."""
    for i, t in enumerate(texts):
        if isinstance(t, str):
            check_text(t, f"{what}[{i}]", error)
