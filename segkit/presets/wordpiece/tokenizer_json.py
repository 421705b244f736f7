"""Reading HuggingFace ``tokenizer.json`` files whose model is WordPiece."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ...runtime.regular_files import read_regular


def _fail(path: Path, what: str) -> ValueError:
    return ValueError(f"{path}: {what}")


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
               bool: "true or false", type(None): "null"}


def _json_type(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _get(path: Path, obj: dict, key: str, types: tuple, default: Any, where: str) -> Any:
    """``obj[key]`` (``default`` when absent), checked to be one of ``types``;
    otherwise a ValueError naming the field, what was expected and found."""
    value = obj.get(key, default)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise _fail(path, f"field {where}{key!r} must be {expected}, found {_json_type(value)} {value!r:.60}")
    return value


def read_tokenizer_json(path: str | os.PathLike) -> tuple[dict[str, int], dict[str, Any]]:
    """``(vocab, keyword arguments for WordPiece)`` from a tokenizer.json."""
    try:
        return _read_tokenizer_json(Path(path))
    except RecursionError:  # a value nested just shallow enough for json, too deep to describe
        raise _fail(Path(path), "not a readable tokenizer.json (arrays or objects nested too deeply)") from None


def _read_tokenizer_json(path: Path) -> tuple[dict[str, int], dict[str, Any]]:
    # a regular file only (see segkit.runtime.regular_files)
    raw = read_regular(path, "tokenizer.json", lambda message: ValueError(message))
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _fail(path, f"not a readable tokenizer.json ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise _fail(path, "no 'model' object; not a HuggingFace tokenizer.json")
    try:
        return _read(path, data)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        # A structure deeper than the checked fields has the wrong shape.
        raise _fail(path, f"unexpected structure ({type(e).__name__}: {e}); not a tokenizer.json segkit can read") from None


def _read(path: Path, data: dict) -> tuple[dict[str, int], dict[str, Any]]:
    model = data["model"]
    mtype = model.get("type")
    # Older serializations of WordPiece have no "type" key.
    is_wordpiece = mtype == "WordPiece" or (mtype is None and "continuing_subword_prefix" in model and "max_input_chars_per_word" in model)
    if not is_wordpiece:
        raise _fail(path, f"the model is {mtype or 'of unknown type'}, expected WordPiece")
    vocab = _get(path, model, "vocab", (dict,), None, "model.")
    if not vocab:
        raise _fail(path, "the WordPiece model has no vocabulary")
    for token, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int):
            raise _fail(path, f"model.vocab: token {token!r:.60} has id {i!r:.60}, expected an integer")
    kwargs: dict[str, Any] = {
        "unk_token": _get(path, model, "unk_token", (str,), "[UNK]", "model."),
        "suffix_indicator": _get(path, model, "continuing_subword_prefix", (str,), "##", "model."),
        "max_input_chars_per_word": _get(path, model, "max_input_chars_per_word", (int,), 100, "model."),
    }
    norm = _get(path, data, "normalizer", (dict, type(None)), None, "")
    if norm is None:
        kwargs.update(lowercase=False, strip_accents=False, clean_text=False, handle_chinese_chars=False)
    elif norm.get("type") == "BertNormalizer":
        kwargs.update(
            lowercase=_get(path, norm, "lowercase", (bool,), True, "normalizer."),
            strip_accents=_get(path, norm, "strip_accents", (bool, type(None)), None, "normalizer."),
            clean_text=_get(path, norm, "clean_text", (bool,), True, "normalizer."),
            handle_chinese_chars=_get(path, norm, "handle_chinese_chars", (bool,), True, "normalizer."),
        )
    else:
        raise _fail(path, f"normalizer {norm.get('type')!r} is not supported (segkit reproduces BertNormalizer)")
    pre = _get(path, data, "pre_tokenizer", (dict, type(None)), None, "")
    if pre is None or pre.get("type") != "BertPreTokenizer":
        found = None if pre is None else pre.get("type")
        raise _fail(path, f"pre-tokenizer {found!r} is not supported (segkit reproduces BertPreTokenizer)")
    added = _get(path, data, "added_tokens", (list, type(None)), None, "") or []
    specials = []
    rows = []  # every added token, for segkit.presets.wordpiece.added_tokens
    plain = True  # all are special tokens of the vocabulary, matched raw, no flags: the fast path does them
    for k, tok in enumerate(added):
        if not isinstance(tok, dict):
            raise _fail(path, f"added_tokens[{k}] must be an object, found {_json_type(tok)} {tok!r:.60}")
        where = f"added_tokens[{k}]."
        content = _get(path, tok, "content", (str,), None, where)
        flags = [_get(path, tok, key, (bool,), default, where) for key, default in
                 (("single_word", False), ("lstrip", False), ("rstrip", False), ("normalized", True), ("special", False))]
        i = _get(path, tok, "id", (int,), vocab.get(content), where)
        if i is None or not 0 <= i < 1 << 32:
            raise _fail(path, f"field {where}'id' of added token {content!r:.40} must be an id (0 <= id < 2**32), "
                              f"found {i!r:.40}")
        rows.append([i, content, *flags])
        if content in vocab and flags == [False, False, False, False, True]:
            specials.append(content)
        else:
            plain = False
    kwargs["special_tokens"] = specials
    # The ids are HF's to assign (they are only compared with the file's):
    # see segkit.presets.wordpiece.added_tokens.replay_added.
    kwargs["added_tokens"] = (rows, plain)
    kwargs.update(_post_processor(path, _get(path, data, "post_processor", (dict, type(None)), None, ""), vocab))
    trunc = _get(path, data, "truncation", (dict, type(None)), None, "")
    if trunc:
        strategy = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}.get(
            _get(path, trunc, "strategy", (str,), "LongestFirst", "truncation.")
        )
        direction = _DIRECTIONS.get(_get(path, trunc, "direction", (str,), "Right", "truncation."))
        if strategy is None or direction is None:
            raise _fail(path, f"truncation settings {trunc} are not supported")
        max_length = _get(path, trunc, "max_length", (int,), None, "truncation.")
        stride = _get(path, trunc, "stride", (int,), 0, "truncation.")
        kwargs["truncation"] = {"max_length": max_length, "strategy": strategy, "stride": stride, "direction": direction}
    pad = _get(path, data, "padding", (dict, type(None)), None, "")
    if pad:
        strategy = pad.get("strategy", "BatchLongest")
        length = strategy.get("Fixed") if isinstance(strategy, dict) else None
        if length is not None and (isinstance(length, bool) or not isinstance(length, int)):
            raise _fail(path, f"field padding.strategy.Fixed must be an integer, found {_json_type(length)} {length!r:.60}")
        direction = _DIRECTIONS.get(_get(path, pad, "direction", (str,), "Right", "padding."))
        if direction is None:
            raise _fail(path, f"padding settings {pad} are not supported")
        kwargs["pad_token"] = _get(path, pad, "pad_token", (str,), "[PAD]", "padding.")
        kwargs["padding"] = {
            "length": length,
            "pad_to_multiple_of": _get(path, pad, "pad_to_multiple_of", (int, type(None)), None, "padding."),
            "direction": direction,
            "pad_type_id": _get(path, pad, "pad_type_id", (int,), 0, "padding."),
        }
        # HF pads with pad_id whatever pad_token is (enable_padding() sets
        # 0 and "[PAD]" by default): kept when it is not the token's id.
        pad_id = _get(path, pad, "pad_id", (int,), vocab.get(kwargs["pad_token"], 0), "padding.")
        if not 0 <= pad_id < 1 << 31:
            raise _fail(path, f"field padding.pad_id must be an id (0 <= id < 2**31), found {pad_id}")
        if pad_id != vocab.get(kwargs["pad_token"], 0):
            kwargs["padding"]["pad_id"] = pad_id
    return dict(vocab), kwargs


_DIRECTIONS = {"Right": "right", "Left": "left"}


def _post_processor(path: Path, post: dict | None, vocab: dict) -> dict[str, Any]:
    if post is None:
        return {"template": None}
    kind = post.get("type")
    if kind == "BertProcessing":
        for key in ("cls", "sep"):
            pair = post.get(key)
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise _fail(path, f"post_processor.{key} must be [token, id], found {pair!r:.60}")
            name, i = pair
            # HF emits the file's id; segkit names every id by its vocabulary
            # token, so an id that is not the token's cannot be reproduced.
            if isinstance(i, bool) or not isinstance(i, int) or vocab.get(name) != i:
                found = "is not in the vocabulary" if name not in vocab else f"has id {vocab[name]} in the vocabulary"
                raise _fail(path, f"post_processor.{key} gives token {name!r:.40} id {i!r:.40}, but {name!r:.40} "
                                  f"{found}; segkit gives a token its vocabulary id (write that id in the file)")
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
        bert_shape = (
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
        specials = _get(path, post, "special_tokens", (dict,), {}, "post_processor.")
        plain_ids = all(
            isinstance(name, str) and (specials.get(name) or {}).get("ids", [vocab.get(name)]) == [vocab.get(name)]
            for name in (single[0][1], single[2][1])
        ) if bert_shape else False
        if not plain_ids:
            return {"template": _general_template(path, post, specials, vocab)}
        cls_tok, sep_tok = single[0][1], single[2][1]
    else:
        raise _fail(path, f"post-processor {kind!r} is not supported")
    for name in (cls_tok, sep_tok):
        if not isinstance(name, str):
            raise _fail(path, f"post_processor: special token {name!r:.60} must be a string, found {_json_type(name)}")
    for name in (cls_tok, sep_tok):
        if name not in vocab:
            raise _fail(path, f"template token {name!r} is not in the vocabulary")
    return {"template": "bert", "cls_token": cls_tok, "sep_token": sep_tok}


def _general_template(path: Path, post: dict, specials: dict, vocab: dict) -> dict:
    """A ``TemplateProcessing`` other than BERT's, in segkit's canonical form
    (its special tokens' ids and token strings checked against the vocabulary)."""
    from ..pipeline.template import normalize_template

    itos = {i: t for t, i in vocab.items()}
    ids = {}
    for name, spec in specials.items():
        if not isinstance(spec, dict):
            raise _fail(path, f"post_processor.special_tokens[{name!r:.40}] must be an object, found {_json_type(spec)}")
        got = _get(path, spec, "ids", (list,), None, f"post_processor.special_tokens[{name!r:.40}].")
        toks = _get(path, spec, "tokens", (list,), None, f"post_processor.special_tokens[{name!r:.40}].")
        if len(got) != len(toks) or any(isinstance(i, bool) or not isinstance(i, int) for i in got):
            raise _fail(path, f"post_processor.special_tokens[{name!r:.40}]: ids {got!r:.60} and tokens {toks!r:.60} do not match")
        for i, t in zip(got, toks):
            if itos.get(i) != t:
                raise _fail(path, f"template token {name!r:.40}: id {i} is {itos.get(i)!r:.40} in the vocabulary, not {t!r:.40}")
        ids[name] = got
    # Names that are the vocabulary token of their one id need no entry
    # (segkit's canonical form; checked below to be in the template's map).
    listed = set(ids)
    ids = {name: got for name, got in ids.items() if got != [vocab.get(name)]}
    try:
        template = normalize_template({"single": post.get("single", []), "pair": post.get("pair", []), "special_tokens": ids})
    except ValueError as e:
        raise _fail(path, f"post_processor: {e}") from None
    for which in ("single", "pair"):
        for piece in template[which]:
            name = piece.get("SpecialToken", {}).get("id")
            if name is not None and name not in listed:
                raise _fail(path, f"post_processor: template token {name!r:.40} is not in its special_tokens")
    return template


def _template_json(template: dict, vocab) -> dict:
    """HF ``TemplateProcessing`` of a canonical template."""
    specials = {}
    for which in ("single", "pair"):
        for piece in template[which]:
            name = piece.get("SpecialToken", {}).get("id")
            if name is not None and name not in specials:
                ids = template["special_tokens"].get(name) or [vocab.id(name)]
                specials[name] = {"id": name, "ids": list(ids), "tokens": [vocab.token(i) for i in ids]}
    return {"type": "TemplateProcessing", "single": template["single"], "pair": template["pair"],
            "special_tokens": specials}


# ------------------------------------------------------------------ writing
def tokenizer_json_of(wp) -> dict[str, Any]:
    """The HuggingFace ``tokenizer.json`` structure of a WordPiece preset
    (see :meth:`segkit.WordPiece.save_tokenizer_json`); ValueError for
    settings HF cannot reproduce."""
    st = wp._stages  # one state: settings, padding id and added tokens together
    s = st.settings
    if s["flavour"] != "hf":
        raise ValueError(f"flavour {s['flavour']!r} has no HuggingFace equivalent; only flavour 'hf' can be saved as tokenizer.json")
    if s["cjk"] != "hf" and s["handle_chinese_chars"]:
        raise ValueError(f"cjk={s['cjk']!r}: HuggingFace's BertNormalizer uses its own CJK ranges ('hf')")
    # The model's vocabulary holds no added token (HF's own save keeps them
    # apart: put in model.vocab, a token the WordPiece model can match
    # inside words, where an added token is matched only on its own).
    vocab = wp.get_vocab(with_added_tokens=False)
    normalizing = s["lowercase"] or s["clean_text"] or s["handle_chinese_chars"] or bool(s["strip_accents"])
    normalizer = None
    if normalizing:
        normalizer = {
            "type": "BertNormalizer",
            "clean_text": s["clean_text"],
            "handle_chinese_chars": s["handle_chinese_chars"],
            "strip_accents": s["strip_accents"],
            "lowercase": s["lowercase"],
        }
    post = None
    if isinstance(s["template"], dict):
        post = _template_json(s["template"], wp.vocab)
    elif s["template"] == "bert":
        cls_tok, sep_tok = s["cls_token"], s["sep_token"]

        def special(tok: str, type_id: int) -> dict:
            return {"SpecialToken": {"id": tok, "type_id": type_id}}

        def seq(name: str, type_id: int) -> dict:
            return {"Sequence": {"id": name, "type_id": type_id}}

        post = {
            "type": "TemplateProcessing",
            "single": [special(cls_tok, 0), seq("A", 0), special(sep_tok, 0)],
            "pair": [special(cls_tok, 0), seq("A", 0), special(sep_tok, 0), seq("B", 1), special(sep_tok, 1)],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in dict.fromkeys((cls_tok, sep_tok))},
        }
    truncation = None
    if s["truncation"]:
        strategy = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
        truncation = {
            "direction": s["truncation"].get("direction", "right").capitalize(),
            "max_length": s["truncation"]["max_length"],
            "strategy": strategy[s["truncation"].get("strategy", "longest_first")],
            "stride": s["truncation"].get("stride") or 0,
        }
    padding = None
    if s["padding"]:
        length = s["padding"].get("length")
        padding = {
            "strategy": {"Fixed": length} if length is not None else "BatchLongest",
            "direction": s["padding"].get("direction", "right").capitalize(),
            "pad_to_multiple_of": s["padding"].get("pad_to_multiple_of"),
            "pad_id": st.pad_id,
            "pad_type_id": s["padding"].get("pad_type_id") or 0,
            "pad_token": s["pad_token"],
        }
    if st.added is None:
        added = [
            {"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for t in sorted(set(wp.special_token_list), key=lambda t: vocab[t])
        ]
    else:
        added = [
            {"id": i, "content": t.content, "single_word": t.single_word, "lstrip": t.lstrip, "rstrip": t.rstrip,
             "normalized": t.normalized, "special": t.special}
            for i, t in sorted(st.added.tokens.items())
        ]
    return {
        "version": "1.0",
        "truncation": truncation,
        "padding": padding,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post,
        "decoder": {"type": "WordPiece", "prefix": s["suffix_indicator"], "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": s["unk_token"],
            "continuing_subword_prefix": s["suffix_indicator"],
            "max_input_chars_per_word": s["max_input_chars_per_word"],
            "vocab": vocab,
        },
    }


def write_tokenizer_json(wp, path: str | os.PathLike) -> None:
    """Write :func:`tokenizer_json_of` ``wp`` to ``path`` (UTF-8 JSON,
    written to a temporary file in the same folder and renamed)."""
    from ...runtime.regular_files import write_new_file

    write_new_file(path, json.dumps(tokenizer_json_of(wp), ensure_ascii=False, indent=2).encode("utf-8"))
