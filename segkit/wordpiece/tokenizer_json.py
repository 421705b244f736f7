"""Reading HuggingFace ``tokenizer.json`` files whose model is WordPiece."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def _fail(path: Path, what: str) -> ValueError:
    return ValueError(f"{path}: {what}")


def read_tokenizer_json(path: str | os.PathLike) -> tuple[dict[str, int], dict[str, Any]]:
    """``(vocab, keyword arguments for WordPiece)`` from a tokenizer.json."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"tokenizer.json not found: {path}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _fail(path, f"not a readable tokenizer.json ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise _fail(path, "no 'model' object; not a HuggingFace tokenizer.json")
    model = data["model"]
    mtype = model.get("type")
    # Older serializations of WordPiece have no "type" key.
    is_wordpiece = mtype == "WordPiece" or (mtype is None and "continuing_subword_prefix" in model and "max_input_chars_per_word" in model)
    if not is_wordpiece:
        raise _fail(path, f"the model is {mtype or 'of unknown type'}, expected WordPiece")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise _fail(path, "the WordPiece model has no vocabulary")
    kwargs: dict[str, Any] = {
        "unk_token": model.get("unk_token", "[UNK]"),
        "suffix_indicator": model.get("continuing_subword_prefix", "##"),
        "max_input_chars_per_word": int(model.get("max_input_chars_per_word", 100)),
    }
    norm = data.get("normalizer")
    if norm is None:
        kwargs.update(lowercase=False, strip_accents=False, clean_text=False, handle_chinese_chars=False)
    elif norm.get("type") == "BertNormalizer":
        kwargs.update(
            lowercase=bool(norm.get("lowercase", True)),
            strip_accents=norm.get("strip_accents"),
            clean_text=bool(norm.get("clean_text", True)),
            handle_chinese_chars=bool(norm.get("handle_chinese_chars", True)),
        )
    else:
        raise _fail(path, f"normalizer {norm.get('type')!r} is not supported (segkit reproduces BertNormalizer)")
    pre = data.get("pre_tokenizer")
    if pre is None or pre.get("type") != "BertPreTokenizer":
        found = None if pre is None else pre.get("type")
        raise _fail(path, f"pre-tokenizer {found!r} is not supported (segkit reproduces BertPreTokenizer)")
    added = data.get("added_tokens") or []
    specials = []
    for tok in added:
        content = tok.get("content")
        if content not in vocab:
            raise _fail(path, f"added token {content!r} is not in the WordPiece vocabulary")
        if tok.get("normalized") or tok.get("lstrip") or tok.get("rstrip") or tok.get("single_word"):
            raise _fail(path, f"added token {content!r}: normalized/lstrip/rstrip/single_word are not supported")
        specials.append(content)
    kwargs["special_tokens"] = specials
    kwargs.update(_post_processor(path, data.get("post_processor"), vocab))
    trunc = data.get("truncation")
    if trunc:
        strategy = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}.get(
            trunc.get("strategy", "LongestFirst")
        )
        if strategy is None or trunc.get("stride", 0) or trunc.get("direction", "Right") != "Right":
            raise _fail(path, f"truncation settings {trunc} are not supported")
        kwargs["truncation"] = {"max_length": int(trunc["max_length"]), "strategy": strategy}
    pad = data.get("padding")
    if pad:
        strategy = pad.get("strategy", "BatchLongest")
        length = strategy.get("Fixed") if isinstance(strategy, dict) else None
        if pad.get("direction", "Right") != "Right" or pad.get("pad_type_id", 0) != 0:
            raise _fail(path, f"padding settings {pad} are not supported")
        kwargs["pad_token"] = pad.get("pad_token", "[PAD]")
        kwargs["padding"] = {"length": length, "pad_to_multiple_of": pad.get("pad_to_multiple_of")}
    return {str(k): int(v) for k, v in vocab.items()}, kwargs


def _post_processor(path: Path, post: dict | None, vocab: dict) -> dict[str, Any]:
    if post is None:
        return {"template": None}
    kind = post.get("type")
    if kind == "BertProcessing":
        cls_tok, sep_tok = post["cls"][0], post["sep"][0]
    elif kind == "TemplateProcessing":
        def shape(items):
            out = []
            for it in items:
                if "SpecialToken" in it:
                    out.append(("S", it["SpecialToken"]["id"], it["SpecialToken"].get("type_id", 0)))
                else:
                    out.append(("Q", it["Sequence"]["id"], it["Sequence"].get("type_id", 0)))
            return out

        single, pair = shape(post.get("single", [])), shape(post.get("pair", []))
        ok = (
            len(single) == 3
            and single[0][0] == "S"
            and single[1] == ("Q", "A", 0)
            and single[2][0] == "S"
            and single[0][2] == single[2][2] == 0
            and len(pair) == 5
            and pair[:3] == single
            and pair[3] == ("Q", "B", 1)
            and pair[4] == ("S", single[2][1], 1)
        )
        if not ok:
            raise _fail(path, "only BERT's template ([CLS] $A [SEP] / [CLS] $A [SEP] $B:1 [SEP]:1) is supported")
        cls_tok, sep_tok = single[0][1], single[2][1]
        for name in (cls_tok, sep_tok):
            ids = post.get("special_tokens", {}).get(name, {}).get("ids")
            if ids is not None and list(ids) != [vocab.get(name)]:
                raise _fail(path, f"template token {name!r} maps to {ids}, not to its vocabulary id")
    else:
        raise _fail(path, f"post-processor {kind!r} is not supported")
    for name in (cls_tok, sep_tok):
        if name not in vocab:
            raise _fail(path, f"template token {name!r} is not in the vocabulary")
    return {"template": "bert", "cls_token": cls_tok, "sep_token": sep_tok}
