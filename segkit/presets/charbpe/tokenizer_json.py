"""A tokenizer.json whose model is a BPE over characters (SentencePiece-
converted files: Llama 2, Mistral, Gemma; any BPE file without ByteLevel),
read into the staged pipeline (:class:`segkit.presets.pipeline.staged.StagedModel`)
over a :class:`~.model.CharBPE`.

Every error is a ValueError naming the file, the JSON path, and what was
expected and found.
"""

from __future__ import annotations

import json
from typing import Any

from ..pipeline.decoders import read_decoder
from ..pipeline.file_kinds import trim_prefix
from ..pipeline.normalizers import bad, shown
from ..pipeline.normalizers import read_normalizer
from ..pipeline.pre_tokenizers import read_pre_tokenizer
from ..pipeline.staged import AddedToken, StagedModel

__all__ = ["read_staged"]


def _flag(model: dict, key: str, source: str, default: bool = False) -> bool:
    v = model.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise bad(source, f"model.{key}", f"expected true or false, found {shown(v)}")
    return v


def _optional_string(model: dict, key: str, source: str) -> str | None:
    v = model.get(key)
    if v is not None and not isinstance(v, str):
        raise bad(source, f"model.{key}", f"expected a string or null, found {shown(v)}")
    return v or None


def _merges(raw: Any, source: str) -> list[tuple[str, str]]:
    if not isinstance(raw, list):
        raise bad(source, "model.merges", f"expected a list, found {shown(raw)}")
    out = []
    for k, m in enumerate(raw):
        if isinstance(m, str):
            parts = m.split(" ")
            if len(parts) != 2 or not all(parts):
                raise bad(source, f"model.merges[{k}]", f"expected 'left right' (two tokens, one space), found "
                          f"{shown(m)}")
            out.append((parts[0], parts[1]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(p, str) for p in m):
            out.append((m[0], m[1]))
        else:
            raise bad(source, f"model.merges[{k}]", f"expected 'left right' or [left, right], found {shown(m)}")
    return out


def _added(raw: Any, source: str) -> list[AddedToken]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad(source, "added_tokens", f"expected a list, found {shown(raw)}")
    out = []
    for k, e in enumerate(raw):
        w = f"added_tokens[{k}]"
        if not isinstance(e, dict):
            raise bad(source, w, f"expected an object, found {shown(e)}")
        i, content = e.get("id"), e.get("content")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 31:
            raise bad(source, f"{w}.id", f"expected an id (0 <= id < 2**31), found {shown(i)}")
        if not isinstance(content, str) or not content:
            raise bad(source, f"{w}.content", f"expected a non-empty string, found {shown(content)}")
        flags = {}
        for key, default in (("special", False), ("normalized", None), ("lstrip", False), ("rstrip", False),
                             ("single_word", False)):
            v = e.get(key, default)
            if v is not None and not isinstance(v, bool):
                raise bad(source, f"{w}.{key}", f"expected true or false, found {shown(v)}")
            flags[key] = v
        if flags["normalized"] is None:  # HF: a special token is not normalized unless said
            flags["normalized"] = not flags["special"]
        out.append(AddedToken(content, i, flags["special"], flags["normalized"], flags["lstrip"], flags["rstrip"],
                              flags["single_word"]))
    return out


def read_staged(source: str, raw: bytes, doc: dict) -> StagedModel:
    """The :class:`StagedModel` of a tokenizer.json with a character-level
    BPE model (``doc`` its parsed JSON, ``raw`` its bytes: kept to pickle)."""
    from .model import CharBPE

    model = doc.get("model")
    if not isinstance(model, dict):
        raise bad(source, "model", f"expected an object, found {shown(model)}")
    if model.get("type", "BPE") != "BPE":
        raise bad(source, "model.type", f"expected 'BPE', found {shown(model.get('type'))}")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise bad(source, "model.dropout", f"segkit's BPE is deterministic (dropout null or 0), found {shown(dropout)}")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise bad(source, "model.vocab", f"expected an object of token: id, found {shown(vocab)}")
    for t, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 31:
            raise bad(source, f"model.vocab[{t!r:.40}]", f"expected an id (0 <= id < 2**31), found {shown(i)}")
    merges = _merges(model.get("merges", []), source)
    unk = _optional_string(model, "unk_token", source)
    try:
        words = CharBPE(vocab, merges, unk_token=unk, byte_fallback=_flag(model, "byte_fallback", source),
                        fuse_unk=_flag(model, "fuse_unk", source), ignore_merges=_flag(model, "ignore_merges", source),
                        continuing_subword_prefix=_optional_string(model, "continuing_subword_prefix", source),
                        end_of_word_suffix=_optional_string(model, "end_of_word_suffix", source))
    except ValueError as e:
        raise bad(source, "model", str(e)) from None
    return StagedModel(words, vocab, _added(doc.get("added_tokens"), source),
                       read_normalizer(doc.get("normalizer"), source),
                       read_pre_tokenizer(doc.get("pre_tokenizer"), source),
                       read_decoder(doc.get("decoder"), source), source,
                       rebuild=(_rebuild, (source, raw)), trim_prefix=trim_prefix(doc.get("post_processor")))


def _rebuild(source: str, raw: bytes) -> StagedModel:
    return read_staged(source, raw, json.loads(raw))
