"""API details HF ``tokenizers``' own tests rely on (issue 27, "drop-in
gaps"): templates given as dicts are checked as a tokenizer.json's are,
a single template may leave ``$A`` out, ``AddedToken()`` is an empty
token, ``add_special_tokens`` marks the caller's tokens special, and
``repr(AddedToken(...))`` is HF's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit
from segkit import AddedToken

tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")

VOCAB = ["[PAD]", "[UNK]", "[ C L S ]", "Token with space", "a", "b", "c", "[CLS]", "[SEP]"]


# ------------------------------------------------------------------ templates
@pytest.mark.parametrize("spec, message", [
    ({"id": "[CLS]", "ids": [1, 2], "tokens": ["[UNK]", "[ C L S ]", "x"]}, "do not match"),
    ({"id": "[CLS]", "ids": [1, 2], "tokens": ["[UNK]"]}, "do not match"),
    ({"id": "[CLS]", "ids": [1, 2], "tokens": "[UNK]"}, "do not match"),
    ({"id": "[CLS]", "ids": [1, 2], "tokens": ["[UNK]", 7]}, "do not match"),
    ({"id": "[CLS]", "ids": [1, 2], "tokens": ["[UNK]", "b"]}, "id 2 is '\\[ C L S \\]' in the vocabulary, not 'b'"),
])
def test_template_dict_with_ids_and_tokens_that_disagree_is_refused(spec, message):
    """Given to the constructor as a dict, a special token whose ``"ids"``
    and ``"tokens"`` disagree was accepted and its tokens ignored; HF
    refuses ids and tokens of different lengths, and segkit's
    ``from_tokenizer_json`` refuses tokens that are not the ids' own."""
    template = {"single": "[CLS] $A", "special_tokens": {"[CLS]": spec}}
    with pytest.raises(ValueError, match=message):
        segkit.WordPiece(VOCAB, template=template)
    if len(spec["tokens"]) != len(spec["ids"]) and isinstance(spec["tokens"], list):
        with pytest.raises(Exception, match="same length"):
            tokenizers.processors.TemplateProcessing(single="[CLS] $A", special_tokens=[spec])
    ok = {"single": "[CLS] $A", "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1, 2], "tokens": ["[UNK]", "[ C L S ]"]}}}
    assert segkit.WordPiece(VOCAB, template=ok).encode("a").ids == [1, 2, 4]


def _hf_with_template(tmp_path: Path, template: dict):
    wp = segkit.WordPiece(VOCAB, template=template)
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    return wp, tokenizers.Tokenizer.from_file(str(path)), path


def test_single_template_without_a_is_accepted_as_hf_accepts_it(tmp_path):
    """HF's test calls ``TemplateProcessing(single=["[ C L S ]", "Token with
    space"])`` legal: the encoding is the special tokens, the text left out
    (and with it any truncation of the text); segkit raised "must hold $A".
    Every path agrees with HF, with truncation, padding and without special
    tokens (HF then gives nothing at all)."""
    template = {"single": ["[ C L S ]", "Token with space"],
                "special_tokens": {"[ C L S ]": 2, "Token with space": 3}}
    hf_direct = tokenizers.processors.TemplateProcessing(single=["[ C L S ]", "Token with space"],
                                                         special_tokens=[("[ C L S ]", 2), ("Token with space", 3)])
    assert hf_direct is not None
    wp, hf, path = _hf_with_template(tmp_path, template)
    again = segkit.WordPiece.from_tokenizer_json(path)
    cases = [({}, {}), ({"max_length": 4, "truncation": True}, {"trunc": (4, 0)}),
             ({"max_length": 4, "truncation": True, "stride": 1}, {"trunc": (4, 1)}),
             ({"max_length": 6, "padding": "max_length"}, {"pad": 6}),
             ({"add_special_tokens": False}, {}), ({"add_special_tokens": False, "padding": True}, {"pad": None})]
    for ours, theirs in cases:
        hf.no_truncation()
        hf.no_padding()
        if "trunc" in theirs:
            hf.enable_truncation(theirs["trunc"][0], stride=theirs["trunc"][1])
        if "pad" in theirs:
            hf.enable_padding(length=theirs["pad"])
        add = ours.get("add_special_tokens", True)
        for args in (("a b c",), ("a b", "c")):
            want = hf.encode(*args, add_special_tokens=add)
            item = args[0] if len(args) == 1 else args
            for got in (wp.encode(*args, **ours), wp.encode_batch([item], **ours)[0], again.encode(*args, **ours)):
                assert (got.ids, got.type_ids, got.attention_mask, [o.ids for o in got.overflowing]) == \
                    (want.ids, want.type_ids, want.attention_mask, [o.ids for o in want.overflowing]), (ours, args)
    assert wp("a b c")["input_ids"] == [2, 3]
    with pytest.raises(ValueError, match="at most once"):
        segkit.WordPiece(VOCAB, template={"single": "$A [CLS] $B"})


# -------------------------------------------------------------- AddedToken
def test_added_token_without_content_is_empty_and_ignored():
    """HF: ``AddedToken()`` is an empty token, which ``add_tokens`` ignores
    (segkit raised TypeError)."""
    wp = segkit.WordPiece(VOCAB)
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    assert AddedToken().content == tokenizers.AddedToken().content == ""
    assert wp.add_tokens([AddedToken(), AddedToken(""), ""]) == hf.add_tokens([tokenizers.AddedToken(), ""]) == 0
    assert wp.add_special_tokens([AddedToken()]) == hf.add_special_tokens([tokenizers.AddedToken()]) == 0
    assert wp.get_vocab_size() == hf.get_vocab_size() == len(VOCAB)


@pytest.mark.parametrize("kwargs", [{}, {"normalized": True}, {"normalized": False}, {"special": True},
                                    {"lstrip": True, "rstrip": True, "single_word": True}])
def test_add_special_tokens_marks_the_callers_token_as_hf_does(kwargs):
    """HF's ``add_special_tokens`` sets ``special=True`` on the AddedToken
    objects it is given (a ``normalized`` not given then reads False, one
    given stays); ``add_tokens`` changes nothing.  segkit left them as they
    were."""
    wp = segkit.WordPiece(VOCAB)
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    ours, theirs = AddedToken("<x>", **kwargs), tokenizers.AddedToken("<x>", **kwargs)
    wp.add_special_tokens([ours])
    hf.add_special_tokens([theirs])
    assert repr(ours) == repr(theirs) and ours.special and theirs.special
    ours, theirs = AddedToken("<y>", **kwargs), tokenizers.AddedToken("<y>", **kwargs)
    wp.add_tokens([ours])
    hf.add_tokens([theirs])
    assert repr(ours) == repr(theirs)
    assert wp.get_vocab() == hf.get_vocab()


@pytest.mark.parametrize("content", ["[NEW]", "", 'a"b', "it's", "new\nline", "back\\slash", "é\t"])
@pytest.mark.parametrize("kwargs", [{}, {"lstrip": True}, {"rstrip": True, "single_word": True},
                                    {"normalized": False}, {"special": True}, {"special": True, "normalized": True}])
def test_repr_is_hfs(content, kwargs):
    assert repr(AddedToken(content, **kwargs)) == repr(tokenizers.AddedToken(content, **kwargs))
