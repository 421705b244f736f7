"""tiktoken's encodings beyond the three bundled files, and its model table.

``p50k_base`` is r50k_base's vocabulary plus the runs of 2 to 25 spaces at
ranks 50257..50280 (rank 50256 stays ``<|endoftext|>``).  segkit derives it
from the bundled r50k_base file and checks the derived ``.tiktoken`` text
against the sha256 tiktoken checks for ``p50k_base.tiktoken``
(:data:`P50K_SHA256`), so it is that file, byte for byte.  ``p50k_edit``
is p50k_base with three more special tokens, ``o200k_harmony`` o200k_base
with the harmony chat format's (tiktoken 0.14's ``openai_public.py``).

:func:`encoding_for_model` and :func:`list_encoding_names` answer as
tiktoken's functions of the same names do.
"""

from __future__ import annotations

import base64
import gzip
import hashlib

from .pretrained import ENDOFTEXT, FIM_MIDDLE, FIM_PREFIX, FIM_SUFFIX, O200K_PATTERN, PRETRAINED, R50K_PATTERN

#: sha256 of ``p50k_base.tiktoken`` (the hash tiktoken checks).
P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"

#: p50k_base's tokens after r50k_base's: runs of 2..25 spaces, ranks 50257..50280.
P50K_EXTRA = [b" " * n for n in range(2, 26)]


def _harmony_specials() -> dict[str, int]:
    named = {"<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|return|>": 200002, "<|constrain|>": 200003,
             "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
             "<|call|>": 200012}
    out = {"<|endofprompt|>": 200018, **named}
    for i in (200000, 200001, 200004, 200009, 200010, 200011, *range(200013, 201088)):
        out.setdefault(f"<|reserved_{i}|>", i)
    return out


#: name -> (base vocabulary, added tokens, pattern, special tokens)
DERIVED = {
    "p50k_base": ("r50k_base", P50K_EXTRA, R50K_PATTERN, {ENDOFTEXT: 50256}),
    "p50k_edit": ("r50k_base", P50K_EXTRA, R50K_PATTERN,
                  {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
    "o200k_harmony": ("o200k_base", [], O200K_PATTERN, _harmony_specials()),
}

#: tiktoken's encoding names, in its order (``tiktoken.list_encoding_names()``).
ENCODING_NAMES = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]

#: tiktoken 0.14's model -> encoding table (``tiktoken.model.MODEL_TO_ENCODING``).
MODEL_TO_ENCODING = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base", "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base", "gpt-35-turbo": "cl100k_base", "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base", "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base", "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base", "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base", "text-ada-001": "r50k_base",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base", "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}

#: tiktoken 0.14's prefixes, tried in this order (``MODEL_PREFIX_TO_ENCODING``).
MODEL_PREFIX_TO_ENCODING = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base", "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony", "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base", "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}


def list_encoding_names() -> list[str]:
    """The names :meth:`segkit.BPE.from_pretrained` takes, as
    ``tiktoken.list_encoding_names()`` lists them.

    >>> import segkit
    >>> segkit.list_encoding_names()
    ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base', 'o200k_harmony']
    """
    return list(ENCODING_NAMES)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding of an OpenAI model, by tiktoken's table (exact names,
    then prefixes); KeyError for a model it does not know."""
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a str, found {type(model_name).__name__}")
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. Use segkit.BPE.from_pretrained "
                   f"with one of {', '.join(ENCODING_NAMES)} to get the tokeniser you expect.")


def _derived_tokens(name: str) -> tuple[list, str]:
    """``(tokens by id, sha256 of the vocabulary's .tiktoken text)`` of a
    derived encoding, from the bundled base file (checked)."""
    from .files import read_tiktoken
    from .pretrained import _checked_file

    base, extra, _, _ = DERIVED[name]
    path = _checked_file(base)
    tokens = read_tiktoken(path)
    if not extra:
        return tokens, PRETRAINED[base][1]
    first = len(tokens) + 1  # the base's <|endoftext|> keeps its id
    text = gzip.decompress(path.read_bytes()) + b"".join(
        base64.b64encode(t) + b" %d\n" % (first + k) for k, t in enumerate(extra))
    digest = hashlib.sha256(text).hexdigest()
    if digest != P50K_SHA256:  # pragma: no cover - only a changed derivation
        raise ValueError(f"derived {name} vocabulary has sha256 {digest}, expected {P50K_SHA256}")
    return tokens + [None] + list(extra), digest


def load_derived(cls, name: str):
    """The model of a derived encoding (from segkit's model cache when it
    was built before)."""
    import numpy as np

    from .inputs import check_specials

    _, _, pattern, specials = DERIVED[name]

    def build():
        tokens, _ = _derived_tokens(name)
        taken = [i for i, t in enumerate(tokens) if t is not None]
        obj = cls.__new__(cls)
        obj._setup("tiktoken", tokens, np.arange(len(tokens), dtype=np.int32), None, pattern,
                   check_specials(specials, len(tokens), taken), whole_any=True, name=name)
        return obj

    base = DERIVED[name][0]
    source = (P50K_SHA256 if DERIVED[name][1] else PRETRAINED[base][1]).encode("ascii")
    return cls._cached("bpe-pretrained", {"name": name, "pattern": pattern, "specials": specials}, source, build)


def load_encoding(cls, name: str):
    """``BPE.from_pretrained``: a bundled file's encoding
    (:func:`.pretrained.load_pretrained`) or one derived from it here."""
    from .pretrained import load_pretrained, resolve

    canonical = resolve(name, DERIVED)
    if canonical in DERIVED:
        return load_derived(cls, canonical)
    return load_pretrained(cls, name)
