"""What a tokenizer.json's components say about how to run it (read
before any preset is chosen): byte-level or not, a space put first, the
post-processor's ``add_prefix_space``."""

from __future__ import annotations

from typing import Any

__all__ = ["byte_level_prefix", "is_byte_level", "trim_prefix"]


def _types(node) -> list:
    if not isinstance(node, dict):
        return []
    out = [node.get("type")]
    for key in ("pretokenizers", "decoders", "normalizers", "processors"):
        subs = node.get(key)
        for sub in subs if isinstance(subs, list) else []:
            out += _types(sub)
    return out


def is_byte_level(doc: dict) -> bool:
    """Whether a tokenizer.json spells tokens in bytes (a ByteLevel
    pre-tokenizer or decoder): then :class:`segkit.BPE` reads it."""
    return "ByteLevel" in _types(doc.get("pre_tokenizer")) + _types(doc.get("decoder"))


def trim_prefix(spec: Any) -> bool:
    """The ``add_prefix_space`` of the post-processor that trims offsets
    (ByteLevel or RobertaProcessing, alone or in a Sequence; HF's default
    true): the first token keeps the one space it was given."""
    if not isinstance(spec, dict):
        return False
    if spec.get("type") == "Sequence":
        subs = spec.get("processors")
        return any(trim_prefix(p) for p in subs) if isinstance(subs, list) else False
    if spec.get("type") in ("ByteLevel", "RobertaProcessing"):
        v = spec.get("add_prefix_space", True)
        return v if isinstance(v, bool) else True
    return False


def byte_level_prefix(doc: dict) -> bool:
    """Whether a byte-level file's ByteLevel pre-tokenizer puts a space
    first (``add_prefix_space``), which :class:`segkit.BPE`'s offsets do not
    follow: :class:`segkit.Tokenizer` runs such files staged."""
    def walk(node) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "ByteLevel":
            return node.get("add_prefix_space", True) is True
        subs = node.get("pretokenizers")
        return any(walk(p) for p in subs) if isinstance(subs, list) else False

    return walk(doc.get("pre_tokenizer"))
