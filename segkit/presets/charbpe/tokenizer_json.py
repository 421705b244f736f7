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

from ..pipeline.normalizers import bad, shown
from ..pipeline.staged import StagedModel
from ..pipeline.staged_file import read_pipeline, read_vocab

__all__ = ["read_staged", "words_model"]


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


def words_model(model: Any, source: str):
    """The :class:`~.model.CharBPE` of a tokenizer.json's ``model`` (BPE)."""
    from .model import CharBPE

    if not isinstance(model, dict):
        raise bad(source, "model", f"expected an object, found {shown(model)}")
    if model.get("type", "BPE") != "BPE":
        raise bad(source, "model.type", f"expected 'BPE', found {shown(model.get('type'))}")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0) or isinstance(dropout, bool):
        raise bad(source, "model.dropout", f"segkit's BPE is deterministic (dropout null or 0), found {shown(dropout)}")
    vocab = read_vocab(model, source)
    if "merges" not in model:
        raise bad(source, "model.merges", "a BPE model needs its merges (a list, as HF requires); found none")
    merges = _merges(model["merges"], source)
    options = {"unk_token": _optional_string(model, "unk_token", source),
               "byte_fallback": _flag(model, "byte_fallback", source), "fuse_unk": _flag(model, "fuse_unk", source),
               "ignore_merges": _flag(model, "ignore_merges", source),
               "continuing_subword_prefix": _optional_string(model, "continuing_subword_prefix", source),
               "end_of_word_suffix": _optional_string(model, "end_of_word_suffix", source)}
    try:
        return CharBPE(vocab, merges, **options)
    except (ValueError, TypeError) as e:
        raise bad(source, "model", str(e)) from None


def read_staged(source: str, raw: bytes, doc: dict) -> StagedModel:
    """The :class:`StagedModel` of a tokenizer.json with a BPE over
    characters (``doc`` its parsed JSON, ``raw`` its bytes: kept to pickle)."""
    return read_pipeline(source, doc, words_model(doc.get("model"), source), rebuild=(_rebuild, (source, raw)))


def _rebuild(source: str, raw: bytes) -> StagedModel:
    return read_staged(source, raw, json.loads(raw))
