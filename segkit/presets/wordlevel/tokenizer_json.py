"""A tokenizer.json whose model is WordLevel, read into the staged pipeline."""

from __future__ import annotations

import json
from typing import Any

from ..pipeline.normalizers import bad, shown
from ..pipeline.staged import StagedModel
from ..pipeline.staged_file import read_pipeline, read_vocab

__all__ = ["read_staged", "words_model"]


def words_model(model: Any, source: str):
    """The :class:`~.model.WordLevel` of a tokenizer.json's ``model``."""
    from .model import WordLevel

    if not isinstance(model, dict):
        raise bad(source, "model", f"expected an object, found {shown(model)}")
    unk = model.get("unk_token", "<unk>")
    if not isinstance(unk, str):
        raise bad(source, "model.unk_token", f"expected a string, found {shown(unk)}")
    return WordLevel(read_vocab(model, source), unk)


def read_staged(source: str, raw: bytes, doc: dict) -> StagedModel:
    """The :class:`StagedModel` of a WordLevel tokenizer.json."""
    return read_pipeline(source, doc, words_model(doc.get("model"), source), rebuild=(_rebuild, (source, raw)))


def _rebuild(source: str, raw: bytes) -> StagedModel:
    return read_staged(source, raw, json.loads(raw))
