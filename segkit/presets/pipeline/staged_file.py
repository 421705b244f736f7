"""A tokenizer.json read into the staged pipeline: everything but the
model (added tokens, normalizer, pre-tokenizer, decoder, the trimming
post-processor's ``add_prefix_space``); the preset that reads the
``model`` hands its words model in (``charbpe``: BPE, ``wordlevel``:
WordLevel).

Every error is a ValueError naming the file, the JSON path, and what was
expected and found.
"""

from __future__ import annotations

from typing import Any

from .decoders import read_decoder
from .file_kinds import trim_prefix
from .metaspace_rows import file_shape
from .normalizers import bad, read_normalizer, shown
from .pre_tokenizers import read_pre_tokenizer
from .staged import AddedToken, StagedModel

__all__ = ["read_added_tokens", "read_pipeline", "read_vocab"]


def read_vocab(model: dict, source: str) -> dict[str, int]:
    """``model.vocab``: an object of token -> id (0 <= id < 2**31)."""
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise bad(source, "model.vocab", f"expected an object of token: id, found {shown(vocab)}")
    for t, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 31:
            raise bad(source, f"model.vocab[{t!r:.40}]", f"expected an id (0 <= id < 2**31), found {shown(i)}")
    return vocab


def read_added_tokens(raw: Any, source: str) -> list[AddedToken]:
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


def read_pipeline(source: str, doc: dict, words: Any, rebuild: tuple | None = None) -> StagedModel:
    """The :class:`StagedModel` of a parsed tokenizer.json ``doc`` around
    the words model ``words`` (which read ``doc["model"]``)."""
    vocab = read_vocab(doc["model"], source)
    added = read_added_tokens(doc.get("added_tokens"), source)
    n = len(vocab) + len(added)
    top = max([*vocab.values(), *(a.id for a in added)], default=-1)
    if top > 16 * n + 1024:  # (segkit keeps a table per id, as segkit.BPE does)
        raise bad(source, "model.vocab" if top in vocab.values() else "added_tokens",
                  f"ids up to {top} for {n} tokens: too sparse")
    return StagedModel(words, vocab, added,
                       read_normalizer(doc.get("normalizer"), source),
                       read_pre_tokenizer(doc.get("pre_tokenizer"), source),
                       read_decoder(doc.get("decoder"), source), source,
                       rebuild=rebuild, trim_prefix=trim_prefix(doc.get("post_processor")), shape=file_shape(doc))
