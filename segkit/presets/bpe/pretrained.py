"""The bundled tiktoken vocabularies (``BPE.from_pretrained``).

Files in ``vocabularies/`` (MIT; provenance in its README): the sha256 of
each file's uncompressed content is checked before a model is built from
it (the hashes tiktoken checks).  Built models go to the model cache
(:mod:`segkit.models.cache`), so later calls load in milliseconds.
"""

from __future__ import annotations

import gzip
import hashlib

#: tiktoken 0.14's patterns and special tokens (tiktoken_ext/openai_public.py).
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

#: name -> (file, sha256 of the uncompressed file, pattern, special tokens)
PRETRAINED = {
    "r50k_base": ("gpt2.tiktoken.gz", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                  R50K_PATTERN, {ENDOFTEXT: 50256}),
    "cl100k_base": ("cl100k_base.tiktoken.gz", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                    CL100K_PATTERN, {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                                     ENDOFPROMPT: 100276}),
    "o200k_base": ("o200k_base.tiktoken.gz", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                   O200K_PATTERN, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
}
#: Other names for the same vocabularies.
ALIASES = {"gpt2": "r50k_base"}


def resolve(name: str, derived=()) -> str:
    """The canonical name of a pretrained vocabulary, a bundled file's or
    one of ``derived`` (ValueError lists them)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, found {type(name).__name__}")
    canonical = ALIASES.get(name, name)
    if canonical not in PRETRAINED and canonical not in derived:
        known = ", ".join(sorted([*PRETRAINED, *ALIASES, *derived]))
        raise ValueError(f"unknown pretrained BPE {name!r}; known names: {known}")
    return canonical


def _checked_file(canonical: str):
    from pathlib import Path

    from ..base import vocabularies_dir

    filename, digest, _, _ = PRETRAINED[canonical]
    path = vocabularies_dir() / filename
    if not path.is_file():  # a source checkout run from elsewhere: the folder beside the package
        path = Path(__file__).resolve().parents[3] / "vocabularies" / filename
    if not path.is_file():
        raise FileNotFoundError(f"bundled vocabulary {canonical!r} is missing at {path}; reinstall segkit")
    raw = path.read_bytes()
    if hashlib.sha256(gzip.decompress(raw)).hexdigest() != digest:
        raise ValueError(f"bundled vocabulary {path} is damaged (sha256 differs from {digest}); reinstall segkit")
    return path


def load_pretrained(cls, name: str):
    """The model of ``name``: from segkit's model cache when it was built
    before (a load of milliseconds), else built from the bundled file
    (checked) and cached."""
    canonical = resolve(name)
    _, digest, pattern, specials = PRETRAINED[canonical]

    def build():
        path = _checked_file(canonical)
        return cls.from_tiktoken(path, pattern=pattern, special_tokens=specials, name=canonical,
                                 _cache=False)  # (this build is cached under its name already)

    model = cls._cached("bpe-pretrained", {"name": canonical, "pattern": pattern, "specials": specials},
                        digest.encode("ascii"), build)
    model.name = name  # "gpt2" stays "gpt2", as tiktoken names it
    return model
